//! The expert cache's bookkeeping: which (layer, expert) entries are resident, which are
//! pinned by the token being computed, how many bytes they hold against the budget, and the
//! hit/miss/eviction counters. *Which* entry to drop is delegated to a [`Policy`].
//!
//! The cache knows nothing of buffers or I/O: the streamer owns the slot pool and asks this
//! module what to keep, what to read and what it may overwrite. Keeping the two apart lets the
//! same code run under `bmoe replay` on a recorded routing trace at millions of accesses per
//! second, so a policy is chosen on real routing, and then drive the real pool unchanged.
//!
//! Trade-off: the key space is dense and known at open (`n_layer × n_expert`, a few thousand
//! entries), so all per-entry state lives in flat arrays indexed by [`EntryId`] instead of
//! hash maps: O(1) lookups with no hashing and no allocation per access, at the price of a
//! few bytes per *possible* entry whether or not it is ever resident.
//!
//! Admission: every miss is read into the pool, so it holds budget while its token pins it.
//! When keeping it would cost a kept entry, the policy may refuse to *keep* it: it is then held
//! as *transient*, the first thing evicted once unpinned, so it displaces at most one kept
//! entry once instead of settling in. A pinned set that alone exceeds the
//! budget (a budget under one layer's top-k) overflows the budget rather than failing; the
//! overflow is counted ([`Counters::overflows`]) and the streamer's cliff guard warns of it.

pub mod policy;
pub mod replay;
#[cfg(feature = "research")]
pub mod research;
pub mod trace;

pub use policy::{CachePolicy, Policy};

use std::fmt;

/// Which phase of generation an access belongs to; counters are split by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The prompt, routed as a batch.
    Prefill,
    /// One generated token at a time.
    Decode,
}

/// Errors of the cache layer.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The geometry cannot describe a cache (no layers, no experts, too many entries).
    #[error("cache geometry: {what}")]
    Geometry { what: String },
    /// An access names a layer or expert outside the geometry.
    #[error(
        "cache: entry (layer {layer}, expert {expert}) is outside the geometry ({n_layer} layers x {n_expert} experts)"
    )]
    OutOfRange { layer: u32, expert: u32, n_layer: u32, n_expert: u32 },
    /// A policy name that `--cache-policy` does not know.
    #[error("unknown cache policy `{name}` (known: {known})")]
    UnknownPolicy { name: String, known: String },
    /// A placement that `bmoe replay --placement` does not know.
    #[error("unknown placement `{name}` (known: {known})")]
    UnknownPlacement { name: String, known: &'static str },
    /// A policy that needs the future (Bélády) was asked for without a trace.
    #[error("cache policy `{name}` is offline-only: it needs the whole access sequence (use it from `bmoe replay`)")]
    OfflineOnly { name: String },
}

/// Result alias of the cache layer.
pub type Result<T, E = CacheError> = std::result::Result<T, E>;

/// Dense index of a (layer, expert) entry: `layer * n_expert + expert`.
pub type EntryId = u32;

/// The cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExpertKey {
    /// Layer index.
    pub layer: u32,
    /// Expert index within the layer.
    pub expert: u32,
}

impl fmt::Display for ExpertKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(layer {}, expert {})", self.layer, self.expert)
    }
}

/// The shape of the cache's key space and the size of one entry per layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    n_expert: u32,
    entry_bytes: Vec<u64>,
}

impl Geometry {
    /// A geometry of `entry_bytes.len()` layers of `n_expert` experts each; one entry of
    /// layer `l` (all projections of one expert) is `entry_bytes[l]` bytes.
    ///
    /// # Errors
    /// [`CacheError::Geometry`] if there are no layers or experts, an entry is 0 bytes, or the
    /// key space does not fit an [`EntryId`].
    pub fn new(n_expert: u32, entry_bytes: Vec<u64>) -> Result<Self> {
        let bad = |what: String| Err(CacheError::Geometry { what });
        if entry_bytes.is_empty() || n_expert == 0 {
            return bad(format!("{} layers x {n_expert} experts: need at least one of each", entry_bytes.len()));
        }
        if let Some(l) = entry_bytes.iter().position(|&b| b == 0) {
            return bad(format!("layer {l} has 0-byte entries"));
        }
        if (entry_bytes.len() as u64) * u64::from(n_expert) > u64::from(u32::MAX) {
            return bad(format!("{} layers x {n_expert} experts overflow the entry index", entry_bytes.len()));
        }
        Ok(Self { n_expert, entry_bytes })
    }

