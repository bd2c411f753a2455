//! `hd` (and its variants): a policy that learns, online, how likely an entry is to be routed at
//! its next chance given its state, and evicts the entry worth least per byte until then.
//!
//! What it knows at every access is only the past: per entry, the token of its last use and
//! its decayed use count (γ = 0.95 per token, a prefill use 0.3, as in `decay`). The fixed layer
//! cycle gives each entry a *next chance*: the current token if its layer is still to come, the
//! next token otherwise. An entry's *state* at a chance is (tokens since its last use, 1-9+;
//! half-octave bucket of its decayed count): 180 states, plus "never used". At every other
//! decode layer the policy records, for each of the layer's experts, the state it was in and
//! whether the router picked it: a table of P(routed | state), learned from the routing seen so
//! far and rebuilt once per token (LHD/EVA-style: the statistics are the workload's, so the
//! balance between recency and frequency is learned, not tuned).
//!
//! Value of a resident entry = P(routed at its next chance | its state then) / (time to that
//! chance, in cycles) / bytes: an entry whose layer comes next is worth holding for the short
//! time until then; one whose layer was just computed has a whole cycle to wait. The victim is
//! the unpinned entry of least value among the `candidates` (128, at most a quarter of the
//! residents, at least 16) of least decayed count per byte, which are kept in order as `decay`
//! keeps them: the learned table re-ranks what the long-run count already finds cheap. Ranking
//! every resident entry instead was worse at large budgets (the table's 20 count buckets are
//! coarser than the count itself). A layer's further misses take the next entries of a
//! shortlist made by its first scan.
//!
//! The variants (`HdParams`) keep the exploration that led here: a bit-pattern state
//! ([`Features::Pattern`]), horizons over several tokens and other ranks ([`Rank`]), per-layer
//! tables, sampled victims, admission control; docs/cache-policy.md has their numbers.
//!
//! Cost per access: the learning step reads a layer's experts (n_expert / top-k / 2 states), the
//! table rebuild is amortised over a token, and the victim search ranks up to 128 candidates
//! per missing layer (at most once per layer): a few hundred ns, 2-3x `decay`.

use super::{Policy, PrioSet};
use crate::cache::{Access, EntryId, Geometry, Phase, Pins, Position};

/// Parameters of [`HitDensity`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HdParams {
    /// Chances (tokens) looked ahead for the hit probability and occupancy.
    pub horizon: u32,
    /// What the victim has least of.
    pub rank: Rank,
    /// Count prefill uses in the history as a use at token 0.
    pub prefill_history: bool,
    /// Divide by the entry's bytes.
    pub size_aware: bool,
    /// Weight of the prior in the per-state estimate (pseudo-observations).
    pub prior: f32,
    /// Refuse a miss whose density is below the would-be victim's.
    pub admission: bool,
    /// What an entry's state is made of.
    pub features: Features,
    /// Per-token retention of the decayed use count ([`Features::AgeScore`]).
    pub gamma: f32,
    /// One table per layer (smoothed towards the all-layer table) instead of one for all.
    pub per_layer: bool,
    /// Victim search: 0 scans every resident entry; n > 0 picks the least of n sampled ones.
    pub sample: u32,
    /// Victim search: n > 0 ranks only the n unpinned entries of least decayed count per byte
    /// (kept in order, as the `decay` policy does) instead of every resident entry.
    pub candidates: u32,
    /// With `candidates`: at most this fraction of the resident entries (1 = no limit), and
    /// never fewer than 16.
    pub candidate_share: f32,
    /// Learn from one decode layer in this many (1 = every layer).
    pub learn_every: u32,
    /// If > 0, the horizon follows the budget: `scale × budget / bytes admitted per token`
    /// (the tokens an entry stays without a use), in 1..=64 tokens, instead of `horizon`.
    pub horizon_scale: f32,
}

