//! `--rpc` end to end on loopback: `bmoe rpc-server` processes on free ports hold the experts of
//! a tiny synthetic model, and the text is the one-host text byte for byte, greedy and sampled,
//! with every placement; then hosts fail under a run (one killed, one stopped) and at start (a
//! closed port, a port in use), and the run still ends with the one-host text, says which host
//! it lost, and exits 0. Nothing here is timed: a stopped host costs the run one timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bmoe"))
}

/// `bmoe ARGS` → (success, stdout, stderr).
fn bmoe(args: &[&str]) -> (bool, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A `bmoe rpc-server` on a free loopback port, killed when dropped.
struct Server {
    child: Child,
    endpoint: String,
}

impl Server {
    fn start() -> Server {
        Server::start_logging(Stdio::null())
    }

    /// A server whose stderr goes to `stderr`.
    fn start_logging(stderr: impl Into<Stdio>) -> Server {
        let port = free_port();
        let child = bin()
            .args(["rpc-server", "--port", &port.to_string(), "-t", "1"])
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let endpoint = format!("127.0.0.1:{port}");
        let until = Instant::now() + Duration::from_secs(20);
        // Listening once a connection is accepted (the server drops a client that sends nothing).
        while TcpStream::connect(&endpoint).is_err() {
            assert!(Instant::now() < until, "rpc-server on {endpoint} never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, endpoint }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(self.pid(), sig) }, 0);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn synth(dir: &Path) -> String {
    let model = dir.join("tiny.gguf");
    let m = model.to_str().unwrap().to_string();
    let (ok, _, err) = bmoe(&["synth", "--shape", "tiny", "--quant", "q4_k_m", "--seed", "11", "-o", &m]);
    assert!(ok, "{err}");
    m
}

/// A run's flags: a fixed prompt, two threads, no end token.
fn run_args<'a>(m: &'a str, n: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "-m", m, "-p", "Once upon a time", "-n", n, "-t", "2", "-c", "512", "--ignore-eos"];
    a.extend_from_slice(extra);
    a
}

#[test]
fn hosts_give_the_one_host_text_greedy_and_sampled_with_every_placement() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path());
    let servers: Vec<Server> = (0..3).map(|_| Server::start()).collect();
    let hosts = servers.iter().map(|s| s.endpoint.clone()).collect::<Vec<_>>().join(",");
    let trace = dir.path().join("profile.route.csv");
    let trace = trace.to_str().unwrap();
    let every: [&[&str]; 4] = [
        &["--placement", "popularity"],
        &["--placement", "round-robin"],
        &["--placement-trace", trace],
        &["--placement", "replicate-hot-2", "--placement-trace", trace],
    ];
    // Greedy under every placement; sampled under the two that take the trace's counts.
    let greedy: &[&str] = &["--temp", "0"];
    let sampled: &[&str] = &["--temp", "0.9", "--seed", "7"];
    for (sampling, placements) in [(greedy, &every[..]), (sampled, &every[2..])] {
        let (ok, one, err) = bmoe(&run_args(&m, "16", &[sampling, &["--route-trace", trace]].concat()));
        assert!(ok, "{err}");
        assert!(!one.trim().is_empty());
        for &placement in placements {
            let mut extra = vec!["--rpc", &hosts, "--json"];
            extra.extend_from_slice(sampling);
            extra.extend_from_slice(placement);
            let (ok, out, err) = bmoe(&run_args(&m, "16", &extra));
            assert!(ok, "{placement:?}: {err}");
            assert!(err.contains("rpc: 3 of 3 expert hosts up"), "{err}");
            assert!(!err.contains("lost host"), "{err}");
            let (text, last) = out.trim_end().rsplit_once('\n').unwrap();
            assert_eq!(format!("{text}\n"), one, "{sampling:?} {placement:?}: the text differs from one host's");
            let j: serde_json::Value = serde_json::from_str(last).unwrap();
            let hosts = j["rpc_hosts"].as_array().unwrap();
            assert_eq!(hosts.len(), 3, "{j}");
            // The hosts did compute: every decode token sent each host's layers something.
            let trips: f64 = hosts.iter().map(|h| h["round_trips/tok"].as_f64().unwrap()).sum();
            let sent: f64 = hosts.iter().map(|h| h["sent_MiB/tok"].as_f64().unwrap()).sum();
            assert!(trips > 0.0 && sent > 0.0, "{j}");
            assert!(hosts.iter().all(|h| h["up"] == true && h["lost"].is_null()), "{j}");
        }
    }
    // Resident (no streaming on the coordinator) and without the overlap: the same text.
    let (ok, one, err) = bmoe(&run_args(&m, "12", &["--temp", "0", "--moe-stream", "off"]));
    assert!(ok, "{err}");
    for extra in [&["--moe-stream", "off"][..], &["--overlap", "off"]] {
        let (ok, out, err) = bmoe(&run_args(&m, "12", &[&["--temp", "0", "--rpc", &hosts][..], extra].concat()));
        assert!(ok, "{err}");
        assert_eq!(out, one, "{extra:?}");
    }
}

