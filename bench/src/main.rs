//! `bmoe-bench`: the benchmark-protocol driver (`protocol`), its RAM holder (`hold-ram`), and
//! the lossy knobs' quality figures (`quality`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context as _};
use bmoe::engine::model::ModelIndex;
use bmoe_bench::hold::{self, RamHold};
use bmoe_bench::protocol::{default_cells, Cell, Fio, Protocol};
use bmoe_bench::quality::{QualityCell, Settings};
use bmoe_bench::sys;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "bmoe-bench", version, about = "bmoe's benchmark protocol driver")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a matrix of `bmoe run` cells from measured conditions, interleaved round by round,
    /// with fio as the disk's reference; writes CSVs, a summary (markdown, CSV) and SVG plots.
    Protocol(Box<ProtocolArgs>),
    /// The lossy knobs' quality: each cell teacher-forced on one fixed token sequence, its
    /// logits at every decode position against the lossless run's (top-1 agreement, mean KL).
    Quality(Box<QualityArgs>),
    /// Hold (touch and mlock) this many bytes until stdin closes (what --ram-gb starts).
    HoldRam {
        #[arg(long)]
        bytes: u64,
    },
}

#[derive(clap::Args)]
struct ProtocolArgs {
    /// The model (or --preset).
    #[arg(short = 'm', long, required_unless_present = "preset")]
    model: Option<PathBuf>,
    /// Synthesize a preset's model into models/ (once) and use it: any `bmoe synth --shape`
    /// (qwen3-30b-a3b, gpt-oss-20b, small, ...), in the quant its real files come in (mxfp4 for
    /// gpt-oss, q4_k_m otherwise).
    #[arg(long, conflicts_with = "model")]
    preset: Option<String>,
    /// Leave about this much RAM (GiB) to the engine and the page cache: a helper process
    /// holds the rest (mlock) for the whole run. At least 1, less than MemAvailable.
    #[arg(long, allow_negative_numbers = true)]
    ram_gb: Option<f64>,
    /// Which default cells to run (comma list of: llama-mmap, resident, stream-nocache,
    /// stream-auto, overlap; `none` for only --cell/--budgets-mb ones).
    #[arg(long, value_delimiter = ',')]
    cells: Option<Vec<String>>,
    /// An extra cell, NAME=ARGS (bmoe run arguments), e.g. `--cell "lru=--cache-policy lru"`.
    #[arg(long = "cell")]
    extra: Vec<String>,
    /// A streamed cell per budget: `cache-B` = `--cache-mb B --force-cache`.
    #[arg(long, value_delimiter = ',')]
    budgets_mb: Vec<u64>,
    /// Rounds; each runs every cell once, in order.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Tokens per run.
    #[arg(short = 'n', long, default_value_t = 256)]
    n_predict: usize,
    /// The fixed prompt.
    #[arg(short = 'p', long, default_value = "Mixture-of-experts models route each token to a few experts, so")]
    prompt: String,
    /// Sampling temperature (routing then varies token to token, the same way in every engine).
    #[arg(long, default_value_t = 1.0)]
    temp: f32,
    /// The sampler's seed.
    #[arg(long, default_value_t = 1)]
    seed: u32,
    /// More arguments for every cell (e.g. "--route-replay T --n-expert-used 6").
    #[arg(long, allow_hyphen_values = true)]
    run_args: Option<String>,
    /// Output folder (default bench-out/protocol-<unix time>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do not drop the page cache before each cell.
    #[arg(long)]
    no_drop_caches: bool,
    /// Longest wait for MemAvailable before a cell (seconds).
    #[arg(long, default_value_t = 60.0)]
    settle_s: f64,
    /// fio's run time at each end (0: no disk reference).
    #[arg(long, default_value_t = 10)]
    fio_seconds: u32,
    /// fio's block size (default: the model's median expert slice, 4 KiB aligned).
    #[arg(long)]
    fio_bs: Option<u64>,
    /// fio's depth (default: the cells' --io-threads, or 4).
    #[arg(long)]
    fio_depth: Option<usize>,
    /// Also run fio (for this many seconds) before every cell, and judge each run's lower
    /// bound against the mean of the fio windows just before and just after it (a disk that
    /// throttles and recovers within minutes makes the two ends' fio the wrong reference).
    #[arg(long)]
    fio_every_cell: Option<u32>,
    /// fio's pattern: randread (decode's scattered experts) or read (sequential: a prefill
    /// reads each layer's union in expert order, nearly sequentially within each tensor, and
    /// this disk serves that faster than random reads).
    #[arg(long, default_value = "randread", value_parser = ["randread", "read"])]
    fio_rw: String,
    /// The bmoe binary (default: beside this one).
    #[arg(long)]
    bmoe: Option<PathBuf>,
}

