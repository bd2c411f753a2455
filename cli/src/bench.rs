//! `bmoe bench`: what `llama-bench` is for llama.cpp, for a streamed engine. Prompt processing
//! (`-p N`: N synthetic prompt tokens in one prefill) and text generation (`-n N`: N single-token
//! steps after a one-token prompt) as separate tests, over every combination of the lossless
//! knobs given as comma lists, repetitions interleaved (round r runs every row once, in order),
//! mean ± sd and median per row. Every measurement opens the engine anew, so it starts with a
//! cold expert cache; the page cache is left as the system has it (this command never drops it
//! nor holds RAM: the careful past-RAM protocol is `bmoe-bench protocol`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context as _};
use clap::Parser as _;
use serde_json::{json, Value};

use bmoe::engine::engine::GenParams;
use bmoe::engine::session::{CancelToken, Control};
use bmoe::engine::telemetry;

use crate::guard::{Exit, Signals};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model (the first shard of a split model).
    #[arg(short = 'm', long)]
    model: PathBuf,
    /// Prompt-processing tests: prompt lengths in tokens (comma list; 0 for none).
    #[arg(short = 'p', long = "n-prompt", value_delimiter = ',', default_value = "512")]
    n_prompt: Vec<usize>,
    /// Text-generation tests: tokens generated (comma list; 0 for none). Generation always
    /// runs the requested length (no end token stops it).
    #[arg(short = 'n', long = "n-gen", value_delimiter = ',', default_value = "128")]
    n_gen: Vec<usize>,
    /// Repetitions of every row, interleaved.
    #[arg(short = 'r', long, default_value_t = 5)]
    repetitions: usize,
    /// Expert cache budgets (comma list of `bmoe run --cache-mb` values: 0, 2000, 4G, auto).
    #[arg(long, value_delimiter = ',')]
    cache_mb: Vec<String>,
    /// Overlap modes (comma list: off, lookahead, pipeline, full).
    #[arg(long, value_delimiter = ',')]
    overlap: Vec<String>,
    /// Decoders (comma list: auto, native, generic).
    #[arg(long, value_delimiter = ',')]
    decoder: Vec<String>,
    /// CPU threads (comma list).
    #[arg(short = 't', long, value_delimiter = ',')]
    threads: Vec<String>,
    /// Reads in flight (comma list).
    #[arg(long, value_delimiter = ',')]
    io_threads: Vec<String>,
    /// Widest prefill micro-batch (comma list).
    #[arg(long, value_delimiter = ',')]
    ubatch: Vec<String>,
    /// Output: md, csv, json or jsonl (one object per row).
    #[arg(short = 'o', long, default_value = "md")]
    output: Format,
    /// More `bmoe run` flags for every row, as one string (e.g. "--moe-stream on --dense-weights mmap").
    #[arg(long, allow_hyphen_values = true)]
    run_args: Option<String>,
    /// Seed of the synthetic prompt tokens.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Every row with its experts spread over these hosts (`bmoe run --rpc`).
    #[command(flatten)]
    rpc: crate::rpc::RpcArgs,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Format {
    Md,
    Csv,
    Json,
    Jsonl,
}

/// `bmoe run`'s flags, parsed from a row's argv.
#[derive(clap::Parser)]
#[command(no_binary_name = true, name = "bmoe", bin_name = "bmoe run")]
struct RowArgs {
    #[command(flatten)]
    run: crate::run::Args,
}

