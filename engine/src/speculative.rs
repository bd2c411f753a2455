//! Speculative decoding on the native decoder: where drafts come from, the rule that decides
//! whether a draft is worth verifying, and what the drafting did. The loop that runs it is the
//! generation loop's ([`crate::session`]); the verify pass is the decoder's
//! ([`crate::decoder::Decoder::verify`]).
//!
//! A draft of up to N tokens after the token about to run is verified in one pass of 1 + N
//! positions. Each row is picked from in order with the caller's own `pick` (greedy or the
//! sampler, once per kept token, as plain decode calls it); the longest prefix of the draft
//! the picks agree with is kept, the rest leaves the KV cache. The verify pass computes every
//! row as a single step does (the decoder's exact pass), so the text is the plain decode's,
//! bit for bit, whatever is drafted and whatever the rule decides: drafting changes only how
//! many passes the text takes, and what they read. The pass reads the union of its rows'
//! routed experts: a draft is worth it only if the tokens it is expected to yield pay for that
//! union.
//!
//! The skip rule ([`SkipRule`]): the acceptance per drafted position is measured on every
//! draft, verified or not (a draft the rule skipped is compared with the tokens plain decode
//! then produces: a free measurement), the seconds of a plain step (t₁, over the last 4; while
//! verifying, one plain step is run after every 8 passes so that t₁ follows the cache as it
//! warms) and, per width, the extra seconds of a verify pass of L drafted rows over the current
//! t₁ (δ(L)) on the passes run.
//! A draft of length L is expected to yield E(L) = 1 + a + … + a^L tokens for 1 + δ(L)/t₁
//! plain steps' time; the rule verifies the prefix of the draft that maximises that ratio, or
//! none when no prefix beats 1.1 (`RULE_MARGIN`: a tenth over break-even). A width not
//! measured yet is costed from the nearest measured one, linearly in the rows (from a narrower
//! one that overstates: a union of experts grows slower than its rows, so the rule errs on
//! skipping). Until some δ is measured it verifies one drafted token (the cheapest pass that
//! measures one), and only once the skipped drafts have shown an acceptance that could pay it;
//! afterwards a draft it would skip is still verified now and then (after 64 skips, then 128,
//! … up to 1024), to follow δ as the cache's hit rate moves: at the
//! width that could pay best if its rows cost no more than the narrower widths measured (the
//! least a wider pass can cost), so a width that a linear guess wrote off gets measured.

use std::path::Path;

use crate::error::{Error, Result};

/// Where drafts come from.
#[derive(Clone, Debug, PartialEq)]
pub enum DraftSource {
    /// Prompt lookup (`--ngram`): the last `min_match` or more tokens of the context found
    /// earlier in it (the prompt and the text generated so far), the tokens that followed them.
    Ngram { min_match: u32 },
    /// Replay (`--draft-replay FILE`, for measurement): the draft for the generated token `i`
    /// on is the file's tokens `i..`, each replaced by a wrong one with probability `corrupt`.
    Replay { tokens: Vec<i32>, corrupt: f64, source: String },
}

impl DraftSource {
    /// How the mode line names it.
    pub fn describe(&self) -> String {
        match self {
            DraftSource::Ngram { min_match } => format!("ngram (a match of {min_match} tokens or more)"),
            DraftSource::Replay { tokens, corrupt, source } => {
                format!("replayed from {source} ({} tokens, each corrupted with probability {corrupt})", tokens.len())
            }
        }
    }
}

/// Speculative decoding's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecOptions {
    pub source: DraftSource,
    /// The most tokens drafted per pass (`--draft N`).
    pub n_draft: u32,
    /// Verify only the drafts (and the prefix of each) the [`SkipRule`] expects to pay.
    pub skip_rule: bool,
    /// Verify passes computed row by row as single steps (the plain decode's bits); otherwise
    /// as one batch, whose logits differ from single steps in the low bits on some weight types
    /// (the text is then "the argmax of the batched pass").
    pub exact: bool,
}

