//! The bmoe engine: the GGUF reader and model index, synthetic models, the expert-cache
//! bookkeeping and its policies (with routing-trace replay), the safe ggml layer, the decoder,
//! the streamer, and [`engine::Engine::builder`], the one way to open a model and generate.
//!
//! The rooms, from the file to the logits: [`gguf`] (untrusted header parsing) → [`model`]
//! (the index: dense tensors, expert byte ranges) → [`stream`] (slots of the registered pool,
//! reads through [`io`]) or [`provider::ResidentExperts`] → [`provider`] (the seam: expert
//! pointers and stacks) → [`decoder`] (graphs on [`ggml`]) → logits → [`session`] (the
//! generation loop, with [`speculative`] decoding; [`session_file`] its context saved to disk
//! and checked on the way back) and [`telemetry`]. [`dense`] holds the dense weights; [`cache`] decides what
//! stays; [`engine`] assembles it all and reports what it chose.
//!
//! With the default `ffi` feature the crate links ggml (llama.cpp). Without it, only the pure
//! Rust parts build ([`gguf`], [`model`], [`synth`], [`cache`], [`ggml::GgmlType`]'s geometry table
//! and [`session_file`]), so the parser can be fuzzed under a sanitizer without linking C++.

#[cfg(feature = "ffi")]
pub mod ggml;

/// Without `ffi`, only the ggml type geometry table (pure Rust) is available.
#[cfg(not(feature = "ffi"))]
pub mod ggml {
    #[path = "types.rs"]
    mod types;
    pub use types::{GgmlType, RopeMode};
}

pub mod arch;
pub mod cache;
#[cfg(feature = "ffi")]
pub mod decoder;
#[cfg(feature = "ffi")]
pub mod dense;
#[cfg(feature = "ffi")]
pub mod engine;
mod error;
#[cfg(feature = "ffi")]
pub mod generic;
pub mod gguf;
#[cfg(feature = "ffi")]
pub mod llama;
pub mod model;
#[cfg(feature = "ffi")]
pub mod provider;
pub mod rpc;
#[cfg(feature = "ffi")]
pub mod session;
pub mod session_file;
#[cfg(feature = "ffi")]
pub mod speculative;
#[cfg(feature = "ffi")]
pub mod stream;
pub mod synth;
#[cfg(feature = "ffi")]
pub mod telemetry;

pub use error::{Error, Result};

/// The read engine, for tools that drive it directly (`bmoe iobench`, the benches).
pub use bmoe_uring_io as io;
