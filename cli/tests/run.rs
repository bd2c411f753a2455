//! `bmoe run` end to end on a tiny synthetic model: text on stdout only, the mode and timing
//! lines on stderr, and the same greedy text from our decoder and from llama.cpp.

use std::process::Command;

/// `bmoe ARGS`; a `run` is greedy (`--temp 0`) unless it says otherwise, so that runs compare
/// token for token.
fn bmoe(args: &[&str]) -> (bool, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bmoe"));
    c.args(args);
    if args.first() == Some(&"run") && !args.contains(&"--temp") {
        c.args(["--temp", "0"]);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn run_both_engines_same_greedy_text() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let run = |engine: &str, extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "12", "-t", "2", "--engine", engine];
        a.extend_from_slice(extra);
        bmoe(&a)
    };
    let (ok, ours, err) = run("bmoe", &["--moe-stream", "off"]);
    assert!(ok, "{err}");
    assert!(err.starts_with("mode: resident"), "{err}");
    for line in ["load: ", "prefill: ", "generation: "] {
        assert!(err.contains(line), "missing `{line}` in {err}");
    }
    assert!(!ours.contains("mode:") && !ours.contains("tok/s"), "stdout is the text only: {ours}");
    let (ok, theirs, err) = run("llama-plain", &[]);
    assert!(ok, "{err}");
    assert!(err.starts_with("mode: llama.cpp baseline"), "{err}");
    assert_eq!(ours, theirs, "greedy text differs between bmoe and llama.cpp");
    // Chat template and sampling run; the same seed gives the same text.
    let (ok, a, err) = run("bmoe", &["--chat", "--temp", "0.8", "--seed", "5"]);
    assert!(ok, "{err}");
    let (_, b, _) = run("bmoe", &["--chat", "--temp", "0.8", "--seed", "5"]);
    assert_eq!(a, b);
    // Bad input: a clear error, nothing on stdout.
    let (ok, out, err) = run("bmoe", &["-c", "4"]);
    assert!(!ok && out.is_empty() && err.contains("exceed the context"), "{err}");
    let (ok, _, err) = bmoe(&["run", "-m", "/nonexistent/model.gguf"]);
    assert!(!ok && err.contains("/nonexistent/model.gguf"), "{err}");
}

