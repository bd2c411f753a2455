//! The backend trait: how a read request reaches the OS and how its completion
//! comes back. Two implementations, one interface: io_uring ([`uring`], Linux)
//! and a pool of threads doing positional reads ([`pread`], everywhere).
//!
//! A backend is deliberately thin: it issues exactly the read it is given and
//! reports the raw result (bytes or errno). Continuing short reads, retrying
//! EINTR/EAGAIN, turning errno into errors with context and bounding the reads
//! in flight are the engine's job, so that every backend (and the fault
//! injector wrapped around one) gets the same semantics.

pub mod pread;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub mod uring;

use std::sync::Arc;

use crate::error::{OsError, Result};
use crate::file::OpenFile;

/// Index of a file opened by the engine.
pub type FileId = usize;

/// One read as plain data: `len` bytes at file `offset` into pool bytes `dest..dest+len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Returned with the completion.
    pub tag: u64,
    /// Which file (registered with [`Backend::add_file`]).
    pub file: FileId,
    /// File offset.
    pub offset: u64,
    /// Bytes to read.
    pub len: usize,
    /// Pool offset of the destination.
    pub dest: usize,
}

/// The raw result of one [`Op`]: bytes read (possibly fewer than asked) or an errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The op's tag.
    pub tag: u64,
    /// Bytes read, or the OS error.
    pub result: Result<usize, OsError>,
}

/// A way to issue reads into a [`BufferPool`](crate::BufferPool) and reap their completions.
pub trait Backend: Send + std::fmt::Debug {
    /// Short name for reports (`uring`, `pread`, ...).
    fn name(&self) -> &'static str;

    /// Whether reads land in registered buffers (`READ_FIXED`).
    fn fixed_buffers(&self) -> bool {
        false
    }

    /// Makes `file` available as `id` for later ops.
    ///
    /// # Errors
    /// If the backend cannot take the file (e.g. too many files).
    fn add_file(&mut self, id: FileId, file: Arc<OpenFile>) -> Result<()>;

    /// Queues `op`; it starts no later than the next [`submit`](Self::submit) or
    /// [`reap`](Self::reap). The caller never has more ops queued or in flight than
    /// the lanes it created the backend with.
    ///
    /// # Safety
    /// `op.dest..op.dest+op.len` must lie in the pool, and nothing else may read or
    /// write those bytes, nor may another op target them, until this op's
    /// completion has been returned by `reap`.
    unsafe fn push(&mut self, op: Op);

    /// Starts every queued op, in one system call where the backend can.
    ///
    /// # Errors
    /// The OS error if the submission itself failed (the ops stay queued).
    fn submit(&mut self) -> Result<(), OsError>;

    /// Starts queued ops, then appends finished completions to `out`. With `wait`,
    /// blocks until at least one completion is available (unless nothing is in flight).
    ///
    /// # Errors
    /// The OS error if waiting itself failed.
    fn reap(&mut self, wait: bool, out: &mut Vec<Completion>) -> Result<(), OsError>;

    /// Ops pushed and not yet reaped.
    fn in_flight(&self) -> usize;
}

/// The files a backend was given, indexed by [`FileId`]: both backends keep them the same way.
#[derive(Debug, Default)]
pub(crate) struct FileTable(Vec<Option<Arc<OpenFile>>>);

impl FileTable {
    /// Record `file` under `id` (ids are small and dense: the engine hands them out in order).
    pub(crate) fn insert(&mut self, id: FileId, file: Arc<OpenFile>) {
        if self.0.len() <= id {
            self.0.resize(id + 1, None);
        }
        self.0[id] = Some(file);
    }

    /// The file under `id`.
    ///
    /// # Panics
    /// If no file was added under `id` (the engine validates ids before pushing ops).
    pub(crate) fn get(&self, id: FileId) -> &Arc<OpenFile> {
        self.0[id].as_ref().expect("op on a file never added")
    }
}
