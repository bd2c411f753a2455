//! Decode-step sweep on a small synthetic model (8 layers × 32 experts, top-4, q4_k_m,
//! ~290 MiB; synthesized once under the target folder) over the lossless knobs, one moved at a
//! time from a base (cache ¼ of the expert bytes, 4 lanes, overlap off, dense weights anon):
//! cache size (off, ¼, ½, all), lanes (1, 4, 8), overlap (on), dense weights (mmap), and the
//! resident decoder as the reference. Each iteration is one decode step teacher-forced on a
//! fixed pseudo-random token stream, so routing varies token to token as sampled decoding
//! does (greedy decoding of random weights collapses onto a few experts). The context is
//! reset, outside the timing, every 96 steps.
//!
//! Quick by design (a couple of minutes here); `BMOE_BENCH_QUICK=0` measures longer.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bmoe::engine::dense::DenseWeights;
use bmoe::engine::engine::{Engine, MoeStream, Overlap, StreamOptions};
use bmoe::engine::io::{BackendKind, EngineOptions};
use bmoe::engine::model::ModelIndex;
use bmoe::engine::stream::budget::CacheSize;
use bmoe::engine::synth::{self, Quant};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const PROMPT: [i32; 8] = [11, 4000, 73, 900, 15, 2024, 301, 7];
const STEPS_PER_CONTEXT: u32 = 96;

fn model() -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-decode-small-q4_k_m.gguf");
    if !path.exists() {
        let o = synth::Options::new("qwen3moe", "small", Quant::Q4KM, 5).expect("preset");
        let tmp = path.with_extension("partial");
        synth::write(&o, &tmp, &mut |_, _| {}).expect("synthesize the bench model");
        std::fs::rename(&tmp, &path).expect("rename");
    }
    path
}

/// The next token of a fixed xorshift stream over the vocabulary.
struct Tokens(u64, i32);

impl Tokens {
    fn next(&mut self) -> i32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % self.1 as u64) as i32
    }
}

/// Time `iters` decode steps of `d`.
fn steps(d: &mut Engine, toks: &mut Tokens, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        if d.n_past() == 0 || d.n_past() >= PROMPT.len() as u32 + STEPS_PER_CONTEXT {
            d.reset();
            d.eval(&PROMPT).expect("prefill");
        }
        let t = toks.next();
        let t0 = Instant::now();
        let l = d.eval(&[t]).expect("decode");
        total += t0.elapsed();
        std::hint::black_box(l);
    }
    total
}

struct Knobs {
    cache_quarters: u64,
    lanes: usize,
    overlap: bool,
    mmap_dense: bool,
}

const BASE: Knobs = Knobs { cache_quarters: 1, lanes: 4, overlap: false, mmap_dense: false };

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn streamer(path: &Path, index: &ModelIndex, k: &Knobs) -> Engine {
    let io = EngineOptions { backend: BackendKind::Uring, lanes: k.lanes, register: true, direct: true };
    let stream = StreamOptions {
        cache: CacheSize::Bytes(index.expert_bytes() * k.cache_quarters / 4),
        force: true,
        io,
        overlap: if k.overlap { Overlap::Full } else { Overlap::Off },
        ..StreamOptions::default()
    };
    let dense = if k.mmap_dense { DenseWeights::Mmap } else { DenseWeights::Anon };
    Engine::builder(path)
        .moe_stream(MoeStream::On)
        .stream(stream)
        .dense(dense)
        .context(256)
        .threads(threads())
        .open()
        .expect("streamer")
}

fn sweep(c: &mut Criterion) {
    let path = model();
    let index = ModelIndex::open(&path).expect("index");
    let quick = std::env::var("BMOE_BENCH_QUICK").map_or(true, |v| v != "0");
    let mut g = c.benchmark_group("decode_step");
    g.sample_size(10).warm_up_time(Duration::from_millis(if quick { 300 } else { 2000 }));
    g.measurement_time(Duration::from_secs(if quick { 3 } else { 15 }));
    let vocab = 32000;

    let mut d =
        Engine::builder(&path).moe_stream(MoeStream::Off).context(256).threads(threads()).open().expect("resident");
    let mut toks = Tokens(0x2545_F491_4F6C_DD1D, vocab);
    g.bench_function("resident", |b| b.iter_custom(|n| steps(&mut d, &mut toks, n)));
    drop(d);

    let cells: Vec<(String, Knobs)> = vec![
        ("base cache=1/4 lanes=4".into(), BASE),
        ("cache=off".into(), Knobs { cache_quarters: 0, ..BASE }),
        ("cache=1/2".into(), Knobs { cache_quarters: 2, ..BASE }),
        ("cache=all".into(), Knobs { cache_quarters: 4, ..BASE }),
        ("lanes=1".into(), Knobs { lanes: 1, ..BASE }),
        ("lanes=8".into(), Knobs { lanes: 8, ..BASE }),
        ("overlap".into(), Knobs { overlap: true, ..BASE }),
        ("dense=mmap".into(), Knobs { mmap_dense: true, ..BASE }),
    ];
    for (name, k) in &cells {
        let mut d = streamer(&path, &index, k);
        let mut toks = Tokens(0x2545_F491_4F6C_DD1D, vocab);
        g.bench_with_input(BenchmarkId::new("stream", name), k, |b, _| b.iter_custom(|n| steps(&mut d, &mut toks, n)));
    }
    g.finish();
}

criterion_group!(benches, sweep);
criterion_main!(benches);
