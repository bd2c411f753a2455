//! Opening an engine: [`Engine::builder`] is the one way to turn a model file and knobs into
//! something that generates. The builder validates every knob against the model before it
//! allocates anything, sizes the expert cache ([`crate::stream::budget`]), picks the dense
//! weights' home, the streamer or the resident provider, the decoder, or llama.cpp as the
//! baseline (or as the fallback for an architecture this build does not stream), and records
//! what it chose in a [`Report`] (the facts the `mode:` line prints). Front ends (the CLI, the
//! server, benches, tests) only translate their flags into it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bmoe_uring_io::EngineOptions;

use crate::cache::trace::{RouteTrace, TraceHeader};
use crate::cache::CachePolicy;
use crate::decoder::{Decoder, LayerRoute, LossyCounters, Options, RouteReplay, AUTO_UBATCH_MAX};
use crate::dense::{DenseWeights, Mapping};
use crate::error::{Error, Result};
use crate::generic::index::GenericIndex;
use crate::generic::{GenericEngine, GenericOptions, GenericReport};
use crate::llama;
use crate::model::{ModelIndex, MoeShape};
use crate::provider::{ExpertProvider, ResidentExperts};
use crate::rpc::{Coordinator, RpcHandle, RpcOptions};
use crate::session::{self, CancelToken, Control, Forward, Generation, Telemetry, Token};
use crate::session_file;
use crate::speculative::{DraftSource, SpecOptions, Speculator};
use crate::stream::budget::{self, CacheSize, Machine, Needs};
use crate::stream::{StreamerOptions, StreamingExperts};
use crate::telemetry::{StreamFigures, MIB};

/// Which engine computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineKind {
    /// bmoe's own decoder (streaming or resident).
    #[default]
    Bmoe,
    /// Plain llama.cpp on mmap: the baseline a user would otherwise run.
    Llama,
    /// llama.cpp on mmap without its repacked weight layouts: the same ggml kernels bmoe runs.
    LlamaPlain,
}

impl EngineKind {
    /// The name `--engine` takes.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Bmoe => "bmoe",
            EngineKind::Llama => "llama",
            EngineKind::LlamaPlain => "llamaplain",
        }
    }
}

/// Whether our decoder streams the experts (`--moe-stream`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MoeStream {
    /// Always (an architecture this build cannot stream is an error).
    On,
    /// Never: every weight resident on the mapping.
    Off,
    /// Whenever this build can stream the architecture; llama.cpp on mmap otherwise.
    #[default]
    Auto,
}

/// Which of the two decode paths streams (`--decoder`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecoderKind {
    /// Native where this build has the architecture's recipe, generic for every other MoE
    /// architecture llama.cpp decodes.
    #[default]
    Auto,
    /// bmoe's own decoder on ggml (per-expert pipelining, look-ahead).
    Native,
    /// llama.cpp's own graph, the routed experts' bytes supplied through its evaluation
    /// callback (any MoE architecture llama.cpp decodes).
    Generic,
}

impl DecoderKind {
    /// The name `--decoder` takes.
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::Auto => "auto",
            DecoderKind::Native => "native",
            DecoderKind::Generic => "generic",
        }
    }
}

/// Overlap of reads with compute (`--overlap`), lossless.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overlap {
    /// Read, then compute.
    #[default]
    Off,
    /// Per-expert pipelining and look-ahead.
    Full,
    /// Per-expert pipelining only: each expert computes as soon as its bytes land.
    Pipeline,
    /// Look-ahead only: the next layer's predicted experts read while this layer computes.
    Lookahead,
}

impl Overlap {
    /// Look-ahead on.
    pub fn lookahead(self) -> bool {
        matches!(self, Overlap::Full | Overlap::Lookahead)
    }

    /// Per-expert pipelining on.
    pub fn pipeline(self) -> bool {
        matches!(self, Overlap::Full | Overlap::Pipeline)
    }

    /// How the mode line says it.
    pub fn describe(self) -> &'static str {
        match self {
            Overlap::Off => "off",
            Overlap::Full => "on (per-expert pipelining + look-ahead)",
            Overlap::Pipeline => "on (per-expert pipelining)",
            Overlap::Lookahead => "on (look-ahead)",
        }
    }

    /// The name `--overlap` takes (`off`, `full`, `pipeline`, `lookahead`).
    pub fn name(self) -> &'static str {
        match self {
            Overlap::Off => "off",
            Overlap::Full => "full",
            Overlap::Pipeline => "pipeline",
            Overlap::Lookahead => "lookahead",
        }
    }
}

/// How to stream: the expert cache and the read engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamOptions {
    /// The expert cache's size.
    pub cache: CacheSize,
    /// Memory `auto` leaves free, and an explicit size must leave free unless forced.
    pub floor_bytes: u64,
    /// Upper bound of `auto` (None: none).
    pub ceiling_bytes: Option<u64>,
    /// Accept an explicit size that leaves less than the floor free.
    pub force: bool,
    /// Eviction policy.
    pub policy: CachePolicy,
    /// Read engine: backend, lanes, registration, O_DIRECT.
    pub io: EngineOptions,
    pub overlap: Overlap,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            cache: CacheSize::Auto,
            floor_bytes: 1536 << 20,
            ceiling_bytes: None,
            force: false,
            policy: CachePolicy::DEFAULT,
            io: EngineOptions::default(),
            overlap: Overlap::Off,
        }
    }
}

/// What [`EngineBuilder::check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The warnings [`EngineBuilder::open`] would give at once (threads, lanes).
    pub warnings: Vec<String>,
    /// Whether the experts would stream (our decoder on an architecture it streams).
    pub streams: bool,
}

/// Opens an [`Engine`]. See the module docs.
#[derive(Clone, Debug)]
pub struct EngineBuilder {
    path: PathBuf,
    kind: EngineKind,
    moe_stream: MoeStream,
    stream: StreamOptions,
    dense: DenseWeights,
    threads: Option<usize>,
    n_ctx: u32,
    n_ubatch: u32,
    auto_ubatch: bool,
    n_expert_used: Option<u32>,
    route_replay: Option<PathBuf>,
    replay_prediction: Option<f64>,
    spec: Option<SpecOptions>,
    drop_cold: Option<f32>,
    route_ahead: Option<u32>,
    mem_available: Option<Option<u64>>,
    cancel: CancelToken,
    progress: LoadProgress,
    decoder: DecoderKind,
    poison: bool,
    in_place: bool,
    rpc: Option<RpcOptions>,
}

/// Told `(bytes done, bytes in all)` as the dense weights are read at open (a front end's
/// progress bar); the default says nothing.
#[derive(Clone)]
pub struct LoadProgress(pub Arc<dyn Fn(u64, u64) + Send + Sync>);

impl Default for LoadProgress {
    fn default() -> Self {
        Self(Arc::new(|_, _| {}))
    }
}

impl std::fmt::Debug for LoadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoadProgress")
    }
}

/// What a streaming engine chose.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamReport {
    /// `uring` or `pread`, and why io_uring was not used when `auto` fell back.
    pub backend: &'static str,
    pub fallback: Option<String>,
    pub o_direct: bool,
    pub lanes: usize,
    pub fixed_buffers: bool,
    /// The pool: the expert cache's true size.
    pub pool_bytes: u64,
    /// The budget asked for (after `auto`), before slots.
    pub requested_bytes: u64,
    /// An explicit size above what holding every expert takes, capped to that: the size asked.
    pub capped_from: Option<u64>,
    pub auto: bool,
    /// Raised to the widest layer's top-k (twice that with look-ahead).
    pub raised: bool,
    pub policy: CachePolicy,
    pub dense: DenseWeights,
    pub overlap: Overlap,
    pub floor_bytes: u64,
    pub ceiling_bytes: Option<u64>,
    /// One token's worst-case expert cycle at the top-k applied.
    pub cycle_bytes: u64,
    /// The top-k applied.
    pub k: u32,
    /// The generic decoder's facts (llama.cpp's graph), when it streams.
    pub generic: Option<Box<GenericReport>>,
}

/// How the engine computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    /// Our decoder, experts streamed through the cache.
    Streaming(StreamReport),
    /// Our decoder, every weight on the mapping.
    Resident,
    /// llama.cpp on mmap; `not_streamable` says why when it stands in for our decoder.
    Llama { plain: bool, not_streamable: Option<String> },
}

/// Named values for a CSV preamble, in order.
pub type Knobs = Vec<(&'static str, String)>;

/// What [`EngineBuilder::open`] chose: the facts of the `mode:` line and the CSV preamble.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub mode: Mode,
    pub kind: EngineKind,
    pub moe_stream: MoeStream,
    pub threads: usize,
    pub n_ctx: u32,
    pub n_ubatch: u32,
    /// `--ubatch auto`: our decoder chooses each prompt's micro-batch, at most `n_ubatch`.
    pub auto_ubatch: bool,
    /// `--n-expert-used` (lossy) when given.
    pub n_expert_used: Option<u32>,
    /// The routing trace replayed (lossy): its name and decode steps.
    pub route_replay: Option<(String, usize)>,
    /// Speculative decoding, when on.
    pub speculative: Option<SpecOptions>,
    /// `--drop-cold-experts F` (lossy), when given.
    pub drop_cold: Option<f32>,
    /// `--route-ahead L` (lossy, experimental), when given.
    pub route_ahead: Option<u32>,
    /// The architecture and shape, for our decoders (the shape: the native one's).
    pub arch: Option<String>,
    pub shape: Option<MoeShape>,
    /// Warnings to show once (the cache under one token's cycle).
    pub warnings: Vec<String>,
    /// Seconds `open` took.
    pub load_s: f64,
}

