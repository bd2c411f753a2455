//! Expert-parallel serving over N hosts, simulated on a real routing trace (`bmoe replay
//! --hosts`; the design is docs/scale-out.md). The dense part stays on the coordinator, host 0,
//! which also holds its share of the experts; every other routed expert is computed on a host
//! that holds it, so per layer the hidden state goes out and the expert's output comes back
//! instead of the expert's weights. Each host keeps its experts in its own expert cache of the
//! per-host budget (a shipped policy, replayed through the real [`ExpertCache`](crate::cache::ExpertCache))
//! and reads its misses from its own flash: remote RAM is a tier above flash, and flash the last
//! resort.
//!
//! Trade-off: this is a bound, not a model of ggml's RPC protocol. One round trip per layer that
//! uses any remote host (the hosts are asked in parallel), all activations serialised on the
//! coordinator's link, expert compute proportional to the entry's bytes, a host's flash reads
//! overlapped with its compute, no queueing, and the dense part's time left out (it is the same
//! with one host or many). What it takes from the trace is what a formula cannot know: which
//! host each routed expert lands on, so the load imbalance, the round trips and the bytes each
//! host must still read from flash.

use std::fmt;
use std::str::FromStr;

use crate::cache::replay::{replay_observed, AccessStream, Group, PinScope};
use crate::cache::{Access, CacheError, CachePolicy, EntryId, Phase, Position};

const MIB: f64 = (1u64 << 20) as f64;

/// Which host holds which expert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Expert `e` of every layer on host `e mod N`: what a split that ignores routing gives.
    RoundRobin,
    /// Per layer, experts in decreasing order of use, each to the least-loaded host that still
    /// has room (every host holds the same number of experts per layer, so the same RAM).
    Popularity,
    /// `Popularity`, plus the K most used experts of each layer on every host; each routed
    /// replica is computed on the host with the least work in that layer so far (on a tie the
    /// lowest id, so the coordinator first: no network).
    ReplicateHot(u32),
    /// Every expert split over all hosts (llama.cpp's `-sm tensor` meta device: gate/up by rows,
    /// down by columns): every host computes 1/N of every routed expert and returns a partial
    /// sum. Perfect balance, every host asked every layer; each host's cache holds 1/N of every
    /// entry, so the hosts together behave as one cache of N × the budget. Adding partial sums
    /// reorders the floating-point additions: its output is not bit-identical to one host's.
    Tensor,
}

impl Placement {
    /// The names `--placement` takes (`replicate-hot-K` with any K).
    pub const NAMES: &'static str = "round-robin, popularity, replicate-hot-K, tensor";

    /// The name `--placement` takes.
    pub fn name(self) -> String {
        match self {
            Placement::RoundRobin => "round-robin".into(),
            Placement::Popularity => "popularity".into(),
            Placement::ReplicateHot(k) => format!("replicate-hot-{k}"),
            Placement::Tensor => "tensor".into(),
        }
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Placement {
    type Err = CacheError;
    fn from_str(s: &str) -> Result<Self, CacheError> {
        let t = s.trim().to_ascii_lowercase();
        let unknown = || CacheError::UnknownPlacement { name: crate::cache::trace::excerpt(s), known: Self::NAMES };
        Ok(match t.as_str() {
            "round-robin" => Placement::RoundRobin,
            "popularity" => Placement::Popularity,
            "tensor" => Placement::Tensor,
            _ => Placement::ReplicateHot(
                t.strip_prefix("replicate-hot-").and_then(|k| k.parse().ok()).ok_or_else(unknown)?,
            ),
        })
    }
}

/// What every host shares: what network, flash and compute cost, and how its cache runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    /// Width of the hidden state (not in the trace header).
    pub n_embd: u32,
    /// Bytes per activation element on the wire (F32 in ggml's graphs: 4).
    pub act_bytes: u32,
    /// Round-trip time between the coordinator and a host, µs.
    pub rtt_us: f64,
    /// A host's flash read rate, MiB/s (fio at the engine's request size).
    pub disk_mibps: f64,
    /// Expert compute per MiB of expert weights, ms (measured: docs/scale-out.md).
    pub compute_ms_per_mib: f64,
    /// The policy of every host's expert cache.
    pub policy: CachePolicy,
    /// Whether every cache starts filled with its host's entries in decreasing order of use
    /// (what a deployment does at load; in-sample counts), instead of empty (the replay's rule:
    /// the prompt warms it). The single host is preloaded the same way.
    pub preload: bool,
}

impl Setup {
    fn compute_s(&self, bytes: f64) -> f64 {
        bytes / MIB * self.compute_ms_per_mib / 1e3
    }

    fn read_s(&self, bytes: f64) -> f64 {
        bytes / MIB / self.disk_mibps
    }

    fn wire_s(&self, bytes: f64, gbps: f64) -> f64 {
        bytes * 8.0 / (gbps * 1e9)
    }