/// `bmoe run` with its stderr read line by line as it comes.
struct Running {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Running { child, lines, seen: Vec::new() }
    }

    /// Wait until `n` `--progress` lines went by (or the run ends).
    fn until_token(&mut self, n: usize) {
        while self.seen.iter().filter(|l| l.starts_with('{')).count() < n {
            match self.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(l) => self.seen.push(l),
                Err(_) => panic!("no token {n}: {}", self.seen.join("\n")),
            }
        }
    }

    fn pause(&self, on: bool) {
        let sig = if on { libc::SIGSTOP } else { libc::SIGCONT };
        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    fn finish(mut self) -> (bool, String, String) {
        let out = self.child.wait_with_output().unwrap();
        self.seen.extend(self.lines.iter());
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), self.seen.join("\n"))
    }
}

#[test]
fn a_host_killed_and_a_host_stopped_mid_run_cost_time_not_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path());
    let (ok, one, err) = bmoe(&run_args(&m, "64", &["--temp", "0"]));
    assert!(ok, "{err}");
    let (a, b) = (Server::start(), Server::start());
    let hosts = format!("{},{}", a.endpoint, b.endpoint);
    let mut run = Running::start(&run_args(
        &m,
        "64",
        &["--temp", "0", "--rpc", &hosts, "--rpc-timeout-ms", "1000", "--progress"],
    ));
    // The coordinator is paused while a host goes, so that the host goes mid-run whatever the
    // machine's speed.
    run.until_token(8);
    run.pause(true);
    a.signal(libc::SIGKILL);
    run.pause(false);
    run.until_token(24);
    run.pause(true);
    b.signal(libc::SIGSTOP);
    run.pause(false);
    let (ok, out, err) = run.finish();
    assert!(ok, "{err}");
    assert_eq!(out, one, "the text differs from one host's after losing hosts: {err}");
    let lost = |s: &Server, i: usize| format!("rpc: lost host {i} ({}) in decode step", s.endpoint);
    assert!(err.contains(&lost(&a, 1)), "{err}");
    assert!(err.contains(&lost(&b, 2)) && err.contains("no reply in 1000 ms"), "{err}");
    assert_eq!(err.matches("rpc: lost host").count(), 2, "{err}");
}

#[test]
fn hosts_that_cannot_start_are_a_clear_error_or_a_loss_never_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path());
    let (ok, one, err) = bmoe(&run_args(&m, "8", &["--temp", "0"]));
    assert!(ok, "{err}");
    // Nothing listens there: the host is lost at start, the run is one host's.
    let closed = format!("127.0.0.1:{}", free_port());
    let (ok, out, err) = bmoe(&run_args(&m, "8", &["--temp", "0", "--rpc", &closed]));
    assert!(ok, "{err}");
    assert_eq!(out, one);
    assert!(err.contains(&format!("rpc: lost host 1 ({closed}) at start: cannot connect to {closed}")), "{err}");
    assert!(err.contains("rpc: 0 of 1 expert hosts up"), "{err}");
    // A port in use: the server says so and exits.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (ok, _, err) = bmoe(&["rpc-server", "--port", &port]);
    assert!(!ok && err.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{err}");
    // Bad flags: refused before anything starts.
    for (flags, needle) in [
        (&["--rpc", "127.0.0.1"][..], "expected HOST:PORT"),
        (&["--placement", "round-robin"], "there is none"),
        (&["--rpc", &closed, "--placement", "replicate-hot-2"], "--placement-trace"),
        (&["--rpc", &closed, "--engine", "llama"], "native decoder"),
    ] {
        let (ok, out, err) = bmoe(&run_args(&m, "8", flags));
        assert!(!ok && out.is_empty() && err.contains(needle), "{flags:?}: {err}");
    }
    let (ok, _, err) = bmoe(&["rpc-server", "--host", "localhost"]);
    assert!(!ok && err.contains("IPv4"), "{err}");
}

