//! `bmoe chat` end to end: conversations piped and typed through a pseudo-terminal, sessions
//! saved in one process and loaded in another, and llama.cpp's flags.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bmoe"))
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn synth(dir: &Path, arch: &str) -> PathBuf {
    let p = dir.join(format!("{arch}.gguf"));
    let o = bin()
        .args(["synth", "--arch", arch, "--shape", "tiny", "--quant", "q8_0", "--seed", "3", "--quiet", "-o"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    p
}

/// `bmoe ARGS` with `input` on stdin (a pipe).
fn chat(args: &[&str], input: &str) -> Output {
    let mut c = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

/// The `reply:` lines' (new tokens evaluated, tokens reused).
fn prefills(e: &str) -> Vec<(usize, usize)> {
    e.lines()
        .filter_map(|l| l.strip_prefix("reply: "))
        .map(|l| {
            let p = l.split_once("(prefill ").unwrap().1;
            let (new, rest) = p.split_once(" new tokens, ").unwrap();
            (new.parse().unwrap(), rest.split_once(' ').unwrap().0.parse().unwrap())
        })
        .collect()
}

const THREE: &str = "Hello there\nWhat comes next?\nAnd after that?\n";

/// Three turns piped in: streamed through an evicting cache, the replies are those of the
/// model resident; turns 2 and 3 evaluate only their new tokens (a few), reusing the rest.
#[test]
fn a_piped_conversation_streams_the_replies_of_the_resident_model() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "qwen3moe");
    let base = ["chat", "-m", m.to_str().unwrap(), "-n", "10", "-t", "2", "--temp", "0", "--ignore-eos"];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        let o = chat(&a, THREE);
        assert!(o.status.success(), "{}", err(&o));
        o
    };
    let resident = run(&["--moe-stream", "off"]);
    let streamed = run(&["--cache-mb", "1"]);
    assert_eq!(streamed.stdout, resident.stdout, "streamed replies differ from resident");
    let e = err(&streamed);
    assert!(e.contains("mode: streaming") && !e.contains("evictions 0"), "{e}");
    let p = prefills(&e);
    assert_eq!(p.len(), 3, "{e}");
    assert_eq!(p[0].1, 0, "{e}");
    for (i, &(new, reused)) in p.iter().enumerate().skip(1) {
        // The context held everything but the last reply's last token.
        assert_eq!(reused, p[i - 1].0 + p[i - 1].1 + 9, "turn {}: {e}", i + 1);
        // The synthetic vocabulary is mostly single characters: the template's markers and the
        // message are some 30 tokens, the history more.
        assert!(new < 40, "turn {} evaluated {new} tokens: {e}", i + 1);
    }
    assert!(e.contains("session: 3 replies, 30 tokens generated"), "{e}");
    // `bmoe run -cnv` and `-i` are the same conversation.
    for alias in ["-cnv", "-i"] {
        let mut a = base.to_vec();
        a[0] = "run";
        a.push(alias);
        let o = chat(&a, THREE);
        assert!(o.status.success(), "{alias}: {}", err(&o));
        assert_eq!(o.stdout, streamed.stdout, "{alias}");
    }
}

/// Save after turn 2, load in a new process: turn 3 is the turn of the conversation that
/// never stopped, sampled (a seeded temperature, penalties) and streamed through an evicting
/// cache; and the commands' errors leave the conversation going.
#[test]
fn a_conversation_saved_in_one_process_continues_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "qwen3moe");
    let s = dir.path().join("talk.session");
    let args = [
        "chat",
        "-m",
        m.to_str().unwrap(),
        "-n",
        "12",
        "-t",
        "2",
        "--temp",
        "0.9",
        "-s",
        "11",
        "--repeat-penalty",
        "1.1",
        "--cache-mb",
        "1",
        "--ignore-eos",
    ];
    let whole = chat(&args, THREE);
    assert!(whole.status.success(), "{}", err(&whole));
    let first = chat(&args, &format!("Hello there\nWhat comes next?\n/save {}\n", s.display()));
    assert!(first.status.success() && err(&first).contains("saved: 4 messages"), "{}", err(&first));
    assert!(whole.stdout.starts_with(&first.stdout));
    let second = chat(&args, &format!("/load {}\nAnd after that?\n", s.display()));
    let e = err(&second);
    assert!(second.status.success() && e.contains("loaded: 4 messages") && e.contains("experts cached"), "{e}");
    assert!(!second.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&whole.stdout[first.stdout.len()..]),
        String::from_utf8_lossy(&second.stdout),
        "turn 3 after /load differs"
    );
    // Turn 3 evaluated its own tokens only.
    let p = prefills(&e);
    assert!(p[0].1 > 0 && p[0].0 < 40, "{e}");
    // Bad commands: messages, and the conversation goes on.
    let model_file = m.to_str().unwrap();
    let o = chat(&args, &format!("/load {}\n/save {model_file}\n/load\n/frobnicate\nHi\n", dir.path().display()));
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("not a session file"), "{e}");
    assert!(e.contains("that is the model file"), "{e}");
    assert!(e.contains("/load needs a FILE") && e.contains("unknown command /frobnicate"), "{e}");
    assert!(e.contains("session: 1 replies"), "{e}");
}

