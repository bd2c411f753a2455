//! `bmoe run`: generate text. Our decoder (`--engine bmoe`, the default), streaming the
//! experts from the file through the registered-pool cache (`--moe-stream`, default `auto`) or
//! resident on mmap; or plain llama.cpp on mmap (`--engine llama`, the baseline a user would
//! otherwise run) with the same tokenizer, prompt, threads and sampler, and the same timing lines.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::trace::{RouteRow, TraceWriter};
use bmoe::engine::cache::{CachePolicy, Phase};
use bmoe::engine::engine::{self, Engine, EngineBuilder, GenParams, StreamOptions};
use bmoe::engine::io::{BackendKind, EngineOptions};
use bmoe::engine::llama;
use bmoe::engine::session::{CancelToken, Control, Token};
use bmoe::engine::stream::budget::{parse_size, CacheSize};
use bmoe::engine::telemetry::{Meter, Summary, SummaryInputs, CSV_HEADER};
use serde_json::json;

use crate::guard::{Exit, Signals};
use crate::output::Output;

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
pub enum Overlap {
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
            Overlap::Full => engine::Overlap::Full,
            Overlap::Pipeline => engine::Overlap::Pipeline,
            Overlap::Lookahead => engine::Overlap::Lookahead,
        }
    }
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
    model: Option<PathBuf>,
    /// Print the architectures this build decodes and streams, and exit.
    #[arg(long)]
    list_archs: bool,
    /// The prompt.
    #[arg(short = 'p', long, default_value = "Once upon a time")]
    prompt: String,
    /// Tokens to generate (generation also stops at an end-of-generation token).
    #[arg(short = 'n', long = "n-predict", default_value_t = 64)]
    n_predict: usize,
    /// CPU threads (default: all cores).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Context length in tokens (prompt + generated).
    #[arg(short = 'c', long = "ctx-size", default_value_t = 4096)]
    ctx: u32,
    /// Widest prefill micro-batch.
    #[arg(long, default_value_t = 512)]
    ubatch: u32,
    /// Wrap the prompt in the model's chat template as a user turn.
    #[arg(long)]
    chat: bool,
    /// With --chat: ask the model not to think. A harmony template (gpt-oss) gets the
    /// assistant's final channel opened (`<|channel|>final<|message|>`), so the answer starts
    /// at once; any other template (Qwen3) gets Qwen's `/no_think` switch in the user turn.
    #[arg(long, requires = "chat")]
    no_think: bool,
    /// Print the prompt's tokens to stderr before generating: `prompt: N tokens: [[id, "text"],
    /// …]` (JSON; special tokens written out).
    #[arg(long)]
    verbose_prompt: bool,
    /// Sampling temperature; 0 = greedy (the default).
    #[arg(long, default_value_t = 0.0)]
    temp: f32,
    /// Top-k when sampling (0 = off).
    #[arg(long, default_value_t = 40)]
    top_k: i32,
    /// Top-p when sampling (1 = off).
    #[arg(long, default_value_t = 0.95)]
    top_p: f32,
    /// Seed of the sampler.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Which engine computes.
    #[arg(long, value_enum, default_value_t = EngineArg::Bmoe)]
    engine: EngineArg,
    /// Stream experts from the file (`auto`: whenever this build can stream the architecture).
    #[arg(long, value_enum, default_value_t = MoeStream::Auto)]
    moe_stream: MoeStream,
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
    /// Overlap reads with compute (lossless): `full` (the default when the flag is given) =
    /// per-expert pipelining (each expert computes as soon as its bytes land) + look-ahead (each
    /// next layer's experts, predicted by its router, read while this layer computes; switches
    /// itself off when it does not pay); or only `pipeline` or only `lookahead`.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "full")]
    overlap: Option<Overlap>,
    /// Where the dense weights live [default: anon].
    #[arg(long, value_enum)]
    dense_weights: Option<DenseWeights>,
    /// Route each token to K experts instead of the model's top-k (lossy: changes the output).
    #[arg(long)]
    n_expert_used: Option<u32>,
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
    verbose: bool,
}

