//! The replay tool's policies (feature `research`): the shipped ones and everything tried
//! around them, for `bmoe replay` and the docs' measurements. The parameter variants of `decay`
//! and `hd` that were rejected (kept with their numbers in docs/cache-policy.md), `s3-fifo`
//! (rejected), the offline references (`belady`, the partial oracles) and the proven upper
//! bound on any policy's decode hits (`opt-bound`), the plots, and the scale-out simulation
//! (`scaleout`: the same routing spread over N hosts). None of these is a choice of
//! `bmoe run --cache-policy`.

pub mod bound;
pub mod fifo;
pub mod oracle;
pub mod plot;
pub mod scaleout;

use std::fmt;
use std::str::FromStr;

use super::policy::{
    prio_set_methods, CachePolicy, Decay, DecayParams, Features, HdParams, HitDensity, Policy, PrioSet, Rank, DECAY, HD,
};
use super::replay::{replay_with, AccessStream, PinScope, ReplayReport};
use super::{Access, CacheError, EntryId, Geometry, Pins, Position};

/// A policy `bmoe replay --policy` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplayPolicy {
    /// A shipped policy.
    Shipped(CachePolicy),
    /// S3-FIFO (tried, rejected: [`fifo`]).
    S3Fifo,
    /// Offline furthest-next-use.
    Belady,
    /// A proven upper bound on any policy's decode hits (not a policy object: [`bound`]).
    Bound,
    /// Decayed frequency: one of [`DECAY_VARIANTS`] by index.
    Decay(u8),
    /// Learned hit density: one of [`HD_VARIANTS`] by index.
    Hd(u8),
    /// Offline partial oracle: one of [`ORACLE_VARIANTS`] by index.
    Oracle(u8),
}

/// The offline references besides `belady` (name, passes of foresight beyond the current
/// one); replay only. `oracle-hd-table` is `hd` with its table learned from the whole trace
/// first.
pub const ORACLE_VARIANTS: &[(&str, u32)] =
    &[("oracle-token", 0), ("oracle-next", 1), ("oracle-next-4", 4), ("oracle-hd-table", 0)];

/// The exploration's base: every resident entry ranked, learning from every layer.
const HD_SCAN: HdParams = HdParams { candidates: 0, candidate_share: 1.0, learn_every: 1, ..HD };

/// The second phase's base: the candidates of least decayed count only, learning from every layer.
const HD_CAND: HdParams = HdParams { candidate_share: 1.0, learn_every: 1, ..HD };

