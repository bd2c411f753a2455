//! `bmoe run`: generate text. Our decoder (`--engine bmoe`, the default), streaming the
//! experts from the file through the registered-pool cache (`--moe-stream`, default `auto`) or
//! resident on mmap; or plain llama.cpp on mmap (`--engine llama`, the baseline a user would
//! otherwise run) with the same tokenizer, prompt, threads and sampler, and the same timing lines.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::trace::{RouteRow, RouteTrace, TraceHeader, TraceWriter};
use bmoe::engine::cache::{CachePolicy, Phase};
use bmoe::engine::decoder::{Decoder, DenseSource, Mapping, Options, ResidentExperts, RouteReplay};
use bmoe::engine::llama;
use bmoe::engine::model::ModelIndex;
use bmoe::engine::session::{generate, CancelToken, Control, Forward, Telemetry, Token};
use bmoe::engine::stream::{AnonDense, StreamOptions, StreamingExperts};
use bmoe::io::{BackendKind, EngineOptions};
use serde_json::json;

const MIB: f64 = (1u64 << 20) as f64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// bmoe's own decoder.
    Bmoe,
    /// Plain llama.cpp on mmap (the baseline).
    Llama,
    /// llama.cpp on mmap without its repacked weight layouts: the same ggml kernels bmoe runs
    /// (for measuring what the layouts are worth).
    LlamaPlain,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MoeStream {
    On,
    Off,
    Auto,
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
    fn lookahead(o: Option<Self>) -> bool {
        matches!(o, Some(Overlap::Full | Overlap::Lookahead))
    }

    fn pipeline(o: Option<Self>) -> bool {
        matches!(o, Some(Overlap::Full | Overlap::Pipeline))
    }

    fn describe(o: Option<Self>) -> &'static str {
        match o {
            None => "off",
            Some(Overlap::Full) => "on (per-expert pipelining + look-ahead)",
            Some(Overlap::Pipeline) => "on (per-expert pipelining)",
            Some(Overlap::Lookahead) => "on (look-ahead)",
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
    #[arg(long, value_enum, default_value_t = Engine::Bmoe)]
    engine: Engine,
    /// Stream experts from the file (`auto`: whenever this build can stream the architecture).
    #[arg(long, value_enum, default_value_t = MoeStream::Auto)]
    moe_stream: MoeStream,
    /// Expert cache: `auto` (from free memory), a size in MiB, or 0 (no cache: one layer's
    /// experts, re-read every token). Env BMOE_CACHE_MB when the flag is absent.
    #[arg(long)]
    cache_mb: Option<String>,
    /// Memory `auto` leaves free (MiB).
    #[arg(long, default_value_t = 1536)]
    cache_floor_mb: u64,
    /// Upper bound of `auto` (MiB; 0 = none).
    #[arg(long, default_value_t = 0)]
    cache_ceil_mb: u64,
    /// Accept a `--cache-mb` that leaves less than `--cache-floor-mb` of memory free.
    #[arg(long)]
    force_cache: bool,
    /// Eviction policy of the expert cache.
    #[arg(long, default_value_t = CachePolicy::DEFAULT)]
    cache_policy: CachePolicy,
    /// Reads in flight (lanes).
    #[arg(long, default_value_t = 4)]
    io_threads: usize,
    /// Read backend.
    #[arg(long, default_value = "auto")]
    io_backend: BackendKind,
    /// Read through the page cache instead of O_DIRECT.
    #[arg(long)]
    no_odirect: bool,
    /// Overlap reads with compute (lossless): `full` (the default when the flag is given) =
    /// per-expert pipelining (each expert computes as soon as its bytes land) + look-ahead (each
    /// next layer's experts, predicted by its router, read while this layer computes; switches
    /// itself off when it does not pay); or only `pipeline` or only `lookahead`.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "full")]
    overlap: Option<Overlap>,
    /// Where the dense weights live.
    #[arg(long, value_enum, default_value_t = DenseWeights::Anon)]
    dense_weights: DenseWeights,
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

/// One engine behind a common face.
enum Runner<'m> {
    Resident(Box<Decoder<ResidentExperts>>),
    Stream(Box<Decoder<StreamingExperts>>),
    Llama(llama::Session<'m>),
}

impl<'m> Runner<'m> {
    fn record_routes(&mut self) {
        match self {
            Runner::Resident(d) => d.record_routes(true),
            Runner::Stream(d) => d.record_routes(true),
            Runner::Llama(_) => {}
        }
    }

    fn take_routes(&mut self) -> Vec<bmoe::engine::decoder::LayerRoute> {
        match self {
            Runner::Resident(d) => d.take_routes(),
            Runner::Stream(d) => d.take_routes(),
            Runner::Llama(_) => Vec::new(),
        }
    }

    fn as_forward(&mut self) -> &mut (dyn Forward + 'm) {
        match self {
            Runner::Resident(d) => d.as_mut(),
            Runner::Stream(d) => d.as_mut(),
            Runner::Llama(s) => s,
        }
    }
}

fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Peak resident set of this process, bytes.
fn max_rss() -> u64 {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64 * 1024
}

fn rusage() -> (f64, u64) {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(ru.ru_utime) + t(ru.ru_stime), ru.ru_majflt as u64)
}

/// The cache budget in bytes and whether it came from `auto`.
fn budget(args: &Args, index: &ModelIndex, kv_bytes: u64) -> anyhow::Result<(u64, bool)> {
    let typed = args.cache_mb.clone();
    let env = std::env::var("BMOE_CACHE_MB").ok();
    let spec = typed.or(env).unwrap_or_else(|| "auto".into());
    let avail = mem_available();
    let reserved = args.cache_floor_mb << 20;
    let dense = index.dense_bytes();
    if spec.trim().eq_ignore_ascii_case("auto") {
        let avail = avail.context("--cache-mb auto needs /proc/meminfo (MemAvailable); give --cache-mb N")?;
        let mut b = avail.saturating_sub(reserved + dense + kv_bytes);
        if args.cache_ceil_mb > 0 {
            b = b.min(args.cache_ceil_mb << 20);
        }
        return Ok((b.min(index.expert_bytes()), true));
    }
    let mb: u64 =
        spec.trim().parse().with_context(|| format!("--cache-mb `{spec}`: expected auto, 0 or a size in MiB"))?;
    let b = mb << 20;
    if let Some(avail) = avail {
        if b > avail.saturating_sub(reserved + dense + kv_bytes) && !args.force_cache {
            bail!(
                "--cache-mb {mb} would leave less than --cache-floor-mb {} MiB free (MemAvailable {:.0} MiB, dense \
                 {:.0} MiB, KV {:.0} MiB); pass --force-cache to use it anyway",
                args.cache_floor_mb,
                avail as f64 / MIB,
                dense as f64 / MIB,
                kv_bytes as f64 / MIB
            );
        }
    }
    Ok((b, false))
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
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let t_load = Instant::now();
    let model_name = model_path.display().to_string();
    if !model_path.exists() {
        bail!("{model_name}: no such file");
    }
    // Our decoder needs an index of the model; an architecture it does not know runs on
    // llama.cpp when streaming is `auto`.
    let mut engine = args.engine;
    let mut index = None;
    let mut not_streamable = None;
    if engine == Engine::Bmoe {
        match ModelIndex::open(&model_path) {
            Ok(i) => index = Some(i),
            Err(e) if e.not_streamable() && args.moe_stream == MoeStream::Auto => {
                not_streamable = Some(e.to_string());
                engine = Engine::Llama;
            }
            Err(e) => return Err(e).with_context(|| format!("indexing {model_name}")),
        }
    }
    let lm = match engine {
        Engine::Llama => llama::Model::mmap(&model_path),
        Engine::LlamaPlain => llama::Model::mmap_plain_kernels(&model_path),
        Engine::Bmoe => llama::Model::vocab_only(&model_path),
    }
    .with_context(|| format!("loading {model_name} in llama.cpp"))?;
    let opts = Options {
        n_ctx: args.ctx,
        n_threads: threads,
        n_ubatch: args.ubatch,
        n_expert_used: args.n_expert_used,
        pipeline: Overlap::pipeline(args.overlap),
        ..Options::default()
    };
    let replay = match (&args.route_replay, engine) {
        (Some(path), Engine::Bmoe) if index.is_some() => {
            let t = RouteTrace::read(path).map_err(|e| anyhow::anyhow!("{e}"))?;
            let r = RouteReplay::from_trace(&t, &path.display().to_string())?;
            let sh = index.as_ref().expect("checked").shape();
            r.check(sh.n_layer, sh.n_expert, args.n_expert_used.unwrap_or(sh.n_expert_used) as usize)?;
            Some(r)
        }
        (Some(_), _) => bail!("--route-replay replaces our decoder's routing: use --engine bmoe"),
        (None, _) => None,
    };
    let mut lossy = args.n_expert_used.map(|k| format!(", LOSSY --n-expert-used {k}")).unwrap_or_default();
    if let Some(r) = &replay {
        lossy += &format!(", LOSSY routing replayed from {} ({} decode steps, then again)", r.source, r.len());
    }
    let mut knobs: Vec<(&str, String)> = vec![
        ("engine", format!("{engine:?}").to_lowercase()),
        ("threads", threads.to_string()),
        ("ctx", args.ctx.to_string()),
        ("ubatch", args.ubatch.to_string()),
        ("n_predict", args.n_predict.to_string()),
        ("chat", args.chat.to_string()),
        ("temp", args.temp.to_string()),
        ("top_k", args.top_k.to_string()),
        ("top_p", args.top_p.to_string()),
        ("seed", args.seed.to_string()),
        ("n_expert_used", args.n_expert_used.map_or("model".into(), |k| format!("{k} (lossy)"))),
        ("route_replay", replay.as_ref().map_or("off".into(), |r| format!("{} (lossy, {} steps)", r.source, r.len()))),
    ];
    let mut stream_info = None;
    if let Some(i) = &index {
        let sh = i.shape();
        knobs.push(("arch", i.arch.name.to_string()));
        knobs.push((
            "shape",
            format!(
                "layers={} experts={} top_k={} n_embd={} n_ff_exp={}",
                sh.n_layer, sh.n_expert, sh.n_expert_used, sh.n_embd, sh.n_ff_exp
            ),
        ));
    }
    let trace_header = match (&index, &args.route_trace) {
        (Some(i), Some(_)) => {
            let sh = i.shape();
            let dense_of = |l: u32| -> u64 {
                let prefix = format!("blk.{l}.");
                i.dense
                    .iter()
                    .map(|&t| &i.file.tensors[t])
                    .filter(|t| t.name.starts_with(&prefix))
                    .map(|t| t.size)
                    .sum()
            };
            Some(TraceHeader {
                model: model_path.file_name().map_or(model_name.clone(), |f| f.to_string_lossy().into_owned()),
                arch: i.arch.name.to_string(),
                n_expert: sh.n_expert,
                n_expert_used: args.n_expert_used.unwrap_or(sh.n_expert_used),
                expert_bytes: i.entry_bytes(),
                dense_bytes: (0..sh.n_layer).map(dense_of).collect(),
            })
        }
        (None, Some(_)) => bail!("--route-trace records our decoder's routing: use --engine bmoe"),
        _ => None,
    };
    let mut runner = match (engine, index) {
        (Engine::Bmoe, Some(index)) if args.moe_stream != MoeStream::Off => {
            let shape = index.shape();
            let k = args.n_expert_used.unwrap_or(shape.n_expert_used);
            let kv_bytes = kv_bytes(&index, args.ctx);
            let (budget, auto) = budget(&args, &index, kv_bytes)?;
            let io = EngineOptions {
                backend: args.io_backend,
                lanes: args.io_threads.max(1),
                register: true,
                direct: !args.no_odirect,
            };
            let dense: Arc<dyn DenseSource> = match args.dense_weights {
                DenseWeights::Anon => {
                    Arc::new(AnonDense::load(&index, io).with_context(|| format!("reading {model_name}"))?)
                }
                DenseWeights::Mmap | DenseWeights::Warm => {
                    let map = Mapping::open(&index.file)?;
                    if args.dense_weights == DenseWeights::Warm {
                        for &i in &index.dense {
                            let t = &index.file.tensors[i];
                            map.touch(t.shard, t.offset, t.size)?;
                        }
                    }
                    Arc::new(map)
                }
            };
            let so = StreamOptions {
                budget_bytes: budget,
                policy: args.cache_policy,
                io,
                n_expert_used: args.n_expert_used,
                lookahead: Overlap::lookahead(args.overlap),
            };
            let s =
                StreamingExperts::new(&index, so).with_context(|| format!("setting up streaming of {model_name}"))?;
            let info = s.engine().info().clone();
            let direct = s.engine().file(0).map(|f| f.o_direct()).unwrap_or(false);
            let raised = if s.budget_raised() {
                let twice =
                    if Overlap::lookahead(args.overlap) { " twice (look-ahead reads the next layer's)" } else { "" };
                format!(" (raised from {:.0} MiB to the widest layer's top-{k}{twice})", budget as f64 / MIB)
            } else {
                String::new()
            };
            eprintln!(
                "mode: streaming (backend {}{}, o_direct {}, lanes {}, fixed buffers {}, budget {:.0} MiB{}{}, policy {}, \
                 dense {}, overlap {}, threads {threads}{lossy})",
                info.backend,
                info.fallback.as_ref().map_or(String::new(), |why| format!(" (io_uring unavailable: {why})")),
                if direct { "on" } else { "off" },
                info.lanes,
                if info.fixed_buffers { "yes" } else { "no" },
                s.pool_bytes() as f64 / MIB,
                if auto { " auto" } else { "" },
                raised,
                args.cache_policy,
                format!("{:?}", args.dense_weights).to_lowercase(),
                Overlap::describe(args.overlap),
            );
            let cycle = index.cycle_bytes(k);
            stream_info = Some(StreamInfo { budget_mib: s.pool_bytes() as f64 / MIB, cycle_mib: cycle as f64 / MIB });
            knobs.extend([
                ("moe_stream", format!("{:?}", args.moe_stream).to_lowercase()),
                ("cache_budget_MiB", format!("{:.1}", s.pool_bytes() as f64 / MIB)),
                ("cache_requested", if auto { "auto".into() } else { format!("{:.1} MiB", budget as f64 / MIB) }),
                ("cache_raised", s.budget_raised().to_string()),
                ("cache_floor_MiB", args.cache_floor_mb.to_string()),
                ("cache_ceil_MiB", args.cache_ceil_mb.to_string()),
                ("cache_policy", args.cache_policy.to_string()),
                ("cache_cycle_mb", format!("{:.1}", cycle as f64 / MIB)),
                ("io_backend", info.backend.to_string()),
                ("io_lanes", info.lanes.to_string()),
                ("o_direct", direct.to_string()),
                ("fixed_buffers", info.fixed_buffers.to_string()),
                ("dense_weights", format!("{:?}", args.dense_weights).to_lowercase()),
                ("overlap", format!("{:?}", args.overlap).to_lowercase()),
            ]);
            if (s.pool_bytes() as u64) < cycle {
                eprintln!(
                    "warning: the expert cache ({:.0} MiB) is smaller than one token's worst-case expert cycle \
                     ({:.0} MiB at top-{k}): expect most experts to be re-read every token",
                    s.pool_bytes() as f64 / MIB,
                    cycle as f64 / MIB
                );
            }
            Runner::Stream(Box::new(
                Decoder::new(&index, dense, s, opts).with_context(|| format!("opening {model_name}"))?,
            ))
        }
        (Engine::Bmoe, Some(_)) => {
            let d = Decoder::open_resident(&model_path, opts).with_context(|| format!("opening {model_name}"))?;
            eprintln!("mode: resident (--moe-stream off: bmoe decoder, weights on mmap), threads {threads}{lossy}");
            knobs.push(("moe_stream", "off".into()));
            Runner::Resident(Box::new(d))
        }
        _ => {
            let s = llama::Session::new(&lm, args.ctx, threads, args.ubatch)?;
            let how = if engine == Engine::LlamaPlain { ", no repacked weights" } else { "" };
            match &not_streamable {
                Some(why) => eprintln!(
                    "mode: architecture not streamable by this build ({why}); llama.cpp on mmap, threads {threads}"
                ),
                None => eprintln!("mode: llama.cpp baseline (plain llama.cpp on mmap{how}), threads {threads}"),
            }
            Runner::Llama(s)
        }
    };
    if let Some(r) = replay {
        match &mut runner {
            Runner::Resident(d) => d.set_route_replay(Some(r)),
            Runner::Stream(d) => d.set_route_replay(Some(r)),
            Runner::Llama(_) => unreachable!("refused above"),
        }?;
    }
    let load_s = t_load.elapsed().as_secs_f64();

    let text = if args.chat { chat_prompt(&lm, &args.prompt, args.no_think)? } else { args.prompt.clone() };
    let prompt = lm.tokenize(&text, true)?;
    if args.verbose_prompt {
        let shown: Vec<(i32, String)> = prompt.iter().map(|&t| (t, lm.token_text(t))).collect();
        eprintln!("prompt: {} tokens: {}", prompt.len(), json!(shown));
    }
    if prompt.is_empty() {
        bail!("the prompt tokenizes to nothing");
    }
    if prompt.len() + args.n_predict > args.ctx as usize {
        bail!("prompt ({} tokens) + -n {} exceed the context of {} (-c)", prompt.len(), args.n_predict, args.ctx);
    }
    let mut sampler = llama::Sampler::new(llama::Sampling {
        temp: args.temp,
        top_k: args.top_k,
        top_p: args.top_p,
        seed: args.seed,
    })?;

    let mut csv = match &args.csv {
        Some(path) => {
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
            );
            let info = bmoe::build_info();
            writeln!(f, "# bmoe {} git {}", info.version, info.git_rev)?;
            writeln!(f, "# model {model_name}")?;
            for (k, v) in &knobs {
                writeln!(f, "# {k} {v}")?;
            }
            writeln!(f, "# prompt_tokens {}", prompt.len())?;
            writeln!(
                f,
                "token,phase,wall_ms,io_ms,stall_ms,manage_ms,compute_ms,read_bytes,spec_bytes,hit_pct,majflt"
            )?;
            Some(f)
        }
        None => None,
    };

    let mut out = std::io::stdout().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut prev;
    let mut prev_flt = rusage().1;
    let (cpu_at, mut cpu_decode, mut flt_decode) = (std::cell::Cell::new(rusage().0), 0.0f64, 0u64);
    let mut decode = Totals::default();
    let mut io_error: Option<std::io::Error> = None;
    let cancel = CancelToken::default();
    // `--repeat N`: the same generation N times in one session (the expert cache stays warm);
    // the earlier ones are silent, the last is printed and measured.
    for _ in 1..args.repeat {
        let mut warm = llama::Sampler::new(llama::Sampling {
            temp: args.temp,
            top_k: args.top_k,
            top_p: args.top_p,
            seed: args.seed,
        })?;
        generate(
            runner.as_forward(),
            &prompt,
            args.n_predict,
            &cancel,
            &mut |l| warm.sample(l),
            &|t| lm.is_eog(t),
            &mut |_| Control::Continue,
        )
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("generating with {model_name}"))?;
    }
    prev = runner.as_forward().telemetry();
    if trace_header.is_some() {
        runner.record_routes();
    }
    let gen = generate(
        runner.as_forward(),
        &prompt,
        args.n_predict,
        &cancel,
        &mut |l| sampler.sample(l),
        &|t| lm.is_eog(t),
        &mut |t: Token| {
            pending.extend(lm.piece(t.id));
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
            let (cpu, flt) = rusage();
            let row = Row::between(&prev, &t.telemetry, t.step_s, flt - prev_flt);
            if t.index > 0 {
                decode.add(&row);
                cpu_decode += cpu - cpu_at.get();
                flt_decode += flt - prev_flt;
            }
            cpu_at.set(cpu);
            prev_flt = flt;
            let phase = if t.index == 0 { "prefill" } else { "decode" };
            if args.progress {
                eprintln!("{}", row.json(t.index, phase));
            }
            if let Some(f) = csv.as_mut() {
                if let Err(e) = writeln!(f, "{}", row.csv(t.index, phase)) {
                    io_error = Some(e);
                    return Control::Stop;
                }
            }
            prev = t.telemetry;
            Control::Continue
        },
    );
    let gen = gen.map_err(|e| anyhow::anyhow!("{e}")).with_context(|| format!("generating with {model_name}"))?;
    if let Some(e) = io_error {
        return Err(e.into());
    }
    out.write_all(&pending)?;
    writeln!(out)?;
    let steps = gen.step_s.len();
    let end = runner.as_forward().telemetry();
    eprintln!("load: {load_s:.2} s");
    eprintln!(
        "prefill: {} tokens in {:.3} s, {:.1} tok/s",
        prompt.len(),
        gen.prefill_s,
        prompt.len() as f64 / gen.prefill_s.max(1e-9)
    );
    let decode_s: f64 = gen.step_s.iter().sum();
    let mut summary = serde_json::Map::new();
    summary.insert("tokens".into(), json!(gen.tokens.len()));
    summary.insert("prompt_tokens".into(), json!(prompt.len()));
    summary.insert("prefill_tok/s".into(), json!(prompt.len() as f64 / gen.prefill_s.max(1e-9)));
    let per = |x: f64| if steps > 0 { json!(x / steps as f64) } else { serde_json::Value::Null };
    summary.insert("s/tok".into(), per(decode_s));
    summary.insert(
        "tok/s".into(),
        if steps > 0 { json!(steps as f64 / decode_s.max(1e-9)) } else { serde_json::Value::Null },
    );
    if steps > 0 {
        eprintln!(
            "generation: {} tokens, {:.4} s/token, {:.2} tok/s",
            gen.tokens.len(),
            decode_s / steps as f64,
            steps as f64 / decode_s.max(1e-9)
        );
        eprintln!(
            "compute: CPU occupancy {:.0} % of {threads} threads, major faults/token {:.1}",
            100.0 * cpu_decode / (decode_s.max(1e-9) * threads as f64),
            flt_decode as f64 / steps as f64
        );
    } else {
        eprintln!("generation: {} tokens, s/token unmeasured (fewer than two tokens)", gen.tokens.len());
    }
    summary.insert("majflt/tok".into(), per(flt_decode as f64));
    summary.insert("max_rss_MiB".into(), json!(max_rss() as f64 / MIB));
    let graph = match &runner {
        Runner::Resident(d) => Some(d.graph_buffer_bytes()),
        Runner::Stream(d) => Some(d.graph_buffer_bytes()),
        Runner::Llama(_) => None,
    };
    eprintln!(
        "memory: max RSS {:.0} MiB{}",
        max_rss() as f64 / MIB,
        graph.map_or(String::new(), |g| format!(" (graph buffers {:.0} MiB)", g as f64 / MIB))
    );
    let mib = |b: u64| b as f64 / MIB;
    match (end.provider, stream_info) {
        (Some(p), Some(si)) => {
            let read = mib(decode.read_bytes);
            let hits = decode.hits as f64 / ((decode.hits + decode.misses).max(1)) as f64 * 100.0;
            let measured = steps > 0;
            if measured {
                eprintln!(
                    "moe-stream: read {read:.1} MiB in decode ({:.2} MiB/token); decode time: compute {:.3} s, cache \
                     management {:.3} s, I/O wait (stall) {:.3} s, other {:.3} s; {} while reading",
                    read / steps as f64,
                    decode.compute_s,
                    decode.manage_s,
                    decode.io_s,
                    (decode_s - decode.compute_s - decode.manage_s - decode.io_s).max(0.0),
                    if decode.io_s > 0.0 {
                        format!("{:.0} MiB/s", read / decode.io_s)
                    } else {
                        "unmeasured (no reads)".into()
                    },
                );
                eprintln!(
                    "moe-cache: hit {hits:.1} % in decode ({:.1} % overall); resident {:.0} MiB of {:.0} MiB; evictions {}",
                    p.hits as f64 / ((p.hits + p.misses).max(1)) as f64 * 100.0,
                    mib(p.resident_bytes),
                    si.budget_mib,
                    p.evictions
                );
            }
            summary.insert("read_MiB".into(), json!(read));
            summary.insert("cache_hit_pct".into(), if measured { json!(hits) } else { serde_json::Value::Null });
            summary.insert("token_demand_MiB".into(), per(mib(decode.routed_bytes)));
            summary.insert(
                "layer_demand_MiB".into(),
                if measured { json!(mib(p.max_layer_routed_bytes)) } else { serde_json::Value::Null },
            );
            summary.insert("cache_budget_MiB".into(), json!(si.budget_mib));
            summary.insert("cache_cycle_mb".into(), json!(si.cycle_mib));
            summary.insert("stall_s/tok".into(), per(decode.io_s));
            summary.insert(
                "read_MiB/s".into(),
                if decode.io_s > 0.0 { json!(read / decode.io_s) } else { serde_json::Value::Null },
            );
            summary.insert("evictions".into(), json!(p.evictions));
            if args.overlap.is_some() {
                let acc = (p.real_with_prediction > 0)
                    .then(|| 100.0 * p.predicted_real as f64 / p.real_with_prediction as f64);
                let useful = (p.spec_entries > 0).then(|| 100.0 * p.spec_useful as f64 / p.spec_entries as f64);
                let (off, layers) = match &runner {
                    Runner::Stream(d) => {
                        (d.provider().lookahead().1.map(str::to_string), d.provider().lookahead_layers().to_vec())
                    }
                    _ => (None, Vec::new()),
                };
                let by_layer: Vec<Option<f64>> = layers.iter().map(|l| l.accuracy_pct()).collect();
                let mut sorted: Vec<f64> = by_layer.iter().flatten().copied().collect();
                sorted.sort_by(f64::total_cmp);
                let spread = match (sorted.first(), sorted.get(sorted.len() / 2), sorted.last()) {
                    (Some(lo), Some(mid), Some(hi)) => {
                        format!(" (per layer min/median/max {lo:.0}/{mid:.0}/{hi:.0} %)")
                    }
                    _ => String::new(),
                };
                let n_off = layers.iter().filter(|l| l.off).count();
                eprintln!(
                    "moe-overlap: stall {:.4} s/token; look-ahead accuracy {}{spread}, speculative {:.1} MiB ({} \
                     entries, {} useful); reads off in {n_off} of {} layers{}",
                    if steps > 0 { decode.io_s / steps as f64 } else { 0.0 },
                    acc.map_or("unmeasured".into(), |a| format!("{a:.1} %")),
                    mib(p.spec_bytes),
                    p.spec_entries,
                    useful.map_or("unmeasured".into(), |u| format!("{u:.1} %")),
                    layers.len(),
                    off.map_or(String::new(), |why| format!("; look-ahead switched off: {why}")),
                );
                summary.insert("lookahead_accuracy_by_layer".into(), json!(by_layer));
                summary.insert("lookahead_layers_off".into(), json!(n_off));
                summary.insert("lookahead_accuracy_pct".into(), acc.map_or(serde_json::Value::Null, |a| json!(a)));
                summary.insert("spec_MiB".into(), json!(mib(p.spec_bytes)));
                summary.insert("spec_useful_pct".into(), useful.map_or(serde_json::Value::Null, |u| json!(u)));
            }
        }
        _ => {
            for k in
                ["read_MiB", "cache_hit_pct", "token_demand_MiB", "layer_demand_MiB", "cache_budget_MiB", "stall_s/tok"]
            {
                summary.insert(k.into(), serde_json::Value::Null);
            }
            summary
                .insert("cache_cycle_mb".into(), stream_info.map_or(serde_json::Value::Null, |s| json!(s.cycle_mib)));
        }
    }
    if let (Some(h), Some(path)) = (&trace_header, &args.route_trace) {
        let routes = runner.take_routes();
        let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut w = TraceWriter::new(std::io::BufWriter::new(f), h)?;
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
        eprintln!("route trace: {rows} rows written to {}", path.display());
    }
    if gen.cancelled {
        eprintln!("cancelled");
    }
    let summary = serde_json::Value::Object(summary);
    if let Some(mut f) = csv {
        let line: Vec<String> = summary
            .as_object()
            .expect("an object")
            .iter()
            .map(|(k, v)| format!("{k}={}", if v.is_null() { "unmeasured".into() } else { v.to_string() }))
            .collect();
        writeln!(f, "# summary {}", line.join(" "))?;
        f.flush()?;
    }
    if args.json {
        writeln!(out, "{summary}")?;
    }
    Ok(())
}

