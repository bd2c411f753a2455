//! The read engine: batches of requests in, tickets out.
//!
//! [`ReadEngine::submit`] validates a whole batch, gives each request a
//! [`Ticket`] and starts as many reads as there are free lanes with one
//! submission call; the rest wait in a queue (a full queue queues, it never
//! fails). Whoever waits drives the engine: reaping a completion continues a
//! short read, retries EINTR/EAGAIN, turns errors into [`Error`]s with path,
//! offset and length, and refills the lane from the queue. There is no
//! background thread and no async runtime on the hot path: the decode thread
//! that waits is the thread that reaps, as in fio.
//!
//! Ownership: a pool range with a read queued or in flight belongs to that read
//! until its completion is reaped. The engine refuses a second read into it
//! ([`Error::Busy`]), [`ReadEngine::copy_out`] refuses to read it, and
//! cancelling or dropping the engine drains every in-flight completion first.
//!
//! The trade-off: all state sits behind one mutex, and a waiter holds it while
//! it blocks in the kernel. Other threads asking for the engine then wait for
//! the next completion, which arrives within one read's latency. In exchange a
//! single-threaded caller pays no cross-thread wake-up per read.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::align::{self, Window, BLOCK};
use crate::backend::pread::PreadBackend;
use crate::backend::{Backend, Completion, FileId, Op};
use crate::error::{Error, OsError, Result};
use crate::file::{OpenFile, OpenOptions};
use crate::pool::{BufferPool, Registration};

/// Which backend to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendKind {
    /// io_uring if it can be set up here, else the pread pool.
    #[default]
    Auto,
    /// io_uring or an error.
    Uring,
    /// The pread thread pool.
    Pread,
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "uring" | "io_uring" => Ok(Self::Uring),
            "pread" => Ok(Self::Pread),
            _ => Err(format!("unknown io backend `{s}` (auto, uring, pread)")),
        }
    }
}

/// How to build an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Backend choice.
    pub backend: BackendKind,
    /// Maximum reads in flight (`--io-threads`).
    pub lanes: usize,
    /// Register the pool with io_uring (`READ_FIXED`).
    pub register: bool,
    /// Open files with direct I/O where the probe allows.
    pub direct: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self { backend: BackendKind::Auto, lanes: 4, register: true, direct: true }
    }
}

/// The most reads in flight an engine takes (`--io-threads`): the pread backend runs a thread
/// per lane and io_uring's ring takes at most 32768 entries; far past what a disk's queue uses.
pub const MAX_LANES: usize = 1024;

/// Above this many lanes a warning: NVMe drives reach their rate by 32-64 reads in flight of the
/// engine's sizes, virtio disks by 2-8 (fio); more lanes only add threads or ring entries.
pub const USEFUL_LANES: usize = 64;

/// `lanes` reads in flight: `Err` (why) for 0 or more than [`MAX_LANES`], a warning above
/// [`USEFUL_LANES`]. Front ends call it before anything is spawned.
///
/// # Errors
/// The reason, for a count that is refused.
pub fn check_lanes(lanes: usize) -> std::result::Result<Option<String>, String> {
    match lanes {
        0 => Err("at least one read must be in flight".into()),
        n if n > MAX_LANES => Err(format!(
            "more than {MAX_LANES} reads in flight is refused (the pread backend runs a thread for each, and a \
             disk's queue is busy long before: NVMe drives by 32-64 reads in flight, virtio disks by 2-8)"
        )),
        n if n > USEFUL_LANES => Ok(Some(format!(
            "{n} reads in flight is more than a disk's queue uses (NVMe drives reach their rate by 32-64, virtio \
             disks by 2-8; measure with bmoe iobench --lanes): the rest only add threads or ring entries"
        ))),
        _ => Ok(None),
    }
}

