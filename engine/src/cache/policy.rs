//! Eviction policies: which unpinned entry goes when a miss needs room, and whether a missed
//! entry is worth keeping at all (admission control).
//!
//! A [`Policy`] is a trait object behind the cache: one virtual call per event is a few
//! nanoseconds against a budget of a microsecond per access, and it lets `bmoe replay` run
//! every policy through the same [`super::ExpertCache`] the streamer uses. Policies keep their
//! per-entry state in flat arrays indexed by [`EntryId`], sized once in [`Policy::attach`].
//!
//! What routing gives a policy to work with (see docs/cache-policy.md for the measurements):
//! layers are visited in a fixed cycle, so an entry's next possible use is its layer in the
//! next token, and global LRU, which evicts the oldest entry, evicts exactly the one needed
//! soonest (0 % hits under one token cycle); per-layer popularity is very skewed in some
//! layers and flat in others, and drifts slowly; 38 % of decode accesses repeat an entry of the
//! previous token.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use super::learned::{Features, HdParams, HitDensity, Rank, HD};
use super::oracle::PartialOracle;
use super::{Access, CacheError, EntryId, Geometry, Phase, Pins, Position};

/// An eviction policy. Called by [`super::ExpertCache`] only; every `id` it is given is in
/// range of the geometry passed to [`Policy::attach`].
pub trait Policy: fmt::Debug + Send {
    /// Short name, as `--cache-policy` spells it.
    fn name(&self) -> &'static str;
    /// Size per-entry state for this geometry and budget. Called once, before any event.
    fn attach(&mut self, geom: &Geometry, budget: u64);
    /// The decoder moved to a new (token, layer).
    fn begin_layer(&mut self, _pos: Position) {}
    /// A resident entry was accessed.
    fn on_hit(&mut self, a: &Access, pos: &Position);
    /// Whether to keep a missed entry (`false`: it is held only while pinned, and goes first).
    fn admit(&mut self, _a: &Access, _pos: &Position) -> bool {
        true
    }
    /// A kept entry became resident (it is pinned, and it was just accessed).
    fn on_insert(&mut self, a: &Access, pos: &Position);
    /// A kept entry was evicted.
    fn on_remove(&mut self, id: EntryId);
    /// The entry to evict to make room, never a pinned one; `None` if every kept entry is pinned.
    fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId>;
    /// An entry the policy wants gone before `incoming` is kept even if the budget has room
    /// (quota-based policies); `None` when nothing must go. Never a pinned one.
    fn quota_victim(&mut self, _incoming: &Access, _pins: Pins<'_>) -> Option<EntryId> {
        None
    }
}

/// The access and eviction methods of a policy that keeps its evictable entries ordered in a
/// [`PrioSet`] (`self.set`) and re-scores an entry on every access (hit or insert) with `$touch`.
macro_rules! prio_set_methods {
    ($self:ident, $a:ident, $pos:ident => $touch:expr) => {
        fn on_hit(&mut $self, $a: &Access, $pos: &Position) {
            $touch;
        }
        fn on_insert(&mut $self, $a: &Access, $pos: &Position) {
            $touch;
        }
        fn on_remove(&mut self, id: EntryId) {
            self.set.remove(id);
        }
        fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
            self.set.min_unpinned(pins)
        }
    };
}

pub(super) const NIL: u32 = u32::MAX;

/// Intrusive doubly linked lists over entry ids (several lists share the link arrays; an id
/// is in at most one list). Head = most recent, tail = least recent.
#[derive(Clone, Debug, Default)]
pub(super) struct Lists {
    pub(super) prev: Vec<u32>,
    pub(super) head: Vec<u32>,
    pub(super) tail: Vec<u32>,
    next: Vec<u32>,
}

impl Lists {
    pub(super) fn new(n_entries: usize, n_lists: usize) -> Self {
        Self {
            prev: vec![NIL; n_entries],
            next: vec![NIL; n_entries],
            head: vec![NIL; n_lists],
            tail: vec![NIL; n_lists],
        }
    }

    pub(super) fn push_front(&mut self, l: usize, id: u32) {
        let h = self.head[l];
        self.prev[id as usize] = NIL;
        self.next[id as usize] = h;
        if h != NIL {
            self.prev[h as usize] = id;
        } else {
            self.tail[l] = id;
        }
        self.head[l] = id;
    }

