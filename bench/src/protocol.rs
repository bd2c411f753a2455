//! The benchmark protocol: a matrix of cells (one knob moved at a time), each run from a
//! measured condition (page cache dropped, MemAvailable back over a threshold within a bounded
//! wait), interleaved round by round (A B A B) so drift does not pose as a difference, with the
//! disk's reference (fio at the engine's request size and lanes) before and after.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use crate::report::{self, CellSummary, TokenRow};
use crate::sys::{self, DiskCounter};

const MIB: f64 = (1u64 << 20) as f64;

/// One configuration of the engine: `bmoe run` arguments added to the common ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub name: String,
    pub args: Vec<String>,
}

impl Cell {
    /// `NAME=ARGS` (ARGS split on whitespace).
    ///
    /// # Errors
    /// Without `=`, or with an empty name.
    pub fn parse(spec: &str) -> anyhow::Result<Self> {
        let (name, args) = spec.split_once('=').context("a cell is NAME=ARGS, e.g. big-cache=--cache-mb 6000")?;
        if name.trim().is_empty() {
            bail!("cell `{spec}`: empty name");
        }
        Ok(Self { name: name.trim().into(), args: args.split_whitespace().map(String::from).collect() })
    }

    /// Whether this cell runs llama.cpp rather than our decoder.
    pub fn is_llama(&self) -> bool {
        self.args.windows(2).any(|w| w[0] == "--engine" && w[1].starts_with("llama"))
    }

    /// Whether this cell is our decoder resident (the reference for the text).
    pub fn is_resident(&self) -> bool {
        self.args.windows(2).any(|w| w[0] == "--moe-stream" && w[1] == "off")
    }
}

/// The cells every protocol has unless told otherwise.
pub fn default_cells() -> Vec<Cell> {
    [
        ("llama-mmap", "--engine llama-plain"),
        ("resident", "--moe-stream off"),
        ("stream-nocache", "--cache-mb 0"),
        ("stream-auto", "--cache-mb auto"),
        ("overlap", "--cache-mb auto --overlap"),
    ]
    .iter()
    .map(|(n, a)| Cell::parse(&format!("{n}={a}")).expect("valid"))
    .collect()
}

/// The disk reference: fio reads (random, or sequential for a prefill) at the engine's request
/// size and lanes.
#[derive(Clone, Debug)]
pub struct Fio {
    pub block: u64,
    pub depth: usize,
    pub seconds: u32,
    /// Also a window of this many seconds before every cell: each run is then judged against
    /// the fio windows on either side of it.
    pub every_cell: Option<u32>,
    /// fio's `--rw`: `randread` or `read`.
    pub rw: String,
}

impl Fio {
    /// MiB/s of O_DIRECT random reads over `file`.
    ///
    /// # Errors
    /// fio missing or failing, or its JSON not as expected.
    pub fn measure(&self, file: &Path) -> anyhow::Result<f64> {
        self.measure_for(file, self.seconds)
    }

    /// As [`Self::measure`], for `seconds`.
    ///
    /// # Errors
    /// As [`Self::measure`].
    pub fn measure_for(&self, file: &Path, seconds: u32) -> anyhow::Result<f64> {
        let out = Command::new("fio")
            .args([
                "--name=ref",
                &format!("--filename={}", file.display()),
                &format!("--rw={}", self.rw),
                "--randrepeat=0",
                "--direct=1",
                "--ioengine=io_uring",
                &format!("--bs={}", self.block),
                &format!("--iodepth={}", self.depth),
                &format!("--runtime={seconds}"),
                "--time_based",
                "--output-format=json",
            ])
            .stderr(Stdio::null())
            .output()
            .context("running fio (install it: apt-get install fio)")?;
        if !out.status.success() {
            bail!("fio failed: {}", out.status);
        }
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).context("fio's JSON")?;
        let kib = j["jobs"][0]["read"]["bw"].as_f64().context("fio JSON without jobs[0].read.bw")?;
        Ok(kib / 1024.0)
    }
}

