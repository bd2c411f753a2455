//! Shared helpers of the integration tests: small random files in temp dirs,
//! a deterministic RNG, and the io_uring availability check tests skip on.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bmoe_uring_io::{BackendKind, BufferPool, EngineOptions, Error, ReadEngine};

/// xorshift64*: deterministic, dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Writes `len` random bytes to `dir/name` and returns the path and the bytes.
pub fn random_file(dir: &Path, name: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let mut rng = Rng(seed | 1);
    let mut data = vec![0u8; len];
    for chunk in data.chunks_mut(8) {
        let v = rng.next().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    let path = dir.join(name);
    std::fs::write(&path, &data).unwrap();
    (path, data)
}

/// A temp dir on a disk filesystem (not tmpfs), so O_DIRECT is exercised.
pub fn disk_tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// An engine, or `None` (with the reason printed) where io_uring cannot be set up.
pub fn engine_or_skip(pool: &Arc<BufferPool>, opts: EngineOptions, test: &str) -> Option<ReadEngine> {
    match ReadEngine::new(Arc::clone(pool), opts) {
        Ok(e) => Some(e),
        Err(Error::Backend { backend: "uring", why }) if opts.backend == BackendKind::Uring => {
            eprintln!("SKIP {test}: io_uring unavailable here: {why}");
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// Copies a completed read's payload out of the pool.
pub fn payload(engine: &ReadEngine, dest: usize, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    engine.copy_out(dest, &mut v).unwrap();
    v
}