/// The parameters of `hd`, the best variant found (docs/cache-policy.md): the next-chance
/// probability of an (age, decayed count) state per unit of time until that chance, per byte,
/// ranked among the 128 (at most a quarter, at least 16) resident entries of least decayed
/// count per byte; learning from every other layer.
pub const HD: HdParams = HdParams {
    horizon: 1,
    rank: Rank::Density,
    prefill_history: true,
    size_aware: true,
    prior: 4.0,
    admission: false,
    features: Features::AgeScore,
    gamma: 0.95,
    per_layer: false,
    sample: 0,
    candidates: 128,
    candidate_share: 0.25,
    learn_every: 2,
    horizon_scale: 0.0,
};

/// The value an entry is ranked by (per byte when size-aware).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// Probability of a use within the horizon / expected occupancy until then (LHD). With
    /// horizon 1 (`hd`): P(routed at the next chance) / time to that chance.
    Density,
    /// Probability of a use within the horizon.
    HitProb,
    /// One over the expected time to the next use, taking the next-chance probability as the
    /// rate from then on: `1 / (time to next chance + (1 - p) / p)` (horizon 1).
    NextUse,
    /// Expected number of uses within the horizon, following the learned chain through uses
    /// as well as non-uses ([`Features::AgeScore`] only).
    Hits,
}

/// The state an entry's hit probability is learned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Features {
    /// The pattern of uses in the last 8 tokens and a bucket of the 24 before.
    Pattern,
    /// Tokens since the last use (1..=8, 9 = older) and a log2 bucket of the decayed use count.
    AgeScore,
}

const NEVER: u32 = u32::MAX;
/// The floor of the candidate count when it is a share of the resident entries.
const MIN_CANDIDATES: usize = 16;
/// Victims kept from one candidate scan for the same layer's further misses.
const SHORTLIST: usize = 8;
/// Buckets of the uses in the 24 tokens before the last 8: 0, 1, 2-3, 4-7, 8-15, 16+.
const N_OLD: usize = 6;
/// A representative count per old bucket (to follow a state's path).
const OLD_REP: [u32; N_OLD] = [0, 1, 2, 5, 11, 20];
/// AgeScore: ages 1..=9 (9 = 9 or more) x score buckets.
const N_AGE: usize = 9;
const N_SB: usize = 20;
/// Score buckets per octave.
const SB_PER_OCTAVE: f32 = 2.0;

/// Log2 bucket of a decayed count: bucket b holds scores around 2^(b/2) / 16.
fn score_bucket(s: f32) -> usize {
    if s <= 1.0 / 16.0 {
        return 0;
    }
    ((SB_PER_OCTAVE * (s * 16.0).log2()).round() as usize).min(N_SB - 1)
}

fn bucket_score(b: usize) -> f32 {
    if b == 0 {
        0.0
    } else {
        (b as f32 / SB_PER_OCTAVE).exp2() / 16.0
    }
}

fn old_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1 => 1,
        2..=3 => 2,
        4..=7 => 3,
        8..=15 => 4,
        _ => 5,
    }
}

#[derive(Clone, Copy, Debug)]
struct Ent {
    layer: u32,
    last: u32,
}

