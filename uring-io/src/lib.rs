//! The read engine: files, byte ranges, a fixed pool of aligned buffers and
//! completions. It knows nothing about models.
//!
//! A caller allocates one [`BufferPool`] up front, builds a [`ReadEngine`] over
//! it (io_uring with the pool registered, or a pread thread pool), opens files
//! (O_DIRECT where a probe says it works) and submits batches of [`Request`]s;
//! each gets a [`Ticket`] to poll, wait on or await. Nothing is allocated per
//! read beyond the ticket's bookkeeping; the pool is the only buffer, so reads
//! land where the caller will use the bytes, with no copy.
//!
//! The engine never reports a partial read as done, and never lets a pool range
//! be reused or freed while a read into it is in flight. See `docs/io.md`.
//!
//! [`fault`] wraps any backend to inject short reads, errors and delays (for
//! tests); `mapped` (Linux) maps a file for the mmap baseline of `bmoe iobench`.

pub mod align;
pub mod backend;
mod engine;
mod error;
pub mod fault;
mod file;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub mod mapped;
mod pool;

pub use backend::{Backend, Completion, FileId, Op};
pub use engine::{
    check_lanes, BackendKind, EngineInfo, EngineOptions, Placement, ReadEngine, Request, Ticket, MAX_LANES,
    USEFUL_LANES,
};
pub use error::{Error, OsError, Result};
pub use file::{OpenFile, OpenOptions};
#[cfg(unix)]
pub use pool::page_size;
pub use pool::{BufferPool, Registration, CHUNK};