/// The longest draft [`SpecOptions::n_draft`] may ask for.
pub const MAX_DRAFT: u32 = 16;

/// The longest suffix prompt lookup tries to match (it tries the longest first).
const NGRAM_MAX: usize = 8;

/// What speculative decoding did in one generation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpecStats {
    /// Passes of one row (nothing verified), and why: the source had nothing, or the rule
    /// skipped its draft.
    pub plain_steps: u64,
    pub no_draft: u64,
    pub skipped: u64,
    /// Verify passes, the tokens they verified (drafted) and accepted, and the tokens they
    /// produced (the accepted ones and the one after).
    pub verify_passes: u64,
    pub drafted: u64,
    pub accepted: u64,
    pub verify_tokens: u64,
    /// Drafts the rule skipped, compared with what plain decode then produced: positions
    /// compared and agreed.
    pub shadow_drafted: u64,
    pub shadow_accepted: u64,
    /// Seconds and expert bytes read of the verify passes and of the plain steps.
    pub verify_s: f64,
    pub plain_s: f64,
    pub verify_bytes: u64,
    pub plain_bytes: u64,
}

impl SpecStats {
    /// Accepted drafted tokens, %, when any were verified.
    pub fn acceptance_pct(&self) -> Option<f64> {
        (self.drafted > 0).then(|| 100.0 * self.accepted as f64 / self.drafted as f64)
    }

    /// Tokens per verify pass.
    pub fn tokens_per_pass(&self) -> Option<f64> {
        (self.verify_passes > 0).then(|| self.verify_tokens as f64 / self.verify_passes as f64)
    }

    /// Expert MiB read per token the verify passes produced.
    pub fn verify_mib_per_token(&self) -> Option<f64> {
        (self.verify_tokens > 0).then(|| self.verify_bytes as f64 / MIB / self.verify_tokens as f64)
    }

    /// Expert MiB read per plain step.
    pub fn plain_mib_per_step(&self) -> Option<f64> {
        (self.plain_steps > 0).then(|| self.plain_bytes as f64 / MIB / self.plain_steps as f64)
    }
}

const MIB: f64 = (1u64 << 20) as f64;

/// A mean that forgets: the plain mean of the first `window` values, then each new value
/// weighing `1 / window`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ema {
    n: u64,
    mean: f64,
}

impl Ema {
    fn add(&mut self, x: f64, window: u64) {
        self.n += 1;
        self.mean += (x - self.mean) / self.n.min(window) as f64;
    }

    fn get(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }
}

/// The skip rule (see the module docs). Pure bookkeeping: the loop tells it what each pass
/// took and what each draft scored, and asks it how much of a draft to verify.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkipRule {
    /// Acceptance per drafted position (1 accepted, 0 the first rejected one).
    a: Ema,
    /// Seconds of a plain step (the last few: a cold cache's first steps are slower).
    t1: Ema,
    /// Seconds of a verify pass, by drafted rows (`[L - 1]`); δ(L) is this minus the current
    /// t₁, so a t₁ measured again moves every width's δ at once.
    pass_s: [Ema; MAX_DRAFT as usize],
    /// Verify passes since the last plain step: after [`RULE_REFRESH`] the rule runs a plain
    /// step, to measure t₁ again (it is only measured on plain steps).
    streak: u64,
    /// Drafts skipped since the last verify pass, and after how many the next one is verified
    /// anyway (to measure δ again: the cache's hit rate moves it).
    since_probe: u64,
    probe_every: u64,
}

