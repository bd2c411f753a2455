//! The coordinator: the decoder's [`RemoteExperts`] over the expert hosts (see the module docs
//! of [`crate::rpc`]), its start (placement, workers, uploads, audits), per-layer dispatch and
//! collection with deadlines, the loss of a host, and the counters it keeps for telemetry
//! ([`RpcFigures`], shared through an [`RpcHandle`], and the `metrics` facade's series).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::link::{wait, Failure, Link};
use super::placement::{deal, serve, Plan};
use super::protocol::{Audit, Compute, Init, Reply};
use super::{check_distinct, check_endpoint, RpcEvents, RpcOptions, MAX_HOSTS};
use crate::cache::replay::AccessStream;
use crate::cache::trace::RouteTrace;
use crate::decoder::{Collected, RemoteExperts};
use crate::error::{Error, Result};
use crate::model::ModelIndex;

/// One host's counters, cumulative.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostCounters {
    /// Bytes ggml-rpc sent to the host and received from it (counted by its message formats).
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// Commands that waited for the host's reply.
    pub round_trips: u64,
    /// Layers and experts the host computed.
    pub layers: u64,
    pub experts: u64,
    /// Seconds the coordinator waited for the host after its own experts were done.
    pub wait_s: f64,
    /// Forward passes whose longest wait was for this host.
    pub bounded: u64,
}

impl HostCounters {
    fn add(&mut self, o: &HostCounters) {
        self.sent_bytes += o.sent_bytes;
        self.received_bytes += o.received_bytes;
        self.round_trips += o.round_trips;
        self.layers += o.layers;
        self.experts += o.experts;
        self.wait_s += o.wait_s;
        self.bounded += o.bounded;
    }

    /// `self − o`, for the counters of a stretch of steps.
    pub fn since(&self, o: &HostCounters) -> HostCounters {
        HostCounters {
            sent_bytes: self.sent_bytes - o.sent_bytes,
            received_bytes: self.received_bytes - o.received_bytes,
            round_trips: self.round_trips - o.round_trips,
            layers: self.layers - o.layers,
            experts: self.experts - o.experts,
            wait_s: self.wait_s - o.wait_s,
            bounded: self.bounded - o.bounded,
        }
    }
}

/// When and why a host was given up.
#[derive(Clone, Debug, PartialEq)]
pub struct Lost {
    /// `start`, `prefill` or `decode`.
    pub phase: &'static str,
    /// The forward pass of that phase (1-based, since the engine opened; 0 at start).
    pub step: u64,
    /// The MoE layer being computed (None at start).
    pub layer: Option<u32>,
    pub why: String,
}

/// One host as the telemetry shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostFigures {
    /// `host:port`.
    pub endpoint: String,
    /// Experts it holds, over all layers.
    pub experts_held: u64,
    /// Bytes of experts uploaded to it at start.
    pub uploaded_bytes: u64,
    /// Set once the host is lost.
    pub lost: Option<Lost>,
    pub decode: HostCounters,
    pub prefill: HostCounters,
}

/// The last forward pass, per host.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepFigures {
    pub prefill: bool,
    /// Per host (index 0 is host 1): its counters over this step.
    pub hosts: Vec<HostCounters>,
}

impl StepFigures {
    /// The host the coordinator waited on longest in this step (index into `hosts`), or None
    /// if it waited on none: its own experts took longer than every host's.
    pub fn bound(&self) -> Option<usize> {
        self.hosts
            .iter()
            .enumerate()
            .filter(|(_, c)| c.wait_s > 0.0)
            .max_by(|a, b| a.1.wait_s.total_cmp(&b.1.wait_s))
            .map(|(i, _)| i)
    }
}

/// Everything the coordinator counted since the engine opened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RpcFigures {
    /// `--placement`, and the trace it came from.
    pub placement: String,
    pub trace: Option<String>,
    /// Experts per layer this host holds (its own share, streamed through its cache).
    pub local_experts: u64,
    pub hosts: Vec<HostFigures>,
    pub decode_steps: u64,
    pub prefill_steps: u64,
    /// The step in progress or last done.
    pub step: StepFigures,
}

impl RpcFigures {
    /// Hosts still up.
    pub fn hosts_up(&self) -> usize {
        self.hosts.iter().filter(|h| h.lost.is_none()).count()
    }
}