/// One row: a combination of knobs and one test.
struct Row {
    knobs: Vec<(&'static str, String)>,
    test: Test,
    /// Filled by the first measurement: what the engine resolved.
    resolved: Option<Resolved>,
    tok_s: Vec<f64>,
    read_mib: Vec<f64>,
    stall_s: Vec<f64>,
}

#[derive(Clone, Copy)]
enum Test {
    Pp(usize),
    Tg(usize),
}

impl Test {
    fn name(self) -> String {
        match self {
            Test::Pp(n) => format!("pp{n}"),
            Test::Tg(n) => format!("tg{n}"),
        }
    }
}

#[derive(Clone)]
struct Resolved {
    mode: String,
    budget_mib: Option<f64>,
    overlap: String,
    threads: usize,
    lanes: Option<usize>,
    ubatch: u32,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.repetitions == 0 {
        bail!("-r 0: at least one repetition");
    }
    let tests: Vec<Test> = args
        .n_prompt
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| Test::Pp(n))
        .chain(args.n_gen.iter().filter(|&&n| n > 0).map(|&n| Test::Tg(n)))
        .collect();
    if tests.is_empty() {
        bail!("no test: -p and -n are all 0");
    }
    let extra: Vec<String> = args.run_args.as_deref().unwrap_or("").split_whitespace().map(String::from).collect();
    let gives_ctx = extra.iter().any(|a| a == "-c" || a.starts_with("--ctx-size") || a.starts_with("-c="));
    let need_ctx = tests.iter().map(|t| match *t {
        Test::Pp(n) => n,
        Test::Tg(n) => n + 1,
    });
    // A context of at least 512, so that the default micro-batch is not clamped by it.
    let ctx = need_ctx.max().unwrap_or(1).max(512);
    // The cartesian product of the knob lists, in the order given.
    let lists: [(&'static str, &'static str, &Vec<String>); 6] = [
        ("cache_mb", "--cache-mb", &args.cache_mb),
        ("decoder", "--decoder", &args.decoder),
        ("overlap", "--overlap", &args.overlap),
        ("threads", "-t", &args.threads),
        ("io_threads", "--io-threads", &args.io_threads),
        ("ubatch", "--ubatch", &args.ubatch),
    ];
    let mut combos: Vec<Vec<(&'static str, &'static str, String)>> = vec![Vec::new()];
    for (name, flag, values) in lists {
        if values.is_empty() {
            continue;
        }
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((name, flag, v.clone()));
                    c
                })
            })
            .collect();
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut argvs: Vec<Vec<String>> = Vec::new();
    for combo in &combos {
        let mut argv = vec!["-m".to_string(), args.model.display().to_string()];
        if !gives_ctx {
            argv.extend(["-c".into(), ctx.to_string()]);
        }
        argv.extend(extra.iter().cloned());
        argv.extend(args.rpc.argv());
        for (_, flag, v) in combo {
            argv.extend([(*flag).to_string(), v.clone()]);
        }
        // Checked once, before anything runs.
        check_row(&argv, combo.iter().map(|(_, f, v)| (*f, v.as_str())), &tests)?;
        for &test in &tests {
            rows.push(Row {
                knobs: combo.iter().map(|(n, _, v)| (*n, v.clone())).collect(),
                test,
                resolved: None,
                tok_s: Vec::new(),
                read_mib: Vec::new(),
                stall_s: Vec::new(),
            });
            argvs.push(argv.clone());
        }
    }
    let signals = Signals::install(CancelToken::default()).context("installing the signal handlers")?;
    let total = rows.len() * args.repetitions;
    let mut done = 0;
    for rep in 0..args.repetitions {
        for i in 0..rows.len() {
            done += 1;
            if let Err(e) = measure(&args, &mut rows[i], &argvs[i], rep, &signals, (done, total)) {
                // A failure after some measurements (the model deleted, the disk gone): the
                // rows measured so far are printed, then the error, not lost with it.
                rows.retain(|r| !r.tok_s.is_empty());
                if e.downcast_ref::<Exit>().is_some() || rows.is_empty() {
                    return Err(e);
                }
                print!("{}", render(&args, &rows)?);
                return Err(e.context(format!(
                    "measurement {done} of {total} (the rows measured before it are printed above)"
                )));
            }
        }
    }
    print!("{}", render(&args, &rows)?);
    Ok(())
}

/// One measurement of `row` (repetition `rep`; `at` = (this one, of how many), for the
/// progress line).
fn measure(
    args: &Args,
    row: &mut Row,
    argv: &[String],
    rep: usize,
    signals: &Signals,
    at: (usize, usize),
) -> anyhow::Result<()> {
    let (done, total) = at;
    let r = RowArgs::try_parse_from(argv).expect("checked above").run;
    let model = r.model.clone().context("-m")?;
    let mut engine = r.builder(&model)?.cancel(signals.cancel.clone()).open()?;
    if row.resolved.is_none() {
        row.resolved = Some(resolve(engine.report()));
    }
    let n_vocab = engine.tokenizer().n_vocab() as u64;
    let mut rng = args.seed ^ 0x9e37_79b9_7f4a_7c15 ^ (rep as u64) << 32;
    let mut token = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n_vocab) as i32
    };
    let t0 = engine.telemetry();
    let (n, secs) = match row.test {
        Test::Pp(n) => {
            let prompt: Vec<i32> = (0..n).map(|_| token()).collect();
            let t = Instant::now();
            engine.eval(&prompt)?;
            (n, t.elapsed().as_secs_f64())
        }
        Test::Tg(n) => {
            // Greedy through the generation loop (so that speculative decoding, when a row
            // asks for it, drafts): a one-token prompt, then n steps, timed.
            let argmax = |l: &[f32]| (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap_or(0) as i32;
            let params = GenParams { n_predict: n + 1, ignore_eos: true };
            let g = engine.generate(&[token()], &params, &mut |l| argmax(l), &mut |_| Control::Continue)?;
            (g.step_s.len(), g.step_s.iter().sum())
        }
    };
    if signals.cancel.is_cancelled() {
        return Err(Exit(signals.exit_code()).into());
    }
    let t1 = engine.telemetry();
    // Tg's counters include its one-token prompt: small against n steps, and the
    // same for every row.
    if let (Some(a), Some(b)) = (t0.provider, t1.provider) {
        row.read_mib.push((b.bytes_read - a.bytes_read) as f64 / (1u64 << 20) as f64);
        row.stall_s.push(b.io_s - a.io_s);
    }
    let tps = n as f64 / secs.max(1e-9);
    row.tok_s.push(tps);
    eprintln!(
        "bench: [{done}/{total}] rep {} {} {}: {tps:.2} tok/s",
        rep + 1,
        row.test.name(),
        row.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    );
    Ok(())
}