/// What a streaming run reports besides counters.
#[derive(Clone, Copy)]
struct StreamInfo {
    budget_mib: f64,
    cycle_mib: f64,
}

/// One token's share of the counters.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    wall_s: f64,
    io_s: Option<f64>,
    manage_s: Option<f64>,
    compute_s: Option<f64>,
    read_bytes: Option<u64>,
    /// Of which read speculatively (look-ahead).
    spec_bytes: Option<u64>,
    hits: Option<u64>,
    misses: Option<u64>,
    routed_bytes: Option<u64>,
    majflt: u64,
}

impl Row {
    fn between(a: &Telemetry, b: &Telemetry, wall_s: f64, majflt: u64) -> Self {
        let (pa, pb) = (a.provider.unwrap_or_default(), b.provider);
        Row {
            wall_s,
            io_s: pb.map(|p| p.io_s - pa.io_s),
            manage_s: pb.map(|p| p.manage_s - pa.manage_s),
            compute_s: b.compute_s.map(|c| c - a.compute_s.unwrap_or(0.0)),
            read_bytes: pb.map(|p| p.bytes_read - pa.bytes_read),
            spec_bytes: pb.map(|p| p.spec_bytes - pa.spec_bytes),
            hits: pb.map(|p| p.hits - pa.hits),
            misses: pb.map(|p| p.misses - pa.misses),
            routed_bytes: pb.map(|p| p.routed_bytes - pa.routed_bytes),
            majflt,
        }
    }

