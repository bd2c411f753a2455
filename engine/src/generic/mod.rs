//! The generic decoder: llama.cpp's own graph for any MoE architecture it decodes, with bmoe
//! supplying the routed experts' bytes just in time.
//!
//! llama.cpp loads the model on mmap without repacking, every routed-expert tensor lazy (the
//! vendored llama.cpp's `LLAMA_LAZY_MODE_EXPERTS`): its load reads the dense tensors only (that
//! read is measured and reported), and the dense pages are locked in RAM where the memlock
//! limit allows. The cache is sized from the memory left beside the dense bytes and what
//! llama.cpp says its context holds (KV cache, recurrent state, compute buffers), and every decode
//! runs llama.cpp's graph with the [`seam`]'s callbacks: at each layer's routed ids the
//! [`experts`] streamer pins the hits and reads the misses into slots of a memfd-backed
//! registered pool and [`overlay`]s the slots' pages onto the expert windows of llama.cpp's
//! mapping while the reads are in flight; before each expert `mul_mat_id` it waits for that
//! projection's reads, so llama.cpp's kernels read our bytes where they expect the file's. The
//! [`index`] finds the experts by tensor name, for every architecture alike. With look-ahead, the [`predict`]or guesses the
//! next MoE layer's experts at each layer's routed ids, and the streamer reads them while the
//! layer computes.
//!
//! The output is llama.cpp's on the same file, bit for bit: the same graph, the same kernels,
//! the same bytes (the gates poison every expert page first, so equal bits prove they came
//! from the slots).

pub mod experts;
pub mod index;
pub mod overlay;
pub mod predict;
pub mod seam;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bmoe_uring_io::{BufferPool, EngineOptions, ReadEngine};

use self::experts::GenericExperts;
use self::index::GenericIndex;
use self::overlay::{Overlay, ShardMap};
use self::seam::Seam;
use crate::cache::trace::TraceHeader;
use crate::cache::CachePolicy;
use crate::decoder::{LayerRoute, RouteReplay};
use crate::error::{Error, Result};
use crate::llama;
use crate::provider::ProviderCounters;
use crate::session::{Forward, Telemetry};
use crate::stream::budget::{self, CacheSize, Machine, Needs};

/// How to open a generic engine.
#[derive(Clone, Debug)]
pub struct GenericOptions {
    pub cache: CacheSize,
    pub floor_bytes: u64,
    pub ceiling_bytes: Option<u64>,
    pub force: bool,
    pub policy: CachePolicy,
    pub io: EngineOptions,
    pub n_ctx: u32,
    pub n_threads: usize,
    pub n_ubatch: u32,
    /// Size `auto` against this (None: /proc/meminfo, read before llama.cpp's load).
    pub mem_available: Option<Option<u64>>,
    /// Map 0xFF bytes over every page wholly inside an expert tensor before the first decode,
    /// and back over them on eviction (tests: equal bits then prove the bytes came from the
    /// slots).
    pub poison: bool,
    /// Each projection computes while the next ones read (`--overlap`); off: a layer's reads
    /// are all waited for before its first projection computes.
    pub pipeline: bool,
    /// Read in place (the fallback where the kernel has no memfd) even where a memfd pool works
    /// (tests).
    pub in_place: bool,
    /// Predict each next MoE layer's experts and read them while the layer computes.
    pub lookahead: bool,
    /// Experts per token in place of the file's `expert_used_count` (lossy).
    pub n_expert_used: Option<u32>,
    /// Decode steps route as this trace says (lossy; benchmarks).
    pub replay: Option<RouteReplay>,
}

