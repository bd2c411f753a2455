//! A fault-injecting backend wrapper, for tests: short reads, errors and delays
//! on chosen reads, injected below the engine so they travel the same path real
//! faults do.
//!
//! Faults are keyed by the ordinal of the op pushed (1-based, counting the
//! engine's continuations and retries too). Every op pushed is logged, so a test
//! can see that a short read really was continued.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::{Backend, Completion, FileId, Op};
use crate::error::{OsError, Result};
use crate::file::OpenFile;

/// What to do to one op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Report at most `keep` bytes (at least 1) as read. The read itself is issued
    /// whole (a shortened O_DIRECT read would be refused as misaligned); the
    /// engine must then continue from byte `keep` as after a real short read.
    Short { keep: usize },
    /// Do not read; complete with this errno (EIO, EINTR, EAGAIN, ...).
    Errno(i32),
    /// Read normally, but report the completion no earlier than this after the push.
    Delay(Duration),
}

/// Wraps a backend and injects [`Fault`]s.
#[derive(Debug)]
pub struct FaultBackend {
    inner: Box<dyn Backend>,
    plan: HashMap<u64, Fault>,
    /// Faults by the op's file offset: how many more pushes at that offset get the fault.
    by_offset: HashMap<u64, (u32, Fault)>,
    pushed: u64,
    synthetic: Vec<Completion>,
    delay_until: HashMap<u64, Instant>,
    short: HashMap<u64, usize>,
    held: Vec<(Instant, Completion)>,
    log: Arc<Mutex<Vec<Op>>>,
}

impl FaultBackend {
    /// Wraps `inner`; `plan` maps op ordinals (1-based) to faults.
    pub fn new(inner: Box<dyn Backend>, plan: impl IntoIterator<Item = (u64, Fault)>) -> Self {
        Self {
            inner,
            plan: plan.into_iter().collect(),
            by_offset: HashMap::new(),
            pushed: 0,
            synthetic: Vec::new(),
            delay_until: HashMap::new(),
            short: HashMap::new(),
            held: Vec::new(),
            log: Arc::default(),
        }
    }

    /// Also give `fault` to the first `times` ops pushed at file offset `offset` (`u32::MAX`:
    /// every one, like a bad sector). Unlike ordinals, offsets do not depend on the order in
    /// which concurrent reads reach the backend.
    #[must_use]
    pub fn fail_offset(mut self, offset: u64, times: u32, fault: Fault) -> Self {
        self.by_offset.insert(offset, (times, fault));
        self
    }

    /// Every op pushed so far, as issued to the wrapped backend (before faults).
    pub fn log(&self) -> Arc<Mutex<Vec<Op>>> {
        Arc::clone(&self.log)
    }

    fn release_due(&mut self, out: &mut Vec<Completion>) -> usize {
        let now = Instant::now();
        let before = out.len();
        self.held.retain(|&(t, c)| {
            if t <= now {
                out.push(c);
                false
            } else {
                true
            }
        });
        out.len() - before
    }
}

impl Backend for FaultBackend {
    fn name(&self) -> &'static str {
        "fault"
    }

    fn fixed_buffers(&self) -> bool {
        self.inner.fixed_buffers()
    }

    fn add_file(&mut self, id: FileId, file: Arc<OpenFile>) -> Result<()> {
        self.inner.add_file(id, file)
    }

    unsafe fn push(&mut self, op: Op) {
        self.pushed += 1;
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(op);
        let mut fault = self.plan.get(&self.pushed).copied();
        if fault.is_none() {
            if let Some((left, f)) = self.by_offset.get_mut(&op.offset).filter(|(left, _)| *left > 0) {
                *left -= 1;
                fault = Some(*f);
            }
        }
        match fault {
            Some(Fault::Errno(e)) => self.synthetic.push(Completion { tag: op.tag, result: Err(OsError(e)) }),
            Some(Fault::Short { keep }) => {
                self.short.insert(op.tag, keep.max(1));
                // SAFETY: forwarded unchanged under the caller's contract.
                unsafe { self.inner.push(op) }
            }
            Some(Fault::Delay(d)) => {
                self.delay_until.insert(op.tag, Instant::now() + d);
                // SAFETY: forwarded unchanged under the caller's contract.
                unsafe { self.inner.push(op) }
            }
            // SAFETY: forwarded unchanged under the caller's contract.
            None => unsafe { self.inner.push(op) },
        }
    }

    fn submit(&mut self) -> Result<(), OsError> {
        self.inner.submit()
    }

    fn reap(&mut self, wait: bool, out: &mut Vec<Completion>) -> Result<(), OsError> {
        let before = out.len();
        loop {
            out.append(&mut self.synthetic);
            self.release_due(out);
            let block = wait && out.len() == before && self.held.is_empty() && self.inner.in_flight() > 0;
            let mut fresh = Vec::new();
            self.inner.reap(block, &mut fresh)?;
            for mut c in fresh {
                if let (Some(keep), Ok(n)) = (self.short.remove(&c.tag), c.result) {
                    c.result = Ok(n.min(keep));
                }
                match self.delay_until.remove(&c.tag) {
                    Some(t) => self.held.push((t, c)),
                    None => out.push(c),
                }
            }
            self.release_due(out);
            if !wait || out.len() > before || self.in_flight() == 0 {
                return Ok(());
            }
            if self.inner.in_flight() == 0 {
                if let Some(t) = self.held.iter().map(|h| h.0).min() {
                    std::thread::sleep(t.saturating_duration_since(Instant::now()));
                }
            } else if !self.held.is_empty() {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight() + self.synthetic.len() + self.held.len()
    }
}

/// Makes `io_uring_setup` fail with `ENOSYS` for the calling thread and every thread or process
/// it starts from now on (a seccomp filter, as container runtimes install), so that tests see the
/// kernel refuse io_uring for real. Irreversible for the thread: call it on a test's own thread,
/// or in a child between `fork` and `exec` (`CommandExt::pre_exec`; it only makes two `prctl`
/// calls on a filter on the stack, so it is safe there).
///
/// # Errors
/// The `prctl` error (seccomp unavailable).
#[cfg(all(any(target_os = "linux", target_os = "android"), any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn deny_io_uring() -> std::io::Result<()> {
    #[repr(C)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    const fn stmt(code: u16, k: u32) -> SockFilter {
        SockFilter { code, jt: 0, jf: 0, k }
    }
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO: u32 = 0x0005_0000;
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xC000_00B7;
    // io_uring_setup is 425 on every architecture (the unified numbering of new syscalls).
    const IO_URING_SETUP: u32 = 425;
    // Other architectures than ours pass (the filter only knows our syscall numbers).
    let filter = [
        stmt(LD_W_ABS, 4),
        SockFilter { code: JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH },
        stmt(RET_K, ALLOW),
        stmt(LD_W_ABS, 0),
        SockFilter { code: JEQ_K, jt: 0, jf: 1, k: IO_URING_SETUP },
        stmt(RET_K, ERRNO | libc::ENOSYS as u32),
        stmt(RET_K, ALLOW),
    ];
    let prog = SockFprog { len: filter.len() as u16, filter: filter.as_ptr() };
    // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a valid sock_fprog pointing at a live filter array; the kernel copies it.
    if unsafe { libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const SockFprog, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
