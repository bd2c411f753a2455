//! The fault matrix: bad input and faults against the built binary, on tiny synthetic models.
//! Every case asserts the exit code, a message naming the cause, that no signal killed the
//! process, that the model file is unchanged (its bytes hashed before and after), that no
//! partial output is left behind, and for mid-run faults that the text printed before the fault
//! is a prefix of the text of the same run without it. docs/reliability.md lists the cases.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bmoe"))
}

/// `bmoe ARGS`; a `run` is greedy (`--temp 0`) so that runs compare token for token.
fn run(args: &[&str]) -> Output {
    let mut c = bin();
    c.args(args);
    if args.first() == Some(&"run") {
        c.args(["--temp", "0"]);
    }
    c.output().unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn hash(p: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    std::fs::read(p).unwrap().hash(&mut h);
    h.finish()
}

/// No partial file (`.<name>.partial-<pid>`, `*.partial`) in `dir`.
fn no_partials(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!n.contains(".partial"), "a partial output was left behind: {n}");
    }
}

/// The case's common assertions: exit code, no signal, the message, the model unchanged.
#[track_caller]
fn check(o: &Output, code: i32, needle: &str, model: &Path, before: u64) {
    let e = err(o);
    assert_eq!(o.status.signal(), None, "killed by a signal: {e}");
    assert_eq!(o.status.code(), Some(code), "exit code: {e}");
    assert!(e.contains(needle), "the message lacks `{needle}`: {e}");
    assert_eq!(hash(model), before, "the model file changed");
}

fn synth(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let p = dir.join(name);
    let mut a =
        vec!["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "--quiet", "-o", p.to_str().unwrap()];
    a.extend_from_slice(extra);
    let o = run(&a);
    assert!(o.status.success(), "{}", err(&o));
    p
}

#[test]
fn memory_for_the_context_is_checked_before_anything_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    // A context whose KV cache cannot fit: refused, naming the context, the bytes and the flag.
    let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2", "-c", "100000000", "--json"]);
    check(&o, 1, "-c 100000000 needs", &m, h);
    assert!(err(&o).contains("MemAvailable") && err(&o).contains("lower -c"), "{}", err(&o));
    assert!(o.stdout.is_empty(), "nothing on stdout (no backtrace there)");
    // The same for llama.cpp's engine (it would abort in ggml).
    let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2", "-c", "100000000", "--engine", "llama"]);
    check(&o, 1, "-c 100000000 needs", &m, h);
    // A micro-batch wider than the context is the context: the same text as the default.
    let want = run(&["run", "-m", ms, "-p", "hi", "-n", "4", "-t", "2"]);
    let o = run(&["run", "-m", ms, "-p", "hi", "-n", "4", "-t", "2", "--ubatch", "4294967295"]);
    check(&o, 0, "mode: streaming", &m, h);
    assert_eq!(o.stdout, want.stdout);
    // A real shape at its own context length (Qwen3-30B-A3B at 262144: 24 GiB of KV cache) on
    // a file of headers only (refused before a weight is read).
    let big = dir.path().join("q.gguf");
    let s = run(&[
        "synth",
        "--shape",
        "qwen3-30b-a3b",
        "--quant",
        "q4_k_m",
        "--sparse",
        "--quiet",
        "-o",
        big.to_str().unwrap(),
    ]);
    assert!(s.status.success(), "{}", err(&s));
    let hb = hash(&big);
    let o = run(&["run", "-m", big.to_str().unwrap(), "-p", "hi", "-n", "2", "-t", "2", "-c", "262144"]);
    check(&o, 1, "-c 262144 needs 24.0 GiB for the KV cache", &big, hb);
}

#[test]
fn threads_default_to_the_cores_and_absurd_counts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    // The default is the physical cores, at most the cores this process may use.
    let cores = std::thread::available_parallelism().unwrap().get();
    let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2"]);
    check(&o, 0, "mode: ", &m, h);
    let t: usize = err(&o)
        .split("threads ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=cores).contains(&t), "{}", err(&o));
    for t in ["0", "1000"] {
        let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", t]);
        check(&o, 1, &format!("-t {t}:"), &m, h);
    }
}