/// What a protocol runs.
#[derive(Clone, Debug)]
pub struct Protocol {
    /// The `bmoe` binary.
    pub bmoe: PathBuf,
    pub model: PathBuf,
    /// Arguments of every cell (prompt, -n, sampling, threads…).
    pub common: Vec<String>,
    pub cells: Vec<Cell>,
    pub rounds: usize,
    pub out: PathBuf,
    /// Drop the page cache before each cell.
    pub drop_caches: bool,
    /// Longest wait for MemAvailable to come back before a cell.
    pub settle: Duration,
    /// MemAvailable a cell waits for (bytes; default: the level after the first drop, less 256 MiB).
    pub mem_threshold: Option<u64>,
    pub fio: Option<Fio>,
    /// How the protocol was started (for the report).
    pub command_line: String,
    /// What `--ram-gb` did, for the report.
    pub ram_note: String,
}

/// Something the protocol checks before each cell (the RAM holder being alive, say):
/// `None` if fine, else what is wrong (recorded as a flag on the run).
pub type Check<'a> = &'a mut dyn FnMut() -> Option<String>;

/// One cell's one round.
#[derive(Clone, Debug, Default)]
pub struct CellRun {
    pub cell: usize,
    pub round: usize,
    pub error: Option<String>,
    pub waited_s: f64,
    pub gave_up_waiting: bool,
    pub mem_entry: Option<u64>,
    pub mem_floor: Option<u64>,
    pub summary: serde_json::Value,
    pub tokens: Vec<TokenRow>,
    /// The generated text's bytes.
    pub text: Vec<u8>,
    /// Bytes the block device read between the first token and the end.
    pub disk_decode_bytes: Option<u64>,
    pub wall_s: f64,
    /// What the protocol's check found wrong after the run, if anything.
    pub check: Option<String>,
    /// With fio before every cell: the windows just before and just after this run (MiB/s).
    pub fio_around: Option<(f64, f64)>,
}

/// Everything a protocol measured.
#[derive(Debug)]
pub struct Outcome {
    pub runs: Vec<CellRun>,
    pub cells: Vec<CellSummary>,
    pub fio_mib_s: Vec<f64>,
    pub flags: Vec<String>,
    pub notes: Vec<String>,
    pub markdown: String,
}

