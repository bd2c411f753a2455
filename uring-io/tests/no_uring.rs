//! io_uring refused by seccomp (as container runtimes do): `auto` falls back to
//! the pread pool and says why; asking for `uring` is an error. The filter makes
//! io_uring_setup fail with ENOSYS for this test's thread only.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod common;

use std::sync::Arc;

use bmoe_uring_io::{BackendKind, BufferPool, EngineOptions, Error, ReadEngine, Request};
use common::{disk_tempdir, payload, random_file};

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

/// Installs a filter on this thread: io_uring_setup (425) fails with ENOSYS.
fn deny_io_uring() {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO: u32 = 0x0005_0000;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    let filter = [
        stmt(LD_W_ABS, 4),
        SockFilter { code: JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH_X86_64 },
        stmt(RET_K, ALLOW),
        stmt(LD_W_ABS, 0),
        SockFilter { code: JEQ_K, jt: 0, jf: 1, k: 425 },
        stmt(RET_K, ERRNO | libc::ENOSYS as u32),
        stmt(RET_K, ALLOW),
    ];
    let prog = SockFprog { len: filter.len() as u16, filter: filter.as_ptr() };
    // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }, 0);
    // SAFETY: a valid sock_fprog pointing at a live filter array; the kernel copies it.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const SockFprog, 0, 0) }, 0);
}

#[test]
fn auto_falls_back_to_pread_when_io_uring_is_refused() {
    deny_io_uring();
    let pool = Arc::new(BufferPool::new(1 << 20).unwrap());
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
