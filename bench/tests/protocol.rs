//! The protocol driver end to end on a tiny synthetic model: cells interleaved, CSVs, the
//! summary's figures, the text identity between our resident and streamed cells; and the RAM
//! holder really holding (and giving back) memory.

use std::path::PathBuf;
use std::process::Command;

use bmoe::engine::synth::{self, Quant};
use bmoe_bench::hold::RamHold;

/// The `bmoe` binary beside this test's target folder (built by `cargo test --workspace`).
fn bmoe_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("bmoe");
    assert!(bin.exists(), "{}: build the workspace first (cargo test --workspace builds it)", bin.display());
    bin
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn ram_holder_holds_and_gives_back() {
    let bytes = 64u64 << 20;
    let h = RamHold::start(std::path::Path::new(env!("CARGO_BIN_EXE_bmoe-bench")), bytes).unwrap();
    let pid = h.pid();
    let rss = status_kib(pid, "VmRSS:").unwrap() * 1024;
    assert!(rss >= bytes, "the holder's RSS {rss} < {bytes}");
    if h.locked {
        assert!(status_kib(pid, "VmLck:").unwrap() * 1024 >= bytes);
    }
    drop(h);
    assert!(status_kib(pid, "VmRSS:").is_none(), "the holder is gone once dropped");
}

