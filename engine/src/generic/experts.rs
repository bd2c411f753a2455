//! The generic streamer: the routed experts of llama.cpp's graph, read into the slots of a
//! memfd-backed registered pool that is the expert cache, and overlaid onto llama.cpp's mapping
//! of the file ([`super::overlay`]) so that its own `mul_mat_id` reads them.
//!
//! The same parts as the native streamer: [`ExpertCache`] and its policies decide what stays,
//! [`ReadEngine`] reads, the budget is whole slots. What differs is the unit of waiting: one
//! `mul_mat_id` computes every routed expert of a projection at once, so a layer is routed as a
//! whole ([`GenericExperts::route`]: hits pinned, misses given slots, every read submitted in
//! the order the graph computes the projections, then the misses' windows overlaid while their
//! reads are in flight) and waited for one projection at a time ([`GenericExperts::wait`]: its
//! reads, and the few windows that could not be shown early), so that the graph computes the
//! first projection while the others still read.
//!
//! A window may show its slot before the read into it lands, since nothing computes on it
//! before the wait for its projection returns, and that wait covers every read of the
//! projection tensor's routed experts: a page one expert's window shares with another expert of
//! the same tensor is waited for either way. A window whose edge page holds bytes of another
//! tensor (a dense one, or another projection, computed without this wait) is overlaid only once
//! its read has landed.
//!
//! Look-ahead ([`GenericExperts::prefetch`]): the seam predicts the next MoE layer's experts
//! while this one computes and the streamer reads the ones not resident into slots, under the
//! native streamer's rule and counters ([`Lookahead`]): such an entry, when routed, is
//! *prefetch-served* (its reads waited for and its windows overlaid like a miss's), not a hit;
//! one not routed by its layer stays in the cache if it landed, else it is cancelled.
//!
//! Invariants: a slot's windows are restored before new bytes are read into it (an evicted
//! entry's pages leave llama.cpp's mapping first); no slot is reused, and no window restored,
//! while a read into it is in flight (speculative reads are settled first); an entry whose read
//! failed leaves the cache, its overlaid windows restored; nothing pinned is evicted.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use bmoe_uring_io::{BufferPool, FileId, ReadEngine, Request, Ticket};

use super::index::GenericIndex;
use super::overlay::{Overlay, Window};
use crate::cache::{Access, CachePolicy, EntryId, ExpertCache, ExpertKey, Geometry, Lookup, Phase, Position};
use crate::error::{Error, Result};
use crate::stream::layout::region_bytes_in;
use crate::stream::lookahead::{LayerLookahead, Lookahead};

/// One projection of a MoE layer: where its experts lie and where they land in a slot.
#[derive(Clone, Copy, Debug)]
struct Region {
    shard: usize,
    /// File offset of expert 0's slice, and one slice's bytes.
    base: u64,
    len: u64,
    /// Start of the projection's region in a slot (page-aligned).
    start: usize,
}

/// The generic streamer's counters (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GenericStats {
    pub bytes_read: u64,
    pub reads: u64,
    /// Seconds waiting for reads.
    pub io_s: f64,
    /// Seconds of cache bookkeeping and submission.
    pub manage_s: f64,
    /// Payload bytes of every routed expert (hits and misses).
    pub routed_bytes: u64,
    pub max_layer_routed_bytes: u64,
    /// Bytes read by look-ahead (also in `bytes_read`).
    pub spec_bytes: u64,
    /// Seconds of overlay mappings on the critical path: made after a wait, or early with no
    /// read left in flight to hide them (the overlay table's `seconds` counts them all).
    pub overlay_critical_s: f64,
}

/// An entry of the routed layer whose windows are still to be overlaid: read now, read ahead
/// (in flight or landed), or landed earlier by look-ahead and never overlaid.
#[derive(Debug)]
struct Pending {
    /// Index into [`Routed::entries`].
    ei: usize,
    /// Per projection, its read's ticket (None once waited, or when nothing is in flight).
    tickets: Vec<Option<Ticket>>,
    /// Read ahead by look-ahead: a failed read is read again, as any miss.
    spec: bool,
}

/// The routed layer in progress.
#[derive(Debug, Default)]
struct Routed {
    /// MoE layer index.
    layer: usize,
    /// The layer's routed entries (the union over the micro-batch), with their slots.
    entries: Vec<(EntryId, u32)>,
    pending: Vec<Pending>,
    /// Projections waited for (and overlaid).
    done: Vec<bool>,
}