    /// One activation vector: the hidden state in, or one output back.
    fn vector(&self) -> f64 {
        f64::from(self.n_embd) * f64::from(self.act_bytes)
    }
}

/// One configuration of a sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cluster {
    /// Hosts, the coordinator included.
    pub hosts: u32,
    /// The coordinator's link, Gbit/s.
    pub link_gbps: f64,
    /// Who holds what.
    pub placement: Placement,
}

/// The outcome of one (cluster, budget) simulation; figures are per decode token.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleReport {
    /// The configuration.
    pub cluster: Cluster,
    /// Expert-cache budget of each host, bytes.
    pub budget: u64,
    /// Decode tokens simulated.
    pub decode_tokens: u64,
    /// Activation bytes on the wire, one vector in and one out per remotely computed expert (the
    /// issue's `n_embd × element size × routed experts`; for `tensor`, per remote host).
    pub act_bytes: f64,
    /// What a bit-exact design sends: the hidden state once per remote host and layer, and every
    /// remote expert's output back, for the coordinator to add in rank order as one host would.
    pub act_exact_bytes: f64,
    /// Bytes read from flash, all hosts together.
    pub flash_bytes: f64,
    /// Layers that asked a remote host (one round trip each: the hosts are asked in parallel).
    pub round_trips: f64,
    /// Σ over those layers of RTT + transfer, s.
    pub net_s: f64,
    /// Σ over layers of the slowest host's expert time (compute, or its flash reads if longer), s.
    pub host_s: f64,
    /// `Σ_layers max(RTT + transfer, slowest host's expert time)`, s: the bound.
    pub bound_s: f64,
    /// `Σ_layers max(coordinator's own experts, RTT + transfer + slowest remote host)`, s: what
    /// one sequence waits when a layer's network and compute cannot overlap.
    pub serial_s: f64,
    /// The busiest host's share of the expert work (bytes computed), work-weighted over layers.
    pub busiest: f64,
    /// The link speed above which the round trips cost more time than the transfers, Gbit/s
    /// (`None` without round trips): where latency, not bandwidth, is the network's limit.
    pub rtt_bound_gbps: Option<f64>,
    /// One host, same budget, streaming its misses from flash: the N = 1 bound, s.
    pub single_s: f64,
    /// The coordinator's cache misses at the same budget, fetched from remote RAM instead.
    pub weights_bytes: f64,
    /// Their bound, `Σ_layers max(compute, RTT + transfer)` over this link, s.
    pub weights_s: f64,
    /// One host with every expert in RAM: its expert compute, s ([`resident_s`]).
    pub resident_s: f64,
}

impl ScaleReport {
    /// The header of the text table [`Self::table_row`] fills.
    pub const TABLE_HEADER: &'static str = "placement        hosts  Gbit/s budget_mb  act_MiB act_exact_MiB flash_MiB busiest% rtt/tok rtt_gbps  net_ms host_ms bound_ms serial_ms single_ms  speedup";

    /// One row of the text table.
    pub fn table_row(&self) -> String {
        format!(
            "{:<16} {:>5} {:>7} {:>9} {:>8.2} {:>13.2} {:>9.1} {:>8.1} {:>7.1} {:>8} {:>7.1} {:>7.1} {:>8.1} {:>9.1} {:>9.1} {:>7.2}x",
            self.cluster.placement.name(),
            self.cluster.hosts,
            self.cluster.link_gbps,
            self.budget >> 20,
            self.act_bytes / MIB,
            self.act_exact_bytes / MIB,
            self.flash_bytes / MIB,
            self.busiest * 100.0,
            self.round_trips,
            self.rtt_bound_gbps.map_or("-".into(), |g| format!("{g:.1}")),
            self.net_s * 1e3,
            self.host_s * 1e3,
            self.bound_s * 1e3,
            self.serial_s * 1e3,
            self.single_s * 1e3,
            self.speedup()
        )
    }

    /// One JSON object, on one line.
    pub fn json_line(&self) -> String {
        format!(
            "{{\"placement\":\"{}\",\"hosts\":{},\"link_gbps\":{},\"budget_mb\":{},\"decode_tokens\":{},\
             \"act_mib_per_token\":{:.5},\"act_exact_mib_per_token\":{:.5},\"flash_mib_per_token\":{:.4},\
             \"busiest_pct\":{:.4},\"round_trips_per_token\":{:.4},\"rtt_bound_gbps\":{},\"net_ms\":{:.4},\
             \"host_ms\":{:.4},\"bound_ms\":{:.4},\"serial_ms\":{:.4},\"single_ms\":{:.4},\"speedup\":{:.4},\
             \"weights_mib_per_token\":{:.4},\"weights_ms\":{:.4},\"resident_ms\":{:.4}}}",
            self.cluster.placement.name(),
            self.cluster.hosts,
            self.cluster.link_gbps,
            self.budget >> 20,
            self.decode_tokens,
            self.act_bytes / MIB,
            self.act_exact_bytes / MIB,
            self.flash_bytes / MIB,
            self.busiest * 100.0,
            self.round_trips,
            self.rtt_bound_gbps.map_or("null".into(), |g| format!("{g:.4}")),
            self.net_s * 1e3,
            self.host_s * 1e3,
            self.bound_s * 1e3,
            self.serial_s * 1e3,
            self.single_s * 1e3,
            self.speedup(),
            self.weights_bytes / MIB,
            self.weights_s * 1e3,
            self.resident_s * 1e3
        )
    }

