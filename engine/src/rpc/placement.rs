//! Who holds which expert (`--placement`): the deal of each layer's experts over the hosts,
//! host 0 being the coordinator. Pure arithmetic, shared by the running coordinator and by the
//! simulation (`bmoe replay --hosts`, `cache::research::scaleout`), so that a measured
//! run and its simulated bound place the same experts on the same hosts.
//!
//! Whole experts only: an expert computed on one host gives the bits it gives on any other host
//! with the same ggml, so the coordinator's sum stays bit-identical to one host's (splitting an
//! expert over hosts reorders its additions: docs/scale-out.md, "tensor").

use std::fmt;
use std::str::FromStr;

/// How the experts of every layer are dealt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Expert `e` of every layer on host `e mod N`.
    RoundRobin,
    /// Per layer, experts in decreasing order of use, each to the least-loaded host that still
    /// has room (every host holds the same number of experts per layer, so the same RAM). With
    /// no counts (no profiling trace) every expert counts the same and the deal is round-robin.
    Popularity,
    /// `Popularity`, plus the K most used experts of each layer on every host; a routed replica
    /// is computed on the host with the least work in that layer so far (the coordinator first
    /// on a tie: no network).
    ReplicateHot(u32),
}

impl Placement {
    /// The names `--placement` takes.
    pub const NAMES: &'static str = "popularity, round-robin, replicate-hot-K";

    /// The name `--placement` takes.
    pub fn name(self) -> String {
        match self {
            Placement::RoundRobin => "round-robin".into(),
            Placement::Popularity => "popularity".into(),
            Placement::ReplicateHot(k) => format!("replicate-hot-{k}"),
        }
    }

    /// The replicas per layer (K of `replicate-hot-K`, else 0).
    pub fn hot(self) -> u32 {
        match self {
            Placement::ReplicateHot(k) => k,
            _ => 0,
        }
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Placement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "round-robin" => Placement::RoundRobin,
            "popularity" => Placement::Popularity,
            _ => Placement::ReplicateHot(
                t.strip_prefix("replicate-hot-")
                    .and_then(|k| k.parse().ok())
                    .ok_or_else(|| format!("unknown placement `{s}` (known: {})", Self::NAMES))?,
            ),
        })
    }
}

/// The deal: for every (layer, expert) entry, `layer × n_expert + expert`, its owner and whether
/// every host holds a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub n_expert: u32,
    pub hosts: u32,
    pub owner: Vec<u32>,
    pub replicated: Vec<bool>,
}

impl Plan {
    /// Whether host `h` holds expert `e` of `layer`.
    pub fn holds(&self, h: u32, layer: u32, e: u32) -> bool {
        let id = (layer * self.n_expert + e) as usize;
        self.owner[id] == h || self.replicated[id]
    }

    /// The experts of `layer` host `h` holds, in expert order.
    pub fn held(&self, h: u32, layer: u32) -> Vec<u32> {
        (0..self.n_expert).filter(|&e| self.holds(h, layer, e)).collect()
    }

    /// The owner of expert `e` of `layer`.
    pub fn owner(&self, layer: u32, e: u32) -> u32 {
        self.owner[(layer * self.n_expert + e) as usize]
    }

    /// Whether expert `e` of `layer` is on every host.
    pub fn replicated(&self, layer: u32, e: u32) -> bool {
        self.replicated[(layer * self.n_expert + e) as usize]
    }
}

/// Deal `n_layer × n_expert` experts over `hosts` hosts by `placement`, with `uses[entry]` the
/// times each entry was routed in a profiling run (empty: no profile, every expert counts 1).
/// The experts a host holds per layer differ by at most one between hosts.
///
/// # Panics
/// If `hosts` is 0, or `uses` is neither empty nor one count per entry.
pub fn deal(uses: &[u64], n_layer: u32, n_expert: u32, hosts: u32, placement: Placement) -> Plan {
    assert!(hosts > 0, "a placement needs a host");
    let n = (n_layer * n_expert) as usize;
    assert!(uses.is_empty() || uses.len() == n, "{} use counts for {n} entries", uses.len());
    let mut owner: Vec<u32> = (0..n as u32).map(|id| (id % n_expert) % hosts).collect();
    let mut replicated = vec![false; n];
    let hot = match placement {
        Placement::RoundRobin => return Plan { n_expert, hosts, owner, replicated },
        Placement::Popularity => 0,
        Placement::ReplicateHot(k) => k.min(n_expert),
    };
    let used = |id: usize| if uses.is_empty() { 1 } else { uses[id] };
    for layer in 0..n_layer {
        let base = layer * n_expert;
        let mut order: Vec<u32> = (0..n_expert).collect();
        order.sort_by_key(|&e| (std::cmp::Reverse(used((base + e) as usize)), e));
        let room = |h: u32| n_expert / hosts + u32::from(h < n_expert % hosts);
        let (mut load, mut held) = (vec![0u64; hosts as usize], vec![0u32; hosts as usize]);
        for (i, &e) in order.iter().enumerate() {
            let h = (0..hosts).filter(|&h| held[h as usize] < room(h)).min_by_key(|&h| (load[h as usize], h));
            let h = h.expect("the rooms add up to n_expert");
            let id = (base + e) as usize;
            owner[id] = h;
            replicated[id] = (i as u32) < hot;
            load[h as usize] += used(id);
            held[h as usize] += 1;
        }
    }
    Plan { n_expert, hosts, owner, replicated }
}

