//! The streamer: an [`ExpertProvider`] whose experts live in the slots of a registered
//! [`BufferPool`] that is also the expert cache, read from the model file with the uring-io
//! [`ReadEngine`] when they miss.
//!
//! Its rooms: [`layout`] (where an entry's bytes go in a slot, O_DIRECT windows, whether the
//! slots form a stack: pure arithmetic), [`budget`] (the budget asked, what the machine gives,
//! the slots it buys), [`lookahead`] (predictions, their scores and the rule that turns
//! speculative reads off), and here the acquire state machine.
//!
//! `acquire(layer, ids)` looks every id up first (a hit is pinned), then admits the misses
//! (evicting unpinned entries by policy, freeing their slots), submits all their reads as one
//! batch over the lanes and waits for the batch (serial mode), or returns at once and hands the
//! experts out as their bytes land (`acquire_start` / `acquire_more`, per-expert pipelining).
//! Nothing is evicted while pinned, and an entry's slot is reused only after its reads
//! completed: a failed batch is drained before the error returns and its entries are dropped.
//! Speculative reads of a later layer stay in flight across an acquire (route-ahead reads
//! layers ahead); those of this layer that it does not route, and of earlier layers, are
//! cancelled unless landed.

pub mod budget;
pub mod layout;
pub mod lookahead;

pub use layout::{slot_layout_bytes, SlotLayout};
pub use lookahead::{LayerLookahead, Lookahead, LOOKAHEAD_JUDGE_LAYER, LOOKAHEAD_JUDGE_MODEL};

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use bmoe_uring_io::{BufferPool, EngineOptions, FileId, ReadEngine, Registration, Request, Ticket};

use crate::cache::{Access, CachePolicy, EntryId, ExpertCache, ExpertKey, Geometry, Lookup, Phase, Position};
use crate::dense::open_all;
use crate::error::{Error, Result};
use crate::model::ModelIndex;
use crate::provider::{ExpertProvider, ExpertPtrs, Projections, ProviderCounters, Residency, Stack};

/// How to stream.
#[derive(Clone, Copy, Debug)]
pub struct StreamerOptions {
    /// Bytes of expert cache. 0 = no cache: a scratch set of slots for one layer's experts.
    /// A budget under the widest layer's top-k demand is raised to it.
    pub budget_bytes: u64,
    /// Eviction policy.
    pub policy: CachePolicy,
    /// Read engine: backend, lanes, registration, O_DIRECT.
    pub io: EngineOptions,
    /// Experts routed per token if not the model's top-k (`--n-expert-used`).
    pub n_expert_used: Option<u32>,
    /// Look-ahead (`--overlap`): during decode, read the next layer's predicted experts while
    /// this layer computes.
    pub lookahead: bool,
}

/// Counters of the streamer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StreamStats {
    /// Expert bytes read from the file (payloads).
    pub bytes_read: u64,
    /// Entries read.
    pub reads: u64,
    /// Seconds spent waiting for reads.
    pub io_s: f64,
    /// Seconds in cache bookkeeping (lookups, admission, eviction).
    pub manage_s: f64,
    /// Payload bytes of every expert acquired (hits and misses): the routed demand.
    pub routed_bytes: u64,
    /// The most payload bytes one decode-step layer routed (`layer_demand`).
    pub max_layer_routed_bytes: u64,
    /// Look-ahead: entries read speculatively, their payload bytes, and how many of them a
    /// real routing then used before they were evicted.
    pub spec_entries: u64,
    pub spec_bytes: u64,
    pub spec_useful: u64,
    /// Look-ahead accuracy: real routed experts of decode layers that had a prediction, and
    /// how many of them were predicted.
    pub predicted_real: u64,
    pub real_with_prediction: u64,
}

