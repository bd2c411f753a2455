//! The positional-read backend: a fixed pool of threads, one per lane, each
//! doing one `pread` (`seek_read` on Windows) at a time into the pool.
//!
//! It is the fallback where io_uring cannot be set up and the only backend on
//! macOS and Windows (there the file is opened with F_NOCACHE or
//! FILE_FLAG_NO_BUFFERING, see [`crate::OpenFile`]). Costs a thread hop per read; in
//! exchange it needs nothing from the kernel beyond `pread`.

use std::collections::VecDeque;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::{Backend, Completion, FileId, FileTable, Op};
use crate::error::{Error, OsError, Result};
use crate::file::OpenFile;
use crate::pool::BufferPool;

/// A read handed to a worker: everything it needs, owned.
struct Job {
    tag: u64,
    file: Arc<OpenFile>,
    offset: u64,
    dest: *mut u8,
    len: usize,
}

// SAFETY: `dest` points into the pool, which the backend keeps alive until every
// worker is joined; the engine gives this job exclusive use of those bytes until
// its completion is reaped. Nothing about the pointer is tied to a thread.
unsafe impl Send for Job {}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

/// Worker threads doing positional reads.
pub struct PreadBackend {
    queue: Arc<(Mutex<Queue>, Condvar)>,
    done: mpsc::Receiver<Completion>,
    workers: Vec<JoinHandle<()>>,
    files: FileTable,
    pending: Vec<Job>,
    in_flight: usize,
    // Last: the pool outlives the joined workers.
    pool: Arc<BufferPool>,
}

impl std::fmt::Debug for PreadBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreadBackend")
            .field("threads", &self.workers.len())
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl PreadBackend {
    /// `lanes` worker threads reading into `pool`.
    ///
    /// # Errors
    /// [`Error::Backend`] if a thread cannot be spawned.
    pub fn new(pool: Arc<BufferPool>, lanes: usize) -> Result<Self> {
        let queue = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        let (tx, done) = mpsc::channel();
        let mut workers = Vec::new();
        for i in 0..lanes.max(1) {
            let (q, tx) = (Arc::clone(&queue), tx.clone());
            let h = std::thread::Builder::new()
                .name(format!("bmoe-pread-{i}"))
                .spawn(move || worker(&q, &tx))
                .map_err(|e| Error::Backend { backend: "pread", why: format!("spawning a worker: {e}") })?;
            workers.push(h);
        }
        Ok(Self { queue, done, workers, files: FileTable::default(), pending: Vec::new(), in_flight: 0, pool })
    }
}

fn worker(q: &(Mutex<Queue>, Condvar), tx: &mpsc::Sender<Completion>) {
    loop {
        let job = {
            let mut g = q.0.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = g.jobs.pop_front() {
                    break j;
                }
                if g.closed {
                    return;
                }
                g = q.1.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        };
        // SAFETY: see `Job`: the bytes are in the live pool and exclusively ours
        // until the completion below is reaped.
        let buf = unsafe { std::slice::from_raw_parts_mut(job.dest, job.len) };
        let result = crate::file::read_at(job.file.file(), buf, job.offset).map_err(|e| OsError::of(&e));
        if tx.send(Completion { tag: job.tag, result }).is_err() {
            return;
        }
    }
}

impl Backend for PreadBackend {
    fn name(&self) -> &'static str {
        "pread"
    }

    fn add_file(&mut self, id: FileId, file: Arc<OpenFile>) -> Result<()> {
        self.files.insert(id, file);
        Ok(())
    }

    unsafe fn push(&mut self, op: Op) {
        let file = Arc::clone(self.files.get(op.file));
        let dest = self.pool.ptr_at(op.dest, op.len).expect("op outside the pool");
        self.pending.push(Job { tag: op.tag, file, offset: op.offset, dest, len: op.len });
        self.in_flight += 1;
    }

    fn submit(&mut self) -> Result<(), OsError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len();
        {
            let mut g = self.queue.0.lock().unwrap_or_else(|e| e.into_inner());
            g.jobs.extend(self.pending.drain(..));
        }
        if n == 1 {
            self.queue.1.notify_one();
        } else {
            self.queue.1.notify_all();
        }
        Ok(())
    }

    fn reap(&mut self, wait: bool, out: &mut Vec<Completion>) -> Result<(), OsError> {
        self.submit()?;
        let before = out.len();
        out.extend(self.done.try_iter());
        if out.len() == before && wait && self.in_flight > 0 {
            // Workers only exit once closed (in Drop), so the channel cannot be disconnected here.
            out.push(self.done.recv().map_err(|_| OsError(libc::EIO))?);
            out.extend(self.done.try_iter());
        }
        self.in_flight -= out.len() - before;
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }
}

impl Drop for PreadBackend {
    fn drop(&mut self) {
        // Jobs never handed to a worker have not started: drop them. Jobs a worker
        // holds finish before join returns, so no write into the pool outlives us.
        self.pending.clear();
        {
            let mut g = self.queue.0.lock().unwrap_or_else(|e| e.into_inner());
            g.closed = true;
            g.jobs.clear();
        }
        self.queue.1.notify_all();
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}