#[test]
fn streaming_run_telemetry_and_cycle_warning() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q4_k_m", "--seed", "4", "-o", m]);
    assert!(ok, "{err}");
    let csv = dir.path().join("run.csv");
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "8", "-t", "2"];
        a.extend_from_slice(extra);
        bmoe(&a)
    };
    let (ok, resident, err) = run(&["--moe-stream", "off"]);
    assert!(ok, "{err}");
    // A budget of 0 (raised to one layer's top-k) is under the cycle: one warning.
    let (ok, out, err) = run(&["--cache-mb", "0", "--json", "--csv", csv.to_str().unwrap(), "--progress"]);
    assert!(ok, "{err}");
    assert!(err.starts_with("mode: streaming (decoder native, backend "), "{err}");
    assert_eq!(err.matches("warning: the expert cache").count(), 1, "{err}");
    for line in ["moe-stream: read ", "moe-cache: hit ", "generation: ", "compute: CPU occupancy"] {
        assert!(err.contains(line), "missing `{line}` in {err}");
    }
    assert_eq!(
        err.lines().filter(|l| l.starts_with("{\"compute_ms\"")).count(),
        8,
        "one --progress line per token: {err}"
    );
    // The text is the resident text; the summary is the last line of stdout.
    let (text, last) = out.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(format!("{text}\n"), resident);
    let j: serde_json::Value = serde_json::from_str(last).unwrap();
    for k in [
        "tokens",
        "s/tok",
        "tok/s",
        "read_MiB",
        "cache_hit_pct",
        "token_demand_MiB",
        "layer_demand_MiB",
        "cache_budget_MiB",
        "cache_cycle_mb",
        "majflt/tok",
        "stall_s/tok",
    ] {
        assert!(j.get(k).is_some(), "summary lacks {k}: {j}");
    }
    assert!(j["read_MiB"].as_f64().unwrap() > 0.0);
    let c = std::fs::read_to_string(&csv).unwrap();
    assert!(c.starts_with("# bmoe ") && c.contains(" git ") && c.contains("# cache_cycle_mb "), "{c}");
    assert_eq!(c.lines().filter(|l| l.contains(",decode,")).count(), 7);
    let summary = c.lines().last().unwrap();
    assert!(summary.starts_with("# summary ") && summary.contains(" tokens=8"), "{c}");
    // --route-trace writes route_trace v1 that bmoe replay reads: 7 decode steps × 4 layers × top-2.
    let trace = dir.path().join("run.route.csv");
    let (ok, _, err) = run(&["--cache-mb", "0", "--route-trace", trace.to_str().unwrap()]);
    assert!(ok, "{err}");
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(
        t.starts_with("# route_trace v1\n# model=tiny.gguf arch=qwen3moe n_layer=4 n_expert=8 n_expert_used=2"),
        "{t}"
    );
    assert_eq!(t.lines().filter(|l| l.starts_with("0,1,")).count(), 7 * 4 * 2, "{t}");
    assert!(t.lines().any(|l| l.starts_with("0,0,0,0,")), "prefill rows: {t}");
    let (ok, out, err) = bmoe(&["replay", trace.to_str().unwrap(), "--budget-mb", "1", "--policy", "lru,hd", "--json"]);
    assert!(ok && out.lines().count() == 2, "{out} {err}");
    // A budget holding every expert: no warning, the same text.
    let (ok, out2, err) = run(&["--cache-mb", "64"]);
    assert!(ok, "{err}");
    assert!(!err.contains("warning: the expert cache"), "{err}");
    assert_eq!(out2, resident);
    // BMOE_CACHE_MB is used when the flag is absent; the flag wins over it.
    let env_run = |extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello", "-n", "2", "-t", "2"];
        a.extend_from_slice(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_bmoe")).args(&a).env("BMOE_CACHE_MB", "0").output().unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(env_run(&[]).contains("no cache asked"));
    assert!(!env_run(&["--cache-mb", "64"]).contains("raised from"));
    // A truncated model fails before generating, naming the file.
    let bytes = std::fs::read(&model).unwrap();
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (ok, out, err) = bmoe(&["run", "-m", cut.to_str().unwrap(), "-n", "4"]);
    assert!(!ok && out.is_empty() && err.contains("cut.gguf"), "{err}");
}

#[test]
fn list_archs_names_what_this_build_streams() {
    let (ok, out, err) = bmoe(&["run", "--list-archs"]);
    assert!(ok, "{err}");
    for arch in ["qwen3moe", "olmoe", "llama", "qwen2moe", "gpt-oss"] {
        assert!(out.lines().any(|l| l == arch), "{arch} missing from {out}");
    }
    assert!(out.contains("Mixtral") && out.contains("shared expert stays resident"), "{out}");
    assert!(out.contains("gpt-oss-120b") && out.contains("attention sinks"), "{out}");
    assert!(out.contains("--shape tiny|small|gpt-oss-20b|gpt-oss-120b"), "{out}");
    assert!(out.contains("not streamable by this build"), "{out}");
    // Every MoE architecture of the vendored llama.cpp is named, once, in one of the sections.
    for arch in bmoe::engine::arch::llama_moe::LLAMA_MOE_ARCHS {
        let named = out.lines().filter(|l| *l == *arch || l.split_whitespace().any(|w| w == *arch)).count();
        assert!(named >= 1, "{arch} missing from {out}");
    }
    assert!(out.contains("generic (untested)") && out.contains("deepseek32"), "{out}");
    // Without --list-archs, a model is required.
    let (ok, _, err) = bmoe(&["run"]);
    assert!(!ok && err.contains("--model"), "{err}");
}

