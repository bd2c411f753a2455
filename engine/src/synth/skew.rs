//! `--route-skew S`: planting uneven expert popularity in a random model.
//!
//! A random router spreads tokens evenly over experts, which no real model does. To plant a
//! Zipf-like popularity we give the hidden state a constant direction and the router a
//! per-expert bias along it:
//!
//! * every token embedding gets a mean `±ALPHA` per element, the sign fixed per 256-element
//!   group (so a quantised block can carry it): the residual stream then always has a
//!   component along the unit vector `u` (u_i = ±1/√n), and after RMS-norm `x·u ≈ c`, with
//!   `c = ALPHA/√(σ_h² + ALPHA²)·√n` for residual noise σ_h² ≈ 2;
//! * router row `e` of layer `l` gets `b_e/c · u` added, so its logit gains `b_e`, where
//!   `b_e = −S·τ·ln(1 + rank_l(e))`, `rank_l` a seeded permutation per layer (hot experts
//!   differ between layers) and `τ = √6/π` the scale of a Gumbel variable with unit variance.
//!
//! If the rest of the logit were Gumbel noise, top-1 popularity would be exactly
//! `P(e) ∝ (1 + rank)^−S`, a Zipf law of exponent S. The noise here is a sum of many
//! products (close to Gaussian) and top-k is not top-1, so the law is approximate:
//! [`measure`] routes random hidden vectors of the modelled distribution through the real
//! router rows and reports the resulting popularity and the hit rate of an ideal static cache.
//! What it does not measure is the routing of hidden states a decode actually produces deep
//! in the network, where attention and expert outputs move the state away from the model.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Shape;

/// Per-element magnitude of the planted mean in the token embeddings.
pub const ALPHA: f32 = 2.0;
/// Modelled variance of the rest of the residual stream (embedding noise + layer outputs).
pub const RESIDUAL_VAR: f32 = 2.0;
/// Scale of a unit-variance Gumbel variable, √6/π.
pub const TAU: f32 = 0.779_696_8;

const STREAM_ROUTER: u64 = 1 << 40;
const STREAM_DIRECTION: u64 = 1 << 41;
const STREAM_MEASURE: u64 = 1 << 42;

/// The sign of the planted direction over element `i` (constant per 256-element group).
pub fn direction_sign(seed: u64, n_embd: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM_DIRECTION);
    let groups = n_embd.div_ceil(256) as usize;
    let signs: Vec<f32> = (0..groups).map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 }).collect();
    (0..n_embd as usize).map(|i| signs[i / 256]).collect()
}

/// The seeded popularity rank of each expert of `layer` (0 = hottest).
pub fn ranks(seed: u64, layer: u32, n_expert: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM_ROUTER + 2 * u64::from(layer) + 1);
    let mut r: Vec<u64> = (0..n_expert).collect();
    for i in (1..r.len()).rev() {
        r.swap(i, rng.random_range(0..=i));
    }
    r
}

/// The router of `layer`, `n_expert` rows of `n_embd` f32 (row e = expert e's logit weights):
/// noise of s.d. 1/√n_embd (unit-variance logits for a unit-RMS input) plus the planted bias.
pub fn router_weights(s: &Shape, seed: u64, skew: f32, layer: u32) -> Vec<f32> {
    let n = s.n_embd as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM_ROUTER + 2 * u64::from(layer));
    let a = 3f32.sqrt() / (n as f32).sqrt();
    let mut w: Vec<f32> = (0..n * s.n_expert as usize).map(|_| rng.random_range(-a..=a)).collect();
    if skew > 0.0 {
        let sign = direction_sign(seed, s.n_embd);
        let c = ALPHA / (RESIDUAL_VAR + ALPHA * ALPHA).sqrt() * (n as f32).sqrt();
        for (e, rank) in ranks(seed, layer, s.n_expert).into_iter().enumerate() {
            let b = -skew * TAU * (1.0 + rank as f32).ln();
            // u_i = sign_i/√n, so adding (b/c)·u to the row adds b·(x·u)/c ≈ b to the logit.
            for (i, wi) in w[e * n..(e + 1) * n].iter_mut().enumerate() {
                *wi += b / c * sign[i] / (n as f32).sqrt();
            }
        }
    }
    w
}

/// Routing popularity measured on one layer's router.
#[derive(Clone, Debug)]
pub struct Popularity {
    /// Selections of each expert, indexed by the expert's planted rank (0 = hottest planted).
    pub by_rank: Vec<u64>,
    /// Selections sorted hottest first (measured order).
    pub sorted: Vec<u64>,
    pub k: u32,
    pub samples: u32,
}

impl Popularity {
    /// Share of all selections that an ideal static cache holding the hottest
    /// `fraction` of the experts would hit.
    pub fn hit_rate(&self, fraction: f64) -> f64 {
        let n = ((self.sorted.len() as f64 * fraction).round() as usize).min(self.sorted.len());
        let total: u64 = self.sorted.iter().sum();
        self.sorted[..n].iter().sum::<u64>() as f64 / total.max(1) as f64
    }
}

/// Routes `samples` random hidden vectors of the modelled distribution (noise of variance
/// [`RESIDUAL_VAR`] plus the planted mean when `skew > 0`, RMS-normalised) through layer
/// `layer`'s router at top-`k` and counts the selections.
pub fn measure(s: &Shape, seed: u64, skew: f32, layer: u32, samples: u32) -> Popularity {
    let n = s.n_embd as usize;
    let n_expert = s.n_expert as usize;
    let w = router_weights(s, seed, skew, layer);
    let sign = direction_sign(seed, s.n_embd);
    let rank = ranks(seed, layer, s.n_expert);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM_MEASURE + u64::from(layer));
    let a = (3.0 * RESIDUAL_VAR).sqrt();
    let mut by_rank = vec![0u64; n_expert];
    let mut x = vec![0f32; n];
    let mut logits = vec![(0f32, 0usize); n_expert];
    let k = (s.n_expert_used as usize).min(n_expert);
    for _ in 0..samples {
        for (i, xi) in x.iter_mut().enumerate() {
            *xi = rng.random_range(-a..=a) + if skew > 0.0 { ALPHA * sign[i] } else { 0.0 };
        }
        let rms = (x.iter().map(|v| v * v).sum::<f32>() / n as f32).sqrt();
        for (e, l) in logits.iter_mut().enumerate() {
            let dot: f32 = w[e * n..(e + 1) * n].iter().zip(&x).map(|(a, b)| a * b).sum();
            *l = (dot / rms, e);
        }
        logits.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
        for &(_, e) in &logits[..k] {
            by_rank[rank[e] as usize] += 1;
        }
    }
    let mut sorted = by_rank.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    Popularity { by_rank, sorted, k: k as u32, samples }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        let mut s = super::super::preset("tiny").unwrap();
        s.n_expert = 64;
        s.n_expert_used = 4;
        s
    }

    #[test]
    fn no_skew_is_near_uniform_and_skew_concentrates() {
        let s = shape();
        let flat = measure(&s, 1, 0.0, 0, 4000);
        let skewed = measure(&s, 1, 1.2, 0, 4000);
        // 10 % of the experts: a uniform router gives ~10 % hits (sampling noise aside).
        assert!(flat.hit_rate(0.1) < 0.2, "flat top-10% share {}", flat.hit_rate(0.1));
        assert!(skewed.hit_rate(0.1) > 0.35, "skewed top-10% share {}", skewed.hit_rate(0.1));
        // The planted ranks are the measured order, roughly: rank 0 beats rank 32.
        assert!(skewed.by_rank[0] > 5 * skewed.by_rank[32].max(1));
    }
}
