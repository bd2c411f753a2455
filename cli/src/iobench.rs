//! `bmoe iobench`: measures the read engine on one file with a given request
//! size, lanes and backend, the way fio measures the device, so the two can be
//! compared figure for figure (MiB/s, IOPS, latency p50/p99).

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
    let block = args.block as usize;
    let pool = Arc::new(BufferPool::new(lanes * block)?);
    let opts = EngineOptions { backend: kind, lanes, register: !args.no_register, direct: !args.no_odirect };
    let engine = ReadEngine::new(Arc::clone(&pool), opts)?;
    let file = engine.open(&args.file)?;
    let f = engine.file(file)?;
    let mut offsets = Offsets::new(args.pattern, file_len, args.block, args.seed, 0);
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
