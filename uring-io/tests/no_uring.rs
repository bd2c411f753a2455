//! io_uring refused by seccomp (as container runtimes do): `auto` falls back to
//! the pread pool and says why; asking for `uring` is an error. The filter makes
//! io_uring_setup fail with ENOSYS for this test's thread only. Under qemu-user,
//! which refuses seccomp filters (EINVAL) and implements no io_uring (ENOSYS), the
//! same fallback is checked against the emulator's refusal.

#![cfg(all(any(target_os = "linux", target_os = "android"), any(target_arch = "x86_64", target_arch = "aarch64")))]

mod common;

use std::sync::Arc;

use bmoe_uring_io::{BackendKind, BufferPool, EngineOptions, Error, ReadEngine, Request};
use common::{disk_tempdir, payload, random_file};

#[test]
fn auto_falls_back_to_pread_when_io_uring_is_refused() {
    let pool = Arc::new(BufferPool::new(1 << 20).unwrap());
    if let Err(e) = bmoe_uring_io::fault::deny_io_uring() {
        let uring = EngineOptions { backend: BackendKind::Uring, ..Default::default() };
        if ReadEngine::new(Arc::clone(&pool), uring).is_ok() {
            eprintln!("SKIP no_uring: no seccomp filter here ({e}) and io_uring works, so nothing refuses it");
            return;
        }
        eprintln!("no_uring: no seccomp filter here ({e}); io_uring is refused anyway, checking the fallback on that");
    }
    let err = ReadEngine::new(Arc::clone(&pool), EngineOptions { backend: BackendKind::Uring, ..Default::default() })
        .unwrap_err();
    assert!(matches!(err, Error::Backend { backend: "uring", .. }), "{err}");
    let engine = ReadEngine::new(Arc::clone(&pool), EngineOptions::default()).unwrap();
    let info = engine.info().clone();
    eprintln!("auto under seccomp: {} ({})", info.backend, info.why);
    assert_eq!(info.backend, "pread");
    assert!(info.why.contains("io_uring unavailable") && info.why.contains("38"), "{}", info.why);
    let dir = disk_tempdir();
    let (path, data) = random_file(dir.path(), "n.bin", 100_000, 12);
    let id = engine.open(&path).unwrap();
    let r = Request { file: id, offset: 4096, len: 95_904, dest: 4096 };
    engine.submit(&[r]).unwrap()[0].wait().unwrap();
    assert!(payload(&engine, r.dest, r.len) == data[4096..]);
}