#[test]
fn outputs_are_checked_before_the_model_loads_and_never_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    let link = dir.path().join("link.gguf");
    std::os::unix::fs::symlink(&m, &link).unwrap();
    for (flag, path) in [("--csv", &m), ("--route-trace", &m), ("--csv", &link), ("--route-trace", &link)] {
        let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2", flag, path.to_str().unwrap()]);
        check(&o, 1, "refusing to overwrite it", &m, h);
        assert!(!err(&o).contains("mode:"), "refused before the model loads: {}", err(&o));
    }
    // A path that cannot be created fails at once, before the model loads.
    let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2", "--route-trace", "/nonexistent/dir/t.csv"]);
    check(&o, 1, "--route-trace /nonexistent/dir/t.csv", &m, h);
    assert!(!err(&o).contains("mode:"), "{}", err(&o));
    no_partials(dir.path());
}

#[test]
fn inputs_that_are_not_regular_files_are_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path in our temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let f = fifo.to_str().unwrap();
    for args in [vec!["run", "-m", f], vec!["inspect", f], vec!["replay", f]] {
        let mut child = bin().args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("{args:?} hangs on a FIFO");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut e = String::new();
        child.stderr.take().unwrap().read_to_string(&mut e).unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("a FIFO"), "{args:?}: {e}");
    }
    // A symlink loop is not "no such file".
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::os::unix::fs::symlink(&a, &b).unwrap();
    std::os::unix::fs::symlink(&b, &a).unwrap();
    let o = run(&["run", "-m", a.to_str().unwrap()]);
    assert!(o.status.code() == Some(1) && err(&o).contains("symbolic links"), "{}", err(&o));
}

#[test]
fn sizes_never_wrap_and_a_cache_larger_than_the_experts_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    let r = |extra: &[&str]| {
        let mut a = vec!["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2"];
        a.extend_from_slice(extra);
        run(&a)
    };
    for (flag, v) in [
        ("--cache-mb", "17592186044416"),
        ("--cache-mb", "17592186044421"),
        ("--cache-ceil-mb", "17592186044416"),
        ("--cache-floor-mb", "99999999999999999999"),
    ] {
        let o = r(&[flag, v]);
        check(&o, 1, &format!("{flag} `{v}`"), &m, h);
    }
    // 2 GiB asked of a model whose experts take a few MiB: capped, and the mode line says so.
    let o = r(&["--cache-mb", "2G"]);
    check(&o, 0, "(capped from 2.0 GiB: every expert fits)", &m, h);
    // `auto` holds every expert when RAM allows (no evictions on a model that fits).
    let o = r(&["--json"]);
    check(&o, 0, "budget", &m, h);
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap().to_string();
    let j: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(j["evictions"], 0, "{j}");
    // No cache asked is said as such, not "raised from 0 MiB".
    let o = r(&["--cache-mb", "0"]);
    check(&o, 0, "no cache asked", &m, h);
    assert!(!err(&o).contains("raised from 0"), "{}", err(&o));
    // Flags that mean nothing without streaming are named; a contradiction is refused.
    let o = r(&["--moe-stream", "off", "--overlap", "--cache-mb", "4"]);
    check(&o, 0, "warning: --cache-mb, --overlap ignored", &m, h);
    let o = r(&["--moe-stream", "on", "--engine", "llama"]);
    check(&o, 1, "--moe-stream on streams with bmoe's decoder", &m, h);
}

/// Spawn `args`, read its stdout until `at_least` bytes arrived, call `fault`, then collect.
fn fault_mid_run(
    args: &[&str],
    at_least: usize,
    fault: impl FnOnce(u32),
) -> (std::process::ExitStatus, Vec<u8>, String) {
    let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut got = vec![0u8; at_least];
    out.read_exact(&mut got).unwrap();
    fault(child.id());
    out.read_to_end(&mut got).unwrap();
    let mut e = String::new();
    child.stderr.take().unwrap().read_to_string(&mut e).unwrap();
    (child.wait().unwrap(), got, e)
}