/// The streaming expert provider.
#[derive(Debug)]
pub struct StreamingExperts {
    engine: ReadEngine,
    pool: Arc<BufferPool>,
    files: Vec<FileId>,
    layout: SlotLayout,
    n_slots: usize,
    /// Slots in the pool (`n_slots` is how many the current budget uses).
    n_slots_max: usize,
    /// The fewest slots the budget is raised to: `k`, or `2 k` with look-ahead.
    floor: usize,
    cache: ExpertCache,
    slot_of: Vec<Option<u32>>,
    free: Vec<u32>,
    raised: bool,
    requested_budget: u64,
    phase: Phase,
    token: u64,
    seq: u64,
    pinned: Vec<EntryId>,
    evicted: Vec<ExpertKey>,
    stats: StreamStats,
    lookahead: Lookahead,
    /// Reads in flight of speculative entries.
    inflight: HashMap<EntryId, Vec<Ticket>>,
    /// Speculative entries not yet used by a real routing.
    speculative: HashSet<EntryId>,
    /// The acquire in progress: its layer, experts and the entries whose reads are pending.
    pend_layer: u32,
    pend_experts: Vec<u32>,
    pend: Vec<Pending>,
}

/// An entry of the acquire in progress whose reads have not all landed.
#[derive(Debug)]
struct Pending {
    /// Index into the acquire's experts.
    idx: usize,
    id: EntryId,
    tickets: Vec<Ticket>,
    /// Read speculatively (a failed read is then tried again, not an error).
    spec: bool,
}

impl StreamingExperts {
    /// A streamer for `index` with `opts`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for fused gate/up experts; the read engine's error if the pool,
    /// the engine or a shard cannot be set up or opened; the cache's for a bad geometry.
    pub fn new(index: &ModelIndex, opts: StreamerOptions) -> Result<Self> {
        Self::build(index, opts, |pool, direct| ReadEngine::new(pool, EngineOptions { direct, ..opts.io }))
    }

