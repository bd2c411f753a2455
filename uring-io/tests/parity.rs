//! Parity: every backend and buffer mode returns exactly the bytes `std::fs`
//! does, on random offsets and lengths (unaligned ones, reads ending at EOF, a
//! file whose end is not on 4 KiB).

mod common;

use std::sync::Arc;

use bmoe_uring_io::{BackendKind, BufferPool, EngineOptions, Registration, Request};
use common::{disk_tempdir, engine_or_skip, payload, random_file, Rng};

const FILE_LEN: usize = (3 << 20) + 1234;
const SLOT: usize = 320 << 10;
const BATCH: usize = 12;

/// Random requests: mostly unaligned, some block-aligned, some ending exactly at EOF.
fn requests(seed: u64, n: usize) -> Vec<(u64, usize)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let len = 1 + rng.below(SLOT as u64 - 8192) as usize;
            let offset = match i % 4 {
                0 => rng.below((FILE_LEN - len) as u64) & !4095,
                1 => (FILE_LEN - len) as u64,
                _ => rng.below((FILE_LEN - len) as u64),
            };
            (offset, len)
        })
        .collect()
}

fn check(name: &str, opts: EngineOptions, expect_fixed: Option<bool>) {
    let dir = disk_tempdir();
    let (path, data) = random_file(dir.path(), "parity.bin", FILE_LEN, 0xB0E);
    let pool = Arc::new(BufferPool::new(BATCH * SLOT).unwrap());
    let Some(engine) = engine_or_skip(&pool, opts, name) else { return };
    if let Some(fixed) = expect_fixed {
        assert_eq!(engine.info().fixed_buffers, fixed, "{name}: {:?}", engine.registration());
        if fixed {
            assert_eq!(engine.registration(), Registration::Registered { chunks: 1 });
        }
    }
    let file = engine.open(&path).unwrap();
    let f = engine.file(file).unwrap();
    assert_eq!(f.o_direct(), opts.direct, "{name}: {}", f.o_direct_reason());
    let reqs = requests(42, 96);
    for batch in reqs.chunks(BATCH) {
        let rs: Vec<Request> = batch
            .iter()
            .enumerate()
            .map(|(i, &(offset, len))| Request { file, offset, len, dest: i * SLOT + (offset % 4096) as usize })
            .collect();
        let tickets = engine.submit(&rs).unwrap();
        engine.wait_all(&tickets).unwrap();
        for r in &rs {
            let got = payload(&engine, r.dest, r.len);
            let want = &data[r.offset as usize..r.offset as usize + r.len];
            assert!(got == want, "{name}: bytes differ for {} bytes at {}", r.len, r.offset);
        }
    }
    // The whole file in one read, and its last byte alone.
    for (offset, len) in [(0u64, FILE_LEN), (FILE_LEN as u64 - 1, 1)] {
        let big = Arc::new(BufferPool::new(FILE_LEN + 8192).unwrap());
        let Some(e2) = engine_or_skip(&big, opts, name) else { return };
        let id = e2.open(&path).unwrap();
        let dest = (offset % 4096) as usize;
        let t = e2.submit(&[Request { file: id, offset, len, dest }]).unwrap();
        t[0].wait().unwrap();
        assert!(payload(&e2, dest, len) == data[offset as usize..offset as usize + len], "{name}: {len} at {offset}");
    }
}

#[test]
fn uring_fixed_matches_std_fs() {
    check(
        "uring fixed",
        EngineOptions { backend: BackendKind::Uring, lanes: 4, register: true, direct: true },
        Some(true),
    );
}

#[test]
fn uring_unregistered_matches_std_fs() {
    check(
        "uring unregistered",
        EngineOptions { backend: BackendKind::Uring, lanes: 4, register: false, direct: true },
        Some(false),
    );
}

#[test]
fn pread_matches_std_fs() {
    check("pread", EngineOptions { backend: BackendKind::Pread, lanes: 4, register: false, direct: true }, Some(false));
}

#[test]
fn buffered_uring_and_pread_match_std_fs() {
    check(
        "uring buffered",
        EngineOptions { backend: BackendKind::Uring, lanes: 3, register: true, direct: false },
        None,
    );
    check(
        "pread buffered",
        EngineOptions { backend: BackendKind::Pread, lanes: 3, register: false, direct: false },
        None,
    );
}

#[test]
fn auto_reports_its_choice() {
    let pool = Arc::new(BufferPool::new(1 << 20).unwrap());
    let e = bmoe_uring_io::ReadEngine::new(pool, EngineOptions::default()).unwrap();
    let info = e.info();
    eprintln!("auto chose {} ({})", info.backend, info.why);
    assert!(info.backend == "uring" || info.backend == "pread");
    assert!(info.why.starts_with("auto:"));
}

#[test]
fn misplaced_direct_request_is_refused_with_context() {
    let dir = disk_tempdir();
    let (path, _) = random_file(dir.path(), "m.bin", 20_000, 7);
    let pool = Arc::new(BufferPool::new(64 << 10).unwrap());
    let e = bmoe_uring_io::ReadEngine::new(pool, EngineOptions { backend: BackendKind::Pread, ..Default::default() })
        .unwrap();
    let id = e.open(&path).unwrap();
    if !e.file(id).unwrap().o_direct() {
        eprintln!("SKIP: no O_DIRECT on {}", dir.path().display());
        return;
    }
    let err = e.submit(&[Request { file: id, offset: 100, len: 10, dest: 0 }]).unwrap_err();
    assert!(err.to_string().contains("m.bin"), "{err}");
    // Past the end of the pool, and past the end of the file.
    assert!(e.submit(&[Request { file: id, offset: 0, len: 4096, dest: 64 << 10 }]).is_err());
    let err = e.submit(&[Request { file: id, offset: 19_000, len: 1001, dest: 19_000 % 4096 }]).unwrap_err();
    assert!(matches!(err, bmoe_uring_io::Error::Eof { got: 1000, .. }), "{err}");
    // Two requests of one batch into the same bytes.
    let err = e
        .submit(&[
            Request { file: id, offset: 0, len: 4096, dest: 0 },
            Request { file: id, offset: 4096, len: 4096, dest: 0 },
        ])
        .unwrap_err();
    assert!(matches!(err, bmoe_uring_io::Error::Busy { .. }), "{err}");
    assert_eq!(e.pending(), 0);
}

#[test]
fn empty_requests_complete_and_own_nothing() {
    let dir = disk_tempdir();
    let (path, data) = random_file(dir.path(), "z.bin", 10_000, 9);
    let pool = Arc::new(BufferPool::new(64 << 10).unwrap());
    let e = bmoe_uring_io::ReadEngine::new(pool, EngineOptions::default()).unwrap();
    let id = e.open(&path).unwrap();
    let reqs = [
        Request { file: id, offset: 100, len: 0, dest: 100 },
        Request { file: id, offset: 100, len: 0, dest: 100 },
        Request { file: id, offset: 0, len: 10_000, dest: 0 },
    ];
    let t = e.submit(&reqs).unwrap();
    e.wait_all(&t).unwrap();
    assert!(payload(&e, 0, 10_000) == data);
    assert_eq!(e.pending(), 0);
}
