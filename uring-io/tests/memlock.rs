//! Registration refused by the memlock limit: the pool keeps working with plain
//! reads and says why. Alone in its own test binary because it lowers
//! RLIMIT_MEMLOCK for the whole process (and drops CAP_IPC_LOCK, which would
//! otherwise exempt root, from the test's thread).

#![cfg(target_os = "linux")]

mod common;

use std::sync::Arc;

use bmoe_uring_io::{BackendKind, BufferPool, EngineOptions, Registration, Request};
use common::{disk_tempdir, engine_or_skip, payload, random_file};

const CAP_IPC_LOCK: u32 = 14;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drops CAP_IPC_LOCK from this thread's effective set. Returns false if that failed.
fn drop_ipc_lock() -> bool {
    let mut hdr = CapHeader { version: 0x2008_0522, pid: 0 };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget with a v3 header and room for two data structs, as the ABI requires.
    if unsafe { libc::syscall(libc::SYS_capget, &mut hdr as *mut CapHeader, data.as_mut_ptr()) } != 0 {
        return false;
    }
    data[0].effective &= !(1 << CAP_IPC_LOCK);
    // SAFETY: as above; lowering our own effective set is always allowed.
    unsafe { libc::syscall(libc::SYS_capset, &mut hdr as *mut CapHeader, data.as_ptr()) == 0 }
}

#[test]
fn refused_registration_falls_back_to_plain_reads() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct we pass.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) }, 0);
    lim.rlim_cur = lim.rlim_max.min(64 << 10);
    // SAFETY: setrlimit with a valid struct; lowering the soft limit needs no privilege.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &lim) }, 0);
    assert!(drop_ipc_lock(), "could not drop CAP_IPC_LOCK");

    let dir = disk_tempdir();
    let (path, data) = random_file(dir.path(), "m.bin", 1 << 20, 11);
    let pool = Arc::new(BufferPool::new(4 << 20).unwrap());
    let opts = EngineOptions { backend: BackendKind::Uring, lanes: 4, register: true, direct: true };
    let Some(engine) = engine_or_skip(&pool, opts, "memlock") else { return };
    let reg = engine.registration();
    eprintln!("registration under a 64 KiB memlock limit: {reg:?}");
    match &reg {
        Registration::Refused { reason } => assert!(reason.contains("REGISTER_BUFFERS"), "{reason}"),
        r => panic!("4 MiB registered under a 64 KiB memlock limit: {r:?}"),
    }
    assert!(!engine.info().fixed_buffers);
    let id = engine.open(&path).unwrap();
    let r = Request { file: id, offset: 12_345, len: 500_000, dest: 12_345 };
    engine.submit(&[r]).unwrap()[0].wait().unwrap();
    assert!(payload(&engine, r.dest, r.len) == data[12_345..512_345]);
}
