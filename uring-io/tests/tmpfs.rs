//! A file on tmpfs (`/dev/shm`): older kernels refuse O_DIRECT there (EINVAL) and
//! the engine must fall back to buffered reads; newer ones accept it and the
//! probe must see matching bytes. Either way: right bytes, and a stated reason.

mod common;

use std::path::Path;
use std::sync::Arc;

use bmoe_uring_io::{BackendKind, BufferPool, EngineOptions, Request};
use common::{engine_or_skip, payload, random_file};

#[test]
fn tmpfs_reads_right_bytes_and_says_how() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("SKIP: no /dev/shm");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let (path, data) = random_file(dir.path(), "t.bin", 300_001, 3);
    for backend in [BackendKind::Uring, BackendKind::Pread] {
        let pool = Arc::new(BufferPool::new(1 << 20).unwrap());
        let Some(engine) =
            engine_or_skip(&pool, EngineOptions { backend, lanes: 2, register: true, direct: true }, "tmpfs")
        else {
            continue;
        };
        let id = engine.open(&path).unwrap();
        let f = engine.file(id).unwrap();
        eprintln!("tmpfs: o_direct={} ({})", f.o_direct(), f.o_direct_reason());
        if f.o_direct() {
            assert!(f.o_direct_reason().contains("matches"), "{}", f.o_direct_reason());
        } else {
            assert!(f.o_direct_reason().contains("buffered"), "{}", f.o_direct_reason());
        }
        let reqs = [
            Request { file: id, offset: 77, len: 100_000, dest: 77 },
            Request { file: id, offset: 300_001 - 5_001, len: 5_001, dest: 204_800 + (300_001 - 5_001) % 4096 },
        ];
        engine.wait_all(&engine.submit(&reqs).unwrap()).unwrap();
        for r in reqs {
            assert!(payload(&engine, r.dest, r.len) == data[r.offset as usize..r.offset as usize + r.len]);
        }
    }
}

#[test]
fn buffered_mode_takes_any_placement() {
    // Without O_DIRECT, payloads may land anywhere in the pool (no block relation).
    let dir = tempfile::tempdir().unwrap();
    let (path, data) = random_file(dir.path(), "b.bin", 50_000, 4);
    let pool = Arc::new(BufferPool::new(1 << 20).unwrap());
    let engine = bmoe_uring_io::ReadEngine::new(pool, EngineOptions { direct: false, ..Default::default() }).unwrap();
    let id = engine.open(&path).unwrap();
    let f = engine.file(id).unwrap();
    assert!(!f.o_direct());
    let r = Request { file: id, offset: 1, len: 49_999, dest: 3 };
    engine.submit(&[r]).unwrap()[0].wait().unwrap();
    assert!(payload(&engine, 3, 49_999) == data[1..]);
}