    /// Number of layers.
    pub fn n_layer(&self) -> u32 {
        self.entry_bytes.len() as u32
    }

    /// Experts per layer.
    pub fn n_expert(&self) -> u32 {
        self.n_expert
    }

    /// Number of possible entries (`n_layer * n_expert`).
    pub fn n_entries(&self) -> usize {
        self.entry_bytes.len() * self.n_expert as usize
    }

    /// Bytes of one entry of `layer`.
    ///
    /// # Panics
    /// If `layer` is out of range.
    pub fn entry_bytes(&self, layer: u32) -> u64 {
        self.entry_bytes[layer as usize]
    }

    /// The dense id of a key.
    ///
    /// # Errors
    /// [`CacheError::OutOfRange`] if the key is outside the geometry.
    pub fn id(&self, key: ExpertKey) -> Result<EntryId> {
        if key.layer >= self.n_layer() || key.expert >= self.n_expert {
            return Err(CacheError::OutOfRange {
                layer: key.layer,
                expert: key.expert,
                n_layer: self.n_layer(),
                n_expert: self.n_expert,
            });
        }
        Ok(key.layer * self.n_expert + key.expert)
    }

    /// The key of a dense id.
    pub fn key(&self, id: EntryId) -> ExpertKey {
        ExpertKey { layer: id / self.n_expert, expert: id % self.n_expert }
    }

    /// Layer of a dense id.
    pub fn layer_of(&self, id: EntryId) -> u32 {
        id / self.n_expert
    }

    /// Bytes of the entry with this id.
    pub fn bytes_of(&self, id: EntryId) -> u64 {
        self.entry_bytes[(id / self.n_expert) as usize]
    }

    /// Bytes of one token cycle at top-`k`: `Σ_layers min(k, n_expert) × entry bytes`. A
    /// budget under it makes global LRU return 0 % hits (DESIGN.md, the cliff guard).
    pub fn cycle_bytes(&self, k: u32) -> u64 {
        let k = u64::from(k.min(self.n_expert));
        self.entry_bytes.iter().map(|b| b * k).sum()
    }
}

/// Where the decoder is: the position every access is made at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Prefill or decode.
    pub phase: Phase,
    /// Token cycle: 0 for the prompt batch, then one per generated token, increasing.
    pub token: u64,
    /// The layer being computed.
    pub layer: u32,
}

/// One routed expert of the current layer, as the policy sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    /// Dense id of the entry.
    pub id: EntryId,
    /// Rank within the layer's top-k (0 = the largest router weight).
    pub rank: u32,
    /// The router's (renormalised) weight.
    pub weight: f32,
    /// Index of this access in the whole access sequence (what offline policies key on).
    pub seq: u64,
}

/// The result of [`ExpertCache::lookup`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Resident: its bytes are in the pool; it is now pinned.
    Hit,
    /// Not resident: call [`ExpertCache::admit`] and read it.
    Miss,
}

/// How [`ExpertCache::admit`] placed a missed entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// Kept: the policy tracks it.
    Kept,
    /// Refused by the policy's admission control: held only while pinned, evicted first.
    Transient,
}

/// Counters of one phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseCounters {
    /// Accesses that found their entry resident.
    pub hits: u64,
    /// Accesses that had to read their entry.
    pub misses: u64,
    /// Entries evicted to make room for this phase's misses.
    pub evictions: u64,
    /// Bytes read for misses.
    pub bytes_read: u64,
    /// Misses the policy refused to keep.
    pub refused: u64,
}

impl PhaseCounters {
    /// Hit percentage, `None` when there were no accesses.
    pub fn hit_pct(&self) -> Option<f64> {
        let n = self.hits + self.misses;
        (n > 0).then(|| 100.0 * self.hits as f64 / n as f64)
    }
}

/// Cache counters, split prefill vs decode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Prefill accesses.
    pub prefill: PhaseCounters,
    /// Decode accesses.
    pub decode: PhaseCounters,
    /// Admissions that left the resident bytes over budget because everything else was pinned.
    pub overflows: u64,
}

impl Counters {
    /// Counters of `phase`.
    pub fn phase(&self, phase: Phase) -> &PhaseCounters {
        match phase {
            Phase::Prefill => &self.prefill,
            Phase::Decode => &self.decode,
        }
    }

    fn phase_mut(&mut self, phase: Phase) -> &mut PhaseCounters {
        match phase {
            Phase::Prefill => &mut self.prefill,
            Phase::Decode => &mut self.decode,
        }
    }