#[derive(clap::Args)]
struct QualityArgs {
    /// The model.
    #[arg(short = 'm', long)]
    model: PathBuf,
    /// A cell, NAME=ARGS: `--drop-cold-experts F`, `--route-ahead L`, `--n-expert-used K`,
    /// `--cache-mb`, `--overlap`, `--moe-stream`, `--io-threads`, `--cache-policy`.
    #[arg(long = "cell", required = true)]
    cells: Vec<String>,
    /// Flags of every engine, the lossless reference's too (e.g. "-t 2 --cache-mb 4096",
    /// "--route-replay TRACE --n-expert-used 6").
    #[arg(long, allow_hyphen_values = true)]
    run_args: Option<String>,
    /// Tokens of the sequence's prompt (one prefill, not compared).
    #[arg(long, default_value_t = 32)]
    prompt_tokens: usize,
    /// Decode positions compared.
    #[arg(short = 'n', long, default_value_t = 128)]
    tokens: usize,
    /// The sequence's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Context length.
    #[arg(short = 'c', long, default_value_t = 1024)]
    ctx: u32,
    /// Also write one JSON object per cell to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::HoldRam { bytes } => hold::serve(bytes).map_err(anyhow::Error::from),
        Cmd::Protocol(a) => protocol(*a),
        Cmd::Quality(a) => quality(*a),
    };
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The error and its causes on one line, once: returning it from main would print its
            // Debug form (each cause again under "Caused by", and a backtrace under
            // RUST_BACKTRACE=1).
            eprintln!("bmoe-bench: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn quality(a: QualityArgs) -> anyhow::Result<()> {
    let mut base = Settings { ctx: a.ctx, ..Settings::default() };
    let common: Vec<String> = a.run_args.as_deref().unwrap_or("").split_whitespace().map(String::from).collect();
    base.apply(&common).context("--run-args")?;
    if a.prompt_tokens == 0 || a.tokens == 0 || a.prompt_tokens + a.tokens > a.ctx as usize {
        bail!(
            "--prompt-tokens {} and -n {}: at least one of each, and together within -c {}",
            a.prompt_tokens,
            a.tokens,
            a.ctx
        );
    }
    let cells = a.cells.iter().map(|c| QualityCell::parse(c)).collect::<anyhow::Result<Vec<_>>>()?;
    let rows = bmoe_bench::quality::run(&a.model, &base, &cells, a.prompt_tokens, a.tokens, a.seed, &mut |what| {
        eprintln!("bmoe-bench quality: {what}")
    })?;
    println!(
        "### bmoe-bench quality, {} ({} decode positions after a {}-token prompt, seed {}; reference: the lossless run with `{}`)\n",
        a.model.display(),
        a.tokens,
        a.prompt_tokens,
        a.seed,
        common.join(" ")
    );
    print!("{}", bmoe_bench::quality::markdown(&rows));
    if let Some(p) = &a.json {
        let lines: Vec<String> = rows.iter().map(|r| bmoe_bench::quality::json(r).to_string()).collect();
        std::fs::write(p, lines.join("\n") + "\n").with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

fn protocol(a: ProtocolArgs) -> anyhow::Result<()> {
    // --ram-gb first: a value that would lock every available byte (or hold nothing) is refused
    // before a model is synthesized or indexed.
    if let Some(gb) = a.ram_gb {
        let avail = sys::mem_available().context("--ram-gb needs /proc/meminfo")?;
        hold::hold_bytes(gb, avail).map_err(anyhow::Error::msg)?;
    }
    let exe = std::env::current_exe().context("locating this binary")?;
    let bmoe = a.bmoe.clone().unwrap_or_else(|| exe.with_file_name("bmoe"));
    if !bmoe.exists() {
        bail!("{}: no bmoe binary (build it: cargo build --release -p bmoe-cli, or pass --bmoe)", bmoe.display());
    }
    let model = match (&a.model, &a.preset) {
        (Some(m), _) => m.clone(),
        (None, Some(p)) => preset(&bmoe, p)?,
        (None, None) => unreachable!("clap requires one"),
    };
    // The expert layers: our native index, or the generic decoder's for an architecture only
    // llama.cpp's graph runs (gemma4, deepseek2, …).
    let layers = match ModelIndex::open(&model) {
        Ok(i) => i.layers,
        Err(native) => bmoe::engine::gguf::open_model(&model)
            .map_err(bmoe::engine::model::Error::from)
            .and_then(bmoe::engine::generic::index::GenericIndex::new)
            .map(|g| g.layers)
            .map_err(|generic| match generic.to_string() {
                // The same failure both ways (a file that cannot be opened): once.
                g if g == native.to_string() => anyhow::anyhow!("{native}"),
                g => anyhow::anyhow!("{native}; as the generic decoder reads it: {g}"),
            })
            .with_context(|| format!("indexing {}", model.display()))?,
    };
    let mut common: Vec<String> = vec![
        "-p".into(),
        a.prompt.clone(),
        "-n".into(),
        a.n_predict.to_string(),
        "--temp".into(),
        a.temp.to_string(),
        "--seed".into(),
        a.seed.to_string(),
        // Every run lasts -n tokens: an end token does not cut a cell short.
        "--ignore-eos".into(),
    ];
    common.extend(a.run_args.as_deref().unwrap_or("").split_whitespace().map(String::from));
    let mut cells: Vec<Cell> = match &a.cells {
        None => default_cells(),
        Some(names) if names.iter().any(|n| n == "none") => Vec::new(),
        Some(names) => {
            let all = default_cells();
            names
                .iter()
                .map(|n| {
                    all.iter().find(|c| &c.name == n).cloned().with_context(|| {
                        let known: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
                        format!("no default cell `{n}` (known: {})", known.join(", "))
                    })
                })
                .collect::<anyhow::Result<_>>()?
        }
    };
    for b in &a.budgets_mb {
        cells.push(Cell::parse(&format!("cache-{b}=--cache-mb {b} --force-cache"))?);
    }
    for spec in &a.extra {
        cells.push(Cell::parse(spec)?);
    }
    if common.iter().any(|c| c == "--route-replay") && cells.iter().any(Cell::is_llama) {
        eprintln!("bmoe-bench: --route-replay is ours only: the llama.cpp cell is left out");
        cells.retain(|c| !c.is_llama());
    }
    if cells.is_empty() {
        bail!("no cells to run");
    }
    let lanes = common.windows(2).find(|w| w[0] == "--io-threads").and_then(|w| w[1].parse().ok()).unwrap_or(4);
    let fio = (a.fio_seconds > 0).then(|| Fio {
        block: a.fio_bs.unwrap_or_else(|| median_slice(&layers)),
        depth: a.fio_depth.unwrap_or(lanes),
        seconds: a.fio_seconds,
        every_cell: a.fio_every_cell,
        rw: a.fio_rw.clone(),
    });
    let out = a.out.clone().unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        PathBuf::from(format!("bench-out/protocol-{t}"))
    });

    // RAM: drop the page cache (unless told not to), then hold what is available beyond
    // --ram-gb, measured again now that the cache is dropped.
    if !a.no_drop_caches {
        let _ = sys::drop_caches();
    }
    let mut _hold = None;
    let ram_note = match a.ram_gb {
        None => "not limited".to_string(),
        Some(gb) => {
            let avail = sys::mem_available().context("--ram-gb needs /proc/meminfo")?;
            let hold_bytes = hold::hold_bytes(gb, avail).map_err(anyhow::Error::msg)?;
            eprintln!("bmoe-bench: holding {:.1} GiB so that about {gb} GiB stay available", hold_bytes as f64 / GIB);
            let h = RamHold::start(&exe, hold_bytes).context("starting the RAM holder")?;
            let note = format!(
                "--ram-gb {gb}: a helper holds {:.1} GiB (mlock {}); MemAvailable then {:.1} GiB",
                hold_bytes as f64 / GIB,
                if h.locked { "yes" } else { "no: touched pages, no swap" },
                sys::mem_available().unwrap_or(0) as f64 / GIB
            );
            _hold = Some(h);
            note
        }
    };
    let command_line = std::env::args().map(|s| if s.contains(' ') { format!("'{s}'") } else { s }).collect::<Vec<_>>();
    let p = Protocol {
        bmoe,
        model,
        common,
        cells,
        rounds: a.rounds.max(1),
        out: out.clone(),
        drop_caches: !a.no_drop_caches,
        settle: Duration::from_secs_f64(a.settle_s.max(0.0)),
        mem_threshold: None,
        fio,
        command_line: command_line.join(" "),
        ram_note,
    };
    let mut check = || {
        let gone = _hold.as_mut().is_some_and(|h| !h.alive());
        gone.then(|| "the RAM holder is gone: RAM was no longer limited".to_string())
    };
    let outcome = p.run(&mut check)?;
    println!("{}", outcome.markdown);
    eprintln!("bmoe-bench: wrote {}/summary.md, summary.csv, tok_s.svg, tokens.svg and cells/", out.display());
    let failed = outcome.runs.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        bail!(
            "{failed} of {} runs failed (their errors are in the table above and their logs in {}/cells/)",
            outcome.runs.len(),
            out.display()
        );
    }
    Ok(())
}