/// ggml-rpc's HELLO as a coordinator sends it: the command byte (14), the request's size (u64
/// LE) and the request (protocol version and transport caps; zeros are accepted).
fn hello() -> Vec<u8> {
    let mut m = vec![14u8];
    m.extend_from_slice(&24u64.to_le_bytes());
    m.extend_from_slice(&[0; 24]);
    m
}

/// Issue 44, defect 1: a client that closes while the server writes to it (a HELLO sent, the
/// socket closed before the reply, as a coordinator that gave up waiting in the accept queue
/// does) killed the server with SIGPIPE (exit 141, no word). It costs that connection only: the
/// server says it dropped the client and answers the next one, a raw HELLO and a coordinator.
#[test]
fn a_client_that_closes_while_the_server_writes_costs_that_connection_only() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path());
    let log = dir.path().join("rpc-server.stderr");
    let mut server = Server::start_logging(std::fs::File::create(&log).unwrap());
    for _ in 0..5 {
        let mut s = TcpStream::connect(&server.endpoint).expect("the server is gone, killed by a client before");
        s.write_all(&hello()).unwrap();
        drop(s);
    }
    // The next client is served once those are: its HELLO gets a reply (a u64 size, then that).
    let mut s = TcpStream::connect(&server.endpoint).expect("the server is gone");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(&hello()).unwrap();
    let mut size = [0u8; 8];
    s.read_exact(&mut size).expect("no reply to the next client's HELLO");
    let size = u64::from_le_bytes(size);
    assert!(size > 0 && size < 1024, "{size}");
    s.read_exact(&mut vec![0; size as usize]).unwrap();
    drop(s);
    assert!(server.child.try_wait().unwrap().is_none(), "the server exited");
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(err.contains("rpc-server: a coordinator closed its connection while this server was writing"), "{err}");
    // And a coordinator after them runs on it, with the one-host text.
    let (ok, one, err) = bmoe(&run_args(&m, "8", &["--temp", "0"]));
    assert!(ok, "{err}");
    let (ok, out, err) = bmoe(&run_args(&m, "8", &["--temp", "0", "--rpc", &server.endpoint]));
    assert!(ok, "{err}");
    assert!(err.contains("rpc: 1 of 1 expert hosts up"), "{err}");
    assert_eq!(out, one);
    assert!(server.child.try_wait().unwrap().is_none(), "the server exited");
}

/// Issue 44, defect 3: one server under two names (`localhost:P`, `127.0.0.1:P`) was accepted
/// (the check compared strings) and the second worker waited on it for its whole start. It is
/// refused, naming both.
#[test]
fn one_server_under_two_names_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path());
    let port = free_port();
    let hosts = format!("localhost:{port},127.0.0.1:{port}");
    let (ok, out, err) = bmoe(&run_args(&m, "4", &["--temp", "0", "--rpc", &hosts]));
    assert!(!ok && out.is_empty(), "{err}");
    let why = format!("--rpc names one server twice: localhost:{port} and 127.0.0.1:{port} are both 127.0.0.1:{port}");
    assert!(err.contains(&why), "{err}");
}

/// Issue 44, defect 2: a host that accepts and never replies held every coordinator for the
/// start's fixed minute whatever `--rpc-timeout-ms` said. The flag bounds the start too: the
/// host is lost at start after it, and the run is one host's.
#[test]
fn a_silent_host_at_start_costs_the_rpc_timeout_not_a_minute() {
    let dir = tempfile::tempdir().unwrap();
    let m = synth(dir.path());
    let (ok, one, err) = bmoe(&run_args(&m, "4", &["--temp", "0"]));
    assert!(ok, "{err}");
    // Listening, never accepting: the kernel completes the connection, nothing ever answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let ep = silent.local_addr().unwrap().to_string();
    let args = run_args(&m, "4", &["--temp", "0", "--rpc", &ep, "--rpc-timeout-ms", "1000"]);
    let mut child = bin().args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Well under the old minute; the run itself takes a second or two.
    let until = Instant::now() + Duration::from_secs(40);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            panic!("the run still waits on a silent host after 40 s with --rpc-timeout-ms 1000");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), one);
    assert!(err.contains(&format!("rpc: lost host 1 ({ep}) at start")), "{err}");
    assert!(err.contains("rpc: 0 of 1 expert hosts up"), "{err}");
    drop(silent);
}
