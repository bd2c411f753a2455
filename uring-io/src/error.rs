//! The one error type of the read engine. Every variant that concerns a read
//! carries the file, the byte range and the OS error, because "EIO" alone does
//! not tell a user which file or which part of it is bad.
//!
//! Errors are `Clone` (the OS error is kept as its errno) so that a ticket can
//! hand the same failure to every waiter.

use std::fmt;
use std::path::PathBuf;

/// An OS error number, kept as a plain integer so errors stay `Clone`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct OsError(pub i32);

impl OsError {
    /// The errno of an `io::Error`, `EIO` if it has none.
    pub fn of(e: &std::io::Error) -> Self {
        Self(e.raw_os_error().unwrap_or(libc::EIO))
    }

    /// As a `std::io::Error`.
    pub fn to_io(self) -> std::io::Error {
        std::io::Error::from_raw_os_error(self.0)
    }
}

impl fmt::Debug for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_io())
    }
}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_io())
    }
}

impl std::error::Error for OsError {}

/// Errors of the read engine.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened or measured.
    #[error("opening {path}: {err}")]
    Open { path: PathBuf, err: OsError },
    /// The OS failed a read (EIO, EBADF, EINVAL on a misaligned direct read, ...).
    #[error("reading {path}: {len} bytes at offset {offset}: {err}")]
    Read { path: PathBuf, offset: u64, len: usize, err: OsError },
    /// The file ended before the requested range did (truncated or too short).
    #[error("reading {path}: {len} bytes at offset {offset}: end of file after {got} bytes")]
    Eof { path: PathBuf, offset: u64, len: usize, got: usize },
    /// A request that cannot be issued as asked (out of the pool, misaligned for O_DIRECT, too long).
    #[error("bad read request for {path}: {len} bytes at offset {offset} into pool offset {dest}: {why}")]
    Request { path: PathBuf, offset: u64, len: usize, dest: usize, why: String },
    /// A request names a pool range that a read still in flight owns.
    #[error("pool range {dest}..{end} is owned by a read still in flight", end = dest + len)]
    Busy { dest: usize, len: usize },
    /// A request names a file id this engine never opened.
    #[error("unknown file id {0}")]
    UnknownFile(usize),
    /// The read was cancelled before it completed.
    #[error("reading {path}: {len} bytes at offset {offset}: cancelled")]
    Cancelled { path: PathBuf, offset: u64, len: usize },
    /// The buffer pool could not be allocated.
    #[error("allocating a buffer pool of {bytes} bytes: {err}")]
    PoolAlloc { bytes: usize, err: OsError },
    /// A pool range outside the pool.
    #[error("pool range {offset}+{len} is outside the pool of {size} bytes")]
    PoolRange { offset: usize, len: usize, size: usize },
    /// The chosen backend could not be set up.
    #[error("setting up the {backend} backend: {why}")]
    Backend { backend: &'static str, why: String },
}

/// Result alias of the read engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;