/// The learned hit-density variants tried besides the shipped `hd` (name, parameters).
pub const HD_VARIANTS: &[(&str, HdParams)] = &[
    // Rejected, kept for the record: the exploration that led to the shipped `hd`.
    ("hd-pat", HdParams { horizon: 16, features: Features::Pattern, ..HD_SCAN }),
    ("hd-pat-h4", HdParams { horizon: 4, features: Features::Pattern, ..HD_SCAN }),
    ("hd-pat-h8", HdParams { horizon: 8, features: Features::Pattern, ..HD_SCAN }),
    ("hd-pat-h32", HdParams { horizon: 32, features: Features::Pattern, ..HD_SCAN }),
    ("hd-pat-phit", HdParams { horizon: 16, rank: Rank::HitProb, features: Features::Pattern, ..HD_SCAN }),
    ("hd-pat-nopf", HdParams { horizon: 16, prefill_history: false, features: Features::Pattern, ..HD_SCAN }),
    ("hd-as", HdParams { horizon: 16, prefill_history: false, ..HD_SCAN }),
    ("hd-as-h4", HdParams { horizon: 4, prefill_history: false, ..HD_SCAN }),
    ("hd-as-h32", HdParams { horizon: 32, prefill_history: false, ..HD_SCAN }),
    ("hd-as-h64", HdParams { horizon: 64, prefill_history: false, ..HD_SCAN }),
    ("hd-as-phit", HdParams { horizon: 16, rank: Rank::HitProb, prefill_history: false, ..HD_SCAN }),
    ("hd-as-pf", HdParams { horizon: 16, ..HD_SCAN }),
    ("hd-as-pl", HdParams { horizon: 4, prefill_history: false, per_layer: true, ..HD_SCAN }),
    ("hd-as-pl-p16", HdParams { horizon: 4, prefill_history: false, prior: 16.0, per_layer: true, ..HD_SCAN }),
    ("hd-as-pl-pf", HdParams { horizon: 4, per_layer: true, ..HD_SCAN }),
    ("hd-as-h4-s64", HdParams { horizon: 4, prefill_history: false, sample: 64, ..HD_SCAN }),
    ("hd-as-h4-s32", HdParams { horizon: 4, prefill_history: false, sample: 32, ..HD_SCAN }),
    ("hd-as-h2", HdParams { horizon: 2, prefill_history: false, ..HD_SCAN }),
    ("hd-as-h4-pf", HdParams { horizon: 4, ..HD_SCAN }),
    ("hd-as-h4-g9", HdParams { horizon: 4, prefill_history: false, gamma: 0.9, ..HD_SCAN }),
    ("hd-as-h4-g98", HdParams { horizon: 4, prefill_history: false, gamma: 0.98, ..HD_SCAN }),
    ("hd-as-ah1", HdParams { horizon: 4, horizon_scale: 1.0, ..HD_SCAN }),
    ("hd-as-ah05", HdParams { horizon: 4, horizon_scale: 0.5, ..HD_SCAN }),
    ("hd-as-ah2", HdParams { horizon: 4, horizon_scale: 2.0, ..HD_SCAN }),
    ("hd-as-ah1-g98", HdParams { horizon: 4, gamma: 0.98, horizon_scale: 1.0, ..HD_SCAN }),
    ("hd-hits-h8", HdParams { horizon: 8, rank: Rank::Hits, ..HD_SCAN }),
    ("hd-hits-h16", HdParams { horizon: 16, rank: Rank::Hits, ..HD_SCAN }),
    ("hd-hits-h32", HdParams { horizon: 32, rank: Rank::Hits, ..HD_SCAN }),
    ("hd-hits-ah1", HdParams { horizon: 8, rank: Rank::Hits, horizon_scale: 1.0, ..HD_SCAN }),
    ("hd-hits-ah2", HdParams { horizon: 8, rank: Rank::Hits, horizon_scale: 2.0, ..HD_SCAN }),
    ("hd-as-ah05-c16", HdParams { horizon: 4, candidates: 16, horizon_scale: 0.5, ..HD_CAND }),
    ("hd-as-ah05-c64", HdParams { horizon: 4, candidates: 64, horizon_scale: 0.5, ..HD_CAND }),
    ("hd-hits-ah1-c16", HdParams { horizon: 8, rank: Rank::Hits, candidates: 16, horizon_scale: 1.0, ..HD_CAND }),
    ("hd-hits-ah1-c64", HdParams { horizon: 8, rank: Rank::Hits, candidates: 64, horizon_scale: 1.0, ..HD_CAND }),
    ("hd-as-ah05-c32", HdParams { horizon: 4, candidates: 32, horizon_scale: 0.5, ..HD_CAND }),
    ("hd-as-ah05-c128", HdParams { horizon: 4, horizon_scale: 0.5, ..HD_CAND }),
    ("hd-as-ah05-c256", HdParams { horizon: 4, candidates: 256, horizon_scale: 0.5, ..HD_CAND }),
    ("hd-as-ah025-c64", HdParams { horizon: 4, candidates: 64, horizon_scale: 0.25, ..HD_CAND }),
    ("hd-as-ah10-c64", HdParams { horizon: 4, candidates: 64, horizon_scale: 1.0, ..HD_CAND }),
    ("hd-as-h4-c64", HdParams { horizon: 4, candidates: 64, ..HD_CAND }),
    ("hd-as-h2-c64", HdParams { horizon: 2, candidates: 64, ..HD_CAND }),
    ("hd-as-h1-c64", HdParams { candidates: 64, ..HD_CAND }),
    ("hd-phit-h4-c64", HdParams { horizon: 4, rank: Rank::HitProb, candidates: 64, ..HD_CAND }),
    ("hd-phit-h1-c64", HdParams { rank: Rank::HitProb, candidates: 64, ..HD_CAND }),
    (
        "hd-pat-c64",
        HdParams {
            horizon: 4,
            prefill_history: false,
            features: Features::Pattern,
            candidates: 64,
            horizon_scale: 0.5,
            ..HD_CAND
        },
    ),
    ("hd-as-h1-c32", HdParams { candidates: 32, ..HD_CAND }),
    ("hd-as-h1-c128", HD_CAND),
    ("hd-nu-c64", HdParams { rank: Rank::NextUse, candidates: 64, ..HD_CAND }),
    ("hd-nu-c128", HdParams { rank: Rank::NextUse, ..HD_CAND }),
    ("hd-as-h1-c64-pl", HdParams { prior: 16.0, per_layer: true, candidates: 64, ..HD_CAND }),
    ("hd-as-h1-c64-g9", HdParams { gamma: 0.9, candidates: 64, ..HD_CAND }),
    ("hd-as-h1-c64-g98", HdParams { gamma: 0.98, candidates: 64, ..HD_CAND }),
    ("hd-as-h1-c64-nopf", HdParams { prefill_history: false, candidates: 64, ..HD_CAND }),
    ("hd-as-h1-c128-q4", HdParams { learn_every: 1, ..HD }),
    ("hd-as-h1-c128-q8", HdParams { candidate_share: 0.125, learn_every: 1, ..HD }),
    ("hd-as-h1-c256-q8", HdParams { candidates: 256, candidate_share: 0.125, learn_every: 1, ..HD }),
    ("hd-as-h1-c256-q16", HdParams { candidates: 256, candidate_share: 0.0625, learn_every: 1, ..HD }),
    ("hd-as-h1-c128-q4-l4", HdParams { learn_every: 4, ..HD }),
    ("hd-as-h1-c128-q4-l8", HdParams { learn_every: 8, ..HD }),
    ("hd-c96", HdParams { candidates: 96, ..HD }),
    ("hd-c64", HdParams { candidates: 64, ..HD }),
    ("hd-g93", HdParams { gamma: 0.93, ..HD }),
    ("hd-g97", HdParams { gamma: 0.97, ..HD }),
    ("hd-prior1", HdParams { prior: 1.0, ..HD }),
    ("hd-prior16", HdParams { prior: 16.0, ..HD }),
    ("hd-adm", HdParams { admission: true, ..HD }),
    ("hd-nosize", HdParams { size_aware: false, ..HD }),
    ("hd-pat-adm", HdParams { horizon: 16, admission: true, features: Features::Pattern, ..HD_SCAN }),
];