/// What opening chose and measured, for the `mode:` and `load:` lines.
#[derive(Clone, Debug, PartialEq)]
pub struct GenericReport {
    /// Seconds of llama.cpp's load (the dense pages' lock included).
    pub llama_load_s: f64,
    /// Bytes the opening thread read from storage during llama.cpp's load and the dense pages'
    /// lock (`/proc/thread-self/io`), where the kernel says.
    pub llama_read_bytes: Option<u64>,
    /// Bytes of expert pages llama.cpp's load left unread (lazy), dropped from the page cache.
    pub released_bytes: u64,
    /// Bytes of the dense tensors (what the load reads).
    pub dense_bytes: u64,
    /// Bytes of llama.cpp's mapping locked in RAM (the dense tensors' pages), and why not all
    /// of them when the lock stopped short.
    pub dense_locked_bytes: u64,
    pub dense_unlocked: Option<String>,
    /// Bytes llama.cpp's context holds as llama.cpp reports them: `(memory, compute)`, its KV
    /// cache and recurrent state, and its compute buffers; reserved when sizing the cache.
    pub context_bytes: (u64, u64),
    pub backend: &'static str,
    pub fallback: Option<String>,
    pub o_direct: bool,
    pub lanes: usize,
    pub fixed_buffers: bool,
    pub pool_bytes: u64,
    pub requested_bytes: u64,
    pub capped_from: Option<u64>,
    pub auto: bool,
    /// Raised to the floor slots.
    pub raised: bool,
    /// Capped so the overlays stay under `vm.max_map_count`: the slots it allowed.
    pub map_capped: Option<usize>,
    /// The micro-batch (llama.cpp's, never lowered to fit the cache).
    pub ubatch: u32,
    /// The fewest slots: one micro-batch's union of routed experts in the widest layer.
    pub floor_slots: usize,
    pub cycle_bytes: u64,
    pub k: u32,
    pub poisoned: bool,
    /// MoE layers whose router look-ahead cannot apply on the host (their experts are never
    /// read ahead).
    pub unpredicted: Vec<u32>,
    /// Reads land in place in llama.cpp's mapping (anonymous pages claimed per miss, freed per
    /// eviction) instead of a memfd pool overlaid onto it: why.
    pub in_place: Option<String>,
}

/// An engine on llama.cpp's graph with streamed experts.
pub struct GenericEngine {
    session: llama::Session,
    /// Boxed: the context's callbacks hold its address.
    seam: Box<Seam>,
    compute_s: f64,
    /// The `route_trace v1` header of this model (its MoE layers), the model's name left empty.
    trace: TraceHeader,
}

impl std::fmt::Debug for GenericEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenericEngine").finish_non_exhaustive()
    }
}

/// Bytes this thread has caused to be read from storage (`read_bytes` of
/// `/proc/thread-self/io`: llama.cpp's load and the dense pages' lock run on the opening thread,
/// and other threads of the process, a server's or a test binary's, may read meanwhile).
fn storage_read_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    s.lines().find_map(|l| l.strip_prefix("read_bytes:")).and_then(|v| v.trim().parse().ok())
}

/// Lock in RAM the pages of the dense tensors in llama.cpp's mapping of each shard (where the
/// memlock limit allows): `(bytes locked, why not all)`. Locking reads the pages not yet
/// resident. The first refusal stops it: what is locked stays locked, the rest stays on the
/// page cache. (Not llama.cpp's own mlock: it locks a growing prefix of the mapping, the expert
/// tensors between the dense ones included.)
fn lock_dense(index: &GenericIndex, shards: &[ShardMap], page: u64) -> (u64, Option<String>) {
    let mut ranges: Vec<(usize, u64, u64)> = index
        .dense
        .iter()
        .map(|&i| &index.file.tensors[i])
        .filter(|t| t.size > 0)
        .map(|t| (t.shard, t.offset / page, (t.offset + t.size).div_ceil(page)))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(usize, u64, u64)> = Vec::with_capacity(ranges.len());
    for (s, a, b) in ranges {
        match merged.last_mut() {
            Some(last) if last.0 == s && a <= last.2 => last.2 = last.2.max(b),
            _ => merged.push((s, a, b)),
        }
    }
    // Their bytes into the page cache first, exactly: WILLNEED in chunks no larger than one
    // read-ahead window (the kernel cuts a longer one to a window), so that the lock's faults
    // find them there; a fault that misses reads ahead a whole window (8 MiB here) past the
    // dense tensor, into the experts that follow it.
    for &(s, a, b) in &merged {
        use std::os::fd::AsRawFd as _;
        const CHUNK: u64 = 2 << 20;
        let (mut at, end) = (a * page, b * page);
        while at < end {
            let n = CHUNK.min(end - at);
            // SAFETY: advice on our own descriptor's range; no memory is touched.
            unsafe {
                libc::posix_fadvise(
                    shards[s].file.as_raw_fd(),
                    at as libc::off_t,
                    n as libc::off_t,
                    libc::POSIX_FADV_WILLNEED,
                )
            };
            at += n;
        }
    }
    let mut locked = 0u64;
    for (s, a, b) in merged {
        let len = ((b - a) * page) as usize;
        // SAFETY: the pages of a dense tensor lie inside llama.cpp's mapping of its shard (the
        // part of the file that holds tensors, which llama.cpp keeps mapped), alive as long as
        // the model; mlock changes no byte and no mapping.
        let r = unsafe { libc::mlock((shards[s].base + (a * page) as usize) as *const libc::c_void, len) };
        if r != 0 {
            let err = std::io::Error::last_os_error();
            let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit writes the struct it is given.
            let limit = match unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } {
                0 if lim.rlim_cur == libc::RLIM_INFINITY => "unlimited".to_string(),
                0 => crate::engine::fmt_bytes(lim.rlim_cur),
                _ => "unknown".to_string(),
            };
            return (locked, Some(format!("mlock: {err}; RLIMIT_MEMLOCK {limit}")));
        }
        locked += len as u64;
    }
    (locked, None)
}

