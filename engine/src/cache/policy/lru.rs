//! Global LRU: the baseline every other policy is measured against. It returns exactly 0 %
//! hits under one token cycle (layers are visited in a fixed order, so the least recently used
//! entry is always the one needed soonest); above it, it is the simplest policy that works.

use super::{Lists, Policy};
use crate::cache::{Access, EntryId, Geometry, Pins, Position};

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