/// Positions scored before the rule trusts the acceptance.
const RULE_MIN_POSITIONS: u64 = 4;
/// The expected gain (tokens per plain step's time) a draft must promise to be verified: a
/// tenth above break-even. Near break-even a pass gains nothing on average, and the noise of
/// the rule's estimates makes it verify where it loses (measured past RAM under the real
/// trace: 2-row passes of 1.5-1.7 plain steps for 1.5 tokens, 0.867× plain;
/// `docs/speculative.md` §7.1).
const RULE_MARGIN: f64 = 1.1;
/// Verify passes in a row after which one plain step is run, to keep t₁ current.
const RULE_REFRESH: u64 = 8;
/// Plain steps t₁ is the mean of (a forgetting mean).
const RULE_T1_WINDOW: u64 = 4;
/// A skipped draft is verified anyway after this many skips (then twice as many, up to
/// [`RULE_PROBE_MAX`]) when it could pay at all, so that δ stays measured.
const RULE_PROBE_FIRST: u64 = 64;
const RULE_PROBE_MAX: u64 = 1024;

impl SkipRule {
    /// Tokens a verify pass of a draft of `len` is expected to yield at acceptance `a` per
    /// position: 1 + a + … + a^len.
    pub fn expected_tokens(a: f64, len: usize) -> f64 {
        (0..=len).map(|j| a.powi(j as i32)).sum()
    }

    /// The extra seconds of a verify pass of `l` drafted rows over a plain step: measured at
    /// that width, else scaled linearly in the rows from the nearest narrower width measured
    /// (an overstatement), else from the nearest wider one; `None` before any is measured.
    fn delta_of(&self, l: usize) -> Option<f64> {
        let t1 = self.t1.get()?;
        let at = |j: usize| self.pass_s[j - 1].get().map(|s| (s - t1).max(0.0) * l as f64 / j as f64);
        let max = self.pass_s.len();
        at(l).or_else(|| (1..l).rev().find_map(at)).or_else(|| (l + 1..=max).find_map(at))
    }

    /// The least a pass of `l` drafted rows can cost over a plain step: what the narrower
    /// widths measured cost (a union never shrinks as rows are added); 0 for one row.
    fn delta_floor(&self, l: usize) -> f64 {
        let t1 = self.t1.get().unwrap_or(0.0);
        (1..l).filter_map(|j| self.pass_s[j - 1].get().map(|s| s - t1)).fold(0.0, f64::max)
    }

    /// How many of the `available` drafted tokens to verify (0: run a plain step).
    pub fn plan(&mut self, available: usize) -> usize {
        let (Some(a), Some(t1)) = (self.a.get(), self.t1.get()) else { return 0 };
        let available = available.min(self.pass_s.len());
        if available == 0 || self.a.n < RULE_MIN_POSITIONS || t1 <= 0.0 {
            return 0;
        }
        // No width measured: the cheapest pass that measures one (one drafted token), if a
        // draft could pay (by the margin) at all.
        if self.delta_of(1).is_none() {
            return usize::from(1.0 + a > RULE_MARGIN);
        }
        let best_of = |cost: &dyn Fn(usize) -> f64| {
            let gain = |l: usize| Self::expected_tokens(a, l) / (1.0 + cost(l) / t1);
            let best = (1..=available).max_by(|&x, &y| gain(x).total_cmp(&gain(y))).expect("available > 0");
            (best, gain(best))
        };
        let (best, gain) = best_of(&|l| self.delta_of(l).expect("some width measured"));
        if gain > RULE_MARGIN {
            self.since_probe = 0;
            if self.streak >= RULE_REFRESH {
                // A plain step now and then while verifying: t₁ measured again.
                return 0;
            }
            return best;
        }
        // Could some width pay at the least it can cost? Then verify it now and then, to
        // measure it (again: the cache's hit rate moves δ).
        self.since_probe += 1;
        if self.probe_every == 0 {
            self.probe_every = RULE_PROBE_FIRST;
        }
        let (probe, could) = best_of(&|l| self.delta_floor(l));
        if could > RULE_MARGIN && self.since_probe >= self.probe_every {
            self.since_probe = 0;
            self.probe_every = (self.probe_every * 2).min(RULE_PROBE_MAX);
            return probe;
        }
        0
    }

    /// A draft of `len` tokens of which the first `accepted` agreed with the text.
    pub fn outcome(&mut self, len: usize, accepted: usize) {
        for _ in 0..accepted {
            self.a.add(1.0, 32);
        }
        if accepted < len {
            self.a.add(0.0, 32);
        }
    }