    pub(super) fn unlink(&mut self, l: usize, id: u32) {
        let (p, n) = (self.prev[id as usize], self.next[id as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.head[l] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            self.tail[l] = p;
        }
    }

    /// Least recent unpinned id of list `l`.
    fn lru_unpinned(&self, l: usize, pins: Pins<'_>) -> Option<u32> {
        let mut c = self.tail[l];
        while c != NIL {
            if !pins.contains(c) {
                return Some(c);
            }
            c = self.prev[c as usize];
        }
        None
    }
}

/// Global LRU: evict the least recently used unpinned entry.
#[derive(Debug, Default)]
pub struct Lru {
    lists: Lists,
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }
    fn attach(&mut self, geom: &Geometry, _budget: u64) {
        self.lists = Lists::new(geom.n_entries(), 1);
    }
    fn on_hit(&mut self, a: &Access, _pos: &Position) {
        self.lists.unlink(0, a.id);
        self.lists.push_front(0, a.id);
    }
    fn on_insert(&mut self, a: &Access, _pos: &Position) {
        self.lists.push_front(0, a.id);
    }
    fn on_remove(&mut self, id: EntryId) {
        self.lists.unlink(0, id);
    }
    fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        self.lists.lru_unpinned(0, pins)
    }
}

/// Per-layer partition: each layer owns `budget / n_layer` bytes and runs LRU inside it. A
/// layer whose own pinned entries exceed its share overflows it (the cache's overflow rule).
#[derive(Debug, Default)]
pub struct PerLayerLru {
    lists: Lists,
    n_expert: u32,
    quota: u64,
    used: Vec<u64>,
    bytes: Vec<u64>,
}

impl Policy for PerLayerLru {
    fn name(&self) -> &'static str {
        "per-layer"
    }
    fn attach(&mut self, geom: &Geometry, budget: u64) {
        let nl = geom.n_layer() as usize;
        self.lists = Lists::new(geom.n_entries(), nl);
        self.n_expert = geom.n_expert();
        self.quota = budget / nl as u64;
        self.used = vec![0; nl];
        self.bytes = (0..geom.n_layer()).map(|l| geom.entry_bytes(l)).collect();
    }
    fn on_hit(&mut self, a: &Access, _pos: &Position) {
        let l = (a.id / self.n_expert) as usize;
        self.lists.unlink(l, a.id);
        self.lists.push_front(l, a.id);
    }
    fn on_insert(&mut self, a: &Access, _pos: &Position) {
        let l = (a.id / self.n_expert) as usize;
        self.lists.push_front(l, a.id);
        self.used[l] += self.bytes[l];
    }
    fn on_remove(&mut self, id: EntryId) {
        let l = (id / self.n_expert) as usize;
        self.lists.unlink(l, id);
        self.used[l] -= self.bytes[l];
    }
    fn quota_victim(&mut self, a: &Access, pins: Pins<'_>) -> Option<EntryId> {
        let l = (a.id / self.n_expert) as usize;
        if self.used[l] + self.bytes[l] > self.quota {
            self.lists.lru_unpinned(l, pins)
        } else {
            None
        }
    }
    fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        // Only reached when other layers overflowed: take from the layer most over its share.
        let mut order: Vec<usize> = (0..self.used.len()).collect();
        order.sort_by_key(|&l| std::cmp::Reverse(self.used[l]));
        order.into_iter().find_map(|l| self.lists.lru_unpinned(l, pins))
    }
}

/// An f64 priority with a total order, ties broken by a sequence number then the id.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Prio(f64, u64, EntryId);

impl Eq for Prio {}
impl PartialOrd for Prio {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Prio {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1)).then(self.2.cmp(&other.2))
    }
}

/// A set of resident entries ordered by priority (lowest evicted first).
#[derive(Debug, Default)]
pub(super) struct PrioSet {
    set: BTreeSet<Prio>,
    cur: Vec<Option<Prio>>,
}

impl PrioSet {
    pub(super) fn new(n: usize) -> Self {
        Self { set: BTreeSet::new(), cur: vec![None; n] }
    }
    pub(super) fn set(&mut self, id: EntryId, p: f64, tie: u64) {
        let np = Prio(p, tie, id);
        if let Some(old) = self.cur[id as usize].replace(np) {
            self.set.remove(&old);
        }
        self.set.insert(np);
    }
    pub(super) fn remove(&mut self, id: EntryId) {
        if let Some(old) = self.cur[id as usize].take() {
            self.set.remove(&old);
        }
    }
    fn min_unpinned(&self, pins: Pins<'_>) -> Option<EntryId> {
        self.set.iter().map(|p| p.2).find(|&id| !pins.contains(id))
    }
    /// Unpinned entries with their priority, lowest first.
    pub(super) fn unpinned<'a>(&'a self, pins: Pins<'a>) -> impl Iterator<Item = (f64, EntryId)> + 'a {
        self.set.iter().filter(move |p| !pins.contains(p.2)).map(|p| (p.0, p.2))
    }
}