/// Per shard, the page ranges `[first, end)` wholly inside its expert tensors, sorted, merged.
fn expert_pages(index: &GenericIndex, page: u64) -> Vec<Vec<(u64, u64)>> {
    let mut out = vec![Vec::new(); index.file.shards.len()];
    for l in &index.layers {
        for t in &l.tensors {
            let end = t.offset + t.bytes_per_expert * u64::from(l.n_expert);
            let (a, b) = (t.offset.div_ceil(page), end / page);
            if a < b {
                out[t.shard].push((a, b));
            }
        }
    }
    for v in &mut out {
        v.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for &(a, b) in v.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *v = merged;
    }
    out
}

impl GenericEngine {
    /// Open `path` (its first shard) as indexed by `index` with `opts`; `progress` hears
    /// llama.cpp's load progress (0 to 1).
    ///
    /// # Errors
    /// llama.cpp's load or context; the budget's; the pool, read engine or mapping the kernel
    /// refused.
    pub fn open(
        path: &Path,
        index: &GenericIndex,
        opts: GenericOptions,
        progress: &mut dyn FnMut(f32),
    ) -> Result<(Self, GenericReport)> {
        let page = bmoe_uring_io::page_size().max(bmoe_uring_io::align::BLOCK as usize) as u64;
        // This process may map the file already (another engine on it): llama.cpp's mapping is
        // the one its load adds.
        let files: Vec<std::fs::File> = index
            .file
            .shards
            .iter()
            .map(|s| std::fs::File::open(&s.path).map_err(|err| Error::File { path: s.path.clone(), err }))
            .collect::<Result<_>>()?;
        let before: Vec<Vec<(usize, usize)>> = files.iter().map(overlay::file_mappings).collect::<Result<_>>()?;
        // Before the load: what the dense pages and the context will take is reserved from it.
        let mem_available = opts.mem_available.unwrap_or_else(budget::mem_available);
        let read0 = storage_read_bytes();
        let t = Instant::now();
        let overrides: Vec<(String, i64)> = opts
            .n_expert_used
            .map(|k| (format!("{}.expert_used_count", index.arch), i64::from(k)))
            .into_iter()
            .collect();
        let model = Arc::new(llama::Model::mmap_lazy_experts(path, &overrides, progress)?);
        // Where llama.cpp mapped each shard.
        let mut shards = Vec::new();
        for (((s, pages), file), before) in
            index.file.shards.iter().zip(expert_pages(index, page)).zip(files).zip(&before)
        {
            let base = overlay::new_mapping_base(&file, before)?.ok_or_else(|| {
                Error::Provider(format!(
                    "llama.cpp did not map {} (the generic path needs it on mmap)",
                    s.path.display()
                ))
            })?;
            shards.push(ShardMap { base, len: s.header.file_len, file, expert_pages: pages });
        }
        // The dense pages in RAM for good (the load left the experts unread).
        let (dense_locked_bytes, dense_unlocked) = lock_dense(index, &shards, page);
        let llama_load_s = t.elapsed().as_secs_f64();
        let llama_read_bytes = read0.and_then(|a| storage_read_bytes().map(|b| b.saturating_sub(a)));
        // The expert pages out of the page cache (another process may have read them), so a
        // read is the disk's. With poison, the poison takes their place in the mapping.
        let released_bytes: u64 = shards.iter().flat_map(|s| &s.expert_pages).map(|&(a, b)| (b - a) * page).sum();
        let overlay = Overlay::new(shards, page, opts.poison)?;
        for s in overlay.shards() {
            for &(a, b) in &s.expert_pages {
                use std::os::fd::AsRawFd as _;
                // SAFETY: advice on our own descriptor's range; no memory is touched.
                unsafe {
                    libc::posix_fadvise(
                        s.file.as_raw_fd(),
                        (a * page) as libc::off_t,
                        ((b - a) * page) as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    )
                };
            }
        }
        let bases: Vec<usize> = overlay.shards().iter().map(|s| s.base).collect();
        let mut seam = Box::new(Seam::new(index, &bases));
        let k = opts.n_expert_used.unwrap_or(index.n_expert_used);
        let n_proj = index.layers.iter().map(|l| l.tensors.len()).max().unwrap_or(1);
        let slot_bytes = experts::slot_bytes(index, page);
        let entries: u64 = index.layers.iter().map(|l| u64::from(l.n_expert)).sum();
        // The context first (llama.cpp sizes its KV cache and compute buffers), then the budget
        // from what is left.
        let session = Self::context(&model, &mut seam, &opts, opts.n_ubatch)?;
        let context_bytes = session.memory_bytes();
        let machine =
            Machine { mem_available, floor: opts.floor_bytes, ceiling: opts.ceiling_bytes, force: opts.force };
        let needs = Needs {
            dense: index.dense_bytes(),
            kv: context_bytes.0.saturating_add(context_bytes.1),
            experts: entries.saturating_mul(slot_bytes as u64),
        };
        let b = budget::resolve(opts.cache, machine, needs)?;
        // The floor: one micro-batch's union of routed experts in the widest layer. The
        // micro-batch is llama.cpp's own, never lowered to fit a small cache: its kernels are
        // not micro-batch invariant, so the text would then depend on the cache size.
        let floor_slots = (opts.n_ubatch as usize).saturating_mul(k as usize).min(index.n_expert as usize).max(1);
        let (mut n_slots, raised) = budget::slots(b.bytes, slot_bytes, floor_slots);
        let floor_bytes = (floor_slots as u64).saturating_mul(slot_bytes as u64);
        if let (true, Some(avail), false) = (raised, mem_available, opts.force) {
            let left = avail.saturating_sub(needs.dense.saturating_add(needs.kv));
            if left < floor_bytes {
                return Err(Error::Invalid(format!(
                    "no room for the expert cache: one micro-batch's routed experts (--ubatch {} × top-{k}, at most the \
                     layer's {}) take {floor_slots} slots, {}, and MemAvailable {} less the dense weights ({}) and \
                     llama.cpp's context ({}) leaves {}; lower --ubatch (to {} or less) or -c, or pass --force-cache",
                    opts.n_ubatch,
                    index.n_expert,
                    crate::engine::fmt_bytes(floor_bytes),
                    crate::engine::fmt_bytes(avail),
                    crate::engine::fmt_bytes(needs.dense),
                    crate::engine::fmt_bytes(needs.kv),
                    crate::engine::fmt_bytes(left),
                    (left / (slot_bytes as u64).max(1) / u64::from(k.max(1))).max(1),
                )));
            }
        }
        let mut map_capped = None;
        let map_windows = overlay::map_budget();
        if let Some(windows) = map_windows {
            let most = windows / n_proj;
            if most < floor_slots {
                return Err(Error::Invalid(format!(
                    "vm.max_map_count leaves room for {windows} more mappings: {most} slots' windows ({n_proj} per \
                     slot), fewer than one micro-batch's routed experts (--ubatch {} × top-{k}: {floor_slots} slots); \
                     raise it (sysctl -w vm.max_map_count={}) or lower --ubatch to {} or less",
                    opts.n_ubatch,
                    overlay::map_counts().map_or(65530, |(_, max)| max) + (floor_slots - most) * n_proj * 2,
                    (most / k.max(1) as usize).max(1),
                )));
            }
            if n_slots > most {
                n_slots = most;
                map_capped = Some(most);
            }
        }
        let mut overlay = overlay;
        // Stale windows take the map budget's room beside the slots' own (none when that is
        // unknown: windows are then put back at once).
        overlay.set_stale_cap(map_windows.map_or(0, |w| w.saturating_sub(n_slots * n_proj)));
        let shared = match opts.in_place {
            true => Err("asked for".to_string()),
            false => BufferPool::new_shared(n_slots * slot_bytes, "bmoe-experts").map_err(|e| e.to_string()),
        };
        let (engine, in_place) = match shared {
            Ok(pool) => (ReadEngine::new(Arc::new(pool), opts.io)?, None),
            Err(why) => {
                // The fallback: reads land in llama.cpp's mapping itself, in anonymous pages
                // claimed over each missed window (a pool over the whole mapping, unregistered).
                overlay.set_in_place(true);
                let lo = overlay.shards().iter().map(|s| s.base).min().unwrap_or(0);
                let hi = overlay.shards().iter().map(|s| s.base + s.len.div_ceil(page) as usize * page as usize).max();
                let len = hi.unwrap_or(lo).saturating_sub(lo);
                // SAFETY: [lo, lo + len) covers llama.cpp's mappings of the shards, which live as
                // long as the model and so as this streamer; reads land only in windows the
                // overlay table first claims as private writable memory, which nothing else
                // writes, and none is given back while its read is in flight (the streamer
                // waits for a layer's reads before releasing it).
                let pool = unsafe { BufferPool::borrowed(lo as *mut u8, len) }?;
                (ReadEngine::new(Arc::new(pool), EngineOptions { register: false, ..opts.io })?, Some(why))
            }
        };
        let info = engine.info().clone();
        let mut experts = GenericExperts::new(index, engine, n_slots, opts.policy, overlay)?;
        experts.set_serial(!opts.pipeline);
        experts.set_lookahead(opts.lookahead);
        let mut unpredicted = Vec::new();
        if opts.lookahead {
            let p = predict::Predictor::new(index, &bases, k as usize);
            unpredicted = p.unpredicted.clone();
            seam.predictor = Some(p);
        }
        let o_direct = experts.engine().file(0).map(|f| f.o_direct()).unwrap_or(false);
        let report = GenericReport {
            llama_load_s,
            llama_read_bytes,
            released_bytes,
            dense_bytes: index.dense_bytes(),
            dense_locked_bytes,
            dense_unlocked,
            context_bytes,
            backend: info.backend,
            fallback: info.fallback,
            o_direct,
            lanes: info.lanes,
            fixed_buffers: info.fixed_buffers,
            pool_bytes: (n_slots * slot_bytes) as u64,
            requested_bytes: b.bytes,
            capped_from: b.capped_from,
            auto: b.auto,
            raised,
            map_capped,
            ubatch: opts.n_ubatch,
            floor_slots,
            cycle_bytes: index.cycle_bytes(k),
            k,
            poisoned: opts.poison,
            unpredicted,
            in_place,
        };
        seam.experts = Some(experts);
        seam.replay = opts.replay;
        let trace = TraceHeader {
            model: String::new(),
            arch: index.arch.clone(),
            n_expert: index.n_expert,
            n_expert_used: k,
            expert_bytes: index.layers.iter().map(|l| l.entry_bytes()).collect(),
            dense_bytes: index
                .layers
                .iter()
                .map(|l| {
                    let prefix = format!("blk.{}.", l.layer);
                    let dense = index.dense.iter().map(|&i| &index.file.tensors[i]);
                    dense.filter(|t| t.name.starts_with(&prefix)).map(|t| t.size).sum()
                })
                .collect(),
        };
        Ok((Self { session, seam, compute_s: 0.0, trace }, report))
    }

