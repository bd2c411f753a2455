//! The engine's one error type. The layers below keep their own typed errors (the GGUF parser's,
//! the model index's, ggml's, the cache's, the read engine's: each names the file, offset, length
//! or key it is about) and convert into [`Error`] with `#[from]`, unchanged, so what a user needs
//! to find the fault survives to the message instead of being flattened to a string.
//!
//! Every message is complete on its own and no error's `source()` repeats what its message
//! already says (a leaf error keeps its OS error in its message and returns no source; a wrapper
//! is `transparent`), so printing the chain (`{:#}` in anyhow) never shows a cause twice.

use std::path::PathBuf;

/// Errors of the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The read engine: a read, an open or the pool (file, offset and length in it).
    #[error(transparent)]
    Io(#[from] bmoe_uring_io::Error),
    /// The GGUF file itself is malformed or unreadable.
    #[error(transparent)]
    Gguf(#[from] crate::gguf::Error),
    /// The model is not one this build can index, or its keys or tensors are wrong.
    #[error(transparent)]
    Model(#[from] crate::model::Error),
    /// ggml refused an operation, a context or a thread pool.
    #[cfg(feature = "ffi")]
    #[error(transparent)]
    Ggml(#[from] crate::ggml::Error),
    /// The cache's geometry or policy.
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
    /// A routing trace could not be read or parsed.
    #[error(transparent)]
    Trace(#[from] crate::cache::trace::TraceError),
    /// llama.cpp (tokenizer, chat template, sampler, the baseline engine).
    #[cfg(feature = "ffi")]
    #[error(transparent)]
    Llama(#[from] crate::llama::Error),
    /// A model that could not be opened or indexed, with its path (the index's own errors do
    /// not all name the file).
    #[error("{}: {err}", path.display())]
    Open { path: PathBuf, err: crate::model::Error },
    /// A step of opening an engine failed: which step, on which model, and why.
    #[error("{step} {}: {err}", path.display())]
    Opening { step: &'static str, path: PathBuf, err: Box<Error> },
    /// A file could not be opened, mapped or measured outside the read engine.
    #[error("{}: {err}", path.display())]
    File { path: PathBuf, err: std::io::Error },
    /// A shard shorter than its header says.
    #[error("{}: file is {len} bytes, the model needs {want}", path.display())]
    Truncated { path: PathBuf, len: u64, want: u64 },
    /// A tensor the decoder needs is missing or has the wrong shape.
    #[error("tensor `{name}`: {why}")]
    Tensor { name: String, why: String },
    /// A token id outside the vocabulary.
    #[error("token id {token} is outside the vocabulary of {n_vocab}")]
    BadToken { token: i32, n_vocab: u64 },
    /// More tokens than the context holds.
    #[error("context full: {n_past} + {n_new} tokens exceed the context of {n_ctx}")]
    ContextFull { n_past: u32, n_new: usize, n_ctx: u32 },
    /// A model or a combination this build does not run.
    #[error("not supported by this decoder: {0}")]
    Unsupported(String),
    /// An expert provider broke its contract (a bug, not an input error).
    #[error("expert provider: {0}")]
    Provider(String),
    /// A routing trace that does not fit the model (`--route-replay`).
    #[error("route replay: {0}")]
    Replay(String),
    /// State that is not what it must be: logits that are NaN or infinite (a context restored
    /// from a damaged session, say), never sampled from.
    #[error("{0}")]
    Corrupt(String),
    /// Expert hosts over ggml's RPC backend (`--rpc`): a worker that could not be started, a
    /// placement that does not fit the model.
    #[error("rpc: {0}")]
    Rpc(String),
    /// A knob that does not fit the model or the machine, found before anything is allocated
    /// (the builder's validation): the message names the knob and what would fit.
    #[error("{0}")]
    Invalid(String),
}

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every level of the chain: no source's message is already part of its parent's.
    fn assert_no_repeats(e: &(dyn std::error::Error + 'static)) {
        let mut cur = e;
        while let Some(src) = cur.source() {
            let (outer, inner) = (cur.to_string(), src.to_string());
            assert!(!outer.contains(&inner), "`{outer}` repeats its source `{inner}`");
            cur = src;
        }
    }

    #[test]
    fn no_message_prints_its_source_twice() {
        let dir = std::env::temp_dir();
        let gguf = crate::gguf::open_model(&dir).unwrap_err();
        let e = Error::from(crate::model::Error::from(gguf));
        assert!(e.to_string().contains("is a directory, not a model file"), "{e}");
        assert_no_repeats(&e);
        let io = crate::gguf::Error::Io {
            op: "reading",
            path: "m.gguf".into(),
            err: std::io::Error::from_raw_os_error(libc::EISDIR),
        };
        let e = Error::from(crate::model::Error::from(io));
        assert_eq!(e.to_string(), "gguf: reading m.gguf: Is a directory (os error 21)");
        assert_no_repeats(&e);
        let io = bmoe_uring_io::Error::Open { path: dir.clone(), err: bmoe_uring_io::OsError(libc::ENOENT) };
        let e = Error::from(io);
        assert!(e.to_string().contains(&dir.display().to_string()) && e.to_string().contains("os error 2"), "{e}");
        assert_no_repeats(&e);
        let trace = crate::cache::trace::RouteTrace::read(&dir).unwrap_err();
        assert_no_repeats(&Error::from(trace));
        let f = Error::File { path: dir, err: std::io::Error::from_raw_os_error(libc::EISDIR) };
        assert_no_repeats(&f);
    }
}