    /// As [`Self::new`], reading through a caller-built engine (tests inject faults this way).
    /// `make_engine` gets the pool and whether the engine may use O_DIRECT.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn with_engine_builder(
        index: &ModelIndex,
        opts: StreamerOptions,
        make_engine: impl FnOnce(Arc<BufferPool>, bool) -> ReadEngine,
    ) -> Result<Self> {
        Self::build(index, opts, |pool, direct| Ok(make_engine(pool, direct)))
    }

    fn build(
        index: &ModelIndex,
        opts: StreamerOptions,
        make_engine: impl FnOnce(Arc<BufferPool>, bool) -> bmoe_uring_io::Result<ReadEngine>,
    ) -> Result<Self> {
        let layout = SlotLayout::new(index, opts.io.direct)?;
        let slot_bytes = layout.slot_bytes;
        let k = opts.n_expert_used.unwrap_or(index.shape().n_expert_used).max(1) as usize;
        let floor = budget::floor_slots(k, opts.lookahead);
        let (n_slots, raised) = budget::slots(opts.budget_bytes, slot_bytes, floor);
        let pool_bytes = n_slots.checked_mul(slot_bytes).ok_or_else(|| {
            Error::Invalid(format!("an expert cache of {n_slots} slots of {slot_bytes} bytes overflows"))
        })?;
        let geom = Geometry::new(index.shape().n_expert, vec![slot_bytes as u64; index.layers.len()])?;
        let cache = ExpertCache::new(geom, pool_bytes as u64, opts.policy.build()?);
        let pool = Arc::new(BufferPool::new(pool_bytes)?);
        let engine = make_engine(pool.clone(), layout.direct)?;
        let files = open_all(&engine, &index.file)?;
        let n_entries = cache.geometry().n_entries();
        Ok(Self {
            engine,
            pool,
            files,
            layout,
            n_slots,
            n_slots_max: n_slots,
            floor,
            cache,
            slot_of: vec![None; n_entries],
            free: (0..n_slots as u32).rev().collect(),
            raised,
            requested_budget: opts.budget_bytes,
            phase: Phase::Prefill,
            token: 0,
            seq: 0,
            pinned: Vec::new(),
            evicted: Vec::new(),
            stats: StreamStats::default(),
            lookahead: Lookahead::new(opts.lookahead, index.layers.len()),
            inflight: HashMap::new(),
            speculative: HashSet::new(),
            pend_layer: 0,
            pend_experts: Vec::new(),
            pend: Vec::new(),
        })
    }

    /// Resize the cache between generations (nothing may be acquired): entries beyond the new
    /// budget are evicted now, by policy. The pool keeps its size (it is allocated and
    /// registered once per open), so the budget is clamped to it, and raised to the widest
    /// layer's top-k (twice that with look-ahead) like at open. Returns the budget in effect, in bytes.
    pub fn set_budget_bytes(&mut self, bytes: u64) -> u64 {
        let slot_bytes = self.layout.slot_bytes;
        let (wanted, raised) = budget::slots(bytes, slot_bytes, self.floor);
        let slots = wanted.min(self.n_slots_max);
        self.n_slots = slots;
        self.raised = raised;
        self.requested_budget = bytes;
        self.evicted.clear();
        let mut evicted = std::mem::take(&mut self.evicted);
        self.cache.set_budget((slots * slot_bytes) as u64, &mut evicted);
        for key in evicted.drain(..) {
            if let Ok(id) = self.cache.geometry().id(key) {
                if let Some(s) = self.slot_of[id as usize].take() {
                    self.free.push(s);
                }
            }
        }
        self.evicted = evicted;
        // Hand out only slots below the new count: move the rest out of the free list.
        // Entries still resident in high slots stay until evicted (they fit the budget).
        self.free.retain(|&s| (s as usize) < slots);
        let used: HashSet<u32> = self.slot_of.iter().flatten().copied().collect();
        for s in 0..slots as u32 {
            if !used.contains(&s) && !self.free.contains(&s) {
                self.free.push(s);
            }
        }
        (slots * slot_bytes) as u64
    }

    /// Bytes of one slot (the widest entry with its O_DIRECT slack).
    pub fn slot_bytes(&self) -> usize {
        self.layout.slot_bytes
    }

    /// Where entries lie in a slot, and whether O_DIRECT and stacks hold.
    pub fn layout(&self) -> &SlotLayout {
        &self.layout
    }

    /// Slots in the pool.
    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    /// The pool's bytes: the expert cache's true size.
    pub fn pool_bytes(&self) -> usize {
        self.pool.size()
    }

    /// Whether the requested budget was under the widest layer's top-k demand and was raised.
    pub fn budget_raised(&self) -> bool {
        self.raised
    }

    /// The budget asked for.
    pub fn requested_budget(&self) -> u64 {
        self.requested_budget
    }

    /// The read engine (backend, lanes, fixed buffers).
    pub fn engine(&self) -> &ReadEngine {
        &self.engine
    }

    /// Whether the pool is registered with io_uring.
    pub fn registration(&self) -> Registration {
        self.engine.registration()
    }

    /// The cache (counters, policy, resident bytes).
    pub fn cache(&self) -> &ExpertCache {
        &self.cache
    }

    /// The streamer's own counters.
    pub fn stats(&self) -> StreamStats {
        let la = self.lookahead.totals();
        StreamStats {
            spec_entries: la.spec_entries,
            spec_useful: la.spec_useful,
            predicted_real: la.predicted_real,
            real_with_prediction: la.real_with_prediction,
            ..self.stats
        }
    }

    fn drop_entry(&mut self, id: EntryId) {
        self.settle(id, true);
        self.evicted.clear();
        self.cache.remove(id, &mut self.evicted);
        if let Some(s) = self.slot_of[id as usize].take() {
            self.free.push(s);
        }
    }

    /// Wait for (after cancelling, with `cancel`) any speculative reads of `id` still in
    /// flight, so that its slot may be reused; returns whether they all landed.
    fn settle(&mut self, id: EntryId, cancel: bool) -> bool {
        self.speculative.remove(&id);
        let Some(tickets) = self.inflight.remove(&id) else { return true };
        if cancel {
            self.engine.cancel(&tickets);
        }
        let t = Instant::now();
        let ok = self.engine.wait_all(&tickets).is_ok();
        self.stats.io_s += t.elapsed().as_secs_f64();
        ok
    }

    /// Free the slots of entries the cache evicted (after their reads, if any, settled).
    fn free_evicted(&mut self) {
        for k in std::mem::take(&mut self.evicted) {
            if let Ok(vid) = self.cache.geometry().id(k) {
                self.settle(vid, true);
                if let Some(s) = self.slot_of[vid as usize].take() {
                    self.free.push(s);
                }
            }
        }
    }

    /// The three reads (gate, up, down) that fill `slot` with `expert` of `layer`.
    fn entry_requests(&self, slot: u32, layer: usize, expert: u32) -> [Request; 3] {
        std::array::from_fn(|which| {
            let (offset, len, dest) = self.layout.payload(slot, layer, which, expert);
            Request { file: self.files[self.layout.regions[layer].get(which).shard], offset, len, dest }
        })
    }

    /// Submit, in one batch, the reads of `entries` (index into the acquire in progress's
    /// experts, entry) into their slots; they join the pending ones.
    fn submit_entries(&mut self, entries: &[(usize, EntryId)]) -> Result<()> {
        let layer = self.pend_layer as usize;
        let mut reqs = Vec::with_capacity(3 * entries.len());
        for &(idx, id) in entries {
            let slot = self.slot_of[id as usize].expect("an admitted entry has a slot");
            reqs.extend(self.entry_requests(slot, layer, self.pend_experts[idx]));
        }
        let mut tickets = self.engine.submit(&reqs)?.into_iter();
        let bytes = reqs.iter().map(|r| r.len as u64).sum::<u64>();
        self.stats.bytes_read += bytes;
        metrics::counter!("bmoe_expert_bytes_read_total").increment(bytes);
        for &(idx, id) in entries {
            self.pend.push(Pending { idx, id, tickets: tickets.by_ref().take(3).collect(), spec: false });
        }
        Ok(())
    }

    /// After a failed read: drain the reads still pending, drop their entries, unpin all.
    fn fail_pending(&mut self) {
        for p in std::mem::take(&mut self.pend) {
            self.engine.cancel(&p.tickets);
            let _ = self.engine.wait_all(&p.tickets);
            self.drop_entry(p.id);
        }
        self.cache.unpin_all();
        self.pinned.clear();
    }

    /// Read `entries` (layer, expert) into the cache, as many as the budget holds, in one batch
    /// of reads (a saved session's cache, warmed at load). Between generations only; entries
    /// out of range are skipped. Returns how many were read.
    ///
    /// # Errors
    /// A failed read (its file, offset and length); the entries of the batch then leave the
    /// cache.
    pub fn warm(&mut self, entries: &[[u32; 2]]) -> Result<usize> {
        debug_assert!(self.pend.is_empty() && self.inflight.is_empty(), "warm between generations");
        let mut reqs = Vec::new();
        let mut admitted = Vec::new();
        for &[layer, expert] in entries {
            let Ok(id) = self.cache.geometry().id(ExpertKey { layer, expert }) else { continue };
            if self.cache.is_resident(id) || admitted.len() >= self.n_slots {
                continue;
            }
            self.cache.begin_layer(Position { phase: Phase::Prefill, token: self.token, layer });
            let a = Access { id, rank: 0, weight: 0.0, seq: self.seq };
            self.seq += 1;
            self.evicted.clear();
            self.cache.admit(&a, &mut self.evicted);
            self.free_evicted();
            let Some(slot) = self.free.pop() else {
                self.evicted.clear();
                self.cache.remove(id, &mut self.evicted);
                break;
            };
            self.slot_of[id as usize] = Some(slot);
            reqs.extend(self.entry_requests(slot, layer as usize, expert));
            admitted.push(id);
        }
        self.cache.unpin_all();
        let done = self.engine.submit(&reqs).and_then(|t| self.engine.wait_all(&t).map(|()| t.len()));
        match done {
            Ok(_) => {
                let bytes: u64 = reqs.iter().map(|r| r.len as u64).sum();
                self.stats.bytes_read += bytes;
                self.stats.reads += admitted.len() as u64;
                Ok(admitted.len())
            }
            Err(e) => {
                for id in admitted {
                    self.drop_entry(id);
                }
                Err(e.into())
            }
        }
    }

    /// Whether look-ahead is on, and why it switched itself off if it did.
    pub fn lookahead(&self) -> (bool, Option<&str>) {
        (self.lookahead.on(), self.lookahead.off_reason())
    }

    /// Per layer look-ahead figures (decode), one per MoE layer.
    pub fn lookahead_layers(&self) -> &[LayerLookahead] {
        self.lookahead.layers()
    }
}