/// The generic streamer. See the module docs.
#[derive(Debug)]
pub struct GenericExperts {
    engine: ReadEngine,
    pool: Arc<BufferPool>,
    files: Vec<FileId>,
    regions: Vec<Vec<Region>>,
    slot_bytes: usize,
    n_slots: usize,
    cache: ExpertCache,
    slot_of: Vec<Option<u32>>,
    /// Per entry: which projections' windows are overlaid (bit p).
    mapped: Vec<u32>,
    free: Vec<u32>,
    overlay: Overlay,
    shard_len: Vec<u64>,
    phase: Phase,
    token: u64,
    seq: u64,
    evicted: Vec<ExpertKey>,
    routed: Option<Routed>,
    stats: GenericStats,
    /// Test only: the n-th miss read (0-based) is skipped, its window overlaid with whatever
    /// the slot held (the gates' negative case).
    skip_read: Option<u64>,
    /// Wait for every projection of a layer before its first computes (`--overlap off`).
    serial: bool,
    /// Look-ahead's predictions, scores and rule.
    lookahead: Lookahead,
    /// Entries read ahead whose reads may still be in flight: per projection, the ticket.
    inflight: HashMap<EntryId, Vec<Option<Ticket>>>,
    /// Entries read ahead and not yet routed.
    speculative: HashSet<EntryId>,
    /// Per MoE layer, the experts its last routing named (tests, tools).
    last: Vec<Vec<u32>>,
}

/// The slot bytes of `index`'s experts with pages of `page` bytes: the widest layer's regions.
pub fn slot_bytes(index: &GenericIndex, page: u64) -> usize {
    index
        .layers
        .iter()
        .map(|l| l.tensors.iter().map(|t| region_bytes_in(t.bytes_per_expert, page)).sum())
        .max()
        .unwrap_or(0)
}

impl GenericExperts {
    /// A streamer of `index`'s experts in `n_slots` slots of `pool` (a memfd pool of at least
    /// `n_slots × slot_bytes(index, page)` bytes) read by `engine`, overlaid through `overlay`.
    ///
    /// # Errors
    /// The cache's for a bad geometry; the read engine's for a shard it cannot open.
    pub fn new(
        index: &GenericIndex,
        engine: ReadEngine,
        n_slots: usize,
        policy: CachePolicy,
        overlay: Overlay,
    ) -> Result<Self> {
        let page = overlay.page();
        let slot_bytes = slot_bytes(index, page);
        let pool = engine.pool().clone();
        let fits = n_slots.checked_mul(slot_bytes).is_some_and(|b| b <= pool.size());
        if pool.memfd().is_some() == overlay.in_place() || (!overlay.in_place() && !fits) {
            return Err(Error::Invalid(format!(
                "the generic streamer needs a memfd pool of {n_slots} slots of {slot_bytes} bytes (has {} bytes, memfd {}), \
                 or in place a pool over llama.cpp's mapping",
                pool.size(),
                pool.memfd().is_some()
            )));
        }
        let regions = index
            .layers
            .iter()
            .map(|l| {
                let mut at = 0;
                l.tensors
                    .iter()
                    .map(|t| {
                        let r = Region { shard: t.shard, base: t.offset, len: t.bytes_per_expert, start: at };
                        at += region_bytes_in(t.bytes_per_expert, page);
                        r
                    })
                    .collect()
            })
            .collect();
        let geom = Geometry::new(index.n_expert, vec![slot_bytes as u64; index.layers.len()])?;
        let cache = ExpertCache::new(geom, (n_slots * slot_bytes) as u64, policy.build()?);
        let files = crate::dense::open_all(&engine, &index.file)?;
        let n_entries = cache.geometry().n_entries();
        Ok(Self {
            engine,
            pool,
            files,
            regions,
            slot_bytes,
            n_slots,
            cache,
            slot_of: vec![None; n_entries],
            mapped: vec![0; n_entries],
            free: (0..n_slots as u32).rev().collect(),
            overlay,
            shard_len: index.file.shards.iter().map(|s| s.header.file_len).collect(),
            phase: Phase::Prefill,
            token: 0,
            seq: 0,
            evicted: Vec::new(),
            routed: None,
            stats: GenericStats::default(),
            skip_read: None,
            serial: false,
            lookahead: Lookahead::new(false, index.layers.len()),
            inflight: HashMap::new(),
            speculative: HashSet::new(),
            last: vec![Vec::new(); index.layers.len()],
        })
    }