    /// The single-host bound over this one.
    pub fn speedup(&self) -> f64 {
        self.single_s / self.bound_s
    }
}

/// Simulate every cluster at every per-host budget (bytes); reports in budget-major order.
///
/// # Panics
/// If a cluster has no hosts.
pub fn sweep(stream: &AccessStream, budgets: &[u64], clusters: &[Cluster], setup: &Setup) -> Vec<ScaleReport> {
    let mut out = Vec::new();
    let uses = uses(stream);
    let (all_local, one_host) = (vec![0u32; stream.len()], Plan::one_host(&stream.geom));
    let resident_s = resident_s(stream, setup);
    for &budget in budgets {
        let one = misses(stream, &uses, &one_host, &all_local, 1, budget, setup);
        let single = evaluate(stream, 1, Split::Experts { serve: &all_local, miss: &one }, 1.0, setup);
        for c in clusters {
            assert!(c.hosts > 0, "a cluster needs a host");
            let t = match c.placement {
                Placement::Tensor => {
                    let pooled = budget.saturating_mul(u64::from(c.hosts));
                    let miss = misses(stream, &uses, &one_host, &all_local, 1, pooled, setup);
                    evaluate(stream, c.hosts, Split::Tensor { miss: &miss }, c.link_gbps, setup)
                }
                p => {
                    let plan = plan(stream, c.hosts, p);
                    let serve = serve(stream, &plan, c.hosts);
                    let miss = misses(stream, &uses, &plan, &serve, c.hosts, budget, setup);
                    evaluate(stream, c.hosts, Split::Experts { serve: &serve, miss: &miss }, c.link_gbps, setup)
                }
            };
            let (weights_bytes, weights_s) = weights_travel(stream, &one, c.link_gbps, setup);
            out.push(ScaleReport {
                cluster: *c,
                budget,
                single_s: single.bound_s,
                weights_bytes,
                weights_s,
                resident_s,
                ..t
            });
        }
    }
    out
}

/// One host with every expert in RAM: the expert compute per decode token, s.
pub fn resident_s(stream: &AccessStream, setup: &Setup) -> f64 {
    let decode = stream.groups.iter().filter(|g| g.pos.phase == Phase::Decode);
    let bytes: u64 = decode.flat_map(|g| &g.accesses).map(|a| stream.geom.bytes_of(a.id)).sum();
    setup.compute_s(bytes as f64) / stream.decode_tokens.max(1) as f64
}

/// How many times the stream routes each entry (prefill and decode), by entry id.
fn uses(stream: &AccessStream) -> Vec<u64> {
    let mut uses = vec![0u64; stream.geom.n_entries()];
    for &id in &stream.sequence {
        uses[id as usize] += 1;
    }
    uses
}

/// Where each entry lives: its owner, and whether every host also holds a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `owner[entry id]`.
    pub owner: Vec<u32>,
    /// `replicated[entry id]`.
    pub replicated: Vec<bool>,
}

impl Plan {
    /// Everything on the coordinator.
    pub fn one_host(geom: &crate::cache::Geometry) -> Self {
        Plan { owner: vec![0; geom.n_entries()], replicated: vec![false; geom.n_entries()] }
    }

    /// Whether host `h` holds entry `id`.
    pub fn holds(&self, h: u32, id: EntryId) -> bool {
        self.owner[id as usize] == h || self.replicated[id as usize]
    }
}

/// The plan of an expert placement (`Tensor` has none: every host holds a slice of everything,
/// and gets the round-robin plan here). Popularity counts every access of the stream, prefill
/// included: placed from the same trace it is measured on, an optimistic placement. The deal is
/// the one `bmoe run --rpc` makes ([`crate::rpc::placement::deal`]), so a measured run and its
/// bound place the same experts on the same hosts.
pub fn plan(stream: &AccessStream, hosts: u32, placement: Placement) -> Plan {
    use crate::rpc::placement::{deal, Placement as Deal};
    let geom = &stream.geom;
    let (by, counts) = match placement {
        Placement::RoundRobin | Placement::Tensor => (Deal::RoundRobin, Vec::new()),
        Placement::Popularity => (Deal::Popularity, uses(stream)),
        Placement::ReplicateHot(k) => (Deal::ReplicateHot(k), uses(stream)),
    };
    let d = deal(&counts, geom.n_layer(), geom.n_expert(), hosts, by);
    Plan { owner: d.owner, replicated: d.replicated }
}