// SAFETY: the pointers are payloads in slots of our pool that hold the entry's bytes (the
// reads of a miss completed before acquire returns; a failed read drops the entry and
// returns an error). Every entry handed out is pinned until `release`, so its slot is not
// reused (no eviction of pinned entries, and a slot is reused only after eviction).
unsafe impl ExpertProvider for StreamingExperts {
    fn acquire(&mut self, layer: u32, experts: &[u32], out: &mut Vec<ExpertPtrs>) -> Result<()> {
        self.acquire_start(layer, experts, out)?;
        while !self.pend.is_empty() {
            self.acquire_more()?;
        }
        Ok(())
    }

    fn acquire_start(&mut self, layer: u32, experts: &[u32], out: &mut Vec<ExpertPtrs>) -> Result<Vec<usize>> {
        let t0 = Instant::now();
        let io_before = self.stats.io_s;
        out.clear();
        debug_assert!(self.pend.is_empty(), "an acquire still in progress");
        // Speculative reads of other entries: kept if they landed, else cancelled. This
        // layer's routed ones stay in flight and are waited for like misses (a failed one is
        // read again).
        if !self.inflight.is_empty() {
            let pending: Vec<EntryId> = self.inflight.keys().copied().collect();
            for id in pending {
                let key = self.cache.geometry().key(id);
                // A later layer's read stays too: route-ahead reads several layers ahead.
                let wanted = (key.layer == layer && experts.contains(&key.expert)) || key.layer > layer;
                let landed = self.inflight[&id].iter().all(Ticket::is_done);
                if landed {
                    let spec = self.speculative.contains(&id);
                    if !self.settle(id, false) {
                        self.drop_entry(id);
                    } else if spec {
                        self.speculative.insert(id);
                    }
                } else if !wanted {
                    self.drop_entry(id);
                }
            }
        }
        if self.phase == Phase::Decode {
            self.lookahead.score(layer, experts);
        }
        self.cache.begin_layer(Position { phase: self.phase, token: self.token, layer });
        let geom_id = |c: &ExpertCache, e: u32| c.geometry().id(ExpertKey { layer, expert: e });
        // Hits first (pinned; a speculative one still in flight is waited for later), then
        // misses (admitted, evicting by policy).
        let mut misses = Vec::new();
        let mut ids = Vec::with_capacity(experts.len());
        let mut ready = Vec::with_capacity(experts.len());
        for (rank, &e) in experts.iter().enumerate() {
            let id = geom_id(&self.cache, e)?;
            let a = Access { id, rank: rank as u32, weight: 0.0, seq: self.seq };
            self.seq += 1;
            if self.cache.lookup(&a) == Lookup::Miss {
                misses.push((rank, a));
            } else {
                if self.speculative.remove(&id) {
                    self.lookahead.used(layer);
                }
                match self.inflight.remove(&id) {
                    Some(tickets) => self.pend.push(Pending { idx: rank, id, tickets, spec: true }),
                    None => ready.push(rank),
                }
            }
            ids.push(id);
            self.pinned.push(id);
        }
        let entry_payload = self.layout.entry_payload(layer as usize);
        let routed = entry_payload * experts.len() as u64;
        self.stats.routed_bytes += routed;
        if self.phase == Phase::Decode {
            self.stats.max_layer_routed_bytes = self.stats.max_layer_routed_bytes.max(routed);
        }
        metrics::counter!("bmoe_expert_hits_total").increment((experts.len() - misses.len()) as u64);
        metrics::counter!("bmoe_expert_misses_total").increment(misses.len() as u64);
        let mut n_evicted = 0u64;
        for (_, a) in &misses {
            self.evicted.clear();
            self.cache.admit(a, &mut self.evicted);
            n_evicted += self.evicted.len() as u64;
            self.free_evicted();
            let Some(slot) = self.free.pop() else {
                for (_, b) in &misses {
                    self.drop_entry(b.id);
                }
                self.fail_pending();
                return Err(Error::Provider(format!(
                    "no free slot among {} for layer {layer}: {} experts at once",
                    self.n_slots,
                    experts.len()
                )));
            };
            self.slot_of[a.id as usize] = Some(slot);
        }
        metrics::counter!("bmoe_expert_evictions_total").increment(n_evicted);
        self.pend_layer = layer;
        self.pend_experts.clear();
        self.pend_experts.extend_from_slice(experts);
        // Bookkeeping time, without the waits for speculative reads (counted as I/O by settle).
        self.stats.manage_s += (t0.elapsed().as_secs_f64() - (self.stats.io_s - io_before)).max(0.0);
        let entries: Vec<(usize, EntryId)> = misses.iter().map(|&(rank, a)| (rank, a.id)).collect();
        if let Err(e) = self.submit_entries(&entries) {
            for (_, b) in &misses {
                self.drop_entry(b.id);
            }
            self.fail_pending();
            return Err(e);
        }
        self.stats.reads += misses.len() as u64;
        for (&id, &e) in ids.iter().zip(experts) {
            let slot = self.slot_of[id as usize].expect("a pinned entry has a slot");
            let mut p = ExpertPtrs::NULL;
            for which in 0..3 {
                let (_, len, dest) = self.layout.payload(slot, layer as usize, which, e);
                *p.get_mut(which) = self.pool.ptr_at(dest, len)?.cast_const();
            }
            out.push(p);
        }
        Ok(ready)
    }