/// A shared view of the coordinator's figures, readable from another thread (a `--progress`
/// callback, a server's metrics) while the engine decodes.
#[derive(Clone, Debug)]
pub struct RpcHandle(Arc<Mutex<RpcFigures>>);

impl RpcHandle {
    /// A copy of the figures now, the step in progress counted as if it ended now.
    pub fn snapshot(&self) -> RpcFigures {
        let mut f = self.lock().clone();
        if let Some(i) = f.step.bound() {
            let prefill = f.step.prefill;
            let c = if prefill { &mut f.hosts[i].prefill } else { &mut f.hosts[i].decode };
            c.bounded += 1;
        }
        f
    }

    fn lock(&self) -> MutexGuard<'_, RpcFigures> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A request of more rows than this gets one more `timeout` per this many rows (a prefill's
/// micro-batch), so that a slow but live host is not taken for a dead one.
const ROWS_PER_TIMEOUT: u32 = 256;

/// One expert host.
#[derive(Debug)]
struct Host {
    endpoint: String,
    link: Option<Link>,
    /// Per layer, expert → its index in the host's stacks.
    index: Vec<Vec<Option<u32>>>,
    /// The request in flight.
    pending: Option<Pending>,
}

/// A request in flight to a host.
#[derive(Debug)]
struct Pending {
    /// Its experts, each with its rows (the order of the reply's outputs).
    experts: Vec<(u32, usize)>,
    deadline: Instant,
    /// The time it was given (for the message if it misses the deadline).
    allowed: Duration,
}

impl Host {
    fn up(&self) -> bool {
        self.link.is_some()
    }
}

/// The decoder's [`RemoteExperts`] over the hosts of [`RpcOptions`].
#[derive(Debug)]
pub struct Coordinator {
    plan: Plan,
    hosts: Vec<Host>,
    timeout: Duration,
    n_embd: usize,
    events: RpcEvents,
    figures: RpcHandle,
    prefill: bool,
}

impl Coordinator {
    /// Place the experts of `index` over this host and `opts.hosts`, start a worker per host,
    /// upload each host's experts and check its bits. A host that cannot be reached, refuses
    /// (another protocol version, out of memory), computes other bits or does not finish in
    /// time is lost from the start, with a line through `opts.events`; its experts stay here.
    ///
    /// # Errors
    /// [`Error::Rpc`] for bad options (no host, too many, an endpoint that is not `host:port`,
    /// a host twice, a placement trace that does not fit the model, `replicate-hot-K` without
    /// one, a worker that cannot be spawned); [`Error::Trace`] for an unreadable trace.
    pub fn start(index: &ModelIndex, opts: &RpcOptions) -> Result<Self> {
        let sh = index.shape();
        if opts.hosts.is_empty() {
            return Err(Error::Rpc("--rpc names no host".into()));
        }
        if opts.hosts.len() > MAX_HOSTS {
            return Err(Error::Rpc(format!("{} hosts: ggml-rpc takes at most {MAX_HOSTS}", opts.hosts.len())));
        }
        for h in &opts.hosts {
            check_endpoint(h).map_err(Error::Rpc)?;
        }
        check_distinct(&opts.hosts).map_err(Error::Rpc)?;
        if opts.timeout.is_zero() {
            return Err(Error::Rpc("a timeout of 0".into()));
        }
        let n_hosts = opts.hosts.len() as u32 + 1;
        let uses = match &opts.trace {
            Some(p) => use_counts(index, p)?,
            None if opts.placement.hot() > 0 => {
                return Err(Error::Rpc(format!(
                    "--placement {}: which experts are hot comes from a routing trace (--placement-trace)",
                    opts.placement
                )))
            }
            None => Vec::new(),
        };
        let plan = deal(&uses, sh.n_layer, sh.n_expert, n_hosts, opts.placement);
        // Per host, per layer, the experts it holds.
        let held: Vec<Vec<Vec<u32>>> =
            (0..n_hosts).map(|h| (0..sh.n_layer).map(|l| plan.held(h, l)).collect()).collect();
        let count = |h: usize| held[h].iter().map(|l| l.len() as u64).sum::<u64>();
        let figures = RpcFigures {
            placement: opts.placement.name(),
            trace: opts.trace.as_ref().map(|p| p.display().to_string()),
            local_experts: count(0),
            hosts: opts
                .hosts
                .iter()
                .enumerate()
                .map(|(i, ep)| HostFigures {
                    endpoint: ep.clone(),
                    experts_held: count(i + 1),
                    uploaded_bytes: 0,
                    lost: None,
                    decode: HostCounters::default(),
                    prefill: HostCounters::default(),
                })
                .collect(),
            step: StepFigures { hosts: vec![HostCounters::default(); opts.hosts.len()], ..StepFigures::default() },
            ..RpcFigures::default()
        };
        let mut c = Coordinator {
            plan,
            hosts: Vec::new(),
            timeout: opts.timeout,
            n_embd: sh.n_embd as usize,
            events: opts.events.clone(),
            figures: RpcHandle(Arc::new(Mutex::new(figures))),
            prefill: true,
        };
        for (i, ep) in opts.hosts.iter().enumerate() {
            let experts = held[i + 1].clone();
            let mut index_of = vec![vec![None; sh.n_expert as usize]; sh.n_layer as usize];
            for (l, es) in experts.iter().enumerate() {
                for (j, &e) in es.iter().enumerate() {
                    index_of[l][e as usize] = Some(j as u32);
                }
            }
            let link = Link::spawn(&opts.worker).map_err(|e| {
                Error::Rpc(format!("starting the worker for {ep} ({}): {e}", opts.worker.program.display()))
            })?;
            c.hosts.push(Host { endpoint: ep.clone(), link: Some(link), index: index_of, pending: None });
            let init = Init {
                model: index.file.shards[0].path.display().to_string(),
                endpoint: ep.clone(),
                experts,
                audit: opts.audit,
            };
            let deadline = Instant::now() + opts.start_timeout;
            let sent = c.hosts[i].link.as_mut().expect("just set").send(&init.encode(), deadline, opts.start_timeout);
            if let Err(f) = sent {
                c.lose(i, "start", 0, None, f);
            }
        }
        c.wait_ready(opts.start_timeout);
        Ok(c)
    }