impl Report {
    /// The `, LOSSY …` suffix of the mode line.
    fn lossy(&self) -> String {
        let mut s = self.n_expert_used.map(|k| format!(", LOSSY --n-expert-used {k}")).unwrap_or_default();
        if let Some((source, len)) = &self.route_replay {
            s += &format!(", LOSSY routing replayed from {source} ({len} decode steps, then again)");
        }
        if let Some(f) = self.drop_cold {
            s += &format!(
                ", LOSSY --drop-cold-experts {f} (a routed expert not in the cache under {f} / k of the weight is skipped)"
            );
        }
        if let Some(l) = self.route_ahead {
            s += &format!(", LOSSY experimental --route-ahead {l} (each layer's experts chosen {l} layers earlier)");
        }
        if let Some(o) = &self.speculative {
            s += &format!(
                ", speculative: {} drafts up to {} tokens, skip rule {}, {}",
                o.source.describe(),
                o.n_draft,
                if o.skip_rule { "on" } else { "off" },
                if o.exact {
                    "exact verify (every row computed as a single step: the plain decode's text, bit for bit)"
                } else {
                    "batched verify (the text is the argmax of the batched pass, not bit-identical to plain decode)"
                }
            );
        }
        s
    }

    /// The `mode:` line (without a newline).
    pub fn mode_line(&self) -> String {
        let threads = self.threads;
        let lossy = self.lossy();
        match &self.mode {
            Mode::Streaming(s) => {
                let twice = if s.overlap.lookahead() { " twice (look-ahead reads the next layer's)" } else { "" };
                let raised = match (s.raised, s.requested_bytes, s.capped_from) {
                    (true, 0, _) if s.auto => {
                        format!(
                            " (auto found no room: the fewest slots that work, the widest layer's top-{}{twice})",
                            s.k
                        )
                    }
                    (true, 0, _) => {
                        format!(" (no cache asked: the fewest slots that work, the widest layer's top-{}{twice})", s.k)
                    }
                    (true, r, _) => {
                        format!(" (raised from {} to the widest layer's top-{}{twice})", fmt_bytes(r), s.k)
                    }
                    (false, _, Some(asked)) => format!(" (capped from {}: every expert fits)", fmt_bytes(asked)),
                    (false, _, None) => String::new(),
                };
                if let Some(g) = &s.generic {
                    return self.generic_mode_line(s, g);
                }
                format!(
                    "mode: streaming (decoder native, backend {}{}, o_direct {}, lanes {}, fixed buffers {}, budget {}{}{}, \
                     policy {}, dense {}, overlap {}, threads {threads}{lossy})",
                    s.backend,
                    s.fallback.as_ref().map_or(String::new(), |why| format!(" (io_uring unavailable: {why})")),
                    if s.o_direct { "on" } else { "off" },
                    s.lanes,
                    if s.fixed_buffers { "yes" } else { "no" },
                    fmt_bytes(s.pool_bytes),
                    if s.auto { " auto" } else { "" },
                    raised,
                    s.policy,
                    s.dense.name(),
                    s.overlap.describe(),
                )
            }
            Mode::Resident => {
                format!("mode: resident (--moe-stream off: bmoe decoder, weights on mmap), threads {threads}{lossy}")
            }
            Mode::Llama { not_streamable: Some(why), .. } => {
                format!("mode: architecture not streamable by this build ({why}); llama.cpp on mmap, threads {threads}")
            }
            Mode::Llama { plain, .. } => format!(
                "mode: llama.cpp baseline (plain llama.cpp on mmap{}), threads {threads}",
                if *plain { ", no repacked weights" } else { "" }
            ),
        }
    }

    /// The generic decoder's `mode:` line.
    fn generic_mode_line(&self, s: &StreamReport, g: &GenericReport) -> String {
        let raised = match (g.raised, g.map_capped, s.capped_from) {
            (true, _, _) => format!(
                " (raised from {} to its floor: one micro-batch's routed experts, {} slots)",
                fmt_bytes(s.requested_bytes),
                g.floor_slots
            ),
            (false, Some(slots), _) => {
                format!(" (capped to {slots} slots: the overlays must stay under vm.max_map_count)")
            }
            (false, None, Some(asked)) => format!(" (capped from {}: every expert fits)", fmt_bytes(asked)),
            _ => String::new(),
        };
        let ubatch = format!(", ubatch {} (floor {} slots)", g.ubatch, g.floor_slots);
        let backing = match &g.in_place {
            None => "experts overlaid from a memfd pool".to_string(),
            Some(why) => format!(
                "experts read in place into llama.cpp's mapping, pages claimed per miss and freed per eviction (no memfd pool: {why})"
            ),
        };
        format!(
            "mode: streaming (decoder generic: llama.cpp's graph, {backing}{}; backend {}{}, \
             o_direct {}, lanes {}, fixed buffers {}, budget {}{}{raised}, policy {}, dense on llama.cpp's mapping{}, \
             overlap {}{ubatch}, threads {}{})",
            if g.poisoned { ", expert pages poisoned" } else { "" },
            s.backend,
            s.fallback.as_ref().map_or(String::new(), |why| format!(" (io_uring unavailable: {why})")),
            if s.o_direct { "on" } else { "off" },
            s.lanes,
            if s.fixed_buffers { "yes" } else { "no" },
            fmt_bytes(s.pool_bytes),
            if s.auto { " auto" } else { "" },
            s.policy,
            if g.dense_unlocked.is_some() { " (not all locked in RAM: see the load line)" } else { " (locked in RAM)" },
            match (s.overlap.pipeline(), s.overlap.lookahead()) {
                (false, false) => "off".to_string(),
                (pipe, ahead) => format!(
                    "on ({}{}{})",
                    if pipe { "each projection computes while the next ones read" } else { "" },
                    if pipe && ahead { " + " } else { "" },
                    if ahead {
                        match g.unpredicted.len() {
                            0 => "look-ahead reads the next layer's predicted experts".to_string(),
                            n => format!("look-ahead reads the next layer's predicted experts, {n} layers unpredicted"),
                        }
                    } else {
                        String::new()
                    },
                ),
            },
            self.threads,
            self.lossy(),
        )
    }

    /// The `load:` line: the seconds `open` took, and for the generic decoder what llama.cpp's
    /// load read and what was released after it.
    pub fn load_line(&self) -> String {
        let generic = match &self.mode {
            Mode::Streaming(StreamReport { generic: Some(g), .. }) => format!(
                " (llama.cpp's load {:.2} s, reading {} from storage for {} of dense tensors, {}; \
                 {} of expert pages left unread)",
                g.llama_load_s,
                g.llama_read_bytes.map_or("an unmeasured amount".into(), fmt_bytes),
                fmt_bytes(g.dense_bytes),
                match &g.dense_unlocked {
                    None => format!("{} locked in RAM", fmt_bytes(g.dense_locked_bytes)),
                    Some(why) => format!("{} locked in RAM, the rest not ({why})", fmt_bytes(g.dense_locked_bytes)),
                },
                fmt_bytes(g.released_bytes),
            ),
            _ => String::new(),
        };
        format!("load: {:.2} s{generic}", self.load_s)
    }

    /// The engine's knobs for a CSV preamble, as `(head, tail)`: a front end puts its own
    /// generation knobs (`n_predict`, sampler) between the two.
    pub fn knobs(&self) -> (Knobs, Knobs) {
        let head = vec![
            ("engine", self.kind.name().to_string()),
            ("threads", self.threads.to_string()),
            ("ctx", self.n_ctx.to_string()),
            (
                "ubatch",
                if self.auto_ubatch { format!("auto (at most {})", self.n_ubatch) } else { self.n_ubatch.to_string() },
            ),
        ];
        let mut tail = vec![
            ("n_expert_used", self.n_expert_used.map_or("model".into(), |k| format!("{k} (lossy)"))),
            (
                "route_replay",
                self.route_replay.as_ref().map_or("off".into(), |(s, n)| format!("{s} (lossy, {n} steps)")),
            ),
            ("drop_cold_experts", self.drop_cold.map_or("off".into(), |f| format!("{f} (lossy)"))),
            ("route_ahead", self.route_ahead.map_or("off".into(), |l| format!("{l} (lossy, experimental)"))),
            (
                "speculative",
                self.speculative.as_ref().map_or("off".into(), |o| {
                    format!(
                        "{} draft={} skip_rule={} verify={}",
                        o.source.describe(),
                        o.n_draft,
                        o.skip_rule,
                        if o.exact { "exact" } else { "batched" }
                    )
                }),
            ),
        ];
        if let (Some(arch), Some(sh)) = (&self.arch, self.shape) {
            tail.push(("arch", arch.to_string()));
            tail.push((
                "shape",
                format!(
                    "layers={} experts={} top_k={} n_embd={} n_ff_exp={}",
                    sh.n_layer, sh.n_expert, sh.n_expert_used, sh.n_embd, sh.n_ff_exp
                ),
            ));
        }
        match &self.mode {
            Mode::Streaming(s) => tail.extend([
                ("moe_stream", format!("{:?}", self.moe_stream).to_lowercase()),
                ("cache_budget_MiB", format!("{:.1}", s.pool_bytes as f64 / MIB)),
                (
                    "cache_requested",
                    if s.auto { "auto".into() } else { format!("{:.1} MiB", s.requested_bytes as f64 / MIB) },
                ),
                ("cache_raised", s.raised.to_string()),
                ("cache_floor_MiB", (s.floor_bytes >> 20).to_string()),
                ("cache_ceil_MiB", (s.ceiling_bytes.unwrap_or(0) >> 20).to_string()),
                ("cache_policy", s.policy.to_string()),
                ("cache_cycle_mb", format!("{:.1}", s.cycle_bytes as f64 / MIB)),
                ("io_backend", s.backend.to_string()),
                ("io_lanes", s.lanes.to_string()),
                ("o_direct", s.o_direct.to_string()),
                ("fixed_buffers", s.fixed_buffers.to_string()),
                ("dense_weights", if s.generic.is_some() { "llama-mmap".into() } else { s.dense.name().to_string() }),
                ("overlap", s.overlap.name().to_string()),
                ("decoder", if s.generic.is_some() { "generic".into() } else { "native".into() }),
            ]),
            Mode::Resident => tail.push(("moe_stream", "off".into())),
            Mode::Llama { .. } => {}
        }
        (head, tail)
    }
}