/// One row's flags, before anything runs: they parse, the engine's builder takes them (every
/// knob against the model and the machine), the knob lists mean something in the row's mode
/// (a list of cache sizes where nothing streams measures one thing many times), and every test
/// fits the row's context.
fn check_row<'a>(
    argv: &[String],
    knobs: impl Iterator<Item = (&'a str, &'a str)>,
    tests: &[Test],
) -> anyhow::Result<()> {
    let flags = argv.join(" ");
    let r = RowArgs::try_parse_from(argv).map_err(|e| anyhow::anyhow!("a row's flags ({flags}): {e}"))?.run;
    let model = r.model.clone().context("-m")?;
    let checked = r.builder(&model)?.check().with_context(|| format!("a row's flags ({flags})"))?;
    if !checked.streams {
        let ignored = r.ignored_stream_flags();
        if let Some((flag, v)) = knobs.into_iter().find(|(f, _)| ignored.contains(f)) {
            bail!(
                "{flag} {v} in a row where nothing streams ({flags}): the rows would differ in a knob that is \
                 ignored; drop the list, or the flag that stops streaming"
            );
        }
    }
    for t in tests {
        let need = match *t {
            Test::Pp(n) => n,
            Test::Tg(n) => n + 1,
        };
        if need > r.ctx as usize {
            bail!(
                "{} needs a context of {need} tokens, but the row gives -c {} ({flags}): raise -c in --run-args, or \
                 leave it out (bench then sizes the context to the longest test)",
                t.name(),
                r.ctx
            );
        }
    }
    Ok(())
}

fn resolve(r: &bmoe::Report) -> Resolved {
    use bmoe::Mode;
    let (mode, budget_mib, overlap, lanes) = match &r.mode {
        Mode::Streaming(s) => (
            if s.generic.is_some() { "streaming (generic)" } else { "streaming" }.to_string(),
            Some(s.pool_bytes as f64 / (1u64 << 20) as f64),
            s.overlap.name().to_string(),
            Some(s.lanes),
        ),
        Mode::Resident => ("resident".into(), None, "-".into(), None),
        Mode::Llama { .. } => ("llama.cpp".into(), None, "-".into(), None),
    };
    Resolved { mode, budget_mib, overlap, threads: r.threads, lanes, ubatch: r.n_ubatch }
}

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let median = if s.len() % 2 == 1 { s[s.len() / 2] } else { (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0 };
    (mean, sd, median)
}

/// The machine: build, CPU, the model's disk, kernel, and what this command does not control.
fn system(model: &std::path::Path) -> Vec<(&'static str, String)> {
    let info = bmoe::build_info();
    let cpu = telemetry::cpu_model().unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let kernel = telemetry::kernel_release().unwrap_or_else(|| "unknown".into());
    vec![
        ("build", format!("{} (git {}), ggml {}", info.version, info.git_rev, info.ggml_version)),
        ("cpu", format!("{cpu}, {cores} usable")),
        ("disk", disk(model)),
        ("kernel", kernel),
        (
            "model",
            format!("{} ({:.2} GB)", model.display(), std::fs::metadata(model).map_or(0, |m| m.len()) as f64 / 1e9),
        ),
        (
            "page cache",
            "not dropped, RAM not held (each measurement opens the engine anew: the expert cache starts cold; \
             past RAM, use bmoe-bench protocol)"
                .into(),
        ),
    ]
}

/// The model's block device from /sys/block: its name, model and whether it is rotational.
fn disk(model: &std::path::Path) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(meta) = std::fs::metadata(model) else { return "unknown".into() };
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let Ok(mut path) = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")) else {
        return format!("unknown (device {major}:{minor} not in /sys/dev/block)");
    };
    if path.join("partition").exists() {
        path.pop();
    }
    let read = |f: &str| std::fs::read_to_string(path.join(f)).ok().map(|s| s.trim().to_string());
    let name = path.file_name().map_or("?".into(), |n| n.to_string_lossy().into_owned());
    let what = read("device/model").filter(|s| !s.is_empty()).unwrap_or_else(|| "no model string".into());
    let rot = match read("queue/rotational").as_deref() {
        Some("0") => "non-rotational",
        Some("1") => "rotational as the kernel reports it",
        _ => "rotational unknown",
    };
    format!("{name} ({what}, {rot})")
}