    fn acquire_more(&mut self) -> Result<Vec<usize>> {
        if self.pend.is_empty() {
            return Ok(Vec::new());
        }
        let t = Instant::now();
        let mut ready = Vec::new();
        let mut failed = None;
        loop {
            let mut i = 0;
            while i < self.pend.len() {
                if !self.pend[i].tickets.iter().all(Ticket::is_done) {
                    i += 1;
                    continue;
                }
                let p = self.pend.swap_remove(i);
                match self.engine.wait_all(&p.tickets) {
                    Ok(()) => ready.push(p.idx),
                    // A speculative read that failed: read it again, as any miss.
                    Err(_) if p.spec => {
                        self.stats.reads += 1;
                        if let Err(e) = self.submit_entries(&[(p.idx, p.id)]) {
                            failed.get_or_insert((p.id, e));
                        }
                    }
                    Err(e) => {
                        failed.get_or_insert((p.id, Error::from(e)));
                    }
                }
            }
            if failed.is_some() || !ready.is_empty() || self.pend.is_empty() {
                break;
            }
            // One of an entry's reads landing is not enough: wait on the ones still out.
            let out: Vec<&Ticket> = self.pend.iter().flat_map(|p| p.tickets.iter()).filter(|t| !t.is_done()).collect();
            self.engine.wait_any_of(&out);
        }
        let waited = t.elapsed();
        self.stats.io_s += waited.as_secs_f64();
        metrics::counter!("bmoe_io_wait_microseconds_total").increment(waited.as_micros() as u64);
        if let Some((id, e)) = failed {
            // The entry's bytes are not trustworthy: it leaves the cache, and so do the ones
            // still being read (after their reads are drained).
            self.drop_entry(id);
            self.fail_pending();
            return Err(e);
        }
        Ok(ready)
    }