/// What a generation asks for besides its prompt and sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenParams {
    /// The most tokens to generate.
    pub n_predict: usize,
    /// Keep generating past an end-of-generation token.
    pub ignore_eos: bool,
}

impl GenParams {
    /// Up to `n` tokens, stopping at an end-of-generation token.
    pub fn new(n: usize) -> Self {
        Self { n_predict: n, ignore_eos: false }
    }
}

/// The engine behind one face.
enum Runner {
    Resident(Box<Decoder<ResidentExperts>>),
    Stream(Box<Decoder<StreamingExperts>>),
    Generic(Box<GenericEngine>),
    Llama(llama::Session),
}

/// An opened model that generates: our decoder (streaming or resident) or llama.cpp, with the
/// model's tokenizer and chat template. It can be moved to another thread (a server owns it on
/// a worker thread); it is used from one thread at a time.
pub struct Engine {
    runner: Runner,
    vocab: Arc<llama::Model>,
    index: Option<ModelIndex>,
    report: Report,
    cancel: CancelToken,
    /// The tokens the context holds, in order (the KV cache's contents).
    kv: Vec<i32>,
    /// The model file (the first shard), as opened.
    path: PathBuf,
    /// The expert hosts' figures (`--rpc`).
    rpc: Option<RpcHandle>,
    /// Speculative decoding, when on.
    spec: Option<Speculator>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("report", &self.report).finish()
    }
}

/// What a context of `n_ctx` tokens costs our decoder beyond its weights: the F16 KV cache,
/// and the compute buffers of a micro-batch of `n_ubatch` (the per-layer state, the widest
/// graph's intermediates, the attention masks), an estimate on the high side. u128 inside:
/// the inputs are flags and file fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNeeds {
    pub kv: u64,
    pub compute: u64,
}

/// See [`MemoryNeeds`].
pub fn memory_needs(index: &ModelIndex, n_ctx: u32, n_ubatch: u32) -> MemoryNeeds {
    let p = &index.params.hp;
    let (ctx, ub) = (u128::from(n_ctx), u128::from(n_ubatch));
    let kv_row = 2 * 2 * u128::from(p.n_head_kv) * u128::from(p.head_dim) * u128::from(p.n_layer);
    let (e, k, f) = (u128::from(p.n_embd), u128::from(p.n_expert_used), u128::from(p.n_ff_exp));
    let (q, kvd) = (u128::from(p.n_head) * u128::from(p.head_dim), u128::from(p.n_head_kv) * u128::from(p.head_dim));
    let n_vocab = index.file.tensor("token_embd.weight").map_or(0, |t| u128::from(t.dim(1)));
    let state = (3 * e + 2 * k + e * k) * ub * 4;
    let graph = 4 * ub * (6 * e + q + 2 * kvd + k * (2 * e + 3 * f) + u128::from(p.n_ff_shexp) * 3) + 4 * n_vocab;
    let masks = 2 * 2 * ctx * ub;
    let sat = |x: u128| u64::try_from(x).unwrap_or(u64::MAX);
    MemoryNeeds { kv: sat(kv_row * ctx), compute: sat(state + graph + masks) }
}

/// Refuse a context whose KV cache and compute buffers, with the resident dense weights, do not
/// fit in free memory, before anything is allocated (ggml aborts the process when it cannot
/// allocate), naming what would fit.
fn check_memory(index: &ModelIndex, n_ctx: u32, n_ubatch: u32, dense: u64, mem_available: Option<u64>) -> Result<()> {
    let Some(avail) = mem_available else { return Ok(()) };
    let m = memory_needs(index, n_ctx, n_ubatch);
    let total = u128::from(m.kv) + u128::from(m.compute) + u128::from(dense);
    if total <= u128::from(avail) {
        return Ok(());
    }
    // The largest context that fits, at the same micro-batch.
    let per_token = u128::from(memory_needs(index, 1, n_ubatch).kv) + 4 * u128::from(n_ubatch);
    let fixed = u128::from(memory_needs(index, 0, n_ubatch).compute) + u128::from(dense);
    let fits = u128::from(avail).saturating_sub(fixed) / per_token.max(1);
    let p = &index.params.hp;
    Err(Error::Invalid(format!(
        "-c {n_ctx} needs {} for the KV cache (F16, {} layers × {} KV heads × {}) and {} for the compute buffers (--ubatch {n_ubatch}){}: {} in all, but MemAvailable is {}; lower -c{}",
        fmt_bytes(m.kv),
        p.n_layer,
        p.n_head_kv,
        p.head_dim,
        fmt_bytes(m.compute),
        if dense > 0 { format!(", with {} of dense weights", fmt_bytes(dense)) } else { String::new() },
        fmt_bytes(u64::try_from(total).unwrap_or(u64::MAX)),
        fmt_bytes(avail),
        if fits > 0 { format!(" (at most -c {} fits)", fits.min(u128::from(u32::MAX))) } else { " or --ubatch".into() },
    )))
}

/// `--n-expert-used` against the model.
fn check_k(index: &ModelIndex, k: Option<u32>) -> Result<()> {
    let n = index.shape().n_expert;
    match k {
        Some(k) if k == 0 || k > n => {
            Err(Error::Invalid(format!("--n-expert-used {k}: the model has {n} experts per layer (1..={n})")))
        }
        _ => Ok(()),
    }
}

/// The threads to compute with: the physical cores unless asked; more than the cores this
/// process may use is warned about (ggml's workers busy-wait for each other, so every step slows
/// down many times), an absurd number refused.
fn check_threads(asked: Option<usize>, warnings: &mut Vec<String>) -> Result<usize> {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = asked.unwrap_or_else(|| physical_cores().clamp(1, logical));
    let most = (4 * logical).max(8);
    if t == 0 {
        return Err(Error::Invalid("-t 0: compute with at least one thread".into()));
    }
    if t > most {
        return Err(Error::Invalid(format!(
            "-t {t}: this process may use {logical} cores; more than {most} threads is refused (ggml's threads busy-wait for each other: the run would crawl, and hang the machine)"
        )));
    }
    if t > logical {
        warnings.push(format!(
            "warning: -t {t} is more than the {logical} cores this process may use: ggml's threads busy-wait for each other, expect every step to be many times slower (-t {logical} or less)"
        ));
    }
    Ok(t)
}

/// `--io-threads`: refused at 0 and past [`bmoe_uring_io::MAX_LANES`] (before a thread is
/// spawned), warned about past what a disk's queue uses.
fn check_lanes(lanes: usize, warnings: &mut Vec<String>) -> Result<()> {
    match bmoe_uring_io::check_lanes(lanes) {
        Err(why) => Err(Error::Invalid(format!("--io-threads {lanes}: {why}"))),
        Ok(Some(w)) => {
            warnings.push(format!("warning: --io-threads {w}"));
            Ok(())
        }
        Ok(None) => Ok(()),
    }
}

/// Physical cores (distinct (package, core) pairs of /proc/cpuinfo), or the logical count
/// where that is not readable.
pub fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get());
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else { return logical };
    let mut cores = std::collections::HashSet::new();
    let mut package = "";
    for line in info.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        match k.trim() {
            "physical id" => package = v.trim(),
            "core id" => {
                cores.insert((package.to_string(), v.trim().to_string()));
            }
            _ => {}
        }
    }
    if cores.is_empty() {
        logical
    } else {
        cores.len()
    }
}

/// Bytes for messages: `512 KiB`, `77 MiB`, `24.0 GiB`.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (10u64 << 20) as f64 {
        format!("{:.0} MiB", b / MIB)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / MIB)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

impl Engine {
    /// A builder for the model at `path` (the first shard of a split model), with the defaults
    /// of `bmoe run`: our decoder, streaming whenever the architecture allows, `auto` cache,
    /// dense weights in anonymous memory, all cores, a context of 4096.
    pub fn builder(path: impl Into<PathBuf>) -> EngineBuilder {
        EngineBuilder {
            path: path.into(),
            kind: EngineKind::Bmoe,
            moe_stream: MoeStream::Auto,
            stream: StreamOptions::default(),
            dense: DenseWeights::Anon,
            threads: None,
            n_ctx: 4096,
            n_ubatch: 512,
            auto_ubatch: false,
            n_expert_used: None,
            route_replay: None,
            replay_prediction: None,
            spec: None,
            drop_cold: None,
            route_ahead: None,
            mem_available: None,
            cancel: CancelToken::default(),
            progress: LoadProgress::default(),
            decoder: DecoderKind::Auto,
            poison: false,
            in_place: false,
            rpc: None,
        }
    }
}

impl EngineBuilder {
    /// Which engine computes.
    pub fn engine(mut self, kind: EngineKind) -> Self {
        self.kind = kind;
        self
    }

    /// Whether our decoder streams.
    pub fn moe_stream(mut self, m: MoeStream) -> Self {
        self.moe_stream = m;
        self
    }

    /// How to stream (when streaming).
    pub fn stream(mut self, opts: StreamOptions) -> Self {
        self.stream = opts;
        self
    }

    /// Where the dense weights live.
    pub fn dense(mut self, d: DenseWeights) -> Self {
        self.dense = d;
        self
    }

