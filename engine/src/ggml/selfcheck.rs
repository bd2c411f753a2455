//! A small end-to-end check of the linked ggml: a quantised matmul plus a bias
//! add, computed on the persistent thread pool, against plain Rust over the
//! dequantised weights. `bmoe selfcheck` and the smoke test both use it.

use super::{dequantize, quantize, Context, GgmlType, Result, ThreadPool};

/// What [`self_check`] computed.
#[derive(Clone, Debug)]
pub struct SelfCheck {
    /// Weight type of the matmul.
    pub ty: GgmlType,
    /// Rows (outputs) × columns (inputs) of the weight.
    pub rows: usize,
    /// Columns of the weight (the dot-product length).
    pub cols: usize,
    /// ggml's output, `W·x + b`.
    pub ggml: Vec<f32>,
    /// The plain-Rust reference from the dequantised weights, in f64.
    pub reference: Vec<f64>,
    /// Per-output tolerance: ggml quantises the activation vector to 8 bits
    /// inside the kernel, so each output may differ by about 1/127 of Σ|w·x|.
    pub tolerance: Vec<f64>,
}

impl SelfCheck {
    /// Largest `|ggml − reference|`.
    pub fn max_abs_err(&self) -> f64 {
        self.ggml.iter().zip(&self.reference).map(|(&g, &r)| (g as f64 - r).abs()).fold(0.0, f64::max)
    }

    /// Whether every output is within its tolerance of the reference.
    pub fn passed(&self) -> bool {
        self.ggml.iter().zip(&self.reference).zip(&self.tolerance).all(|((&g, &r), &t)| (g as f64 - r).abs() <= t)
    }
}

/// Deterministic pseudo-random values in [-1, 1) (xorshift), so the check needs no RNG crate.
pub(crate) fn pseudo_random(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Compute `y = W·x + b` with `W` (`rows × cols`) quantised to `ty`, on `pool`.
///
/// # Errors
/// Any ggml-layer error (a `cols` that is not a multiple of `ty`'s block size, ...).
pub fn self_check(pool: &mut ThreadPool, ty: GgmlType, rows: usize, cols: usize, seed: u64) -> Result<SelfCheck> {
    let w = pseudo_random(seed, rows * cols);
    let x = pseudo_random(seed ^ 0xA5A5, cols);
    let b = pseudo_random(seed ^ 0x5A5A, rows);
    let wq = quantize(ty, &w, rows, cols)?;
    let wd = dequantize(ty, &wq, rows * cols)?;

    let ctx = Context::new(wq.len() + 4 * (cols + 2 * rows) + (1 << 20))?;
    let tw = ctx.new_tensor(ty, &[cols as i64, rows as i64])?;
    let tx = ctx.new_tensor(GgmlType::F32, &[cols as i64, 1])?;
    let tb = ctx.new_tensor(GgmlType::F32, &[rows as i64, 1])?;
    tw.write_bytes(&wq)?;
    tx.write_f32(&x)?;
    tb.write_f32(&b)?;
    let y = ctx.add(ctx.mul_mat(tw, tx)?, tb)?;
    let mut graph = ctx.new_graph(16)?;
    graph.build_forward_expand(y)?;
    pool.compute(&graph)?;
    let ggml = y.read_f32()?;

    let mut reference = Vec::with_capacity(rows);
    let mut tolerance = Vec::with_capacity(rows);
    for r in 0..rows {
        let row = &wd[r * cols..(r + 1) * cols];
        let dot: f64 = row.iter().zip(&x).map(|(&a, &v)| a as f64 * v as f64).sum();
        let mag: f64 = row.iter().zip(&x).map(|(&a, &v)| (a as f64 * v as f64).abs()).sum();
        reference.push(dot + b[r] as f64);
        tolerance.push(mag / 127.0 + 1e-5);
    }
    Ok(SelfCheck { ty, rows, cols, ggml, reference, tolerance })
}
