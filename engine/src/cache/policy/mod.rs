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

mod decay;
mod hd;
mod lfu;
mod lru;
mod per_layer;

pub use decay::{Decay, DecayParams, DECAY};
pub use hd::{Features, HdParams, HitDensity, Rank, HD};
pub use lfu::Lfu;
pub use lru::Lru;
pub use per_layer::PerLayerLru;

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use super::{Access, CacheError, EntryId, Geometry, Pins, Position};

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
macro_rules! prio_set_methods_impl {
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

pub(crate) use prio_set_methods_impl as prio_set_methods;

pub(crate) const NIL: u32 = u32::MAX;

/// Intrusive doubly linked lists over entry ids (several lists share the link arrays; an id
/// is in at most one list). Head = most recent, tail = least recent.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lists {
    pub(crate) prev: Vec<u32>,
    pub(crate) head: Vec<u32>,
    pub(crate) tail: Vec<u32>,
    next: Vec<u32>,
}

impl Lists {
    pub(crate) fn new(n_entries: usize, n_lists: usize) -> Self {
        Self {
            prev: vec![NIL; n_entries],
            next: vec![NIL; n_entries],
            head: vec![NIL; n_lists],
            tail: vec![NIL; n_lists],
        }
    }

    pub(crate) fn push_front(&mut self, l: usize, id: u32) {
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

    pub(crate) fn unlink(&mut self, l: usize, id: u32) {
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
    pub(crate) fn lru_unpinned(&self, l: usize, pins: Pins<'_>) -> Option<u32> {
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
pub(crate) struct PrioSet {
    set: BTreeSet<Prio>,
    cur: Vec<Option<Prio>>,
}

impl PrioSet {
    pub(crate) fn new(n: usize) -> Self {
        Self { set: BTreeSet::new(), cur: vec![None; n] }
    }
    pub(crate) fn set(&mut self, id: EntryId, p: f64, tie: u64) {
        let np = Prio(p, tie, id);
        if let Some(old) = self.cur[id as usize].replace(np) {
            self.set.remove(&old);
        }
        self.set.insert(np);
    }
    pub(crate) fn remove(&mut self, id: EntryId) {
        if let Some(old) = self.cur[id as usize].take() {
            self.set.remove(&old);
        }
    }
    pub(crate) fn min_unpinned(&self, pins: Pins<'_>) -> Option<EntryId> {
        self.set.iter().map(|p| p.2).find(|&id| !pins.contains(id))
    }
    /// Unpinned entries with their priority, lowest first.
    pub(crate) fn unpinned<'a>(&'a self, pins: Pins<'a>) -> impl Iterator<Item = (f64, EntryId)> + 'a {
        self.set.iter().filter(move |p| !pins.contains(p.2)).map(|p| (p.0, p.2))
    }
}

/// The policies the engine ships, as `--cache-policy` names them. The research variants, the
/// offline oracles and the bound live with the replay tool (`cache::research`, feature
/// `research`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CachePolicy {
    /// Global least-recently-used.
    Lru,
    /// Least-frequently-used with perfect history.
    Lfu,
    /// Per-layer partition, LRU inside each layer's share.
    PerLayer,
    /// Decayed frequency per byte.
    Decay,
    /// Learned hit density (the default: the best found on real routing).
    Hd,
}

/// Every shipped policy, in the order reports list them.
pub const SHIPPED: &[CachePolicy] =
    &[CachePolicy::Lru, CachePolicy::Lfu, CachePolicy::PerLayer, CachePolicy::Decay, CachePolicy::Hd];

impl CachePolicy {
    /// Every shipped policy.
    pub fn all() -> Vec<CachePolicy> {
        SHIPPED.to_vec()
    }

    /// The default for `--cache-policy`.
    pub const DEFAULT: CachePolicy = CachePolicy::Hd;

    /// The name `--cache-policy` takes.
    pub fn name(self) -> &'static str {
        match self {
            CachePolicy::Lru => "lru",
            CachePolicy::Lfu => "lfu",
            CachePolicy::PerLayer => "per-layer",
            CachePolicy::Decay => "decay",
            CachePolicy::Hd => "hd",
        }
    }

    /// A fresh policy object.
    ///
    /// # Errors
    /// None today (every shipped policy is online); kept so a policy that cannot be built on a
    /// geometry can say why.
    pub fn build(self) -> Result<Box<dyn Policy>, CacheError> {
        Ok(match self {
            CachePolicy::Lru => Box::new(Lru::default()),
            CachePolicy::Lfu => Box::new(Lfu::default()),
            CachePolicy::PerLayer => Box::new(PerLayerLru::default()),
            CachePolicy::Decay => Box::new(Decay::new("decay", DECAY)),
            CachePolicy::Hd => Box::new(HitDensity::new("hd", HD)),
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
        SHIPPED.iter().copied().find(|p| p.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| {
            CacheError::UnknownPolicy {
                name: crate::cache::trace::excerpt(s),
                known: SHIPPED.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
            }
        })
    }
}
