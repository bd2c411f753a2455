//! Faults injected below the engine: short reads are continued, EINTR/EAGAIN
//! retried, EIO and EOF surface with path, offset and length, and no ticket
//! ever reports success for a partial read. Run over both backends.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use bmoe_uring_io::backend::pread::PreadBackend;
use bmoe_uring_io::fault::{Fault, FaultBackend};
use bmoe_uring_io::{Backend, BufferPool, Error, OsError, ReadEngine, Request};
use common::{disk_tempdir, payload, random_file};

const LANES: usize = 4;

/// The inner backends to wrap: pread always, io_uring where the kernel allows.
fn inners(pool: &Arc<BufferPool>) -> Vec<Box<dyn Backend>> {
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut v: Vec<Box<dyn Backend>> = vec![Box::new(PreadBackend::new(Arc::clone(pool), LANES).unwrap())];
    #[cfg(target_os = "linux")]
    {
        use bmoe_uring_io::backend::uring::{UringBackend, UringOptions};
        match UringBackend::new(Arc::clone(pool), LANES, UringOptions { register: true }) {
            Ok(u) => v.push(Box::new(u)),
            Err(e) => eprintln!("SKIP io_uring half: {e}"),
        }
    }
    v
}

/// For each inner backend: an engine wrapped in `plan`, the file's bytes and id, and the op log.
fn setups(
    plan: &[(u64, Fault)],
    file_len: usize,
    direct: bool,
) -> Vec<(ReadEngine, Vec<u8>, usize, tempfile::TempDir, FaultLog)> {
    let mut out = Vec::new();
    let pool = Arc::new(BufferPool::new(16 << 20).unwrap());
    for inner in inners(&pool) {
        let dir = disk_tempdir();
        let (path, data) = random_file(dir.path(), "fault.bin", file_len, 99);
        let fb = FaultBackend::new(inner, plan.iter().copied());
        let log = fb.log();
        let engine = ReadEngine::with_backend(Arc::clone(&pool), Box::new(fb), LANES, direct, "test".into());
        let id = engine.open(&path).unwrap();
        out.push((engine, data, id, dir, log));
    }
    out
}

type FaultLog = Arc<std::sync::Mutex<Vec<bmoe_uring_io::Op>>>;

#[test]
fn short_reads_are_continued_to_completion() {
    // Aligned and unaligned short counts, direct and buffered.
    for direct in [true, false] {
        for keep in [4096usize, 1000, 1] {
            for (engine, data, file, _dir, log) in
                setups(&[(1, Fault::Short { keep }), (2, Fault::Short { keep })], 1 << 20, direct)
            {
                let r = Request { file, offset: 8192 + 32, len: 200_000, dest: 32 };
                let t = engine.submit(&[r]).unwrap();
                t[0].wait().unwrap();
                assert!(payload(&engine, r.dest, r.len) == data[8224..8224 + 200_000]);
                let ops = log.lock().unwrap().clone();
                assert!(ops.len() >= 3, "keep {keep}: short reads were not continued: {ops:?}");
                assert!(ops.iter().all(|o| o.tag == ops[0].tag));
            }
        }
    }
}

#[test]
fn eintr_and_eagain_are_retried() {
    for (engine, data, file, _dir, log) in
        setups(&[(1, Fault::Errno(libc::EINTR)), (2, Fault::Errno(libc::EAGAIN))], 1 << 20, true)
    {
        let r = Request { file, offset: 4096, len: 70_000, dest: 4096 };
        engine.submit(&[r]).unwrap()[0].wait().unwrap();
        assert!(payload(&engine, r.dest, r.len) == data[4096..4096 + 70_000]);
        assert_eq!(log.lock().unwrap().len(), 3);
    }
}

