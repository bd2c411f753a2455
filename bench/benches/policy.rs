//! Cache CPU cost per access: replays a real routing trace (../shared/traces, when present)
//! or a synthetic Zipf-ish stream through the expert cache under each online policy.
//! Throughput is reported per access; the target is ≤ 1 µs.

use std::path::PathBuf;

use bmoe::engine::cache::replay::{replay, AccessStream, PinScope};
use bmoe::engine::cache::trace::RouteTrace;
use bmoe::engine::cache::CachePolicy;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn stream() -> AccessStream {
    let path = std::env::var_os("BMOE_ROUTE_TRACE").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/qwen3-30b-a3b.route.csv")
    });
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(_) => {
            eprintln!("policy bench: {} not found, using a synthetic stream", path.display());
            synthetic()
        }
    };
    let t = RouteTrace::parse(text.as_bytes(), &path.display().to_string()).expect("valid route trace");
    AccessStream::from_trace(&t, None).expect("valid geometry")
}

/// 48 layers x 128 experts, top-6, 128 tokens, skewed by a cheap LCG.
fn synthetic() -> String {
    let mut s = String::from("# route_trace v1\n# model=synthetic arch=test n_layer=48 n_expert=128 n_expert_used=6\n");
    for l in 0..48 {
        s += &format!("# layer={l} expert_bytes=3000000 dense_bytes=0\n");
    }
    s += "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n";
    let mut x: u64 = 42;
    for t in 0..128 {
        for l in 0..48 {
            let mut used = Vec::new();
            while used.len() < 6 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (x >> 33) as f64 / (1u64 << 31) as f64;
                let e = ((u * u * 128.0) as u32).min(127);
                if !used.contains(&e) {
                    used.push(e);
                }
            }
            for (r, e) in used.iter().enumerate() {
                s += &format!("0,1,{t},{l},{r},{e},0.1,0,0\n");
            }
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let s = stream();
    let mut g = c.benchmark_group("policy");
    g.throughput(Throughput::Elements(s.len() as u64));
    g.sample_size(10);
    for p in ["lru", "lfu", "per-layer", "decay", "hd"] {
        let policy: CachePolicy = p.parse().expect("known policy");
        g.bench_function(format!("{p}/2000MiB"), |b| b.iter(|| replay(&s, 2000 << 20, policy, PinScope::Layer)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