    /// Both phases together.
    pub fn total(&self) -> PhaseCounters {
        let (a, b) = (self.prefill, self.decode);
        PhaseCounters {
            hits: a.hits + b.hits,
            misses: a.misses + b.misses,
            evictions: a.evictions + b.evictions,
            bytes_read: a.bytes_read + b.bytes_read,
            refused: a.refused + b.refused,
        }
    }
}

/// The pinned set, as policies see it: pins are epoch stamps, so unpinning everything is O(1).
#[derive(Clone, Copy, Debug)]
pub struct Pins<'a> {
    stamp: &'a [u32],
    epoch: u32,
}

impl Pins<'_> {
    /// Whether the entry is pinned by the current pin scope.
    #[inline]
    pub fn contains(&self, id: EntryId) -> bool {
        self.stamp[id as usize] == self.epoch
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Absent,
    Kept,
    Transient,
}

/// The expert cache: residency, pins, budget, counters; eviction choices come from its policy.
#[derive(Debug)]
pub struct ExpertCache {
    geom: Geometry,
    budget: u64,
    resident: u64,
    state: Vec<State>,
    pin_stamp: Vec<u32>,
    epoch: u32,
    /// Transient entries in arrival order (few: at most the pinned misses of a pin scope).
    transient: Vec<EntryId>,
    policy: Box<dyn Policy>,
    pos: Position,
    counters: Counters,
}

impl ExpertCache {
    /// An empty cache of `budget` bytes over `geom`, evicting by `policy`.
    pub fn new(geom: Geometry, budget: u64, mut policy: Box<dyn Policy>) -> Self {
        let n = geom.n_entries();
        policy.attach(&geom, budget);
        Self {
            geom,
            budget,
            resident: 0,
            state: vec![State::Absent; n],
            pin_stamp: vec![0; n],
            epoch: 1,
            transient: Vec::new(),
            policy,
            pos: Position { phase: Phase::Prefill, token: 0, layer: 0 },
            counters: Counters::default(),
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// The budget in bytes.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Bytes currently resident (kept and transient).
    pub fn resident_bytes(&self) -> u64 {
        self.resident
    }

    /// The counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// Whether the entry is resident.
    pub fn is_resident(&self, id: EntryId) -> bool {
        self.state[id as usize] != State::Absent
    }

    /// Whether the entry is pinned.
    pub fn is_pinned(&self, id: EntryId) -> bool {
        self.pin_stamp[id as usize] == self.epoch
    }

    /// Resident entries (kept and transient), in id order.
    pub fn resident_ids(&self) -> impl Iterator<Item = EntryId> + '_ {
        self.state.iter().enumerate().filter(|(_, s)| **s != State::Absent).map(|(i, _)| i as EntryId)
    }

    /// Move to a new (token, layer): called once per layer before its lookups.
    pub fn begin_layer(&mut self, pos: Position) {
        self.pos = pos;
        self.policy.begin_layer(pos);
    }

    /// Look an entry up for the current position. A hit pins it and tells the policy; a miss
    /// is counted and must be followed by [`Self::admit`] once the layer's hits are pinned.
    pub fn lookup(&mut self, a: &Access) -> Lookup {
        let i = a.id as usize;
        let c = self.counters.phase_mut(self.pos.phase);
        match self.state[i] {
            State::Absent => {
                c.misses += 1;
                c.bytes_read += self.geom.bytes_of(a.id);
                Lookup::Miss
            }
            s => {
                c.hits += 1;
                self.pin_stamp[i] = self.epoch;
                if s == State::Transient {
                    // Referenced again while still held: that is reuse, so it is kept now. It
                    // is already resident and counted, so nothing has to make room for it.
                    self.transient.retain(|&t| t != a.id);
                    self.state[i] = State::Kept;
                    self.policy.on_insert(a, &self.pos);
                } else {
                    self.policy.on_hit(a, &self.pos);
                }
                Lookup::Hit
            }
        }
    }

    /// Give a missed entry room, evicting by policy, and pin it. Evicted keys are appended to
    /// `evicted` (the streamer frees their slots). A refused entry is held as transient.
    ///
    /// # Panics
    /// In debug builds, if the entry is already resident.
    pub fn admit(&mut self, a: &Access, evicted: &mut Vec<ExpertKey>) -> Admitted {
        debug_assert_eq!(self.state[a.id as usize], State::Absent, "admit of a resident entry");
        self.pin_stamp[a.id as usize] = self.epoch;
        self.place(a, evicted)
    }

    fn place(&mut self, a: &Access, evicted: &mut Vec<ExpertKey>) -> Admitted {
        let need = self.geom.bytes_of(a.id);
        // Admission control only matters when keeping the entry would cost a kept one.
        let keep = self.resident + need <= self.budget || self.policy.admit(a, &self.pos);
        if keep {
            // Voluntary evictions first (quota-based policies), then by budget.
            loop {
                let pins = Pins { stamp: &self.pin_stamp, epoch: self.epoch };
                match self.policy.quota_victim(a, pins) {
                    Some(v) => self.evict(v, evicted),
                    None => break,
                }
            }
        }
        // Room by budget. A refused entry is still read into the pool, so it needs room like
        // any other; refusing only decides that it, not a kept entry, is the next to go.
        self.make_room(need, evicted);
        if self.resident + need > self.budget {
            self.counters.overflows += 1;
        }
        self.resident += need;
        if keep {
            self.state[a.id as usize] = State::Kept;
            self.policy.on_insert(a, &self.pos);
            Admitted::Kept
        } else {
            self.counters.phase_mut(self.pos.phase).refused += 1;
            self.state[a.id as usize] = State::Transient;
            self.transient.push(a.id);
            Admitted::Transient
        }
    }

    fn evict(&mut self, id: EntryId, evicted: &mut Vec<ExpertKey>) {
        debug_assert!(!self.is_pinned(id));
        let i = id as usize;
        if self.state[i] == State::Kept {
            self.policy.on_remove(id);
        }
        self.state[i] = State::Absent;
        self.resident -= self.geom.bytes_of(id);
        self.counters.phase_mut(self.pos.phase).evictions += 1;
        evicted.push(self.geom.key(id));
    }

    /// End the pin scope: every pinned entry becomes evictable. The streamer calls it when
    /// the pinned entries' compute is done (the end of a layer's expert FFNs).
    pub fn unpin_all(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // 4 billion scopes later: clear stale stamps so none aliases the new epoch.
            self.pin_stamp.fill(0);
            self.epoch = 1;
        }
    }

