//! The bmoe engine: the GGUF reader and model index, synthetic models, and the safe ggml
//! layer the decoder is built on.
//!
//! With the default `ffi` feature the crate links ggml (llama.cpp). Without it, only the pure
//! Rust parts build ([`gguf`], [`model`], [`synth`], and [`ggml::GgmlType`]'s geometry table),
//! so the parser can be fuzzed under a sanitizer without linking C++.

#[cfg(feature = "ffi")]
pub mod cache;
pub mod ggml;

/// Without `ffi`, only the ggml type geometry table (pure Rust) is available.
#[cfg(not(feature = "ffi"))]
pub mod ggml {
    #[path = "types.rs"]
    mod types;
    pub use types::GgmlType;
}

pub mod gguf;
pub mod model;
pub mod synth;
