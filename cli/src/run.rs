//! `bmoe run`: generate text. Our decoder (`--engine bmoe`, the default), streaming the
//! experts from the file through the registered-pool cache (`--moe-stream`, default `auto`) or
//! resident on mmap; or plain llama.cpp on mmap (`--engine llama`, the baseline a user would
//! otherwise run) with the same tokenizer, prompt, threads and sampler, and the same timing lines.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::trace::TraceWriter;
use bmoe::engine::cache::CachePolicy;
use bmoe::engine::engine::{self, Engine, EngineBuilder, GenParams, StreamOptions};
use bmoe::engine::io::{BackendKind, EngineOptions};
use bmoe::engine::llama;
use bmoe::engine::session::{CancelToken, Control, Token};
use bmoe::engine::speculative::{read_tokens, DraftSource, SpecOptions, TOKENS_HEADER};
use bmoe::engine::stream::budget::{parse_size, CacheSize};
use bmoe::engine::telemetry::{LossyFigures, Meter, Summary, SummaryInputs, CSV_HEADER};
use serde_json::json;

use crate::guard::{Exit, Signals};
use crate::output::{Output, TextStream};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// bmoe's own decoder.
    Bmoe,
    /// Plain llama.cpp on mmap (the baseline).
    Llama,
    /// llama.cpp on mmap without its repacked weight layouts: the same ggml kernels bmoe runs
    /// (for measuring what the layouts are worth).
    LlamaPlain,
}

