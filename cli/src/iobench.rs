//! `bmoe iobench`: measures the read engine on one file with a given request
//! size, lanes and backend, the way fio measures the device, so the two can be
//! compared figure for figure (MiB/s, IOPS, latency p50/p99).
//!
//! `--vs-fio` judges the engine against fio on a disk whose speed drifts (a
//! virtual disk that throttles and recovers within minutes): short windows
//! alternate fio, the engine, fio, …, each engine window is compared only with
//! the mean of the two fio windows around it, and a pair whose two fio windows
//! differ by more than `--tolerance` is dropped (the disk moved under it). The
//! verdict is the median of the kept ratios, with their spread and the count of
//! dropped pairs.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use bmoe::engine::io::{BackendKind, BufferPool, EngineOptions, ReadEngine, Request, Ticket};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// File to read.
    #[arg(long)]
    file: PathBuf,
    /// Create the file with this many GiB of random (incompressible) bytes if it is missing.
    #[arg(long)]
    create_gib: Option<f64>,
    /// Request size (bytes, or with a K/M/G suffix: 256K, 3M).
    #[arg(long, default_value = "3M", value_parser = parse_size)]
    block: u64,
    /// Reads in flight (threads for pread and mmap).
    #[arg(long, default_value_t = 4)]
    lanes: usize,
    /// uring, pread, mmap (page faults through a mapping, page cache dropped first), or auto.
    #[arg(long, default_value = "uring")]
    backend: String,
    /// random (block-aligned offsets, like fio randread) or seq.
    #[arg(long, default_value = "random")]
    pattern: Pattern,
    /// Seconds to run.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Read with plain READ instead of READ_FIXED (do not register the pool).
    #[arg(long)]
    no_register: bool,
    /// Buffered reads instead of O_DIRECT.
    #[arg(long)]
    no_odirect: bool,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of a line of text.
    #[arg(long)]
    json: bool,
    /// Alternate fio and the engine in short windows and report the engine's ratio to the fio
    /// windows around each of its windows (see the module docs). Ignores --block, --lanes,
    /// --backend and --seconds: see --configs, --backends, --window.
    #[arg(long)]
    vs_fio: bool,
    /// With --vs-fio: request size × lanes pairs (fio's --bs and --iodepth).
    #[arg(long, default_value = "3M:4,256K:8", value_delimiter = ',')]
    configs: Vec<String>,
    /// With --vs-fio: the engine's backends, each judged on its own windows.
    #[arg(long, default_value = "uring,pread", value_delimiter = ',')]
    backends: Vec<String>,
    /// With --vs-fio: seconds of each window (fio's and the engine's).
    #[arg(long, default_value_t = 2.0)]
    window: f64,
    /// With --vs-fio: engine windows per backend and config.
    #[arg(long, default_value_t = 5)]
    pairs: usize,
    /// With --vs-fio: drop a pair when its two fio windows differ by more than this share
    /// (max / min − 1).
    #[arg(long, default_value_t = 0.10)]
    tolerance: f64,
    /// With --vs-fio: the fio binary.
    #[arg(long, default_value = "fio")]
    fio: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Pattern {
    Random,
    Seq,
}

/// `3M`, `256K`, `1G`, `4096`, `3MiB`: binary multiples.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num.trim().parse().map_err(|_| format!("not a size: `{s}` (try 3M, 256K, 4096)"))?;
    n.checked_mul(mul).filter(|&v| v > 0).ok_or_else(|| format!("size out of range: `{s}`"))
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Block-aligned offsets, random or sequential (wrapping), as fio picks them.
struct Offsets {
    rng: Rng,
    pattern: Pattern,
    next: u64,
    blocks: u64,
    block: u64,
}

impl Offsets {
    fn new(pattern: Pattern, file_len: u64, block: u64, seed: u64, start: u64) -> Self {
        Self {
            rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            pattern,
            next: start,
            blocks: file_len / block,
            block,
        }
    }
    fn next(&mut self) -> u64 {
        let b = match self.pattern {
            Pattern::Random => self.rng.next() % self.blocks,
            Pattern::Seq => {
                let b = self.next % self.blocks;
                self.next += 1;
                b
            }
        };
        b * self.block
    }
}