const GIB: f64 = (1u64 << 30) as f64;

/// The median size of one expert's projection slice, rounded up to 4 KiB: what one read of
/// the streamer asks for.
fn median_slice(layers: &[bmoe::engine::model::MoeLayer]) -> u64 {
    let mut v: Vec<u64> = layers.iter().flat_map(|l| l.tensors.iter().map(|t| t.bytes_per_expert)).collect();
    v.sort_unstable();
    v.get(v.len() / 2).map_or(1 << 20, |b| b.div_ceil(4096) * 4096)
}

/// A preset's model under models/, synthesized on first use.
fn preset(bmoe: &std::path::Path, name: &str) -> anyhow::Result<PathBuf> {
    let quant = if name.starts_with("gpt-oss") { "mxfp4" } else { "q4_k_m" };
    let path = PathBuf::from(format!("models/{name}-{quant}.gguf"));
    if !path.exists() {
        eprintln!("bmoe-bench: synthesizing {} (once)", path.display());
        std::fs::create_dir_all("models")?;
        let st = std::process::Command::new(bmoe)
            .args(["synth", "--shape", name, "--quant", quant, "-o"])
            .arg(&path)
            .status()
            .context("running bmoe synth")?;
        if !st.success() {
            bail!("bmoe synth --shape {name} failed ({st})");
        }
    }
    Ok(path)
}