    /// A llama.cpp context on `model` whose callbacks are `seam`'s.
    fn context(
        model: &Arc<llama::Model>,
        seam: &mut Box<Seam>,
        o: &GenericOptions,
        ubatch: u32,
    ) -> Result<llama::Session> {
        let hooks = llama::Hooks {
            eval: Some(seam::eval_cb),
            eval_data: (&mut **seam as *mut Seam).cast(),
            abort: Some(seam::abort_cb),
            abort_data: (&*seam.failed as *const std::sync::atomic::AtomicBool).cast_mut().cast(),
        };
        // SAFETY: the callbacks are the seam's, sound for any node; the seam is boxed (a
        // stable address) and owned by the engine that owns this session, which frees the
        // session first; decodes run on the engine's thread only.
        Ok(unsafe { llama::Session::with_hooks(model.clone(), o.n_ctx, o.n_threads, ubatch, hooks) }?)
    }

    /// The streamer.
    pub fn experts(&self) -> &GenericExperts {
        self.seam.experts.as_ref().expect("set at open")
    }

    /// The streamer, mutably (tests).
    pub fn experts_mut(&mut self) -> &mut GenericExperts {
        self.seam.experts.as_mut().expect("set at open")
    }

    /// Start (or stop) recording the routing of every pass (`--route-trace`; see
    /// [`Seam`]'s record: per MoE layer, the union over the micro-batch).
    pub fn record_routes(&mut self, on: bool) {
        self.seam.routes = on.then(Vec::new);
        self.seam.passes = [0; 2];
    }