/// Each architecture end to end: streamed by default (a budget that evicts), the same greedy
/// text as llama.cpp with the same kernels.
#[test]
fn every_arch_streams_the_same_text_as_llama_cpp() {
    let dir = tempfile::tempdir().unwrap();
    for (arch, quant) in [("olmoe", "q8_0"), ("llama", "q8_0"), ("qwen2moe", "q8_0"), ("gpt-oss", "mxfp4")] {
        let model = dir.path().join(format!("{arch}.gguf"));
        let m = model.to_str().unwrap();
        let (ok, _, err) = bmoe(&["synth", "--arch", arch, "--shape", "tiny", "--quant", quant, "-o", m]);
        assert!(ok, "{err}");
        let run = |extra: &[&str]| {
            let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "12", "-t", "2"];
            a.extend_from_slice(extra);
            bmoe(&a)
        };
        let (ok, ours, err) = run(&["--cache-mb", "0"]);
        assert!(ok, "{arch}: {err}");
        assert!(err.starts_with("mode: streaming"), "{arch}: {err}");
        assert!(err.contains("moe-cache: hit") && !ours.is_empty(), "{arch}: {err}");
        let (ok, theirs, err) = run(&["--engine", "llama-plain"]);
        assert!(ok, "{arch}: {err}");
        assert_eq!(ours, theirs, "{arch}: greedy text differs between bmoe (streamed) and llama.cpp");
    }
}

/// The tokens `--verbose-prompt` shows for a `--chat` run of `model` (text of each token).
fn chat_tokens(model: &str, extra: &[&str]) -> Vec<String> {
    let mut a =
        vec!["run", "-m", model, "-p", "Why is the sky blue?", "-n", "1", "-t", "2", "--chat", "--verbose-prompt"];
    a.extend_from_slice(extra);
    let (ok, _, err) = bmoe(&a);
    assert!(ok, "{err}");
    let line = err.lines().find(|l| l.starts_with("prompt: ")).unwrap_or_else(|| panic!("no prompt line: {err}"));
    // `prompt: N tokens: [[id, "text"], …]`
    let (head, list) = line.split_once(" tokens: ").unwrap();
    let toks: Vec<(i32, String)> = serde_json::from_str(list).unwrap();
    assert_eq!(toks.len(), head["prompt: ".len()..].parse::<usize>().unwrap(), "{line}");
    let texts: Vec<String> = toks.into_iter().map(|(_, t)| t).collect();
    texts
}

/// `--chat` on gpt-oss is harmony, its markers single special tokens as in the real
/// o200k_harmony vocabulary; `--no-think` opens the final channel there, and keeps Qwen's
/// `/no_think` for a ChatML model.
#[test]
fn chat_no_think_per_template() {
    let dir = tempfile::tempdir().unwrap();
    let model = |arch: &str| {
        let p = dir.path().join(format!("{arch}.gguf"));
        let m = p.to_str().unwrap().to_string();
        let (ok, _, err) = bmoe(&["synth", "--arch", arch, "--shape", "tiny", "--quant", "q8_0", "-o", &m]);
        assert!(ok, "{err}");
        m
    };
    let oss = model("gpt-oss");
    let user = "Why is the sky blue?";
    let plain = chat_tokens(&oss, &[]);
    assert_eq!(plain.concat(), format!("<|start|>user<|message|>{user}<|end|><|start|>assistant"));
    let fin = chat_tokens(&oss, &["--no-think"]);
    assert_eq!(
        fin.concat(),
        format!("<|start|>user<|message|>{user}<|end|><|start|>assistant<|channel|>final<|message|>")
    );
    for special in ["<|start|>", "<|message|>", "<|end|>", "<|channel|>"] {
        assert!(fin.iter().any(|t| t == special), "{special} is not one token: {fin:?}");
    }
    assert_eq!(&fin[..plain.len()], &plain[..], "--no-think only appends");
    assert_eq!(fin[fin.len() - 1], "<|message|>");
    let qwen = model("qwen3moe");
    let q = chat_tokens(&qwen, &["--no-think"]).concat();
    assert_eq!(q, format!("<|im_start|>user\n{user} /no_think<|im_end|>\n<|im_start|>assistant\n"));
}

