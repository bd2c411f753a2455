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

#[test]
fn protocol_runs_interleaved_cells_and_summarises() {
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
    // Interleaved: round 1 of every cell before round 2 of any.
    let order: Vec<&str> = err.lines().filter(|l| l.contains("] round ")).collect();
    assert_eq!(order.len(), 6, "{err}");
    assert!(order[2].contains("round 1 cell cache-1") && order[3].contains("round 2 cell resident"), "{order:?}");

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

    // A cell the engine refuses fails alone, named in the report. Names with a dot keep
    // files of their own (regression: `x-0.25` and `x-0.5` both wrote `x-0.csv`).
    let st = Command::new(env!("CARGO_BIN_EXE_bmoe-bench"))
        .args(["protocol", "--cells", "resident", "--cell", "bad=--cache-policy nope", "--rounds", "1", "-n", "2"])
        .args(["--cell", "x-0.25=--cache-mb 1", "--cell", "x-0.5=--cache-mb 2"])
        .args(["--fio-seconds", "0", "--settle-s", "1", "--run-args", "-t 2 -c 64"])
        .arg("--bmoe")
        .arg(bmoe_bin())
        .arg("-m")
        .arg(&model)
        .arg("--out")
        .arg(dir.path().join("out2"))
        .output()
        .unwrap();
    assert!(st.status.success());
    let md = std::fs::read_to_string(dir.path().join("out2/summary.md")).unwrap();
    assert!(md.contains("| bad | 1 (1 failed) |"), "{md}");
    for f in ["x-0.25-r1.csv", "x-0.5-r1.csv", "x-0.5-r1.txt", "x-0.25-r1.log"] {
        assert!(dir.path().join("out2/cells").join(f).exists(), "{f}");
    }
}