    /// CPU threads computing the graphs (default: every core).
    pub fn threads(mut self, t: usize) -> Self {
        self.threads = Some(t);
        self
    }

    /// The context length in tokens (prompt and generated).
    pub fn context(mut self, n_ctx: u32) -> Self {
        self.n_ctx = n_ctx;
        self
    }

    /// The widest prefill micro-batch.
    pub fn ubatch(mut self, n: u32) -> Self {
        self.n_ubatch = n;
        self.auto_ubatch = false;
        self
    }

    /// Our decoder chooses each prompt's micro-batch (`--ubatch auto`): the fewest equal passes
    /// of at most [`AUTO_UBATCH_MAX`] tokens (see [`crate::decoder::micro_batches`]); llama.cpp
    /// keeps its default of 512.
    pub fn ubatch_auto(mut self) -> Self {
        self.n_ubatch = AUTO_UBATCH_MAX;
        self.auto_ubatch = true;
        self
    }

    /// Route each token to `k` experts instead of the model's top-k (lossy).
    pub fn n_expert_used(mut self, k: Option<u32>) -> Self {
        self.n_expert_used = k;
        self
    }

    /// Benchmark only (lossy): each decode step's experts and weights from this routing trace.
    pub fn route_replay(mut self, trace: Option<PathBuf>) -> Self {
        self.route_replay = trace;
        self
    }

    /// Research knob for benchmarks, with [`Self::route_replay`] and look-ahead: look-ahead
    /// predicts each decode step's next layer from the trace at this accuracy (0 to 1; see
    /// [`RouteReplay::with_prediction`]) instead of from the model's router.
    pub fn route_replay_prediction(mut self, accuracy: Option<f64>) -> Self {
        self.replay_prediction = accuracy;
        self
    }

    /// Speculative decoding (our native decoder): drafts verified in passes of 1 + N positions
    /// (see [`crate::speculative`]); off with `None`.
    pub fn speculative(mut self, spec: Option<SpecOptions>) -> Self {
        self.spec = spec;
        self
    }

    /// `--drop-cold-experts F` (lossy, streaming with our decoder): see
    /// [`Decoder::set_drop_cold_experts`].
    pub fn drop_cold_experts(mut self, f: Option<f32>) -> Self {
        self.drop_cold = f;
        self
    }

    /// `--route-ahead L` (lossy, experimental, our decoder): see [`Decoder::set_route_ahead`].
    pub fn route_ahead(mut self, l: Option<u32>) -> Self {
        self.route_ahead = l;
        self
    }

    /// Report the reading of the dense weights at open to `progress`.
    pub fn progress(mut self, progress: LoadProgress) -> Self {
        self.progress = progress;
        self
    }

    /// Cancel this engine's generations through `token` (a signal handler's flag, say); by
    /// default the engine makes its own ([`Engine::cancel_handle`]).
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Which decode path streams (default: native where this build has the recipe).
    pub fn decoder(mut self, d: DecoderKind) -> Self {
        self.decoder = d;
        self
    }

    /// Tests only: with the generic decoder, map 0xFF bytes over every page wholly inside an
    /// expert tensor before the first decode and back over them on eviction, so that equal bits
    /// prove every routed byte came from the cache's slots.
    #[doc(hidden)]
    pub fn poison_experts(mut self, on: bool) -> Self {
        self.poison = on;
        self
    }

    /// Tests only: the generic decoder's fallback (reads in place into llama.cpp's mapping, the
    /// design for kernels without memfd) even where a memfd pool works.
    #[doc(hidden)]
    pub fn generic_in_place(mut self, on: bool) -> Self {
        self.in_place = on;
        self
    }

    /// Spread the routed experts over other hosts' RAM through ggml's RPC backend (our native
    /// decoder only; see [`crate::rpc`]), or not (`None`, the default).
    pub fn rpc(mut self, opts: Option<RpcOptions>) -> Self {
        self.rpc = opts;
        self
    }

    /// `--rpc` against the engine it would run on, before anything connects.
    fn check_rpc(&self, native: bool) -> Result<()> {
        let Some(r) = &self.rpc else { return Ok(()) };
        if self.kind != EngineKind::Bmoe || !native {
            return Err(Error::Invalid(
                "--rpc spreads the experts of bmoe's native decoder (--engine bmoe on an architecture of --list-archs)"
                    .into(),
            ));
        }
        if !crate::ggml::backend::rpc_supported() {
            return Err(Error::Invalid(
                "--rpc: this build has no ggml RPC backend (llama.cpp built without GGML_RPC=ON)".into(),
            ));
        }
        if self.spec.is_some() || self.drop_cold.is_some() || self.route_ahead.is_some() {
            return Err(Error::Invalid(
                "--rpc is not combined with speculative decoding, --drop-cold-experts or --route-ahead yet (the expert hosts compute a verify pass's rows together, and see the router's own choices)"
                    .into(),
            ));
        }
        for h in &r.hosts {
            crate::rpc::check_endpoint(h).map_err(Error::Invalid)?;
        }
        Ok(())
    }

    /// Size `auto` against this much free memory instead of /proc/meminfo's `MemAvailable`
    /// (None: unknown).
    pub fn mem_available(mut self, bytes: Option<u64>) -> Self {
        self.mem_available = Some(bytes);
        self
    }

    /// The knobs that contradict each other or mean nothing, whatever the model.
    /// `r` with look-ahead's predictions drawn at [`Self::route_replay_prediction`]'s accuracy.
    fn with_prediction(&self, r: RouteReplay) -> Result<RouteReplay> {
        match self.replay_prediction {
            Some(p) => r.with_prediction(p),
            None => Ok(r),
        }
    }

    fn check_knobs(&self) -> Result<()> {
        if let Some(p) = self.replay_prediction {
            if self.route_replay.is_none() || !self.stream.overlap.lookahead() || !(0.0..=1.0).contains(&p) {
                return Err(Error::Invalid(format!(
                    "a look-ahead accuracy of {p} draws look-ahead's predictions from a replayed trace: it needs \
                     --route-replay, look-ahead on (--overlap full or lookahead) and an accuracy between 0 and 1"
                )));
            }
        }
        if self.n_ctx == 0 {
            return Err(Error::Invalid("-c 0: the context must hold at least one token".into()));
        }
        if self.n_ubatch == 0 {
            return Err(Error::Invalid("--ubatch 0: a micro-batch holds at least one token".into()));
        }
        if self.moe_stream == MoeStream::On && self.kind != EngineKind::Bmoe {
            return Err(Error::Invalid(format!(
                "--moe-stream on streams with bmoe's decoder, not with --engine {}",
                self.kind.name()
            )));
        }
        let native = |what: &str| -> Result<()> {
            if self.kind != EngineKind::Bmoe {
                return Err(Error::Invalid(format!(
                    "{what} is built for bmoe's native decoder, not --engine {} (--engine bmoe)",
                    self.kind.name()
                )));
            }
            if self.decoder == DecoderKind::Generic {
                return Err(Error::Invalid(format!(
                    "{what} is built for bmoe's native decoder, not the generic one (--decoder native)"
                )));
            }
            Ok(())
        };
        if let Some(o) = &self.spec {
            Speculator::new(o.clone())?;
            native("speculative decoding (--ngram, --draft-replay)")?;
            if o.n_draft + 1 > self.n_ubatch.min(self.n_ctx) {
                return Err(Error::Invalid(format!(
                    "--draft {}: a verify pass of {} positions is one micro-batch, wider than --ubatch {}",
                    o.n_draft,
                    o.n_draft + 1,
                    self.n_ubatch.min(self.n_ctx)
                )));
            }
        }
        if let Some(f) = self.drop_cold {
            native("--drop-cold-experts")?;
            if self.moe_stream == MoeStream::Off {
                return Err(Error::Invalid(format!(
                    "--drop-cold-experts {f} skips routed experts that are not in the expert cache: with --moe-stream off every expert is resident"
                )));
            }
        }
        if let Some(l) = self.route_ahead {
            native("--route-ahead")?;
            if self.spec.is_some() {
                return Err(Error::Invalid(format!(
                    "--route-ahead {l} routes single-token decode steps: not with speculative decoding's verify passes"
                )));
            }
            if self.route_replay.is_some() {
                return Err(Error::Invalid(format!(
                    "--route-ahead {l} needs the router's own decisions, which --route-replay replaces"
                )));
            }
        }
        Ok(())
    }

    /// The lossy knobs against the model: `--drop-cold-experts` in (0, k], `--route-ahead` under
    /// the layers.
    fn check_lossy(&self, index: &ModelIndex) -> Result<()> {
        let sh = index.shape();
        let k = self.n_expert_used.unwrap_or(sh.n_expert_used) as f32;
        if let Some(f) = self.drop_cold.filter(|&f| !(f > 0.0 && f <= k)) {
            return Err(Error::Invalid(format!(
                "--drop-cold-experts {f}: a fraction of the even share 1/k of the router's weight, in (0, {k}] (k = {k})"
            )));
        }
        if let Some(l) = self.route_ahead.filter(|&l| l == 0 || l >= sh.n_layer) {
            return Err(Error::Invalid(format!(
                "--route-ahead {l}: 1 to {} layers (the model has {})",
                sh.n_layer.saturating_sub(1),
                sh.n_layer
            )));
        }
        Ok(())
    }

