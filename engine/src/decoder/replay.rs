//! Routing replay: decode steps whose experts (and weights) come from a recorded
//! `route_trace v1` instead of the router.
//!
//! A benchmark tool, lossy by construction: the bytes read, the cache's hits and the token
//! time become those of the traced model on the traced conversation, on a model of the same
//! shape; the text is meaningless. Prefill keeps the model's own router (a trace holds only
//! the union of a prompt's experts per layer, not each token's).

use crate::cache::trace::RouteTrace;
use crate::cache::Phase;
use crate::error::{Error, Result};

/// Each decode step's routing, taken from a trace.
#[derive(Clone, Debug)]
pub struct RouteReplay {
    /// Where the routing came from (for labels).
    pub source: String,
    n_layer: u32,
    n_expert: u32,
    k: usize,
    /// `[step][layer][rank]` → (expert, weight).
    steps: Vec<Vec<Vec<(u32, f32)>>>,
    /// Look-ahead's predictions drawn from the trace at this accuracy (research knob).
    prediction: Option<f64>,
}

impl RouteReplay {
    /// The decode steps of `trace`, in file order (turn by turn).
    ///
    /// # Errors
    /// [`Error::Replay`] if the trace has no decode step, or a step does not give every layer
    /// exactly `n_expert_used` distinct experts in rank order.
    pub fn from_trace(trace: &RouteTrace, source: &str) -> Result<Self> {
        let h = &trace.header;
        let (n_layer, k) = (h.n_layer(), h.n_expert_used as usize);
        let bad = |why: String| Error::Replay(format!("{source}: {why}"));
        let mut steps: Vec<Vec<Vec<(u32, f32)>>> = Vec::new();
        let mut at: Option<(u32, u32)> = None;
        for r in trace.rows.iter().filter(|r| r.phase == Phase::Decode) {
            if at != Some((r.turn, r.step)) {
                at = Some((r.turn, r.step));
                steps.push(vec![Vec::with_capacity(k); n_layer as usize]);
            }
            let step = steps.last_mut().expect("pushed");
            let layer = step
                .get_mut(r.layer as usize)
                .ok_or_else(|| bad(format!("layer {} of {n_layer} in turn {} step {}", r.layer, r.turn, r.step)))?;
            if r.slot as usize != layer.len() || r.expert >= h.n_expert || layer.iter().any(|e| e.0 == r.expert) {
                return Err(bad(format!(
                    "turn {} step {} layer {}: rank {} expert {} out of order, repeated or out of range",
                    r.turn, r.step, r.layer, r.slot, r.expert
                )));
            }
            layer.push((r.expert, r.weight));
        }
        if steps.is_empty() {
            return Err(bad("no decode steps".into()));
        }
        for (i, s) in steps.iter().enumerate() {
            if let Some((l, got)) = s.iter().enumerate().find(|(_, l)| l.len() != k) {
                return Err(bad(format!("decode step {i} layer {l}: {} experts, the header says top-{k}", got.len())));
            }
        }
        Ok(Self { source: source.into(), n_layer, n_expert: h.n_expert, k, steps, prediction: None })
    }

    /// Decode steps in the trace; a longer generation starts over at its first step.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Never true (a replay has at least one step); for symmetry with [`Self::len`].
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The trace's (layers, experts, top-k).
    pub fn shape(&self) -> (u32, u32, usize) {
        (self.n_layer, self.n_expert, self.k)
    }

    /// Refuse a model whose shape differs from the trace's.
    ///
    /// # Errors
    /// [`Error::Replay`] naming both shapes.
    pub fn check(&self, n_layer: u32, n_expert: u32, k: usize) -> Result<()> {
        if (n_layer, n_expert, k) != self.shape() {
            return Err(Error::Replay(format!(
                "{}: the trace has {} layers × {} experts top-{}, the model runs {n_layer} × {n_expert} top-{k}{}",
                self.source,
                self.n_layer,
                self.n_expert,
                self.k,
                if (n_layer, n_expert) == (self.n_layer, self.n_expert) {
                    format!(" (try --n-expert-used {})", self.k)
                } else {
                    String::new()
                }
            )));
        }
        Ok(())
    }

    /// Decode step `step`'s routing of `layer`, in rank order (steps wrap around).
    pub fn route(&self, step: u32, layer: usize) -> &[(u32, f32)] {
        &self.steps[step as usize % self.steps.len()][layer]
    }