    /// The figures, shared.
    pub fn handle(&self) -> RpcHandle {
        self.figures.clone()
    }

    /// Wait for every host's Ready, each allowed `timeout` between two frames.
    fn wait_ready(&mut self, timeout: Duration) {
        let mut deadline: Vec<Instant> = vec![Instant::now() + timeout; self.hosts.len()];
        let mut waiting: Vec<bool> = self.hosts.iter().map(Host::up).collect();
        while let Some(first) = (0..self.hosts.len()).filter(|&i| waiting[i]).min_by_key(|&i| deadline[i]) {
            let fds: Vec<_> = (0..self.hosts.len())
                .filter(|&i| waiting[i])
                .map(|i| self.hosts[i].link.as_ref().expect("up").fd())
                .collect();
            if let Err(f) = wait(&fds, libc::POLLIN, deadline[first], timeout) {
                waiting[first] = false;
                self.lose(first, "start", 0, None, f);
                continue;
            }
            for i in 0..self.hosts.len() {
                if !waiting[i] {
                    continue;
                }
                loop {
                    match self.hosts[i].link.as_mut().expect("up").try_recv() {
                        Ok(None) => break,
                        Ok(Some(Reply::Progress { bytes, .. })) => {
                            deadline[i] = Instant::now() + timeout;
                            self.figures.lock().hosts[i].uploaded_bytes = bytes;
                        }
                        Ok(Some(Reply::Ready { bytes, audit })) => {
                            waiting[i] = false;
                            self.figures.lock().hosts[i].uploaded_bytes = bytes;
                            if audit == Audit::Differs {
                                let f = Failure::Worker(
                                    "its output differs from this machine's in the bits (another ggml build or other CPU \
                                     features): the text would not be one host's"
                                        .into(),
                                );
                                self.lose(i, "start", 0, None, f);
                            } else {
                                metrics::gauge!("bmoe_rpc_host_up", "host" => self.hosts[i].endpoint.clone()).set(1.0);
                            }
                            break;
                        }
                        Ok(Some(_)) => {
                            waiting[i] = false;
                            self.lose(i, "start", 0, None, Failure::Malformed("a result before Ready".into()));
                            break;
                        }
                        Err(f) => {
                            waiting[i] = false;
                            self.lose(i, "start", 0, None, f);
                            break;
                        }
                    }
                }
            }
        }
    }