impl Args {
    /// The streaming flags given where nothing streams (`--moe-stream off`, `--engine llama`):
    /// they would be ignored, so they are named in a warning.
    fn ignored_stream_flags(&self) -> Vec<&'static str> {
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
    fn builder(&self, model: &std::path::Path) -> anyhow::Result<EngineBuilder> {
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
                lanes: self.io_threads.unwrap_or(4).max(1),
                register: true,
                direct: !self.no_odirect,
            },
            overlap: self.overlap.map_or(engine::Overlap::Off, Overlap::into_engine),
        };
        let mut b = Engine::builder(model)
            .engine(self.engine.into_engine())
            .moe_stream(self.moe_stream.into_engine())
            .stream(stream)
            .dense(self.dense_weights.unwrap_or(DenseWeights::Anon).into_engine())
            .context(self.ctx)
            .ubatch(self.ubatch)
            .n_expert_used(self.n_expert_used)
            .route_replay(self.route_replay.clone());
        if let Some(t) = self.threads {
            b = b.threads(t);
        }
        Ok(b)
    }

    fn sampling(&self) -> llama::Sampling {
        llama::Sampling { temp: self.temp, top_k: self.top_k, top_p: self.top_p, seed: self.seed }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if !(args.temp >= 0.0 && args.top_p > 0.0 && args.top_p <= 1.0 && args.top_k >= 0) {
        bail!("--temp must be >= 0, --top-p in (0, 1], --top-k >= 0");
    }
    if args.list_archs {
        print!("{}", list_archs());
        return Ok(());
    }
    let model_path = args.model.clone().context("-m MODEL is required")?;
    llama::set_verbose(args.verbose);
    let model_name = model_path.display().to_string();
    // Ctrl-C and SIGTERM stop the generation between steps from here on.
    let signals = Signals::install(CancelToken::default()).context("installing the signal handlers")?;
    // Every output is checked and created before the model loads: a bad path fails now, and no
    // path may be one of the model's own files.
    let model_files = bmoe::engine::gguf::model_files(&model_path);
    let mut csv = args.csv.as_deref().map(|p| Output::create("--csv", p, &model_files)).transpose()?;
    let trace_out =
        args.route_trace.as_deref().map(|p| Output::create("--route-trace", p, &model_files)).transpose()?;
    let builder = args.builder(&model_path)?.cancel(signals.cancel.clone());
    let mut engine = builder.open()?;
    let report = engine.report().clone();
    eprintln!("{}", report.mode_line());
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
    let trace_header = match &args.route_trace {
        Some(_) => Some(engine.trace_header(&bmoe::engine::engine::model_name(&model_path))?),
        None => None,
    };
    let lm = engine.tokenizer();
    let text = if args.chat { chat_prompt(lm, &args.prompt, args.no_think)? } else { args.prompt.clone() };
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
    let mut sampler = llama::Sampler::new(args.sampling())?;
    let (head, tail) = report.knobs();
    let mut knobs = head;
    knobs.extend([
        ("n_predict", args.n_predict.to_string()),
        ("chat", args.chat.to_string()),
        ("temp", args.temp.to_string()),
        ("top_k", args.top_k.to_string()),
        ("top_p", args.top_p.to_string()),
        ("seed", args.seed.to_string()),
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
        let mut warm = llama::Sampler::new(args.sampling())?;
        engine
            .generate(&prompt, &GenParams::new(args.n_predict), &mut |l| warm.sample(l), &mut |_| Control::Continue)
            .with_context(|| format!("generating with {model_name}"))?;
    }
    if trace_header.is_some() {
        engine.record_routes(true)?;
    }
    let vocab = engine.tokenizer().clone();
    let mut out = std::io::stdout().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut io_error: Option<std::io::Error> = None;
    let mut meter = Meter::start(engine.telemetry());
    let params = GenParams::new(args.n_predict);
    let gen = engine.generate(&prompt, &params, &mut |l| sampler.sample(l), &mut |t: Token| {
        pending.extend(vocab.piece(t.id));
        // Print whole UTF-8 characters only; a multi-byte character may span tokens.
        let valid = match std::str::from_utf8(&pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        if let Err(e) = out.write_all(&pending[..valid]).and_then(|()| out.flush()) {
            io_error = Some(e);
            return Control::Stop;
        }
        pending.drain(..valid);
        let row = meter.token(&t);
        let phase = if t.index == 0 { "prefill" } else { "decode" };
        if args.progress {
            eprintln!("{}", row.json(t.index, phase));
        }
        if let Some(f) = csv.as_mut() {
            if let Err(e) = writeln!(f.writer(), "{}", row.csv(t.index, phase)) {
                io_error = Some(e);
                return Control::Stop;
            }
        }
        Control::Continue
    });
    let gen = gen.with_context(|| format!("generating with {model_name}"))?;
    if let Some(e) = io_error {
        return Err(e.into());
    }
    out.write_all(&pending)?;
    writeln!(out)?;
    let end = engine.telemetry();
    eprintln!("load: {:.2} s", report.load_s);
    let figures = engine.stream_figures();
    let summary = Summary::new(SummaryInputs {
        generation: &gen,
        meter: &meter,
        end: &end,
        threads: report.threads,
        graph_bytes: engine.graph_buffer_bytes(),
        stream: figures.as_ref(),
    });
    for line in &summary.lines {
        eprintln!("{line}");
    }
    if let (Some(h), Some(mut out)) = (&trace_header, trace_out) {
        let routes = engine.take_routes();
        let mut w = TraceWriter::new(out.writer(), h)?;
        let mut rows = 0usize;
        for r in &routes {
            for &(expert, slot, weight) in &r.experts {
                w.write_row(&RouteRow {
                    turn: 0,
                    phase: if r.prefill { Phase::Prefill } else { Phase::Decode },
                    step: r.step,
                    layer: r.layer,
                    slot,
                    expert,
                    weight,
                    residency: false,
                    expert_bytes: 0,
                })?;
                rows += 1;
            }
        }
        w.finish()?;
        out.commit()?;
        eprintln!("route trace: {rows} rows written to {}", args.route_trace.as_ref().expect("given").display());
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

/// How a harmony template (llama.cpp's `gpt-oss`, OPENAI_MOE) opens the assistant's turn.
const HARMONY_ASSISTANT: &str = "<|start|>assistant";
/// What `--no-think` appends after it: the final channel, so the model answers without first
/// writing in its analysis channel.
const HARMONY_FINAL: &str = "<|channel|>final<|message|>";

/// `user` in the model's chat template as one user turn with the assistant's turn open;
/// with `no_think`, the switch the template's family knows (see `--no-think`).
fn chat_prompt(lm: &llama::Model, user: &str, no_think: bool) -> anyhow::Result<String> {
    let text = lm.chat(user)?;
    Ok(match no_think {
        false => text,
        true if text.ends_with(HARMONY_ASSISTANT) => text + HARMONY_FINAL,
        true => lm.chat(&format!("{user} /no_think"))?,
    })
}

/// The `--list-archs` table: what this build decodes with its own decoder and streams.
fn list_archs() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "architectures this build decodes (bmoe decoder, bit-equal to llama.cpp) and streams \
         (experts read from the file into the cache):\n",
    );
    for a in bmoe::engine::model::ARCHS {
        let presets: Vec<&str> = bmoe::engine::synth::presets()
            .into_iter()
            .filter(|p| bmoe::engine::synth::preset_arch(p).is_none_or(|x| x == a.name))
            .collect();
        let _ = writeln!(out, "{}", a.name);
        let _ = writeln!(out, "  models:  {}", a.models);
        let _ = writeln!(out, "  decodes: {}", a.decodes);
        let _ = writeln!(out, "  streams: {}", a.streams);
        let _ = writeln!(out, "  synth:   bmoe synth --arch {} --shape {}", a.name, presets.join("|"));
    }
    out.push_str(
        "any other architecture: `mode: architecture not streamable by this build`, run by llama.cpp on mmap \
         (--moe-stream auto), or pass --engine llama\n",
    );
    out
}