/// When the kernel refuses io_uring (here a seccomp filter, as a container runtime or Android's
/// SELinux policy would), `auto` streams through the pread pool and the mode line says why.
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
#[test]
fn io_uring_refused_falls_back_and_the_mode_line_says_why() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bmoe"));
    cmd.args(["run", "-m", m, "-p", "Hello", "-n", "4", "-t", "2", "--cache-mb", "0", "--temp", "0"]);
    // SAFETY: the child only makes two prctl calls on a filter on its stack before exec.
    unsafe { cmd.pre_exec(bmoe::engine::io::fault::deny_io_uring) };
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let mode = err.lines().find(|l| l.starts_with("mode: ")).unwrap_or_default();
    assert!(
        mode.starts_with("mode: streaming (decoder native, backend pread (io_uring unavailable: io_uring_setup: ")
            && mode.contains("38"),
        "{mode}"
    );
    // The same text as with io_uring.
    let (ok, with_uring, err) = bmoe(&["run", "-m", m, "-p", "Hello", "-n", "4", "-t", "2", "--cache-mb", "0"]);
    assert!(ok, "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), with_uring);
}

#[test]
fn bench_sweeps_every_row_and_reports_what_it_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let sweep = ["bench", "-m", m, "-p", "16", "-n", "4", "-r", "2", "--cache-mb", "0,auto", "--overlap", "off,full"];
    let (ok, out, err) = bmoe(&[&sweep[..], &["-t", "2", "-o", "json", "--run-args", "--moe-stream on"]].concat());
    assert!(ok, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    for k in ["build", "cpu", "disk", "kernel", "model", "page cache"] {
        assert!(j["system"][k].is_string(), "system.{k} missing: {out}");
    }
    let rows = j["rows"].as_array().unwrap();
    // 2 budgets × 2 overlap modes × (pp16, tg4), in that order.
    assert_eq!(rows.len(), 8, "{out}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["test"], if i % 2 == 0 { "pp16" } else { "tg4" });
        assert_eq!(r["mode"], "streaming");
        assert_eq!(r["overlap"], if (i / 2) % 2 == 0 { "off" } else { "full" }, "{r}");
        assert_eq!(r["threads"], 2);
        assert_eq!(r["reps"], 2);
        let t = r["tok_s"].as_array().unwrap();
        assert_eq!(t.len(), 2);
        assert!(t.iter().all(|v| v.as_f64().unwrap() > 0.0), "{r}");
        assert!(r["budget_MiB"].as_f64().unwrap() > 0.0);
        // A cold cache reads what the test routes.
        assert!(r["read_MiB_median"].as_f64().unwrap() > 0.0, "{r}");
    }
    // The auto budget holds every expert of this model, the smallest pool does not.
    assert!(rows[4]["budget_MiB"].as_f64() > rows[0]["budget_MiB"].as_f64());
    let (ok, out, err) = bmoe(&["bench", "-m", m, "-p", "8", "-n", "0", "-r", "1", "-t", "2", "-o", "csv"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("test,cache_mb,overlap_asked,mode,"), "{out}");
    assert!(lines[1].starts_with("pp8,"), "{out}");
    // Bad input: refused before anything runs.
    let (ok, _, err) = bmoe(&["bench", "-m", m, "-r", "0"]);
    assert!(!ok && err.contains("-r 0"), "{err}");
    let (ok, _, err) = bmoe(&["bench", "-m", m, "--overlap", "off,sideways"]);
    assert!(!ok && err.contains("a row's flags") && !err.contains("bench: ["), "{err}");
}

#[test]
fn prefill_reports_its_reads_stall_and_compute() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let summary = |out: &str| -> serde_json::Value { serde_json::from_str(out.lines().last().unwrap()).unwrap() };
    let base = ["run", "-m", m, "-p", "Hello there, a prompt of a few tokens", "-n", "3", "-t", "2", "--json"];
    let (ok, out, err) = bmoe(&[&base[..], &["--moe-stream", "on", "--cache-mb", "0"]].concat());
    assert!(ok, "{err}");
    let s = summary(&out);
    assert!(err.contains("\nmoe-prefill: read "), "{err}");
    assert!(s["prefill_read_MiB"].as_f64().unwrap() > 0.0, "{s}");
    for k in ["prefill_s", "prefill_read_MiB/s", "prefill_stall_s", "prefill_compute_s", "prefill_manage_s"] {
        assert!(s[k].as_f64().is_some_and(|v| v >= 0.0), "{k}: {s}");
    }
    assert!(s["prefill_compute_s"].as_f64().unwrap() <= s["prefill_s"].as_f64().unwrap());
    // Resident: compute measured, nothing read, so the read figures are null (not 0).
    let (ok, out, err) = bmoe(&[&base[..], &["--moe-stream", "off"]].concat());
    assert!(ok, "{err}");
    let s = summary(&out);
    assert!(!err.contains("moe-prefill:"), "{err}");
    assert!(s["prefill_read_MiB"].is_null() && s["prefill_stall_s"].is_null(), "{s}");
    assert!(s["prefill_compute_s"].as_f64().is_some(), "{s}");
    // llama.cpp: neither.
    let (ok, out, err) = bmoe(&[&base[..], &["--engine", "llama"]].concat());
    assert!(ok, "{err}");
    let s = summary(&out);
    assert!(s["prefill_compute_s"].is_null() && s["prefill_read_MiB"].is_null(), "{s}");
    assert!(s["prefill_s"].as_f64().is_some(), "{s}");
}