/// What the engine chose, for the `mode:` line and reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineInfo {
    /// `uring`, `pread`, or a wrapper's name.
    pub backend: &'static str,
    /// Why that backend.
    pub why: String,
    /// With [`BackendKind::Auto`], why io_uring could not be used (the kernel, seccomp or
    /// SELinux refused the ring), when the engine fell back to the pread pool.
    pub fallback: Option<String>,
    /// Maximum reads in flight.
    pub lanes: usize,
    /// Whether reads land in registered buffers.
    pub fixed_buffers: bool,
}

/// One read: file bytes `offset..offset+len` land at pool bytes `dest..dest+len`.
///
/// For a file opened with O_DIRECT the engine reads the aligned window around
/// the payload into the pool around `dest`, so `dest` must sit at the same
/// offset within a block as `offset` does, and the pool must have room for the
/// whole window (see [`ReadEngine::placement`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// File id from [`ReadEngine::open`].
    pub file: FileId,
    /// File offset of the payload.
    pub offset: u64,
    /// Payload length.
    pub len: usize,
    /// Pool offset where the payload must land.
    pub dest: usize,
}

/// The physical read issued for a request: where in the file, where in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The file window read (unaligned and exact for buffered files).
    pub window: Window,
    /// Pool offset where the window starts (`dest - window.delta`).
    pub pool_start: usize,
}

#[derive(Debug)]
enum Status {
    Queued,
    InFlight,
    Done(Result<()>),
}

#[derive(Debug)]
struct OpState {
    req: Request,
    /// Physical window: file start, pool start, bytes to ask for, bytes needed.
    start: u64,
    pool_start: usize,
    wlen: usize,
    need: usize,
    /// Bytes of the window known to have arrived (from its start).
    done: usize,
    /// Window offset of the read in flight.
    pos: usize,
    retries: u32,
    /// Consecutive reads that brought no new bytes.
    stalls: u32,
    status: Status,
    cancelled: bool,
    /// The ticket was dropped: forget the state once the read completes.
    orphan: bool,
    waker: Option<Waker>,
    /// A helper thread is already driving the engine for this ticket's future.
    driver: bool,
}

struct Inner {
    backend: Box<dyn Backend>,
    files: Vec<Arc<OpenFile>>,
    lanes: usize,
    ops: HashMap<u64, OpState>,
    queue: VecDeque<u64>,
    /// Pool ranges owned by queued or in-flight reads: start -> (end, tag).
    busy: BTreeMap<usize, (usize, u64)>,
    next_tag: u64,
    scratch: Vec<Completion>,
    wake: Vec<Waker>,
    direct: bool,
}

struct Shared {
    inner: Mutex<Inner>,
    pool: Arc<BufferPool>,
    info: EngineInfo,
}

/// Reads byte ranges of files into a [`BufferPool`]. See the module docs.
pub struct ReadEngine {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ReadEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadEngine").field("info", &self.shared.info).finish()
    }
}

/// EINTR/EAGAIN retries per read before giving up with the error.
const MAX_RETRIES: u32 = 10_000;

impl ReadEngine {
    /// An engine over `pool` with the backend `opts` asks for.
    ///
    /// # Errors
    /// [`Error::Backend`] if the requested backend cannot be set up (with `Auto`,
    /// only if neither can), or for more than [`MAX_LANES`] lanes.
    pub fn new(pool: Arc<BufferPool>, opts: EngineOptions) -> Result<Self> {
        if opts.lanes > MAX_LANES {
            // Before a thread or a ring exists.
            return Err(Error::Backend {
                backend: "any",
                why: format!("{} lanes: {}", opts.lanes, check_lanes(opts.lanes).unwrap_err()),
            });
        }
        let lanes = opts.lanes.max(1);
        let mut fallback = None;
        let (backend, why): (Box<dyn Backend>, String) = match opts.backend {
            BackendKind::Pread => (Box::new(PreadBackend::new(Arc::clone(&pool), lanes)?), "requested".into()),
            BackendKind::Uring => (uring(&pool, lanes, opts.register)?, "requested".into()),
            BackendKind::Auto => match uring(&pool, lanes, opts.register) {
                Ok(b) => (b, "auto: io_uring available".into()),
                Err(e) => {
                    let reason = match &e {
                        Error::Backend { why, .. } => why.clone(),
                        e => e.to_string(),
                    };
                    let why = format!("auto: io_uring unavailable ({reason}), using pread threads");
                    fallback = Some(reason);
                    (Box::new(PreadBackend::new(Arc::clone(&pool), lanes)?), why)
                }
            },
        };
        let mut engine = Self::with_backend(pool, backend, lanes, opts.direct, why);
        if let Some(shared) = Arc::get_mut(&mut engine.shared) {
            shared.info.fallback = fallback;
        }
        Ok(engine)
    }

