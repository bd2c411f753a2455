//! The streamer: an [`ExpertProvider`] whose experts live in the slots of a registered
//! [`BufferPool`] that is also the expert cache, read from the model file with the uring-io
//! [`ReadEngine`] when they miss.
//!
//! A slot holds one (layer, expert) entry: each projection in its own block-aligned region,
//! its payload at the same offset within a 4 KiB block as in the file, so that an O_DIRECT
//! read of the aligned window around it lands it there with no copy. The expert's tensors
//! point at the payloads. `acquire(layer, ids)` looks every id up first (a hit is pinned),
//! then admits the misses (evicting unpinned entries by policy, freeing their slots), submits
//! all their reads as one batch over the lanes and waits for the batch (serial mode). Nothing
//! is evicted while pinned, and an entry's slot is reused only after its reads completed: a
//! failed batch is drained before the error returns and its entries are dropped.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use std::collections::{HashMap, HashSet};

use bmoe_uring_io::{align, BufferPool, EngineOptions, FileId, ReadEngine, Registration, Request, Ticket};

use crate::cache::{Access, CachePolicy, EntryId, ExpertCache, ExpertKey, Geometry, Lookup, Phase, Position};
use crate::decoder::{Error, ExpertProvider, Result};
use crate::ggml::GgmlType;
use crate::model::{ModelIndex, MoeLayer, Proj};

/// How to stream.
#[derive(Clone, Copy, Debug)]
pub struct StreamOptions {
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

/// One layer's look-ahead figures (decode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerLookahead {
    /// Real routed experts of this layer's steps that had a prediction, and how many were
    /// predicted.
    pub real_with_prediction: u64,
    pub predicted_real: u64,
    /// Entries read speculatively for this layer, and how many a real routing then used.
    pub spec_entries: u64,
    pub spec_useful: u64,
    /// This layer's speculative reads switched off by the rule (its predictions are still
    /// scored).
    pub off: bool,
}

impl LayerLookahead {
    /// Share of the real routed experts that were predicted, %.
    pub fn accuracy_pct(&self) -> Option<f64> {
        (self.real_with_prediction > 0).then(|| 100.0 * self.predicted_real as f64 / self.real_with_prediction as f64)
    }
}

/// The look-ahead rule: a layer's speculative reads stay on while at least a quarter of the
/// entries they read are then used, judged once it has read this many; the whole look-ahead
/// (the predictions too) goes off when every predicted layer is off, or when the model as a whole has
/// read [`LOOKAHEAD_JUDGE_MODEL`] entries at under a quarter useful.
pub const LOOKAHEAD_JUDGE_LAYER: u64 = 16;
/// See [`LOOKAHEAD_JUDGE_LAYER`].
pub const LOOKAHEAD_JUDGE_MODEL: u64 = 64;

/// The layout of one projection in a slot.
#[derive(Clone, Copy, Debug)]
struct Region {
    shard: usize,
    /// File offset of expert 0's slice and the bytes of one expert's slice.
    base: u64,
    len: u64,
    /// Start of the projection's region in the slot (block-aligned).
    start: usize,
}