/// The protocol drops the page cache (machine-wide): the test that checks `--no-drop-caches`
/// keeps it must not run beside one that drops it.
static PAGE_CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn protocol_runs_interleaved_cells_and_summarises() {
    let _page_cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let o = synth::Options::new("qwen3moe", "tiny", Quant::Q8_0, 3).unwrap();
    synth::write(&o, &model, &mut |_, _| {}).unwrap();
    let out = dir.path().join("out");
    let st = Command::new(env!("CARGO_BIN_EXE_bmoe-bench"))
        .args(["protocol", "--cells", "resident,stream-nocache", "--budgets-mb", "1", "--rounds", "2", "-n", "6"])
        .args(["--fio-seconds", "1", "--settle-s", "1", "--run-args", "-t 2 -c 64"])
        .arg("--bmoe")
        .arg(bmoe_bin())
        .arg("-m")
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(st.status.success(), "{err}");
    // Interleaved: round 1 of every cell before round 2 of any, the second in reverse (ABBA).
    let order: Vec<&str> = err.lines().filter(|l| l.contains("] round ")).collect();
    assert_eq!(order.len(), 6, "{err}");
    assert!(order[0].contains("round 1 cell resident") && order[2].contains("round 1 cell cache-1"), "{order:?}");
    assert!(order[3].contains("round 2 cell cache-1") && order[5].contains("round 2 cell resident"), "{order:?}");

    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
    assert_eq!(rows.len(), 4, "{csv}");
    for r in &rows[1..] {
        assert_eq!((r[col("runs")], r[col("failed")]), ("2", "0"), "{csv}");
        assert!(r[col("tok_s")].parse::<f64>().unwrap() > 0.0, "{csv}");
        let (p5, med, p95): (f64, f64, f64) =
            (r[col("p5_ms")].parse().unwrap(), r[col("median_ms")].parse().unwrap(), r[col("p95_ms")].parse().unwrap());
        assert!(p5 <= med && med <= p95, "{csv}");
    }
    let (res, nocache, c1) = (&rows[1], &rows[2], &rows[3]);
    assert_eq!(res[col("cell")], "resident");
    for r in [nocache, c1] {
        assert_eq!(r[col("text_identical")], "true", "streamed text == resident text: {csv}");
        assert_eq!(r[col("bytes_source")], "engine");
        assert!(r[col("mib_per_token")].parse::<f64>().unwrap() > 0.0, "{csv}");
        assert!(r[col("compute_ms")].parse::<f64>().unwrap() > 0.0, "{csv}");
    }
    assert_eq!(nocache[col("hit_pct")].parse::<f64>().unwrap(), 0.0, "no cache, no hits: {csv}");
    if Command::new("fio").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let bound: f64 = c1[col("lower_bound_ms")].parse().unwrap();
        assert!(bound >= c1[col("compute_ms")].parse::<f64>().unwrap(), "{csv}");
    }
    for f in ["summary.md", "tok_s.svg", "tokens.svg", "cells/resident-r1.csv", "cells/cache-1-r2.log"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| cache-1 |") && md.contains("command: `"), "{md}");
    assert!(std::fs::read_to_string(out.join("tok_s.svg")).unwrap().starts_with("<svg"));
}

/// Whether every page of `path` is in the page cache (mincore).
fn cached(path: &std::path::Path) -> bool {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    // SAFETY: a fresh shared read-only mapping of a file of `len` bytes, unmapped below; nothing
    // reads through it.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0);
        assert_ne!(p, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(4096)];
        assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
        libc::munmap(p, len);
        vec.iter().all(|b| b & 1 == 1)
    }
}

/// Issue 44, defect 7: a protocol with failed runs exits non-zero (it exited 0), their errors
/// (the engine's stderr lines joined with ` | `) stay in their table cell, and
/// `--no-drop-caches` leaves the page cache alone (it was dropped once at start anyway). A cell
/// the engine refuses fails alone, named in the report; names with a dot keep files of their
/// own (regression: `x-0.25` and `x-0.5` both wrote `x-0.csv`).
#[test]
fn failed_runs_fail_the_protocol_and_no_drop_caches_keeps_the_page_cache() {
    let _page_cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let o = synth::Options::new("qwen3moe", "tiny", Quant::Q8_0, 3).unwrap();
    synth::write(&o, &model, &mut |_, _| {}).unwrap();
    // A file in the page cache (on disk, not tmpfs: CARGO_TARGET_TMPDIR is under target/).
    let sentinel = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("protocol-page-cache-sentinel");
    std::fs::write(&sentinel, vec![7u8; 4 << 20]).unwrap();
    std::fs::File::open(&sentinel).unwrap().sync_all().unwrap();
    let was_cached = cached(&sentinel);
    let st = Command::new(env!("CARGO_BIN_EXE_bmoe-bench"))
        .args(["protocol", "--cells", "resident", "--cell", "bad=--cache-policy nope", "--rounds", "1", "-n", "2"])
        .args(["--cell", "x-0.25=--cache-mb 1", "--cell", "x-0.5=--cache-mb 2"])
        .args(["--fio-seconds", "0", "--settle-s", "1", "--run-args", "-t 2 -c 64", "--no-drop-caches"])
        .arg("--bmoe")
        .arg(bmoe_bin())
        .arg("-m")
        .arg(&model)
        .arg("--out")
        .arg(dir.path().join("out2"))
        .output()
        .unwrap();
    let still_cached = cached(&sentinel);
    let _ = std::fs::remove_file(&sentinel);
    if was_cached {
        assert!(still_cached, "--no-drop-caches dropped the page cache");
    } else {
        eprintln!("skipped the page-cache check: the sentinel was not cached to begin with");
    }
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(!st.status.success(), "{err}");
    assert!(err.contains("1 of 4 runs failed"), "{err}");
    let md = std::fs::read_to_string(dir.path().join("out2/summary.md")).unwrap();
    assert!(md.contains("| bad | 1 (1 failed) |"), "{md}");
    for f in ["x-0.25-r1.csv", "x-0.5-r1.csv", "x-0.5-r1.txt", "x-0.25-r1.log"] {
        assert!(dir.path().join("out2/cells").join(f).exists(), "{f}");
    }
    // The runs table: every row has its 9 cells, the failed one's error included.
    let runs = md.split("Runs (in order):").nth(1).unwrap();
    let rows: Vec<&str> = runs.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 5, "{runs}");
    for r in &rows {
        assert_eq!(r.replace("\\|", "").matches('|').count(), 10, "{r}");
    }
    let bad = rows.iter().find(|r| r.starts_with("| bad |")).unwrap();
    assert!(bad.contains("\\|") && bad.contains("nope"), "{bad}");
}

/// Issue 44, defect 7: `--ram-gb` values that would lock every available byte (NaN, infinities,
/// zero, negative numbers) or hold nothing (more than MemAvailable) are refused before anything
/// runs (they were accepted).
#[test]
fn ram_gb_that_would_lock_everything_or_nothing_is_refused() {
    for (v, needle) in [
        ("nan", "expected a positive number of GiB"),
        ("inf", "expected a positive number of GiB"),
        ("0", "expected a positive number of GiB"),
        ("-1", "expected a positive number of GiB"),
        ("0.25", "leaves less than 1 GiB available"),
        ("1000000", "so there is nothing to hold"),
    ] {
        let st = Command::new(env!("CARGO_BIN_EXE_bmoe-bench"))
            .args(["protocol", "-m", "/nonexistent/model.gguf", "--bmoe", "/nonexistent/bmoe", "--ram-gb", v])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&st.stderr);
        assert!(!st.status.success() && err.contains(needle), "--ram-gb {v}: {err}");
        assert!(err.contains(&format!("--ram-gb {}", v.parse::<f64>().unwrap())), "--ram-gb {v}: {err}");
    }
}

/// Issue 44, defect 10: an error is one line, its causes once, no backtrace (under
/// RUST_BACKTRACE=1 the Debug form returned from main printed one, and each cause again).
#[test]
fn an_error_is_one_line_without_a_backtrace() {
    let dir = tempfile::tempdir().unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_bmoe-bench"))
        .env("RUST_BACKTRACE", "1")
        .args(["protocol", "-m", "/nonexistent/model.gguf", "--bmoe", "/bin/true", "--fio-seconds", "0"])
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(!st.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("bmoe-bench: error: indexing /nonexistent/model.gguf: "), "{err}");
    assert!(!err.contains("Caused by") && !err.contains("acktrace"), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
}