/// The text of a `--json` run (everything before the summary line) and its summary.
fn text_and_summary(out: &str) -> (String, serde_json::Value) {
    let (text, last) = out.trim_end_matches('\n').rsplit_once('\n').unwrap_or(("", out.trim_end()));
    (text.to_string(), serde_json::from_str(last).unwrap())
}

/// Speculative decoding end to end: a plain run's tokens (`--tokens-out`) replayed as drafts
/// (all accepted; half corrupted, every draft verified), prompt lookup, and sampled: the plain
/// text every time; the mode line, the `spec:` line and the JSON keys say what it did (null
/// without it); the flags that mean nothing alone are refused.
#[test]
fn speculative_decoding_gives_the_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q4_k_m", "--seed", "4", "-o", m]);
    assert!(ok, "{err}");
    let tok = dir.path().join("plain.tokens");
    let t = tok.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "32", "-t", "2", "--ignore-eos", "--json"];
        a.extend_from_slice(extra);
        bmoe(&a)
    };
    let (ok, out, err) = run(&["--tokens-out", t]);
    assert!(ok, "{err}");
    let (plain, s) = text_and_summary(&out);
    assert!(s["spec_verify_passes"].is_null() && s["spec_acceptance_pct"].is_null(), "{s}");
    assert!(!err.contains("\nspec: "), "{err}");
    let file = std::fs::read_to_string(&tok).unwrap();
    assert!(file.starts_with("# bmoe tokens v1\n"), "{file}");
    assert_eq!(file.lines().filter(|l| !l.starts_with('#')).flat_map(|l| l.split_whitespace()).count(), 32);
    for (what, extra) in [
        ("replay", vec!["--draft-replay", t]),
        ("replay 0.5", vec!["--draft-replay", t, "--draft-corrupt", "0.5", "--draft", "5", "--draft-skip", "off"]),
        ("ngram", vec!["--ngram", "--ngram-min-match", "1", "--draft-skip", "off"]),
    ] {
        let (ok, out, err) = run(&extra);
        assert!(ok, "{what}: {err}");
        let (text, s) = text_and_summary(&out);
        assert_eq!(text, plain, "{what}: the text differs from plain decode");
        let mode = err.lines().next().unwrap();
        assert!(mode.contains("speculative: ") && mode.contains("exact verify"), "{what}: {mode}");
        assert!(err.contains("\nspec: "), "{what}: {err}");
        assert!(s["spec_verify_passes"].as_u64().is_some() && s["spec_plain_steps"].as_u64().is_some(), "{s}");
        if what == "replay" {
            assert_eq!(s["spec_acceptance_pct"].as_f64(), Some(100.0), "{what}: {s}");
            assert!(s["spec_tokens_per_pass"].as_f64().unwrap() > 2.0, "{what}: {s}");
        }
        if what == "replay 0.5" {
            let a = s["spec_acceptance_pct"].as_f64().unwrap();
            assert!(a > 0.0 && a < 100.0, "{what}: {s}");
        }
    }
    // Sampled: the plain sampled text too.
    let sampled = ["--temp", "1", "--seed", "3"];
    let tok2 = dir.path().join("sampled.tokens");
    let (ok, out, err) = run(&[&sampled[..], &["--tokens-out", tok2.to_str().unwrap()]].concat());
    assert!(ok, "{err}");
    let (ok, out2, err) = run(&[&sampled[..], &["--draft-replay", tok2.to_str().unwrap()]].concat());
    assert!(ok, "{err}");
    assert_eq!(text_and_summary(&out2).0, text_and_summary(&out).0, "sampled: the text differs");
    // Knobs without a source, or of the other source, are refused before anything loads.
    for (bad, says) in [
        (vec!["--draft", "3"], "--ngram or --draft-replay"),
        (vec!["--ngram", "--draft-corrupt", "0.2"], "--draft-corrupt"),
        (vec!["--draft-replay", t, "--ngram-min-match", "2"], "--ngram-min-match"),
        (vec!["--ngram", "--route-trace", "x.csv"], "--route-trace"),
        (vec!["--ngram", "--draft", "40"], "--draft 40"),
        (vec!["--ngram", "--moe-stream", "off", "--route-ahead", "1"], "--route-ahead 1"),
    ] {
        let (ok, out, err) = run(&bad);
        assert!(!ok && out.is_empty() && err.contains(says), "{bad:?}: {err}");
    }
}