    /// A plain step took `secs`.
    pub fn plain_step(&mut self, secs: f64) {
        self.t1.add(secs, RULE_T1_WINDOW);
        self.streak = 0;
    }

    /// A verify pass of `rows` rows took `secs`.
    pub fn verify_pass(&mut self, secs: f64, rows: usize) {
        if let Some(s) = rows.checked_sub(2).and_then(|l| self.pass_s.get_mut(l)) {
            s.add(secs, 8);
            self.streak += 1;
        }
    }

    /// The acceptance per position it goes by, when measured.
    pub fn acceptance(&self) -> Option<f64> {
        self.a.get()
    }
}

/// A draft the rule skipped, being compared with the tokens plain decode produces.
#[derive(Clone, Debug, Default, PartialEq)]
struct Shadow {
    draft: Vec<i32>,
    agreed: usize,
}

/// Speculative decoding's state: the options, the context it drafts from, the rule, and the
/// generation's counters.
#[derive(Clone, Debug)]
pub struct Speculator {
    opts: SpecOptions,
    rule: SkipRule,
    /// The context and every kept token so far (prompt lookup searches it).
    history: Vec<i32>,
    /// Tokens generated so far in this generation (replay drafts from the file at this index).
    generated: usize,
    shadow: Option<Shadow>,
    stats: SpecStats,
}

impl Speculator {
    /// Speculative decoding with `opts`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a draft of 0 or more than [`MAX_DRAFT`] tokens, a match of 0
    /// tokens, a corruption probability outside [0, 1], or an empty replay.
    pub fn new(opts: SpecOptions) -> Result<Self> {
        if opts.n_draft == 0 || opts.n_draft > MAX_DRAFT {
            return Err(Error::Invalid(format!("--draft {}: 1 to {MAX_DRAFT} tokens", opts.n_draft)));
        }
        match &opts.source {
            DraftSource::Ngram { min_match: 0 } => {
                return Err(Error::Invalid("--ngram-min-match 0: a match of at least one token".into()))
            }
            DraftSource::Replay { corrupt, .. } if !(0.0..=1.0).contains(corrupt) => {
                return Err(Error::Invalid(format!("--draft-corrupt {corrupt}: a probability, 0 to 1")))
            }
            DraftSource::Replay { tokens, source, .. } if tokens.is_empty() => {
                return Err(Error::Invalid(format!("--draft-replay {source}: no tokens in it")))
            }
            _ => {}
        }
        Ok(Self {
            opts,
            rule: SkipRule::default(),
            history: Vec::new(),
            generated: 0,
            shadow: None,
            stats: SpecStats::default(),
        })
    }

    /// The settings.
    pub fn options(&self) -> &SpecOptions {
        &self.opts
    }

    /// A generation starts after `context` (every token the context will hold before the
    /// first generated one). The rule keeps what it measured; the counters start over.
    pub fn begin(&mut self, context: &[i32]) {
        self.history.clear();
        self.history.extend_from_slice(context);
        self.generated = 0;
        self.shadow = None;
        self.stats = SpecStats::default();
    }

    /// The counters of the generation so far.
    pub fn stats(&self) -> SpecStats {
        self.stats
    }

    /// The rule's state (tests).
    pub fn rule(&self) -> &SkipRule {
        &self.rule
    }

    /// `token` was kept (generated): it joins the history, and a skipped draft in comparison
    /// scores it.
    pub fn kept(&mut self, token: i32) {
        self.history.push(token);
        self.generated += 1;
        if let Some(s) = self.shadow.as_mut() {
            let agrees = s.draft.get(s.agreed) == Some(&token);
            if agrees {
                s.agreed += 1;
            }
            if !agrees || s.agreed == s.draft.len() {
                let s = self.shadow.take().expect("present");
                self.rule.outcome(s.draft.len(), s.agreed);
                self.stats.shadow_drafted += (s.agreed + usize::from(s.agreed < s.draft.len())) as u64;
                self.stats.shadow_accepted += s.agreed as u64;
            }
        }
    }

