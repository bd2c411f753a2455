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
        Ok(Self { source: source.into(), n_layer, n_expert: h.n_expert, k, steps })
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
