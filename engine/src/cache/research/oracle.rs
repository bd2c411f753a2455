//! Offline *partial* oracles: the default decayed-frequency ranking plus perfect knowledge of
//! a bounded piece of the future. They are not policies anyone can run; they measure how much
//! each kind of foresight is worth, which says where an online predictor could still win:
//!
//! - `oracle-token`: knows the rest of the current token's routing (every later layer), i.e.
//!   the best any cross-layer predictor (routing of this token's earlier layers → later
//!   layers) could do. Entries the current token still uses are never evicted.
//! - `oracle-next`: also knows whether each entry is used at its next chance (the next token
//!   for the layers already computed), i.e. a perfect one-token-ahead predictor.
//! - `oracle-next-4`: knows whether each entry is used within its next 4 chances.
//!
//! Replay only (like `belady`). Token passes are recovered from the access sequence: a layer
//! lower than the previous access's starts a new pass (a prompt token or a decode token).

use crate::cache::policy::Policy;
use crate::cache::{Access, EntryId, Geometry, Phase, Pins, Position};

/// A partial oracle over an access sequence; see the module documentation.
#[derive(Debug)]
pub struct PartialOracle {
    name: &'static str,
    /// Passes of foresight beyond the current one (0 = the rest of the current token).
    ahead: u32,
    sequence: Vec<EntryId>,
    /// Per access: the pass of its entry's next access (`u32::MAX` for none).
    next_pass: Vec<u32>,
    pass_of: Vec<u32>,
    n_expert: u32,
    gamma: f32,
    score: Vec<f32>,
    t_score: Vec<u64>,
    next: Vec<u32>,
    bytes: Vec<f32>,
    resident: Vec<EntryId>,
    slot: Vec<u32>,
    cur_pass: u32,
    pos: Position,
}

impl PartialOracle {
    /// A partial oracle that sees `ahead` passes beyond the current one.
    pub fn new(name: &'static str, ahead: u32, sequence: &[EntryId]) -> Self {
        Self {
            name,
            ahead,
            sequence: sequence.to_vec(),
            next_pass: Vec::new(),
            pass_of: Vec::new(),
            n_expert: 1,
            gamma: 0.95,
            score: Vec::new(),
            t_score: Vec::new(),
            next: Vec::new(),
            bytes: Vec::new(),
            resident: Vec::new(),
            slot: Vec::new(),
            cur_pass: 0,
            pos: Position { phase: Phase::Prefill, token: 0, layer: 0 },
        }
    }

    fn note(&mut self, a: &Access) {
        if let Some(&p) = self.pass_of.get(a.seq as usize) {
            self.cur_pass = p;
        }
    }

    fn touch(&mut self, a: &Access, pos: &Position) {
        self.note(a);
        let i = a.id as usize;
        let w = if pos.phase == Phase::Prefill { 0.3 } else { 1.0 };
        let dt = (pos.token - self.t_score[i]) as i32;
        self.score[i] = self.score[i] * self.gamma.powi(dt) + w;
        self.t_score[i] = pos.token;
        self.next[i] = self.next_pass.get(a.seq as usize).copied().unwrap_or(u32::MAX);
    }

    fn value(&self, id: EntryId) -> f32 {
        let i = id as usize;
        let l = id / self.n_expert;
        let np = self.next[i];
        // The entry's next chance is this pass if its layer is still to come, else the next.
        let chance = if l > self.pos.layer { self.cur_pass } else { self.cur_pass + 1 };
        let known = np != u32::MAX && (np == self.cur_pass || np < chance + self.ahead);
        let s = self.score[i] * self.gamma.powi((self.pos.token - self.t_score[i]) as i32) / self.bytes[l as usize];
        if known {
            1e9 + s
        } else {
            s
        }
    }
}

impl Policy for PartialOracle {
    fn name(&self) -> &'static str {
        self.name
    }
    fn attach(&mut self, geom: &Geometry, _budget: u64) {
        let n = geom.n_entries();
        self.n_expert = geom.n_expert();
        let mut pass = 0u32;
        let mut prev_layer = 0u32;
        self.pass_of = self
            .sequence
            .iter()
            .enumerate()
            .map(|(i, &id)| {
                let l = id / self.n_expert;
                if i > 0 && l < prev_layer {
                    pass += 1;
                }
                prev_layer = l;
                pass
            })
            .collect();
        let mut next_pass = vec![u32::MAX; self.sequence.len()];
        let mut last: Vec<u32> = vec![u32::MAX; n];
        for i in (0..self.sequence.len()).rev() {
            let id = self.sequence[i] as usize;
            next_pass[i] = last[id];
            last[id] = self.pass_of[i];
        }
        self.next_pass = next_pass;
        self.score = vec![0.0; n];
        self.t_score = vec![0; n];
        self.next = vec![u32::MAX; n];
        self.bytes = (0..geom.n_layer()).map(|l| geom.entry_bytes(l) as f32).collect();
        self.slot = vec![u32::MAX; n];
    }
    fn begin_layer(&mut self, pos: Position) {
        self.pos = pos;
    }
    fn on_hit(&mut self, a: &Access, pos: &Position) {
        self.touch(a, pos);
    }
    fn on_insert(&mut self, a: &Access, pos: &Position) {
        self.touch(a, pos);
        self.slot[a.id as usize] = self.resident.len() as u32;
        self.resident.push(a.id);
    }
    fn on_remove(&mut self, id: EntryId) {
        let k = self.slot[id as usize] as usize;
        self.slot[id as usize] = u32::MAX;
        self.resident.swap_remove(k);
        if let Some(&moved) = self.resident.get(k) {
            self.slot[moved as usize] = k as u32;
        }
    }
    fn admit(&mut self, a: &Access, _pos: &Position) -> bool {
        self.note(a);
        true
    }
    fn victim(&mut self, pins: Pins<'_>) -> Option<EntryId> {
        let mut best: Option<(f32, EntryId)> = None;
        for &id in &self.resident {
            if pins.contains(id) {
                continue;
            }
            let v = self.value(id);
            if best.is_none_or(|(bv, _)| v < bv) {
                best = Some((v, id));
            }
        }
        best.map(|b| b.1)
    }
}