#[test]
fn eio_on_the_nth_read_surfaces_with_context() {
    for (engine, _data, file, dir, _log) in setups(&[(3, Fault::Errno(libc::EIO))], 1 << 20, true) {
        let reqs: Vec<Request> = (0..6)
            .map(|i| Request { file, offset: i as u64 * 65_536 + 100, len: 5000, dest: i * 65_536 + 100 })
            .collect();
        let tickets = engine.submit(&reqs).unwrap();
        let err = engine.wait_all(&tickets).unwrap_err();
        match &err {
            Error::Read { path, offset, len, err } => {
                assert_eq!(path, &dir.path().join("fault.bin"));
                assert_eq!((*offset, *len, *err), (2 * 65_536 + 100, 5000, OsError(libc::EIO)));
            }
            e => panic!("expected a read error, got {e:?}"),
        }
        let msg = err.to_string();
        assert!(msg.contains("fault.bin") && msg.contains("131172") && msg.contains("5000"), "{msg}");
        let oks = tickets.iter().filter(|t| t.wait().is_ok()).count();
        assert_eq!(oks, 5, "exactly the third read fails");
        assert!(tickets[2].is_done() && tickets[2].wait().is_err());
    }
}

#[test]
fn a_short_read_then_an_error_is_never_success() {
    for (engine, _data, file, _dir, _log) in
        setups(&[(1, Fault::Short { keep: 8192 }), (2, Fault::Errno(libc::EIO))], 1 << 20, true)
    {
        let t = engine.submit(&[Request { file, offset: 0, len: 100_000, dest: 0 }]).unwrap();
        let err = t[0].wait().unwrap_err();
        assert!(matches!(err, Error::Read { offset: 0, len: 100_000, .. }), "{err}");
    }
}

#[test]
fn truncated_file_is_an_eof_error_not_a_short_success() {
    for direct in [true, false] {
        for (engine, _data, file, dir, _log) in setups(&[], 64 << 10, direct) {
            // Shrink the file after open: the engine's length check passes, the read comes up short.
            std::fs::OpenOptions::new()
                .write(true)
                .open(dir.path().join("fault.bin"))
                .unwrap()
                .set_len(10_000)
                .unwrap();
            let t = engine.submit(&[Request { file, offset: 8192, len: 8192, dest: 0 }]).unwrap();
            let err = t[0].wait().unwrap_err();
            match err {
                Error::Eof { offset: 8192, len: 8192, got, .. } => assert_eq!(got, 10_000 - 8192),
                e => panic!("direct={direct}: expected EOF, got {e:?}"),
            }
        }
    }
}

struct Flag(std::sync::atomic::AtomicBool, std::thread::Thread);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        self.1.unpark();
    }
}

#[test]
fn tickets_are_futures_woken_without_a_runtime() {
    for (engine, data, file, _dir, _log) in setups(&[(1, Fault::Delay(Duration::from_millis(300)))], 1 << 20, true) {
        let r = Request { file, offset: 0, len: 4096, dest: 0 };
        let mut t = engine.submit(&[r]).unwrap().pop().unwrap();
        let flag = Arc::new(Flag(false.into(), std::thread::current()));
        let waker = Waker::from(Arc::clone(&flag));
        let mut cx = Context::from_waker(&waker);
        assert!(std::pin::Pin::new(&mut t).poll(&mut cx).is_pending(), "a delayed read cannot be ready at once");
        // Nothing drives the engine here: the wake must come from the engine itself.
        while !flag.0.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::park_timeout(Duration::from_secs(5));
        }
        match std::pin::Pin::new(&mut t).poll(&mut cx) {
            Poll::Ready(r) => r.unwrap(),
            Poll::Pending => panic!("woken but not ready"),
        }
        assert!(payload(&engine, 0, 4096) == data[..4096]);
    }
}

#[test]
fn wait_any_returns_a_finished_read_first() {
    for (engine, _data, file, _dir, _log) in setups(&[(1, Fault::Delay(Duration::from_millis(400)))], 1 << 20, true) {
        let reqs =
            [Request { file, offset: 0, len: 4096, dest: 0 }, Request { file, offset: 4096, len: 4096, dest: 4096 }];
        let tickets = engine.submit(&reqs).unwrap();
        assert_eq!(engine.wait_any(&tickets), Some(1));
        tickets[0].wait().unwrap();
    }
}