    /// An engine over a backend built by the caller (a fault injector, say).
    /// `lanes` must not exceed what the backend was built for.
    pub fn with_backend(
        pool: Arc<BufferPool>,
        backend: Box<dyn Backend>,
        lanes: usize,
        direct: bool,
        why: String,
    ) -> Self {
        let info = EngineInfo {
            backend: backend.name(),
            why,
            fallback: None,
            lanes: lanes.max(1),
            fixed_buffers: backend.fixed_buffers(),
        };
        let inner = Inner {
            backend,
            files: Vec::new(),
            lanes: lanes.max(1),
            ops: HashMap::new(),
            queue: VecDeque::new(),
            busy: BTreeMap::new(),
            next_tag: 1,
            scratch: Vec::new(),
            wake: Vec::new(),
            direct,
        };
        Self { shared: Arc::new(Shared { inner: Mutex::new(inner), pool, info }) }
    }

    /// Backend, why, lanes, fixed buffers.
    pub fn info(&self) -> &EngineInfo {
        &self.shared.info
    }

    /// The pool reads land in.
    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.shared.pool
    }

    /// Whether the pool is registered, and if not why.
    pub fn registration(&self) -> Registration {
        self.shared.pool.registration()
    }

    /// Opens `path` (probing O_DIRECT unless the engine was built without it).
    ///
    /// # Errors
    /// [`Error::Open`] if the file cannot be opened.
    pub fn open(&self, path: &Path) -> Result<FileId> {
        let direct = self.shared.lock().direct;
        let file = Arc::new(OpenFile::open(path, OpenOptions { direct })?);
        let mut g = self.shared.lock();
        let id = g.files.len();
        g.backend.add_file(id, Arc::clone(&file))?;
        g.files.push(file);
        Ok(id)
    }

    /// The open file `id`.
    ///
    /// # Errors
    /// [`Error::UnknownFile`].
    pub fn file(&self, id: FileId) -> Result<Arc<OpenFile>> {
        self.shared.lock().files.get(id).cloned().ok_or(Error::UnknownFile(id))
    }

    /// The physical read the engine will issue for `len` bytes at `offset` of
    /// file `id` if the payload is to land at pool offset `dest`.
    ///
    /// # Errors
    /// [`Error::UnknownFile`]; [`Error::Eof`] if the range passes the end of the file.
    pub fn placement(&self, id: FileId, offset: u64, len: usize, dest: usize) -> Result<Placement> {
        let g = self.shared.lock();
        let f = g.files.get(id).ok_or(Error::UnknownFile(id))?;
        placement(f, offset, len, dest)
    }

    /// Validates `reqs` as a whole, then queues them and starts as many as lanes
    /// allow with one submission. Either every request gets a ticket or none does.
    ///
    /// # Errors
    /// [`Error::UnknownFile`], [`Error::Eof`] (range past the end of the file at
    /// open), [`Error::Request`] (misplaced for O_DIRECT, outside the pool, too
    /// long), [`Error::Busy`] (a read in flight owns the destination, or two
    /// requests of the batch overlap), or the OS error of the submission.
    pub fn submit(&self, reqs: &[Request]) -> Result<Vec<Ticket>> {
        let mut g = self.shared.lock();
        let mut staged = Vec::with_capacity(reqs.len());
        for r in reqs {
            match g.stage(r, &self.shared.pool) {
                Ok(st) => {
                    let tag = g.next_tag;
                    g.next_tag += 1;
                    if st.wlen > 0 {
                        g.busy.insert(st.pool_start, (st.pool_start + st.wlen, tag));
                    }
                    staged.push((tag, st));
                }
                Err(e) => {
                    for (tag, st) in &staged {
                        g.release(st.pool_start, *tag);
                    }
                    return Err(e);
                }
            }
        }
        let mut tickets = Vec::with_capacity(staged.len());
        for (tag, st) in staged {
            g.ops.insert(tag, st);
            g.queue.push_back(tag);
            tickets.push(Ticket { shared: Arc::clone(&self.shared), tag });
        }
        g.refill();
        // One submission for the batch. Should it fail, the reads stay queued in
        // the backend and start with the next reap, so it is not an error here.
        g.flush();
        Ok(tickets)
    }

    /// Waits for every ticket, then returns the first error among them (so
    /// nothing of the batch is in flight when this returns, success or not).
    ///
    /// # Errors
    /// The first ticket's error, in batch order.
    pub fn wait_all(&self, tickets: &[Ticket]) -> Result<()> {
        let mut first = Ok(());
        for t in tickets {
            if let Err(e) = t.wait() {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Blocks until at least one of `tickets` is done and returns the index of
    /// the first done one. `None` for an empty slice.
    pub fn wait_any(&self, tickets: &[Ticket]) -> Option<usize> {
        self.wait_any_of(&tickets.iter().collect::<Vec<_>>())
    }

    /// [`Self::wait_any`] over tickets held in several places.
    pub fn wait_any_of(&self, tickets: &[&Ticket]) -> Option<usize> {
        if tickets.is_empty() {
            return None;
        }
        let mut g = self.shared.lock();
        loop {
            if let Some(i) = tickets.iter().position(|t| g.is_done(t.tag)) {
                g.flush();
                drop(g);
                self.shared.wake_pending();
                return Some(i);
            }
            g.drive(true);
        }
    }

    /// Cancels the tickets: queued reads never start, reads in flight are waited
    /// for (their bytes are discarded). Returns once none of them is in flight,
    /// so their pool ranges are free again. Each cancelled ticket then reports
    /// [`Error::Cancelled`]; tickets already done keep their result.
    pub fn cancel(&self, tickets: &[Ticket]) {
        let mut g = self.shared.lock();
        for t in tickets {
            g.cancel(t.tag);
        }
        while tickets.iter().any(|t| g.ops.get(&t.tag).is_some_and(|o| matches!(o.status, Status::InFlight))) {
            g.drive(true);
        }
        g.flush();
        drop(g);
        self.shared.wake_pending();
    }

    /// Copies pool bytes `src..src+out.len()` into `out`.
    ///
    /// # Errors
    /// [`Error::Busy`] if a queued or in-flight read owns any of those bytes;
    /// [`Error::PoolRange`] if they are not in the pool.
    pub fn copy_out(&self, src: usize, out: &mut [u8]) -> Result<()> {
        let g = self.shared.lock();
        self.shared.pool.check(src, out.len())?;
        if g.overlaps(src, out.len()) {
            return Err(Error::Busy { dest: src, len: out.len() });
        }
        // SAFETY: in the pool (checked) and no read owns the range; new reads are
        // submitted under the lock we hold, so none can start during the copy.
        out.copy_from_slice(unsafe { self.shared.pool.slice(src, out.len()) });
        Ok(())
    }

    /// Reads queued or in flight.
    pub fn pending(&self) -> usize {
        self.shared.lock().ops.values().filter(|o| !matches!(o.status, Status::Done(_))).count()
    }
}

impl Drop for ReadEngine {
    fn drop(&mut self) {
        // Queued reads never start; reads in flight finish (and keep their result
        // for any ticket still held) before this returns.
        let mut g = self.shared.lock();
        let tags: Vec<u64> = g.queue.iter().copied().collect();
        for t in tags {
            g.cancel(t);
        }
        g.drain();
        drop(g);
        self.shared.wake_pending();
    }
}

fn uring(pool: &Arc<BufferPool>, lanes: usize, register: bool) -> Result<Box<dyn Backend>> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use crate::backend::uring::{UringBackend, UringOptions};
        Ok(Box::new(UringBackend::new(Arc::clone(pool), lanes, UringOptions { register })?))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (pool, lanes, register);
        Err(Error::Backend { backend: "uring", why: "io_uring exists only on Linux and Android".into() })
    }
}