/// The lossy knobs end to end: off by default (no line, null keys, no LOSSY); on, LOSSY on
/// the mode line, their line and keys; refused where they mean nothing.
#[test]
fn lossy_knobs_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "16", "-t", "2", "--ignore-eos", "--json"];
        a.extend_from_slice(extra);
        bmoe(&a)
    };
    let (ok, out, err) = run(&["--cache-mb", "0"]);
    assert!(ok, "{err}");
    let (_, s) = text_and_summary(&out);
    assert!(!err.contains("LOSSY") && !err.contains("moe-drop:") && !err.contains("route-ahead:"), "{err}");
    for k in ["drop_pct", "drop_routings", "route_ahead_mismatch_pct"] {
        assert!(s[k].is_null(), "{k}: {s}");
    }
    let (ok, out, err) = run(&["--cache-mb", "0", "--drop-cold-experts", "1.0"]);
    assert!(ok, "{err}");
    let (_, s) = text_and_summary(&out);
    assert!(err.lines().next().unwrap().contains("LOSSY --drop-cold-experts 1"), "{err}");
    assert!(err.contains("\nmoe-drop: --drop-cold-experts 1 (lossy): dropped "), "{err}");
    assert!(s["drop_routings"].as_u64().unwrap() > 0 && s["drop_pct"].as_f64().unwrap() > 0.0, "{s}");
    assert!(s["drop_reads_avoided_MiB"].as_f64().is_some() && s["drop_weight_discarded_pct"].as_f64().is_some());
    let (ok, out, err) = run(&["--route-ahead", "2"]);
    assert!(ok, "{err}");
    let (_, s) = text_and_summary(&out);
    assert!(err.lines().next().unwrap().contains("LOSSY experimental --route-ahead 2"), "{err}");
    assert!(err.contains("\nroute-ahead: --route-ahead 2 (lossy, experimental): "), "{err}");
    assert_eq!(s["route_ahead_routings"].as_u64(), Some(15 * 2 * 2), "{s}");
    for (bad, says) in [
        (vec!["--drop-cold-experts", "0.5", "--moe-stream", "off"], "--moe-stream off"),
        (vec!["--drop-cold-experts", "0"], "--drop-cold-experts 0"),
        (vec!["--route-ahead", "4"], "--route-ahead 4"),
    ] {
        let (ok, _, err) = run(&bad);
        assert!(!ok && err.contains(says), "{bad:?}: {err}");
    }
}

