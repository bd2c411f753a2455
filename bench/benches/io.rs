//! Read-engine sweep: request size × lanes × backend, O_DIRECT random reads of
//! a 64 MiB temp file, keeping `lanes` reads in flight as the decoder does.
//! Criterion reports the throughput of each point. Quick by design (about a
//! minute); `bmoe iobench` is the long-run tool for comparisons with fio.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use bmoe::engine::io::{BackendKind, BufferPool, EngineOptions, ReadEngine, Request};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const FILE: usize = 64 << 20;
const READS_PER_ITER: usize = 16;

fn write_random(path: &std::path::Path) {
    let mut f = std::fs::File::create(path).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..FILE >> 20 {
        for c in buf.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all(&buf).unwrap();
    }
    f.sync_all().unwrap();
}

fn sweep(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("io-bench.bin");
    write_random(&path);
    let mut g = c.benchmark_group("io");
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_millis(1500));
    for (backend, name) in [(BackendKind::Uring, "uring"), (BackendKind::Pread, "pread")] {
        for block in [256usize << 10, 3 << 20] {
            for lanes in [1usize, 4, 8] {
                let pool = Arc::new(BufferPool::new(lanes * block).unwrap());
                let opts = EngineOptions { backend, lanes, register: true, direct: true };
                let engine = match ReadEngine::new(pool, opts) {
                    Ok(e) => e,
                    Err(e) => {
                        eprintln!("skipping {name}: {e}");
                        continue;
                    }
                };
                let file = engine.open(&path).unwrap();
                let blocks = (FILE / block) as u64;
                let mut x = 12345u64;
                let mut next = move || {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    (x >> 33) % blocks * block as u64
                };
                g.throughput(Throughput::Bytes((READS_PER_ITER * block) as u64));
                let id = BenchmarkId::new(format!("{name}/{}K", block >> 10), format!("lanes{lanes}"));
                g.bench_function(id, |b| {
                    b.iter(|| {
                        let req = |slot: usize, offset: u64| Request { file, offset, len: block, dest: slot * block };
                        let first: Vec<Request> = (0..lanes.min(READS_PER_ITER)).map(|s| req(s, next())).collect();
                        let mut tickets = engine.submit(&first).unwrap();
                        let mut issued = tickets.len();
                        while issued < READS_PER_ITER {
                            let i = engine.wait_any(&tickets).unwrap();
                            tickets[i].wait().unwrap();
                            tickets[i] = engine.submit(&[req(i, next())]).unwrap().pop().unwrap();
                            issued += 1;
                        }
                        engine.wait_all(&tickets).unwrap();
                    })
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, sweep);
criterion_main!(benches);