/// The streaming expert provider.
#[derive(Debug)]
pub struct StreamingExperts {
    engine: ReadEngine,
    pool: Arc<BufferPool>,
    files: Vec<FileId>,
    paths: Vec<PathBuf>,
    /// Per layer: gate, up, down regions.
    layout: Vec<[Region; 3]>,
    slot_bytes: usize,
    n_slots: usize,
    /// Slots in the pool (`n_slots` is how many the current budget uses).
    n_slots_max: usize,
    /// The fewest slots the budget is raised to: `k`, or `2 k` with look-ahead.
    floor: usize,
    /// Every expert slice is whole blocks (O_DIRECT keeps the slots a stack).
    whole_blocks: bool,
    /// Every payload of a (layer, projection) lands at the same place of its slot, so the
    /// slots form a stack ([`ExpertProvider::stacks`]); else each lands where its file offset's
    /// place within a block says (O_DIRECT on slices that are not whole blocks) and the decoder
    /// runs one `mul_mat` per expert.
    stacked: bool,
    direct_requested: bool,
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
    /// Look-ahead on (asked for and not switched off by its own rule).
    lookahead: bool,
    /// Why look-ahead switched itself off, if it did.
    lookahead_off: Option<String>,
    /// Reads in flight of speculative entries.
    inflight: HashMap<EntryId, Vec<Ticket>>,
    /// Speculative entries not yet used by a real routing.
    speculative: HashSet<EntryId>,
    /// The last prediction per layer (decode).
    predicted: Vec<Vec<u32>>,
    /// Per layer look-ahead figures and switches.
    la_layers: Vec<LayerLookahead>,
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

/// Whether ggml's `mul_mat` on one expert's slice of this type runs the same kernel as
/// `mul_mat_id` on the stack (so the per-expert path gives the same bits): every type but
/// those its llamafile sgemm also takes in `mul_mat` (`ggml-cpu/llamafile/sgemm.cpp`).
fn per_expert_same_bits(ty: GgmlType) -> bool {
    !matches!(
        ty,
        GgmlType::F32
            | GgmlType::F16
            | GgmlType::BF16
            | GgmlType::Q8_0
            | GgmlType::Q4_0
            | GgmlType::Q5_0
            | GgmlType::IQ4_NL
    )
}

fn region_bytes(len: u64) -> usize {
    // The aligned window around a payload at any offset: at most one block more than the
    // payload rounded up to blocks.
    (align::align_up(len, align::BLOCK).unwrap_or(u64::MAX) + align::BLOCK) as usize
}

impl StreamingExperts {
    /// A streamer for `index` with `opts`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for fused gate/up experts; [`Error::Provider`] if the pool or
    /// the read engine cannot be set up, or a shard cannot be opened.
    pub fn new(index: &ModelIndex, opts: StreamOptions) -> Result<Self> {
        let mut layout = Vec::with_capacity(index.layers.len());
        let mut slot_bytes = 0usize;
        for l in &index.layers {
            let mut r = [Region { shard: 0, base: 0, len: 0, start: 0 }; 3];
            let mut at = 0usize;
            for t in &l.tensors {
                let i = proj_slot(t.proj)?;
                r[i] = Region { shard: t.shard, base: t.offset, len: t.bytes_per_expert, start: at };
                at += region_bytes(t.bytes_per_expert);
            }
            slot_bytes = slot_bytes.max(at);
            layout.push(r);
        }
        let k = opts.n_expert_used.unwrap_or(index.shape().n_expert_used).max(1) as usize;
        let wanted = (opts.budget_bytes / slot_bytes.max(1) as u64) as usize;
        // The least that works: one layer's top-k; with look-ahead, the next layer's too (else a
        // small cache leaves no unpinned slot to read ahead into).
        let floor = if opts.lookahead { 2 * k } else { k };
        let n_slots = wanted.max(floor);
        let raised = wanted < floor;
        let geom = Geometry::new(index.shape().n_expert, vec![slot_bytes as u64; index.layers.len()])
            .map_err(|e| Error::Provider(e.to_string()))?;
        // Every expert of a (layer, projection) lands at the same place of its slot, so that the
        // slots form a stack the decoder can run `mul_mat_id` over (the same kernel as resident,
        // hence the same bits). With O_DIRECT that needs every expert slice to be whole blocks
        // (an aligned read puts a payload at its file offset's place within a block). Not so of
        // gpt-oss (an MXFP4 slice is 4,406,400 B): then each payload lands at its own place and
        // the decoder runs one `mul_mat` per expert, which computes the same bits as `mul_mat_id`
        // when ggml has no other kernel for the type (its sgemm path takes f32, f16, bf16,
        // q8_0, q4_0, q5_0 and iq4_nl in `mul_mat` only): MXFP4 and the k-quants. Other types
        // on slices that are not whole blocks are read through the page cache, as a stack.
        let whole_blocks = layout.iter().all(|r| r.iter().all(|x| x.len % align::BLOCK == 0));
        let same_kernel = index.layers.iter().flat_map(|l| &l.tensors).all(|t| per_expert_same_bits(t.ty));
        let mut io = opts.io;
        let stacked = whole_blocks || !(io.direct && same_kernel);
        if !whole_blocks && stacked {
            io.direct = false;
        }
        let policy = opts.policy.build().map_err(|e| Error::Provider(e.to_string()))?;
        let cache = ExpertCache::new(geom, (n_slots * slot_bytes) as u64, policy);
        let pool = Arc::new(BufferPool::new(n_slots * slot_bytes).map_err(|e| Error::Provider(e.to_string()))?);
        let engine = ReadEngine::new(pool.clone(), io).map_err(|e| Error::Provider(e.to_string()))?;
        let mut s =
            Self::with_engine(index, engine, pool, layout, slot_bytes, n_slots, raised, opts.budget_bytes, cache)?;
        s.floor = floor;
        s.lookahead = opts.lookahead;
        s.predicted = vec![Vec::new(); index.layers.len()];
        s.la_layers = vec![LayerLookahead::default(); index.layers.len()];
        s.whole_blocks = whole_blocks;
        s.stacked = stacked;
        s.direct_requested = opts.io.direct;
        Ok(s)
    }