#[test]
fn a_model_truncated_under_its_mapping_ends_with_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let base = ["-p", "Once upon a time", "-n", "3000", "-c", "4096", "-t", "2", "--temp", "0.9", "--seed", "9"];
    for dense in ["mmap", "warm"] {
        let copy = dir.path().join(format!("{dense}.gguf"));
        std::fs::copy(&m, &copy).unwrap();
        let mut a = vec!["run", "-m", copy.to_str().unwrap(), "--dense-weights", dense];
        a.extend_from_slice(&base);
        let want = bin().args(&a).output().unwrap();
        assert!(want.status.success(), "{}", err(&want));
        let (status, text, e) = fault_mid_run(&a, 64, |_| {
            std::fs::OpenOptions::new().write(true).open(&copy).unwrap().set_len(4096).unwrap();
        });
        assert_eq!(status.signal(), None, "{dense}: killed by a signal: {e}");
        assert_eq!(status.code(), Some(1), "{dense}: {e}");
        assert!(e.contains(copy.to_str().unwrap()) && e.contains("truncated"), "{dense}: {e}");
        assert!(want.stdout.starts_with(&text), "{dense}: the text before the fault is the run's prefix");
    }
    // With the dense weights in anonymous memory the next expert read fails, naming the file.
    let copy = dir.path().join("anon.gguf");
    std::fs::copy(&m, &copy).unwrap();
    let mut a = vec!["run", "-m", copy.to_str().unwrap(), "--cache-mb", "0"];
    a.extend_from_slice(&base);
    let (status, _, e) = fault_mid_run(&a, 64, |_| {
        std::fs::OpenOptions::new().write(true).open(&copy).unwrap().set_len(4096).unwrap();
    });
    assert_eq!(status.signal(), None, "{e}");
    assert_eq!(status.code(), Some(1), "{e}");
    assert!(e.contains("anon.gguf") && e.contains("offset"), "{e}");
}

#[test]
fn ctrl_c_and_sigterm_stop_between_steps_with_the_summary_and_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    let csv = dir.path().join("run.csv");
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        // An earlier CSV at the path is replaced by the complete new one, never left empty.
        std::fs::write(&csv, "an earlier run\n").unwrap();
        let a = [
            "run",
            "-m",
            ms,
            "-p",
            "Once upon a time",
            "-n",
            "3000",
            "-c",
            "4096",
            "-t",
            "2",
            "--temp",
            "0.9",
            "--seed",
            "9",
            "--csv",
            csv.to_str().unwrap(),
            "--json",
        ];
        let want = bin().args(a).output().unwrap();
        let (status, text, e) = fault_mid_run(&a, 64, |pid| {
            // SAFETY: a signal to our own child.
            unsafe { libc::kill(pid as i32, sig) };
        });
        assert_eq!(status.signal(), None, "killed by {sig}: {e}");
        assert_eq!(status.code(), Some(code), "{e}");
        assert!(e.contains("stop: interrupted") && e.contains("generation: "), "{e}");
        let text = String::from_utf8_lossy(&text);
        let (body, json) = text.trim_end().rsplit_once('\n').unwrap();
        let j: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(j["stop_reason"], "interrupted");
        assert!(String::from_utf8_lossy(&want.stdout).starts_with(body), "the text is the run's prefix");
        let c = std::fs::read_to_string(&csv).unwrap();
        assert!(c.starts_with("# bmoe ") && c.lines().last().unwrap().starts_with("# summary "), "{c}");
        assert!(c.contains("stop_reason=\"interrupted\""), "{c}");
        assert_eq!(hash(&m), h);
        no_partials(dir.path());
    }
}

#[test]
fn replay_refuses_malformed_traces_with_short_clean_messages() {
    let dir = tempfile::tempdir().unwrap();
    let head = "# route_trace v1\n# model=t arch=test n_layer=1 n_expert=4 n_expert_used=2\n";
    let csv = "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n";
    let cases: Vec<(String, Vec<&str>, &str)> = vec![
        (
            format!("{head}# layer=0 expert_bytes=100 dense_bytes=0\n{csv}0,1,0,0,2,1,0.5,0,0\n"),
            vec![],
            "slot 2 out of range",
        ),
        (
            format!("{head}# layer=0 expert_bytes=18446744073709551615 dense_bytes=0\n{csv}"),
            vec![],
            "implausible expert_bytes",
        ),
        (
            format!("{head}# layer=0 expert_bytes=100 dense_bytes=0\n{csv}0,1,0,0,0,1,0.5,0,0\n"),
            vec!["--k", "0"],
            "--k 0",
        ),
        (
            format!(
                "{head}# layer=0 expert_bytes=100 dense_bytes=0\n{csv}0,1,0,0,0,{}\u{7},0.5,0,0\n",
                "9".repeat(5_000_000)
            ),
            vec![],
            "expert",
        ),
    ];
    for (i, (text, extra, needle)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("{i}.csv"));
        std::fs::write(&p, text).unwrap();
        let mut a = vec!["replay", p.to_str().unwrap(), "--budget-mb", "1", "--policy", "lru"];
        a.extend_from_slice(extra);
        let o = run(&a);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(1), "case {i}: {e}");
        assert!(e.contains(needle), "case {i}: {e}");
        assert!(e.len() < 1000 && !e.contains('\u{7}'), "case {i}: the message is short and clean ({} bytes)", e.len());
    }
}