    /// The experts MoE layer `layer`'s last routing named (the union over its micro-batch), in
    /// the order routed.
    pub fn last_routed(&self, layer: usize) -> &[u32] {
        self.last.get(layer).map_or(&[], Vec::as_slice)
    }

    /// Read the next layer's predicted experts while this one computes ([`Self::prefetch`]).
    pub fn set_lookahead(&mut self, on: bool) {
        self.lookahead = Lookahead::new(on, self.regions.len());
    }

    /// Whether look-ahead is on, and why the rule turned it off if it did.
    pub fn lookahead(&self) -> (bool, Option<&str>) {
        (self.lookahead.on(), self.lookahead.off_reason())
    }

    /// Per MoE layer look-ahead figures.
    pub fn lookahead_layers(&self) -> &[LayerLookahead] {
        self.lookahead.layers()
    }

    /// Sums of the look-ahead figures.
    pub fn lookahead_totals(&self) -> LayerLookahead {
        self.lookahead.totals()
    }

    /// The phase of the pass in progress.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Slots in the pool.
    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    /// Bytes of a slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// The read engine (backend, lanes, fixed buffers).
    pub fn engine(&self) -> &ReadEngine {
        &self.engine
    }

    /// The cache (counters, policy, resident entries).
    pub fn cache(&self) -> &ExpertCache {
        &self.cache
    }

    /// The overlay table (its counters).
    pub fn overlay(&self) -> &Overlay {
        &self.overlay
    }

    /// The overlay table, mutably (tests: a small cap on stale windows).
    #[doc(hidden)]
    pub fn overlay_mut(&mut self) -> &mut Overlay {
        &mut self.overlay
    }

    /// The counters.
    pub fn stats(&self) -> GenericStats {
        self.stats
    }

    /// Projections of MoE layer `layer`.
    pub fn n_proj(&self, layer: usize) -> usize {
        self.regions[layer].len()
    }

    /// Wait for a layer's every projection before its first computes (read, then compute), or
    /// each just before it computes (the default).
    pub fn set_serial(&mut self, on: bool) {
        self.serial = on;
    }

    /// Test only: skip the `n`-th miss's reads (0-based, counted over the streamer's life),
    /// so the gates can show that a skipped read changes the bits.
    #[doc(hidden)]
    pub fn skip_read(&mut self, n: Option<u64>) {
        self.skip_read = n;
    }

    /// A new forward pass: a prefill micro-batch or one decode step.
    pub fn begin_step(&mut self, prefill: bool) {
        // Look-ahead's rule (see `stream::lookahead`): per layer, then for the model.
        self.lookahead.judge();
        self.phase = if prefill { Phase::Prefill } else { Phase::Decode };
        self.token += 1;
    }

    fn window(&self, layer: usize, p: usize, expert: u32) -> (Window, u64, usize) {
        let r = self.regions[layer][p];
        let w = self.overlay.window(r.shard, r.base + u64::from(expert) * r.len, r.len);
        let page = self.overlay.page();
        let read_end = (w.end * page).min(self.shard_len[r.shard]);
        (w, read_end - w.first * page, r.start)
    }

    fn pool_off(&self, slot: u32, start: usize) -> u64 {
        (slot as usize * self.slot_bytes + start) as u64
    }

    /// Whether window `w` of projection `p` of MoE layer `layer` holds bytes of its projection
    /// tensor's experts only, so that it may show its slot before the read into it lands.
    fn early_safe(&self, layer: usize, p: usize, w: Window) -> bool {
        let r = self.regions[layer][p];
        let page = self.overlay.page();
        let end = r.base + r.len * u64::from(self.cache.geometry().n_expert());
        w.first * page >= r.base && (w.end * page <= end || end >= self.shard_len[r.shard])
    }