    /// What [`Self::open`] checks before it allocates anything (the file, every knob, the
    /// model's index against `-c`, `--ubatch` and `--n-expert-used`, the memory they need),
    /// without opening: a front end that opens many engines (`bmoe bench`'s rows) checks them
    /// all before the first runs. The warnings `open` would give, and whether it would stream.
    ///
    /// # Errors
    /// As [`Self::open`]'s validation.
    pub fn check(&self) -> Result<Checked> {
        let meta = std::fs::metadata(&self.path).map_err(|err| Error::File { path: self.path.clone(), err })?;
        if !meta.is_file() {
            let kind = crate::gguf::file_kind(&meta);
            return Err(Error::Invalid(format!("{}: {kind}, not a model file", self.path.display())));
        }
        let mut warnings = Vec::new();
        check_threads(self.threads, &mut warnings)?;
        check_lanes(self.stream.io.lanes, &mut warnings)?;
        self.check_knobs()?;
        let index = match ModelIndex::open(&self.path) {
            Ok(i) => Some(i),
            Err(e) if self.kind != EngineKind::Bmoe || (e.not_streamable() && self.moe_stream == MoeStream::Auto) => {
                None
            }
            Err(e) => {
                return Err(Error::Opening { step: "indexing", path: self.path.clone(), err: Box::new(e.into()) })
            }
        };
        let streams = self.kind == EngineKind::Bmoe && index.is_some() && self.moe_stream != MoeStream::Off;
        self.check_rpc(index.is_some() && self.decoder != DecoderKind::Generic)?;
        if let Some(i) = &index {
            check_k(i, self.n_expert_used)?;
            self.check_lossy(i)?;
            let dense = if self.kind == EngineKind::Bmoe { i.dense_bytes() } else { 0 };
            let mem_available = self.mem_available.unwrap_or_else(budget::mem_available);
            check_memory(i, self.n_ctx, self.n_ubatch.min(self.n_ctx), dense, mem_available)?;
        }
        Ok(Checked { warnings, streams })
    }