    fn release(&mut self, _layer: u32) {
        self.cache.unpin_all();
        self.pinned.clear();
    }

    fn capacity(&self) -> usize {
        self.n_slots
    }

    fn stacks(&self, layer: u32) -> Option<Projections<Stack>> {
        if !self.layout.stacked || layer as usize >= self.layout.regions.len() {
            return None;
        }
        let mut st = Projections::<Stack>::default();
        for which in 0..3 {
            // Where a payload lands in slot 0; every slot holds its entry at the same place.
            let at = self.layout.stack_offset(layer as usize, which);
            let len = self.layout.regions[layer as usize].get(which).len as usize;
            let base = self.pool.ptr_at(at, len).ok()?.cast_const();
            *st.get_mut(which) = Stack { base, stride: self.layout.slot_bytes, count: self.n_slots_max };
        }
        Some(st)
    }

    fn counters(&self) -> Option<ProviderCounters> {
        let c = self.cache.counters().total();
        let la = self.lookahead.totals();
        Some(ProviderCounters {
            bytes_read: self.stats.bytes_read,
            io_s: self.stats.io_s,
            manage_s: self.stats.manage_s,
            hits: c.hits,
            misses: c.misses,
            evictions: c.evictions,
            routed_bytes: self.stats.routed_bytes,
            max_layer_routed_bytes: self.stats.max_layer_routed_bytes,
            resident_bytes: self.cache.resident_bytes(),
            spec_entries: la.spec_entries,
            spec_bytes: self.stats.spec_bytes,
            spec_useful: la.spec_useful,
            predicted_real: la.predicted_real,
            real_with_prediction: la.real_with_prediction,
            overlay_s: None,
            overlay_critical_s: None,
        })
    }

