//! LFU with perfect history (counts survive eviction).

use super::{prio_set_methods, Policy, PrioSet};
use crate::cache::{Access, EntryId, Geometry, Phase, Pins, Position};

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