    /// The draft to verify after the last kept token (about to run), at most `room` tokens
    /// (the generation's and the context's room): empty for a plain step.
    pub fn draft(&mut self, room: usize, n_vocab: usize) -> Vec<i32> {
        let max = room.min(self.opts.n_draft as usize);
        let mut d = if max == 0 { Vec::new() } else { self.propose(max, n_vocab) };
        if d.is_empty() {
            self.stats.no_draft += 1;
            return d;
        }
        if self.opts.skip_rule {
            let take = self.rule.plan(d.len());
            if take == 0 {
                self.stats.skipped += 1;
                if self.shadow.is_none() {
                    self.shadow = Some(Shadow { draft: d, agreed: 0 });
                }
                return Vec::new();
            }
            d.truncate(take);
        }
        self.shadow = None;
        d
    }

    /// The source's draft of at most `max` tokens.
    fn propose(&self, max: usize, n_vocab: usize) -> Vec<i32> {
        match &self.opts.source {
            DraftSource::Ngram { min_match } => ngram_draft(&self.history, *min_match as usize, max),
            DraftSource::Replay { tokens, corrupt, .. } => {
                let from = self.generated.min(tokens.len());
                let mut d: Vec<i32> = tokens[from..(from + max).min(tokens.len())].to_vec();
                for (j, t) in d.iter_mut().enumerate() {
                    let at = (from + j) as u64;
                    if unit(at, from as u64) < *corrupt {
                        *t = wrong_token(*t, at ^ (from as u64) << 32, n_vocab);
                    }
                }
                d
            }
        }
    }

    /// A plain step took `secs` and read `bytes` of experts.
    pub fn plain_step(&mut self, secs: f64, bytes: u64) {
        self.stats.plain_steps += 1;
        self.stats.plain_s += secs;
        self.stats.plain_bytes += bytes;
        self.rule.plain_step(secs);
    }

    /// A verify pass of a draft of `drafted` tokens, of which the first `accepted` were
    /// accepted and which produced `tokens` tokens, took `secs` and read `bytes`.
    pub fn verify_pass(&mut self, drafted: usize, accepted: usize, tokens: usize, secs: f64, bytes: u64) {
        let s = &mut self.stats;
        s.verify_passes += 1;
        s.drafted += drafted as u64;
        s.accepted += accepted as u64;
        s.verify_tokens += tokens as u64;
        s.verify_s += secs;
        s.verify_bytes += bytes;
        metrics::counter!("bmoe_spec_verify_passes_total").increment(1);
        metrics::counter!("bmoe_spec_drafted_tokens_total").increment(drafted as u64);
        metrics::counter!("bmoe_spec_accepted_tokens_total").increment(accepted as u64);
        self.rule.outcome(drafted, accepted);
        self.rule.verify_pass(secs, drafted + 1);
    }
}

/// Prompt lookup: the latest earlier occurrence of the longest suffix of `history` of
/// `min_match` to `NGRAM_MAX` tokens, and the (at most `max`) tokens that followed it.
pub fn ngram_draft(history: &[i32], min_match: usize, max: usize) -> Vec<i32> {
    let n = history.len();
    for m in (min_match..=NGRAM_MAX.max(min_match)).rev() {
        if m >= n {
            continue;
        }
        let pattern = &history[n - m..];
        // Latest first: the nearest context is the likeliest to continue the same way.
        for start in (0..n - m).rev() {
            if &history[start..start + m] == pattern {
                let from = start + m;
                let d = &history[from..(from + max).min(n)];
                if !d.is_empty() {
                    return d.to_vec();
                }
            }
        }
    }
    Vec::new()
}