/// LFU with perfect history: evict the unpinned entry with the fewest decode accesses since
/// the start (counts survive eviction), least recently used first among equals. Prefill
/// accesses admit entries but do not count (that reproduces the reference LFU curve).
#[derive(Debug, Default)]
pub struct Lfu {
    count: Vec<u64>,
    set: PrioSet,
}

impl Lfu {
    fn touch(&mut self, a: &Access, pos: &Position) {
        if pos.phase == Phase::Decode {
            self.count[a.id as usize] += 1;
        }
        self.set.set(a.id, self.count[a.id as usize] as f64, a.seq);
    }
}

impl Policy for Lfu {
    fn name(&self) -> &'static str {
        "lfu"
    }
    fn attach(&mut self, geom: &Geometry, _budget: u64) {
        self.count = vec![0; geom.n_entries()];
        self.set = PrioSet::new(geom.n_entries());
    }
    prio_set_methods!(self, a, pos => self.touch(a, pos));
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

/// The policies `--cache-policy` and `bmoe replay --policy` know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CachePolicy {
    /// Global least-recently-used.
    Lru,
    /// Least-frequently-used with perfect history.
    Lfu,
    /// Per-layer partition, LRU inside each layer's share.
    PerLayer,
    /// S3-FIFO (tried, rejected: [`super::fifo`]).
    S3Fifo,
    /// Offline furthest-next-use (replay only).
    Belady,
    /// A proven upper bound on any policy's decode hits (replay only; not a policy object:
    /// [`super::bound`]).
    Bound,
    /// Decayed frequency: one of [`DECAY_VARIANTS`] by index.
    Decay(u8),
    /// Learned hit density: one of [`HD_VARIANTS`] by index.
    Hd(u8),
    /// Offline partial oracle (replay only): one of [`ORACLE_VARIANTS`] by index.
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