    /// A research knob for benchmarks: look-ahead's prediction of a decode step's next layer
    /// is the trace's own routing of it at `accuracy` (0 to 1), each expert the true one with
    /// that probability and otherwise another one drawn at random, so that look-ahead is
    /// measured at the accuracy real models give (the random-weight models' next router is
    /// almost perfectly predictable from this layer's hidden state; the model's router means
    /// nothing under a replay).
    ///
    /// # Errors
    /// [`Error::Replay`] for an accuracy outside 0 to 1.
    pub fn with_prediction(mut self, accuracy: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&accuracy) {
            return Err(Error::Replay(format!("prediction accuracy {accuracy}: between 0 and 1")));
        }
        self.prediction = Some(accuracy);
        Ok(self)
    }

    /// The accuracy look-ahead's predictions are drawn at ([`Self::with_prediction`]).
    pub fn prediction(&self) -> Option<f64> {
        self.prediction
    }

    /// Look-ahead's prediction of decode step `step`'s routing of `layer` under
    /// [`Self::with_prediction`] (None without it): the same for the same step and layer, in
    /// rank order, distinct.
    pub fn predict(&self, step: u32, layer: usize) -> Option<Vec<u32>> {
        let p = self.prediction?;
        let truth = self.route(step, layer);
        // splitmix64 over (step, layer, draw): deterministic, no state between calls.
        let mut x = (u64::from(step) << 32) ^ ((layer as u64) << 16) ^ 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut out: Vec<u32> = Vec::with_capacity(truth.len());
        for &(e, _) in truth {
            let keep = ((next() >> 11) as f64 / (1u64 << 53) as f64) < p;
            if keep && !out.contains(&e) {
                out.push(e);
                continue;
            }
            // Another expert: not the step's true set, not chosen already.
            if truth.len() + out.len() >= self.n_expert as usize {
                continue;
            }
            loop {
                let o = (next() % u64::from(self.n_expert)) as u32;
                if !truth.iter().any(|t| t.0 == o) && !out.contains(&o) {
                    out.push(o);
                    break;
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(body: &str) -> RouteTrace {
        let text = format!(
            "# route_trace v1\n# model=m arch=qwen3moe n_layer=2 n_expert=4 n_expert_used=2\n\
             # layer=0 expert_bytes=10 dense_bytes=1\n# layer=1 expert_bytes=10 dense_bytes=1\n\
             {}\n{body}",
            crate::cache::trace::CSV_HEADER
        );
        RouteTrace::parse(text.as_bytes(), "t").expect("a valid trace")
    }

    #[test]
    fn predictions_at_a_chosen_accuracy() {
        // A trace of 2 layers × 64 experts top-4 over 50 steps, each step's set drawn apart.
        let mut body = String::new();
        for step in 0..50u32 {
            for layer in 0..2u32 {
                for slot in 0..4u32 {
                    let e = (step * 7 + layer * 13 + slot * 16) % 64;
                    body.push_str(&format!("0,1,{step},{layer},{slot},{e},0.25,0,10\n"));
                }
            }
        }
        let text = format!(
            "# route_trace v1\n# model=m arch=qwen3moe n_layer=2 n_expert=64 n_expert_used=4\n\
             # layer=0 expert_bytes=10 dense_bytes=1\n# layer=1 expert_bytes=10 dense_bytes=1\n{}\n{body}",
            crate::cache::trace::CSV_HEADER
        );
        let t = RouteTrace::parse(text.as_bytes(), "t").unwrap();
        let r = RouteReplay::from_trace(&t, "t").unwrap();
        assert_eq!(r.predict(0, 0), None, "off unless asked");
        assert!(r.clone().with_prediction(1.5).is_err());
        for p in [0.0, 0.5, 0.7, 0.9, 1.0] {
            let r = r.clone().with_prediction(p).unwrap();
            let (mut right, mut all) = (0, 0);
            for step in 0..50 {
                for layer in 0..2 {
                    let pred = r.predict(step, layer).unwrap();
                    assert_eq!(pred, r.predict(step, layer).unwrap(), "deterministic");
                    let truth: Vec<u32> = r.route(step, layer).iter().map(|x| x.0).collect();
                    assert_eq!(pred.len(), 4);
                    let mut d = pred.clone();
                    d.sort_unstable();
                    d.dedup();
                    assert_eq!(d.len(), 4, "distinct");
                    right += pred.iter().filter(|e| truth.contains(e)).count();
                    all += 4;
                }
            }
            let acc = right as f64 / all as f64;
            assert!((acc - p).abs() < 0.08, "asked {p}, predicted {acc}");
        }
    }

    #[test]
    fn decode_steps_in_rank_order_wrapping() {
        let t = trace(
            "0,0,0,0,0,3,1.0,0,10\n\
             0,1,0,0,0,1,0.7,0,10\n0,1,0,0,1,2,0.3,0,10\n0,1,0,1,0,0,0.6,0,10\n0,1,0,1,1,3,0.4,0,10\n\
             0,1,1,0,0,2,0.5,0,10\n0,1,1,0,1,0,0.5,0,10\n0,1,1,1,0,3,0.9,0,10\n0,1,1,1,1,1,0.1,0,10\n",
        );
        let r = RouteReplay::from_trace(&t, "t").expect("replayable");
        assert_eq!(r.len(), 2);
        assert_eq!(r.route(0, 0), &[(1, 0.7), (2, 0.3)]);
        assert_eq!(r.route(1, 1), &[(3, 0.9), (1, 0.1)]);
        assert_eq!(r.route(2, 0), r.route(0, 0), "wraps");
        r.check(2, 4, 2).expect("same shape");
        let e = r.check(2, 4, 3).expect_err("k differs").to_string();
        assert!(e.contains("--n-expert-used 2"), "{e}");
        assert!(r.check(3, 4, 2).is_err());
    }

    #[test]
    fn refuses_incomplete_or_disordered_steps() {
        let short = trace("0,1,0,0,0,1,0.7,0,10\n0,1,0,0,1,2,0.3,0,10\n0,1,0,1,0,0,0.6,0,10\n");
        let e = RouteReplay::from_trace(&short, "t").expect_err("layer 1 has one expert").to_string();
        assert!(e.contains("step 0 layer 1"), "{e}");
        let dup = trace("0,1,0,0,0,1,0.7,0,10\n0,1,0,0,1,1,0.3,0,10\n");
        assert!(RouteReplay::from_trace(&dup, "t").is_err());
        let none = trace("0,0,0,0,0,3,1.0,0,10\n");
        assert!(RouteReplay::from_trace(&none, "t").expect_err("prefill only").to_string().contains("no decode"));
    }
}