    /// Overlay now, reads into them in flight or not, the windows of entries `ids` (of MoE
    /// layer `layer`, each with its slot) that may show their slots early
    /// ([`Self::early_safe`]); the others are overlaid after their wait. Returns the seconds it
    /// took. A mapping the kernel refuses is left to the wait, which reports it.
    fn overlay_early(&mut self, layer: usize, ids: impl IntoIterator<Item = EntryId>) -> f64 {
        if self.overlay.in_place() {
            return 0.0;
        }
        let t = Instant::now();
        let pool = self.pool.clone();
        let fd = pool.memfd().expect("a memfd pool");
        'entries: for id in ids {
            let Some(slot) = self.slot_of[id as usize] else { continue };
            let expert = self.cache.geometry().key(id).expert;
            for p in 0..self.regions[layer].len() {
                if self.mapped[id as usize] & (1 << p) != 0 {
                    continue;
                }
                let (w, _, start) = self.window(layer, p, expert);
                if !self.early_safe(layer, p, w) {
                    continue;
                }
                let off = self.pool_off(slot, start);
                if self.overlay.overlay(fd, w, off).is_err() {
                    break 'entries;
                }
                self.mapped[id as usize] |= 1 << p;
            }
        }
        t.elapsed().as_secs_f64()
    }

    /// Where the overlay table knows window `p` of entry `id` in `slot` by: its copy's pool
    /// offset, or in place a number unique to the window.
    fn copy_of(&self, id: EntryId, slot: u32, start: usize, p: usize) -> u64 {
        if self.overlay.in_place() {
            u64::from(id) * 64 + p as u64
        } else {
            self.pool_off(slot, start)
        }
    }

    /// Put the overlaid windows of entry `id` (in `slot`) back: retired lazily from a memfd
    /// pool, restored at once in place (its claimed pages go back).
    fn unmap(&mut self, id: EntryId, slot: u32) -> Result<()> {
        let key = self.cache.geometry().key(id);
        let layer = key.layer as usize;
        let pool = self.pool.clone();
        let fd = pool.memfd();
        for p in 0..self.regions[layer].len() {
            if self.mapped[id as usize] & (1 << p) == 0 {
                continue;
            }
            let (w, _, start) = self.window(layer, p, key.expert);
            let copy = self.copy_of(id, slot, start, p);
            match fd {
                // Lazily: the window keeps showing the slot (see the overlay module).
                Some(fd) => self.overlay.retire(fd, w, copy)?,
                None => self.overlay.restore(None, w, copy)?,
            }
            self.mapped[id as usize] &= !(1 << p);
        }
        Ok(())
    }

    /// Wait for (after cancelling, with `cancel`) the reads of read-ahead entry `id` still in
    /// flight, so that its slot may be reused; whether they all landed.
    fn settle(&mut self, id: EntryId, cancel: bool) -> bool {
        self.speculative.remove(&id);
        let Some(tickets) = self.inflight.remove(&id) else { return true };
        let tickets: Vec<Ticket> = tickets.into_iter().flatten().collect();
        if cancel {
            self.engine.cancel(&tickets);
        }
        let t = Instant::now();
        let ok = self.engine.wait_all(&tickets).is_ok();
        self.stats.io_s += t.elapsed().as_secs_f64();
        ok
    }

    /// Free the slots of the entries the cache evicted, their reads settled and their windows
    /// restored first.
    fn free_evicted(&mut self) -> Result<()> {
        for k in std::mem::take(&mut self.evicted) {
            let id = self.cache.geometry().id(k)?;
            self.settle(id, true);
            if let Some(slot) = self.slot_of[id as usize].take() {
                self.unmap(id, slot)?;
                self.free.push(slot);
            }
        }
        Ok(())
    }

    /// Drop entry `id` (its bytes are not to be trusted): out of the cache, windows restored.
    fn drop_entry(&mut self, id: EntryId) {
        self.settle(id, true);
        self.evicted.clear();
        self.cache.remove(id, &mut self.evicted);
        if let Some(slot) = self.slot_of[id as usize].take() {
            // A restore that fails leaves a slot's bytes mapped: keep the slot out of use.
            if self.unmap(id, slot).is_ok() {
                self.free.push(slot);
            }
        }
        self.evicted.clear();
    }

    /// The read of projection `p` of entry `id` (expert `expert` of MoE layer `layer`) into
    /// `slot`: into the slot's region (a memfd pool), or in place (the window claimed in
    /// llama.cpp's mapping first, its bit set in `mapped`). None when nothing is to be read (in
    /// place, every page of the window is another window's).
    ///
    /// # Errors
    /// A mapping the kernel refused (in place).
    fn request(&mut self, id: EntryId, slot: u32, layer: usize, p: usize, expert: u32) -> Result<Option<Request>> {
        let (w, len, start) = self.window(layer, p, expert);
        let r = self.regions[layer][p];
        let page = self.overlay.page();
        let (offset, len, dest) = if self.overlay.in_place() {
            // The read lands at the window's own address, claimed first: the pages no other
            // window holds.
            let copy = self.copy_of(id, slot, start, p);
            let (a, b) = self.overlay.claim(w, copy)?;
            self.mapped[id as usize] |= 1 << p;
            let end = (b * page).min(self.shard_len[r.shard]).max(a * page);
            ((a * page), (end - a * page) as usize, self.overlay.address(r.shard, a) - self.pool.as_ptr() as usize)
        } else {
            (w.first * page, len as usize, slot as usize * self.slot_bytes + start)
        };
        Ok((len > 0).then_some(Request { file: self.files[r.shard], offset, len, dest }))
    }

    /// Route MoE layer `layer` to `experts` (distinct, the union over the micro-batch): hits
    /// pinned, misses given slots (evicting by policy, the evicted entries' windows restored)
    /// and every read submitted, projection by projection in the graph's order (`order`: the
    /// projections in the order the graph computes them, or none known yet). Entries read
    /// ahead for this layer are waited for like misses (prefetch-served); read-ahead entries of
    /// other layers are kept if they landed, else cancelled.
    ///
    /// # Errors
    /// [`Error::Provider`] when the union does not fit the slots; the cache's, the read
    /// engine's, a mapping the kernel refused. The layer is then released, its misses dropped.
    pub fn route(&mut self, layer: usize, experts: &[u32], order: &[usize]) -> Result<()> {
        let t0 = Instant::now();
        let io0 = self.stats.io_s;
        self.release();
        if experts.len() > self.n_slots {
            return Err(Error::Provider(format!(
                "layer {layer} routes {} experts at once and the cache has {} slots: a smaller --ubatch fits",
                experts.len(),
                self.n_slots
            )));
        }
        if !self.inflight.is_empty() {
            let ids: Vec<EntryId> = self.inflight.keys().copied().collect();
            for id in ids {
                let key = self.cache.geometry().key(id);
                let wanted = key.layer as usize == layer && experts.contains(&key.expert);
                let landed = self.inflight[&id].iter().flatten().all(Ticket::is_done);
                if landed {
                    let spec = self.speculative.contains(&id);
                    if !self.settle(id, false) {
                        // Its bytes are not to be trusted: out (a wanted one is read again
                        // below, as a miss).
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
            self.lookahead.score(layer as u32, experts);
        }
        self.last[layer].clear();
        self.last[layer].extend_from_slice(experts);
        self.cache.begin_layer(Position { phase: self.phase, token: self.token, layer: layer as u32 });
        let n_proj = self.regions[layer].len();
        let all_mapped = (1u32 << n_proj) - 1;
        let mut routed = Routed { layer, done: vec![false; n_proj], ..Routed::default() };
        let mut misses = Vec::new();
        for (rank, &e) in experts.iter().enumerate() {
            let id = self.cache.geometry().id(ExpertKey { layer: layer as u32, expert: e })?;
            let a = Access { id, rank: rank as u32, weight: 0.0, seq: self.seq };
            self.seq += 1;
            if self.cache.lookup(&a) == Lookup::Miss {
                misses.push(a);
                continue;
            }
            let spec = self.speculative.remove(&id);
            if spec {
                self.lookahead.used(layer as u32);
            }
            let ei = routed.entries.len();
            routed.entries.push((id, self.slot_of[id as usize].expect("a resident entry has a slot")));
            match self.inflight.remove(&id) {
                Some(tickets) => routed.pending.push(Pending { ei, tickets, spec: true }),
                // Landed by look-ahead and never overlaid (in place it is mapped already).
                None if self.mapped[id as usize] != all_mapped => {
                    routed.pending.push(Pending { ei, tickets: (0..n_proj).map(|_| None).collect(), spec })
                }
                None => {}
            }
        }
        let payload: u64 = self.regions[layer].iter().map(|r| r.len).sum();
        let routed_bytes = payload * experts.len() as u64;
        self.stats.routed_bytes += routed_bytes;
        if self.phase == Phase::Decode {
            self.stats.max_layer_routed_bytes = self.stats.max_layer_routed_bytes.max(routed_bytes);
        }
        metrics::counter!("bmoe_expert_hits_total").increment((experts.len() - misses.len()) as u64);
        metrics::counter!("bmoe_expert_misses_total").increment(misses.len() as u64);
        let before = self.cache.counters().total().evictions;
        let mut read = Vec::with_capacity(misses.len());
        let mut failed = None;
        for a in &misses {
            self.evicted.clear();
            self.cache.admit(a, &mut self.evicted);
            if let Err(e) = self.free_evicted() {
                failed = Some(e);
                break;
            }
            let Some(slot) = self.free.pop() else {
                failed = Some(Error::Provider(format!(
                    "no free slot among {} for layer {layer}: {} experts at once",
                    self.n_slots,
                    experts.len()
                )));
                break;
            };
            self.slot_of[a.id as usize] = Some(slot);
            read.push(routed.pending.len());
            routed.pending.push(Pending {
                ei: routed.entries.len(),
                tickets: (0..n_proj).map(|_| None).collect(),
                spec: false,
            });
            routed.entries.push((a.id, slot));
        }
        metrics::counter!("bmoe_expert_evictions_total").increment(self.cache.counters().total().evictions - before);
        // Submit: the projections in graph order, each over every miss, so the first one the
        // graph needs lands first.
        let mut procs: Vec<usize> = order.iter().copied().filter(|&p| p < n_proj).collect();
        procs.extend((0..n_proj).filter(|p| !order.contains(p)));
        let mut reqs = Vec::with_capacity(read.len() * n_proj);
        let mut owners = Vec::with_capacity(reqs.capacity());
        'submit: for &p in &procs {
            if failed.is_some() {
                break;
            }
            for (n, &pi) in read.iter().enumerate() {
                let (id, slot) = routed.entries[routed.pending[pi].ei];
                let expert = self.cache.geometry().key(id).expert;
                match self.request(id, slot, layer, p, expert) {
                    Ok(Some(r)) if self.skip_read != Some(self.stats.reads + n as u64) => {
                        reqs.push(r);
                        owners.push((pi, p));
                    }
                    Ok(_) => {}
                    Err(e) => {
                        failed = Some(e);
                        break 'submit;
                    }
                }
            }
        }
        if let Some(e) = failed {
            self.fail(routed);
            return Err(e);
        }
        self.stats.reads += read.len() as u64;
        self.stats.manage_s += (t0.elapsed().as_secs_f64() - (self.stats.io_s - io0)).max(0.0);
        match self.engine.submit(&reqs) {
            Ok(tickets) => {
                let bytes: u64 = reqs.iter().map(|r| r.len as u64).sum();
                self.stats.bytes_read += bytes;
                metrics::counter!("bmoe_expert_bytes_read_total").increment(bytes);
                for ((pi, p), t) in owners.into_iter().zip(tickets) {
                    routed.pending[pi].tickets[p] = Some(t);
                }
                // The windows shown while the reads run: off the critical path unless every
                // read had landed by the time the mappings were made.
                let t = self.overlay_early(layer, routed.pending.iter().map(|pe| routed.entries[pe.ei].0));
                let hidden = routed.pending.iter().flat_map(|pe| pe.tickets.iter().flatten()).any(|t| !t.is_done());
                if !hidden {
                    self.stats.overlay_critical_s += t;
                }
                self.stats.manage_s += t;
                self.routed = Some(routed);
                Ok(())
            }
            Err(e) => {
                self.fail(routed);
                Err(e.into())
            }
        }
    }

    /// Read `experts`, the predicted experts of MoE layer `layer` (the next one routed), into
    /// the cache while the current layer computes: those not resident, as many as free or
    /// evictable slots hold, under look-ahead's rule. A decode step's prediction is kept to be
    /// scored against the layer's real routing; a prefill's is not (accuracy is a decode figure).
    pub fn prefetch(&mut self, layer: usize, experts: &[u32]) {
        if !self.lookahead.on() || layer >= self.regions.len() {
            return;
        }
        let t0 = Instant::now();
        let io0 = self.stats.io_s;
        let reads_on = match self.phase {
            Phase::Decode => self.lookahead.predict(layer as u32, experts),
            _ => self.lookahead.reads_on(layer as u32),
        };
        if !reads_on {
            return;
        }
        let n_proj = self.regions[layer].len();
        let mut reqs = Vec::new();
        let mut owners: Vec<(EntryId, usize)> = Vec::new();
        let mut admitted = Vec::new();
        'entries: for (rank, &e) in experts.iter().enumerate() {
            let Ok(id) = self.cache.geometry().id(ExpertKey { layer: layer as u32, expert: e }) else { continue };
            if self.cache.is_resident(id) {
                continue;
            }
            let a = Access { id, rank: rank as u32, weight: 0.0, seq: self.seq };
            self.seq += 1;
            self.evicted.clear();
            // Pinned until the next layer is routed, so that this batch never evicts itself.
            self.cache.admit(&a, &mut self.evicted);
            let Ok(()) = self.free_evicted() else {
                self.evicted.clear();
                self.cache.remove(id, &mut self.evicted);
                break;
            };
            // No unpinned entry could make room (every slot holds the routed layer's experts).
            let Some(slot) = self.free.pop() else {
                self.evicted.clear();
                self.cache.remove(id, &mut self.evicted);
                break;
            };
            self.slot_of[id as usize] = Some(slot);
            let mark = reqs.len();
            for p in 0..n_proj {
                match self.request(id, slot, layer, p, e) {
                    Ok(Some(r)) => {
                        reqs.push(r);
                        owners.push((id, p));
                    }
                    Ok(None) => {}
                    Err(_) => {
                        // A window the kernel would not claim: this entry is not read ahead.
                        reqs.truncate(mark);
                        owners.truncate(mark);
                        self.drop_entry(id);
                        break 'entries;
                    }
                }
            }
            admitted.push(id);
        }
        if !reqs.is_empty() {
            match self.engine.submit(&reqs) {
                Ok(tickets) => {
                    for &id in &admitted {
                        self.inflight.insert(id, (0..n_proj).map(|_| None).collect());
                        self.speculative.insert(id);
                    }
                    for ((id, p), t) in owners.into_iter().zip(tickets) {
                        if let Some(ts) = self.inflight.get_mut(&id) {
                            ts[p] = Some(t);
                        }
                    }
                    // Their windows shown while they read (the layer is not computed before it
                    // is routed and waited for).
                    let t = self.overlay_early(layer, admitted.iter().copied());
                    let hidden = admitted
                        .iter()
                        .filter_map(|id| self.inflight.get(id))
                        .flat_map(|ts| ts.iter().flatten())
                        .any(|t| !t.is_done());
                    if !hidden {
                        self.stats.overlay_critical_s += t;
                    }
                    let bytes: u64 = reqs.iter().map(|r| r.len as u64).sum();
                    self.lookahead.read_ahead(layer as u32, admitted.len() as u64);
                    self.stats.spec_bytes += bytes;
                    self.stats.bytes_read += bytes;
                    metrics::counter!("bmoe_expert_spec_bytes_total").increment(bytes);
                }
                Err(_) => {
                    for id in admitted {
                        self.drop_entry(id);
                    }
                }
            }
        } else {
            for id in admitted {
                // Nothing to read (in place, every page another window's): resident as is.
                self.speculative.insert(id);
            }
        }
        self.stats.manage_s += (t0.elapsed().as_secs_f64() - (self.stats.io_s - io0)).max(0.0);
    }

    /// Wait for projection `p` of the routed layer's reads, then overlay its windows. Called
    /// before the graph computes that projection; a projection already waited for returns at once.
    ///
    /// # Errors
    /// [`Error::Provider`] when no layer is routed; a read that failed (its entry and the other
    /// misses of the layer leave the cache; the layer is released); a mapping refused.
    pub fn wait(&mut self, p: usize) -> Result<()> {
        if self.serial {
            let n = self.routed.as_ref().map_or(0, |r| r.done.len());
            for q in (0..n).filter(|&q| q != p) {
                self.wait_one(q)?;
            }
        }
        self.wait_one(p)
    }

    fn wait_one(&mut self, p: usize) -> Result<()> {
        let Some(mut routed) = self.routed.take() else {
            return Err(Error::Provider("an expert projection computed before its layer was routed".into()));
        };
        if p >= routed.done.len() || routed.done[p] {
            self.routed = Some(routed);
            return Ok(());
        }
        let t = Instant::now();
        let mut failed = None;
        let layer = routed.layer;
        for i in 0..routed.pending.len() {
            let Some(ticket) = routed.pending[i].tickets[p].take() else { continue };
            let Err(e) = ticket.wait() else { continue };
            if !routed.pending[i].spec {
                failed.get_or_insert(Error::from(e));
                continue;
            }
            // A read-ahead read that failed: read it again, as any miss.
            let (id, slot) = routed.entries[routed.pending[i].ei];
            let expert = self.cache.geometry().key(id).expert;
            let again = self.request(id, slot, layer, p, expert).and_then(|r| {
                let Some(r) = r else { return Ok(()) };
                self.stats.bytes_read += r.len as u64;
                let t = self.engine.submit(&[r])?;
                Ok(self.engine.wait_all(&t)?)
            });
            if let Err(e) = again {
                failed.get_or_insert(e);
            }
        }
        let waited = t.elapsed();
        self.stats.io_s += waited.as_secs_f64();
        metrics::counter!("bmoe_io_wait_microseconds_total").increment(waited.as_micros() as u64);
        if let Some(e) = failed {
            self.fail(routed);
            return Err(e);
        }
        if self.overlay.in_place() {
            // The bytes landed where llama.cpp reads them.
            routed.done[p] = true;
            self.routed = Some(routed);
            return Ok(());
        }
        let t = Instant::now();
        let pool = self.pool.clone();
        let fd = pool.memfd().expect("a memfd pool");
        let mut mapped = Ok(());
        for pe in &routed.pending {
            let (id, slot) = routed.entries[pe.ei];
            if self.mapped[id as usize] & (1 << p) != 0 {
                continue;
            }
            let expert = self.cache.geometry().key(id).expert;
            let (w, _, start) = self.window(layer, p, expert);
            let off = self.pool_off(slot, start);
            if let Err(e) = self.overlay.overlay(fd, w, off) {
                mapped = Err(e);
                break;
            }
            self.mapped[id as usize] |= 1 << p;
        }
        self.stats.manage_s += t.elapsed().as_secs_f64();
        self.stats.overlay_critical_s += t.elapsed().as_secs_f64();
        if let Err(e) = mapped {
            self.fail(routed);
            return Err(e);
        }
        routed.done[p] = true;
        self.routed = Some(routed);
        Ok(())
    }

    /// After a failure: drain the layer's reads, drop the entries they were for, unpin.
    fn fail(&mut self, routed: Routed) {
        for pe in routed.pending {
            let t: Vec<Ticket> = pe.tickets.into_iter().flatten().collect();
            self.engine.cancel(&t);
            let _ = self.engine.wait_all(&t);
            self.drop_entry(routed.entries[pe.ei].0);
        }
        self.cache.unpin_all();
    }

    /// The routed layer is done: its entries may be evicted again. Reads not yet waited for
    /// (a projection the graph did not compute) are waited for, so no slot is reused under a
    /// read; their entries stay, their windows overlaid.
    pub fn release(&mut self) {
        if let Some(routed) = self.routed.take() {
            let left: Vec<usize> = (0..routed.done.len()).filter(|&p| !routed.done[p]).collect();
            self.routed = Some(routed);
            for p in left {
                if self.wait_one(p).is_err() {
                    break;
                }
            }
            self.routed = None;
        }
        self.cache.unpin_all();
    }

    /// Whether a projection of the routed layer is still to be waited for.
    pub fn waiting(&self) -> bool {
        self.routed.as_ref().is_some_and(|r| r.done.iter().any(|d| !d))
    }

    /// The routed layer's MoE index, if one is routed.
    pub fn routed_layer(&self) -> Option<usize> {
        self.routed.as_ref().map(|r| r.layer)
    }

    /// Read `entries` (MoE layer, expert) into the cache and overlay them, as many as the slots
    /// hold (a saved session's cache, warmed at load). Between generations only; entries out of
    /// range are skipped. Returns how many were read.
    ///
    /// # Errors
    /// A failed read; the entries of the batch then leave the cache.
    pub fn warm(&mut self, entries: &[[u32; 2]]) -> Result<usize> {
        self.release();
        let mut n = 0;
        for chunk in entries.chunks(self.n_slots.max(1)) {
            let mut by_layer: std::collections::BTreeMap<u32, Vec<u32>> = std::collections::BTreeMap::new();
            for &[l, e] in chunk {
                if (l as usize) < self.regions.len() && e < self.cache.geometry().n_expert() {
                    by_layer.entry(l).or_default().push(e);
                }
            }
            for (l, mut es) in by_layer {
                es.sort_unstable();
                es.dedup();
                es.truncate(self.n_slots);
                self.route(l as usize, &es, &[])?;
                self.release();
                n += es.len();
            }
        }
        Ok(n)
    }
}

impl Drop for GenericExperts {
    fn drop(&mut self) {
        // No slot may be unmapped from under a read: drain them (the engine drains its own
        // on drop too, but the routed layer's tickets and the read-ahead's are ours).
        let mut t: Vec<Ticket> = Vec::new();
        if let Some(r) = self.routed.take() {
            t.extend(r.pending.into_iter().flat_map(|p| p.tickets.into_iter().flatten()));
        }
        t.extend(self.inflight.drain().flat_map(|(_, ts)| ts.into_iter().flatten()));
        self.engine.cancel(&t);
        let _ = self.engine.wait_all(&t);
    }
}