/// Which host computes each of one layer's routed experts: its owner when that host is up,
/// else the coordinator (host 0, from its own flash); a replicated expert goes to the live host
/// with the least work in the layer so far (owned experts counted first, ties to the lowest id,
/// so the coordinator first), as the simulation's `serve` does. `work[e]` is the expert's share
/// of the layer (its routed rows); `up[h]` whether host `h` is up (the coordinator always is).
pub fn serve(plan: &Plan, layer: u32, routed: &[(u32, u64)], up: &[bool]) -> Vec<u32> {
    let live = |h: u32| h == 0 || up.get(h as usize).copied().unwrap_or(false);
    let mut out = vec![0u32; routed.len()];
    let mut load = vec![0u64; plan.hosts as usize];
    for (i, &(e, w)) in routed.iter().enumerate() {
        if !plan.replicated(layer, e) {
            let h = plan.owner(layer, e);
            let h = if live(h) { h } else { 0 };
            out[i] = h;
            load[h as usize] += w;
        }
    }
    for (i, &(e, w)) in routed.iter().enumerate() {
        if plan.replicated(layer, e) {
            let h = (0..plan.hosts).filter(|&h| live(h)).min_by_key(|&h| (load[h as usize], h)).unwrap_or(0);
            out[i] = h;
            load[h as usize] += w;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_ones_are_refused() {
        for p in [Placement::RoundRobin, Placement::Popularity, Placement::ReplicateHot(4)] {
            assert_eq!(p.name().parse::<Placement>().unwrap(), p);
        }
        assert!("tensor".parse::<Placement>().unwrap_err().contains("unknown placement"));
        assert!("replicate-hot-x".parse::<Placement>().is_err());
    }

    #[test]
    fn round_robin_and_popularity_without_counts_deal_alike() {
        let rr = deal(&[], 2, 8, 3, Placement::RoundRobin);
        assert_eq!(rr.held(0, 1), vec![0, 3, 6]);
        assert_eq!(rr.held(2, 0), vec![2, 5]);
        let pop = deal(&[], 2, 8, 3, Placement::Popularity);
        assert_eq!(pop, rr);
    }

    #[test]
    fn popularity_balances_use_and_room() {
        // One layer of 4 experts over 2 hosts, uses 10, 1, 9, 2: 10 → h0, 9 → h1, 2 → h1
        // (h1 has 9 < 10), 1 → h0 (h1 is full).
        let p = deal(&[10, 1, 9, 2], 1, 4, 2, Placement::Popularity);
        assert_eq!(p.owner, vec![0, 0, 1, 1]);
        assert!(p.replicated.iter().all(|&r| !r));
        let r = deal(&[10, 1, 9, 2], 1, 4, 2, Placement::ReplicateHot(1));
        assert_eq!(r.replicated, vec![true, false, false, false]);
        assert!(r.holds(1, 0, 0) && r.holds(0, 0, 0));
    }

    #[test]
    fn serve_sends_lost_owners_to_the_coordinator_and_replicas_to_the_least_loaded() {
        let p = deal(&[10, 1, 9, 2], 1, 4, 2, Placement::ReplicateHot(1));
        // Routed: 2 (owned by h1) and 0 (replicated): h1 has work 1, h0 none → 0 on h0.
        assert_eq!(serve(&p, 0, &[(2, 1), (0, 1)], &[true, true]), vec![1, 0]);
        // 1 (owned by h0), 0 (replicated) → h1.
        assert_eq!(serve(&p, 0, &[(1, 1), (0, 1)], &[true, true]), vec![0, 1]);
        // h1 down: everything on the coordinator.
        assert_eq!(serve(&p, 0, &[(2, 1), (0, 1)], &[true, false]), vec![0, 0]);
    }
}