    fn wants_lookahead(&self) -> bool {
        self.lookahead.on()
    }

    fn prefetch(&mut self, layer: u32, experts: &[u32]) {
        if !self.lookahead.on() {
            return;
        }
        let t0 = Instant::now();
        let io_before = self.stats.io_s;
        // A decode prediction is kept to be scored against the real routing; a prefill's
        // (the union of a micro-batch's predictions) is not: accuracy is a decode figure. Both
        // read under the same rule (a layer whose speculative entries go unused stops).
        let reads_on = match self.phase {
            Phase::Decode => self.lookahead.predict(layer, experts),
            _ => self.lookahead.reads_on(layer),
        };
        if !reads_on {
            return;
        }
        let mut reqs = Vec::new();
        let mut owners = Vec::new();
        for (rank, &e) in experts.iter().enumerate() {
            let Ok(id) = self.cache.geometry().id(ExpertKey { layer, expert: e }) else { continue };
            if self.cache.is_resident(id) {
                continue;
            }
            let a = Access { id, rank: rank as u32, weight: 0.0, seq: self.seq };
            self.seq += 1;
            self.evicted.clear();
            self.cache.admit(&a, &mut self.evicted);
            self.free_evicted();
            // No unpinned entry could make room (every slot holds this layer's experts).
            let Some(slot) = self.free.pop() else {
                self.evicted.clear();
                self.cache.remove(id, &mut self.evicted);
                break;
            };
            self.slot_of[id as usize] = Some(slot);
            reqs.extend(self.entry_requests(slot, layer as usize, e));
            owners.push(id);
        }
        if !reqs.is_empty() {
            match self.engine.submit(&reqs) {
                Ok(tickets) => {
                    let mut tickets = tickets.into_iter();
                    for &id in &owners {
                        let t: Vec<Ticket> = tickets.by_ref().take(3).collect();
                        self.inflight.insert(id, t);
                        self.speculative.insert(id);
                    }
                    let bytes: u64 = reqs.iter().map(|r| r.len as u64).sum();
                    self.lookahead.read_ahead(layer, owners.len() as u64);
                    self.stats.spec_bytes += bytes;
                    self.stats.bytes_read += bytes;
                    metrics::counter!("bmoe_expert_spec_bytes_total").increment(bytes);
                }
                Err(_) => {
                    for &id in &owners {
                        self.drop_entry(id);
                    }
                }
            }
        }
        self.stats.manage_s += (t0.elapsed().as_secs_f64() - (self.stats.io_s - io_before)).max(0.0);
    }

    fn residency(&self, layer: u32, expert: u32) -> Residency {
        let Ok(id) = self.cache.geometry().id(ExpertKey { layer, expert }) else { return Residency::Absent };
        match self.inflight.get(&id) {
            Some(t) if !t.iter().all(Ticket::is_done) => Residency::InFlight,
            _ if self.cache.is_resident(id) => Residency::Resident,
            _ => Residency::Absent,
        }
    }

    fn entry_bytes(&self, layer: u32) -> u64 {
        self.layout.entry_payload(layer as usize)
    }

    fn begin_step(&mut self, prefill: bool) {
        // The rule (see the lookahead module): per layer, then for the model.
        self.lookahead.judge();
        self.phase = if prefill { Phase::Prefill } else { Phase::Decode };
        self.token += 1;
    }
}