/// A message that would overflow the context is refused with a message, and the conversation
/// continues; `/reset` starts over.
#[test]
fn a_full_context_refuses_the_message_and_reset_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "qwen3moe");
    let long = "word ".repeat(200);
    let o = chat(
        &["chat", "-m", m.to_str().unwrap(), "-n", "4", "-t", "2", "-c", "128", "--temp", "0"],
        &format!("{long}\nHi\n/reset\nHi\n"),
    );
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("context full: the conversation with this message is") && e.contains("(-c)"), "{e}");
    assert!(e.contains("reset: the conversation is empty"), "{e}");
    let p = prefills(&e);
    assert_eq!(p.len(), 2, "{e}");
    // After /reset, the same message is evaluated as the first one was.
    assert_eq!(p[1], p[0], "{e}");
}

/// A pseudo-terminal: the child's controlling terminal, as a person's would be.
struct Pty {
    master: std::fs::File,
    seen: Arc<Mutex<Vec<u8>>>,
    child: std::process::Child,
}

impl Pty {
    fn spawn(args: &[&str]) -> Self {
        let (mut m, mut s) = (0, 0);
        // SAFETY: two out-parameters; no name, default termios and size.
        let r = unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
        assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: fresh descriptors we own.
        let (master, slave) = unsafe { (std::fs::File::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        let mut cmd = bin();
        cmd.args(args)
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave.try_clone().unwrap());
        // SAFETY: setsid and ioctl are async-signal-safe; the terminal becomes the child's
        // controlling terminal, so Ctrl-C typed into it is its SIGINT.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        let child = cmd.spawn().unwrap();
        drop(slave);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (mut r, sink) = (master.try_clone().unwrap(), seen.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self { master, seen, child }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// Wait until the output holds `needle` `count` times.
    fn wait_for(&self, needle: &str, count: usize) {
        let t = Instant::now();
        while self.text().matches(needle).count() < count {
            assert!(t.elapsed() < Duration::from_secs(120), "waited for {needle:?} x{count}; got:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_bytes(&self, n: usize) {
        let t = Instant::now();
        while self.seen.lock().unwrap().len() < n {
            assert!(t.elapsed() < Duration::from_secs(120), "waited for {n} bytes; got:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn len(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn typ(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
    }

    fn exit(mut self) -> (std::process::ExitStatus, String) {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                return (s, self.text());
            }
            assert!(t.elapsed() < Duration::from_secs(60), "did not exit; got:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Typed as a person would: a message, Ctrl-C in the middle of its long reply (the reply
/// stops, the prompt returns), `/stats`, another message, Ctrl-D (the summary, exit 0); and
/// Ctrl-C at the prompt (the summary, exit 130).
#[test]
fn typed_into_a_terminal_with_ctrl_c_mid_reply_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "qwen3moe");
    let ms = m.to_str().unwrap();
    // A reply that would run to a context of 32768 tokens: long enough to interrupt.
    let mut p = Pty::spawn(&["chat", "-m", ms, "-t", "2", "--temp", "0", "--ignore-eos", "-c", "32768"]);
    p.wait_for("> ", 1);
    assert!(p.text().contains("commands: /reset"), "{}", p.text());
    p.typ("Tell me a long story\r");
    let at = p.len();
    p.wait_bytes(at + 400);
    p.typ("\x03");
    p.wait_for("stop: interrupted", 1);
    p.wait_for("> ", 2);
    p.typ("/stats\r");
    p.wait_for("stop: interrupted", 2);
    assert!(p.text().contains("prefill: ") && p.text().contains("generation: "), "{}", p.text());
    p.typ("Now a short one\r");
    // Ctrl-C again: the second reply stops too, the conversation goes on.
    let at = p.len();
    p.wait_bytes(at + 200);
    p.typ("\x03");
    p.wait_for("> ", 3);
    p.typ("\x04");
    let (status, text) = p.exit();
    assert_eq!(status.signal(), None, "{text}");
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(text.contains("session: 2 replies"), "{text}");
    let reply2 = text.lines().filter(|l| l.starts_with("reply: ")).nth(1).unwrap_or_default().to_string();
    assert!(reply2.contains(" reused)") && !reply2.contains(" 0 reused"), "{text}");

    let mut p = Pty::spawn(&["chat", "-m", ms, "-t", "2"]);
    p.wait_for("> ", 1);
    p.typ("\x03");
    let (status, text) = p.exit();
    assert_eq!(status.signal(), None, "{text}");
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("session: 0 replies"), "{text}");
}

/// llama.cpp's flags parse: the sampler's, `-f`, `-p -`, `-e`, `-s`, `-b`, `-ub`, `-sys`, and
/// the ones that mean nothing here (`-ngl`, `-fa`, `--mlock`, `--no-mmap`, `--numa`) warn in
/// one line each instead of failing or being misread (`-ngl 99` is not `-n gl`).
#[test]
fn llama_cpp_flags_parse_and_the_irrelevant_ones_warn() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "qwen3moe");
    let ms = m.to_str().unwrap();
    let base = ["run", "-m", ms, "-n", "6", "-t", "2", "--verbose-prompt"];
    let run = |extra: &[&str], input: &str| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        let o = chat(&a, input);
        assert!(o.status.success(), "{extra:?}: {}", err(&o));
        o
    };
    let prompt_line = |o: &Output| err(o).lines().find(|l| l.starts_with("prompt: ")).unwrap().to_string();
    let o = run(
        &[
            "-p",
            "Hi",
            "-ngl",
            "99",
            "-fa",
            "--mlock",
            "--no-mmap",
            "--numa",
            "-s",
            "5",
            "-b",
            "256",
            "-ub",
            "64",
            "--min-p",
            "0.1",
            "--repeat-penalty",
            "1.1",
            "--repeat-last-n",
            "32",
            "--presence-penalty",
            "0.2",
            "--frequency-penalty",
            "0.1",
            "--typical",
            "0.9",
            "--top-k",
            "20",
            "--top-p",
            "0.9",
            "--ignore-eos",
            "--color",
        ],
        "",
    );
    let e = err(&o);
    for w in ["-ngl ignored", "-fa ignored", "--mlock ignored", "--no-mmap ignored", "--numa ignored"] {
        assert_eq!(e.matches(w).count(), 1, "{w}: {e}");
    }
    assert!(e.contains("stop: -n tokens generated"), "{e}");
    // The same seed, the same text; -s and --seed are one flag.
    let again = run(
        &[
            "-p",
            "Hi",
            "--seed",
            "5",
            "--min-p",
            "0.1",
            "--repeat-penalty",
            "1.1",
            "--repeat-last-n",
            "32",
            "--presence-penalty",
            "0.2",
            "--frequency-penalty",
            "0.1",
            "--typical",
            "0.9",
            "--top-k",
            "20",
            "--top-p",
            "0.9",
            "--ignore-eos",
        ],
        "",
    );
    assert_eq!(again.stdout, o.stdout, "-s 5 and --seed 5 differ (or --color coloured a pipe)");
    // -p, -f FILE, -p - (stdin) and -e's escapes are one prompt.
    let f = dir.path().join("prompt.txt");
    std::fs::write(&f, "one\ttwo\n").unwrap();
    let a = prompt_line(&run(&["-p", "one\ttwo\n"], ""));
    assert_eq!(prompt_line(&run(&["-f", f.to_str().unwrap()], "")), a);
    assert_eq!(prompt_line(&run(&["-p", "-"], "one\ttwo\n")), a);
    assert_eq!(prompt_line(&run(&["-e", "-p", "one\\ttwo\\n"], "")), a);
    // -sys: the system message in the template.
    let o = run(&["--chat", "-sys", "Be brief.", "-p", "Hi"], "");
    let toks: Vec<(i32, String)> = serde_json::from_str(prompt_line(&o).split_once(" tokens: ").unwrap().1).unwrap();
    let text: String = toks.into_iter().map(|t| t.1).collect();
    assert!(text.starts_with("<|im_start|>system\nBe brief.<|im_end|>"), "{text}");
    // Nonsense stays refused, naming the flag.
    let o = chat(&["run", "-m", ms, "--min-p", "2"], "");
    assert!(!o.status.success() && err(&o).contains("--min-p"), "{}", err(&o));
}

/// Issue 44, defect 8: both decoders are `--engine bmoe`, and a session of one was refused by
/// the other for a reason that misled (llama.cpp's raw `state_set_data` error one way, "not this
/// model's state" the other). The session records its decoder and the other says so by name.
#[test]
fn a_session_of_one_decoder_is_refused_by_the_other_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path(), "qwen3moe");
    let m = m.to_str().unwrap();
    let base = ["chat", "-m", m, "-n", "4", "-t", "2", "--temp", "0", "--ignore-eos", "--moe-stream", "on"];
    let args = |decoder| [&base[..], &["--decoder", decoder]].concat();
    for (from, to) in [("native", "generic"), ("generic", "native")] {
        let s = dir.path().join(format!("{from}.session"));
        let o = chat(&args(from), &format!("Hello there\n/save {}\n", s.display()));
        assert!(o.status.success() && err(&o).contains("saved: "), "{}", err(&o));
        // Its own decoder takes it back.
        let o = chat(&args(from), &format!("/load {}\n", s.display()));
        assert!(o.status.success() && err(&o).contains("loaded: "), "{}", err(&o));
        let o = chat(&args(to), &format!("/load {}\nHi\n", s.display()));
        let e = err(&o);
        assert!(o.status.success(), "{e}");
        let why = format!("saved by the {from} decoder; this run uses the {to} one (pass --decoder {from})");
        assert!(e.contains(&why), "{e}");
        assert!(!e.contains("loaded: ") && !e.contains("state_set_data"), "{e}");
    }
}