fn placement(f: &OpenFile, offset: u64, len: usize, dest: usize) -> Result<Placement> {
    let block = if f.o_direct() { BLOCK } else { 1 };
    let window = align::window(offset, len as u64, f.len(), block).ok_or(Error::Eof {
        path: f.path().to_path_buf(),
        offset,
        len,
        got: f.len().saturating_sub(offset).min(len as u64) as usize,
    })?;
    let bad = |why: &str| Error::Request { path: f.path().to_path_buf(), offset, len, dest, why: why.into() };
    if (dest as u64) % block != window.delta {
        return Err(bad(
            "for O_DIRECT the pool offset must sit at the same place within a 4 KiB block as the file offset",
        ));
    }
    Ok(Placement { window, pool_start: dest - window.delta as usize })
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes futures whose reads completed (outside the lock: a waker may poll inline).
    fn wake_pending(&self) {
        let wakers = std::mem::take(&mut self.lock().wake);
        for w in wakers {
            w.wake();
        }
    }

    /// Drives the engine until `tag` is done.
    fn wait_tag(&self, tag: u64) {
        let mut g = self.lock();
        while !g.is_done(tag) {
            g.drive(true);
        }
        g.flush();
        drop(g);
        self.wake_pending();
    }
}

impl Inner {
    fn stage(&self, r: &Request, pool: &BufferPool) -> Result<OpState> {
        let f = self.files.get(r.file).ok_or(Error::UnknownFile(r.file))?;
        let p = placement(f, r.offset, r.len, r.dest)?;
        let wlen = usize::try_from(p.window.len).ok().filter(|&l| l <= 1 << 30).ok_or_else(|| Error::Request {
            path: f.path().to_path_buf(),
            offset: r.offset,
            len: r.len,
            dest: r.dest,
            why: "reads are limited to 1 GiB".into(),
        })?;
        pool.check(p.pool_start, wlen).map_err(|_| Error::Request {
            path: f.path().to_path_buf(),
            offset: r.offset,
            len: r.len,
            dest: r.dest,
            why: format!("window {}+{wlen} does not fit in the pool of {} bytes", p.pool_start, pool.size()),
        })?;
        if self.overlaps(p.pool_start, wlen) {
            return Err(Error::Busy { dest: p.pool_start, len: wlen });
        }
        Ok(OpState {
            req: *r,
            start: p.window.start,
            pool_start: p.pool_start,
            wlen,
            need: p.window.need as usize,
            done: 0,
            pos: 0,
            retries: 0,
            stalls: 0,
            status: Status::Queued,
            cancelled: false,
            orphan: false,
            waker: None,
            driver: false,
        })
    }