/// What one run measured.
struct Measured {
    reads: u64,
    elapsed: Duration,
    lat_us: Vec<u32>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.vs_fio {
        return vs_fio(&args);
    }
    if args.block == 0 || args.block % 4096 != 0 {
        bail!("--block must be a positive multiple of 4 KiB (O_DIRECT), got {}", args.block);
    }
    if let Some(gib) = args.create_gib {
        let bytes = gib * (1u64 << 30) as f64;
        if !(bytes.is_finite() && bytes >= args.block as f64 && bytes < u64::MAX as f64) {
            bail!("--create-gib {gib}: the file must hold at least one block of {} bytes", args.block);
        }
        if !args.file.exists() {
            create_random_file(&args.file, bytes as u64)?;
        }
    }
    let meta = std::fs::metadata(&args.file).with_context(|| format!("{}", args.file.display()))?;
    if !meta.is_file() {
        bail!("{}: {}, not a file to read", args.file.display(), bmoe::engine::gguf::file_kind(&meta));
    }
    let file_len = meta.len();
    if file_len < args.block {
        bail!("{} is {} bytes, smaller than one block of {}", args.file.display(), file_len, args.block);
    }
    let lanes = args.lanes;
    match bmoe::engine::io::check_lanes(lanes) {
        Err(why) => bail!("--lanes {lanes}: {why}"),
        Ok(Some(w)) => eprintln!("warning: --lanes {w}"),
        Ok(None) => {}
    }
    let run_for = Duration::from_secs_f64(args.seconds.max(0.1));
    let (backend, why, o_direct, registered, m) = match args.backend.as_str() {
        "mmap" => {
            let m = run_mmap(&args, lanes, run_for, file_len)?;
            (
                "mmap".to_string(),
                "page faults through a shared mapping, each block evicted after its touch".to_string(),
                false,
                false,
                m,
            )
        }
        other => {
            let kind: BackendKind = other.parse().map_err(anyhow::Error::msg)?;
            run_engine(&args, kind, lanes, run_for, file_len)?
        }
    };
    report(&args, &backend, &why, o_direct, registered, lanes, m)
}

fn run_engine(
    args: &Args,
    kind: BackendKind,
    lanes: usize,
    run_for: Duration,
    file_len: u64,
) -> anyhow::Result<(String, String, bool, bool, Measured)> {
    run_engine_with(args, args.block, args.seed, kind, lanes, run_for, file_len)
}

#[allow(clippy::too_many_arguments)]
fn run_engine_with(
    args: &Args,
    block: u64,
    seed: u64,
    kind: BackendKind,
    lanes: usize,
    run_for: Duration,
    file_len: u64,
) -> anyhow::Result<(String, String, bool, bool, Measured)> {
    let block_bytes = block;
    let block = block as usize;
    let pool = Arc::new(BufferPool::new(lanes * block)?);
    let opts = EngineOptions { backend: kind, lanes, register: !args.no_register, direct: !args.no_odirect };
    let engine = ReadEngine::new(Arc::clone(&pool), opts)?;
    let file = engine.open(&args.file)?;
    let f = engine.file(file)?;
    let mut offsets = Offsets::new(args.pattern, file_len, block_bytes, seed, 0);
    let req = |slot: usize, offset: u64| Request { file, offset, len: block, dest: slot * block };

    let mut lat_us = Vec::with_capacity(1 << 16);
    let start = Instant::now();
    let deadline = start + run_for;
    let first: Vec<Request> = (0..lanes).map(|s| req(s, offsets.next())).collect();
    let mut tickets: Vec<Ticket> = engine.submit(&first)?;
    let mut issued = vec![start; lanes];
    let mut reads = 0u64;
    let elapsed = loop {
        let i = engine.wait_any(&tickets).expect("lanes > 0");
        let now = Instant::now();
        tickets[i].wait()?;
        if now >= deadline {
            break now - start;
        }
        reads += 1;
        lat_us.push((now - issued[i]).as_micros().min(u32::MAX as u128) as u32);
        issued[i] = Instant::now();
        tickets[i] = engine.submit(&[req(i, offsets.next())])?.pop().expect("one ticket");
    };
    engine.wait_all(&tickets)?;
    let info = engine.info().clone();
    let registered = info.fixed_buffers;
    let why = format!("{}; {}", info.why, f.o_direct_reason());
    Ok((info.backend.to_string(), why, f.o_direct(), registered, Measured { reads, elapsed, lat_us }))
}

