//! The bmoe engine: the GGUF reader and model index, synthetic models, the expert-cache
//! bookkeeping and its policies (with routing-trace replay), and the safe ggml layer the
//! decoder is built on.
//!
//! With the default `ffi` feature the crate links ggml (llama.cpp). Without it, only the pure
//! Rust parts build ([`gguf`], [`model`], [`synth`], [`cache`], and [`ggml::GgmlType`]'s geometry table),
//! so the parser can be fuzzed under a sanitizer without linking C++.

#[cfg(feature = "ffi")]
pub mod ggml;

/// Without `ffi`, only the ggml type geometry table (pure Rust) is available.
#[cfg(not(feature = "ffi"))]
pub mod ggml {
    #[path = "types.rs"]
    mod types;
    pub use types::GgmlType;
}

pub mod cache;
#[cfg(feature = "ffi")]
pub mod decoder;
pub mod gguf;
#[cfg(feature = "ffi")]
pub mod llama;
pub mod model;
#[cfg(feature = "ffi")]
pub mod session;
#[cfg(feature = "ffi")]
pub mod stream;
pub mod synth;