impl Protocol {
    /// Run every cell `rounds` times, interleaved, and write the CSVs, logs, summary and plots
    /// under `out`. Progress goes to stderr.
    ///
    /// # Errors
    /// If the output folder cannot be written or the engine cannot be started at all.
    pub fn run(&self, check: Check<'_>) -> anyhow::Result<Outcome> {
        let cells_dir = self.out.join("cells");
        std::fs::create_dir_all(&cells_dir).with_context(|| format!("creating {}", cells_dir.display()))?;
        let mut notes = Vec::new();
        let disk = DiskCounter::for_path(&self.model);
        if disk.is_none() {
            notes.push(format!("no block-device counter for {}: llama.cpp's bytes unmeasured", self.model.display()));
        }
        let mut fio_mib_s = Vec::new();
        let mut fio_ref = |when: &str, notes: &mut Vec<String>| {
            if let Some(f) = &self.fio {
                eprintln!("bmoe-bench: fio reference ({when}): bs {} depth {} for {} s", f.block, f.depth, f.seconds);
                match f.measure(&self.model) {
                    Ok(v) => {
                        eprintln!("bmoe-bench: fio {v:.0} MiB/s");
                        fio_mib_s.push(v);
                    }
                    Err(e) => notes.push(format!("fio ({when}): {e:#}")),
                }
            }
        };
        fio_ref("start", &mut notes);
        let mut threshold = self.mem_threshold;
        if self.drop_caches {
            if let Err(e) = sys::drop_caches() {
                notes.push(format!("page cache not dropped ({e}): cells start from whatever is cached"));
            }
        }
        if threshold.is_none() {
            threshold = sys::mem_available().map(|m| m.saturating_sub(256 << 20));
        }
        let mut runs: Vec<CellRun> = Vec::new();
        let total = self.rounds * self.cells.len();
        // fio between cells: the window before the first run, then one after each.
        let every = self.fio.as_ref().and_then(|f| f.every_cell.map(|s| (f, s)));
        let window = |notes: &mut Vec<String>| -> Option<f64> {
            let (f, secs) = every?;
            match f.measure_for(&self.model, secs) {
                Ok(v) => {
                    eprintln!("bmoe-bench: fio window {v:.0} MiB/s");
                    Some(v)
                }
                Err(e) => {
                    notes.push(format!("fio window: {e:#}"));
                    None
                }
            }
        };
        let mut before = window(&mut notes);
        let mut windows: Vec<f64> = before.into_iter().collect();
        for round in 0..self.rounds {
            // ABBA: every other round runs the cells in reverse order, so that a disk that
            // drifts (this one throttles within minutes) is not measured as a cell's difference.
            let order: Vec<usize> = match round % 2 {
                0 => (0..self.cells.len()).collect(),
                _ => (0..self.cells.len()).rev().collect(),
            };
            for (ci, cell) in order.into_iter().map(|ci| (ci, &self.cells[ci])) {
                eprintln!(
                    "bmoe-bench: [{}/{total}] round {} cell {} ({})",
                    runs.len() + 1,
                    round + 1,
                    cell.name,
                    cell.args.join(" ")
                );
                let mut r = self.run_cell(ci, round, disk.as_ref(), threshold, &cells_dir);
                r.check = check();
                if every.is_some() {
                    let after = window(&mut notes);
                    windows.extend(after);
                    r.fio_around = before.zip(after);
                    before = after;
                }
                match &r.error {
                    Some(e) => eprintln!("bmoe-bench:   failed: {e}"),
                    None => eprintln!(
                        "bmoe-bench:   {:.3} tok/s, {} decode tokens, {:.0} s",
                        r.summary["tok/s"].as_f64().unwrap_or(f64::NAN),
                        r.tokens.len(),
                        r.wall_s
                    ),
                }
                runs.push(r);
            }
        }
        fio_ref("end", &mut notes);
        if !windows.is_empty() {
            let list: Vec<String> = windows.iter().map(|v| format!("{v:.0}")).collect();
            notes.push(format!("fio windows between cells (MiB/s, in order): {}", list.join(", ")));
        }
        let fio = report::median(&fio_mib_s);
        let cells = self.summarise(&runs, fio);
        let per_round_majflt: Vec<(String, Vec<f64>)> = self
            .cells
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                let v = runs
                    .iter()
                    .filter(|r| r.cell == ci && r.error.is_none())
                    .filter_map(|r| r.summary["majflt/tok"].as_f64())
                    .collect();
                (c.name.clone(), v)
            })
            .collect();
        let compute_by_k: Vec<(String, u32, f64)> = self
            .cells
            .iter()
            .zip(&cells)
            .filter_map(|(c, s)| {
                let k = c.args.windows(2).find(|w| w[0] == "--n-expert-used")?.get(1)?.parse().ok()?;
                Some((c.name.clone(), k, s.compute_ms?))
            })
            .collect();
        let mut flags = report::flags(&per_round_majflt, &compute_by_k);
        // Compute is the same work every token: spikes are the machine (CPU or memory pressure).
        for (c, ci) in self.cells.iter().zip(0..) {
            let compute: Vec<f64> = runs
                .iter()
                .filter(|r| r.cell == ci)
                .flat_map(|r| r.tokens.iter().filter_map(|t| t.compute_ms))
                .collect();
            if let (Some(med), Some(p95)) = (report::median(&compute), report::quantile(&compute, 0.95)) {
                if p95 > 4.0 * med {
                    flags.push(format!(
                        "{}: compute per token p95 {p95:.0} ms vs median {med:.0} ms: the machine interfered (CPU or memory pressure); prefer the medians",
                        c.name
                    ));
                }
            }
        }
        for r in runs.iter() {
            if let Some(why) = r.error.as_deref().filter(|e| e.starts_with("stopped early")) {
                flags.push(format!(
                    "{} round {}: {why}: left out of the medians (its figures are of fewer tokens than asked)",
                    self.cells[r.cell].name,
                    r.round + 1
                ));
            }
        }
        for r in runs.iter() {
            if let Some(why) = &r.check {
                flags.push(format!("{} round {}: {why}", self.cells[r.cell].name, r.round + 1));
            }
        }
        for r in runs.iter().filter(|r| r.gave_up_waiting) {
            flags.push(format!(
                "{} round {}: MemAvailable did not come back within {:.0} s (entered at {:.0} MiB)",
                md_cell(&self.cells[r.cell].name),
                r.round + 1,
                self.settle.as_secs_f64(),
                r.mem_entry.unwrap_or(0) as f64 / MIB
            ));
        }
        let markdown = self.markdown(&runs, &cells, &fio_mib_s, &flags, &notes);
        std::fs::write(self.out.join("summary.md"), &markdown)?;
        std::fs::write(self.out.join("summary.csv"), report::csv(&cells))?;
        let title =
            format!("{} ({} rounds)", self.model.file_name().unwrap_or_default().to_string_lossy(), self.rounds);
        std::fs::write(self.out.join("tok_s.svg"), report::bars_svg(&title, &cells))?;
        let series: Vec<(String, Vec<f64>)> = runs
            .iter()
            .filter(|r| r.error.is_none())
            .map(|r| {
                (format!("{} r{}", self.cells[r.cell].name, r.round + 1), r.tokens.iter().map(|t| t.wall_ms).collect())
            })
            .collect();
        std::fs::write(self.out.join("tokens.svg"), report::series_svg(&title, &series))?;
        Ok(Outcome { runs, cells, fio_mib_s, flags, notes, markdown })
    }

    fn run_cell(
        &self,
        ci: usize,
        round: usize,
        disk: Option<&DiskCounter>,
        threshold: Option<u64>,
        dir: &Path,
    ) -> CellRun {
        let cell = &self.cells[ci];
        let mut run = CellRun { cell: ci, round, ..CellRun::default() };
        if self.drop_caches {
            let _ = sys::drop_caches();
        }
        let t0 = Instant::now();
        if let Some(th) = threshold {
            while sys::mem_available().is_some_and(|m| m < th) {
                if t0.elapsed() >= self.settle {
                    run.gave_up_waiting = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        }
        run.waited_s = t0.elapsed().as_secs_f64();
        run.mem_entry = sys::mem_available();
        // NAME-rR.EXT, whole (a name with a dot, `drop-0.5`, is not a stem and an extension).
        let file = |ext: &str| dir.join(format!("{}-r{}.{ext}", cell.name, round + 1));
        let csv = file("csv");
        let started = Instant::now();
        let result = self.spawn(cell, &csv, &file("log"), disk, &mut run);
        run.wall_s = started.elapsed().as_secs_f64();
        if let Err(e) = result {
            run.error = Some(format!("{e:#}"));
            return run;
        }
        let _ = std::fs::write(file("txt"), &run.text);
        // A run that stopped before its -n measured fewer tokens than its cell says: it is not
        // one of the cell's runs (counted as failed, left out of the medians, flagged).
        match run.summary.get("stop_reason").and_then(|v| v.as_str()) {
            Some("length") => {}
            why => {
                run.error = Some(format!("stopped early ({})", why.unwrap_or("stop reason not reported")));
                return run;
            }
        }
        match std::fs::read_to_string(&csv).map_err(|e| e.to_string()).and_then(|t| report::parse_token_csv(&t)) {
            Ok(t) => run.tokens = t,
            Err(e) => run.error = Some(format!("{}: {e}", csv.display())),
        }
        run
    }

    fn spawn(
        &self,
        cell: &Cell,
        csv: &Path,
        log: &Path,
        disk: Option<&DiskCounter>,
        run: &mut CellRun,
    ) -> anyhow::Result<()> {
        let mut cmd = Command::new(&self.bmoe);
        cmd.arg("run").arg("-m").arg(&self.model).args(&self.common).args(&cell.args);
        cmd.arg("--csv").arg(csv).args(["--json", "--progress"]);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", self.bmoe.display()))?;
        let mut log_file = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        writeln!(log_file, "# {:?}", cmd)?;
        // stderr: the log; the first token's line marks the end of prefill for the disk counter.
        let at_first = Arc::new(Mutex::new(None::<u64>));
        let stderr = child.stderr.take().expect("piped");
        let (disk2, at2, name) = (disk.cloned(), at_first.clone(), cell.name.clone());
        let n_predict = self.n_predict();
        let errs = std::thread::spawn(move || {
            let mut tail: Vec<String> = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("\"phase\":\"prefill\"") {
                    *at2.lock().expect("not poisoned") = disk2.as_ref().and_then(DiskCounter::read_bytes);
                }
                if let Some(i) = line.find("\"token\":") {
                    let n: usize = line[i + 8..]
                        .split(|c: char| !c.is_ascii_digit())
                        .next()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    if n > 0 && n % 32 == 0 {
                        eprintln!(
                            "bmoe-bench:   {name}: token {n}{}",
                            n_predict.map(|t| format!("/{t}")).unwrap_or_default()
                        );
                    }
                    continue;
                }
                let _ = writeln!(log_file, "{line}");
                tail.push(line);
                if tail.len() > 8 {
                    tail.remove(0);
                }
            }
            tail
        });
        // MemAvailable's floor while the cell runs.
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let floor = std::thread::spawn(move || {
            let mut min = u64::MAX;
            while !stop2.load(Ordering::Relaxed) {
                min = min.min(sys::mem_available().unwrap_or(u64::MAX));
                std::thread::sleep(Duration::from_millis(200));
            }
            min
        });
        let mut stdout = Vec::new();
        child.stdout.take().expect("piped").read_to_end(&mut stdout)?;
        let status = child.wait()?;
        stop.store(true, Ordering::Relaxed);
        let min = floor.join().unwrap_or(u64::MAX);
        run.mem_floor = (min != u64::MAX).then_some(min);
        let tail = errs.join().unwrap_or_default();
        let end = disk.and_then(DiskCounter::read_bytes);
        if let (Some(a), Some(b)) = (*at_first.lock().expect("not poisoned"), end) {
            run.disk_decode_bytes = Some(b.saturating_sub(a));
        }
        if !status.success() {
            bail!("{status}: {}", tail.join(" | "));
        }
        // The text (bytes: a random-weight model's pieces need not be UTF-8), then the JSON line.
        while stdout.last() == Some(&b'\n') {
            stdout.pop();
        }
        let cut = stdout.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let last = String::from_utf8_lossy(&stdout[cut..]).into_owned();
        run.summary = serde_json::from_str(&last).with_context(|| format!("the engine's JSON summary: {last:?}"))?;
        stdout.truncate(cut);
        run.text = stdout;
        Ok(())
    }

    fn n_predict(&self) -> Option<usize> {
        self.common.windows(2).rev().find(|w| w[0] == "-n" || w[0] == "--n-predict").and_then(|w| w[1].parse().ok())
    }

    fn summarise(&self, runs: &[CellRun], fio: Option<f64>) -> Vec<CellSummary> {
        let reference = self.cells.iter().position(Cell::is_resident);
        let ok = |ci: usize| runs.iter().filter(move |r| r.cell == ci && r.error.is_none());
        let mut out: Vec<CellSummary> = Vec::new();
        for (ci, cell) in self.cells.iter().enumerate() {
            let f = |key: &str| ok(ci).filter_map(|r| r.summary[key].as_f64()).collect::<Vec<_>>();
            let tokens: Vec<&TokenRow> = ok(ci).flat_map(|r| &r.tokens).collect();
            let col = |g: fn(&TokenRow) -> Option<f64>| {
                report::median(&tokens.iter().filter_map(|t| g(t)).collect::<Vec<_>>())
            };
            let wall: Vec<f64> = tokens.iter().map(|t| t.wall_ms).collect();
            let engine_mib: Vec<f64> = ok(ci)
                .filter(|r| !r.tokens.is_empty() && r.tokens.iter().all(|t| t.read_bytes.is_some()))
                .map(|r| r.tokens.iter().filter_map(|t| t.read_bytes).sum::<u64>() as f64 / MIB / r.tokens.len() as f64)
                .collect();
            let disk_mib: Vec<f64> = ok(ci)
                .filter(|r| !r.tokens.is_empty())
                .filter_map(|r| Some(r.disk_decode_bytes? as f64 / MIB / r.tokens.len() as f64))
                .collect();
            let (mib, source) = match (report::median(&engine_mib), report::median(&disk_mib)) {
                (Some(m), _) => (Some(m), "engine"),
                (None, Some(d)) => (Some(d), "disk"),
                _ => (None, ""),
            };
            let text_identical = match reference {
                Some(r) if r != ci && !cell.is_llama() => {
                    let pairs: Vec<bool> =
                        ok(ci).filter_map(|a| ok(r).find(|b| b.round == a.round).map(|b| b.text == a.text)).collect();
                    (!pairs.is_empty()).then(|| pairs.iter().all(|&b| b))
                }
                _ => None,
            };
            out.push(CellSummary {
                name: cell.name.clone(),
                runs: runs.iter().filter(|r| r.cell == ci).count(),
                failed: runs.iter().filter(|r| r.cell == ci && r.error.is_some()).count(),
                tok_s: report::median(&f("tok/s")),
                p5_ms: report::quantile(&wall, 0.05),
                median_ms: report::median(&wall),
                p95_ms: report::quantile(&wall, 0.95),
                mib_per_token: mib,
                bytes_source: source,
                hit_pct: report::median(&f("cache_hit_pct")),
                prefetch_pct: report::median(&f("prefetch_served_pct")),
                majflt_per_token: report::median(&f("majflt/tok")),
                stall_ms: col(|t| t.stall_ms),
                compute_ms: col(|t| t.compute_ms),
                manage_ms: col(|t| t.manage_ms),
                peak_rss_mib: f("max_rss_MiB").into_iter().reduce(f64::max),
                load_s: report::median(&f("load_s")),
                load_read_gib: report::median(&f("load_llama_read_GiB")),
                mem_floor_mib: ok(ci).filter_map(|r| r.mem_floor).min().map(|m| m as f64 / MIB),
                lower_bound_ms: None,
                text_identical,
                prefill_s: report::median(&f("prefill_s")),
                prefill_read_mib: report::median(&f("prefill_read_MiB")),
                prefill_compute_s: report::median(&f("prefill_compute_s")),
                prefill_bound_s: None,
            });
        }
        // Lower bounds: a cell's missed bytes at fio's rate, or its compute; a cell that does not
        // report compute (llama.cpp) takes the least compute any of our cells measured.
        let least_compute = out.iter().filter_map(|c| c.compute_ms).reduce(f64::min);
        for c in &mut out {
            if let (Some(fio), Some(mib)) = (fio, c.mib_per_token) {
                if let Some(compute) = c.compute_ms.or(least_compute) {
                    c.lower_bound_ms = Some(report::lower_bound_ms(mib, fio, compute));
                }
            }
        }
        // The prefill's: its expert bytes at fio's rate, or its compute (llama.cpp's cells,
        // which report neither, take the least our cells measured, bytes and compute).
        let least_prefill = out.iter().filter_map(|c| c.prefill_compute_s).reduce(f64::min);
        let least_read = out.iter().filter_map(|c| c.prefill_read_mib).reduce(f64::min);
        for (ci, c) in out.iter_mut().enumerate() {
            // With fio around every run: each run's bound from its own reads and compute and
            // the mean of the fio windows on either side of it; the cell's is their median.
            let per_run: Vec<f64> = ok(ci)
                .filter_map(|r| {
                    let (a, b) = r.fio_around?;
                    let mib = r.summary["prefill_read_MiB"].as_f64().or(least_read)?;
                    let compute = r.summary["prefill_compute_s"].as_f64().or(least_prefill)?;
                    Some((mib / ((a + b) / 2.0)).max(compute))
                })
                .collect();
            if let Some(b) = report::median(&per_run) {
                c.prefill_bound_s = Some(b);
                continue;
            }
            if let (Some(fio), Some(mib), Some(compute)) =
                (fio, c.prefill_read_mib.or(least_read), c.prefill_compute_s.or(least_prefill))
            {
                c.prefill_bound_s = Some((mib / fio).max(compute));
            }
        }
        out
    }

    fn markdown(
        &self,
        runs: &[CellRun],
        cells: &[CellSummary],
        fio: &[f64],
        flags: &[String],
        notes: &[String],
    ) -> String {
        let size = std::fs::metadata(&self.model).map(|m| m.len()).unwrap_or(0);
        let mut s = format!(
            "### bmoe-bench protocol, {}\n\n- machine: {}\n- model: `{}` ({:.2} GB)\n- command: `{}`\n- common arguments: `{}`\n- RAM: {}\n",
            utc_now(),
            sys::machine(),
            self.model.display(),
            size as f64 / 1e9,
            self.command_line,
            self.common.join(" "),
            self.ram_note,
        );
        if let Some(f) = &self.fio {
            let list: Vec<String> = fio.iter().map(|v| format!("{v:.0}")).collect();
            s += &format!(
                "- disk reference: fio {} O_DIRECT io_uring bs {} depth {}, {} s: {} MiB/s (start, end); lower bound = max(MiB/token ÷ median fio, compute ms/token)\n",
                f.rw,
                f.block,
                f.depth,
                f.seconds,
                list.join(", ")
            );
        }
        let mems: Vec<f64> = runs.iter().filter_map(|r| r.mem_entry).map(|m| m as f64 / MIB).collect();
        if let (Some(lo), Some(hi)) = (report::quantile(&mems, 0.0), report::quantile(&mems, 1.0)) {
            s += &format!("- MemAvailable at cell entry: {lo:.0}..{hi:.0} MiB\n");
        }
        s += &format!(
            "- rounds: {} (cells interleaved in each round, in reverse order every other round: ABBA)\n\n",
            self.rounds
        );
        s += &report::markdown_table(cells);
        s += "\nPrefill (medians; lower bound = max(expert MiB read ÷ median fio, compute s); a cell that does not report them takes the least of ours):\n\n";
        s += &report::prefill_table(cells);
        s += "\nCells:\n";
        for c in &self.cells {
            s += &format!("- `{}`: `{}`\n", c.name, c.args.join(" "));
        }
        if !flags.is_empty() || !notes.is_empty() {
            s += "\nFlags and notes:\n";
            for f in flags.iter().chain(notes) {
                s += &format!("- {f}\n");
            }
        }
        s += "\nRuns (in order):\n\n| cell | round | tok/s | prefill s | fio before / after MiB/s | waited s | MemAvailable at entry MiB | wall s | error |\n|---|---|---|---|---|---|---|---|---|\n";
        for r in runs {
            s += &format!(
                "| {} | {} | {} | {} | {} | {:.1}{} | {:.0} | {:.0} | {} |\n",
                md_cell(&self.cells[r.cell].name),
                r.round + 1,
                r.summary["tok/s"].as_f64().map_or("–".into(), |v| format!("{v:.3}")),
                r.summary["prefill_s"].as_f64().map_or("–".into(), |v| format!("{v:.3}")),
                r.fio_around.map_or("–".into(), |(a, b)| format!("{a:.0} / {b:.0}")),
                r.waited_s,
                if r.gave_up_waiting { " (gave up)" } else { "" },
                r.mem_entry.unwrap_or(0) as f64 / MIB,
                r.wall_s,
                md_cell(r.error.as_deref().unwrap_or(""))
            );
        }
        s
    }
}