    /// Gives back the pool range `tag` owned (if it owned one: empty reads own none).
    fn release(&mut self, start: usize, tag: u64) {
        if self.busy.get(&start).is_some_and(|&(_, t)| t == tag) {
            self.busy.remove(&start);
        }
    }

    fn overlaps(&self, start: usize, len: usize) -> bool {
        let end = start + len.max(1);
        // The range starting at or before `start`, and any starting inside ours.
        self.busy.range(..=start).next_back().is_some_and(|(_, &(e, _))| e > start)
            || self.busy.range(start..end).next().is_some()
    }

    fn in_flight(&self) -> usize {
        self.backend.in_flight()
    }

    /// Starts queued reads while lanes are free (pushes only; no syscall).
    fn refill(&mut self) {
        while self.in_flight() < self.lanes {
            let Some(tag) = self.queue.pop_front() else { break };
            let Some(op) = self.ops.get_mut(&tag) else { continue };
            if op.wlen == 0 {
                // Nothing to read: complete at once.
                op.status = Status::Done(Ok(()));
                self.finish(tag);
                continue;
            }
            op.status = Status::InFlight;
            let o = Op { tag, file: op.req.file, offset: op.start, len: op.wlen, dest: op.pool_start };
            // SAFETY: `stage` checked the range is in the pool and recorded it in
            // `busy`, so no other read targets it and `copy_out` refuses it; it
            // stays there until `finish` runs after this op's completion is reaped.
            unsafe { self.backend.push(o) };
        }
    }