#[test]
fn a_write_that_fails_leaves_no_partial_model_or_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    // A file size limit makes writes past 1 MiB fail with EFBIG, as a full disk fails them.
    let mut cmd = bin();
    cmd.args(["synth", "--shape", "tiny", "--quant", "q8_0", "--split", "2", "--quiet", "-o", out.to_str().unwrap()]);
    // SAFETY: setrlimit and signal are async-signal-safe; the child only execs after them.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit { rlim_cur: 1 << 20, rlim_max: 1 << 20 };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("m-0000"), "names the file: {}", err(&o));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
    // iobench refuses a file too small to read a block of.
    let f = dir.path().join("io.bin");
    let o = run(&["iobench", "--file", f.to_str().unwrap(), "--create-gib", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("--create-gib 0") && !f.exists(), "{}", err(&o));
}

/// Patch the u32 that follows `needle` (a key or tensor name's bytes) by `f`, `skip` bytes
/// after it.
fn patch(bytes: &mut [u8], needle: &[u8], skip: usize, f: impl Fn(u32) -> u32) {
    let at = bytes.windows(needle.len()).position(|w| w == needle).expect("needle") + needle.len() + skip;
    let v = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    bytes[at..at + 4].copy_from_slice(&f(v).to_le_bytes());
}

#[test]
fn inspect_and_run_refuse_the_same_broken_files() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let good = std::fs::read(&m).unwrap();
    // (what, patch, message): a tensor's type changed (its bytes no longer where the next tensor
    // starts), a block_count below the file's layers, a file cut in its header.
    let mut typed = good.clone();
    // output_norm.weight: name, then n_dims (u32) 1, ne0 (u64), type (u32): f32 -> f16.
    patch(&mut typed, b"output_norm.weight", 4 + 8, |_| 1);
    let mut short = good.clone();
    // qwen3moe.block_count: the key, then its type (u32), then the value (u32): 4 -> 3.
    patch(&mut short, b"qwen3moe.block_count", 4, |v| v - 1);
    let cases = [
        ("type", typed, "expected"),
        ("block_count", short, "block_count 3"),
        ("header", good[..2000].to_vec(), "truncated or corrupt"),
    ];
    for (what, bytes, needle) in cases {
        let p = dir.path().join(format!("{what}.gguf"));
        std::fs::write(&p, &bytes).unwrap();
        let h = hash(&p);
        let ps = p.to_str().unwrap();
        for args in [vec!["inspect", ps], vec!["run", "-m", ps, "-p", "hi", "-n", "2", "-t", "2"]] {
            let o = run(&args);
            check(&o, 1, needle, &p, h);
        }
    }
}

