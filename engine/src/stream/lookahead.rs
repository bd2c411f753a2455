//! Look-ahead's bookkeeping (`--overlap`): the last prediction of each layer's experts, how
//! each layer's predictions and speculative reads scored, and the rule that turns speculative
//! reads off where they do not pay. The reads themselves (slots, tickets) belong to the
//! streamer; this module decides and counts. A prefill's read-ahead (the next layer's experts
//! its micro-batch's predictions name) reads under the same rule and counts its speculative
//! entries here too; only decode's predictions are scored for accuracy.
//!
//! The rule judges a read by the step it was for: a layer's speculative reads stay on while at
//! least a quarter of the experts its decode steps route were predicted for that step, judged
//! once [`LOOKAHEAD_JUDGE_LAYER`] routed experts were scored (two or three steps); a layer whose
//! reads were never scored (a prefill's read-ahead only) is judged by the share of its
//! speculative entries then used, once it has read [`LOOKAHEAD_JUDGE_LAYER`]. An entry used some
//! later step counts as prefetch-served in the telemetry, but never keeps the reads on: under a
//! replayed trace, whose routing the model's router does not predict, entries read at chance
//! and kept in the cache are routed by chance later, and once kept look-ahead on for tens of GB
//! of reads. The whole look-ahead (the predictions too) goes off when every predicted layer is
//! off, or when the model as a whole has scored [`LOOKAHEAD_JUDGE_MODEL`] routed experts at
//! under a quarter predicted (or, unscored, read as many entries at under a quarter used).

/// See the module docs.
pub const LOOKAHEAD_JUDGE_LAYER: u64 = 16;
/// See the module docs.
pub const LOOKAHEAD_JUDGE_MODEL: u64 = 64;

/// One layer's look-ahead figures (decode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerLookahead {
    /// Real routed experts of this layer's steps that had a prediction, and how many were
    /// predicted.
    pub real_with_prediction: u64,
    pub predicted_real: u64,
    /// Entries read speculatively for this layer, and how many a real routing then used.
    pub spec_entries: u64,
    pub spec_useful: u64,
    /// This layer's speculative reads switched off by the rule (its predictions are still
    /// scored).
    pub off: bool,
}

impl LayerLookahead {
    /// Share of the real routed experts that were predicted, %.
    pub fn accuracy_pct(&self) -> Option<f64> {
        (self.real_with_prediction > 0).then(|| 100.0 * self.predicted_real as f64 / self.real_with_prediction as f64)
    }
}

/// Look-ahead's state across a streamer's life.
#[derive(Clone, Debug, Default)]
pub struct Lookahead {
    /// On: asked for and not switched off by the rule.
    on: bool,
    /// Why the rule switched it off, if it did.
    off_reason: Option<String>,
    /// The last prediction per MoE layer (decode), until that layer's real routing scores it.
    predicted: Vec<Vec<u32>>,
    layers: Vec<LayerLookahead>,
}

impl Lookahead {
    /// Look-ahead over `n_layer` MoE layers, on if `asked`.
    pub fn new(asked: bool, n_layer: usize) -> Self {
        Self {
            on: asked,
            off_reason: None,
            predicted: vec![Vec::new(); n_layer],
            layers: vec![Default::default(); n_layer],
        }
    }

    /// Whether predictions are wanted.
    pub fn on(&self) -> bool {
        self.on
    }

    /// Why the rule switched look-ahead off, if it did.
    pub fn off_reason(&self) -> Option<&str> {
        self.off_reason.as_deref()
    }

    /// Per MoE layer figures.
    pub fn layers(&self) -> &[LayerLookahead] {
        &self.layers
    }

    /// Sums over the layers.
    pub fn totals(&self) -> LayerLookahead {
        let mut t = LayerLookahead::default();
        for l in &self.layers {
            t.real_with_prediction += l.real_with_prediction;
            t.predicted_real += l.predicted_real;
            t.spec_entries += l.spec_entries;
            t.spec_useful += l.spec_useful;
        }
        t
    }

    /// A prediction of `layer`'s experts arrived; whether its speculative reads may be issued.
    pub fn predict(&mut self, layer: u32, experts: &[u32]) -> bool {
        self.predicted[layer as usize] = experts.to_vec();
        !self.layers[layer as usize].off
    }

    /// Whether `layer`'s speculative reads are on (a prefill's read-ahead asks this: its
    /// predictions are not scored).
    pub fn reads_on(&self, layer: u32) -> bool {
        self.on && !self.layers[layer as usize].off
    }

    /// `layer`'s real routing: scores the prediction made for it, if any.
    pub fn score(&mut self, layer: u32, experts: &[u32]) {
        let pred = std::mem::take(&mut self.predicted[layer as usize]);
        if pred.is_empty() {
            return;
        }
        let la = &mut self.layers[layer as usize];
        la.real_with_prediction += experts.len() as u64;
        la.predicted_real += experts.iter().filter(|e| pred.contains(e)).count() as u64;
    }

    /// `n` entries of `layer` were read speculatively.
    pub fn read_ahead(&mut self, layer: u32, n: u64) {
        self.layers[layer as usize].spec_entries += n;
    }

    /// A speculative entry of `layer` was then routed.
    pub fn used(&mut self, layer: u32) {
        self.layers[layer as usize].spec_useful += 1;
    }

