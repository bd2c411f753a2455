//! `bmoe run` end to end on a tiny synthetic model: text on stdout only, the mode and timing
//! lines on stderr, and the same greedy text from our decoder and from llama.cpp.

use std::process::Command;

fn bmoe(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bmoe")).args(args).output().unwrap();
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
    let (ok, ours, err) = run("bmoe", &[]);
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