impl EngineArg {
    fn into_engine(self) -> engine::EngineKind {
        match self {
            EngineArg::Bmoe => engine::EngineKind::Bmoe,
            EngineArg::Llama => engine::EngineKind::Llama,
            EngineArg::LlamaPlain => engine::EngineKind::LlamaPlain,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MoeStream {
    On,
    Off,
    Auto,
}

impl MoeStream {
    fn into_engine(self) -> engine::MoeStream {
        match self {
            MoeStream::On => engine::MoeStream::On,
            MoeStream::Off => engine::MoeStream::Off,
            MoeStream::Auto => engine::MoeStream::Auto,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DecoderArg {
    Auto,
    Native,
    Generic,
}

impl DecoderArg {
    fn into_engine(self) -> engine::DecoderKind {
        match self {
            DecoderArg::Auto => engine::DecoderKind::Auto,
            DecoderArg::Native => engine::DecoderKind::Native,
            DecoderArg::Generic => engine::DecoderKind::Generic,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Overlap {
    /// Read, then compute (for A/B runs).
    Off,
    /// Per-expert pipelining and look-ahead.
    Full,
    /// Per-expert pipelining only.
    Pipeline,
    /// Look-ahead only.
    Lookahead,
}

impl Overlap {
    fn into_engine(self) -> engine::Overlap {
        match self {
            Overlap::Off => engine::Overlap::Off,
            Overlap::Full => engine::Overlap::Full,
            Overlap::Pipeline => engine::Overlap::Pipeline,
            Overlap::Lookahead => engine::Overlap::Lookahead,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DenseWeights {
    /// Dense tensors on the file's mapping, faulted in on first use.
    Mmap,
    /// On the mapping, every page read once at load.
    Warm,
    /// Read once with O_DIRECT into anonymous memory.
    Anon,
}

impl DenseWeights {
    fn into_engine(self) -> bmoe::engine::dense::DenseWeights {
        use bmoe::engine::dense::DenseWeights as D;
        match self {
            DenseWeights::Mmap => D::Mmap,
            DenseWeights::Warm => D::Warm,
            DenseWeights::Anon => D::Anon,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model (the first shard of a split model).
    #[arg(short = 'm', long, required_unless_present = "list_archs")]
    pub(crate) model: Option<PathBuf>,
    /// Print the architectures this build decodes and streams, and exit.
    #[arg(long)]
    list_archs: bool,
    /// The prompt (`-` reads it from stdin).
    #[arg(short = 'p', long, default_value = "Once upon a time", conflicts_with = "file")]
    pub(crate) prompt: String,
    /// Read the prompt from a file.
    #[arg(short = 'f', long)]
    pub(crate) file: Option<PathBuf>,
    /// Process escapes in the prompt (`\n`, `\t`, `\\`, `\"`, `\'`, `\xHH`), as llama.cpp's -e.
    #[arg(short = 'e', long = "escape")]
    pub(crate) escape: bool,
    /// Tokens to generate (-1: until an end-of-generation token or a full context; `bmoe
    /// chat`'s default). Generation also stops at an end-of-generation token.
    #[arg(short = 'n', long = "n-predict", allow_negative_numbers = true)]
    pub(crate) n_predict: Option<i64>,
    /// CPU threads (default: the physical cores).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Context length in tokens (prompt + generated).
    #[arg(short = 'c', long = "ctx-size", default_value_t = 4096)]
    pub(crate) ctx: u32,
    /// Logical batch (llama.cpp's -b): bmoe runs prompts in micro-batches of the smaller of
    /// this and --ubatch.
    #[arg(short = 'b', long = "batch-size")]
    batch: Option<u32>,
    /// Widest prefill micro-batch (llama.cpp's -ub), or `auto`: our decoder runs a prompt in
    /// the fewest equal passes of at most 2048 tokens (each pass reads a layer's routed experts
    /// once); llama.cpp keeps 512.
    #[arg(long, default_value = "auto", value_parser = parse_ubatch)]
    ubatch: Ubatch,
    /// Wrap the prompt in the model's chat template as a user turn.
    #[arg(long)]
    pub(crate) chat: bool,
    /// An interactive conversation (`bmoe chat`; llama.cpp's -cnv).
    #[arg(long, visible_alias = "interactive", short = 'i')]
    pub(crate) conversation: bool,
    /// `bmoe chat`: evaluate the whole conversation again at every turn (the KV cache dropped;
    /// `/load` then takes only the saved history, neither its KV cache nor its experts): for
    /// timing what keeping the context saves.
    #[arg(long)]
    pub(crate) no_kv_reuse: bool,
    /// A system message for the chat template (llama.cpp's -sys).
    #[arg(long = "system-prompt")]
    pub(crate) system_prompt: Option<String>,
    /// The chat template: a name llama.cpp knows (chatml, llama3, gpt-oss, …) or a file of a
    /// template's text (llama.cpp recognises it by its markers); default: the model's own.
    #[arg(long)]
    pub(crate) chat_template: Option<String>,
    /// Ask the model not to think. A harmony template (gpt-oss) gets the assistant's final
    /// channel opened (`<|channel|>final<|message|>`), so the answer starts at once; any other
    /// template (Qwen3) gets Qwen's `/no_think` switch in the user turn.
    #[arg(long)]
    pub(crate) no_think: bool,
    /// Print the prompt's tokens to stderr before generating: `prompt: N tokens: [[id, "text"],
    /// …]` (JSON; special tokens written out).
    #[arg(long)]
    pub(crate) verbose_prompt: bool,
    /// Sampling temperature; 0 = greedy.
    #[arg(long, default_value_t = 0.8)]
    temp: f32,
    /// Top-k (0 = off).
    #[arg(long, default_value_t = 40)]
    top_k: i32,
    /// Top-p (1 = off).
    #[arg(long, default_value_t = 0.95)]
    top_p: f32,
    /// Min-p (0 = off).
    #[arg(long, default_value_t = 0.05)]
    min_p: f32,
    /// Locally typical sampling (1 = off).
    #[arg(long, default_value_t = 1.0)]
    typical: f32,
    /// Penalize repeats of the last N tokens (0 = off, -1 = the context).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true)]
    repeat_last_n: i32,
    /// Repeat penalty (1 = off).
    #[arg(long, default_value_t = 1.0)]
    repeat_penalty: f32,
    /// Presence penalty (0 = off).
    #[arg(long, default_value_t = 0.0)]
    presence_penalty: f32,
    /// Frequency penalty (0 = off).
    #[arg(long, default_value_t = 0.0)]
    frequency_penalty: f32,
    /// Seed of the sampler (-1: a random one, said in the CSV preamble and with --verbose).
    #[arg(short = 's', long, allow_negative_numbers = true)]
    seed: Option<i64>,
    /// Keep generating past end-of-generation tokens (the run always lasts -n tokens).
    #[arg(long)]
    pub(crate) ignore_eos: bool,
    /// Colour the generated text when stdout is a terminal.
    #[arg(long)]
    pub(crate) color: bool,
    /// GPU layers (llama.cpp's -ngl): bmoe computes on the CPU; accepted with a warning.
    #[arg(long = "n-gpu-layers", value_name = "N")]
    n_gpu_layers: Option<String>,
    /// Flash attention (llama.cpp's -fa): bmoe's decoder always uses ggml's flash attention;
    /// accepted with a warning.
    #[arg(long, num_args = 0..=1, default_missing_value = "on", value_name = "on|off|auto")]
    flash_attn: Option<String>,
    /// Lock the model in RAM (llama.cpp's --mlock): accepted with a warning.
    #[arg(long)]
    mlock: bool,
    /// llama.cpp's --no-mmap: accepted with a warning (see --dense-weights).
    #[arg(long)]
    no_mmap: bool,
    /// llama.cpp's --numa: accepted with a warning.
    #[arg(long, num_args = 0..=1, default_missing_value = "distribute")]
    numa: Option<String>,
    /// Which engine computes.
    #[arg(long, value_enum, default_value_t = EngineArg::Bmoe)]
    engine: EngineArg,
    /// Stream experts from the file (`auto`: whenever this build can stream the architecture).
    #[arg(long, value_enum, default_value_t = MoeStream::Auto)]
    moe_stream: MoeStream,
    /// Which decoder streams: `native` (bmoe's own decoder: the architectures of --list-archs),
    /// `generic` (llama.cpp's own graph with the routed experts streamed in: any MoE architecture
    /// llama.cpp decodes), `auto` (native where this build has the architecture, else generic).
    #[arg(long, value_enum, default_value_t = DecoderArg::Auto)]
    decoder: DecoderArg,
    /// Expert cache: `auto` (from free memory), a size (MiB, or with a unit: 512K, 4096M, 2G), or
    /// 0 (no cache: one layer's experts, re-read every token). Env BMOE_CACHE_MB when the flag
    /// is absent.
    #[arg(long)]
    cache_mb: Option<String>,
    /// Memory `auto` leaves free (MiB, or with a unit) [default: 1536].
    #[arg(long)]
    cache_floor_mb: Option<String>,
    /// Upper bound of `auto` (MiB, or with a unit; 0 = none) [default: 0].
    #[arg(long)]
    cache_ceil_mb: Option<String>,
    /// Accept a `--cache-mb` that leaves less than `--cache-floor-mb` of memory free.
    #[arg(long)]
    force_cache: bool,
    /// Eviction policy of the expert cache: lru, lfu, per-layer, decay, hd [default: hd].
    #[arg(long)]
    cache_policy: Option<CachePolicy>,
    /// Reads in flight (lanes) [default: 4].
    #[arg(long)]
    io_threads: Option<usize>,
    /// Read backend: auto, uring, pread [default: auto].
    #[arg(long)]
    io_backend: Option<BackendKind>,
    /// Read through the page cache instead of O_DIRECT.
    #[arg(long)]
    no_odirect: bool,
    /// Overlap reads with compute (lossless): `full` (the default whenever streaming) =
    /// per-expert pipelining (each expert computes as soon as its bytes land) + look-ahead (each
    /// next layer's experts, predicted by its router, read while this layer computes; switches
    /// itself off when it does not pay); only `pipeline` or only `lookahead`; or `off` (read,
    /// then compute: for A/B runs).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "full")]
    overlap: Option<Overlap>,
    /// Where the dense weights live [default: anon].
    #[arg(long, value_enum)]
    dense_weights: Option<DenseWeights>,
    /// Route each token to K experts instead of the model's top-k (lossy: changes the output).
    #[arg(long)]
    n_expert_used: Option<u32>,
    /// Speculative decoding by prompt lookup: after each token, the tokens that followed the
    /// latest earlier occurrence of the context's last tokens (the prompt and the text so far)
    /// are drafted and verified in one pass of 1 + N positions, the longest agreeing prefix
    /// kept. Every row is computed as a single step would be: the text is the plain decode's,
    /// bit for bit (native decoder).
    #[arg(long, conflicts_with = "draft_replay")]
    ngram: bool,
    /// The most tokens drafted per verify pass [default: 3].
    #[arg(long, value_name = "N")]
    draft: Option<u32>,
    /// --ngram: the fewest tokens of the context's end that must match earlier to draft; below
    /// it nothing is drafted and the step is a plain one [default: 2].
    #[arg(long, value_name = "M")]
    ngram_min_match: Option<u32>,
    /// Benchmark only: speculative decoding whose drafts are a previous run's tokens
    /// (`--tokens-out`), the generated token i on drafted from the file's token i on: at a
    /// known acceptance (its own output: all of it) whatever the text.
    #[arg(long, value_name = "FILE")]
    draft_replay: Option<PathBuf>,
    /// --draft-replay: each drafted token replaced by a wrong one with probability P [default: 0].
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    draft_corrupt: Option<f64>,
    /// The skip rule of speculative decoding: verify only the drafts (and the part of each)
    /// expected to pay for the union of experts their rows read, by the acceptance measured
    /// so far and the cost of the passes (`on`); or every draft (`off`) [default: on].
    #[arg(long, value_enum, value_name = "on|off")]
    draft_skip: Option<OnOff>,
    /// Lossy: in decode, a routed expert (not the first) that is not in the expert cache (no
    /// hit, its look-ahead read not landed) and whose router weight is under F / k is skipped,
    /// the others' weights renormalised as the architecture normalises them (streaming only).
    #[arg(long, value_name = "F")]
    drop_cold_experts: Option<f32>,
    /// Lossy, experimental: in decode, each layer's experts chosen by its router on the hidden
    /// state L layers earlier (their weights by its router on its own input), so that the look-ahead
    /// reads exactly them L layers early; the share that differs from the layer's own choice
    /// is reported.
    #[arg(long, value_name = "L")]
    route_ahead: Option<u32>,
    /// Write the generated tokens' ids to this file (`# bmoe tokens v1`): drafts for
    /// --draft-replay.
    #[arg(long, value_name = "FILE")]
    tokens_out: Option<PathBuf>,
    /// Generate N times in one session (the expert cache stays warm); print and measure the last.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Record the routing of the (last) generation to this file (`route_trace v1`, replayable
    /// with `bmoe replay`).
    #[arg(long)]
    route_trace: Option<PathBuf>,
    /// Benchmark only (lossy): each decode step's experts and weights come from this recorded
    /// `route_trace v1` (e.g. ../shared/traces) instead of the router, so the reads and hits are
    /// the traced model's on a model of its shape. Refused when layers, experts or top-k differ.
    #[arg(long, value_name = "TRACE")]
    route_replay: Option<PathBuf>,
    /// Research knob for benchmarks (hidden): with --route-replay and look-ahead, look-ahead
    /// predicts each decode step's next layer from the trace with PCT % of its experts right
    /// (the others drawn at random), instead of from the model's router.
    #[arg(long, value_name = "PCT", hide = true, value_parser = percent)]
    route_replay_predict: Option<f64>,
    /// One JSON line per token on stderr (time split, bytes read, hits).
    #[arg(long)]
    progress: bool,
    /// Write the run's knobs, one row per token and a summary to this CSV file.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Print the summary as one JSON object, the last line of stdout.
    #[arg(long)]
    json: bool,
    /// Show llama.cpp's own log (model loading details).
    #[arg(long)]
    pub(crate) verbose: bool,
    #[command(flatten)]
    pub(crate) rpc: crate::rpc::RpcArgs,
}

impl Args {
    /// The streaming flags given where nothing streams (`--moe-stream off`, `--engine llama`):
    /// they would be ignored, so they are named in a warning.
    pub(crate) fn ignored_stream_flags(&self) -> Vec<&'static str> {
        let given = [
            ("--cache-mb", self.cache_mb.is_some()),
            ("--cache-floor-mb", self.cache_floor_mb.is_some()),
            ("--cache-ceil-mb", self.cache_ceil_mb.is_some()),
            ("--force-cache", self.force_cache),
            ("--cache-policy", self.cache_policy.is_some()),
            ("--io-threads", self.io_threads.is_some()),
            ("--io-backend", self.io_backend.is_some()),
            ("--no-odirect", self.no_odirect),
            ("--overlap", self.overlap.is_some()),
            ("--dense-weights", self.dense_weights.is_some()),
        ];
        given.into_iter().filter(|g| g.1).map(|g| g.0).collect()
    }

    /// The flags as an engine builder: the CLI decides nothing about how the engine is
    /// assembled, it only translates.
    pub(crate) fn builder(&self, model: &std::path::Path) -> anyhow::Result<EngineBuilder> {
        let cache = match self.cache_mb.clone().or_else(|| std::env::var("BMOE_CACHE_MB").ok()) {
            Some(spec) => spec.parse::<CacheSize>()?,
            None => CacheSize::Auto,
        };
        let size = |flag: &str, v: &Option<String>, default: u64| match v {
            Some(s) => parse_size(flag, s),
            None => Ok(default),
        };
        let ceiling = size("--cache-ceil-mb", &self.cache_ceil_mb, 0)?;
        let stream = StreamOptions {
            cache,
            floor_bytes: size("--cache-floor-mb", &self.cache_floor_mb, 1536 << 20)?,
            ceiling_bytes: (ceiling > 0).then_some(ceiling),
            force: self.force_cache,
            policy: self.cache_policy.unwrap_or(CachePolicy::DEFAULT),
            io: EngineOptions {
                backend: self.io_backend.unwrap_or_default(),
                lanes: self.io_threads.unwrap_or(4),
                register: true,
                direct: !self.no_odirect,
            },
            overlap: self.overlap.map_or(engine::Overlap::Full, Overlap::into_engine),
        };
        let b = Engine::builder(model)
            .engine(self.engine.into_engine())
            .moe_stream(self.moe_stream.into_engine())
            .decoder(self.decoder.into_engine())
            .stream(stream)
            .dense(self.dense_weights.unwrap_or(DenseWeights::Anon).into_engine())
            .context(self.ctx);
        let b = match (self.ubatch.0, self.batch) {
            (None, None) => b.ubatch_auto(),
            (u, batch) => b.ubatch(batch.map_or(u.unwrap_or(512), |n| n.min(u.unwrap_or(n)))),
        };
        let mut b = b
            .n_expert_used(self.n_expert_used)
            .route_replay(self.route_replay.clone())
            .route_replay_prediction(self.route_replay_predict.map(|p| p / 100.0))
            .rpc(self.rpc.options()?)
            .speculative(self.spec_options()?)
            .drop_cold_experts(self.drop_cold_experts)
            .route_ahead(self.route_ahead);
        if let Some(t) = self.threads {
            b = b.threads(t);
        }
        Ok(b)
    }

    /// Speculative decoding as the flags ask for it (None when no draft source is given).
    pub(crate) fn spec_options(&self) -> anyhow::Result<Option<SpecOptions>> {
        let source = match (self.ngram, &self.draft_replay) {
            (true, _) => DraftSource::Ngram { min_match: self.ngram_min_match.unwrap_or(2) },
            (false, Some(path)) => DraftSource::Replay {
                tokens: read_tokens(path).with_context(|| format!("--draft-replay {}", path.display()))?,
                corrupt: self.draft_corrupt.unwrap_or(0.0),
                source: path.display().to_string(),
            },
            (false, None) => {
                let given = [
                    ("--draft", self.draft.is_some()),
                    ("--ngram-min-match", self.ngram_min_match.is_some()),
                    ("--draft-corrupt", self.draft_corrupt.is_some()),
                    ("--draft-skip", self.draft_skip.is_some()),
                ];
                if let Some((flag, _)) = given.iter().find(|g| g.1) {
                    bail!(
                        "{flag} is a knob of speculative decoding: give a draft source, --ngram or --draft-replay FILE"
                    );
                }
                return Ok(None);
            }
        };
        if self.ngram_min_match.is_some() && !self.ngram {
            bail!("--ngram-min-match is prompt lookup's (--ngram)");
        }
        if self.draft_corrupt.is_some() && self.draft_replay.is_none() {
            bail!("--draft-corrupt corrupts replayed drafts (--draft-replay FILE)");
        }
        Ok(Some(SpecOptions {
            source,
            n_draft: self.draft.unwrap_or(3),
            skip_rule: self.draft_skip != Some(OnOff::Off),
            exact: true,
        }))
    }

    /// The sampler, as llama.cpp's chain with these flags (a random seed when none is given,
    /// drawn here so that it can be reported).
    pub(crate) fn sampling(&self) -> llama::Sampling {
        let seed = match self.seed {
            Some(s) if s >= 0 => s as u32,
            _ => *RANDOM_SEED.get_or_init(|| {
                let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                (t.as_nanos() as u32) ^ std::process::id().rotate_left(16)
            }),
        };
        llama::Sampling {
            temp: self.temp,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            typ_p: self.typical,
            repeat_last_n: if self.repeat_last_n < 0 { self.ctx as i32 } else { self.repeat_last_n },
            repeat_penalty: self.repeat_penalty,
            frequency_penalty: self.frequency_penalty,
            presence_penalty: self.presence_penalty,
            seed,
        }
    }

    /// Check the sampler's flags.
    pub(crate) fn check_sampling(&self) -> anyhow::Result<()> {
        self.sampling().check().map_err(anyhow::Error::msg)
    }

    /// One warning line per flag that means nothing on a CPU-only streaming engine (llama.cpp
    /// users' habits), saying what bmoe does instead.
    pub(crate) fn warn_cpu_irrelevant(&self) {
        if self.n_gpu_layers.is_some() {
            eprintln!("warning: -ngl ignored: bmoe computes on the CPU; experts stream from flash (--moe-stream)");
        }
        if self.flash_attn.is_some() {
            eprintln!("warning: -fa ignored: bmoe's decoder always uses ggml's flash attention");
        }
        if self.mlock {
            eprintln!(
                "warning: --mlock ignored: the expert cache is one pool allocated at open, and the dense weights \
                 are read into anonymous memory (--dense-weights anon), which the kernel does not drop"
            );
        }
        if self.no_mmap {
            eprintln!(
                "warning: --no-mmap ignored: the dense weights are read into memory by default (--dense-weights \
                 anon); --dense-weights mmap maps them"
            );
        }
        if self.numa.is_some() {
            eprintln!("warning: --numa ignored: bmoe does not place memory by NUMA node");
        }
    }

    /// The tokens to generate: -n, or until the end (`-1`, or absent for `chat`).
    pub(crate) fn n_tokens(&self, default: usize) -> usize {
        match self.n_predict {
            Some(n) if n >= 0 => n as usize,
            Some(_) => usize::MAX,
            None => default,
        }
    }

    /// The prompt: `-p` (`-` reads stdin) or `-f FILE`, with `-e`'s escapes.
    pub(crate) fn prompt_text(&self) -> anyhow::Result<String> {
        let text = match (&self.file, self.prompt.as_str()) {
            (Some(f), _) => std::fs::read_to_string(f).with_context(|| format!("-f {}", f.display()))?,
            (None, "-") => std::io::read_to_string(std::io::stdin()).context("-p -: reading the prompt from stdin")?,
            (None, p) => p.to_string(),
        };
        Ok(if self.escape { process_escapes(&text) } else { text })
    }
}

/// The seed drawn for a run without one.
static RANDOM_SEED: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// llama.cpp's `string_process_escapes`: `\n \r \t \' \" \\ \xHH`; anything else stays.
/// `--ubatch`: `auto` (None) or a count of tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ubatch(Option<u32>);

fn parse_ubatch(s: &str) -> Result<Ubatch, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(Ubatch(None));
    }
    match s.trim().parse::<u32>() {
        Ok(n) => Ok(Ubatch(Some(n))),
        Err(_) => Err(format!("--ubatch `{s}`: a number of tokens, or auto")),
    }
}

pub(crate) fn process_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('x') => {
                let hex: String = it.clone().take(2).take_while(char::is_ascii_hexdigit).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(b) if hex.len() == 2 && b < 0x80 => {
                        it.next();
                        it.next();
                        out.push(b as char);
                    }
                    _ => out.push_str("\\x"),
                }
            }
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Open the engine the flags describe, cancellable by `signals`, and say how it runs (the mode
/// line, the builder's warnings, the streaming flags nothing uses).
///
/// # Errors
/// The builder's; [`Exit`] when a signal came while it opened.
pub(crate) fn open(args: &Args, model: &std::path::Path, signals: &Signals) -> anyhow::Result<Engine> {
    let bar = std::sync::Arc::new(crate::progress::Bar::bytes("dense weights"));
    let b = bar.clone();
    let progress = engine::LoadProgress(std::sync::Arc::new(move |done, total| b.set(done, total)));
    let engine = args.builder(model)?.cancel(signals.cancel.clone()).progress(progress).open();
    drop(bar);
    let engine = engine?;
    let report = engine.report();
    eprintln!("{}", report.mode_line());
    if let Some(h) = engine.rpc() {
        for line in crate::rpc::start_lines(&h.snapshot()) {
            eprintln!("{line}");
        }
    }
    for w in &report.warnings {
        eprintln!("{w}");
    }
    if !matches!(report.mode, engine::Mode::Streaming(_)) {
        let ignored = args.ignored_stream_flags();
        if !ignored.is_empty() {
            eprintln!("warning: {} ignored: nothing streams in this mode", ignored.join(", "));
        }
    }
    if signals.cancel.is_cancelled() {
        return Err(Exit(signals.exit_code()).into());
    }
    Ok(engine)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    args.check_sampling()?;
    if args.list_archs {
        print!("{}", list_archs());
        return Ok(());
    }
    if args.conversation {
        return crate::chat::run(args);
    }
    args.warn_cpu_irrelevant();
    let model_path = args.model.clone().context("-m MODEL is required")?;
    llama::set_verbose(args.verbose);
    let model_name = model_path.display().to_string();
    // Ctrl-C and SIGTERM stop the generation between steps from here on.
    let signals = Signals::install(CancelToken::default()).context("installing the signal handlers")?;
    if args.route_trace.is_some() && (args.ngram || args.draft_replay.is_some()) {
        bail!("--route-trace records single-token decode steps: not with speculative decoding's verify passes");
    }
    // Every output is checked and created before the model loads: a bad path fails now, and no
    // path may be one of the model's own files.
    let model_files = bmoe::engine::gguf::model_files(&model_path);
    let mut csv = args.csv.as_deref().map(|p| Output::create("--csv", p, &model_files)).transpose()?;
    let trace_out =
        args.route_trace.as_deref().map(|p| Output::create("--route-trace", p, &model_files)).transpose()?;
    let tokens_out = args.tokens_out.as_deref().map(|p| Output::create("--tokens-out", p, &model_files)).transpose()?;
    let mut engine = open(&args, &model_path, &signals)?;
    let report = engine.report().clone();
    let trace_header = match &args.route_trace {
        Some(_) => Some(engine.trace_header(&bmoe::engine::engine::model_name(&model_path))?),
        None => None,
    };
    let lm = engine.tokenizer();
    let user = args.prompt_text()?;
    let text = if args.chat {
        crate::chat::Template::new(lm, args.chat_template.as_deref())?.single_turn(
            args.system_prompt.as_deref(),
            &user,
            args.no_think,
        )?
    } else {
        user
    };
    let prompt = lm.tokenize(&text, true)?;
    if args.verbose_prompt {
        let shown: Vec<(i32, String)> = prompt.iter().map(|&t| (t, lm.token_text(t))).collect();
        eprintln!("prompt: {} tokens: {}", prompt.len(), json!(shown));
    }
    if prompt.is_empty() {
        bail!("the prompt tokenizes to nothing");
    }
    if prompt.len() >= args.ctx as usize {
        bail!("the prompt ({} tokens) and one generated token exceed the context of {} (-c)", prompt.len(), args.ctx);
    }
    let n_vocab = lm.n_vocab();
    let n_predict = args.n_tokens(64);
    let mut sampler = llama::Sampler::new(args.sampling(), n_vocab)?;
    // The prompt's tokens count for the penalties, as in llama-cli.
    if args.sampling().penalizes() {
        prompt.iter().for_each(|&t| sampler.accept(t));
    }
    let (head, tail) = report.knobs();
    let mut knobs = head;
    knobs.extend([
        ("n_predict", if n_predict == usize::MAX { "-1".into() } else { n_predict.to_string() }),
        ("ignore_eos", args.ignore_eos.to_string()),
        ("chat", args.chat.to_string()),
        ("temp", args.temp.to_string()),
        ("top_k", args.top_k.to_string()),
        ("top_p", args.top_p.to_string()),
        ("min_p", args.min_p.to_string()),
        ("repeat_penalty", format!("{} (last {})", args.repeat_penalty, args.sampling().repeat_last_n)),
        ("presence_penalty", args.presence_penalty.to_string()),
        ("frequency_penalty", args.frequency_penalty.to_string()),
        ("seed", format!("{}{}", args.sampling().seed, if args.seed.is_none_or(|s| s < 0) { " (random)" } else { "" })),
        ("rpc", args.rpc.knob()),
    ]);
    knobs.extend(tail);

    if let Some(o) = csv.as_mut() {
        let f = o.writer();
        let info = bmoe::build_info();
        writeln!(f, "# bmoe {} git {}", info.version, info.git_rev)?;
        writeln!(f, "# model {model_name}")?;
        for (k, v) in &knobs {
            writeln!(f, "# {k} {v}")?;
        }
        writeln!(f, "# prompt_tokens {}", prompt.len())?;
        writeln!(f, "{CSV_HEADER}")?;
    }

    // `--repeat N`: the same generation N times in one session (the expert cache stays warm);
    // the earlier ones are silent, the last is printed and measured.
    for _ in 1..args.repeat {
        let mut warm = llama::Sampler::new(args.sampling(), n_vocab)?;
        let params = GenParams { n_predict, ignore_eos: args.ignore_eos };
        engine
            .generate(&prompt, &params, &mut |l| warm.sample(l), &mut |_| Control::Continue)
            .with_context(|| format!("generating with {model_name}"))?;
    }
    if trace_header.is_some() {
        engine.record_routes(true)?;
    }
    let vocab = engine.tokenizer().clone();
    let mut out = std::io::stdout().lock();
    let mut text = TextStream::default();
    let mut io_error: Option<std::io::Error> = None;
    let mut meter = Meter::start(engine.telemetry());
    let rpc = engine.rpc().cloned();
    let rpc_start = rpc.as_ref().map(|h| h.snapshot());
    let lossy_start = engine.lossy_counters();
    let params = GenParams { n_predict, ignore_eos: args.ignore_eos };
    let color = args.color && std::io::IsTerminal::is_terminal(&std::io::stdout());
    if color {
        out.write_all(b"\x1b[32m")?;
    }
    engine.reset();
    let bar = crate::progress::Bar::tokens("prefill");
    let mut on_prefill = |done: usize, total: usize| bar.set(done as u64, total as u64);
    let gen = engine.generate_from(
        &prompt,
        &params,
        &mut |l| sampler.sample(l),
        &mut |t: Token| {
            if let Err(e) = text.push(&mut out, &vocab.piece(t.id)) {
                io_error = Some(e);
                return Control::Stop;
            }
            let row = meter.token(&t);
            let phase = if t.index == 0 { "prefill" } else { "decode" };
            if args.progress {
                let mut j = row.json(t.index, phase);
                if let Some(h) = &rpc {
                    j["rpc"] = bmoe::engine::telemetry::rpc_step_json(&h.snapshot());
                }
                eprintln!("{j}");
            }
            if let Some(f) = csv.as_mut() {
                if let Err(e) = writeln!(f.writer(), "{}", row.csv(t.index, phase)) {
                    io_error = Some(e);
                    return Control::Stop;
                }
            }
            Control::Continue
        },
        &mut on_prefill,
    );
    drop(bar);
    let gen = gen.with_context(|| format!("generating with {model_name}"))?;
    if let Some(e) = io_error {
        return Err(e.into());
    }
    text.finish(&mut out)?;
    if color {
        out.write_all(b"\x1b[0m")?;
    }
    writeln!(out)?;
    let end = engine.telemetry();
    eprintln!("{}", report.load_line());
    let figures = engine.stream_figures();
    let mut summary = Summary::new(SummaryInputs {
        generation: &gen,
        meter: &meter,
        end: &end,
        threads: report.threads,
        graph_bytes: engine.graph_buffer_bytes(),
        stream: figures.as_ref(),
        load_s: Some(report.load_s),
        lossy: lossy_figures(&report, lossy_start, engine.lossy_counters()),
    });
    if let (Some(h), Some(start)) = (&rpc, &rpc_start) {
        summary.add_rpc(start, &h.snapshot());
    }
    for line in &summary.lines {
        eprintln!("{line}");
    }
    if let (Some(h), Some(mut out)) = (&trace_header, trace_out) {
        let routes = engine.take_routes();
        let mut w = TraceWriter::new(out.writer(), h)?;
        let mut rows = 0usize;
        for row in routes.iter().flat_map(|r| r.rows()) {
            w.write_row(&row)?;
            rows += 1;
        }
        w.finish()?;
        out.commit()?;
        eprintln!("route trace: {rows} rows written to {}", args.route_trace.as_ref().expect("given").display());
    }
    if let Some(mut o) = tokens_out {
        let w = o.writer();
        writeln!(w, "{TOKENS_HEADER}")?;
        writeln!(w, "# model {model_name}")?;
        writeln!(w, "# prompt_tokens {}", prompt.len())?;
        for line in gen.tokens.chunks(32) {
            writeln!(w, "{}", line.iter().map(i32::to_string).collect::<Vec<_>>().join(" "))?;
        }
        o.commit()?;
    }
    if let Some(mut o) = csv {
        writeln!(o.writer(), "{}", summary.csv_line())?;
        o.commit()?;
    }
    if args.json {
        writeln!(out, "{}", summary.json_line())?;
    }
    if gen.cancelled() {
        return Err(Exit(signals.exit_code()).into());
    }
    Ok(())
}

/// The lossy knobs' figures of a generation (None when neither is set): their counters
/// between `start` and `end`.
pub(crate) fn lossy_figures(
    report: &engine::Report,
    start: Option<bmoe::engine::decoder::LossyCounters>,
    end: Option<bmoe::engine::decoder::LossyCounters>,
) -> Option<LossyFigures> {
    let end = end?;
    Some(LossyFigures {
        drop_cold: report.drop_cold,
        route_ahead: report.route_ahead,
        counters: end - start.unwrap_or_default(),
    })
}

/// The `--list-archs` table: every MoE architecture the vendored llama.cpp knows, and how this
/// build streams it: our native decoder, or llama.cpp's own graph (generic) with a synthetic
/// model and gates here, or generic and untested here.
fn list_archs() -> String {
    use bmoe::engine::arch::{llama_moe, GENERIC_ARCHS};
    use std::fmt::Write as _;
    let synth_line = |name: &str| {
        let presets: Vec<&str> = bmoe::engine::synth::presets()
            .into_iter()
            .filter(|p| bmoe::engine::synth::preset_arch(p).is_none_or(|x| x == name))
            .collect();
        format!("bmoe synth --arch {name} --shape {}", presets.join("|"))
    };
    let mut out = String::from(
        "native: bmoe's own decoder (bit-equal to llama.cpp; per-expert pipelining, look-ahead), streamed; \
         the generic decoder (llama.cpp's own graph, the routed experts streamed in) is gated on these too:\n",
    );
    for a in bmoe::engine::model::ARCHS {
        let _ = writeln!(out, "{}", a.name);
        let _ = writeln!(out, "  decoder: native (--decoder generic: gated too)");
        let _ = writeln!(out, "  models:  {}", a.models);
        let _ = writeln!(out, "  decodes: {}", a.decodes);
        let _ = writeln!(out, "  streams: {}", a.streams);
        let _ = writeln!(out, "  synth:   {}", synth_line(a.name));
    }
    out.push_str(
        "\ngeneric (gated): llama.cpp's own graph with the routed experts streamed in; a synthetic model \
         and the generic gates (streamed == llama.cpp resident, bit for bit) exist here:\n",
    );
    if GENERIC_ARCHS.is_empty() {
        out.push_str("  (none in this build)\n");
    }
    for a in GENERIC_ARCHS {
        let _ = writeln!(out, "{}", a.name);
        let _ = writeln!(out, "  decoder: generic (gated)");
        let _ = writeln!(out, "  models:  {}", a.models);
        let _ = writeln!(out, "  synth:   {}", synth_line(a.name));
    }
    let known = |n: &str| bmoe::engine::arch::spec(n).is_some() || GENERIC_ARCHS.iter().any(|a| a.name == n);
    let untested: Vec<&str> = llama_moe::LLAMA_MOE_ARCHS.iter().copied().filter(|n| !known(n)).collect();
    let _ = writeln!(
        out,
        "\ngeneric (untested): the vendored llama.cpp decodes these MoE architectures and the generic decoder \
         streams them, but no synthetic model or gate of them exists here (a run says so in one warning line; \
         some are MoE only when the file has experts):\n  {}",
        untested.join(" ")
    );
    let _ = writeln!(
        out,
        "\nany other architecture (dense, or encoders: {}): `mode: architecture not streamable by this build`, run by \
         llama.cpp on mmap (--moe-stream auto), or pass --engine llama",
        llama_moe::ENCODERS.join(", ")
    );
    out
}

/// A percentage, 0 to 100.
fn percent(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("`{s}`: a percentage from 0 to 100")),
    }
}