/// The learned hit-density policy; see the module documentation.
#[derive(Debug)]
pub struct HitDensity {
    name: &'static str,
    p: HdParams,
    n_expert: u32,
    n_layer: u32,
    bytes: Vec<f32>,
    /// Per entry: bit i = used at token `last - i`.
    hist: Vec<u32>,
    /// Per entry: its layer and the token of its last use, together (the victim search reads
    /// both for every candidate).
    ent: Vec<Ent>,
    /// Per entry: `ln(decayed use count) + lambda * token of the last update`, which stays
    /// comparable as time passes (the count at token t is `exp(lscore - lambda * t)`).
    lscore: Vec<f64>,
    lambda: f64,
    /// Score bucket at token t = `sb_a * lscore - sb_b * t + sb_c` (rounded, clamped).
    sb_a: f64,
    sb_b: f64,
    sb_c: f64,
    /// Per layer: 1 / entry MiB.
    inv_bytes: Vec<f32>,
    /// Per layer distance d to the next chance (1..2 n_layer, in layers): n_layer / d.
    inv_frac: Vec<f32>,
    /// Per layer: `sb_a * ln(entry MiB) + sb_c` (a key's bucket is `sb_a * key` plus this,
    /// minus `sb_b` times the token of the chance).
    key_off: Vec<f64>,
    ln_bytes: Vec<f64>,
    /// The current layer's next victims, least value last.
    shortlist: Vec<(f32, EntryId)>,
    /// `gamma^k` for k < 64.
    gpow: Vec<f32>,
    /// States per table (the features' count), tables (1 or n_layer).
    n_states: usize,
    n_tables: usize,
    rng: u64,
    /// Per (table, state): observed chances and uses; the all-layer totals follow the tables.
    /// (f64: an f32 count stops growing at 2^24, a few thousand tokens of observations.)
    obs_n: Vec<f64>,
    obs_h: Vec<f64>,
    /// Per state: P(use within the horizon), and expected occupancy after the first chance.
    p_hit: Vec<f32>,
    occ: Vec<f32>,
    /// The decode group being observed: (token, layer) and its experts' states.
    pending: Option<(u32, u32)>,
    pending_state: Vec<u16>,
    table_token: u32,
    /// Budget, bytes admitted in the current token, and their moving average per token.
    budget: f32,
    admitted: f32,
    admit_rate: f32,
    pos: Position,
    /// Resident (kept) entries, compact, and each one's index in it.
    resident: Vec<EntryId>,
    slot: Vec<u32>,
    /// With `candidates`: resident entries by decayed count per byte.
    order: PrioSet,
    /// Offline analysis only ([`HitDensity::pretrained`]): the access sequence to learn the
    /// table from before the replay.
    pretrain: Option<Vec<EntryId>>,
}

impl HitDensity {
    /// A hit-density policy under `name`.
    pub fn new(name: &'static str, p: HdParams) -> Self {
        Self {
            name,
            p,
            n_expert: 1,
            n_layer: 1,
            bytes: Vec::new(),
            hist: Vec::new(),
            ent: Vec::new(),
            lscore: Vec::new(),
            sb_a: 0.0,
            sb_b: 0.0,
            sb_c: 0.0,
            inv_bytes: Vec::new(),
            inv_frac: Vec::new(),
            key_off: Vec::new(),
            ln_bytes: Vec::new(),
            shortlist: Vec::with_capacity(SHORTLIST),
            lambda: if p.gamma >= 1.0 { 0.0 } else { -f64::from(p.gamma.max(1e-9)).ln() },
            gpow: (0..64).map(|k| p.gamma.powi(k)).collect(),
            n_states: 0,
            n_tables: 1,
            rng: 0x9e37_79b9_7f4a_7c15,
            obs_n: Vec::new(),
            obs_h: Vec::new(),
            p_hit: Vec::new(),
            occ: Vec::new(),
            pending: None,
            pending_state: Vec::new(),
            table_token: NEVER,
            budget: 0.0,
            admitted: 0.0,
            admit_rate: 0.0,
            pos: Position { phase: Phase::Prefill, token: 0, layer: 0 },
            resident: Vec::new(),
            slot: Vec::new(),
            order: PrioSet::default(),
            pretrain: None,
        }
    }

    /// An offline reference, not a policy: the same policy with its table learned from the
    /// whole access `sequence` first (the future included), then replayed from an empty cache
    /// and empty per-entry histories. It measures what better learning could still give.
    /// Token passes are recovered from the sequence (a lower layer starts a new one; the first
    /// pass is the prompt).
    pub fn pretrained(name: &'static str, p: HdParams, sequence: &[EntryId]) -> Self {
        Self { pretrain: Some(sequence.to_vec()), ..Self::new(name, p) }
    }