    /// Validate, size and open.
    ///
    /// # Errors
    /// [`Error::Opening`] naming the step and the model for anything that fails: the file, its
    /// index, llama.cpp, a knob that does not fit ([`Error::Invalid`]), the read engine.
    pub fn open(self) -> Result<Engine> {
        let t_load = Instant::now();
        let path = &self.path;
        let at = |step: &'static str| move |err: Error| Error::Opening { step, path: path.clone(), err: Box::new(err) };
        // Look before anything opens it: a FIFO would block the open, a symlink loop is not
        // "no such file".
        let meta = std::fs::metadata(&self.path).map_err(|err| Error::File { path: self.path.clone(), err })?;
        if !meta.is_file() {
            let kind = crate::gguf::file_kind(&meta);
            return Err(Error::Invalid(format!("{}: {kind}, not a model file", self.path.display())));
        }
        let mut warnings = Vec::new();
        let threads = check_threads(self.threads, &mut warnings)?;
        check_lanes(self.stream.io.lanes, &mut warnings)?;
        self.check_knobs()?;
        // A micro-batch wider than the context holds nothing more (no prompt is longer).
        let n_ubatch = self.n_ubatch.min(self.n_ctx);
        let mem_available = self.mem_available.unwrap_or_else(budget::mem_available);
        // Our decoder needs an index of the model; an architecture it does not know runs on
        // llama.cpp when streaming is `auto`. (llama.cpp's own engine is indexed too, when it
        // can be, to size its KV cache before llama.cpp allocates it.)
        let mut kind = self.kind;
        let mut index = None;
        let mut generic_index = None;
        let mut not_streamable = None;
        let generic_of =
            |path: &Path| crate::gguf::open_model(path).map_err(crate::model::Error::from).and_then(GenericIndex::new);
        if kind == EngineKind::Bmoe && self.decoder == DecoderKind::Generic {
            if self.moe_stream == MoeStream::Off {
                return Err(Error::Invalid(
                    "--decoder generic streams the experts under llama.cpp's graph; resident, that graph is --engine llama-plain".into(),
                ));
            }
            generic_index = Some(generic_of(&self.path).map_err(|e| at("indexing")(e.into()))?);
        } else {
            match ModelIndex::open(&self.path) {
                Ok(i) => index = Some(i),
                Err(e) if kind != EngineKind::Bmoe => drop(e),
                // No native recipe: llama.cpp's graph streams any MoE architecture it decodes
                // (resident: llama.cpp's own run of it).
                Err(e) if e.not_streamable() && self.decoder == DecoderKind::Auto => match generic_of(&self.path) {
                    Ok(g) if self.moe_stream == MoeStream::Off => {
                        drop(g);
                        kind = EngineKind::LlamaPlain;
                    }
                    Ok(g) => generic_index = Some(g),
                    Err(ge) if ge.not_streamable() && self.moe_stream == MoeStream::Auto => {
                        not_streamable = Some(ge.to_string());
                        kind = EngineKind::Llama;
                    }
                    Err(ge) => return Err(at("indexing")(ge.into())),
                },
                Err(e) if e.not_streamable() && self.moe_stream == MoeStream::Auto => {
                    not_streamable = Some(e.to_string());
                    kind = EngineKind::Llama;
                }
                Err(e) => return Err(at("indexing")(e.into())),
            }
        }
        self.check_rpc(kind == EngineKind::Bmoe && index.is_some())?;
        if let Some(i) = &index {
            check_k(i, self.n_expert_used)?;
            self.check_lossy(i)?;
            let resident_dense = if kind == EngineKind::Bmoe { i.dense_bytes() } else { 0 };
            check_memory(i, self.n_ctx, n_ubatch, resident_dense, mem_available)?;
        }
        let mut generic_replay = None;
        if let Some(g) = &generic_index {
            let n = g.n_expert;
            if let Some(k) = self.n_expert_used.filter(|&k| k == 0 || k > n) {
                return Err(Error::Invalid(format!(
                    "--n-expert-used {k}: the model has {n} experts per layer (1..={n})"
                )));
            }
            if let Some(p) = &self.route_replay {
                let t = RouteTrace::read(p)?;
                let r = self.with_prediction(RouteReplay::from_trace(&t, &p.display().to_string())?)?;
                let k = self.n_expert_used.unwrap_or(g.n_expert_used);
                r.check(g.layers.len() as u32, n, k as usize)?;
                generic_replay = Some(r);
            }
            if self.spec.is_some() || self.drop_cold.is_some() || self.route_ahead.is_some() {
                return Err(Error::Invalid(
                    "speculative decoding, --drop-cold-experts and --route-ahead are built for bmoe's native decoder, not the generic one (this architecture has no native recipe)".into(),
                ));
            }
        }
        if (self.spec.is_some() || self.drop_cold.is_some() || self.route_ahead.is_some())
            && (kind != EngineKind::Bmoe || index.is_none())
        {
            return Err(Error::Invalid(format!(
                "speculative decoding, --drop-cold-experts and --route-ahead are built for bmoe's native decoder{}",
                not_streamable.as_ref().map_or(String::new(), |why| format!(", which does not run this model ({why})"))
            )));
        }
        // The generic decoder's llama.cpp model is the whole model, loaded when it opens; it is
        // the tokenizer too.
        // llama.cpp's own run with fewer experts per token (lossy, as ours): its
        // `expert_used_count` overridden at load.
        let k_override = |extra_bufts: bool| -> Result<llama::Model> {
            let model = crate::gguf::open_model(&self.path).map_err(|e| at("reading")(e.into()))?;
            let arch = model.metadata().get_str("general.architecture").unwrap_or_default().to_string();
            let k = self.n_expert_used.expect("asked");
            let n = model.metadata().get_u64(&format!("{arch}.expert_count")).unwrap_or(0);
            if k == 0 || u64::from(k) > n {
                return Err(Error::Invalid(format!(
                    "--n-expert-used {k}: the model has {n} experts per layer (1..={n})"
                )));
            }
            let k = i64::from(k);
            Ok(llama::Model::mmap_overriding(&self.path, extra_bufts, &[(format!("{arch}.expert_used_count"), k)])?)
        };
        let vocab = match kind {
            _ if generic_index.is_some() => None,
            EngineKind::Llama if self.n_expert_used.is_some() => Some(Ok(k_override(true)?)),
            EngineKind::LlamaPlain if self.n_expert_used.is_some() => Some(Ok(k_override(false)?)),
            EngineKind::Llama => Some(llama::Model::mmap(&self.path)),
            EngineKind::LlamaPlain => Some(llama::Model::mmap_plain_kernels(&self.path)),
            EngineKind::Bmoe => Some(llama::Model::vocab_only(&self.path)),
        }
        .transpose()
        .map_err(|e| at("loading in llama.cpp")(e.into()))?;
        let mut vocab = vocab.map(Arc::new);
        // llama.cpp (and its graph under the generic decoder) keeps its own default micro-batch
        // under `auto`.
        let n_ubatch = if self.auto_ubatch && (kind != EngineKind::Bmoe || generic_index.is_some()) {
            512.min(self.n_ctx)
        } else {
            n_ubatch
        };
        let opts = Options {
            n_ctx: self.n_ctx,
            n_threads: threads,
            n_ubatch,
            auto_ubatch: self.auto_ubatch && kind == EngineKind::Bmoe,
            n_expert_used: self.n_expert_used,
            pipeline: self.stream.overlap.pipeline(),
            ..Options::default()
        };
        let replay = match (&self.route_replay, kind) {
            (Some(p), EngineKind::Bmoe) if index.is_some() => {
                let t = RouteTrace::read(p)?;
                let r = self.with_prediction(RouteReplay::from_trace(&t, &p.display().to_string())?)?;
                let sh = index.as_ref().expect("checked").shape();
                r.check(sh.n_layer, sh.n_expert, self.n_expert_used.unwrap_or(sh.n_expert_used) as usize)?;
                Some(r)
            }
            (Some(_), EngineKind::Bmoe) if generic_replay.is_some() => None,
            (Some(_), _) => {
                return Err(Error::Invalid("--route-replay replaces our decoder's routing: use --engine bmoe".into()))
            }
            (None, _) => None,
        };
        let mut report = Report {
            mode: Mode::Resident,
            kind,
            moe_stream: self.moe_stream,
            threads,
            n_ctx: self.n_ctx,
            n_ubatch,
            auto_ubatch: opts.auto_ubatch,
            n_expert_used: self.n_expert_used,
            route_replay: replay.as_ref().or(generic_replay.as_ref()).map(|r| (r.source.clone(), r.len())),
            speculative: None,
            drop_cold: None,
            route_ahead: None,
            arch: index
                .as_ref()
                .map(|i| i.arch.name.to_string())
                .or_else(|| generic_index.as_ref().map(|g| g.arch.clone())),
            shape: index.as_ref().map(ModelIndex::shape),
            warnings,
            load_s: 0.0,
        };
        let runner = match (kind, &index) {
            (EngineKind::Bmoe, None) if generic_index.is_some() => {
                let g = generic_index.as_ref().expect("checked");
                let so = &self.stream;
                let go = GenericOptions {
                    cache: so.cache,
                    floor_bytes: so.floor_bytes,
                    ceiling_bytes: so.ceiling_bytes,
                    force: so.force,
                    policy: so.policy,
                    io: so.io,
                    n_ctx: self.n_ctx,
                    n_threads: threads,
                    n_ubatch,
                    mem_available: self.mem_available,
                    poison: self.poison,
                    pipeline: so.overlap.pipeline(),
                    in_place: self.in_place,
                    lookahead: so.overlap.lookahead(),
                    n_expert_used: self.n_expert_used,
                    replay: generic_replay.take(),
                };
                let progress = &*self.progress.0;
                let (engine, gr) = GenericEngine::open(&self.path, g, go, &mut |p| {
                    progress((f64::from(p) * 1e6) as u64, 1_000_000);
                })
                .map_err(at("opening (generic decoder)"))?;
                vocab = Some(engine.model().clone());
                let s = StreamReport {
                    backend: gr.backend,
                    fallback: gr.fallback.clone(),
                    o_direct: gr.o_direct,
                    lanes: gr.lanes,
                    fixed_buffers: gr.fixed_buffers,
                    pool_bytes: gr.pool_bytes,
                    requested_bytes: gr.requested_bytes,
                    capped_from: gr.capped_from,
                    auto: gr.auto,
                    raised: gr.raised,
                    policy: so.policy,
                    dense: self.dense,
                    overlap: so.overlap,
                    floor_bytes: so.floor_bytes,
                    ceiling_bytes: so.ceiling_bytes,
                    cycle_bytes: gr.cycle_bytes,
                    k: gr.k,
                    generic: Some(Box::new(gr)),
                };
                if s.pool_bytes < s.cycle_bytes {
                    report.warnings.push(format!(
                        "warning: the expert cache ({}) is smaller than one token's worst-case expert cycle ({} at \
                         top-{}): expect most experts to be re-read every token",
                        fmt_bytes(s.pool_bytes),
                        fmt_bytes(s.cycle_bytes),
                        s.k
                    ));
                }
                let gated =
                    crate::arch::spec(&g.arch).is_some() || crate::arch::GENERIC_ARCHS.iter().any(|a| a.name == g.arch);
                if !gated {
                    report.warnings.push(format!(
                        "warning: architecture `{}` streams through the generic decoder untested: this build has no \
                         synthetic model or gate of it (llama.cpp's graph computes it; bmoe run --list-archs)",
                        g.arch
                    ));
                }
                report.n_ubatch = s.generic.as_ref().map_or(n_ubatch, |g| g.ubatch);
                report.mode = Mode::Streaming(s);
                Runner::Generic(Box::new(engine))
            }
            (EngineKind::Bmoe, Some(index)) if self.moe_stream != MoeStream::Off => {
                let so = &self.stream;
                let k = self.n_expert_used.unwrap_or(index.shape().n_expert_used);
                let machine =
                    Machine { mem_available, floor: so.floor_bytes, ceiling: so.ceiling_bytes, force: so.force };
                let slot = crate::stream::slot_layout_bytes(&index.layers) as u64;
                let entries = index.layers.iter().map(|l| u64::from(l.n_expert)).sum::<u64>();
                let mem = memory_needs(index, self.n_ctx, n_ubatch);
                let needs = Needs {
                    dense: index.dense_bytes(),
                    kv: mem.kv.saturating_add(mem.compute),
                    experts: entries.saturating_mul(slot),
                };
                let b = budget::resolve(so.cache, machine, needs)?;
                let min_pool = (budget::floor_slots(k as usize, so.overlap.lookahead()) as u64).saturating_mul(slot);
                if let (true, Some(avail)) = (b.bytes < min_pool, mem_available) {
                    let left = avail.saturating_sub(needs.dense.saturating_add(needs.kv));
                    if left < min_pool && !so.force {
                        return Err(Error::Invalid(format!(
                            "no room for the expert cache: its smallest pool (one layer's top-{k}{}) is {}, and MemAvailable {} less the dense weights ({}) and the KV cache and compute buffers ({} for -c {}) leaves {}; lower -c, or pass --force-cache to try anyway",
                            if so.overlap.lookahead() { " twice, for look-ahead" } else { "" },
                            fmt_bytes(min_pool),
                            fmt_bytes(avail),
                            fmt_bytes(needs.dense),
                            fmt_bytes(needs.kv),
                            self.n_ctx,
                            fmt_bytes(left)
                        )));
                    }
                    if b.auto {
                        report.warnings.push(format!(
                            "warning: --cache-mb auto found {} free after the floor (--cache-floor-mb {}), the dense weights and the KV cache: the cache is its smallest pool, {} (one layer's top-{k}), taken from the floor",
                            fmt_bytes(b.bytes),
                            so.floor_bytes >> 20,
                            fmt_bytes(min_pool)
                        ));
                    }
                }
                let dense = self.dense.load(index, so.io, &*self.progress.0).map_err(at("reading"))?;
                let streamer = StreamingExperts::new(
                    index,
                    StreamerOptions {
                        budget_bytes: b.bytes,
                        policy: so.policy,
                        io: so.io,
                        n_expert_used: self.n_expert_used,
                        lookahead: so.overlap.lookahead(),
                    },
                )
                .map_err(at("setting up streaming of"))?;
                let info = streamer.engine().info().clone();
                let cycle = index.cycle_bytes(k);
                let s = StreamReport {
                    backend: info.backend,
                    fallback: info.fallback.clone(),
                    o_direct: streamer.engine().file(0).map(|f| f.o_direct()).unwrap_or(false),
                    lanes: info.lanes,
                    fixed_buffers: info.fixed_buffers,
                    pool_bytes: streamer.pool_bytes() as u64,
                    requested_bytes: b.bytes,
                    capped_from: b.capped_from,
                    auto: b.auto,
                    raised: streamer.budget_raised(),
                    policy: so.policy,
                    dense: self.dense,
                    overlap: so.overlap,
                    floor_bytes: so.floor_bytes,
                    ceiling_bytes: so.ceiling_bytes,
                    cycle_bytes: cycle,
                    k,
                    generic: None,
                };
                if s.pool_bytes < cycle {
                    report.warnings.push(format!(
                        "warning: the expert cache ({}) is smaller than one token's worst-case expert cycle ({} at \
                         top-{k}): expect most experts to be re-read every token",
                        fmt_bytes(s.pool_bytes),
                        fmt_bytes(cycle)
                    ));
                }
                report.mode = Mode::Streaming(s);
                Runner::Stream(Box::new(Decoder::new(index, dense, streamer, opts).map_err(at("opening"))?))
            }
            (EngineKind::Bmoe, Some(index)) => {
                let map = Arc::new(Mapping::open(&index.file).map_err(at("opening"))?);
                let provider = ResidentExperts::new(index, map.clone());
                Runner::Resident(Box::new(Decoder::new(index, map, provider, opts).map_err(at("opening"))?))
            }
            _ => {
                report.mode = Mode::Llama { plain: kind == EngineKind::LlamaPlain, not_streamable };
                let model = vocab.clone().expect("loaded above");
                Runner::Llama(llama::Session::new(model, self.n_ctx, threads, n_ubatch)?)
            }
        };
        let vocab = vocab.expect("every runner has its llama.cpp model");
        // The expert hosts: placed, started and loaded now; the decoder sends them their experts.
        let mut runner = runner;
        let mut rpc = None;
        if let (Some(opts), Some(i)) = (&self.rpc, &index) {
            let c = Coordinator::start(i, opts).map_err(at("starting the expert hosts for"))?;
            rpc = Some(c.handle());
            match &mut runner {
                Runner::Resident(d) => d.set_remote(Some(Box::new(c))),
                Runner::Stream(d) => d.set_remote(Some(Box::new(c))),
                Runner::Generic(_) | Runner::Llama(_) => unreachable!("--rpc was checked against the decoder"),
            }
        }
        if let Some(SpecOptions { source: DraftSource::Replay { tokens, source, .. }, .. }) = &self.spec {
            let n = vocab.n_vocab();
            if let Some(t) = tokens.iter().find(|&&t| t as usize >= n) {
                return Err(Error::Invalid(format!(
                    "--draft-replay {source}: token {t} is not in this model's vocabulary ({n} tokens)"
                )));
            }
        }
        let mut engine = Engine {
            runner,
            vocab,
            index,
            report,
            cancel: self.cancel.clone(),
            kv: Vec::new(),
            path: self.path.clone(),
            rpc,
            spec: self.spec.clone().map(Speculator::new).transpose()?,
        };
        if let Some(r) = replay {
            engine.set_route_replay(Some(r))?;
        }
        if self.drop_cold.is_some() || self.route_ahead.is_some() {
            engine.decoder_mut(|d| d.set_lossy(self.drop_cold, self.route_ahead))?;
        }
        engine.report.speculative = self.spec.clone();
        engine.report.drop_cold = self.drop_cold;
        engine.report.route_ahead = self.route_ahead;
        engine.report.load_s = t_load.elapsed().as_secs_f64();
        Ok(engine)
    }
}