fn row_json(r: &Row) -> Value {
    let (mean, sd, median) = stats(&r.tok_s);
    let res = r.resolved.clone().expect("measured");
    let knobs: serde_json::Map<String, Value> = r.knobs.iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect();
    let read = (!r.read_mib.is_empty()).then(|| stats(&r.read_mib).2);
    let stall = (!r.stall_s.is_empty()).then(|| stats(&r.stall_s).2);
    json!({
        "test": r.test.name(), "knobs": knobs, "mode": res.mode, "budget_MiB": res.budget_mib,
        "overlap": res.overlap, "threads": res.threads, "io_threads": res.lanes, "ubatch": res.ubatch,
        "reps": r.tok_s.len(), "tok_s_mean": mean, "tok_s_sd": sd, "tok_s_median": median, "tok_s": r.tok_s,
        "read_MiB_median": read, "stall_s_median": stall,
    })
}

fn render(args: &Args, rows: &[Row]) -> anyhow::Result<String> {
    let sys = system(&args.model);
    let mut s = String::new();
    match args.output {
        Format::Json => {
            let sysj: serde_json::Map<String, Value> = sys.iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect();
            let rows: Vec<Value> = rows.iter().map(row_json).collect();
            s = serde_json::to_string_pretty(&json!({ "system": sysj, "rows": rows }))? + "\n";
        }
        Format::Jsonl => {
            let sysj: serde_json::Map<String, Value> = sys.iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect();
            for r in rows {
                let mut j = row_json(r);
                j["system"] = Value::Object(sysj.clone());
                s += &(j.to_string() + "\n");
            }
        }
        Format::Csv => {
            for (k, v) in &sys {
                let _ = writeln!(s, "# {k}: {v}");
            }
            s += "test,cache_mb,overlap_asked,mode,budget_mib,overlap,threads,io_threads,ubatch,reps,tok_s_mean,tok_s_sd,tok_s_median,read_mib_median,stall_s_median\n";
            for r in rows {
                let j = row_json(r);
                let o =
                    |v: &Value| if v.is_null() { String::new() } else { v.to_string().trim_matches('"').to_string() };
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    r.test.name(),
                    o(&j["knobs"]["cache_mb"]),
                    o(&j["knobs"]["overlap"]),
                    o(&j["mode"]),
                    o(&j["budget_MiB"]),
                    o(&j["overlap"]),
                    o(&j["threads"]),
                    o(&j["io_threads"]),
                    o(&j["ubatch"]),
                    o(&j["reps"]),
                    o(&j["tok_s_mean"]),
                    o(&j["tok_s_sd"]),
                    o(&j["tok_s_median"]),
                    o(&j["read_MiB_median"]),
                    o(&j["stall_s_median"]),
                );
            }
        }
        Format::Md => {
            for (k, v) in &sys {
                let _ = writeln!(s, "- {k}: {v}");
            }
            s += "\n| test | mode | budget MiB | overlap | t | io | ub | t/s | median t/s | read MiB | stall s |\n";
            s += "|---|---|---|---|---|---|---|---|---|---|---|\n";
            for r in rows {
                let (mean, sd, median) = stats(&r.tok_s);
                let res = r.resolved.clone().expect("measured");
                let o = |v: Option<f64>, d: usize| v.map_or("–".into(), |x| format!("{x:.d$}"));
                let asked = r.knobs.iter().find(|(k, _)| *k == "cache_mb").map(|(_, v)| format!(" ({v})"));
                let _ = writeln!(
                    s,
                    "| {} | {} | {}{} | {} | {} | {} | {} | {:.2} ± {:.2} | {:.2} | {} | {} |",
                    r.test.name(),
                    res.mode,
                    o(res.budget_mib, 0),
                    asked.unwrap_or_default(),
                    res.overlap,
                    res.threads,
                    res.lanes.map_or("–".into(), |l| l.to_string()),
                    res.ubatch,
                    mean,
                    sd,
                    median,
                    o((!r.read_mib.is_empty()).then(|| stats(&r.read_mib).2), 1),
                    o((!r.stall_s.is_empty()).then(|| stats(&r.stall_s).2), 3),
                );
            }
            let _ = writeln!(s, "\n{} repetitions per row, interleaved; t/s is mean ± sd.", args.repetitions);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn stats_mean_sd_median() {
        let (m, sd, med) = super::stats(&[1.0, 2.0, 3.0, 10.0]);
        assert_eq!(m, 4.0);
        assert!((sd - (50.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(med, 2.5);
        assert_eq!(super::stats(&[5.0]), (5.0, 0.0, 5.0));
    }
}