    /// Run the learning over `seq` (the table only depends on the routing, not on what is
    /// resident), then forget the per-entry state.
    fn learn_in_advance(&mut self, seq: &[EntryId]) {
        let (mut pass, mut prev) = (0u64, None::<u32>);
        for (i, &id) in seq.iter().enumerate() {
            let layer = self.ent[id as usize].layer;
            if prev.is_some_and(|p| layer < p) {
                pass += 1;
            }
            let phase = if pass == 0 { Phase::Prefill } else { Phase::Decode };
            let pos = Position { phase, token: pass, layer };
            if prev != Some(layer) || self.pos.token != pass {
                self.begin_layer(pos);
            }
            prev = Some(layer);
            self.record_use(&Access { id, rank: 0, weight: 0.0, seq: i as u64 }, &pos);
        }
        self.observe_pending();
        for e in &mut self.ent {
            e.last = NEVER;
        }
        self.lscore.fill(f64::NEG_INFINITY);
        self.hist.fill(0);
        self.shortlist.clear();
        (self.table_token, self.admitted, self.admit_rate) = (NEVER, 0.0, 0.0);
        self.pos = Position { phase: Phase::Prefill, token: 0, layer: 0 };
    }

    /// The state of entry `id` at a chance at token `tc` (> its last use).
    #[inline]
    fn state(&self, id: EntryId, tc: u32) -> usize {
        let last = self.ent[id as usize].last;
        if last == NEVER {
            return self.n_states - 1;
        }
        if self.p.features == Features::AgeScore {
            let age = tc.saturating_sub(last).clamp(1, N_AGE as u32) as usize - 1;
            // The score bucket at tc, from the time-invariant log score: one multiply-add.
            let x = self.sb_a * self.lscore[id as usize] - self.sb_b * f64::from(tc) + self.sb_c;
            let b = if x > 0.0 { ((x + 0.5) as usize).min(N_SB - 1) } else { 0 };
            return b * N_AGE + age;
        }
        // Bit j of `m` = used at token tc - 1 - j.
        let shift = tc.saturating_sub(last).saturating_sub(1);
        let m = if shift >= 32 { 0 } else { self.hist[id as usize] << shift };
        let recent = (m & 0xff) as usize;
        let old = old_bucket((m >> 8).count_ones());
        old * 256 + recent
    }

    /// P(routed) of observation cell `j`, smoothed towards `prior_p`.
    fn estimate(&self, j: usize, prior_p: f32) -> f32 {
        let w = f64::from(self.p.prior);
        ((self.obs_h[j] + w * f64::from(prior_p)) / (self.obs_n[j] + w)) as f32
    }

    /// The state after `k` more chances without a use.
    fn path(&self, s: usize, k: u32) -> usize {
        let cold = self.n_states - 1;
        if s == cold {
            cold
        } else if self.p.features == Features::AgeScore {
            let (b, age) = (s / N_AGE, s % N_AGE);
            let sc = bucket_score(b) * self.gpow[k as usize];
            score_bucket(sc) * N_AGE + (age + k as usize).min(N_AGE - 1)
        } else {
            let (old, recent) = ((s / 256) as u32, (s % 256) as u32);
            // k < 64 (the horizon is at most 64); bits older than 32 tokens drop off.
            let shifted = u64::from(recent) << k;
            let n_old = OLD_REP[old as usize] + ((shifted >> 8) & 0xff_ffff).count_ones();
            old_bucket(n_old) * 256 + (shifted & 0xff) as usize
        }
    }

    /// AgeScore: the state at the next chance after a use, and after a non-use.
    fn successors(&self, s: usize) -> (usize, usize) {
        let cold = self.n_states - 1;
        let g = self.p.gamma;
        if s == cold {
            return (score_bucket(g) * N_AGE, cold);
        }
        let (b, age) = (s / N_AGE, s % N_AGE);
        let sc = bucket_score(b);
        (score_bucket((sc + 1.0) * g) * N_AGE, score_bucket(sc * g) * N_AGE + (age + 1).min(N_AGE - 1))
    }

