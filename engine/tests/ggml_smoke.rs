//! Smoke test of the safe ggml layer: a quantised matmul plus an add on the
//! persistent thread pool, asserted against plain Rust over the dequantised
//! weights.
#![cfg(feature = "ffi")]

use bmoe_engine::ggml::{self, Context, GgmlType, ThreadPool};

#[test]
fn quantized_matmul_plus_add_matches_dequantized_reference() {
    let mut pool = ThreadPool::new(2).unwrap();
    for ty in [GgmlType::Q8_0, GgmlType::Q4_K] {
        for seed in 1..4 {
            let check = ggml::self_check(&mut pool, ty, 24, 512, seed).unwrap();
            assert_eq!(check.ggml.len(), 24);
            assert!(
                check.passed(),
                "{ty} seed {seed}: ggml {:?} vs reference {:?} (tolerance {:?})",
                check.ggml,
                check.reference,
                check.tolerance
            );
            // The tolerance is tight enough to catch a wrong answer: the same
            // outputs against the reference shifted by one row must fail it.
            let mut shifted = check.clone();
            shifted.reference.rotate_left(1);
            assert!(!shifted.passed(), "{ty}: a row-shifted reference passed the tolerance");
        }
    }
}

#[test]
fn thread_pool_is_reusable_and_deterministic() {
    let mut pool = ThreadPool::new(2).unwrap();
    let a = ggml::self_check(&mut pool, GgmlType::Q4_K, 16, 256, 9).unwrap();
    let b = ggml::self_check(&mut pool, GgmlType::Q4_K, 16, 256, 9).unwrap();
    assert_eq!(a.ggml, b.ggml, "same graph, same pool, different bits");
    let mut one = ThreadPool::new(1).unwrap();
    let c = ggml::self_check(&mut one, GgmlType::Q4_K, 16, 256, 9).unwrap();
    assert_eq!(a.ggml, c.ggml, "1 vs 2 threads differ for a single-row activation");
}

#[test]
fn f32_matmul_is_exact_on_small_integers() {
    // Integers small enough that every product and sum is exact in f32.
    let ctx = Context::new(1 << 20).unwrap();
    let w = ctx.new_tensor(GgmlType::F32, &[3, 2]).unwrap();
    let x = ctx.new_tensor(GgmlType::F32, &[3, 1]).unwrap();
    let b = ctx.new_tensor(GgmlType::F32, &[2, 1]).unwrap();
    w.write_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    x.write_f32(&[1.0, 0.0, -1.0]).unwrap();
    b.write_f32(&[10.0, 20.0]).unwrap();
    let y = ctx.add(ctx.mul_mat(w, x).unwrap(), b).unwrap();
    assert_eq!(y.ne(), [2, 1, 1, 1]);
    let mut g = ctx.new_graph(16).unwrap();
    g.build_forward_expand(y).unwrap();
    ThreadPool::new(2).unwrap().compute(&g).unwrap();
    assert_eq!(y.read_f32().unwrap(), vec![1.0 - 3.0 + 10.0, 4.0 - 6.0 + 20.0]);
}