    fn hit_pct(&self) -> Option<f64> {
        let (h, m) = (self.hits?, self.misses?);
        (h + m > 0).then(|| h as f64 / (h + m) as f64 * 100.0)
    }

    fn json(&self, index: usize, phase: &str) -> serde_json::Value {
        let ms = |x: Option<f64>| x.map(|v| v * 1e3);
        json!({
            "token": index, "phase": phase, "wall_ms": self.wall_s * 1e3, "io_ms": ms(self.io_s),
            "stall_ms": ms(self.io_s), "manage_ms": ms(self.manage_s), "compute_ms": ms(self.compute_s),
            "read_bytes": self.read_bytes, "spec_bytes": self.spec_bytes, "hit_pct": self.hit_pct(),
            "majflt": self.majflt,
        })
    }

    fn csv(&self, index: usize, phase: &str) -> String {
        let f = |x: Option<f64>| x.map_or("unmeasured".to_string(), |v| format!("{:.3}", v * 1e3));
        format!(
            "{index},{phase},{:.3},{},{},{},{},{},{},{},{}",
            self.wall_s * 1e3,
            f(self.io_s),
            f(self.io_s),
            f(self.manage_s),
            f(self.compute_s),
            self.read_bytes.map_or("unmeasured".into(), |b| b.to_string()),
            self.spec_bytes.map_or("unmeasured".into(), |b| b.to_string()),
            self.hit_pct().map_or("unmeasured".into(), |h| format!("{h:.1}")),
            self.majflt
        )
    }
}

/// Sums over the decode steps.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    io_s: f64,
    manage_s: f64,
    compute_s: f64,
    read_bytes: u64,
    hits: u64,
    misses: u64,
    routed_bytes: u64,
}

impl Totals {
    fn add(&mut self, r: &Row) {
        self.io_s += r.io_s.unwrap_or(0.0);
        self.manage_s += r.manage_s.unwrap_or(0.0);
        self.compute_s += r.compute_s.unwrap_or(0.0);
        self.read_bytes += r.read_bytes.unwrap_or(0);
        self.hits += r.hits.unwrap_or(0);
        self.misses += r.misses.unwrap_or(0);
        self.routed_bytes += r.routed_bytes.unwrap_or(0);
    }
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
        let presets: Vec<&str> = bmoe::engine::synth::PRESETS
            .iter()
            .copied()
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

/// Bytes of an F16 KV cache of `n_ctx` tokens.
fn kv_bytes(index: &ModelIndex, n_ctx: u32) -> u64 {
    let p = &index.params.hp;
    2 * 2 * u64::from(n_ctx) * u64::from(p.n_head_kv) * p.head_dim * u64::from(p.n_layer)
}