    /// Rebuild the per-state horizon tables from the observations so far. Table 0 holds the
    /// all-layer counts; per-layer tables are smoothed towards it.
    fn rebuild(&mut self) {
        let ns = self.n_states;
        let (tn, th) = (self.obs_n[..ns].iter().sum::<f64>(), self.obs_h[..ns].iter().sum::<f64>());
        let p0 = if tn > 0.0 { (th / tn) as f32 } else { 0.05 };
        let global: Vec<f32> = (0..ns).map(|s| self.estimate(s, p0)).collect();
        let h = if self.p.horizon_scale > 0.0 && self.admit_rate > 0.0 {
            (self.p.horizon_scale * self.budget / self.admit_rate).round().clamp(1.0, 64.0) as u32
        } else {
            self.p.horizon.max(1)
        };
        let first = if self.n_tables > 1 { 1 } else { 0 };
        if self.p.rank == Rank::Hits && self.p.features == Features::AgeScore {
            let mut v = vec![0.0f32; ns];
            let mut nv = vec![0.0f32; ns];
            for tb in first..self.n_tables {
                let pr: Vec<f32> = (0..ns)
                    .map(|s| {
                        let j = tb * ns + s;
                        if tb == 0 {
                            global[s]
                        } else {
                            self.estimate(j, global[s])
                        }
                    })
                    .collect();
                v.fill(0.0);
                for _ in 0..h {
                    for s in 0..ns {
                        let (used, idle) = self.successors(s);
                        nv[s] = pr[s] * (1.0 + v[used]) + (1.0 - pr[s]) * v[idle];
                    }
                    std::mem::swap(&mut v, &mut nv);
                }
                self.p_hit[tb * ns..(tb + 1) * ns].copy_from_slice(&v);
            }
            return;
        }
        for tb in first..self.n_tables {
            for s in 0..ns {
                let (mut surv, mut occ) = (1.0f32, 0.0f32);
                for k in 0..h {
                    if k > 0 {
                        occ += surv;
                    }
                    let sk = self.path(s, k);
                    let j = tb * ns + sk;
                    let p = if tb == 0 { global[sk] } else { self.estimate(j, global[sk]) };
                    surv *= 1.0 - p;
                }
                self.p_hit[tb * ns + s] = 1.0 - surv;
                self.occ[tb * ns + s] = occ;
            }
        }
    }

    /// Close the observed group: record each of its experts' state and whether it was routed.
    fn observe_pending(&mut self) {
        if let Some((t, l)) = self.pending.take() {
            let lt = if self.n_tables > 1 { (l as usize + 1) * self.n_states } else { 0 };
            for e in 0..self.n_expert {
                let id = l * self.n_expert + e;
                let s = self.pending_state[e as usize] as usize;
                let used = if self.ent[id as usize].last == t { 1.0 } else { 0.0 };
                self.obs_n[s] += 1.0;
                self.obs_h[s] += used;
                if lt > 0 {
                    self.obs_n[lt + s] += 1.0;
                    self.obs_h[lt + s] += used;
                }
            }
        }
    }

    fn record_use(&mut self, a: &Access, pos: &Position) {
        if pos.phase == Phase::Prefill && !self.p.prefill_history {
            return;
        }
        let i = a.id as usize;
        let t = pos.token as u32;
        let w = if pos.phase == Phase::Prefill { 0.3 } else { 1.0 };
        let now = self.lambda * f64::from(t);
        self.lscore[i] = ((self.lscore[i] - now).exp() + w).ln() + now;
        let last = self.ent[i].last;
        if last == NEVER {
            self.hist[i] = 1;
        } else if last != t {
            let d = t.saturating_sub(last);
            self.hist[i] = if d >= 32 { 1 } else { (self.hist[i] << d) | 1 };
        }
        self.ent[i].last = t;
    }