/// One engine window and the fio windows on either side of it (MiB/s).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    fio_before: f64,
    engine: f64,
    fio_after: f64,
}

impl Pair {
    /// The engine's MiB/s over the mean of its two fio windows.
    fn ratio(&self) -> f64 {
        self.engine / ((self.fio_before + self.fio_after) / 2.0)
    }

    /// Whether the two fio windows agree within `tolerance` (max / min − 1), so that the disk
    /// did not move under the engine's window.
    fn steady(&self, tolerance: f64) -> bool {
        let (lo, hi) = (self.fio_before.min(self.fio_after), self.fio_before.max(self.fio_after));
        lo > 0.0 && hi / lo - 1.0 <= tolerance + 1e-9
    }
}

/// The windowed verdict of one backend at one config.
#[derive(Clone, Debug, PartialEq)]
struct Verdict {
    kept: usize,
    dropped: usize,
    /// Median, min, max, first and third quartile of the kept ratios (None when none kept).
    median: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    q1: Option<f64>,
    q3: Option<f64>,
}

/// Judge `pairs`: keep those whose fio windows agree within `tolerance`, and summarise the kept
/// ratios.
fn judge(pairs: &[Pair], tolerance: f64) -> Verdict {
    let mut kept: Vec<f64> = pairs.iter().filter(|p| p.steady(tolerance)).map(Pair::ratio).collect();
    kept.sort_by(f64::total_cmp);
    let q = |p: f64| -> Option<f64> {
        if kept.is_empty() {
            return None;
        }
        // Linear interpolation between the closest ranks (numpy's default).
        let x = (kept.len() - 1) as f64 * p;
        let (i, f) = (x.floor() as usize, x - x.floor());
        Some(kept[i] + (kept[(i + 1).min(kept.len() - 1)] - kept[i]) * f)
    };
    Verdict {
        kept: kept.len(),
        dropped: pairs.len() - kept.len(),
        median: q(0.5),
        min: kept.first().copied(),
        max: kept.last().copied(),
        q1: q(0.25),
        q3: q(0.75),
    }
}

/// `3M:4` → (block bytes, lanes).
fn parse_config(s: &str) -> anyhow::Result<(u64, usize)> {
    let (b, l) = s.split_once(':').with_context(|| format!("--configs `{s}`: expected BLOCK:LANES, e.g. 3M:4"))?;
    let block = parse_size(b).map_err(anyhow::Error::msg)?;
    if block % 4096 != 0 {
        bail!("--configs `{s}`: the block must be a multiple of 4 KiB (O_DIRECT)");
    }
    let lanes: usize = l.trim().parse().ok().filter(|&n| n > 0).with_context(|| format!("--configs `{s}`: lanes"))?;
    Ok((block, lanes))
}