/// The decayed-frequency variants tried besides the shipped `decay` (name, parameters).
pub const DECAY_VARIANTS: &[(&str, DecayParams)] = &[
    // Rejected, kept for the record (numbers in docs/cache-policy.md): the shipped `decay` with
    // one or two parameters moved.
    ("decay-0.5", DecayParams { gamma: 0.5, ..DECAY }),
    ("decay-0.8", DecayParams { gamma: 0.8, ..DECAY }),
    ("decay-0.8-lru-ties", DecayParams { gamma: 0.8, mru_ties: false, ..DECAY }),
    ("decay-0.9", DecayParams { gamma: 0.9, ..DECAY }),
    ("decay-0.97", DecayParams { gamma: 0.97, ..DECAY }),
    ("decay-0.99", DecayParams { gamma: 0.99, ..DECAY }),
    ("decay-nosize", DecayParams { size_aware: false, ..DECAY }),
    ("decay-rank", DecayParams { rank_slope: 0.3, ..DECAY }),
    ("decay-pf1", DecayParams { prefill_weight: 1.0, ..DECAY }),
    ("decay-adm-1", DecayParams { admission: true, admit_credit: 1.0, ..DECAY }),
    ("decay-adm-2", DecayParams { admission: true, admit_credit: 2.0, ..DECAY }),
    ("decay-adm-0.5", DecayParams { admission: true, admit_credit: 0.5, ..DECAY }),
    ("decay-adm-0.25", DecayParams { admission: true, admit_credit: 0.25, ..DECAY }),
    ("decay-0.8-adm-0.6", DecayParams { gamma: 0.8, admission: true, admit_credit: 0.6, ..DECAY }),
];

impl ReplayPolicy {
    /// Every policy, in the order reports list them.
    pub fn all() -> Vec<ReplayPolicy> {
        let mut v = vec![
            ReplayPolicy::Shipped(CachePolicy::Lru),
            ReplayPolicy::Shipped(CachePolicy::Lfu),
            ReplayPolicy::Shipped(CachePolicy::PerLayer),
            ReplayPolicy::Belady,
            ReplayPolicy::Bound,
            ReplayPolicy::S3Fifo,
            ReplayPolicy::Shipped(CachePolicy::Decay),
        ];
        v.extend((0..DECAY_VARIANTS.len()).map(|i| ReplayPolicy::Decay(i as u8)));
        v.push(ReplayPolicy::Shipped(CachePolicy::Hd));
        v.extend((0..HD_VARIANTS.len()).map(|i| ReplayPolicy::Hd(i as u8)));
        v.extend((0..ORACLE_VARIANTS.len()).map(|i| ReplayPolicy::Oracle(i as u8)));
        v
    }