    /// Re-key a resident entry in `order` after a use: log of its decayed count per byte,
    /// stored so that it stays comparable as time passes (as in `decay`).
    fn reorder(&mut self, id: EntryId, seq: u64) {
        if self.p.candidates == 0 || self.slot[id as usize] == NEVER {
            return;
        }
        let i = id as usize;
        let key = self.lscore[i] - self.ln_bytes[self.ent[i].layer as usize];
        self.order.set(id, key, u64::MAX - seq);
    }

    /// Hit density of a resident entry now (higher = keep).
    #[inline]
    fn density(&self, id: EntryId) -> f32 {
        let l = self.ent[id as usize].layer;
        // Next chance: this token if the layer is still to come, else the next one.
        let (tc, d) = self.chance(l);
        let frac = d as f32 / self.n_layer as f32;
        let mut s = self.state(id, tc);
        if self.n_tables > 1 {
            s += (l as usize + 1) * self.n_states;
        }
        let mut v = match self.p.rank {
            Rank::Density => self.p_hit[s] / (frac + self.occ[s]),
            // Among equal values the entry whose next chance is furthest goes first.
            Rank::HitProb | Rank::Hits => self.p_hit[s] * (1.0 - 1e-3 * frac),
            Rank::NextUse => {
                let p = self.p_hit[s].max(1e-6);
                p / (p * frac + 1.0 - p)
            }
        };
        if self.p.size_aware {
            v *= self.inv_bytes[l as usize];
        }
        v
    }

    /// [`Self::density`] for [`Features::AgeScore`] with one table, from the entry's key in
    /// `order` (its log score per byte), which saves reading its score: the victim search's
    /// inner loop.
    #[inline(always)]
    fn density_keyed(&self, key: f64, id: EntryId) -> f32 {
        let Ent { layer, last } = self.ent[id as usize];
        let l = layer as usize;
        let (tc, d) = self.chance(layer);
        let inv_frac = self.inv_frac[d as usize];
        let frac = d as f32 / self.n_layer as f32;
        let s = if last == NEVER {
            self.n_states - 1
        } else {
            let age = tc.saturating_sub(last).clamp(1, N_AGE as u32) as usize - 1;
            let x = self.sb_a * key + self.key_off[l] - self.sb_b * f64::from(tc);
            let b = if x > 0.0 { ((x + 0.5) as usize).min(N_SB - 1) } else { 0 };
            b * N_AGE + age
        };
        let v = match self.p.rank {
            Rank::Density if self.p.horizon == 1 && self.p.horizon_scale == 0.0 => self.p_hit[s] * inv_frac,
            Rank::Density => self.p_hit[s] / (frac + self.occ[s]),
            Rank::HitProb | Rank::Hits => self.p_hit[s] * (1.0 - 1e-3 * frac),
            Rank::NextUse => {
                let p = self.p_hit[s].max(1e-6);
                p / (p * frac + 1.0 - p)
            }
        };
        if self.p.size_aware {
            v * self.inv_bytes[l]
        } else {
            v
        }
    }

    /// The next chance of `layer`'s entries: its token, and the distance to it in layers
    /// (1..=n_layer in decode; in prefill every chance is the next token).
    #[inline(always)]
    fn chance(&self, layer: u32) -> (u32, u32) {
        let (t, c, n) = (self.pos.token as u32, self.pos.layer, self.n_layer);
        if layer > c {
            if self.pos.phase == Phase::Decode {
                (t, layer - c)
            } else {
                (t + 1, n + layer - c)
            }
        } else {
            (t + 1, n - c + layer)
        }
    }
}