/// A uniform number in [0, 1) from the token's position `at` and the draft's start `from`
/// (splitmix64): the same draft corrupts the same way in every run.
fn unit(at: u64, from: u64) -> f64 {
    let mut z = at.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ from.wrapping_add(0xd1b5_4a32_d192_ed03);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// A token other than `t`, chosen by `seed`.
fn wrong_token(t: i32, seed: u64, n_vocab: usize) -> i32 {
    if n_vocab < 2 {
        return t;
    }
    let off = 1 + (unit(seed, 0x5eed) * (n_vocab - 1) as f64) as usize % (n_vocab - 1);
    ((t as usize + off) % n_vocab) as i32
}

/// The tokens of a `--tokens-out` file (`# bmoe tokens v1`, `#` comment lines, then token ids
/// separated by white space): a previous run's generated tokens, for `--draft-replay`.
///
/// # Errors
/// [`Error::File`]; [`Error::Invalid`] naming the file for a word that is not a token id.
pub fn read_tokens(path: &Path) -> Result<Vec<i32>> {
    let text = std::fs::read_to_string(path).map_err(|err| Error::File { path: path.into(), err })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        for w in line.split_whitespace() {
            let t: i32 =
                w.parse().ok().filter(|t: &i32| *t >= 0).ok_or_else(|| {
                    Error::Invalid(format!("{} line {}: `{w}` is not a token id", path.display(), i + 1))
                })?;
            out.push(t);
        }
    }
    Ok(out)
}