    /// As [`Self::new`], reading through a caller-built engine (tests inject faults this way).
    /// `make_engine` gets the pool and whether the engine may use O_DIRECT.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn with_engine_builder(
        index: &ModelIndex,
        opts: StreamOptions,
        make_engine: impl FnOnce(Arc<BufferPool>, bool) -> ReadEngine,
    ) -> Result<Self> {
        let mut s = Self::new(index, opts)?;
        let direct = s.engine.file(0).map(|f| f.o_direct()).unwrap_or(false) || s.direct_requested;
        s.engine = make_engine(s.pool.clone(), direct && (s.whole_blocks || !s.stacked));
        s.files = open_all(&s.engine, &s.paths)?;
        Ok(s)
    }

    #[allow(clippy::too_many_arguments)]
    fn with_engine(
        index: &ModelIndex,
        engine: ReadEngine,
        pool: Arc<BufferPool>,
        layout: Vec<[Region; 3]>,
        slot_bytes: usize,
        n_slots: usize,
        raised: bool,
        requested_budget: u64,
        cache: ExpertCache,
    ) -> Result<Self> {
        let paths: Vec<PathBuf> = index.file.shards.iter().map(|s| s.path.clone()).collect();
        let files = open_all(&engine, &paths)?;
        let n_entries = cache.geometry().n_entries();
        Ok(Self {
            engine,
            pool,
            files,
            paths,
            layout,
            slot_bytes,
            n_slots,
            n_slots_max: n_slots,
            floor: 1,
            whole_blocks: true,
            stacked: true,
            direct_requested: false,
            cache,
            slot_of: vec![None; n_entries],
            free: (0..n_slots as u32).rev().collect(),
            raised,
            requested_budget,
            phase: Phase::Prefill,
            token: 0,
            seq: 0,
            pinned: Vec::new(),
            evicted: Vec::new(),
            stats: StreamStats::default(),
            lookahead: false,
            lookahead_off: None,
            inflight: HashMap::new(),
            speculative: HashSet::new(),
            predicted: vec![Vec::new(); n_entries],
            la_layers: vec![LayerLookahead::default(); n_entries],
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
        let slots = ((bytes / self.slot_bytes as u64) as usize).clamp(self.floor, self.n_slots_max);
        self.n_slots = slots;
        self.raised = (bytes / self.slot_bytes as u64) < self.floor as u64;
        self.requested_budget = bytes;
        self.evicted.clear();
        let mut evicted = std::mem::take(&mut self.evicted);
        self.cache.set_budget((slots * self.slot_bytes) as u64, &mut evicted);
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
        let used: std::collections::HashSet<u32> = self.slot_of.iter().flatten().copied().collect();
        for s in 0..slots as u32 {
            if !used.contains(&s) && !self.free.contains(&s) {
                self.free.push(s);
            }
        }
        (slots * self.slot_bytes) as u64
    }

    /// Bytes of one slot (the widest entry with its O_DIRECT slack).
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
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
        self.stats
    }

    fn payload(&self, slot: u32, layer: usize, which: usize, expert: u32) -> (u64, usize, usize) {
        let r = self.layout[layer][which];
        let off = r.base + u64::from(expert) * r.len;
        let within = if self.stacked { r.base } else { off } % align::BLOCK;
        let dest = slot as usize * self.slot_bytes + r.start + within as usize;
        (off, r.len as usize, dest)
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
            let (offset, len, dest) = self.payload(slot, layer, which, expert);
            Request { file: self.files[self.layout[layer][which].shard], offset, len, dest }
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
        let mut tickets = self.engine.submit(&reqs).map_err(|e| Error::Provider(e.to_string()))?.into_iter();
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

    /// Whether look-ahead is on, and why it switched itself off if it did.
    pub fn lookahead(&self) -> (bool, Option<&str>) {
        (self.lookahead, self.lookahead_off.as_deref())
    }

    /// Per layer look-ahead figures (decode), one per MoE layer.
    pub fn lookahead_layers(&self) -> &[LayerLookahead] {
        &self.la_layers[..self.layout.len()]
    }
}

fn open_all(engine: &ReadEngine, paths: &[PathBuf]) -> Result<Vec<FileId>> {
    paths.iter().map(|p| engine.open(p).map_err(|e| Error::Provider(e.to_string()))).collect()
}

fn proj_slot(p: Proj) -> Result<usize> {
    match p {
        Proj::Gate => Ok(0),
        Proj::Up => Ok(1),
        Proj::Down => Ok(2),
        Proj::GateUp => Err(Error::Unsupported("fused gate_up experts".into())),
    }
}

// SAFETY: the pointers are payloads in slots of our pool that hold the entry's bytes (the
// reads of a miss completed before acquire returns; a failed read drops the entry and
// returns an error). Every entry handed out is pinned until `release`, so its slot is not
// reused (no eviction of pinned entries, and a slot is reused only after eviction).
unsafe impl ExpertProvider for StreamingExperts {
    fn acquire(&mut self, layer: u32, experts: &[u32], out: &mut Vec<[*const u8; 3]>) -> Result<()> {
        self.acquire_start(layer, experts, out)?;
        while !self.pend.is_empty() {
            self.acquire_more()?;
        }
        Ok(())
    }

    fn acquire_start(&mut self, layer: u32, experts: &[u32], out: &mut Vec<[*const u8; 3]>) -> Result<Vec<usize>> {
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
                let wanted = key.layer == layer && experts.contains(&key.expert);
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
        if self.phase == Phase::Decode && !self.predicted[layer as usize].is_empty() {
            let pred = std::mem::take(&mut self.predicted[layer as usize]);
            let hit = experts.iter().filter(|e| pred.contains(e)).count() as u64;
            self.stats.real_with_prediction += experts.len() as u64;
            self.stats.predicted_real += hit;
            let la = &mut self.la_layers[layer as usize];
            la.real_with_prediction += experts.len() as u64;
            la.predicted_real += hit;
        }
        self.cache.begin_layer(Position { phase: self.phase, token: self.token, layer });
        let geom_id = |c: &ExpertCache, e: u32| {
            c.geometry().id(ExpertKey { layer, expert: e }).map_err(|e| Error::Provider(e.to_string()))
        };
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
                    self.stats.spec_useful += 1;
                    self.la_layers[layer as usize].spec_useful += 1;
                }
                match self.inflight.remove(&id) {
                    Some(tickets) => self.pend.push(Pending { idx: rank, id, tickets, spec: true }),
                    None => ready.push(rank),
                }
            }
            ids.push(id);
            self.pinned.push(id);
        }
        let entry_payload: u64 = self.layout[layer as usize].iter().map(|r| r.len).sum();
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
            let mut p = [std::ptr::null(); 3];
            for (which, ptr) in p.iter_mut().enumerate() {
                let (_, len, dest) = self.payload(slot, layer as usize, which, e);
                *ptr = self.pool.ptr_at(dest, len).map_err(|e| Error::Provider(e.to_string()))?.cast_const();
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
                        failed.get_or_insert((p.id, Error::Provider(e.to_string())));
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

    fn stacks(&self, layer: u32) -> Option<[crate::decoder::Stack; 3]> {
        if !self.stacked {
            return None;
        }
        let r = self.layout.get(layer as usize)?;
        let mut st = [crate::decoder::Stack { base: std::ptr::null(), stride: self.slot_bytes, count: 0 }; 3];
        for (which, s) in st.iter_mut().enumerate() {
            // Where a payload lands in slot 0; every slot holds its entry at the same place.
            let at = r[which].start + (r[which].base % align::BLOCK) as usize;
            s.base = self.pool.ptr_at(at, r[which].len as usize).ok()?.cast_const();
            s.count = self.n_slots_max;
        }
        Some(st)
    }

    fn counters(&self) -> Option<crate::decoder::ProviderCounters> {
        let c = self.cache.counters().total();
        Some(crate::decoder::ProviderCounters {
            bytes_read: self.stats.bytes_read,
            io_s: self.stats.io_s,
            manage_s: self.stats.manage_s,
            hits: c.hits,
            misses: c.misses,
            evictions: c.evictions,
            routed_bytes: self.stats.routed_bytes,
            max_layer_routed_bytes: self.stats.max_layer_routed_bytes,
            resident_bytes: self.cache.resident_bytes(),
            spec_entries: self.stats.spec_entries,
            spec_bytes: self.stats.spec_bytes,
            spec_useful: self.stats.spec_useful,
            predicted_real: self.stats.predicted_real,
            real_with_prediction: self.stats.real_with_prediction,
        })
    }

    fn wants_lookahead(&self) -> bool {
        self.lookahead
    }

    fn prefetch(&mut self, layer: u32, experts: &[u32]) {
        if !self.lookahead || self.phase != Phase::Decode {
            return;
        }
        let t0 = Instant::now();
        let io_before = self.stats.io_s;
        self.predicted[layer as usize] = experts.to_vec();
        if self.la_layers[layer as usize].off {
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
                    self.stats.spec_entries += owners.len() as u64;
                    self.la_layers[layer as usize].spec_entries += owners.len() as u64;
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

    fn begin_step(&mut self, prefill: bool) {
        // The rule (see LOOKAHEAD_JUDGE_LAYER): per layer, then for the model.
        if self.lookahead {
            let n = self.layout.len();
            for la in &mut self.la_layers[..n] {
                if !la.off && la.spec_entries >= LOOKAHEAD_JUDGE_LAYER && la.spec_useful * 4 < la.spec_entries {
                    la.off = true;
                }
            }
            let st = &self.stats;
            if st.spec_entries >= LOOKAHEAD_JUDGE_MODEL && st.spec_useful * 4 < st.spec_entries {
                self.lookahead = false;
                self.lookahead_off = Some(format!(
                    "useful share {:.0} % < 25 % after {} speculative entries",
                    100.0 * st.spec_useful as f64 / st.spec_entries as f64,
                    st.spec_entries
                ));
            } else if self.la_layers[..n].iter().any(|la| la.off)
                && self.la_layers[..n].iter().filter(|la| la.real_with_prediction > 0).all(|la| la.off)
            {
                self.lookahead = false;
                self.lookahead_off = Some(format!(
                    "every layer's useful share < 25 % (after {} speculative entries, {:.0} % useful)",
                    st.spec_entries,
                    100.0 * st.spec_useful as f64 / st.spec_entries.max(1) as f64
                ));
            }
        }
        self.phase = if prefill { Phase::Prefill } else { Phase::Decode };
        self.token += 1;
    }
}

/// The layers' entry bytes as the streamer lays them out (for reports).
pub fn slot_layout_bytes(layers: &[MoeLayer]) -> usize {
    layers.iter().map(|l| l.tensors.iter().map(|t| region_bytes(t.bytes_per_expert)).sum::<usize>()).max().unwrap_or(0)
}

/// The dense weights read once with the read engine (O_DIRECT where the file allows) into an
/// anonymous, block-aligned pool (`--dense-weights anon`): they then cost RSS, not page
/// cache, and nothing of them is faulted in from the file later.
#[derive(Debug)]
pub struct AnonDense {
    pool: Arc<BufferPool>,
    /// (shard, file offset) → (length, pool offset of the payload), sorted.
    ranges: Vec<((usize, u64), (u64, usize))>,
}

impl AnonDense {
    /// Read every dense tensor of `index`.
    ///
    /// # Errors
    /// [`Error::Provider`] naming the file and offset of a failed read.
    pub fn load(index: &ModelIndex, io: EngineOptions) -> Result<Self> {
        let mut ranges = Vec::with_capacity(index.dense.len());
        let mut at = 0usize;
        for &i in &index.dense {
            let t = &index.file.tensors[i];
            let dest = at + (t.offset % align::BLOCK) as usize;
            ranges.push(((t.shard, t.offset), (t.size, dest)));
            at += region_bytes(t.size);
        }
        ranges.sort_unstable();
        let pool = Arc::new(BufferPool::new(at.max(1)).map_err(|e| Error::Provider(e.to_string()))?);
        let engine = ReadEngine::new(pool.clone(), io).map_err(|e| Error::Provider(e.to_string()))?;
        let paths: Vec<PathBuf> = index.file.shards.iter().map(|s| s.path.clone()).collect();
        let files = open_all(&engine, &paths)?;
        let reqs: Vec<Request> = ranges
            .iter()
            .filter(|(_, (len, _))| *len > 0)
            .map(|&((shard, offset), (len, dest))| Request { file: files[shard], offset, len: len as usize, dest })
            .collect();
        let tickets = engine.submit(&reqs).map_err(|e| Error::Provider(e.to_string()))?;
        engine.wait_all(&tickets).map_err(|e| Error::Provider(e.to_string()))?;
        Ok(Self { pool, ranges })
    }

    /// Bytes of the pool.
    pub fn bytes(&self) -> usize {
        self.pool.size()
    }
}

// SAFETY: every range was read completely before `load` returned (wait_all), the pool is
// never written again, and it lives as long as self.
unsafe impl crate::decoder::DenseSource for AnonDense {
    fn ptr(&self, shard: usize, offset: u64, len: u64) -> Result<*const u8> {
        let i = self.ranges.binary_search_by_key(&(shard, offset), |r| r.0).map_err(|_| Error::Tensor {
            name: format!("shard {shard} offset {offset}"),
            why: "not a dense tensor that was loaded".into(),
        })?;
        let (have, dest) = self.ranges[i].1;
        if len > have {
            return Err(Error::Tensor {
                name: format!("shard {shard} offset {offset}"),
                why: "longer than loaded".into(),
            });
        }
        Ok(self.pool.ptr_at(dest, len as usize).map_err(|e| Error::Provider(e.to_string()))?.cast_const())
    }
}
