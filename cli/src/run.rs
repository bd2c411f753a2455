//! `bmoe run`: generate text. Our decoder (`--engine bmoe`, the default), streaming the
//! experts from the file through the registered-pool cache (`--moe-stream`, default `auto`) or
//! resident on mmap; or plain llama.cpp on mmap (`--engine llama`, the baseline a user would
//! otherwise run) with the same tokenizer, prompt, threads and sampler, and the same timing lines.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::CachePolicy;
use bmoe::engine::decoder::{Decoder, DenseSource, Logits, Mapping, Options, ResidentExperts};
use bmoe::engine::llama;
use bmoe::engine::model::ModelIndex;
use bmoe::engine::stream::{AnonDense, StreamOptions, StreamingExperts};
use bmoe::io::{BackendKind, EngineOptions};

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
    #[arg(short = 'm', long)]
    model: PathBuf,
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
    /// Where the dense weights live.
    #[arg(long, value_enum, default_value_t = DenseWeights::Anon)]
    dense_weights: DenseWeights,
    /// Route each token to K experts instead of the model's top-k (lossy: changes the output).
    #[arg(long)]
    n_expert_used: Option<u32>,
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

impl Runner<'_> {
    fn forward(&mut self, tokens: &[i32]) -> anyhow::Result<Vec<f32>> {
        Ok(match self {
            Runner::Resident(d) => d.forward(tokens, Logits::Last)?,
            Runner::Stream(d) => d.forward(tokens, Logits::Last)?,
            Runner::Llama(s) => s.forward(tokens, false)?,
        })
    }
}

/// What the streamer had done at a point in time (to split prefill from decode).
#[derive(Clone, Copy, Default)]
struct Snap {
    bytes: u64,
    io_s: f64,
    manage_s: f64,
    compute_s: f64,
    provider_s: f64,
}

impl Snap {
    fn of(r: &Runner<'_>) -> Self {
        match r {
            Runner::Stream(d) => {
                let (s, st) = (d.stats(), d.provider().stats());
                Snap {
                    bytes: st.bytes_read,
                    io_s: st.io_s,
                    manage_s: st.manage_s,
                    compute_s: s.compute_s,
                    provider_s: s.provider_s,
                }
            }
            Runner::Resident(d) => Snap { compute_s: d.stats().compute_s, ..Snap::default() },
            Runner::Llama(_) => Snap::default(),
        }
    }
}

fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
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
    llama::set_verbose(args.verbose);
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let t_load = Instant::now();
    let model_name = args.model.display().to_string();
    if !args.model.exists() {
        bail!("{model_name}: no such file");
    }
    // Our decoder needs an index of the model; an architecture it does not know runs on
    // llama.cpp when streaming is `auto`.
    let mut engine = args.engine;
    let mut index = None;
    let mut not_streamable = None;
    if engine == Engine::Bmoe {
        match ModelIndex::open(&args.model) {
            Ok(i) => index = Some(i),
            Err(e @ bmoe::engine::model::Error::UnknownArch { .. }) if args.moe_stream == MoeStream::Auto => {
                not_streamable = Some(e.to_string());
                engine = Engine::Llama;
            }
            Err(e) => return Err(e).with_context(|| format!("indexing {model_name}")),
        }
    }
    let lm = match engine {
        Engine::Llama => llama::Model::mmap(&args.model),
        Engine::LlamaPlain => llama::Model::mmap_plain_kernels(&args.model),
        Engine::Bmoe => llama::Model::vocab_only(&args.model),
    }
    .with_context(|| format!("loading {model_name} in llama.cpp"))?;
    let opts = Options {
        n_ctx: args.ctx,
        n_threads: threads,
        n_ubatch: args.ubatch,
        n_expert_used: args.n_expert_used,
        ..Options::default()
    };
    let lossy = args.n_expert_used.map(|k| format!(", LOSSY --n-expert-used {k}")).unwrap_or_default();
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
            };
            let s =
                StreamingExperts::new(&index, so).with_context(|| format!("setting up streaming of {model_name}"))?;
            let info = s.engine().info().clone();
            let direct = s.engine().file(0).map(|f| f.o_direct()).unwrap_or(false);
            let raised = if s.budget_raised() {
                format!(" (raised from {:.0} MiB to the widest layer's top-{k})", budget as f64 / MIB)
            } else {
                String::new()
            };
            eprintln!(
                "mode: streaming (backend {}, o_direct {}, lanes {}, fixed buffers {}, budget {:.0} MiB{}{}, policy {}, \
                 dense {:?}, threads {threads}{lossy})",
                info.backend,
                if direct { "on" } else { "off" },
                info.lanes,
                if info.fixed_buffers { "yes" } else { "no" },
                s.pool_bytes() as f64 / MIB,
                if auto { " auto" } else { "" },
                raised,
                args.cache_policy,
                args.dense_weights,
            );
            let cycle = index.cycle_bytes(k);
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
            let d = Decoder::open_resident(&args.model, opts).with_context(|| format!("opening {model_name}"))?;
            eprintln!("mode: resident (--moe-stream off: bmoe decoder, weights on mmap), threads {threads}{lossy}");
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
    let load_s = t_load.elapsed().as_secs_f64();

    let text = if args.chat { lm.chat(&args.prompt)? } else { args.prompt.clone() };
    let prompt = lm.tokenize(&text, true)?;
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

    let t_prefill = Instant::now();
    let mut logits = runner.forward(&prompt)?;
    let prefill_s = t_prefill.elapsed().as_secs_f64();

    let mut out = std::io::stdout().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut generated = 0usize;
    let mut decode_s = 0.0;
    let at_decode = Snap::of(&runner);
    let (cpu0, majflt0) = rusage();
    for _ in 0..args.n_predict {
        let tok = sampler.sample(&logits);
        if lm.is_eog(tok) {
            break;
        }
        generated += 1;
        pending.extend(lm.piece(tok));
        // Print whole UTF-8 characters only; a multi-byte character may span tokens.
        let valid = match std::str::from_utf8(&pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        out.write_all(&pending[..valid])?;
        out.flush()?;
        pending.drain(..valid);
        if generated == args.n_predict {
            break;
        }
        let t = Instant::now();
        logits = runner.forward(&[tok])?;
        decode_s += t.elapsed().as_secs_f64();
    }
    out.write_all(&pending)?;
    writeln!(out)?;
    let (cpu1, majflt1) = rusage();
    let end = Snap::of(&runner);
    let steps = generated.saturating_sub(1);
    eprintln!("load: {load_s:.2} s");
    eprintln!(
        "prefill: {} tokens in {prefill_s:.3} s, {:.1} tok/s",
        prompt.len(),
        prompt.len() as f64 / prefill_s.max(1e-9)
    );
    if steps > 0 {
        eprintln!(
            "generation: {generated} tokens, {:.4} s/token, {:.2} tok/s",
            decode_s / steps as f64,
            steps as f64 / decode_s.max(1e-9)
        );
        eprintln!(
            "compute: CPU occupancy {:.0} % of {threads} threads, major faults/token {:.1}",
            100.0 * (cpu1 - cpu0) / (decode_s.max(1e-9) * threads as f64),
            (majflt1 - majflt0) as f64 / steps as f64
        );
    } else {
        eprintln!("generation: {generated} tokens, unmeasured (fewer than two tokens)");
    }
    match &runner {
        Runner::Stream(d) if steps > 0 => {
            let s = d.provider();
            let mib = (end.bytes - at_decode.bytes) as f64 / MIB;
            let io = end.io_s - at_decode.io_s;
            let manage = end.manage_s - at_decode.manage_s;
            let compute = end.compute_s - at_decode.compute_s;
            eprintln!(
                "moe-stream: read {mib:.1} MiB in decode ({:.2} MiB/token); decode time: compute {compute:.3} s, cache \
                 management {manage:.3} s, I/O wait {io:.3} s, other {:.3} s; {} MiB/s while reading",
                mib / steps as f64,
                (decode_s - compute - manage - io).max(0.0),
                if io > 0.0 { format!("{:.0}", mib / io) } else { "unmeasured (no reads)".into() },
            );
            let c = s.cache().counters();
            let dec = c.phase(bmoe::engine::cache::Phase::Decode);
            eprintln!(
                "moe-cache: hit {} (decode), {} (all); resident {:.0} MiB of {:.0} MiB; evictions {}; policy {}",
                dec.hit_pct().map_or("unmeasured".into(), |h| format!("{h:.1} %")),
                c.total().hit_pct().map_or("unmeasured".into(), |h| format!("{h:.1} %")),
                s.cache().resident_bytes() as f64 / MIB,
                s.pool_bytes() as f64 / MIB,
                c.total().evictions,
                s.cache().policy_name(),
            );
        }
        Runner::Resident(d) => {
            let st = d.stats();
            eprintln!("decoder: {} graphs, {:.3} s in graph compute", st.graphs, st.compute_s);
        }
        _ => {}
    }
    let _ = end.provider_s;
    Ok(())
}

/// Bytes of an F16 KV cache of `n_ctx` tokens.
fn kv_bytes(index: &ModelIndex, n_ctx: u32) -> u64 {
    let bmoe::engine::model::ArchParams::Qwen3Moe(p) = &index.params;
    2 * 2 * u64::from(n_ctx) * u64::from(p.n_head_kv) * p.head_dim * u64::from(p.n_layer)
}