    /// The routing recorded since [`Self::record_routes`] (layers are MoE layer indices).
    pub fn take_routes(&mut self) -> Vec<LayerRoute> {
        self.seam.routes.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The `route_trace v1` header of this model's MoE layers, named `model`.
    pub fn trace_header(&self, model: &str) -> TraceHeader {
        TraceHeader { model: model.to_string(), ..self.trace.clone() }
    }

    /// The model llama.cpp runs (its tokenizer and chat template).
    pub fn model(&self) -> &Arc<llama::Model> {
        self.session.model()
    }

    /// Run `tokens` in micro-batches, `go(done)` asked before each; a prompt's (`prefill`)
    /// micro-batches are prefill passes whatever their width, a lone token is a decode step.
    fn run(&mut self, tokens: &[i32], prefill: bool, go: &mut dyn FnMut(usize) -> bool) -> Result<Option<Vec<f32>>> {
        let n_ubatch = self.session.n_ubatch() as usize;
        let total = tokens.len();
        let seam = &mut *self.seam;
        let t = Instant::now();
        let s0 = seam.seam_s;
        let r = {
            let seam_ptr: *mut Seam = seam;
            self.session.forward_until(tokens, false, &mut |done| {
                let n = n_ubatch.min(total - done);
                // SAFETY: between micro-batches no decode runs, so nothing else uses the seam.
                if let Some(x) = unsafe { &mut *seam_ptr }.experts.as_mut() {
                    x.begin_step(prefill || n > 1);
                }
                go(done)
            })
        };
        self.seam.end_decode();
        self.compute_s += (t.elapsed().as_secs_f64() - (self.seam.seam_s - s0)).max(0.0);
        match (r, self.seam.take_error()) {
            (_, Some(e)) => Err(e),
            (r, None) => Ok(r?),
        }
    }
}

impl Forward for GenericEngine {
    fn forward_last(&mut self, tokens: &[i32]) -> Result<Vec<f32>> {
        Ok(self.run(tokens, tokens.len() > 1, &mut |_| true)?.expect("never stopped"))
    }
    fn reset(&mut self) {
        self.session.reset();
        self.seam.passes = [0; 2];
    }
    fn truncate(&mut self, n: u32) {
        self.session.truncate(n);
    }
    fn n_past(&self) -> u32 {
        self.session.n_past()
    }
    fn n_ctx(&self) -> u32 {
        self.session.n_ctx()
    }
    fn n_ubatch(&self) -> u32 {
        self.session.n_ubatch()
    }
    fn prefill(&mut self, tokens: &[i32], go: &mut dyn FnMut(usize) -> bool) -> Result<Option<Vec<f32>>> {
        self.run(tokens, true, go)
    }
    fn save_state(&self) -> Result<Vec<u8>> {
        Ok(self.session.state())
    }
    fn load_state(&mut self, state: &[u8], n: u32) -> Result<()> {
        Ok(self.session.set_state(state, n)?)
    }
    fn telemetry(&self) -> Telemetry {
        let x = self.experts();
        let c = x.cache().counters().total();
        let s = x.stats();
        let la = x.lookahead_totals();
        Telemetry {
            compute_s: Some(self.compute_s),
            provider: Some(ProviderCounters {
                bytes_read: s.bytes_read,
                io_s: s.io_s,
                manage_s: s.manage_s,
                hits: c.hits,
                misses: c.misses,
                evictions: c.evictions,
                routed_bytes: s.routed_bytes,
                max_layer_routed_bytes: s.max_layer_routed_bytes,
                resident_bytes: x.cache().resident_bytes(),
                spec_entries: la.spec_entries,
                spec_bytes: s.spec_bytes,
                spec_useful: la.spec_useful,
                predicted_real: la.predicted_real,
                real_with_prediction: la.real_with_prediction,
                overlay_s: Some(x.overlay().seconds),
                overlay_critical_s: Some(s.overlay_critical_s),
            }),
        }
    }
}