impl Policy for HitDensity {
    fn name(&self) -> &'static str {
        self.name
    }

    fn attach(&mut self, geom: &Geometry, budget: u64) {
        let n = geom.n_entries();
        self.budget = budget as f32 / (1u32 << 20) as f32;
        self.n_expert = geom.n_expert();
        self.n_layer = geom.n_layer();
        self.bytes = (0..geom.n_layer()).map(|l| geom.entry_bytes(l) as f32 / (1u32 << 20) as f32).collect();
        self.hist = vec![0; n];
        self.ent = (0..n as u32).map(|id| Ent { layer: geom.layer_of(id), last: NEVER }).collect();
        self.lscore = vec![f64::NEG_INFINITY; n];
        let sbpo = f64::from(SB_PER_OCTAVE);
        self.sb_a = sbpo * std::f64::consts::LOG2_E;
        self.sb_b = self.sb_a * self.lambda;
        self.sb_c = 4.0 * sbpo;
        self.inv_bytes = self.bytes.iter().map(|b| 1.0 / b).collect();
        self.ln_bytes = self.bytes.iter().map(|&b| f64::from(b).ln()).collect();
        let nl = self.n_layer as usize;
        self.inv_frac = (0..2 * nl).map(|d| nl as f32 / d.max(1) as f32).collect();
        self.key_off = self.ln_bytes.iter().map(|lb| self.sb_a * lb + self.sb_c).collect();
        self.pending_state = vec![0; self.n_expert as usize];
        self.slot = vec![NEVER; n];
        self.order = PrioSet::new(n);
        self.n_states = match self.p.features {
            Features::Pattern => 256 * N_OLD + 1,
            Features::AgeScore => N_AGE * N_SB + 1,
        };
        self.n_tables = if self.p.per_layer { self.n_layer as usize + 1 } else { 1 };
        let m = self.n_states * self.n_tables;
        self.obs_n = vec![0.0; m];
        self.obs_h = vec![0.0; m];
        self.p_hit = vec![0.0; m];
        self.occ = vec![1.0; m];
        if let Some(seq) = self.pretrain.take() {
            self.learn_in_advance(&seq);
        }
        self.rebuild();
    }

    fn begin_layer(&mut self, pos: Position) {
        self.observe_pending();
        self.shortlist.clear();
        self.pos = pos;
        if pos.phase != Phase::Decode {
            return;
        }
        let t = pos.token as u32;
        if self.table_token != t {
            if self.table_token != NEVER {
                self.admit_rate =
                    if self.admit_rate == 0.0 { self.admitted } else { 0.9 * self.admit_rate + 0.1 * self.admitted };
            }
            self.admitted = 0.0;
            self.table_token = t;
            self.rebuild();
        }
        // Learn from one layer in `learn_every` (rotating with the token): the table needs a
        // sample of the routing, not all of it, and this loop is most of the fixed cost.
        let every = self.p.learn_every.max(1);
        if (pos.layer + t) % every != 0 {
            return;
        }
        let first = (pos.layer * self.n_expert) as usize;
        let n = self.n_expert as usize;
        if self.p.features == Features::AgeScore {
            // `state` inlined for the layer's experts: this loop is most of the fixed cost.
            let off = self.sb_c - self.sb_b * f64::from(t);
            let cold = (self.n_states - 1) as u16;
            let ents = &self.ent[first..first + n];
            let ls = &self.lscore[first..first + n];
            for ((st, en), &l) in self.pending_state.iter_mut().zip(ents).zip(ls) {
                *st = if en.last == NEVER {
                    cold
                } else {
                    let age = t.saturating_sub(en.last).clamp(1, N_AGE as u32) as usize - 1;
                    let x = self.sb_a * l + off;
                    let b = if x > 0.0 { ((x + 0.5) as usize).min(N_SB - 1) } else { 0 };
                    (b * N_AGE + age) as u16
                };
            }
        } else {
            for e in 0..n {
                self.pending_state[e] = self.state((first + e) as EntryId, t) as u16;
            }
        }
        self.pending = Some((t, pos.layer));
    }

    fn on_hit(&mut self, a: &Access, pos: &Position) {
        self.record_use(a, pos);
        self.reorder(a.id, a.seq);
    }

    fn on_insert(&mut self, a: &Access, pos: &Position) {
        self.record_use(a, pos);
        if pos.phase == Phase::Decode {
            self.admitted += self.bytes[(a.id / self.n_expert) as usize];
        }
        self.slot[a.id as usize] = self.resident.len() as u32;
        self.resident.push(a.id);
        self.reorder(a.id, a.seq);
    }

    fn on_remove(&mut self, id: EntryId) {
        let k = self.slot[id as usize] as usize;
        self.slot[id as usize] = NEVER;
        self.resident.swap_remove(k);
        if let Some(&moved) = self.resident.get(k) {
            self.slot[moved as usize] = k as u32;
        }
        if self.p.candidates > 0 {
            self.order.remove(id);
        }
    }

    fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        let mut best: Option<(f32, EntryId)> = None;
        if self.p.candidates > 0 {
            // A layer's further misses are served from the shortlist its first scan made (the
            // values of unpinned entries do not change within a layer).
            while let Some((_, id)) = self.shortlist.pop() {
                if self.slot[id as usize] != NEVER && !pins.contains(id) {
                    return Some(id);
                }
            }
            let fast = self.p.features == Features::AgeScore && self.n_tables == 1;
            let share = (self.resident.len() as f32 * self.p.candidate_share).ceil() as usize;
            let k = (self.p.candidates as usize).min(share.max(MIN_CANDIDATES));
            // The SHORTLIST least values, ascending; among equal values the first seen first.
            let mut short = [(0.0f32, 0 as EntryId); SHORTLIST];
            let mut n = 0;
            for (key, id) in self.order.unpinned(pins).take(k) {
                let v = if fast { self.density_keyed(key, id) } else { self.density(id) };
                if n == SHORTLIST && v >= short[n - 1].0 {
                    continue;
                }
                let mut j = n.min(SHORTLIST - 1);
                while j > 0 && short[j - 1].0 > v {
                    short[j] = short[j - 1];
                    j -= 1;
                }
                short[j] = (v, id);
                n = (n + 1).min(SHORTLIST);
            }
            self.shortlist.extend(short[..n].iter().rev());
            return self.shortlist.pop().map(|c| c.1);
        }
        let n = self.resident.len();
        if self.p.sample > 0 && n > self.p.sample as usize {
            for _ in 0..self.p.sample {
                // xorshift64*: deterministic, so replays repeat exactly.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                let id = self.resident[((r >> 32) as usize * n) >> 32];
                if pins.contains(id) {
                    continue;
                }
                let v = self.density(id);
                if best.is_none_or(|(bv, _)| v < bv) {
                    best = Some((v, id));
                }
            }
            if best.is_some() {
                return best.map(|b| b.1);
            }
        }
        for &id in &self.resident {
            if pins.contains(id) {
                continue;
            }
            let v = self.density(id);
            if best.is_none_or(|(bv, _)| v < bv) {
                best = Some((v, id));
            }
        }
        best.map(|b| b.1)
    }

    fn admit(&mut self, a: &Access, pos: &Position) -> bool {
        if !self.p.admission || pos.phase != Phase::Decode {
            return true;
        }
        // The newcomer's value after this use, against the cheapest resident entry.
        let mut probe_hist = self.hist[a.id as usize];
        let last = self.ent[a.id as usize].last;
        let t = pos.token as u32;
        probe_hist = match t.saturating_sub(last) {
            _ if last == NEVER => 1,
            d if d >= 32 => 1,
            d => (probe_hist << d) | 1,
        };
        let (h0, l0) = (self.hist[a.id as usize], last);
        self.hist[a.id as usize] = probe_hist;
        self.ent[a.id as usize].last = t;
        let mine = self.density(a.id);
        self.hist[a.id as usize] = h0;
        self.ent[a.id as usize].last = l0;
        let worst = self.resident.iter().map(|&id| self.density(id)).fold(f32::INFINITY, f32::min);
        let keep = mine >= worst;
        if !keep {
            self.record_use(a, pos);
        }
        keep
    }
}
