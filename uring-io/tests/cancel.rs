//! Cancel and drop with reads in flight: nothing is reused or freed while a read
//! owns it. Run this binary under valgrind or AddressSanitizer too (docs/io.md).

mod common;

use std::sync::Arc;
use std::time::Duration;

use bmoe_uring_io::backend::pread::PreadBackend;
use bmoe_uring_io::fault::{Fault, FaultBackend};
use bmoe_uring_io::{Backend, BackendKind, BufferPool, EngineOptions, Error, ReadEngine, Request};
use common::{disk_tempdir, payload, random_file};

const LANES: usize = 4;
const N: usize = 24;
const LEN: usize = 256 << 10;

fn inner(pool: &Arc<BufferPool>) -> Box<dyn Backend> {
    #[cfg(target_os = "linux")]
    {
        use bmoe_uring_io::backend::uring::{UringBackend, UringOptions};
        match UringBackend::new(Arc::clone(pool), LANES, UringOptions { register: true }) {
            Ok(u) => return Box::new(u),
            Err(e) => eprintln!("io_uring unavailable ({e}), testing over pread"),
        }
    }
    Box::new(PreadBackend::new(Arc::clone(pool), LANES).unwrap())
}

fn reqs(file: usize) -> Vec<Request> {
    (0..N).map(|i| Request { file, offset: (i * LEN) as u64, len: LEN, dest: i * LEN }).collect()
}

#[test]
fn cancel_with_reads_in_flight_drains_before_reuse() {
    let dir = disk_tempdir();
    let (path, data) = random_file(dir.path(), "c.bin", N * LEN, 5);
    let pool = Arc::new(BufferPool::new(N * LEN).unwrap());
    // The first lanes' completions are held back, so they are surely in flight at cancel.
    let plan = (1..=LANES as u64).map(|n| (n, Fault::Delay(Duration::from_millis(100))));
    let engine = ReadEngine::with_backend(
        Arc::clone(&pool),
        Box::new(FaultBackend::new(inner(&pool), plan)),
        LANES,
        true,
        "t".into(),
    );
    let file = engine.open(&path).unwrap();
    let tickets = engine.submit(&reqs(file)).unwrap();
    assert!(!tickets[0].is_done());
    // While in flight the destination belongs to the read.
    assert!(matches!(engine.submit(&[Request { file, offset: 0, len: 4096, dest: 0 }]), Err(Error::Busy { .. })));
    assert!(matches!(engine.copy_out(0, &mut [0u8; 16]), Err(Error::Busy { .. })));
    engine.cancel(&tickets);
    assert_eq!(engine.pending(), 0, "cancel returned with reads still in flight");
    let cancelled = tickets.iter().filter(|t| matches!(t.wait(), Err(Error::Cancelled { .. }))).count();
    assert!(cancelled >= N - LANES, "queued reads must never start: {cancelled} cancelled");
    assert!(tickets.iter().all(|t| t.is_done()));
    // The ranges are free again: new reads into them work and return right bytes.
    let again = engine.submit(&reqs(file)).unwrap();
    engine.wait_all(&again).unwrap();
    for r in reqs(file) {
        assert!(payload(&engine, r.dest, r.len) == data[r.offset as usize..r.offset as usize + r.len]);
    }
}

#[test]
fn dropping_the_engine_drains_in_flight_reads() {
    let dir = disk_tempdir();
    let (path, _data) = random_file(dir.path(), "d.bin", N * LEN, 6);
    for backend in [BackendKind::Uring, BackendKind::Pread] {
        let pool = Arc::new(BufferPool::new(N * LEN).unwrap());
        let Some(engine) = common::engine_or_skip(
            &pool,
            EngineOptions { backend, lanes: LANES, register: true, direct: true },
            "drop",
        ) else {
            continue;
        };
        let file = engine.open(&path).unwrap();
        let tickets = engine.submit(&reqs(file)).unwrap();
        drop(engine);
        // Every ticket is settled by the drop: the in-flight ones completed, the queued ones never ran.
        for t in &tickets {
            assert!(t.is_done());
            match t.wait() {
                Ok(()) | Err(Error::Cancelled { .. }) => {}
                Err(e) => panic!("{backend:?}: {e}"),
            }
        }
        drop(pool);
        drop(tickets);
    }
}

#[test]
fn dropping_engine_pool_and_tickets_at_once() {
    // Reads genuinely in the kernel when everything goes away, in every order.
    let dir = disk_tempdir();
    let (path, _data) = random_file(dir.path(), "e.bin", N * LEN, 8);
    for round in 0..3 {
        let pool = Arc::new(BufferPool::new(N * LEN).unwrap());
        let engine = ReadEngine::new(Arc::clone(&pool), EngineOptions { lanes: LANES, ..Default::default() }).unwrap();
        let file = engine.open(&path).unwrap();
        let tickets = engine.submit(&reqs(file)).unwrap();
        match round {
            0 => {
                drop(tickets);
                drop(pool);
                drop(engine);
            }
            1 => {
                drop(pool);
                drop(engine);
                drop(tickets);
            }
            _ => {
                engine.cancel(&tickets[..N / 2]);
                drop(engine);
                drop(pool);
                drop(tickets);
            }
        }
    }
}