    /// Submits whatever is queued in the backend.
    fn flush(&mut self) {
        let _ = self.backend.submit();
    }

    /// Reaps completions (blocking for one if `block`), processes them and refills lanes.
    fn drive(&mut self, block: bool) {
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        if self.backend.reap(block, &mut out).is_err() {
            // Waiting itself failed (not a read). The reads in flight still own
            // their bytes, so the only safe move is to try again.
            std::thread::yield_now();
        }
        for c in out.drain(..) {
            self.complete(c);
        }
        self.scratch = out;
        self.refill();
    }

    fn complete(&mut self, c: Completion) {
        let Some(op) = self.ops.get_mut(&c.tag) else { return };
        let file = &self.files[op.req.file];
        let outcome: Option<Result<()>> = if op.cancelled {
            Some(Err(Error::Cancelled { path: file.path().to_path_buf(), offset: op.req.offset, len: op.req.len }))
        } else {
            match c.result {
                Ok(n) => {
                    let end = op.pos + n;
                    if end <= op.done {
                        op.stalls += 1;
                    } else {
                        op.stalls = 0;
                    }
                    // Zero bytes, or twice no progress (an O_DIRECT continuation
                    // re-reads the partial last block): the file ends before the payload.
                    if n == 0 || op.stalls >= 2 {
                        let got = op.done.saturating_sub(op.need - op.req.len).min(op.req.len);
                        Some(Err(Error::Eof {
                            path: file.path().to_path_buf(),
                            offset: op.req.offset,
                            len: op.req.len,
                            got,
                        }))
                    } else {
                        op.done = op.done.max(end);
                        if op.done >= op.need {
                            Some(Ok(()))
                        } else {
                            // Short read: continue where it stopped (at a block
                            // boundary for O_DIRECT, re-reading the partial block).
                            op.pos = if file.o_direct() {
                                align::align_down(op.done as u64, BLOCK) as usize
                            } else {
                                op.done
                            };
                            None
                        }
                    }
                }
                Err(OsError(e)) if (e == libc::EINTR || e == libc::EAGAIN) && op.retries < MAX_RETRIES => {
                    op.retries += 1;
                    None
                }
                Err(err) => Some(Err(Error::Read {
                    path: file.path().to_path_buf(),
                    offset: op.req.offset,
                    len: op.req.len,
                    err,
                })),
            }
        };
        match outcome {
            Some(r) => {
                op.status = Status::Done(r);
                self.finish(c.tag);
            }
            None => {
                let o = Op {
                    tag: c.tag,
                    file: op.req.file,
                    offset: op.start + op.pos as u64,
                    len: op.wlen - op.pos,
                    dest: op.pool_start + op.pos,
                };
                // SAFETY: the continuation targets a tail of the same range, which
                // this read still owns (it is in `busy` until `finish`).
                unsafe { self.backend.push(o) };
            }
        }
    }

