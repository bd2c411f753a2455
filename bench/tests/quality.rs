//! `bmoe-bench quality` end to end on a tiny synthetic model: the lossless cell agrees with the
//! reference exactly, the lossy knobs diverge by a measured amount and report their rates, the
//! sequence is the same for every cell, and a replayed trace is the reference's routing too.

use std::process::Command;

use bmoe::engine::synth::{self, Quant};

#[test]
fn quality_compares_every_cell_with_the_lossless_run() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let o = synth::Options::new("qwen3moe", "tiny", Quant::Q8_0, 3).unwrap();
    synth::write(&o, &model, &mut |_, _| {}).unwrap();
    let json = dir.path().join("q.jsonl");
    let st = Command::new(env!("CARGO_BIN_EXE_bmoe-bench"))
        .args(["quality", "-n", "24", "--prompt-tokens", "8", "-c", "64", "--run-args", "-t 2 --cache-mb 0"])
        .args(["--cell", "lossless=--overlap off", "--cell", "drop=--drop-cold-experts 1.0"])
        .args(["--cell", "k1=--n-expert-used 1", "--cell", "ahead=--route-ahead 1"])
        .arg("-m")
        .arg(&model)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(st.status.success(), "{err}");
    let out = String::from_utf8_lossy(&st.stdout);
    assert!(out.contains("| cell | args | positions | top-1 agree %"), "{out}");
    let rows: Vec<serde_json::Value> =
        std::fs::read_to_string(&json).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let row = |name: &str| rows.iter().find(|r| r["cell"] == name).unwrap_or_else(|| panic!("{name}: {rows:?}"));
    // Overlap changes no bit: the lossless cell is the reference.
    let l = row("lossless");
    assert_eq!(
        (l["top1_pct"].as_f64(), l["mean_kl"].as_f64(), l["positions"].as_u64()),
        (Some(100.0), Some(0.0), Some(24))
    );
    assert!(l["drop_pct"].is_null() && l["route_ahead_mismatch_pct"].is_null());
    let d = row("drop");
    assert!(d["drop_pct"].as_f64().unwrap() > 0.0 && d["mean_kl"].as_f64().unwrap() > 0.0, "{d}");
    assert!(row("k1")["mean_kl"].as_f64().unwrap() > 0.0);
    let a = row("ahead");
    let mm = a["route_ahead_mismatch_pct"].as_f64().unwrap();
    assert!(mm > 0.0 && mm < 100.0 && a["mean_kl"].as_f64().unwrap() > 0.0, "{a}");
    // The reference may not be lossy; a cell's unknown flag is named.
    let bad = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_bmoe-bench")).args(args).arg("-m").arg(&model).output().unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (ok, e) = bad(&["quality", "--run-args", "--drop-cold-experts 1", "--cell", "x="]);
    assert!(!ok && e.contains("lossless"), "{e}");
    let (ok, e) = bad(&["quality", "--cell", "x=--temp 1"]);
    assert!(!ok && e.contains("--temp"), "{e}");
}