    /// Change the budget; entries are evicted by policy (unpinned ones only) until the
    /// resident bytes fit. Evicted keys are appended to `evicted`. (Policies keep their
    /// state; a quota a policy derived from the first budget stays as it was.)
    pub fn set_budget(&mut self, budget: u64, evicted: &mut Vec<ExpertKey>) {
        self.budget = budget;
        self.make_room(0, evicted);
    }

    /// Evict until `need` more bytes fit the budget (or nothing unpinned is left): unpinned
    /// transients first, then the policy's victims.
    fn make_room(&mut self, need: u64, evicted: &mut Vec<ExpertKey>) {
        while self.resident + need > self.budget {
            if let Some(pos) = self.transient.iter().position(|&t| self.pin_stamp[t as usize] != self.epoch) {
                let v = self.transient.remove(pos);
                self.evict(v, evicted);
                continue;
            }
            let pins = Pins { stamp: &self.pin_stamp, epoch: self.epoch };
            match self.policy.victim(pins) {
                Some(v) => {
                    debug_assert!(!self.is_pinned(v), "policy {} chose pinned {v}", self.policy.name());
                    self.evict(v, evicted);
                }
                None => break,
            }
        }
    }

    /// Drop a resident entry whose bytes turned out unusable (its read failed), pinned or
    /// not; it is not counted as an eviction. Its key is appended to `evicted`.
    pub fn remove(&mut self, id: EntryId, evicted: &mut Vec<ExpertKey>) {
        let i = id as usize;
        match self.state[i] {
            State::Absent => return,
            State::Kept => self.policy.on_remove(id),
            State::Transient => self.transient.retain(|&t| t != id),
        }
        self.state[i] = State::Absent;
        self.pin_stamp[i] = 0;
        self.resident -= self.geom.bytes_of(id);
        evicted.push(self.geom.key(id));
    }

    /// Lookup, then admit on a miss: the one-call form for callers that do not batch a
    /// layer's hits before its misses.
    pub fn access(&mut self, a: &Access, evicted: &mut Vec<ExpertKey>) -> Lookup {
        let r = self.lookup(a);
        if r == Lookup::Miss {
            self.admit(a, evicted);
        }
        r
    }
}

#[cfg(all(test, feature = "research"))]
mod tests;