/// The learned hit-density variants tried (name, parameters); the replay tool keeps them all.
pub const HD_VARIANTS: &[(&str, HdParams)] = &[
    // The best found (numbers in docs/cache-policy.md).
    ("hd", HD),
    // Rejected, kept for the record: the exploration that led to it.
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

/// The decayed-frequency variants tried (name, parameters); the replay tool keeps them all.
pub const DECAY_VARIANTS: &[(&str, DecayParams)] = &[
    // The default: kept.
    (
        "decay",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    // Rejected, kept for the record (numbers in docs/cache-policy.md).
    (
        "decay-0.5",
        DecayParams {
            gamma: 0.5,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-0.8",
        DecayParams {
            gamma: 0.8,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-0.8-lru-ties",
        DecayParams {
            gamma: 0.8,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: false,
        },
    ),
    (
        "decay-0.9",
        DecayParams {
            gamma: 0.9,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-0.97",
        DecayParams {
            gamma: 0.97,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-0.99",
        DecayParams {
            gamma: 0.99,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-nosize",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: false,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-rank",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: true,
            admission: false,
            rank_slope: 0.3,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-pf1",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 1.0,
            size_aware: true,
            admission: false,
            rank_slope: 0.0,
            admit_credit: 0.0,
            mru_ties: true,
        },
    ),
    (
        "decay-adm-1",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: true,
            admission: true,
            rank_slope: 0.0,
            admit_credit: 1.0,
            mru_ties: true,
        },
    ),
    (
        "decay-adm-2",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: true,
            admission: true,
            rank_slope: 0.0,
            admit_credit: 2.0,
            mru_ties: true,
        },
    ),
    (
        "decay-adm-0.5",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: true,
            admission: true,
            rank_slope: 0.0,
            admit_credit: 0.5,
            mru_ties: true,
        },
    ),
    (
        "decay-adm-0.25",
        DecayParams {
            gamma: 0.95,
            prefill_weight: 0.3,
            size_aware: true,
            admission: true,
            rank_slope: 0.0,
            admit_credit: 0.25,
            mru_ties: true,
        },
    ),
    (
        "decay-0.8-adm-0.6",
        DecayParams {
            gamma: 0.8,
            prefill_weight: 0.3,
            size_aware: true,
            admission: true,
            rank_slope: 0.0,
            admit_credit: 0.6,
            mru_ties: true,
        },
    ),
];

impl CachePolicy {
    /// Every policy, in the order reports list them.
    pub fn all() -> Vec<CachePolicy> {
        let mut v =
            vec![CachePolicy::Lru, CachePolicy::Lfu, CachePolicy::PerLayer, CachePolicy::Belady, CachePolicy::Bound];
        v.push(CachePolicy::S3Fifo);
        v.extend((0..DECAY_VARIANTS.len()).map(|i| CachePolicy::Decay(i as u8)));
        v.extend((0..HD_VARIANTS.len()).map(|i| CachePolicy::Hd(i as u8)));
        v.extend((0..ORACLE_VARIANTS.len()).map(|i| CachePolicy::Oracle(i as u8)));
        v
    }

    /// The default for `--cache-policy`.
    pub const DEFAULT: CachePolicy = CachePolicy::Hd(0);

    /// The name `--cache-policy` takes.
    pub fn name(self) -> &'static str {
        match self {
            CachePolicy::Lru => "lru",
            CachePolicy::Lfu => "lfu",
            CachePolicy::PerLayer => "per-layer",
            CachePolicy::S3Fifo => "s3-fifo",
            CachePolicy::Belady => "belady",
            CachePolicy::Bound => super::bound::NAME,
            CachePolicy::Decay(i) => DECAY_VARIANTS[i as usize].0,
            CachePolicy::Hd(i) => HD_VARIANTS[i as usize].0,
            CachePolicy::Oracle(i) => ORACLE_VARIANTS[i as usize].0,
        }
    }

    /// Whether it needs the future (usable only in replay).
    pub fn is_offline(self) -> bool {
        matches!(self, CachePolicy::Belady | CachePolicy::Bound | CachePolicy::Oracle(_))
    }

    /// A fresh online policy object.
    ///
    /// # Errors
    /// [`CacheError::OfflineOnly`] for [`CachePolicy::Belady`]; use [`Self::build_offline`].
    pub fn build(self) -> Result<Box<dyn Policy>, CacheError> {
        Ok(match self {
            CachePolicy::Lru => Box::new(Lru::default()),
            CachePolicy::Lfu => Box::new(Lfu::default()),
            CachePolicy::PerLayer => Box::new(PerLayerLru::default()),
            CachePolicy::S3Fifo => Box::new(super::fifo::S3Fifo::default()),
            CachePolicy::Decay(i) => {
                let (name, p) = DECAY_VARIANTS[i as usize];
                Box::new(Decay::new(name, p))
            }
            CachePolicy::Hd(i) => {
                let (name, p) = HD_VARIANTS[i as usize];
                Box::new(HitDensity::new(name, p))
            }
            CachePolicy::Belady | CachePolicy::Bound | CachePolicy::Oracle(_) => {
                return Err(CacheError::OfflineOnly { name: self.name().into() })
            }
        })
    }

    /// A fresh policy object that may see the whole access `sequence` (entry ids, indexed by
    /// [`Access::seq`]); `None` for [`CachePolicy::Bound`], which is computed, not replayed
    /// through the cache ([`super::replay::replay`] does both).
    pub fn build_offline(self, sequence: &[EntryId]) -> Option<Box<dyn Policy>> {
        Some(match self {
            CachePolicy::Belady => Box::new(Belady::new(sequence)),
            CachePolicy::Bound => return None,
            CachePolicy::Oracle(i) => match ORACLE_VARIANTS[i as usize] {
                // `hd` with its table learned from the whole trace in advance.
                ("oracle-hd-table", _) => Box::new(HitDensity::pretrained("oracle-hd-table", HD, sequence)),
                (name, ahead) => Box::new(PartialOracle::new(name, ahead, sequence)),
            },
            other => other.build().expect("online policies always build"),
        })
    }
}

impl fmt::Display for CachePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CachePolicy {
    type Err = CacheError;
    fn from_str(s: &str) -> Result<Self, CacheError> {
        let all = CachePolicy::all();
        all.iter().copied().find(|p| p.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| CacheError::UnknownPolicy {
            name: s.to_string(),
            known: all.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
        })
    }
}