/// The runner as the generation loop drives it.
fn forward_of(runner: &mut Runner) -> &mut dyn Forward {
    match runner {
        Runner::Resident(d) => d.as_mut(),
        Runner::Stream(d) => d.as_mut(),
        Runner::Generic(g) => g.as_mut(),
        Runner::Llama(s) => s,
    }
}

/// Calls `$f` on whichever decoder the runner holds; `$none` for llama.cpp.
macro_rules! with_decoder {
    ($runner:expr, $d:ident => $f:expr, $none:expr) => {
        match $runner {
            Runner::Resident($d) => $f,
            Runner::Stream($d) => $f,
            Runner::Generic(_) | Runner::Llama(_) => $none,
        }
    };
}

impl Engine {
    /// What was chosen at open.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The model's tokenizer, chat template and end-of-generation tokens (an `Arc`, so a
    /// generation's callback can hold it while the engine generates).
    pub fn tokenizer(&self) -> &Arc<llama::Model> {
        &self.vocab
    }

    /// The model index (our decoder only).
    pub fn index(&self) -> Option<&ModelIndex> {
        self.index.as_ref()
    }

    /// Cancel the generations from now on through `token` instead (a server gives each request
    /// its own, which a client that goes away cancels).
    pub fn set_cancel(&mut self, token: CancelToken) {
        self.cancel = token;
    }

    /// A handle that cancels this engine's generation in progress from any thread.
    pub fn cancel_handle(&self) -> CancelToken {
        self.cancel.clone()
    }

    fn forward(&mut self) -> &mut dyn Forward {
        forward_of(&mut self.runner)
    }

    fn decoder_mut<T>(&mut self, f: impl FnOnce(&mut dyn DecoderOps) -> Result<T>) -> Result<T> {
        with_decoder!(&mut self.runner, d => f(d.as_mut()), Err(Error::Unsupported("llama.cpp runs this model".into())))
    }

    /// Prefill `prompt` on an empty context, then up to `params.n_predict` tokens, stopping
    /// at an end-of-generation token unless `params.ignore_eos` (see [`session::generate`]).
    ///
    /// # Errors
    /// The engine's; the generation ends at the failing step.
    pub fn generate(
        &mut self,
        prompt: &[i32],
        params: &GenParams,
        pick: &mut dyn FnMut(&[f32]) -> i32,
        on_token: &mut dyn FnMut(Token) -> Control,
    ) -> Result<Generation> {
        self.reset();
        self.generate_from(prompt, params, pick, on_token, &mut |_, _| {})
    }

    /// Generate after `context`, every token the reply follows (a conversation's history and
    /// its new turn): the longest prefix of it the context already holds is kept (its KV cache
    /// reused, not evaluated again: [`Generation::reused_tokens`]), the rest is evaluated, then
    /// up to `params.n_predict` tokens. The context then holds `context` and the reply (all but
    /// its last token, which was never run): the next turn's context starts with
    /// [`Self::context`] and the reply's tokens.
    ///
    /// # Errors
    /// [`Error::ContextFull`] when `context` does not fit; the engine's.
    pub fn generate_from(
        &mut self,
        context: &[i32],
        params: &GenParams,
        pick: &mut dyn FnMut(&[f32]) -> i32,
        on_token: &mut dyn FnMut(Token) -> Control,
        on_prefill: &mut dyn FnMut(usize, usize),
    ) -> Result<Generation> {
        if context.is_empty() {
            return Err(Error::Invalid("nothing to generate after: the context is empty".into()));
        }
        // At least the last token is run again: its logits are the first pick's.
        let keep = self.kv.iter().zip(context).take_while(|(a, b)| a == b).count().min(context.len() - 1);
        self.truncate(keep);
        let vocab = self.vocab.clone();
        let cancel = self.cancel.clone();
        let ignore = params.ignore_eos;
        let mut spec = self.spec.as_mut();
        if let Some(s) = spec.as_deref_mut() {
            s.begin(context);
        }
        let f = forward_of(&mut self.runner);
        let r = session::continue_speculative(
            f,
            &context[keep..],
            params.n_predict,
            &cancel,
            pick,
            &|t| !ignore && vocab.is_eog(t),
            on_token,
            on_prefill,
            spec,
        );
        // Whatever happened, the context holds a prefix of `context` and the reply (after an
        // error, what the failed step left is dropped).
        if r.is_err() {
            f.truncate(keep as u32);
        }
        let n = f.n_past() as usize;
        self.kv.truncate(keep);
        let g = r?;
        self.kv.extend(context[keep..].iter().chain(&g.tokens).take(n - keep));
        Ok(g)
    }

    /// Save the context (its tokens and KV cache), which experts the cache holds, and `extra`
    /// (a front end's own state: a chat's messages) to `path` (the format:
    /// [`crate::session_file`]), so that [`Self::load_session`] continues bit-identically.
    /// Written under a temporary name and renamed when complete.
    ///
    /// # Errors
    /// [`Error::File`] naming the path; the engine's.
    pub fn save_session(&mut self, path: &Path, extra: serde_json::Value) -> Result<()> {
        let state = self.forward().save_state()?;
        let experts = self.cached_experts();
        let model = self.model_id()?;
        let header = session_file::Header {
            model: &model,
            engine: self.report.kind.name(),
            decoder: self.decoder_name(),
            n_ctx: self.report.n_ctx,
            tokens: &self.kv,
            experts: &experts,
            extra,
        };
        session_file::write(path, &header, &state)
    }

    /// Read the session at `path` whole and check every part of it against this engine (the
    /// model by content, the engine, the file's length, the tokens against the context and the
    /// vocabulary, the cached experts against the layers, the state's size and values), without
    /// changing anything: [`Self::restore_session`] then takes it. A front end checks its
    /// `extra` in between, so that nothing changes unless all of it is good.
    ///
    /// # Errors
    /// [`Error::File`]; [`Error::Invalid`] naming the file and what is wrong with it.
    pub fn read_session(&self, path: &Path) -> Result<session_file::Saved> {
        let model = self.model_id()?;
        let per_token = with_decoder!(&self.runner, d => Some(d.kv_bytes_per_position() as u64), None);
        let want = session_file::Expect {
            model: &model,
            engine: self.report.kind.name(),
            decoder: self.decoder_name(),
            n_ctx: self.report.n_ctx,
            n_vocab: self.vocab.n_vocab() as u32,
            experts: match (&self.index, &self.runner) {
                (Some(i), _) => Some(i.layers.iter().map(|l| l.n_expert).collect()),
                (None, Runner::Generic(g)) => {
                    let geom = g.experts().cache().geometry();
                    Some(vec![geom.n_expert(); geom.n_layer() as usize])
                }
                _ => None,
            },
            state_bytes_per_token: per_token,
            // Our decoder's state is its F16 KV cache; llama.cpp's is its own format.
            state_f16: per_token.is_some(),
        };
        session_file::read(path, &want)
    }

    /// Restore a session [`Self::read_session`] checked: the context as it was, then the cache
    /// warmed with the experts it held in one batch of reads (instead of a slow start, miss by
    /// miss). If the engine refuses the state, the context it had is put back as it was.
    /// Returns how many experts the warm read, or why it failed: a failed warm leaves the
    /// session loaded (what the cache holds never changes the output) and the next step will
    /// meet the same read error.
    ///
    /// # Errors
    /// The engine's refusal of the state (llama.cpp's checks of its own format).
    pub fn restore_session(&mut self, saved: session_file::Saved) -> Result<std::result::Result<usize, Error>> {
        let n = saved.tokens.len() as u32;
        let n_before = self.forward().n_past();
        let before = (self.forward().save_state()?, self.kv.clone());
        self.reset();
        if let Err(e) = self.forward().load_state(&saved.state, n) {
            self.reset();
            let (state, kv) = before;
            self.forward().load_state(&state, n_before)?;
            self.kv = kv;
            return Err(e);
        }
        drop(before);
        self.kv = saved.tokens;
        Ok(match &mut self.runner {
            Runner::Stream(d) => d.provider_mut().warm(&saved.experts),
            Runner::Generic(g) => g.experts_mut().warm(&saved.experts),
            _ => Ok(0),
        })
    }

    /// [`Self::read_session`] then [`Self::restore_session`]; returns the session's `extra`.
    ///
    /// # Errors
    /// As theirs, and a failed warm's read error (the session is loaded all the same).
    pub fn load_session(&mut self, path: &Path) -> Result<serde_json::Value> {
        let saved = self.read_session(path)?;
        let extra = saved.extra.clone();
        self.restore_session(saved)??;
        Ok(extra)
    }

    /// The `extra` of a session [`Self::save_session`] wrote, checked whole as
    /// [`Self::read_session`] checks it, without loading its context: a front end that starts
    /// over from the same history (to measure a cold start).
    ///
    /// # Errors
    /// As [`Self::read_session`].
    pub fn session_extra(&self, path: &Path) -> Result<serde_json::Value> {
        Ok(self.read_session(path)?.extra)
    }

    /// The (layer, expert) entries the expert cache holds (none unless streaming).
    fn cached_experts(&self) -> Vec<[u32; 2]> {
        let cache = match &self.runner {
            Runner::Stream(d) => Some(d.provider().cache()),
            Runner::Generic(g) => Some(g.experts().cache()),
            _ => None,
        };
        cache
            .map(|c| c.resident_ids().map(|id| c.geometry().key(id)).map(|k| [k.layer, k.expert]).collect())
            .unwrap_or_default()
    }

