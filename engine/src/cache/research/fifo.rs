//! `s3-fifo` (Yang et al., SOSP 2023), tried on routing and rejected (numbers in
//! docs/cache-policy.md): a small FIFO queue that new entries enter (a tenth of the budget), a
//! main FIFO queue with a 2-bit use count, and a ghost queue of ids recently evicted from the
//! small one. An entry leaving the small queue moves to the main one if it was used again
//! there, else it is evicted and remembered as a ghost; a miss on a ghost enters the main
//! queue directly. The main queue evicts its oldest entry whose count is 0, giving each older
//! one with uses another round (count - 1). Pinned entries are skipped, never moved.

use std::collections::VecDeque;

use crate::cache::policy::{Lists, Policy, NIL};
use crate::cache::{Access, EntryId, Geometry, Pins, Position};

const SMALL: usize = 0;
const MAIN: usize = 1;

/// S3-FIFO over byte budgets.
#[derive(Debug, Default)]
pub struct S3Fifo {
    lists: Lists,
    /// Which queue an entry is in (`SMALL`, `MAIN`), `u8::MAX` when not resident.
    queue: Vec<u8>,
    freq: Vec<u8>,
    bytes: Vec<u64>,
    small_bytes: u64,
    small_target: u64,
    ghost: VecDeque<EntryId>,
    /// Ghost membership, counting duplicates in `ghost` (a ghost evicted again re-enters).
    ghost_count: Vec<u16>,
    ghost_cap: usize,
}

impl S3Fifo {
    fn remember_ghost(&mut self, id: EntryId) {
        self.ghost.push_back(id);
        self.ghost_count[id as usize] += 1;
        while self.ghost.len() > self.ghost_cap {
            let old = self.ghost.pop_front().expect("non-empty");
            self.ghost_count[old as usize] -= 1;
        }
    }

    fn move_to_main(&mut self, id: EntryId) {
        self.lists.unlink(SMALL, id);
        self.small_bytes -= self.bytes[id as usize];
        self.lists.push_front(MAIN, id);
        self.queue[id as usize] = MAIN as u8;
        self.freq[id as usize] = 0;
    }

    /// The small queue's oldest unpinned entry not used again (moving the used ones to main).
    fn small_victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        let mut c = self.lists.tail[SMALL];
        while c != NIL {
            let prev = self.lists.prev[c as usize];
            if !pins.contains(c) {
                if self.freq[c as usize] > 0 {
                    self.move_to_main(c);
                } else {
                    self.remember_ghost(c);
                    return Some(c);
                }
            }
            c = prev;
        }
        None
    }

    /// The main queue's oldest unpinned entry with count 0 (older ones with uses go round).
    fn main_victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        // Counts are at most 3 and each pass lowers every unpinned one: 4 passes find one.
        for _ in 0..4 {
            let mut c = self.lists.tail[MAIN];
            let mut seen_unpinned = false;
            while c != NIL {
                let prev = self.lists.prev[c as usize];
                if !pins.contains(c) {
                    seen_unpinned = true;
                    if self.freq[c as usize] == 0 {
                        return Some(c);
                    }
                    self.freq[c as usize] -= 1;
                }
                c = prev;
            }
            if !seen_unpinned {
                return None;
            }
        }
        None
    }
}

impl Policy for S3Fifo {
    fn name(&self) -> &'static str {
        "s3-fifo"
    }
    fn attach(&mut self, geom: &Geometry, budget: u64) {
        let n = geom.n_entries();
        self.lists = Lists::new(n, 2);
        self.queue = vec![u8::MAX; n];
        self.freq = vec![0; n];
        self.bytes = (0..n as u32).map(|id| geom.bytes_of(id)).collect();
        self.small_target = budget / 10;
        let smallest = (0..geom.n_layer()).map(|l| geom.entry_bytes(l)).min().unwrap_or(1);
        // As many ghosts as the main queue holds entries.
        self.ghost_cap = ((budget - self.small_target) / smallest.max(1)) as usize;
        self.ghost_count = vec![0; n];
    }
    fn on_hit(&mut self, a: &Access, _pos: &Position) {
        let f = &mut self.freq[a.id as usize];
        *f = (*f + 1).min(3);
    }
    fn on_insert(&mut self, a: &Access, _pos: &Position) {
        let i = a.id as usize;
        self.freq[i] = 0;
        if self.ghost_count[i] > 0 {
            self.lists.push_front(MAIN, a.id);
            self.queue[i] = MAIN as u8;
        } else {
            self.lists.push_front(SMALL, a.id);
            self.queue[i] = SMALL as u8;
            self.small_bytes += self.bytes[i];
        }
    }
    fn on_remove(&mut self, id: EntryId) {
        let i = id as usize;
        match self.queue[i] as usize {
            SMALL => {
                self.lists.unlink(SMALL, id);
                self.small_bytes -= self.bytes[i];
            }
            MAIN => self.lists.unlink(MAIN, id),
            _ => {}
        }
        self.queue[i] = u8::MAX;
    }
    fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        if self.small_bytes > self.small_target || self.lists.tail[MAIN] == NIL {
            if let Some(v) = self.small_victim(pins) {
                return Some(v);
            }
        }
        self.main_victim(pins).or_else(|| self.small_victim(pins))
    }
}
