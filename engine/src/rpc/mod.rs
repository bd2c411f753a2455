//! Expert-parallel decoding over ggml's RPC backend (`--rpc HOST:PORT,…`, docs/scale-out.md):
//! the routed experts spread over the RAM of other hosts running ggml's own RPC server (`bmoe
//! rpc-server`), the dense part and the sum on this host, the coordinator.
//!
//! What lives where: [`placement`] deals each layer's experts over the hosts (host 0 is the
//! coordinator, which streams its share through its cache as it would alone); [`Coordinator`]
//! is the decoder's [`RemoteExperts`](crate::decoder::RemoteExperts): per layer it sends each
//! host with routed experts the FFN input, lets the decoder compute the coordinator's own
//! experts meanwhile, and hands back each remote expert's output, which the decoder weights
//! and adds in rank order exactly as its own, so the text is bit-identical to one host's. Each
//! host is driven by a worker process ([`worker`], the other end of [`protocol`]) that owns the
//! ggml-rpc connection: ggml-rpc aborts its process when a host dies and blocks forever on one
//! that stops answering, so the coordinator only ever sees a worker's end of stream or a missed
//! deadline. A host lost so is dropped for good; its experts are computed here, from the
//! coordinator's own copy of the model, from that layer on. Nothing partial is ever used: a
//! failure costs time, never a wrong token.
//!
//! Trade-off: one small graph per layer and host, sent again every time (ggml-rpc keeps only
//! the last graph per device), and one extra local hop per layer (the worker); no protocol of
//! our own on the network, and no patch to ggml.
//!
//! Security: ggml-rpc has no authentication and no encryption; see docs/scale-out.md.

pub mod placement;
pub mod protocol;

#[cfg(feature = "ffi")]
mod coordinator;
#[cfg(feature = "ffi")]
mod link;
#[cfg(feature = "ffi")]
pub mod worker;

#[cfg(feature = "ffi")]
pub use coordinator::{lost_line, Coordinator, HostCounters, HostFigures, Lost, RpcFigures, RpcHandle, StepFigures};
pub use placement::Placement;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The most expert hosts (ggml-rpc's `GGML_RPC_MAX_SERVERS`).
pub const MAX_HOSTS: usize = 16;

/// How to start a worker process: a program and its arguments (the CLI passes its own binary
/// and `rpc-worker`). The worker reads and writes frames on its standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// Told each line worth a user's attention as it happens (a host lost, and why); a front end
/// prints them. The default says nothing.
#[derive(Clone)]
pub struct RpcEvents(pub Arc<dyn Fn(&str) + Send + Sync>);

impl Default for RpcEvents {
    fn default() -> Self {
        Self(Arc::new(|_| {}))
    }
}

impl std::fmt::Debug for RpcEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RpcEvents")
    }
}

/// The expert hosts and how to use them.
#[derive(Clone, Debug)]
pub struct RpcOptions {
    /// `host:port` of each `bmoe rpc-server` (hosts 1, 2, …; this host is host 0).
    pub hosts: Vec<String>,
    pub placement: Placement,
    /// A routing trace (`--route-trace` of an earlier run) whose use counts drive `popularity`
    /// and `replicate-hot-K`; without one, every expert counts the same.
    pub trace: Option<PathBuf>,
    /// The longest wait for a host's reply to one layer before it is given up.
    pub timeout: Duration,
    /// The longest wait at start between two signs of progress of a host's upload.
    pub start_timeout: Duration,
    /// Check one expert's bits on each host against this machine's before using it.
    pub audit: bool,
    pub worker: WorkerCommand,
    pub events: RpcEvents,
}

impl RpcOptions {
    /// `hosts` placed by `placement`, with the default timeouts (5 s a layer, 60 s between
    /// upload steps), the audit on, workers started as `worker`.
    pub fn new(hosts: Vec<String>, placement: Placement, worker: WorkerCommand) -> Self {
        Self {
            hosts,
            placement,
            trace: None,
            timeout: Duration::from_secs(5),
            start_timeout: Duration::from_secs(60),
            audit: true,
            worker,
            events: RpcEvents::default(),
        }
    }
}

/// The RPC protocol version this build speaks (`ggml-rpc.h`): a server of another major
/// version refuses the handshake.
#[cfg(feature = "ffi")]
pub fn protocol_version() -> (u8, u8, u8) {
    bmoe_ggml_sys::RPC_PROTO_VERSION
}

/// `host:port` with a port number: what ggml-rpc's endpoint parser takes.
///
/// # Errors
/// A message naming the endpoint.
pub fn check_endpoint(ep: &str) -> Result<(), String> {
    let ok = ep
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && !h.contains(':') && p.parse::<u16>().is_ok_and(|p| p > 0));
    if ok {
        Ok(())
    } else {
        Err(format!("--rpc `{ep}`: expected HOST:PORT (an IPv4 address or a name, and a port)"))
    }
}

/// The hosts of `--rpc` against each other: the same server twice, by the same text or under
/// two names (`localhost:P` and `127.0.0.1:P`), would get two workers on a server that serves
/// one coordinator at a time, and the second would wait on it for its whole start timeout.
/// Names are compared by the socket addresses they resolve to (a name that does not resolve is
/// left to the start, which loses it saying why).
///
/// # Errors
/// Naming both entries and the address they share.
pub fn check_distinct(hosts: &[String]) -> Result<(), String> {
    use std::net::ToSocketAddrs as _;
    let resolved: Vec<Vec<std::net::SocketAddr>> =
        hosts.iter().map(|h| h.to_socket_addrs().map(Iterator::collect).unwrap_or_default()).collect();
    for (i, h) in hosts.iter().enumerate() {
        for (j, earlier) in hosts[..i].iter().enumerate() {
            if earlier == h {
                return Err(format!("--rpc names {h} twice"));
            }
            if let Some(addr) = resolved[i].iter().find(|a| resolved[j].contains(a)) {
                return Err(format!("--rpc names one server twice: {earlier} and {h} are both {addr}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Issue 44, defect 3: the same server under two names is refused (the check compared
    /// strings only).
    #[test]
    fn a_host_named_twice_is_refused_under_any_name() {
        let v = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(super::check_distinct(&v(&["127.0.0.1:50052", "127.0.0.1:50053", "127.0.0.2:50052"])).is_ok());
        let e = super::check_distinct(&v(&["127.0.0.1:7", "127.0.0.1:7"])).unwrap_err();
        assert_eq!(e, "--rpc names 127.0.0.1:7 twice");
        let e = super::check_distinct(&v(&["localhost:50052", "127.0.0.1:50052"])).unwrap_err();
        assert_eq!(e, "--rpc names one server twice: localhost:50052 and 127.0.0.1:50052 are both 127.0.0.1:50052");
        // A name that does not resolve is left to the start.
        assert!(super::check_distinct(&v(&["no-such-host.invalid:1", "127.0.0.1:1"])).is_ok());
    }

    #[test]
    fn endpoints_are_host_and_port() {
        assert!(super::check_endpoint("127.0.0.1:50052").is_ok());
        assert!(super::check_endpoint("node-2:1").is_ok());
        for bad in ["127.0.0.1", ":5", "h:0", "h:70000", "::1:5", "h:x"] {
            assert!(super::check_endpoint(bad).is_err(), "{bad}");
        }
    }
}