fn synth_seed(dir: &Path, name: &str, seed: &str) -> PathBuf {
    let p = dir.join(name);
    let o = run(&["synth", "--shape", "tiny", "--quant", "q8_0", "--seed", seed, "--quiet", "-o", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    p
}

/// `bmoe ARGS` with `input` piped to stdin.
fn piped(args: &[&str], input: &str) -> Output {
    use std::io::Write as _;
    let mut c = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

/// A session file as (its header, its state bytes).
fn session_parts(p: &Path) -> (serde_json::Value, Vec<u8>) {
    let bytes = std::fs::read(p).unwrap();
    let at = bytes.iter().position(|&b| b == b'\n').unwrap();
    (serde_json::from_slice(&bytes[..at]).unwrap(), bytes[at + 1..].to_vec())
}

/// Write a session file from a header and state, as `save_session` lays it out.
fn write_session(p: &Path, h: &serde_json::Value, state: &[u8]) {
    let mut b = format!("{h}\n").into_bytes();
    b.extend_from_slice(state);
    std::fs::write(p, b).unwrap();
}

/// The line of `e` that starts with `prefix` (the session's cache summary).
fn line_of<'a>(e: &'a str, prefix: &str) -> &'a str {
    e.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no `{prefix}` line: {e}"))
}

/// Every broken session `/load`ed in the middle of a conversation is refused with its reason,
/// and the conversation goes on exactly as the one that never tried: the same next reply, byte
/// for byte, and the same expert cache (the session's hit, read and eviction figures equal).
#[test]
fn a_failed_load_leaves_the_conversation_its_kv_cache_and_its_expert_cache_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let h = hash(&m);
    // Another model of the same shape, size and file name (another seed).
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let other = synth_seed(&dir.path().join("other"), "t.gguf", "2");
    assert_eq!(std::fs::metadata(&m).unwrap().len(), std::fs::metadata(&other).unwrap().len());
    let chat = |model: &Path, input: &str| {
        let ms = model.to_str().unwrap();
        let a = [
            "chat",
            "-m",
            ms,
            "-n",
            "8",
            "-t",
            "2",
            "--temp",
            "0",
            "--ignore-eos",
            "--cache-mb",
            "1",
            "--overlap",
            "off",
        ];
        let o = piped(&a, input);
        assert!(o.status.success(), "{}", err(&o));
        o
    };
    let s = |name: &str| dir.path().join(name);
    let good = s("good.session");
    chat(&m, &format!("Hello there\n/save {}\n", good.display()));
    chat(&other, &format!("Hello there\n/save {}\n", s("foreign.session").display()));
    let bytes = std::fs::read(&good).unwrap();
    let (head, state) = session_parts(&good);
    let header_len = bytes.len() - state.len();
    let edited = |name: &str, f: &dyn Fn(&mut serde_json::Value, &mut Vec<u8>)| {
        let (mut h, mut st) = (head.clone(), state.clone());
        f(&mut h, &mut st);
        write_session(&s(name), &h, &st);
    };
    std::fs::write(s("empty.session"), b"").unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8 | 0x80
        })
        .collect();
    std::fs::write(s("random.session"), random).unwrap();
    std::fs::write(s("cut-state.session"), &bytes[..bytes.len() - 100]).unwrap();
    std::fs::write(s("cut-header.session"), &bytes[..50]).unwrap();
    let mut trailing = bytes.clone();
    trailing.extend_from_slice(b"xx");
    std::fs::write(s("trailing.session"), trailing).unwrap();
    edited("nan.session", &|_, st| {
        let n = st.len();
        st[n - 64..].fill(0xff);
    });
    edited("expert.session", &|h, _| h["experts"].as_array_mut().unwrap().push(serde_json::json!([0, 999])));
    edited("layer.session", &|h, _| h["experts"].as_array_mut().unwrap().push(serde_json::json!([99, 0])));
    edited("twice.session", &|h, _| {
        let first = h["experts"][0].clone();
        h["experts"].as_array_mut().unwrap().push(first);
    });
    edited("replies.session", &|h, _| h["extra"]["chat"]["replies"] = serde_json::json!(1_000_000_000_000u64));
    edited("size.session", &|h, _| {
        h["tokens"].as_array_mut().unwrap().pop();
    });
    edited("vocab.session", &|h, _| h["tokens"][3] = serde_json::json!(1 << 30));
    edited("role.session", &|h, _| h["extra"]["chat"]["messages"][0][0] = serde_json::json!("wizard"));
    edited("format.session", &|h, _| h["format"] = serde_json::json!("bmoe-session-1"));
    let cases: &[(&str, String)] = &[
        ("empty", "an empty file (0 bytes), not a session file".into()),
        ("random", "not a session file (a session begins with its JSON header line".into()),
        (
            "cut-state",
            format!(
                "the file ends at byte {}, the header promises {} ({header_len} bytes of header and {} of state)",
                bytes.len() - 100,
                bytes.len(),
                state.len()
            ),
        ),
        ("cut-header", "the file ends at byte 50, inside its header line".into()),
        ("trailing", format!("the file is {} bytes, the header promises {}", bytes.len() + 2, bytes.len())),
        ("foreign", "a session of another model: saved with t.gguf (7858880 bytes, content ".into()),
        ("nan", "the saved KV cache holds a NaN or infinite value at byte".into()),
        ("expert", "cached expert (0, 999): expert 999 is out of range (layer 0 has 8)".into()),
        ("layer", "cached expert (99, 0): layer 99 is out of range (the model has 4 MoE layers)".into()),
        ("twice", "is named twice".into()),
        ("replies", "the session's reply count is 1000000000000, but it holds 1 replies".into()),
        ("size", "bytes of state for".into()),
        ("vocab", "token 1073741824 at position 3 is outside the vocabulary".into()),
        ("role", "has the role \"wizard\"".into()),
        ("format", "format bmoe-session-1, written by an older bmoe".into()),
    ];
    let want = chat(&m, "Hello there\nWhat comes next?\n");
    let loads: String =
        cases.iter().map(|(n, _)| format!("/load {}\n", s(&format!("{n}.session")).display())).collect();
    let got = chat(&m, &format!("Hello there\n{loads}What comes next?\n"));
    let e = err(&got);
    for (name, needle) in cases {
        assert!(e.contains(needle.as_str()), "{name}: the message lacks `{needle}`: {e}");
    }
    // The foreign session names both models, each by its content.
    let foreign = e.lines().find(|l| l.contains("a session of another model")).unwrap();
    assert_eq!(foreign.matches("t.gguf (7858880 bytes, content ").count(), 2, "{foreign}");
    assert_eq!(e.matches("nothing was loaded; the conversation is as it was").count(), cases.len(), "{e}");
    assert!(!e.contains("loaded: "), "{e}");
    assert_eq!(got.stdout, want.stdout, "the next reply differs from the conversation that never tried a load");
    let cache = "session: moe-cache ";
    assert_eq!(line_of(&e, cache), line_of(&err(&want), cache), "the expert cache changed");
    // A context too small for the session: refused, naming what would hold it.
    let o = piped(
        &["chat", "-m", m.to_str().unwrap(), "-c", "16", "-t", "2", "--temp", "0"],
        &format!("/load {}\n", good.display()),
    );
    assert!(
        o.status.success() && err(&o).contains("but this engine's context holds 16 (-c): load it with -c"),
        "{}",
        err(&o)
    );
    // And the good session still loads.
    let o = chat(&m, &format!("/load {}\nWhat comes next?\n", good.display()));
    assert!(err(&o).contains("loaded: 2 messages"), "{}", err(&o));
    assert_eq!(hash(&m), h, "the model file changed");
    no_partials(dir.path());
}