/// The host that computes each access (indexed by [`Access::seq`]): its owner, or for a
/// replicated entry the host with the least work in its layer so far (owned entries first).
pub fn serve(stream: &AccessStream, plan: &Plan, hosts: u32) -> Vec<u32> {
    let geom = &stream.geom;
    let mut out = vec![0u32; stream.len()];
    let mut work = vec![0u64; hosts as usize];
    for g in &stream.groups {
        work.fill(0);
        for a in g.accesses.iter().filter(|a| !plan.replicated[a.id as usize]) {
            let h = plan.owner[a.id as usize];
            out[a.seq as usize] = h;
            work[h as usize] += geom.bytes_of(a.id);
        }
        for a in g.accesses.iter().filter(|a| plan.replicated[a.id as usize]) {
            let h = (0..hosts).min_by_key(|&h| (work[h as usize], h)).expect("at least one host");
            out[a.seq as usize] = h;
            work[h as usize] += geom.bytes_of(a.id);
        }
    }
    out
}

/// Which accesses miss (indexed by [`Access::seq`]) when each host `h` replays, through its own cache
/// of `budget` bytes, exactly the accesses `serve` gives it; with `setup.preload` the cache first
/// takes the entries `plan` gives host `h`, most used first, as long as they fit.
fn misses(
    stream: &AccessStream,
    uses: &[u64],
    plan: &Plan,
    serve: &[u32],
    hosts: u32,
    budget: u64,
    setup: &Setup,
) -> Vec<bool> {
    let mut miss = vec![false; stream.len()];
    for h in 0..hosts {
        let mut preload: Vec<EntryId> = Vec::new();
        if setup.preload {
            let mut held: Vec<EntryId> = (0..stream.geom.n_entries() as EntryId)
                .filter(|&id| uses[id as usize] > 0 && plan.holds(h, id))
                .collect();
            held.sort_by_key(|&id| (std::cmp::Reverse(uses[id as usize]), id));
            let mut room = budget;
            for id in held {
                let b = stream.geom.bytes_of(id);
                if b <= room {
                    room -= b;
                    preload.push(id);
                }
            }
        }
        let (sub, origin) = sub_stream(stream, &preload, |a| serve[a.seq as usize] == h);
        let p = setup.policy.build().expect("shipped policies always build");
        replay_observed(&sub, budget, p, PinScope::Layer, |a| {
            if let Some(&o) = origin.get(a.seq as usize).filter(|&&o| o != PRELOADED) {
                miss[o] = true;
            }
        });
    }
    miss
}

/// `origin` of an access that only loads the cache.
const PRELOADED: usize = usize::MAX;

/// The accesses `keep` selects, renumbered, after one prefill group per layer that loads
/// `preload`; `origin[new seq]` = the old seq, or [`PRELOADED`].
fn sub_stream(
    stream: &AccessStream,
    preload: &[EntryId],
    keep: impl Fn(&Access) -> bool,
) -> (AccessStream, Vec<usize>) {
    let (mut groups, mut sequence, mut origin) = (Vec::<Group>::new(), Vec::new(), Vec::new());
    for layer in 0..stream.geom.n_layer() {
        let accesses: Vec<Access> = preload
            .iter()
            .filter(|&&id| stream.geom.layer_of(id) == layer)
            .map(|&id| {
                sequence.push(id);
                origin.push(PRELOADED);
                Access { id, rank: 0, weight: 0.0, seq: sequence.len() as u64 - 1 }
            })
            .collect();
        if !accesses.is_empty() {
            let pos = Position { phase: Phase::Prefill, token: 0, layer };
            groups.push(Group { pos, new_token: groups.is_empty(), accesses });
        }
    }
    let mut new_token = false;
    for g in &stream.groups {
        new_token |= g.new_token;
        let mut accesses: Vec<Access> = Vec::new();
        for a in g.accesses.iter().filter(|a| keep(a)) {
            accesses.push(Access { seq: sequence.len() as u64, ..*a });
            sequence.push(a.id);
            origin.push(a.seq as usize);
        }
        if !accesses.is_empty() {
            groups.push(Group { pos: g.pos, new_token, accesses });
            new_token = false;
        }
    }
    let sub =
        AccessStream { geom: stream.geom.clone(), groups, sequence, decode_tokens: stream.decode_tokens, k: stream.k };
    (sub, origin)
}

/// How a layer's routed experts are spread.
enum Split<'a> {
    /// Each access on one host (`serve`), missing in that host's cache or not (`miss`).
    Experts { serve: &'a [u32], miss: &'a [bool] },
    /// Each access on every host, a 1/N slice each; `miss` from one cache of N × the budget.
    Tensor { miss: &'a [bool] },
}

