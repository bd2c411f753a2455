//! `--rpc HOST:PORT[,…] --placement … [--placement-trace TRACE]`: the flags of `bmoe run`,
//! `chat`, `serve` and `bench` that spread the routed experts over other hosts' RAM (`bmoe
//! rpc-server` on each), translated into the engine's [`RpcOptions`]; and the lines that say
//! what the hosts hold at start.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use bmoe::engine::rpc::{Placement, RpcEvents, RpcFigures, RpcOptions, WorkerCommand};

#[derive(Debug, Clone, clap::Args)]
pub struct RpcArgs {
    /// Expert hosts, each running `bmoe rpc-server` (comma list of HOST:PORT): they hold the
    /// routed experts in their RAM and compute them; this host keeps the dense part and its
    /// own share, streamed as usual, and adds every expert's output in rank order, so the text
    /// is what one host gives. A host that dies or stops answering is dropped with a line
    /// saying so, and its experts are streamed from local flash from then on. ggml's RPC
    /// protocol has no authentication and no encryption: loopback or a private network only.
    #[arg(long, value_delimiter = ',', value_name = "HOST:PORT")]
    pub rpc: Vec<String>,
    /// Which host holds which expert (whole experts, every host the same number per layer):
    /// `popularity` (each layer's experts by use in --placement-trace, dealt to the least loaded
    /// host), `round-robin`, or `replicate-hot-K` (popularity, plus each layer's K most used
    /// experts on every host, computed where the least work is) [default: popularity].
    #[arg(long, value_parser = parse_placement)]
    pub placement: Option<Placement>,
    /// A routing trace (`--route-trace` of an earlier run) whose counts drive --placement;
    /// without one, every expert counts the same.
    #[arg(long, value_name = "TRACE")]
    pub placement_trace: Option<PathBuf>,
    /// Give a host up when its reply to one layer takes longer than this, in ms (its experts
    /// are then computed here); at start, when it shows no progress for this long (its
    /// handshake, each layer's upload, its audit) [default: 5000 a layer, 60000 at start].
    #[arg(long, value_name = "MS")]
    pub rpc_timeout_ms: Option<u64>,
}

fn parse_placement(s: &str) -> Result<Placement, String> {
    s.parse()
}

impl RpcArgs {
    /// The engine's options, or None without `--rpc`.
    ///
    /// # Errors
    /// A placement flag without `--rpc`; this program's path unknown; a zero timeout.
    pub fn options(&self) -> anyhow::Result<Option<RpcOptions>> {
        if self.rpc.is_empty() {
            let given = [
                ("--placement", self.placement.is_some()),
                ("--placement-trace", self.placement_trace.is_some()),
                ("--rpc-timeout-ms", self.rpc_timeout_ms.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|g| g.1) {
                bail!("{flag} places experts on the hosts of --rpc HOST:PORT,…, and there is none");
            }
            return Ok(None);
        }
        let program = std::env::current_exe().context("--rpc: this program's path (it starts one worker per host)")?;
        let worker = WorkerCommand { program, args: vec!["rpc-worker".into()] };
        let mut o = RpcOptions::new(self.rpc.clone(), self.placement.unwrap_or(Placement::Popularity), worker);
        o.trace = self.placement_trace.clone();
        if let Some(ms) = self.rpc_timeout_ms {
            if ms == 0 {
                bail!("--rpc-timeout-ms 0: a host needs some time to answer");
            }
            // Every wait, the start's included: a host that accepts and never answers costs
            // this, not the default minute.
            o.timeout = Duration::from_millis(ms);
            o.start_timeout = o.timeout;
        }
        o.events = RpcEvents(Arc::new(|line| eprintln!("{line}")));
        Ok(Some(o))
    }

    /// The flags as `bmoe run` takes them (for `bmoe bench`'s rows).
    pub fn argv(&self) -> Vec<String> {
        let mut v = Vec::new();
        if !self.rpc.is_empty() {
            v.extend(["--rpc".into(), self.rpc.join(",")]);
        }
        if let Some(p) = self.placement {
            v.extend(["--placement".into(), p.name()]);
        }
        if let Some(t) = &self.placement_trace {
            v.extend(["--placement-trace".into(), t.display().to_string()]);
        }
        if let Some(ms) = self.rpc_timeout_ms {
            v.extend(["--rpc-timeout-ms".into(), ms.to_string()]);
        }
        v
    }

    /// The CSV preamble's value of the `rpc` knob.
    pub fn knob(&self) -> String {
        if self.rpc.is_empty() {
            return "off".into();
        }
        format!(
            "{} placement={}{}",
            self.rpc.join(","),
            self.placement.unwrap_or(Placement::Popularity),
            self.placement_trace.as_ref().map_or(String::new(), |t| format!(" trace={}", t.display()))
        )
    }
}

/// The `rpc:` lines after the mode line: the placement and what each host holds, then one per
/// host lost at start, saying why.
pub fn start_lines(f: &RpcFigures) -> Vec<String> {
    let mut lines = vec![start_line(f)];
    for (i, h) in f.hosts.iter().enumerate() {
        if let Some(l) = h.lost.as_ref().filter(|l| l.phase == "start") {
            lines.push(bmoe::engine::rpc::lost_line(i, &h.endpoint, "at start", &l.why));
        }
    }
    lines
}

fn start_line(f: &RpcFigures) -> String {
    let hosts: Vec<String> = f
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let state = if h.lost.is_some() { ", LOST" } else { "" };
            format!(
                "host {} {} {} experts ({:.1} MiB uploaded{state})",
                i + 1,
                h.endpoint,
                h.experts_held,
                h.uploaded_bytes as f64 / (1u64 << 20) as f64
            )
        })
        .collect();
    format!(
        "rpc: {} of {} expert hosts up, placement {}{}; this host {} experts (streamed), {}",
        f.hosts_up(),
        f.hosts.len(),
        f.placement,
        f.trace.as_ref().map_or(String::new(), |t| format!(" from {t}")),
        f.local_experts,
        hosts.join(", ")
    )
}

/// Describe the expert hosts' `/metrics` series and set each host's `bmoe_rpc_host_up` (the
/// engine set them at start, before a server installs its recorder).
pub fn publish(f: &RpcFigures) {
    use metrics::{describe_counter, describe_gauge, Unit};
    describe_gauge!("bmoe_rpc_host_up", "1 while the expert host (label host) is in use, 0 once it is lost");
    describe_counter!("bmoe_rpc_hosts_lost_total", "Expert hosts given up (died, stopped answering, refused)");
    describe_counter!("bmoe_rpc_sent_bytes_total", Unit::Bytes, "Bytes ggml-rpc sent to the expert host");
    describe_counter!("bmoe_rpc_received_bytes_total", Unit::Bytes, "Bytes ggml-rpc received from the expert host");
    describe_counter!("bmoe_rpc_round_trips_total", "ggml-rpc commands that waited for the expert host's reply");
    describe_counter!(
        "bmoe_rpc_wait_microseconds_total",
        Unit::Microseconds,
        "Time the coordinator waited for the expert host after its own experts were done"
    );
    describe_counter!("bmoe_rpc_bounded_steps_total", "Forward passes whose longest wait was for the expert host");
    for h in &f.hosts {
        metrics::gauge!("bmoe_rpc_host_up", "host" => h.endpoint.clone()).set(if h.lost.is_none() { 1.0 } else { 0.0 });
    }
}