    /// Give host `i` up: kill its worker, record and say why.
    fn lose(&mut self, i: usize, phase: &'static str, step: u64, layer: Option<u32>, f: Failure) {
        let h = &mut self.hosts[i];
        h.pending = None;
        let Some(mut link) = h.link.take() else { return };
        let stderr = link.kill();
        // ggml's own last words (`Failed to connect`, `RPC server version mismatch`, `Remote RPC
        // server crashed`) say more than an end of stream.
        let why = match (&f, stderr.iter().rev().find(|l| !l.trim().is_empty())) {
            (Failure::Eof, Some(line)) => format!("the worker ended: {}", ggml_words(line.trim())),
            _ => f.to_string(),
        };
        let at = match (phase, layer) {
            ("start", _) => "at start".to_string(),
            (p, Some(l)) => format!("in {p} step {step}, layer {l}"),
            (p, None) => format!("in {p} step {step}"),
        };
        // A loss at start is in the figures, which a front end shows after its mode line.
        if phase != "start" {
            (self.events.0)(&lost_line(i, &h.endpoint, &at, &why));
        }
        metrics::gauge!("bmoe_rpc_host_up", "host" => h.endpoint.clone()).set(0.0);
        metrics::counter!("bmoe_rpc_hosts_lost_total", "host" => h.endpoint.clone()).increment(1);
        self.figures.lock().hosts[i].lost = Some(Lost { phase, step, layer, why });
    }

    fn phase(&self) -> &'static str {
        if self.prefill {
            "prefill"
        } else {
            "decode"
        }
    }

    fn step_no(&self) -> u64 {
        let f = self.figures.lock();
        if self.prefill {
            f.prefill_steps
        } else {
            f.decode_steps
        }
    }

    /// Close the step in progress: the host that bounded it gets it.
    fn finish_step(&mut self) {
        let mut f = self.figures.lock();
        if let Some(i) = f.step.bound() {
            let prefill = f.step.prefill;
            let c = if prefill { &mut f.hosts[i].prefill } else { &mut f.hosts[i].decode };
            c.bounded += 1;
            metrics::counter!("bmoe_rpc_bounded_steps_total", "host" => self.hosts[i].endpoint.clone()).increment(1);
        }
    }
}

impl RemoteExperts for Coordinator {
    fn begin_step(&mut self, prefill: bool) {
        self.finish_step();
        self.prefill = prefill;
        let mut f = self.figures.lock();
        if prefill {
            f.prefill_steps += 1;
        } else {
            f.decode_steps += 1;
        }
        let n = f.hosts.len();
        f.step = StepFigures { prefill, hosts: vec![HostCounters::default(); n] };
    }