/// The per-token figures of one spread (everything but `single_s` and the weights columns).
fn evaluate(stream: &AccessStream, hosts: u32, split: Split<'_>, link_gbps: f64, setup: &Setup) -> ScaleReport {
    let n = hosts as usize;
    let (mut work, mut read) = (vec![0f64; n], vec![0f64; n]);
    let mut r = ScaleReport {
        cluster: Cluster { hosts, link_gbps, placement: Placement::RoundRobin },
        budget: 0,
        decode_tokens: stream.decode_tokens,
        act_bytes: 0.0,
        act_exact_bytes: 0.0,
        flash_bytes: 0.0,
        round_trips: 0.0,
        net_s: 0.0,
        host_s: 0.0,
        bound_s: 0.0,
        serial_s: 0.0,
        busiest: 0.0,
        rtt_bound_gbps: None,
        single_s: 0.0,
        weights_bytes: 0.0,
        weights_s: 0.0,
        resident_s: 0.0,
    };
    let (mut busiest_work, mut total_work) = (0.0, 0.0);
    for g in stream.groups.iter().filter(|g| g.pos.phase == Phase::Decode) {
        work.fill(0.0);
        read.fill(0.0);
        let mut remote_experts = 0u32;
        for a in &g.accesses {
            let b = stream.geom.bytes_of(a.id) as f64;
            match split {
                Split::Experts { serve, miss } => {
                    let h = serve[a.seq as usize] as usize;
                    work[h] += b;
                    if miss[a.seq as usize] {
                        read[h] += b;
                    }
                    remote_experts += u32::from(h != 0);
                }
                Split::Tensor { miss } => {
                    let m = if miss[a.seq as usize] { b } else { 0.0 };
                    work.iter_mut().for_each(|w| *w += b / n as f64);
                    read.iter_mut().for_each(|x| *x += m / n as f64);
                }
            }
        }
        let remote_hosts = work[1..].iter().filter(|&&w| w > 0.0).count() as f64;
        let (act, exact) = match split {
            Split::Experts { .. } => {
                let e = f64::from(remote_experts);
                (2.0 * setup.vector() * e, setup.vector() * (remote_hosts + e))
            }
            // The hidden state in, a partial sum out, per remote host.
            Split::Tensor { .. } => (2.0 * setup.vector() * remote_hosts, 2.0 * setup.vector() * remote_hosts),
        };
        let time: Vec<f64> = (0..n).map(|h| setup.compute_s(work[h]).max(setup.read_s(read[h]))).collect();
        let slowest = time.iter().copied().fold(0.0, f64::max);
        let net = if remote_hosts > 0.0 { setup.rtt_us / 1e6 + setup.wire_s(act, link_gbps) } else { 0.0 };
        let slowest_remote = time[1..].iter().copied().fold(0.0, f64::max);
        r.act_bytes += act;
        r.act_exact_bytes += exact;
        r.flash_bytes += read.iter().sum::<f64>();
        r.round_trips += f64::from(u8::from(remote_hosts > 0.0));
        r.net_s += net;
        r.host_s += slowest;
        r.bound_s += net.max(slowest);
        r.serial_s += time[0].max(if remote_hosts > 0.0 { net + slowest_remote } else { 0.0 });
        busiest_work += work.iter().copied().fold(0.0, f64::max);
        total_work += work.iter().sum::<f64>();
    }
    let t = stream.decode_tokens.max(1) as f64;
    for x in [
        &mut r.act_bytes,
        &mut r.act_exact_bytes,
        &mut r.flash_bytes,
        &mut r.round_trips,
        &mut r.net_s,
        &mut r.host_s,
        &mut r.bound_s,
        &mut r.serial_s,
    ] {
        *x /= t;
    }
    r.busiest = if total_work > 0.0 { busiest_work / total_work } else { 0.0 };
    let rtt_s = r.round_trips * setup.rtt_us / 1e6;
    r.rtt_bound_gbps = (rtt_s > 0.0).then(|| r.act_bytes * 8.0 / rtt_s / 1e9);
    r
}

