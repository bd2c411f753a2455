//! Per-layer partition: each layer keeps its own share of the budget, LRU inside it. It does not
//! fall off the cycle cliff (a layer's own entries are never evicted by another layer's
//! misses), at the cost of ignoring that some layers' routing is far more skewed than others'.

use super::{Lists, Policy};
use crate::cache::{Access, EntryId, Geometry, Pins, Position};

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
