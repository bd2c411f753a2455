//! `bmoe rpc-server`: ggml's own RPC server over this machine's CPU, so that a coordinator
//! (`bmoe run --rpc HOST:PORT`) can keep experts in this machine's RAM and compute them here;
//! both ends run the same ggml. And `bmoe rpc-worker`, hidden: the process a coordinator starts
//! per host to drive it (never run by hand).

use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::AsFd;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use bmoe::engine::ggml::backend;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// IPv4 address to listen on. Loopback by default: ggml's RPC protocol has no
    /// authentication and no encryption, so serve a private network only, firewalled to the
    /// coordinator.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// TCP port.
    #[arg(long, default_value_t = 50052)]
    port: u16,
    /// CPU threads computing the experts (default: the physical cores).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Keep the tensors over 10 MiB a coordinator uploads (a host's experts of one layer) in
    /// this directory, by hash, so that the next start does not send them again (ggml-rpc's
    /// `-c`).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if !backend::rpc_supported() {
        bail!("this build has no ggml RPC backend (llama.cpp built without GGML_RPC=ON)");
    }
    let ip: Ipv4Addr = args
        .host
        .parse()
        .map_err(|_| anyhow::anyhow!("--host `{}`: an IPv4 address (ggml's RPC server binds IPv4 only)", args.host))?;
    if args.port == 0 {
        bail!("--port 0: a coordinator needs to know the port; name one");
    }
    let endpoint = format!("{ip}:{}", args.port);
    let threads = args.threads.unwrap_or_else(bmoe::engine::engine::physical_cores).max(1);
    if !ip.is_loopback() {
        eprintln!(
            "warning: rpc-server on {endpoint}: ggml's RPC protocol has no authentication and no encryption: anyone \
             who can reach this address can allocate this machine's memory, read and write it through the server, \
             run graphs on it{}; serve a private network only, firewalled to the coordinator",
            if args.cache_dir.is_some() { " and write files into --cache-dir" } else { "" }
        );
    }
    // ggml says only "Failed to create server socket" when the port is taken: try it first.
    drop(TcpListener::bind((ip, args.port)).with_context(|| format!("cannot listen on {endpoint}"))?);
    if let Some(d) = &args.cache_dir {
        std::fs::create_dir_all(d).with_context(|| format!("--cache-dir {}", d.display()))?;
    }
    survive_closed_clients();
    let (maj, min, patch) = bmoe::engine::rpc::protocol_version();
    eprintln!(
        "rpc-server: serving this machine's CPU ({threads} threads) to one coordinator at a time on {endpoint} \
         (ggml-rpc protocol {maj}.{min}.{patch}, ggml {})",
        bmoe::engine::ggml::version()
    );
    backend::rpc_serve(&endpoint, args.cache_dir.as_deref(), threads)?;
    bail!("the ggml RPC server on {endpoint} stopped: it could not listen, or accept (ggml said why above)")
}

/// A coordinator that closes its socket while the server writes to it must cost that
/// connection only. ggml-rpc sends without `MSG_NOSIGNAL` and `main` leaves SIGPIPE fatal (right
/// for a pipe on stdout, not for a server), so the write would kill the process (exit 141, no
/// word). With this handler the send fails with EPIPE instead, ggml ends that client's loop and
/// accepts the next one; the handler only says so (the server has no other hook to log it).
fn survive_closed_clients() {
    extern "C" fn on_sigpipe(_sig: libc::c_int) {
        let msg = b"rpc-server: a coordinator closed its connection while this server was writing to it: \
                    dropped that client; serving the next one\n";
        // SAFETY: write(2) on stderr with a live buffer; async-signal-safe.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
    }
    // SAFETY: a plain sigaction whose handler only calls write(2), which is async-signal-safe;
    // SA_RESTART so that no other thread's blocking call sees EINTR because of it.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigpipe as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGPIPE, &sa, std::ptr::null_mut());
    }
}

/// `bmoe rpc-worker`: serve the coordinator on standard input (a socket it made); never returns.
pub fn worker() -> anyhow::Result<()> {
    let fd = std::io::stdin().as_fd().try_clone_to_owned().context("rpc-worker: standard input")?;
    let code = bmoe::engine::rpc::worker::run(std::fs::File::from(fd));
    std::process::exit(code)
}