/// Issue 44, defect 9: a `--cache-mb` larger than free memory on a model whose experts fit was
/// refused by the floor check ("would leave less than --cache-floor-mb"), though the pool is
/// capped to every expert's bytes. The cap comes first; the run takes the capped pool.
#[test]
fn a_cache_larger_than_free_memory_is_capped_to_the_experts_before_the_floor_check() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q4_k_m", "--seed", "4", "-o", m]);
    assert!(ok, "{err}");
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "4", "-t", "2"];
        a.extend_from_slice(extra);
        bmoe(&a)
    };
    let (ok, resident, err) = run(&["--moe-stream", "off"]);
    assert!(ok, "{err}");
    // 1 TiB: more than this machine's MemAvailable, whatever the machine.
    let (ok, out, err) = run(&["--moe-stream", "on", "--cache-mb", "1T"]);
    assert!(ok, "{err}");
    assert!(err.contains("(capped from 1024.0 GiB: every expert fits)"), "{err}");
    assert_eq!(out, resident);
}

/// Issue 44, defect 10: messages that named the wrong flag or program. `--decoder generic` with
/// drafting pointed to `--engine bmoe` (already given); `--draft-corrupt -1` got clap's
/// "unexpected argument" instead of the range; `bmoe bench --run-args` printed `bmoe-cli` in
/// its usage line.
#[test]
fn messages_name_the_flag_to_pass_and_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "-m", m, "-p", "Hello there", "-n", "4", "-t", "2"];
        a.extend_from_slice(extra);
        bmoe(&a)
    };
    let (ok, out, err) = run(&["--moe-stream", "on", "--decoder", "generic", "--ngram"]);
    assert!(!ok && out.is_empty(), "{err}");
    assert!(err.contains("not the generic one (--decoder native)") && !err.contains("--engine bmoe"), "{err}");
    let tokens = dir.path().join("tokens.txt");
    std::fs::write(&tokens, "# bmoe tokens v1\n1 2 3 4\n").unwrap();
    for p in ["-1", "-0.5", "1.5"] {
        let (ok, out, err) = run(&["--draft-replay", tokens.to_str().unwrap(), "--draft-corrupt", p]);
        assert!(!ok && out.is_empty(), "{err}");
        assert!(err.contains(&format!("--draft-corrupt {p}: a probability, 0 to 1")), "{p}: {err}");
    }
    let (ok, _, err) = bmoe(&["bench", "-m", m, "-p", "4", "-n", "2", "-r", "1", "--run-args", "--bogus-flag"]);
    assert!(!ok && err.contains("--bogus-flag"), "{err}");
    assert!(err.contains("Usage: bmoe run ") && !err.contains("bmoe-cli"), "{err}");
}

/// Issue 44, defect 10: `bmoe bench` whose model went away after the first measurements
/// printed the error only, losing every row measured. The rows measured are printed, then the
/// error.
#[test]
fn bench_prints_the_rows_measured_before_a_failure_then_the_error() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    let m = model.to_str().unwrap();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "-o", m]);
    assert!(ok, "{err}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bmoe"))
        .args(["bench", "-m", m, "-p", "4", "-n", "2", "-r", "50", "-t", "2", "-o", "jsonl"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    // After the first measurement: the bench paused, the model deleted, the bench resumed.
    for l in lines.by_ref() {
        let l = l.unwrap();
        seen += &format!("{l}\n");
        if l.starts_with("bench: [1/") {
            break;
        }
    }
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    std::fs::remove_file(&model).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    for l in lines {
        seen += &format!("{}\n", l.unwrap());
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{seen}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r["reps"].as_u64() >= Some(1)), "{stdout}\n{seen}");
    assert!(seen.contains("the rows measured before it are printed above") && seen.contains(m), "{seen}");
}
