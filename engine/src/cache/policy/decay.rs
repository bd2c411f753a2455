//! `decay`: decayed frequency, a recency-weighted use count per byte. The research tool keeps
//! the parameter variants that were tried and rejected (`cache::research`).

use super::{prio_set_methods, Policy, PrioSet};
use crate::cache::{Access, EntryId, Geometry, Phase, Pins, Position};

/// Parameters of the decayed-frequency family ([`Decay`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecayParams {
    /// Per-token retention of an access's weight (1 = LFU, 0 = LRU).
    pub gamma: f64,
    /// Weight of a prefill access relative to a decode one.
    pub prefill_weight: f64,
    /// Divide the value by the entry's size (value per byte).
    pub size_aware: bool,
    /// Refuse a miss whose value would be below the current victim's.
    pub admission: bool,
    /// Weight an access by its router rank: `1 / (1 + rank_slope * rank)`.
    pub rank_slope: f64,
    /// With `admission`: the value credited to a missed entry beyond its decayed history.
    pub admit_credit: f64,
    /// Among equal priorities evict the most recently used (the entry whose layer was just
    /// computed, so whose next chance is furthest): the cycle-aware tie-break.
    pub mru_ties: bool,
}

/// Decayed frequency (LRFU-like): each access adds a weight to an entry's score and the score
/// decays by `gamma` per token, so the score is a recency-weighted use count. The priority is
/// stored as `ln(score) + ln(1/gamma) * token_of_last_update`, which orders entries exactly
/// by their current decayed score and only changes when the entry is accessed, so one ordered
/// set serves every eviction. Counts survive eviction (the key space is small and dense).
#[derive(Debug)]
pub struct Decay {
    name: &'static str,
    p: DecayParams,
    lambda: f64,
    score: Vec<f64>,
    t_last: Vec<f64>,
    bytes: Vec<f64>,
    n_expert: u32,
    set: PrioSet,
}

impl Decay {
    /// A decayed-frequency policy under `name`.
    pub fn new(name: &'static str, p: DecayParams) -> Self {
        let lambda = if p.gamma >= 1.0 { 0.0 } else { -p.gamma.max(1e-9).ln() };
        Self {
            name,
            p,
            lambda,
            score: Vec::new(),
            t_last: Vec::new(),
            bytes: Vec::new(),
            n_expert: 1,
            set: PrioSet::default(),
        }
    }

    fn weight(&self, a: &Access, pos: &Position) -> f64 {
        let w = if pos.phase == Phase::Prefill { self.p.prefill_weight } else { 1.0 };
        w / (1.0 + self.p.rank_slope * f64::from(a.rank))
    }

    /// The log-priority an entry would have after an access now (without storing it).
    fn prio_after(&self, a: &Access, pos: &Position) -> f64 {
        let i = a.id as usize;
        let t = pos.token as f64;
        let decayed = self.score[i] * (-self.lambda * (t - self.t_last[i])).exp();
        let s = decayed + self.weight(a, pos);
        let mut p = s.max(1e-12).ln() + self.lambda * t;
        if self.p.size_aware {
            p -= self.bytes[(a.id / self.n_expert) as usize].ln();
        }
        p
    }

    fn touch(&mut self, a: &Access, pos: &Position) {
        let i = a.id as usize;
        let t = pos.token as f64;
        let p = self.prio_after(a, pos);
        self.score[i] = self.score[i] * (-self.lambda * (t - self.t_last[i])).exp() + self.weight(a, pos);
        self.t_last[i] = t;
        let tie = if self.p.mru_ties { u64::MAX - a.seq } else { a.seq };
        self.set.set(a.id, p, tie);
    }
}

impl Policy for Decay {
    fn name(&self) -> &'static str {
        self.name
    }
    fn attach(&mut self, geom: &Geometry, _budget: u64) {
        let n = geom.n_entries();
        self.score = vec![0.0; n];
        self.t_last = vec![0.0; n];
        self.bytes = (0..geom.n_layer()).map(|l| geom.entry_bytes(l) as f64).collect();
        self.n_expert = geom.n_expert();
        self.set = PrioSet::new(n);
    }
    prio_set_methods!(self, a, pos => self.touch(a, pos));
    fn admit(&mut self, a: &Access, pos: &Position) -> bool {
        if !self.p.admission {
            return true;
        }
        // Compare with the entry that would go: keep the newcomer only if it is worth more.
        // The pinned set is not visible here, so the cheapest entry overall is the bar: a
        // conservative choice (the real victim is worth at least as much).
        let i = a.id as usize;
        let t = pos.token as f64;
        let hist = self.score[i] * (-self.lambda * (t - self.t_last[i])).exp();
        let mut p = (hist + self.p.admit_credit).max(1e-12).ln() + self.lambda * t;
        if self.p.size_aware {
            p -= self.bytes[(a.id / self.n_expert) as usize].ln();
        }
        let keep = match self.set.set.first() {
            Some(v) => p >= v.0,
            None => true,
        };
        if !keep {
            // A refused access is still a use: record it, or an entry that keeps coming back
            // would be refused forever.
            self.score[i] = hist + self.weight(a, pos);
            self.t_last[i] = t;
        }
        keep
    }
}

/// The parameters of the shipped `decay`.
pub const DECAY: DecayParams = DecayParams {
    gamma: 0.95,
    prefill_weight: 0.3,
    size_aware: true,
    admission: false,
    rank_slope: 0.0,
    admit_credit: 0.0,
    mru_ties: true,
};