    /// The read `tag` is over: release its pool range and wake its future.
    fn finish(&mut self, tag: u64) {
        let Some(op) = self.ops.get_mut(&tag) else { return };
        let start = op.pool_start;
        self.release(start, tag);
        let Some(op) = self.ops.get_mut(&tag) else { return };
        if let Some(w) = op.waker.take() {
            self.wake.push(w);
        }
        if op.orphan {
            self.ops.remove(&tag);
        }
    }

    fn cancel(&mut self, tag: u64) {
        let Some(op) = self.ops.get_mut(&tag) else { return };
        match op.status {
            Status::Queued => {
                let path = self.files[op.req.file].path().to_path_buf();
                op.status = Status::Done(Err(Error::Cancelled { path, offset: op.req.offset, len: op.req.len }));
                self.queue.retain(|&t| t != tag);
                self.finish(tag);
            }
            Status::InFlight => op.cancelled = true,
            Status::Done(_) => {}
        }
    }

    /// Waits for every read in flight.
    fn drain(&mut self) {
        while self.in_flight() > 0 {
            self.drive(true);
        }
    }

    fn is_done(&self, tag: u64) -> bool {
        self.ops.get(&tag).is_none_or(|o| o.status.is_done())
    }

    fn result(&self, tag: u64) -> Result<()> {
        match self.ops.get(&tag).map(|o| &o.status) {
            Some(Status::Done(r)) => r.clone(),
            _ => unreachable!("result of a read that is not done"),
        }
    }
}

impl Status {
    fn is_done(&self) -> bool {
        matches!(self, Status::Done(_))
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Last owner gone (engine and every ticket): make sure the backend has no
        // read in flight before it, and then the pool, are dropped.
        self.queue.clear();
        self.drain();
    }
}

/// One request's handle: poll it, wait on it, or `.await` it.
///
/// Dropping a ticket does not cancel its read; the read keeps its pool range
/// until it completes.
pub struct Ticket {
    shared: Arc<Shared>,
    tag: u64,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket").field("tag", &self.tag).finish()
    }
}

impl Ticket {
    /// True once the read has completed, failed or been cancelled. Reaps whatever
    /// completions are ready, without blocking.
    pub fn is_done(&self) -> bool {
        let mut g = self.shared.lock();
        if !g.is_done(self.tag) {
            g.drive(false);
            g.flush();
        }
        let done = g.is_done(self.tag);
        drop(g);
        self.shared.wake_pending();
        done
    }

    /// Blocks until the read is over.
    ///
    /// # Errors
    /// The read's error: [`Error::Read`], [`Error::Eof`], [`Error::Cancelled`].
    /// A partial read is never `Ok`.
    pub fn wait(&self) -> Result<()> {
        self.shared.wait_tag(self.tag);
        self.shared.lock().result(self.tag)
    }

    /// The request this ticket stands for.
    pub fn request(&self) -> Request {
        self.shared.lock().ops.get(&self.tag).map(|o| o.req).expect("ticket state")
    }
}

impl Future for Ticket {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let mut g = self.shared.lock();
        if !g.is_done(self.tag) {
            g.drive(false);
            g.flush();
        }
        if g.is_done(self.tag) {
            let r = g.result(self.tag);
            drop(g);
            self.shared.wake_pending();
            return Poll::Ready(r);
        }
        let op = g.ops.get_mut(&self.tag).expect("ticket state");
        op.waker = Some(cx.waker().clone());
        // Nobody else may be reaping: one helper thread per pending ticket drives
        // the engine until this read is done, then the waker fires. No runtime needed.
        let spawn = !std::mem::replace(&mut op.driver, true);
        drop(g);
        if spawn {
            let (shared, tag) = (Arc::clone(&self.shared), self.tag);
            std::thread::spawn(move || shared.wait_tag(tag));
        }
        Poll::Pending
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut g = self.shared.lock();
        let done = g.is_done(self.tag);
        if done {
            g.ops.remove(&self.tag);
        } else if let Some(op) = g.ops.get_mut(&self.tag) {
            op.orphan = true;
            op.waker = None;
        }
    }
}