    /// The name `--policy` takes.
    pub fn name(self) -> &'static str {
        match self {
            ReplayPolicy::Shipped(p) => p.name(),
            ReplayPolicy::S3Fifo => "s3-fifo",
            ReplayPolicy::Belady => "belady",
            ReplayPolicy::Bound => bound::NAME,
            ReplayPolicy::Decay(i) => DECAY_VARIANTS[i as usize].0,
            ReplayPolicy::Hd(i) => HD_VARIANTS[i as usize].0,
            ReplayPolicy::Oracle(i) => ORACLE_VARIANTS[i as usize].0,
        }
    }

    /// Whether it needs the future.
    pub fn is_offline(self) -> bool {
        matches!(self, ReplayPolicy::Belady | ReplayPolicy::Bound | ReplayPolicy::Oracle(_))
    }

    /// A fresh policy object that may see the whole access `sequence` (entry ids, indexed by
    /// [`Access::seq`]); `None` for [`ReplayPolicy::Bound`], which is computed, not replayed
    /// through the cache ([`replay`] does both).
    pub fn build_offline(self, sequence: &[EntryId]) -> Option<Box<dyn Policy>> {
        Some(match self {
            ReplayPolicy::Shipped(p) => p.build().expect("shipped policies always build"),
            ReplayPolicy::S3Fifo => Box::new(fifo::S3Fifo::default()),
            ReplayPolicy::Belady => Box::new(Belady::new(sequence)),
            ReplayPolicy::Bound => return None,
            ReplayPolicy::Decay(i) => {
                let (name, p) = DECAY_VARIANTS[i as usize];
                Box::new(Decay::new(name, p))
            }
            ReplayPolicy::Hd(i) => {
                let (name, p) = HD_VARIANTS[i as usize];
                Box::new(HitDensity::new(name, p))
            }
            ReplayPolicy::Oracle(i) => match ORACLE_VARIANTS[i as usize] {
                // `hd` with its table learned from the whole trace in advance.
                ("oracle-hd-table", _) => Box::new(HitDensity::pretrained("oracle-hd-table", HD, sequence)),
                (name, ahead) => Box::new(oracle::PartialOracle::new(name, ahead, sequence)),
            },
        })
    }
}

impl fmt::Display for ReplayPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReplayPolicy {
    type Err = CacheError;
    fn from_str(s: &str) -> Result<Self, CacheError> {
        let all = ReplayPolicy::all();
        all.iter().copied().find(|p| p.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| CacheError::UnknownPolicy {
            name: super::trace::excerpt(s),
            known: all.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// Replay `stream` through a cache of `budget` bytes evicting by `policy` (for
/// [`ReplayPolicy::Bound`]: compute the bound instead; `scope` does not apply to it).
pub fn replay(stream: &AccessStream, budget: u64, policy: ReplayPolicy, scope: PinScope) -> ReplayReport {
    match policy.build_offline(&stream.sequence) {
        Some(p) => replay_with(stream, budget, p, scope),
        None => bound::replay(stream, budget),
    }
}

/// Bélády's furthest-next-use, offline: evict the unpinned entry whose next access is
/// furthest in the future (never-again first). Optimal for uniform entry sizes (Bélády 1966);
/// with variable sizes the exact optimum is NP-hard and this is *not* a proven bound (entries
/// here differ by at most ~20 %). No bypass: every miss is kept, as for the online policies.
#[derive(Debug)]
pub struct Belady {
    /// `next_use[seq]`: the seq of the next access to the same entry, `u64::MAX` for none.
    next_use: Vec<u64>,
    set: PrioSet,
}

impl Belady {
    /// Bélády over an access sequence given as entry ids in order (`seq` indexes it).
    pub fn new(sequence: &[EntryId]) -> Self {
        let mut next_use = vec![u64::MAX; sequence.len()];
        let mut last: std::collections::HashMap<EntryId, u64> = std::collections::HashMap::new();
        for (i, &id) in sequence.iter().enumerate().rev() {
            if let Some(&n) = last.get(&id) {
                next_use[i] = n;
            }
            last.insert(id, i as u64);
        }
        Self { next_use, set: PrioSet::default() }
    }

    fn touch(&mut self, a: &Access) {
        let n = self.next_use.get(a.seq as usize).copied().unwrap_or(u64::MAX);
        // Furthest first out: priority is minus the next use.
        self.set.set(a.id, -(n as f64), 0);
    }
}

impl Policy for Belady {
    fn name(&self) -> &'static str {
        "belady"
    }
    fn attach(&mut self, geom: &Geometry, _budget: u64) {
        self.set = PrioSet::new(geom.n_entries());
    }
    prio_set_methods!(self, a, _pos => self.touch(a));
}