/// Text as one cell of a markdown table row: a `|` would end the cell and a newline the row (a
/// failed run's error is the engine's last stderr lines, joined with ` | `).
pub fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace("\r\n", "<br>").replace(['\n', '\r'], "<br>")
}

/// `YYYY-MM-DD HH:MM UTC` without a date crate.
fn utc_now() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (t.div_euclid(86400), t.rem_euclid(86400));
    // Civil-from-days (H. Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_parse_and_classify() {
        let c = Cell::parse("big = --cache-mb 6000  --overlap").unwrap();
        assert_eq!(c, Cell { name: "big".into(), args: vec!["--cache-mb".into(), "6000".into(), "--overlap".into()] });
        assert!(Cell::parse("no-equals").is_err());
        assert!(Cell::parse("=--overlap").is_err());
        let d = default_cells();
        assert!(d[0].is_llama() && !d[0].is_resident());
        assert!(d[1].is_resident() && !d[1].is_llama());
        assert!(!d[2].is_llama() && !d[2].is_resident());
    }

    /// Issue 44, defect 7: an error with `|` or a newline kept in its cell and row.
    #[test]
    fn table_cells_escape_pipes_and_newlines() {
        assert_eq!(md_cell("plain"), "plain");
        assert_eq!(md_cell("exit status: 2: a | b"), "exit status: 2: a \\| b");
        assert_eq!(md_cell("one\ntwo\r\nthree"), "one<br>two<br>three");
        let row = format!("| {} |", md_cell("x | y\nz"));
        assert_eq!(row.lines().count(), 1);
        assert_eq!(row.replace("\\|", "").matches('|').count(), 2, "{row}");
    }

    #[test]
    fn utc_date_is_civil() {
        let s = utc_now();
        assert!(s.len() == 20 && s.ends_with(" UTC") && s.starts_with("20"), "{s}");
    }
}