/// A NaN in a restored KV cache that the load cannot see (llama.cpp's state: its values are
/// not ours to parse) is caught at the first step: reported, nothing sampled from it, the
/// context dropped, and the next message answered.
#[test]
fn a_nan_in_a_restored_kv_cache_is_reported_at_the_first_step_never_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let ms = m.to_str().unwrap();
    let a = ["chat", "-m", ms, "--engine", "llama", "-n", "8", "-t", "2", "--temp", "0", "--ignore-eos"];
    let f = dir.path().join("s.session");
    let o = piped(&a, &format!("Hello there\n/save {}\n", f.display()));
    assert!(o.status.success(), "{}", err(&o));
    let (h, mut state) = session_parts(&f);
    let n = state.len();
    state[n - 64..].fill(0xff);
    write_session(&f, &h, &state);
    let o = piped(&a, &format!("/load {}\nWhat comes next?\nAnd after that?\n", f.display()));
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("loaded: 2 messages"), "{e}");
    assert!(e.contains("hold a NaN or an infinity: the context's state is corrupt"), "{e}");
    assert!(e.contains("the context was dropped and the message not sent"), "{e}");
    // One reply, to the message after: the corrupt step printed no text at all.
    assert_eq!(e.matches("reply: ").count() - e.matches("reply: error").count(), 1, "{e}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).matches('\n').count(), 1, "{:?}", o.stdout);
}