    /// The decoder running `--engine bmoe` (what a session records: the two keep different
    /// states), None for llama.cpp.
    fn decoder_name(&self) -> Option<&'static str> {
        match self.runner {
            Runner::Resident(_) | Runner::Stream(_) => Some(DecoderKind::Native.name()),
            Runner::Generic(_) => Some(DecoderKind::Generic.name()),
            Runner::Llama(_) => None,
        }
    }

    /// What a session file names the model by: its content ([`session_file::ModelId`]).
    fn model_id(&self) -> Result<session_file::ModelId> {
        match &self.index {
            Some(i) => session_file::ModelId::of(&i.file),
            None => session_file::ModelId::of(&crate::gguf::open_model(&self.path)?),
        }
    }

    /// The tokens the context holds, in order.
    pub fn context(&self) -> &[i32] {
        &self.kv
    }

    /// Keep the first `n` tokens of the context, forget the rest (a server reusing a shared
    /// prefix, a chat going back).
    pub fn truncate(&mut self, n: usize) {
        let n = n.min(self.kv.len());
        self.forward().truncate(n as u32);
        self.kv.truncate(n);
    }

    /// Run `tokens` at the next positions of the context; the last token's logits.
    ///
    /// # Errors
    /// [`Error::ContextFull`], [`Error::BadToken`], and the engine's (a read error naming file
    /// and offset, …); after one, [`Self::reset`] before reuse.
    pub fn eval(&mut self, tokens: &[i32]) -> Result<Vec<f32>> {
        let l = self.forward().forward_last(tokens)?;
        self.kv.extend_from_slice(tokens);
        Ok(l)
    }

    /// Forget the context: the next token is at position 0 (the expert cache stays warm).
    pub fn reset(&mut self) {
        self.forward().reset();
        self.kv.clear();
    }

    /// Tokens in the context.
    pub fn n_past(&mut self) -> u32 {
        self.forward().n_past()
    }

    /// The engine's cumulative counters.
    pub fn telemetry(&mut self) -> Telemetry {
        self.forward().telemetry()
    }

    /// The lossy knobs' cumulative counters (`--drop-cold-experts`, `--route-ahead`; None when
    /// neither is set).
    pub fn lossy_counters(&self) -> Option<LossyCounters> {
        with_decoder!(&self.runner, d => d.lossy_counters(), None)
    }

    /// Bytes of our decoder's graph buffers (None for llama.cpp).
    pub fn graph_buffer_bytes(&self) -> Option<usize> {
        with_decoder!(&self.runner, d => Some(d.graph_buffer_bytes()), None)
    }

    /// The expert hosts' figures (None without `--rpc`).
    pub fn rpc(&self) -> Option<&RpcHandle> {
        self.rpc.as_ref()
    }

    /// The streaming figures for a summary (None unless streaming).
    pub fn stream_figures(&self) -> Option<StreamFigures> {
        let Mode::Streaming(s) = &self.report.mode else { return None };
        if let Runner::Generic(g) = &self.runner {
            let x = g.experts();
            return Some(StreamFigures {
                budget_mib: s.pool_bytes as f64 / MIB,
                cycle_mib: s.cycle_bytes as f64 / MIB,
                overlap: s.overlap.lookahead(),
                lookahead_off: x.lookahead().1.map(str::to_string),
                lookahead_layers: x.lookahead_layers().to_vec(),
                llama_load: s.generic.as_ref().map(|g| (g.llama_load_s, g.llama_read_bytes)),
                prefill_plan: None,
            });
        }
        let Runner::Stream(d) = &self.runner else { return None };
        Some(StreamFigures {
            budget_mib: s.pool_bytes as f64 / MIB,
            cycle_mib: s.cycle_bytes as f64 / MIB,
            overlap: s.overlap != Overlap::Off,
            lookahead_off: d.provider().lookahead().1.map(str::to_string),
            lookahead_layers: d.provider().lookahead_layers().to_vec(),
            llama_load: None,
            prefill_plan: d.prefill_plan(),
        })
    }

    /// The streamer (None unless streaming), for tools and tests.
    pub fn streamer(&self) -> Option<&StreamingExperts> {
        match &self.runner {
            Runner::Stream(d) => Some(d.provider()),
            _ => None,
        }
    }

    /// The generic decoder (None unless it runs), for tools and tests.
    pub fn generic(&self) -> Option<&GenericEngine> {
        match &self.runner {
            Runner::Generic(g) => Some(g),
            _ => None,
        }
    }

    /// The generic decoder, mutably (tests).
    pub fn generic_mut(&mut self) -> Option<&mut GenericEngine> {
        match &mut self.runner {
            Runner::Generic(g) => Some(g),
            _ => None,
        }
    }

    /// Resize the expert cache between generations (see
    /// [`StreamingExperts::set_budget_bytes`]); the budget in effect, or None if not streaming.
    pub fn set_cache_budget_bytes(&mut self, bytes: u64) -> Option<u64> {
        match &mut self.runner {
            Runner::Stream(d) => Some(d.provider_mut().set_budget_bytes(bytes)),
            _ => None,
        }
    }

    /// Decode with routing replayed from a trace (benchmark only, lossy), or with the model's
    /// router again (`None`); see [`Decoder::set_route_replay`].
    ///
    /// # Errors
    /// [`Error::Replay`] if the trace's shape differs from the model's; [`Error::Unsupported`]
    /// when llama.cpp computes.
    pub fn set_route_replay(&mut self, replay: Option<RouteReplay>) -> Result<()> {
        self.report.route_replay = replay.as_ref().map(|r| (r.source.clone(), r.len()));
        self.decoder_mut(|d| d.set_route_replay(replay))
    }

    /// Start (or stop) recording our decoder's routing.
    ///
    /// # Errors
    /// [`Error::Invalid`] when llama.cpp computes (it has no routing to record).
    pub fn record_routes(&mut self, on: bool) -> Result<()> {
        if let Runner::Generic(g) = &mut self.runner {
            g.record_routes(on);
            return Ok(());
        }
        self.decoder_mut(|d| {
            d.record(on);
            Ok(())
        })
        .map_err(|_| Error::Invalid("--route-trace records our decoder's routing: use --engine bmoe".into()))
    }

    /// The routing recorded since [`Self::record_routes`].
    pub fn take_routes(&mut self) -> Vec<LayerRoute> {
        if let Runner::Generic(g) = &mut self.runner {
            return g.take_routes();
        }
        self.decoder_mut(|d| Ok(d.take())).unwrap_or_default()
    }

    /// The `route_trace v1` header of this model (`model` as it is to be named, the top-k
    /// applied), for [`Self::take_routes`]'s rows.
    ///
    /// # Errors
    /// [`Error::Invalid`] when llama.cpp computes.
    pub fn trace_header(&self, model: &str) -> Result<TraceHeader> {
        if let Runner::Generic(g) = &self.runner {
            return Ok(g.trace_header(model));
        }
        let i =
            self.index.as_ref().filter(|_| !matches!(self.runner, Runner::Llama(_))).ok_or_else(|| {
                Error::Invalid("--route-trace records our decoder's routing: use --engine bmoe".into())
            })?;
        let sh = i.shape();
        let dense_of = |l: u32| -> u64 {
            let prefix = format!("blk.{l}.");
            i.dense.iter().map(|&t| &i.file.tensors[t]).filter(|t| t.name.starts_with(&prefix)).map(|t| t.size).sum()
        };
        Ok(TraceHeader {
            model: model.to_string(),
            arch: i.arch.name.to_string(),
            n_expert: sh.n_expert,
            n_expert_used: self.report.n_expert_used.unwrap_or(sh.n_expert_used),
            expert_bytes: i.entry_bytes(),
            dense_bytes: (0..sh.n_layer).map(dense_of).collect(),
        })
    }
}

/// What the engine does with whichever decoder it holds, whatever its provider.
trait DecoderOps {
    fn set_route_replay(&mut self, r: Option<RouteReplay>) -> Result<()>;
    fn set_lossy(&mut self, drop_cold: Option<f32>, route_ahead: Option<u32>) -> Result<()>;
    fn record(&mut self, on: bool);
    fn take(&mut self) -> Vec<LayerRoute>;
}

impl<P: ExpertProvider> DecoderOps for Decoder<P> {
    fn set_route_replay(&mut self, r: Option<RouteReplay>) -> Result<()> {
        Decoder::set_route_replay(self, r)
    }
    fn set_lossy(&mut self, drop_cold: Option<f32>, route_ahead: Option<u32>) -> Result<()> {
        self.set_drop_cold_experts(drop_cold)?;
        self.set_route_ahead(route_ahead)
    }
    fn record(&mut self, on: bool) {
        self.record_routes(on);
    }
    fn take(&mut self) -> Vec<LayerRoute> {
        self.take_routes()
    }
}

/// The session file format [`Engine::save_session`] writes.
pub const SESSION_FORMAT: &str = session_file::FORMAT;

/// The file name of a model path, as a trace header names it.
pub fn model_name(path: &Path) -> String {
    path.file_name().map_or(path.display().to_string(), |f| f.to_string_lossy().into_owned())
}

// SAFETY: every part of an Engine is owned by it alone and used through &mut self: the decoder's
// ggml contexts, thread pool and allocator carry no thread affinity (ggml keeps no per-thread
// state for them; the pool's workers are its own threads, driven from whichever thread calls
// compute), the raw pointers it holds point into memory its provider and dense source own and
// move with it, and the llama.cpp context may move between threads (it is never shared).
unsafe impl Send for Engine {}

#[cfg(test)]
mod tests {
    #[test]
    fn an_engine_can_move_to_another_thread() {
        fn send<T: Send>() {}
        send::<super::Engine>();
    }
}