/// fio's MiB/s of O_DIRECT io_uring random reads of `block` at `depth` for `seconds`.
fn fio_window(fio: &Path, file: &Path, block: u64, depth: usize, seconds: f64) -> anyhow::Result<f64> {
    let out = std::process::Command::new(fio)
        .args([
            "--name=ref",
            &format!("--filename={}", file.display()),
            "--rw=randread",
            "--randrepeat=0",
            "--direct=1",
            "--ioengine=io_uring",
            &format!("--bs={block}"),
            &format!("--iodepth={depth}"),
            &format!("--runtime={}ms", (seconds * 1000.0).round() as u64),
            "--time_based",
            "--output-format=json",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running {} (install it: apt-get install fio)", fio.display()))?;
    if !out.status.success() {
        bail!("{} failed: {}", fio.display(), out.status);
    }
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).context("fio's JSON")?;
    let kib = j["jobs"][0]["read"]["bw"].as_f64().context("fio JSON without jobs[0].read.bw")?;
    Ok(kib / 1024.0)
}

/// `--vs-fio`: see the module docs.
fn vs_fio(args: &Args) -> anyhow::Result<()> {
    let configs: Vec<(u64, usize)> = args.configs.iter().map(|c| parse_config(c)).collect::<anyhow::Result<_>>()?;
    let backends: Vec<BackendKind> =
        args.backends.iter().map(|b| b.parse().map_err(anyhow::Error::msg)).collect::<anyhow::Result<_>>()?;
    if configs.is_empty() || backends.is_empty() || args.pairs == 0 {
        bail!("--vs-fio needs at least one config, one backend and one pair");
    }
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        bail!("--tolerance {}: a share, e.g. 0.10", args.tolerance);
    }
    if args.pattern != Pattern::Random {
        bail!("--vs-fio compares random reads (fio --rw=randread)");
    }
    let meta = std::fs::metadata(&args.file).with_context(|| format!("{}", args.file.display()))?;
    if !meta.is_file() {
        bail!("{}: {}, not a file to read", args.file.display(), bmoe::engine::gguf::file_kind(&meta));
    }
    let file_len = meta.len();
    let window = Duration::from_secs_f64(args.window.max(0.5));
    // Fresh offsets every run (as fio's --randrepeat=0): a disk or host cache must not learn them.
    let mut seed = args.seed
        ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let started = Instant::now();
    let mut results = Vec::new();
    for &(block, lanes) in &configs {
        if file_len < block * lanes as u64 {
            bail!("{} is {file_len} bytes, smaller than {lanes} blocks of {block}", args.file.display());
        }
        let name = |b: BackendKind| format!("{b:?}").to_lowercase();
        let mut pairs: Vec<Vec<Pair>> = vec![Vec::new(); backends.len()];
        let mut fio_all = Vec::new();
        let mut fio_prev = fio_window(&args.fio, &args.file, block, lanes, window.as_secs_f64())?;
        fio_all.push(fio_prev);
        eprintln!("iobench: {} x {lanes}: fio {fio_prev:.0} MiB/s", human(block));
        for _ in 0..args.pairs {
            for (bi, &kind) in backends.iter().enumerate() {
                seed = seed.wrapping_add(0x9E37_79B9);
                let (_, _, _, _, m) = run_engine_with(args, block, seed, kind, lanes, window, file_len)?;
                let engine = (m.reads * block) as f64 / (1u64 << 20) as f64 / m.elapsed.as_secs_f64();
                let fio_next = fio_window(&args.fio, &args.file, block, lanes, window.as_secs_f64())?;
                fio_all.push(fio_next);
                let p = Pair { fio_before: fio_prev, engine, fio_after: fio_next };
                eprintln!(
                    "iobench: {} x {lanes}: {} {engine:.0} MiB/s, fio {fio_next:.0}: {:.3}x the fio around it{}",
                    human(block),
                    name(kind),
                    p.ratio(),
                    if p.steady(args.tolerance) { "" } else { " (dropped: the fio windows differ)" }
                );
                pairs[bi].push(p);
                fio_prev = fio_next;
            }
        }
        for (bi, &kind) in backends.iter().enumerate() {
            results.push((block, lanes, name(kind), judge(&pairs[bi], args.tolerance), pairs[bi].clone()));
        }
        let mut sorted = fio_all.clone();
        sorted.sort_by(f64::total_cmp);
        eprintln!(
            "iobench: {} x {lanes}: fio over {} windows {:.0}..{:.0} MiB/s",
            human(block),
            sorted.len(),
            sorted[0],
            sorted[sorted.len() - 1]
        );
    }
    let mut out = std::io::stdout().lock();
    let f = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.3}"));
    if args.json {
        let rows: Vec<serde_json::Value> = results
            .iter()
            .map(|(block, lanes, backend, v, pairs)| {
                serde_json::json!({
                    "block": block, "lanes": lanes, "backend": backend,
                    "kept": v.kept, "dropped": v.dropped, "median_ratio": v.median,
                    "min_ratio": v.min, "max_ratio": v.max, "q1_ratio": v.q1, "q3_ratio": v.q3,
                    "windows": pairs.iter().map(|p| serde_json::json!({
                        "fio_before_mib_s": p.fio_before, "engine_mib_s": p.engine,
                        "fio_after_mib_s": p.fio_after, "ratio": p.ratio(), "kept": p.steady(args.tolerance),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let v = serde_json::json!({
            "file": args.file.display().to_string(), "window_s": window.as_secs_f64(),
            "pairs": args.pairs, "tolerance": args.tolerance, "wall_s": started.elapsed().as_secs_f64(),
            "results": rows,
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "| config | backend | pairs kept / dropped | median ratio | spread (min..max) | IQR | engine MiB/s (kept) | fio MiB/s around them |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|")?;
        for (block, lanes, backend, v, pairs) in &results {
            let kept: Vec<&Pair> = pairs.iter().filter(|p| p.steady(args.tolerance)).collect();
            let list = |g: fn(&Pair) -> f64| kept.iter().map(|p| format!("{:.0}", g(p))).collect::<Vec<_>>().join(", ");
            writeln!(
                out,
                "| {} x {lanes} | {backend} | {} / {} | {} | {}..{} | {}..{} | {} | {} |",
                human(*block),
                v.kept,
                v.dropped,
                f(v.median),
                f(v.min),
                f(v.max),
                f(v.q1),
                f(v.q3),
                list(|p| p.engine),
                list(|p| (p.fio_before + p.fio_after) / 2.0),
            )?;
        }
        writeln!(
            out,
            "\n{} s windows, {} per backend and config, a pair dropped when its fio windows differ by more than {:.0} %; {:.0} s in all",
            window.as_secs_f64(),
            args.pairs,
            args.tolerance * 100.0,
            started.elapsed().as_secs_f64()
        )?;
    }
    Ok(())
}

/// `3M`, `256K` for a multiple of a KiB or MiB.
fn human(b: u64) -> String {
    if b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else if b % (1 << 10) == 0 {
        format!("{}K", b >> 10)
    } else {
        b.to_string()
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn run_mmap(args: &Args, lanes: usize, run_for: Duration, file_len: u64) -> anyhow::Result<Measured> {
    use bmoe::engine::io::mapped::{drop_page_cache, MappedFile};
    drop_page_cache(&args.file)?;
    let map = MappedFile::open(&args.file)?;
    let fd = File::open(&args.file)?;
    let block = args.block as usize;
    let start = Instant::now();
    let deadline = start + run_for;
    let per_thread: Vec<(u64, Vec<u32>, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..lanes)
            .map(|t| {
                let (map, fd) = (&map, &fd);
                let mut offsets =
                    Offsets::new(args.pattern, file_len, args.block, args.seed + t as u64, (t as u64) * 997);
                s.spawn(move || {
                    let (mut reads, mut lat, mut sum) = (0u64, Vec::new(), 0u64);
                    loop {
                        let t0 = Instant::now();
                        if t0 >= deadline {
                            break;
                        }
                        let off = offsets.next() as usize;
                        sum = sum.wrapping_add(map.touch(off, block));
                        let t1 = Instant::now();
                        // A file smaller than RAM would soon be served from the page
                        // cache; evict what was read so every touch measures the disk.
                        let _ = map.evict(fd, off, block);
                        if t1 < deadline {
                            reads += 1;
                            lat.push((t1 - t0).as_micros().min(u32::MAX as u128) as u32);
                        }
                    }
                    (reads, lat, sum)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("mmap worker")).collect()
    });
    let elapsed = start.elapsed().min(run_for);
    let mut m = Measured { reads: 0, elapsed, lat_us: Vec::new() };
    for (r, l, _) in per_thread {
        m.reads += r;
        m.lat_us.extend(l);
    }
    // Leave the page cache as we found it for the next run.
    drop_page_cache(&args.file)?;
    Ok(m)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn run_mmap(_: &Args, _: usize, _: Duration, _: u64) -> anyhow::Result<Measured> {
    bail!("--backend mmap is implemented on Linux only")
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn report(
    args: &Args,
    backend: &str,
    why: &str,
    o_direct: bool,
    registered: bool,
    lanes: usize,
    mut m: Measured,
) -> anyhow::Result<()> {
    m.lat_us.sort_unstable();
    let secs = m.elapsed.as_secs_f64();
    let bytes = m.reads * args.block;
    let mib_s = bytes as f64 / (1u64 << 20) as f64 / secs;
    let iops = m.reads as f64 / secs;
    let (p50, p99) = (percentile(&m.lat_us, 0.50), percentile(&m.lat_us, 0.99));
    let pattern = match args.pattern {
        Pattern::Random => "random",
        Pattern::Seq => "seq",
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "backend": backend, "why": why, "o_direct": o_direct, "registered": registered,
            "block": args.block, "lanes": lanes, "pattern": pattern, "seconds": secs,
            "reads": m.reads, "bytes": bytes, "mib_s": mib_s, "iops": iops, "p50_us": p50, "p99_us": p99,
            "file": args.file.display().to_string(),
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "iobench: {backend} o_direct={} registered={} block={} lanes={lanes} {pattern}: {mib_s:.1} MiB/s, {iops:.1} IOPS, \
             latency p50 {p50} us p99 {p99} us ({} reads in {secs:.2} s)",
            u8::from(o_direct),
            u8::from(registered),
            args.block,
            m.reads
        )?;
        eprintln!("iobench: {why}");
    }
    Ok(())
}

fn create_random_file(path: &Path, bytes: u64) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("partial");
    let mut f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    // A failed write (a full disk) leaves no partial file behind.
    struct Cleanup<'a>(&'a Path, bool);
    impl Drop for Cleanup<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
            }
        }
    }
    let mut cleanup = Cleanup(&tmp, false);
    let mut rng = Rng(0x5EED_u64 | 1);
    let mut buf = vec![0u8; 8 << 20];
    let mut left = bytes;
    eprintln!("iobench: creating {} ({:.2} GiB of random bytes)", path.display(), bytes as f64 / (1u64 << 30) as f64);
    while left > 0 {
        for c in buf.chunks_exact_mut(8) {
            c.copy_from_slice(&rng.next().to_le_bytes());
        }
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n]).with_context(|| format!("writing {}", tmp.display()))?;
        left -= n as u64;
    }
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    cleanup.1 = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("3M"), Ok(3 << 20));
        assert_eq!(parse_size("256K"), Ok(256 << 10));
        assert_eq!(parse_size("256KiB"), Ok(256 << 10));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("3X").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn pairs_are_judged_against_their_own_fio_windows() {
        let p = |a, e, b| Pair { fio_before: a, engine: e, fio_after: b };
        // Ratios 1.0, 0.9 and 1.1 kept; the 1000 → 1500 pair dropped (50 % apart), however
        // good its ratio looks.
        let pairs =
            [p(1000.0, 1000.0, 1000.0), p(1000.0, 945.0, 1100.0), p(1000.0, 3000.0, 1500.0), p(500.0, 550.0, 500.0)];
        let v = judge(&pairs, 0.10);
        assert_eq!((v.kept, v.dropped), (3, 1));
        assert!((v.median.unwrap() - 1.0).abs() < 1e-12, "{v:?}");
        assert!((v.min.unwrap() - 0.9).abs() < 1e-12 && (v.max.unwrap() - 1.1).abs() < 1e-12, "{v:?}");
        assert!((v.q1.unwrap() - 0.95).abs() < 1e-12 && (v.q3.unwrap() - 1.05).abs() < 1e-12, "{v:?}");
        // 10 % apart is still steady; nothing kept gives no verdict.
        assert!(p(1000.0, 1.0, 1100.0).steady(0.10));
        let none = judge(&[p(100.0, 100.0, 200.0)], 0.10);
        assert_eq!((none.kept, none.dropped, none.median), (0, 1, None));
    }

    #[test]
    fn configs_parse() {
        assert_eq!(parse_config("3M:4").unwrap(), (3 << 20, 4));
        assert_eq!(parse_config("256K:8").unwrap(), (256 << 10, 8));
        assert!(parse_config("3M").is_err());
        assert!(parse_config("3M:0").is_err());
        assert!(parse_config("1000:4").is_err());
        assert_eq!(human(3 << 20), "3M");
        assert_eq!(human(256 << 10), "256K");
    }

    #[test]
    fn offsets_are_aligned_and_in_file() {
        let mut o = Offsets::new(Pattern::Random, 10 << 20, 3 << 20, 1, 0);
        for _ in 0..1000 {
            let x = o.next();
            assert_eq!(x % (3 << 20), 0);
            assert!(x + (3 << 20) <= 10 << 20);
        }
        let mut s = Offsets::new(Pattern::Seq, 10 << 20, 3 << 20, 1, 0);
        assert_eq!((0..4).map(|_| s.next()).collect::<Vec<_>>(), vec![0, 3 << 20, 6 << 20, 0]);
    }
}