/// Thread and lane counts: `--io-threads` as `-t` is (refused at 0 and when absurd, before
/// anything is spawned, with no thread's panic text; warned about above a disk's queue), and
/// `iobench --lanes`, `serve --queue` the same.
#[test]
fn io_lanes_and_queues_are_capped_before_anything_is_spawned() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    for (lanes, backend) in [("100000", "auto"), ("100000", "pread"), ("0", "auto"), ("1025", "uring")] {
        let o =
            run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2", "--io-threads", lanes, "--io-backend", backend]);
        check(&o, 1, &format!("--io-threads {lanes}: "), &m, h);
        let e = err(&o);
        assert!(!e.contains("panicked") && !e.contains("stack guard") && !e.contains("mode:"), "{e}");
    }
    let o = run(&["run", "-m", ms, "-p", "hi", "-n", "2", "-t", "2", "--io-threads", "100"]);
    check(&o, 0, "warning: --io-threads 100 reads in flight is more than a disk's queue uses", &m, h);
    let o = run(&["iobench", "--file", ms, "--block", "4K", "--lanes", "100000", "--seconds", "0.1"]);
    check(&o, 1, "--lanes 100000: more than 1024 reads in flight is refused", &m, h);
    for q in ["0", "100000000000"] {
        let o = run(&["serve", "-m", ms, "-t", "2", "--port", "0", "--queue", q]);
        check(&o, 1, &format!("--queue {q}: 1 to 4096"), &m, h);
        assert!(!err(&o).contains("mode:"), "refused before the model loads: {}", err(&o));
    }
}

/// `bmoe bench` checks every row before the first runs: `-r 0`, a knob list where nothing
/// streams, flags that contradict, a thread count refused, a test beyond the row's context.
#[test]
fn bench_refuses_bad_rows_before_any_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "t.gguf", &[]);
    let (ms, h) = (m.to_str().unwrap(), hash(&m));
    let cases: &[(&[&str], &str)] = &[
        (&["-r", "0"], "-r 0: at least one repetition"),
        (&["--cache-mb", "0,1", "--run-args", "--moe-stream off"], "--cache-mb 0 in a row where nothing streams"),
        (&["--overlap", "off,full", "--run-args", "--engine llama"], "--overlap off in a row where nothing streams"),
        (&["--run-args", "--moe-stream on --engine llama"], "--moe-stream on streams with bmoe's decoder"),
        (&["-t", "2,1000"], "-t 1000: this process may use"),
        (&["--io-threads", "4,0"], "--io-threads 0: at least one read"),
        (&["-p", "512", "--run-args", "-c 256"], "pp512 needs a context of 512 tokens, but the row gives -c 256"),
        (&["-p", "0", "-n", "300", "--run-args", "-c 300"], "tg300 needs a context of 301 tokens"),
        (&["-p", "100000000"], "-c 100000000 needs"),
    ];
    for (extra, needle) in cases {
        let mut a = vec!["bench", "-m", ms];
        for (flag, v) in [("-p", "8"), ("-n", "4"), ("-r", "1")] {
            if !extra.contains(&flag) {
                a.extend([flag, v]);
            }
        }
        a.extend_from_slice(extra);
        let t = Instant::now();
        let o = run(&a);
        check(&o, 1, needle, &m, h);
        assert!(!err(&o).contains("bench: ["), "{extra:?}: a row ran before the refusal: {}", err(&o));
        assert!(o.stdout.is_empty(), "{extra:?}");
        assert!(t.elapsed() < Duration::from_secs(30), "{extra:?} took {:?}", t.elapsed());
    }
}

/// `bmoe replay --hosts`: 0 and 1000 refused before the trace is even read; more hosts than a
/// layer's experts refused once the trace says how many.
#[test]
fn replay_refuses_host_counts_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-trace.csv");
    for hosts in ["0", "1000", "2,0"] {
        let o = run(&["replay", missing.to_str().unwrap(), "--hosts", hosts, "--n-embd", "64"]);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("a cluster has 1 to 256 hosts") && !e.contains("no-such-trace"), "{hosts}: {e}");
    }
    let p = dir.path().join("t.csv");
    let trace = "# route_trace v1\n# model=t arch=test n_layer=1 n_expert=4 n_expert_used=2\n\
                 # layer=0 expert_bytes=100 dense_bytes=0\n\
                 turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n0,1,0,0,0,1,0.5,0,0\n";
    std::fs::write(&p, trace).unwrap();
    let base = ["replay", p.to_str().unwrap(), "--n-embd", "64", "--disk-mibps", "1000", "--expert-ms-per-mib", "1"];
    let mut a = base.to_vec();
    a.extend(["--hosts", "5"]);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("--hosts 5: the trace's model has 4 experts per layer"), "{}", err(&o));
    let mut a = base.to_vec();
    a.extend(["--hosts", "4", "--budget-mb", "1"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", err(&o));
}