/// The first line of a tokens file.
pub const TOKENS_HEADER: &str = "# bmoe tokens v1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ngram_takes_the_longest_latest_match() {
        let h = [1, 2, 3, 4, 9, 1, 2, 3, 5, 6, 1, 2, 3];
        // Suffix [1,2,3]: latest earlier occurrence at 5 → 5, 6, 1.
        assert_eq!(ngram_draft(&h, 2, 3), vec![5, 6, 1]);
        assert_eq!(ngram_draft(&h, 2, 1), vec![5]);
        // Nothing matches 4 tokens or more.
        assert_eq!(ngram_draft(&h, 4, 3), Vec::<i32>::new());
        // A match at the very end of the history continues into the suffix itself.
        assert_eq!(ngram_draft(&[7, 7, 7], 1, 4), vec![7]);
        assert!(ngram_draft(&[1, 2], 2, 3).is_empty());
    }

    #[test]
    fn replay_drafts_by_position_and_corrupts_deterministically() {
        let toks: Vec<i32> = (10..30).collect();
        let src = |p| DraftSource::Replay { tokens: toks.clone(), corrupt: p, source: "t".into() };
        let mut s =
            Speculator::new(SpecOptions { source: src(0.0), n_draft: 3, skip_rule: false, exact: true }).unwrap();
        s.begin(&[1, 2]);
        s.kept(10);
        assert_eq!(s.draft(8, 100), vec![11, 12, 13]);
        assert_eq!(s.draft(2, 100), vec![11, 12], "no more than the room");
        let mut c =
            Speculator::new(SpecOptions { source: src(1.0), n_draft: 3, skip_rule: false, exact: true }).unwrap();
        c.begin(&[]);
        c.kept(10);
        let d = c.draft(8, 100);
        assert!(d.iter().zip([11, 12, 13]).all(|(a, b)| *a != b && (0..100).contains(a)), "{d:?}");
        assert_eq!(c.draft(8, 100), d, "the same draft corrupts the same way");
        // At p = 0.5 about half of many drafted tokens are wrong.
        let mut h = Speculator::new(SpecOptions {
            source: DraftSource::Replay { tokens: (0..4000).collect(), corrupt: 0.5, source: "t".into() },
            n_draft: 1,
            skip_rule: false,
            exact: true,
        })
        .unwrap();
        h.begin(&[]);
        let mut wrong = 0;
        for i in 0..3000 {
            h.kept(i);
            wrong += usize::from(h.draft(1, 5000) != vec![i + 1]);
        }
        assert!((1300..1700).contains(&wrong), "{wrong} of 3000");
    }

    #[test]
    fn the_rule_waits_for_evidence_and_skips_what_does_not_pay() {
        let mut r = SkipRule::default();
        assert_eq!(r.plan(3), 0, "nothing measured");
        r.plain_step(1.0);
        r.outcome(3, 3);
        r.outcome(3, 3);
        // Acceptance 1, δ unmeasured: one drafted token, to measure it.
        assert_eq!(r.plan(3), 1);
        // A verify pass of 2 rows took 1.1 plain steps: δ = 0.1, all of the draft.
        r.verify_pass(1.1, 2);
        assert_eq!(r.plan(3), 3);
        // Rows that cost as much as a plain step each, at acceptance 1: 4 tokens for 4 steps
        // does not beat 1.
        let mut r = SkipRule::default();
        r.plain_step(1.0);
        r.outcome(3, 3);
        r.outcome(3, 3);
        r.verify_pass(4.0, 4);
        assert_eq!(r.plan(3), 0);
        // Acceptance 0: never (δ unmeasured), and no probe either.
        let mut r = SkipRule::default();
        r.plain_step(1.0);
        for _ in 0..8 {
            r.outcome(3, 0);
        }
        assert!((0..2000).all(|_| r.plan(3) == 0));
    }

    #[test]
    fn the_rule_picks_the_prefix_that_pays_best_and_probes_rarely() {
        let mut r = SkipRule::default();
        r.plain_step(1.0);
        for _ in 0..16 {
            r.outcome(2, 1); // a = 0.5
        }
        // δ(1) = 0.25: E(1) = 1.5 / 1.25 = 1.2; E(2) = 1.75 / 1.5 = 1.17; E(3) = 1.875 / 1.75.
        r.verify_pass(1.25, 2);
        assert_eq!(r.plan(3), 1);
        r.verify_pass(2.2, 2); // δ = 0.725 (mean of 0.25 and 1.2)
        assert_eq!(r.plan(3), 0);
        let probes = (0..2000).filter(|_| r.plan(3) > 0).count();
        assert!((1..=6).contains(&probes), "{probes} probes in 2000 skipped drafts");
    }

    /// Near break-even a draft is skipped: it must promise a tenth more tokens per plain step's
    /// time than plain decode (measured past RAM under the real trace: passes verified near
    /// break-even ran at 0.867× plain).
    #[test]
    fn the_rule_wants_a_tenth_over_break_even() {
        let rule = |pass_s: f64| {
            let mut r = SkipRule::default();
            r.plain_step(1.0);
            for _ in 0..16 {
                r.outcome(1, 1);
                r.outcome(1, 0); // a = 0.5
            }
            r.verify_pass(pass_s, 2);
            r
        };
        assert_eq!(rule(1.4).plan(1), 0, "E(1) = 1.5 in 1.4 steps: 1.07");
        assert_eq!(rule(1.3).plan(1), 1, "1.5 in 1.3 steps: 1.15");
        // Before a width is measured, one drafted row is verified only if it could pay a tenth.
        let mut r = SkipRule::default();
        r.plain_step(1.0);
        for _ in 0..16 {
            r.outcome(1, 0);
        }
        r.outcome(1, 1); // a ≈ 0.06
        assert_eq!(r.plan(3), 0);
    }

    /// A 2-row pass that cost two plain steps writes off every width by a linear guess; the
    /// probe measures the widest (it could pay at the least it can cost), and the rule then
    /// verifies at that width, which pays, while the narrower ones still do not.
    #[test]
    fn the_rule_measures_each_width_it_goes_by() {
        let mut r = SkipRule::default();
        r.plain_step(1.0);
        for _ in 0..8 {
            r.outcome(3, 3); // a = 1
        }
        r.verify_pass(2.0, 2); // δ(1) = 1: 2 tokens for 2 steps
        let plans: Vec<usize> = (0..64).map(|_| r.plan(3)).collect();
        assert!(plans[..63].iter().all(|&p| p == 0), "a linear guess from δ(1) pays nowhere: {plans:?}");
        assert_eq!(plans[63], 3, "the probe: the widest, which could pay 4 tokens for 2 steps");
        r.verify_pass(3.3, 4); // δ(3) = 2.3: 4 tokens for 3.3 steps
        assert_eq!(r.plan(3), 3);
        assert_eq!(r.plan(2), 0, "δ(2) from the narrower δ(1): 3 tokens for 3 steps");
        // A width measured directly replaces its guess.
        r.verify_pass(1.5, 3); // δ(2) = 0.5
        assert_eq!(r.plan(2), 2);
    }

    /// t₁ first measured on a cold cache's slow steps makes a 2-row pass look nearly free; the
    /// plain step the rule runs every few passes measures it again, and the rule stops
    /// verifying at an acceptance that loses (measured past RAM under a real trace: 4 plain
    /// steps of ~330 ms, then passes of ~450 ms against warm plain steps of ~250 ms at 44 %).
    #[test]
    fn the_rule_keeps_t1_current_while_it_verifies() {
        let sim = |a_hits: usize, a_misses: usize, pass_s: f64| {
            let mut r = SkipRule::default();
            for _ in 0..4 {
                r.plain_step(0.33);
            }
            for i in 0..a_hits + a_misses {
                r.outcome(1, usize::from(i < a_hits));
            }
            r.verify_pass(0.41, 2);
            (0..64)
                .map(|_| {
                    let p = r.plan(1);
                    if p == 0 {
                        r.plain_step(0.25);
                    } else {
                        r.verify_pass(pass_s, 2);
                    }
                    p
                })
                .collect::<Vec<usize>>()
        };
        // a = 4/9: a 2-row pass of 450 ms yields 1.44 tokens, 1.8 warm plain steps' time.
        let plans = sim(4, 5, 0.45);
        assert_eq!(plans[0], 1, "δ(1) = 0.08 s against the cold t₁: it looks like it pays");
        assert!(plans[32..].iter().all(|&p| p == 0), "still verifying at a losing acceptance: {plans:?}");
        // a = 1, passes of 300 ms (1.2 warm steps for 2 tokens): it keeps verifying, one plain
        // step in every RULE_REFRESH + 1.
        let plans = sim(8, 0, 0.30);
        let passes = plans.iter().filter(|&&p| p > 0).count();
        assert!((56..=58).contains(&passes), "{passes} passes in 64 steps: {plans:?}");
    }

    #[test]
    fn skipped_drafts_are_scored_against_the_text() {
        let opts =
            SpecOptions { source: DraftSource::Ngram { min_match: 1 }, n_draft: 2, skip_rule: true, exact: true };
        let mut s = Speculator::new(opts).unwrap();
        s.begin(&[4, 5, 6, 4]);
        // Skipped (nothing measured): [5, 6] in comparison.
        assert!(s.draft(8, 10).is_empty());
        s.kept(5);
        s.kept(7);
        let st = s.stats();
        assert_eq!((st.skipped, st.shadow_drafted, st.shadow_accepted), (1, 2, 1));
        assert_eq!(s.rule().acceptance(), Some(0.5));
    }

    #[test]
    fn bad_options_are_refused() {
        let o = |n, source| SpecOptions { source, n_draft: n, skip_rule: true, exact: true };
        assert!(Speculator::new(o(0, DraftSource::Ngram { min_match: 2 })).is_err());
        assert!(Speculator::new(o(17, DraftSource::Ngram { min_match: 2 })).is_err());
        assert!(Speculator::new(o(3, DraftSource::Ngram { min_match: 0 })).is_err());
        let r = |p, t: Vec<i32>| DraftSource::Replay { tokens: t, corrupt: p, source: "f".into() };
        assert!(Speculator::new(o(3, r(1.5, vec![1]))).is_err());
        assert!(Speculator::new(o(3, r(0.5, vec![]))).is_err());
        assert!(Speculator::new(o(3, r(0.5, vec![1]))).is_ok());
    }
}