/// Weights travelling instead: the coordinator computes every expert and fetches the ones its
/// own cache misses (`miss`) from remote RAM over the link, a round trip per layer with a miss.
/// Per decode token: (bytes, `Σ_layers max(compute, RTT + transfer)` in s).
fn weights_travel(stream: &AccessStream, miss: &[bool], link_gbps: f64, setup: &Setup) -> (f64, f64) {
    let (mut bytes, mut s) = (0.0, 0.0);
    for g in stream.groups.iter().filter(|g| g.pos.phase == Phase::Decode) {
        let all: f64 = g.accesses.iter().map(|a| stream.geom.bytes_of(a.id) as f64).sum();
        let missed: f64 =
            g.accesses.iter().filter(|a| miss[a.seq as usize]).map(|a| stream.geom.bytes_of(a.id) as f64).sum();
        let net = if missed > 0.0 { setup.rtt_us / 1e6 + setup.wire_s(missed, link_gbps) } else { 0.0 };
        bytes += missed;
        s += setup.compute_s(all).max(net);
    }
    let t = stream.decode_tokens.max(1) as f64;
    (bytes / t, s / t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::replay::replay;
    use crate::cache::trace::{RouteTrace, CSV_HEADER};

    /// A trace of `n_layer` layers x 4 experts, layer `l`'s entries `(l + 1)` MiB; a prefill that
    /// routes every expert of every layer (so a budget of everything leaves decode all hits),
    /// then `tokens[t][layer]` = that layer's experts in rank order.
    fn stream(n_layer: u32, prefill: bool, tokens: &[&[&[u32]]]) -> AccessStream {
        let k = tokens[0][0].len();
        let mut s = format!("# route_trace v1\n# model=t arch=test n_layer={n_layer} n_expert=4 n_expert_used={k}\n");
        for l in 0..n_layer {
            s += &format!("# layer={l} expert_bytes={} dense_bytes=0\n", (u64::from(l) + 1) << 20);
        }
        s += CSV_HEADER;
        s += "\n";
        for l in 0..n_layer * u32::from(prefill) {
            for e in 0..4 {
                s += &format!("0,0,0,{l},0,{e},0.25,0,0\n");
            }
        }
        for (t, layers) in tokens.iter().enumerate() {
            for (l, experts) in layers.iter().enumerate() {
                for (r, e) in experts.iter().enumerate() {
                    s += &format!("0,1,{t},{l},{r},{e},0.5,0,0\n");
                }
            }
        }
        AccessStream::from_trace(&RouteTrace::parse(s.as_bytes(), "test").unwrap(), None).unwrap()
    }

    /// 1 ms per MiB of compute, 1000 MiB/s of flash, 100 µs RTT, 1024-wide F32 activations (one
    /// vector = 4 KiB, 32,768 bits: 32.768 µs at 1 Gbit/s).
    const SETUP: Setup = Setup {
        n_embd: 1024,
        act_bytes: 4,
        rtt_us: 100.0,
        disk_mibps: 1000.0,
        compute_ms_per_mib: 1.0,
        policy: CachePolicy::Lru,
        preload: false,
    };

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * (1.0 + b.abs())
    }

    fn one(s: &AccessStream, budget_mib: u64, c: Cluster) -> ScaleReport {
        sweep(s, &[budget_mib << 20], &[c], &SETUP).remove(0)
    }

    #[test]
    fn placements_parse() {
        assert_eq!("round-robin".parse::<Placement>().unwrap(), Placement::RoundRobin);
        assert_eq!(" Popularity".parse::<Placement>().unwrap(), Placement::Popularity);
        assert_eq!("replicate-hot-8".parse::<Placement>().unwrap(), Placement::ReplicateHot(8));
        assert_eq!("tensor".parse::<Placement>().unwrap(), Placement::Tensor);
        assert_eq!(Placement::ReplicateHot(3).name(), "replicate-hot-3");
        for bad in ["replicate-hot-", "replicate-hot-x", "layer", ""] {
            assert!(bad.parse::<Placement>().is_err(), "{bad}");
        }
    }

    /// Round-robin over 2 hosts (even experts on the coordinator), everything cached.
    /// Token 0: L0 {0,1} (1 MiB each), L1 {1,3} (2 MiB each). Token 1: L0 {2,0}, L1 {2,0}.
    /// - t0 L0: h0 1 MiB, h1 1 MiB; 1 remote expert: 8 KiB = 65.536 µs at 1 Gbit/s; net 165.536 µs;
    ///   slowest 1 ms; bound 1 ms; serial max(1, 0.165536 + 1) = 1.165536 ms.
    /// - t0 L1: both on h1 (4 MiB, 4 ms); 2 remote: 16 KiB, 131.072 µs; net 231.072 µs;
    ///   bound 4 ms; serial 4.231072 ms; busiest 4 of 4.
    /// - t1 L0 and L1: all on h0 (2 and 4 MiB): no network; bound = serial = 2 and 4 ms.
    ///
    /// Per token: bound (1 + 4 + 2 + 4) / 2 = 5.5 ms, serial (1.165536 + 4.231072 + 6) / 2,
    /// act (8 + 16) KiB / 2 = 12 KiB, act_exact (one hidden state per remote host, one output per
    /// remote expert: 8 + 12) KiB / 2 = 10 KiB, 1 round trip, busiest
    /// (1 + 4 + 2 + 4) / 12 MiB. One host: the same compute, all local, 6 ms per token.
    #[test]
    fn round_robin_hand_checked() {
        let s = stream(2, true, &[&[&[0, 1], &[1, 3]], &[&[2, 0], &[2, 0]]]);
        let r = one(&s, 100, Cluster { hosts: 2, link_gbps: 1.0, placement: Placement::RoundRobin });
        assert_eq!(r.decode_tokens, 2);
        assert!(close(r.bound_s, 5.5e-3), "{}", r.bound_s);
        assert!(close(r.serial_s, (1.165536e-3 + 4.231072e-3 + 6e-3) / 2.0), "{}", r.serial_s);
        assert!(close(r.net_s, (165.536e-6 + 231.072e-6) / 2.0), "{}", r.net_s);
        assert!(close(r.host_s, 5.5e-3));
        assert!(close(r.act_bytes, 12.0 * 1024.0) && close(r.act_exact_bytes, 10.0 * 1024.0));
        assert!(close(r.round_trips, 1.0) && close(r.flash_bytes, 0.0));
        assert!(close(r.busiest, 11.0 / 12.0), "{}", r.busiest);
        // Round trips cost more than transfers above 12 KiB per 100 µs: 0.98304 Gbit/s.
        assert!(close(r.rtt_bound_gbps.unwrap(), 0.98304));
        assert!(close(r.single_s, 6e-3) && close(r.speedup(), 6.0 / 5.5));
        assert!(close(resident_s(&s, &SETUP), 6e-3));
        // Nothing missed, so weights travelling costs compute alone: 6 ms.
        assert!(close(r.weights_bytes, 0.0) && close(r.weights_s, 6e-3));
        let j: serde_json::Value = serde_json::from_str(&r.json_line()).unwrap();
        assert_eq!((j["placement"].as_str(), j["hosts"].as_u64()), (Some("round-robin"), Some(2)));
        // Printed to 5 decimals: 12 KiB is 0.01172 MiB.
        assert!(close(j["bound_ms"].as_f64().unwrap(), 5.5) && j["act_mib_per_token"].as_f64() == Some(0.01172));
        assert!(r.table_row().starts_with("round-robin") && r.table_row().ends_with("1.09x"), "{}", r.table_row());
    }

    /// The plot draws one line per (placement, link), each from one host (the one-host row of its
    /// link when it has none), and the two one-host references.
    #[test]
    fn plot_has_a_line_per_placement_and_link() {
        let s = stream(2, true, &[&[&[0, 1], &[1, 3]], &[&[2, 0], &[2, 0]]]);
        let mut clusters = vec![Cluster { hosts: 1, link_gbps: 1.0, placement: Placement::RoundRobin }];
        for placement in [Placement::RoundRobin, Placement::Tensor] {
            clusters.push(Cluster { hosts: 2, link_gbps: 1.0, placement });
        }
        let svg = super::super::plot::scaleout_svg("t", &sweep(&s, &[100 << 20], &clusters, &SETUP));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("tensor @ 1 Gbit/s") && svg.contains("one host, all in RAM"));
        // Both lines start at one host (x of the first column) and end at two.
        for line in svg.lines().filter(|l| l.starts_with("<polyline")) {
            assert_eq!(line.matches(',').count(), 2, "{line}");
        }
    }

    /// With one host the cluster is the single host: no network, and its flash bytes are what
    /// `bmoe replay` reports for the same policy and budget (here LRU under the cycle, no prefill).
    /// Token after token of the same routing at 3 MiB (cycle 1 + 1 + 2 + 2 = 6 MiB) LRU hits
    /// nothing: every token reads 6 MiB; each layer is then read-bound (1 MiB read = 1 ms of
    /// flash = 1 ms of compute): 6 ms per token.
    #[test]
    fn one_host_is_the_single_host() {
        let tok: &[&[u32]] = &[&[0, 1], &[2, 3]];
        let s = stream(2, false, &[tok, tok, tok]);
        let r = one(&s, 3, Cluster { hosts: 1, link_gbps: 10.0, placement: Placement::Popularity });
        let rep = replay(&s, 3 << 20, CachePolicy::Lru, PinScope::Layer);
        assert!(close(r.flash_bytes / MIB, rep.read_mib_per_token()) && close(r.flash_bytes / MIB, 6.0));
        assert!(close(r.bound_s, r.single_s) && close(r.bound_s, 6e-3) && close(r.serial_s, 6e-3));
        assert!(close(r.act_bytes, 0.0) && close(r.round_trips, 0.0) && close(r.busiest, 1.0));
        // Its misses fetched over 10 Gbit/s: 2 and 4 MiB per layer, 1.6777 and 3.3554 ms of wire
        // plus 100 µs each, against 2 and 4 ms of compute.
        let wire = |mib: f64| mib * MIB * 8.0 / 10e9 + 100e-6;
        assert!(
            close(r.weights_bytes, 6.0 * MIB) && close(r.weights_s, 2e-3f64.max(wire(2.0)) + 4e-3f64.max(wire(4.0)))
        );
    }

    /// Layer 0 used 10, 1, 6, 5 times (experts 0..3), layer 1 never: by use, e0 → h0 (load 10),
    /// e2 → h1 (6), e3 → h1 (11), e1 → h0, the only host with room (each holds 2).
    /// replicate-hot-1 also replicates e0.
    #[test]
    fn popularity_balances_use_with_equal_room() {
        let mut toks: Vec<Vec<Vec<u32>>> = Vec::new();
        for (e, n) in [(0, 10), (1, 1), (2, 6), (3, 5)] {
            toks.extend((0..n).map(|_| vec![vec![e]]));
        }
        let refs: Vec<Vec<&[u32]>> = toks.iter().map(|t| t.iter().map(Vec::as_slice).collect()).collect();
        let refs: Vec<&[&[u32]]> = refs.iter().map(Vec::as_slice).collect();
        let s = stream(1, false, &refs);
        let p = plan(&s, 2, Placement::Popularity);
        assert_eq!(p.owner, vec![0, 0, 1, 1]);
        assert_eq!(p.replicated, vec![false; 4]);
        assert_eq!(plan(&s, 2, Placement::ReplicateHot(1)).replicated, vec![true, false, false, false]);
        assert_eq!(plan(&s, 2, Placement::RoundRobin).owner, vec![0, 1, 0, 1]);
        assert_eq!(plan(&s, 3, Placement::RoundRobin).owner, vec![0, 1, 2, 0]);
    }

    /// 3 hosts, round-robin owners (0 1 2 0), experts 0 and 1 replicated. Layer {2, 0, 1}:
    /// e2 is owned (h2, 1 MiB); then e0 goes to the least-loaded host, h0 and h1 tie at 0 and
    /// the coordinator wins; then e1: h1 is the only host without work.
    #[test]
    fn replicas_go_to_the_least_loaded_host() {
        let s = stream(1, false, &[&[&[2, 0, 1]]]);
        let mut p = plan(&s, 3, Placement::RoundRobin);
        p.replicated = vec![true, true, false, false];
        assert_eq!(serve(&s, &p, 3), vec![2, 0, 1]);
        // Layer {0, 1, 2, 3} with e3 replicated: e0, e1, e2 give every host 1 MiB, and the tie
        // for e3 goes to the coordinator.
        let s = stream(1, false, &[&[&[0, 1, 2, 3]]]);
        p.replicated = vec![false, false, false, true];
        assert_eq!(serve(&s, &p, 3), vec![0, 1, 2, 0]);
    }

    /// Tensor over 4 hosts: each host computes a quarter of every expert: busiest 25 %, every
    /// layer asks 3 remote hosts (3 × 2 × 4 KiB = 24 KiB); one layer {0, 1} of 1 MiB entries:
    /// a host computes 0.5 ms; net 100 µs + 24 KiB at 10 Gbit/s (19.6608 µs).
    #[test]
    fn tensor_splits_every_expert() {
        let s = stream(1, true, &[&[&[0, 1]]]);
        let r = one(&s, 100, Cluster { hosts: 4, link_gbps: 10.0, placement: Placement::Tensor });
        assert!(close(r.busiest, 0.25) && close(r.round_trips, 1.0));
        assert!(close(r.act_bytes, 24.0 * 1024.0) && close(r.act_exact_bytes, 24.0 * 1024.0));
        assert!(close(r.net_s, 119.6608e-6) && close(r.bound_s, 0.5e-3) && close(r.serial_s, 0.5e-3 + 119.6608e-6));
        assert!(close(r.single_s, 2e-3));
    }

    /// Each host's cache sees only its own experts: top-1, experts 0 1 0 1 (1 MiB each) and a
    /// 1 MiB cache per host. Round-robin over 2 hosts: each host reads its one expert once, 2 MiB
    /// over 4 tokens; one host of 1 MiB (LRU) misses every time, 1 MiB per token.
    #[test]
    fn hosts_keep_their_own_experts() {
        let (a, b): (&[&[u32]], &[&[u32]]) = (&[&[0]], &[&[1]]);
        let s = stream(1, false, &[a, b, a, b]);
        let r = one(&s, 1, Cluster { hosts: 2, link_gbps: 10.0, placement: Placement::RoundRobin });
        assert!(close(r.flash_bytes, 2.0 * MIB / 4.0), "{}", r.flash_bytes / MIB);
        assert!(close(r.weights_bytes, MIB), "{}", r.weights_bytes / MIB);
        // Preloaded, each host starts with its expert: nothing is read. The single host starts
        // with the more used of e0 and e1 (a tie: e0), so it hits once and misses 3 times.
        let warm = Setup { preload: true, ..SETUP };
        let r =
            sweep(&s, &[1 << 20], &[Cluster { hosts: 2, link_gbps: 10.0, placement: Placement::RoundRobin }], &warm);
        assert!(close(r[0].flash_bytes, 0.0), "{}", r[0].flash_bytes / MIB);
        assert!(close(r[0].weights_bytes, 0.75 * MIB), "{}", r[0].weights_bytes / MIB);
    }
}