    /// The rule (see the module docs), applied between steps.
    pub fn judge(&mut self) {
        if !self.on {
            return;
        }
        for la in &mut self.layers {
            let scored = la.real_with_prediction >= LOOKAHEAD_JUDGE_LAYER;
            if !la.off
                && ((scored && la.predicted_real * 4 < la.real_with_prediction)
                    || (la.real_with_prediction == 0
                        && la.spec_entries >= LOOKAHEAD_JUDGE_LAYER
                        && la.spec_useful * 4 < la.spec_entries))
            {
                la.off = true;
            }
        }
        let st = self.totals();
        if st.real_with_prediction >= LOOKAHEAD_JUDGE_MODEL && st.predicted_real * 4 < st.real_with_prediction {
            self.on = false;
            self.off_reason = Some(format!(
                "{:.0} % of the routed experts predicted for their step, < 25 % after {} scored",
                100.0 * st.predicted_real as f64 / st.real_with_prediction as f64,
                st.real_with_prediction
            ));
        } else if st.real_with_prediction == 0
            && st.spec_entries >= LOOKAHEAD_JUDGE_MODEL
            && st.spec_useful * 4 < st.spec_entries
        {
            self.on = false;
            self.off_reason = Some(format!(
                "useful share {:.0} % < 25 % after {} speculative entries",
                100.0 * st.spec_useful as f64 / st.spec_entries as f64,
                st.spec_entries
            ));
        } else if self.layers.iter().any(|la| la.off)
            && self.layers.iter().filter(|la| la.spec_entries > 0 || la.real_with_prediction > 0).all(|la| la.off)
        {
            self.on = false;
            self.off_reason = Some(format!(
                "every layer under a quarter: {:.0} % of the routed experts predicted for their step ({} scored), \
                 {:.0} % of {} speculative entries used",
                100.0 * st.predicted_real as f64 / st.real_with_prediction.max(1) as f64,
                st.real_with_prediction,
                100.0 * st.spec_useful as f64 / st.spec_entries.max(1) as f64,
                st.spec_entries,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_goes_off_under_a_quarter_useful_and_the_model_when_all_do() {
        // Unscored (a prefill's read-ahead): judged by the entries used.
        let mut la = Lookahead::new(true, 2);
        la.read_ahead(0, LOOKAHEAD_JUDGE_LAYER);
        for _ in 0..3 {
            la.used(0);
        }
        la.judge();
        assert!(la.layers()[0].off && !la.on(), "3 of 16 useful, and the only layer that read");
        assert!(la.off_reason().unwrap().starts_with("every layer under a quarter"), "{:?}", la.off_reason());
        // A quarter useful keeps it on.
        let mut la = Lookahead::new(true, 1);
        la.predict(0, &[1]);
        la.score(0, &[1]);
        la.read_ahead(0, LOOKAHEAD_JUDGE_LAYER);
        for _ in 0..4 {
            la.used(0);
        }
        la.judge();
        assert!(la.on() && !la.layers()[0].off);
    }

    /// Regression: a prefill's read-ahead (its predictions unscored) with one layer under a
    /// quarter useful and every other one well used turned the whole look-ahead off ("every
    /// layer's useful share < 25 %" over the layers with scored predictions: none).
    #[test]
    fn one_useless_layer_of_a_prefill_leaves_the_others_on() {
        let mut la = Lookahead::new(true, 3);
        la.read_ahead(0, LOOKAHEAD_JUDGE_LAYER);
        for l in 1..3 {
            la.read_ahead(l, LOOKAHEAD_JUDGE_LAYER);
            for _ in 0..LOOKAHEAD_JUDGE_LAYER {
                la.used(l);
            }
        }
        la.judge();
        assert!(la.layers()[0].off && !la.layers()[1].off && !la.layers()[2].off);
        assert!(la.on(), "{:?}", la.off_reason());
    }

    /// Regression: under a replayed trace the predictions are at chance (4.7 %), but entries read
    /// ahead stay cached and are routed by chance some later step; counted as useful, they kept
    /// look-ahead on for 37-40 GB of reads. Judged by the step they were for, a layer goes off
    /// once 16 routed experts were scored: at k = 8, after two steps.
    #[test]
    fn reads_used_only_later_do_not_keep_look_ahead_on() {
        let mut la = Lookahead::new(true, 2);
        for step in 0..2u32 {
            for l in 0..2 {
                let predicted: Vec<u32> = (0..8).map(|e| e + 8 * step).collect();
                assert!(la.predict(l, &predicted), "step {step}: still on");
                la.read_ahead(l, 8);
                // The step routes other experts; a later step happens to route every entry.
                la.score(l, &(100..108).collect::<Vec<u32>>());
                for _ in 0..8 {
                    la.used(l);
                }
            }
            la.judge();
        }
        assert!(la.layers().iter().all(|l| l.off) && !la.on(), "{:?}", la.layers());
        // Predicted for their step, the same reads keep it on.
        let mut la = Lookahead::new(true, 1);
        for _ in 0..4 {
            la.predict(0, &[1, 2, 3, 4]);
            la.read_ahead(0, 4);
            la.score(0, &[1, 2, 3, 9]);
            la.judge();
        }
        assert!(la.on() && !la.layers()[0].off);
    }

    #[test]
    fn the_model_goes_off_after_enough_useless_entries() {
        // Scored: 8 routed experts per layer, none predicted, no layer judged yet on its own.
        let mut la = Lookahead::new(true, 8);
        for l in 0..8 {
            la.predict(l, &[0]);
            la.score(l, &(1..9).collect::<Vec<u32>>());
            la.read_ahead(l, 1);
        }
        la.judge();
        assert!(!la.on());
        assert!(la.off_reason().unwrap().starts_with("0 % of the routed experts predicted"), "{:?}", la.off_reason());
        // Unscored: by the entries used.
        let mut la = Lookahead::new(true, 8);
        for l in 0..8 {
            la.read_ahead(l, LOOKAHEAD_JUDGE_MODEL / 8);
        }
        la.judge();
        assert!(!la.on());
        assert!(la.off_reason().unwrap().starts_with("useful share 0 %"), "{:?}", la.off_reason());
    }
}