    fn dispatch(
        &mut self,
        layer: u32,
        h: &[f32],
        n_embd: usize,
        used: &BTreeMap<u32, Vec<(usize, usize)>>,
    ) -> Vec<u32> {
        let up: Vec<bool> = std::iter::once(true).chain(self.hosts.iter().map(Host::up)).collect();
        let routed: Vec<(u32, u64)> = used.iter().map(|(&e, r)| (e, r.len() as u64)).collect();
        let on = serve(&self.plan, layer, &routed, &up);
        let mut out = Vec::new();
        for i in 0..self.hosts.len() {
            let mine: Vec<u32> =
                routed.iter().zip(&on).filter(|(_, &h)| h as usize == i + 1).map(|(r, _)| r.0).collect();
            if mine.is_empty() {
                continue;
            }
            // The rows these experts need, renumbered in order; the items in `used`'s order.
            let mut rows: Vec<usize> = mine.iter().flat_map(|e| used[e].iter().map(|&(t, _)| t)).collect();
            rows.sort_unstable();
            rows.dedup();
            let mut hs = Vec::with_capacity(rows.len() * n_embd);
            for &t in &rows {
                hs.extend_from_slice(&h[t * n_embd..(t + 1) * n_embd]);
            }
            let mut items = Vec::new();
            let mut experts = Vec::new();
            for &e in &mine {
                let idx = self.hosts[i].index[layer as usize][e as usize].expect("the plan put it there");
                for &(t, _) in &used[&e] {
                    items.push((idx, rows.binary_search(&t).expect("collected above") as u32));
                }
                experts.push((e, used[&e].len()));
            }
            // A decode step's few rows get the timeout; a prefill's many rows, more in proportion.
            let allowed = self.timeout * (1 + items.len() as u32 / ROWS_PER_TIMEOUT);
            let frame = Compute { layer, n_embd: n_embd as u32, h: hs, items }.encode();
            let deadline = Instant::now() + allowed;
            let sent = self.hosts[i].link.as_mut().expect("served only when up").send(&frame, deadline, allowed);
            match sent {
                Ok(()) => {
                    out.extend(mine);
                    self.hosts[i].pending = Some(Pending { experts, deadline, allowed });
                }
                Err(f) => {
                    let (phase, step) = (self.phase(), self.step_no());
                    self.lose(i, phase, step, Some(layer), f);
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn collect(&mut self, layer: u32) -> Collected {
        let t0 = Instant::now();
        let mut got = Collected::default();
        // Replies already in when the coordinator's own experts were done cost no wait.
        let mut first = true;
        loop {
            for i in self.waiting() {
                match self.hosts[i].link.as_mut().expect("pending only when up").try_recv() {
                    Ok(None) => {}
                    Ok(Some(Reply::Result { sent, received, round_trips, y, .. })) => {
                        let waited = if first { 0.0 } else { t0.elapsed().as_secs_f64() };
                        let cost = HostCounters {
                            sent_bytes: sent,
                            received_bytes: received,
                            round_trips: u64::from(round_trips),
                            wait_s: waited,
                            ..HostCounters::default()
                        };
                        self.take_result(i, layer, cost, y, &mut got);
                    }
                    Ok(Some(_)) => {
                        self.fail(i, layer, Failure::Malformed("a frame other than a result".into()), &mut got)
                    }
                    Err(f) => self.fail(i, layer, f, &mut got),
                }
            }
            first = false;
            let waiting = self.waiting();
            let Some(&first) = waiting.iter().min_by_key(|&&i| self.deadline(i).0) else { break };
            let (deadline, allowed) = self.deadline(first);
            let fds: Vec<_> = waiting.iter().map(|&i| self.hosts[i].link.as_ref().expect("up").fd()).collect();
            if let Err(f) = wait(&fds, libc::POLLIN, deadline, allowed) {
                self.fail(first, layer, f, &mut got);
            }
        }
        got.lost.sort_unstable();
        got
    }

    fn local(&self, layer: u32, e: u32) -> bool {
        let owner = self.plan.owner(layer, e);
        owner == 0 || self.plan.replicated(layer, e) || !self.hosts[owner as usize - 1].up()
    }
}

impl Coordinator {
    /// Hosts with a request in flight.
    fn waiting(&self) -> Vec<usize> {
        (0..self.hosts.len()).filter(|&i| self.hosts[i].pending.is_some()).collect()
    }

    /// Host `i`'s deadline and the time it was given.
    fn deadline(&self, i: usize) -> (Instant, Duration) {
        let p = self.hosts[i].pending.as_ref().expect("pending");
        (p.deadline, p.allowed)
    }

    /// Host `i`'s reply to the layer: every expert's rows, or the host is lost (a reply of the
    /// wrong size is never split into outputs).
    fn take_result(&mut self, i: usize, layer: u32, mut cost: HostCounters, y: Vec<f32>, got: &mut Collected) {
        let n_embd = self.n_embd;
        let rows: usize = self.hosts[i].pending.as_ref().expect("pending").experts.iter().map(|e| e.1).sum();
        if y.len() != rows * n_embd {
            let f = Failure::Malformed(format!("{} values for {rows} rows of {n_embd}", y.len()));
            return self.fail(i, layer, f, got);
        }
        let experts = self.hosts[i].pending.take().expect("pending").experts;
        let mut off = 0;
        for &(e, m) in &experts {
            got.outputs.insert(e, y[off * n_embd..(off + m) * n_embd].to_vec());
            off += m;
        }
        cost.layers = 1;
        cost.experts = experts.len() as u64;
        self.count(i, &cost);
    }

    /// Host `i` failed during `layer`: its experts go back to the decoder, the host is lost.
    fn fail(&mut self, i: usize, layer: u32, f: Failure, got: &mut Collected) {
        if let Some(p) = self.hosts[i].pending.take() {
            got.lost.extend(p.experts.iter().map(|e| e.0));
        }
        let (phase, step) = (self.phase(), self.step_no());
        self.lose(i, phase, step, Some(layer), f);
    }

    /// Add one layer's counters of host `i` to the step and the totals.
    fn count(&mut self, i: usize, c: &HostCounters) {
        let ep = self.hosts[i].endpoint.clone();
        metrics::counter!("bmoe_rpc_sent_bytes_total", "host" => ep.clone()).increment(c.sent_bytes);
        metrics::counter!("bmoe_rpc_received_bytes_total", "host" => ep.clone()).increment(c.received_bytes);
        metrics::counter!("bmoe_rpc_round_trips_total", "host" => ep.clone()).increment(c.round_trips);
        metrics::counter!("bmoe_rpc_wait_microseconds_total", "host" => ep).increment((c.wait_s * 1e6) as u64);
        let mut f = self.figures.lock();
        f.step.hosts[i].add(c);
        let prefill = self.prefill;
        let t = if prefill { &mut f.hosts[i].prefill } else { &mut f.hosts[i].decode };
        t.add(c);
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        // Let every worker end politely (it frees its buffers on the host), for a moment.
        for h in &self.hosts {
            if let Some(l) = &h.link {
                l.close();
            }
        }
        let until = Instant::now() + Duration::from_secs(2);
        for h in &mut self.hosts {
            if let Some(l) = h.link.as_mut() {
                while !l.exited() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        // Links kill what is left as they drop.
    }
}

/// The line that says host `i` (0-based) is lost, when (`at`) and why.
pub fn lost_line(i: usize, endpoint: &str, at: &str, why: &str) -> String {
    format!("rpc: lost host {} ({endpoint}) {at}: {why}; its experts are computed here, streamed from local flash, from now on", i + 1)
}

/// A line of ggml's without the `FILE:LINE: ` its aborts begin with (`GGML_ABORT`,
/// `GGML_ASSERT`): the build machine's source path and a line number mean nothing to a user.
fn ggml_words(line: &str) -> &str {
    let Some((at, words)) = line.split_once(": ") else { return line };
    let source = at.rsplit_once(':').is_some_and(|(file, n)| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && [".c", ".cpp", ".h", ".hpp", ".cu", ".m"].iter().any(|e| file.ends_with(e))
    });
    if source && !words.trim().is_empty() {
        words
    } else {
        line
    }
}

/// How often a trace routes each (layer, expert), counted as the simulation counts them.
fn use_counts(index: &ModelIndex, path: &std::path::Path) -> Result<Vec<u64>> {
    let sh = index.shape();
    let t = RouteTrace::read(path)?;
    if t.header.n_layer() != sh.n_layer || t.header.n_expert != sh.n_expert {
        return Err(Error::Rpc(format!(
            "--placement-trace {}: {} layers × {} experts, the model has {} × {}",
            path.display(),
            t.header.n_layer(),
            t.header.n_expert,
            sh.n_layer,
            sh.n_expert
        )));
    }
    let stream = AccessStream::from_trace(&t, None)?;
    let mut uses = vec![0u64; (sh.n_layer * sh.n_expert) as usize];
    for &id in &stream.sequence {
        let k = stream.geom.key(id);
        uses[(k.layer * sh.n_expert + k.expert) as usize] += 1;
    }
    Ok(uses)
}

#[cfg(test)]
mod tests {
    /// Issue 44, defect 10: a lost host's message carried the build machine's path of
    /// ggml-rpc.cpp and a line number.
    #[test]
    fn ggml_abort_lines_lose_their_source_location() {
        let w = super::ggml_words;
        assert_eq!(
            w("/home/ci/.cargo/registry/src/llama.cpp/ggml/src/ggml-rpc/ggml-rpc.cpp:606: Remote RPC server crashed or returned malformed response"),
            "Remote RPC server crashed or returned malformed response"
        );
        assert_eq!(w("ggml.c:1700: GGML_ASSERT(x) failed"), "GGML_ASSERT(x) failed");
        for kept in ["Failed to connect to 127.0.0.1:5", "RPC server version mismatch: 2.0.0", "a.cpp:12:", "x: y"] {
            assert_eq!(w(kept), kept);
        }
    }
}
