//! The coordinator's end of one worker process: spawning it with a socket for its standard
//! input, frames written and read with deadlines (the socket is non-blocking; `poll` waits),
//! and killing it. Nothing here blocks without a deadline, so a worker stuck in ggml-rpc's
//! `recv` on a host that stopped answering costs a timeout, never a hang.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::protocol::{self, Frame, Reply};
use super::WorkerCommand;

/// Why a worker is given up.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Failure {
    /// Its end of the socket closed (the process died: ggml-rpc aborted it, or it was killed).
    Eof,
    /// No (complete) answer before the deadline.
    Timeout(Duration),
    /// The socket failed.
    Io(String),
    /// It wrote something that is not a frame, or the wrong frame.
    Malformed(String),
    /// It said why it stops.
    Worker(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Eof => f.write_str("the worker process ended"),
            Failure::Timeout(d) => write!(f, "no reply in {} ms", d.as_millis()),
            Failure::Io(e) => write!(f, "the worker's socket failed: {e}"),
            Failure::Malformed(e) => f.write_str(e),
            Failure::Worker(e) => f.write_str(e),
        }
    }
}

/// Lines of the worker's stderr kept for the message of a lost host.
const STDERR_LINES: usize = 6;

/// One running worker.
#[derive(Debug)]
pub(super) struct Link {
    child: Child,
    sock: UnixStream,
    rx: Vec<u8>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    reader: Option<JoinHandle<()>>,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
const NOSIGNAL: libc::c_int = libc::MSG_NOSIGNAL;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const NOSIGNAL: libc::c_int = 0;

impl Link {
    /// Start `cmd` with one end of a socket pair as its standard input (it reads and writes
    /// frames there), its standard output discarded and its standard error kept.
    pub(super) fn spawn(cmd: &WorkerCommand) -> io::Result<Self> {
        let (ours, theirs) = UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        let mut child = Command::new(&cmd.program)
            .args(&cmd.args)
            // Its own process group: a Ctrl-C at the terminal stops the coordinator between
            // steps, as without hosts, instead of killing every worker mid-layer (the worker
            // dies with the coordinator all the same: PR_SET_PDEATHSIG).
            .process_group(0)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // ggml prints a backtrace on abort by attaching gdb when it can: slow, and
            // nothing the coordinator needs.
            .env("GGML_NO_BACKTRACE", "1")
            .spawn()?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let pipe = child.stderr.take().expect("piped above");
        let lines = stderr.clone();
        let reader = std::thread::Builder::new().name("bmoe-rpc-stderr".into()).spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(std::result::Result::ok) {
                let mut l = lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if l.len() == STDERR_LINES {
                    l.pop_front();
                }
                l.push_back(line);
            }
        })?;
        Ok(Self { child, sock: ours, rx: Vec::new(), stderr, reader: Some(reader) })
    }

    pub(super) fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// Write a whole frame before `deadline`.
    pub(super) fn send(&mut self, frame: &[u8], deadline: Instant, timeout: Duration) -> Result<(), Failure> {
        let mut at = 0;
        while at < frame.len() {
            let rest = &frame[at..];
            // SAFETY: send on our own open socket from a live buffer of rest.len() bytes;
            // MSG_NOSIGNAL: a closed peer is EPIPE, not SIGPIPE (which the CLI leaves fatal).
            let n = unsafe { libc::send(self.fd(), rest.as_ptr().cast(), rest.len(), NOSIGNAL) };
            if n > 0 {
                at += n as usize;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => {
                    wait(&[self.fd()], libc::POLLOUT, deadline, timeout)?;
                }
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => return Err(Failure::Eof),
                _ => return Err(Failure::Io(err.to_string())),
            }
        }
        Ok(())
    }

    /// Read what has arrived, without waiting; a whole reply if one is complete.
    pub(super) fn try_recv(&mut self) -> Result<Option<Reply>, Failure> {
        let mut buf = [0u8; 64 * 1024];
        loop {
            if let Some(r) = self.parse()? {
                return Ok(Some(r));
            }
            match self.sock.read(&mut buf) {
                Ok(0) => return Err(Failure::Eof),
                Ok(n) => self.rx.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Err(Failure::Eof),
                Err(e) => return Err(Failure::Io(e.to_string())),
            }
        }
    }

    fn parse(&mut self) -> Result<Option<Reply>, Failure> {
        if self.rx.len() < 4 {
            return Ok(None);
        }
        let n = protocol::frame_len(self.rx[..4].try_into().expect("4 bytes"))
            .map_err(|e| Failure::Malformed(e.to_string()))?;
        if self.rx.len() < 4 + n {
            return Ok(None);
        }
        let frame = protocol::decode(self.rx[4], &self.rx[5..4 + n]).map_err(|e| Failure::Malformed(e.to_string()));
        self.rx.drain(..4 + n);
        match frame? {
            Frame::Reply(Reply::Error(why)) => Err(Failure::Worker(why)),
            Frame::Reply(r) => Ok(Some(r)),
            _ => Err(Failure::Malformed("a request frame from the worker".into())),
        }
    }

    /// Close our end: a worker waiting for a request exits.
    pub(super) fn close(&self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }

    /// Whether the process has exited.
    pub(super) fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Kill the process (if it still runs) and reap it; the last lines it wrote to stderr.
    pub(super) fn kill(&mut self) -> Vec<String> {
        if !self.exited() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let l = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        l.iter().cloned().collect()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.close();
        self.kill();
    }
}

/// Wait until one of `fds` is ready for `events`, or fail at `deadline` (reported as a timeout
/// of `timeout`).
pub(super) fn wait(
    fds: &[RawFd],
    events: libc::c_short,
    deadline: Instant,
    timeout: Duration,
) -> Result<usize, Failure> {
    let mut polls: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events, revents: 0 }).collect();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::Timeout(timeout));
        }
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: polls is a live array of polls.len() pollfd structs.
        let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
        if n > 0 {
            return Ok(polls.iter().position(|p| p.revents != 0).unwrap_or(0));
        }
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(Failure::Io(e.to_string()));
            }
        }
    }
}
