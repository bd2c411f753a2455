//! The io_uring backend: `READ_FIXED` into the pool's registered chunks, plain
//! `READ` where the pool is not registered (or a read would straddle chunks).
//!
//! One ring per engine, sized to the lanes, so the submission queue can never be
//! full (the engine bounds reads in flight by the lanes). Queued reads are
//! submitted together with the wait for completions in one `io_uring_enter`,
//! the pattern fio uses. The crate `io-uring` is used directly: no runtime, and
//! the registered buffers are our pool, not buffers a runtime owns.

use std::os::fd::AsRawFd;
use std::sync::Arc;

use io_uring::{opcode, types, IoUring};

use super::{Backend, Completion, FileId, FileTable, Op};
use crate::error::{Error, OsError, Result};
use crate::file::OpenFile;
use crate::pool::{BufferPool, Registration};

/// Options of the io_uring backend.
#[derive(Clone, Copy, Debug)]
pub struct UringOptions {
    /// Register the pool (`READ_FIXED`); when false, plain `READ`s are used.
    pub register: bool,
}

/// An io_uring ring reading into one pool.
pub struct UringBackend {
    // Field order is drop order: the ring (and with it the registration) goes
    // before our reference to the pool memory.
    ring: IoUring,
    files: FileTable,
    pool: Arc<BufferPool>,
    fixed: bool,
    entries: u32,
    unsubmitted: usize,
    in_flight: usize,
}

impl std::fmt::Debug for UringBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringBackend")
            .field("entries", &self.entries)
            .field("fixed", &self.fixed)
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl UringBackend {
    /// A ring with room for `lanes` reads in flight, registering `pool` if asked.
    /// Registration refused by the kernel is not an error: the pool records why.
    ///
    /// # Errors
    /// [`Error::Backend`] if the ring cannot be created (ENOSYS, EPERM, disabled).
    pub fn new(pool: Arc<BufferPool>, lanes: usize, opts: UringOptions) -> Result<Self> {
        let entries = (lanes.max(1) as u32).next_power_of_two();
        if disabled_by_sysctl() {
            return Err(Error::Backend { backend: "uring", why: "kernel.io_uring_disabled = 2".into() });
        }
        let ring = IoUring::builder()
            .build(entries)
            .map_err(|e| Error::Backend { backend: "uring", why: format!("io_uring_setup: {e}") })?;
        let mut fixed = false;
        if opts.register {
            let iov = pool.iovecs();
            // SAFETY: every iovec lies inside the pool's allocation, which `self.pool`
            // keeps alive for as long as the ring (dropped first) exists.
            match unsafe { ring.submitter().register_buffers(&iov) } {
                Ok(()) => {
                    fixed = true;
                    pool.set_registration(Registration::Registered { chunks: iov.len() });
                }
                Err(e) => pool.set_registration(Registration::Refused {
                    reason: format!("IORING_REGISTER_BUFFERS of {} bytes: {e}", pool.size()),
                }),
            }
        }
        Ok(Self { ring, files: FileTable::default(), pool, fixed, entries, unsubmitted: 0, in_flight: 0 })
    }

    fn drain_cq(&mut self, out: &mut Vec<Completion>) -> usize {
        let before = out.len();
        for cqe in self.ring.completion() {
            let r = cqe.result();
            let result = if r < 0 { Err(OsError(-r)) } else { Ok(r as usize) };
            out.push(Completion { tag: cqe.user_data(), result });
        }
        let n = out.len() - before;
        self.in_flight -= n;
        n
    }
}

/// `kernel.io_uring_disabled`: 0 allowed, 1 only for a group, 2 disabled for all.
fn disabled_by_sysctl() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").is_ok_and(|s| s.trim() == "2")
}

impl Backend for UringBackend {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn fixed_buffers(&self) -> bool {
        self.fixed
    }

    fn add_file(&mut self, id: FileId, file: Arc<OpenFile>) -> Result<()> {
        self.files.insert(id, file);
        Ok(())
    }

    unsafe fn push(&mut self, op: Op) {
        let fd = types::Fd(self.files.get(op.file).file().as_raw_fd());
        let ptr = self.pool.ptr_at(op.dest, op.len).expect("op outside the pool");
        let len = u32::try_from(op.len).expect("op longer than 4 GiB");
        let sqe = match self.pool.chunk_of(op.dest, op.len).filter(|_| self.fixed) {
            Some(idx) => opcode::ReadFixed::new(fd, ptr, len, idx).offset(op.offset).build(),
            None => opcode::Read::new(fd, ptr, len).offset(op.offset).build(),
        }
        .user_data(op.tag);
        if self.ring.submission().is_full() {
            // Cannot happen while the caller respects its lanes; submit to make room
            // rather than lose the op.
            let _ = self.ring.submit();
            self.unsubmitted = 0;
        }
        // SAFETY: the destination lies in the pool (checked above), which this
        // backend keeps alive; the caller guarantees nothing else touches it until
        // the completion is reaped, and Drop drains every read before the pool
        // reference goes. The fd stays open: `self.files` holds the file.
        unsafe { self.ring.submission().push(&sqe) }.expect("submission queue full after submit");
        self.unsubmitted += 1;
        self.in_flight += 1;
    }

    fn submit(&mut self) -> Result<(), OsError> {
        while self.unsubmitted > 0 {
            match self.ring.submit() {
                Ok(_) => self.unsubmitted = 0,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
                Err(e) => return Err(OsError::of(&e)),
            }
        }
        Ok(())
    }

    fn reap(&mut self, wait: bool, out: &mut Vec<Completion>) -> Result<(), OsError> {
        let mut got = self.drain_cq(out);
        loop {
            let block = wait && got == 0 && self.in_flight > 0;
            if !block && self.unsubmitted == 0 {
                return Ok(());
            }
            // Submit what is queued and (if blocking) wait, in one io_uring_enter.
            match self.ring.submit_and_wait(usize::from(block)) {
                Ok(_) => self.unsubmitted = 0,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
                Err(e) => return Err(OsError::of(&e)),
            }
            got += self.drain_cq(out);
            if got > 0 || (!block && self.unsubmitted == 0) {
                return Ok(());
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }
}

impl Drop for UringBackend {
    fn drop(&mut self) {
        // A read in flight still owns its pool bytes: wait for every one before the
        // ring closes and our reference to the pool goes.
        let mut sink = Vec::new();
        while self.in_flight > 0 {
            sink.clear();
            if self.reap(true, &mut sink).is_err() {
                break;
            }
        }
        if self.fixed {
            self.pool.set_registration(Registration::NotAttempted);
        }
    }
}
