//! Replay of a routing trace through the real [`ExpertCache`] and a [`Policy`](super::Policy): what
//! `bmoe replay`, the policy benchmark and the tests run.
//!
//! The access stream is the trace's rows in file order, grouped into one group per (turn,
//! phase, step, layer), the unit the streamer handles with one `ensure(layer, ids)`: all of a
//! group's hits are looked up (and pinned) before any of its misses is admitted, so a miss can
//! never evict an entry its own layer is about to use. Pins are released at the end of each
//! group by default (a layer's experts are done once its FFN is computed); `PinScope::Token`
//! holds them to the end of the token instead.
//!
//! Token cycles for the policies: the whole prompt (prefill rows are per prompt token but
//! layer-major) is cycle 0 of its turn; each decode step is one more cycle.

use std::time::Instant;

use super::trace::RouteTrace;
use super::{Access, CachePolicy, Counters, EntryId, ExpertCache, ExpertKey, Geometry, Phase, Position};

/// How long an access pins its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PinScope {
    /// Until the layer's group ends (what the streamer does).
    #[default]
    Layer,
    /// Until the token ends.
    Token,
}

/// One group: a layer of one token, with its accesses.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Where.
    pub pos: Position,
    /// Whether this group starts a new token (pin scope `Token` unpins here).
    pub new_token: bool,
    /// The layer's routed experts, rank order as in the trace.
    pub accesses: Vec<Access>,
}

/// A trace turned into the cache's terms: geometry and grouped accesses.
#[derive(Clone, Debug)]
pub struct AccessStream {
    /// Cache geometry.
    pub geom: Geometry,
    /// Groups in order.
    pub groups: Vec<Group>,
    /// `sequence[seq]` = entry id of access `seq` (for offline policies).
    pub sequence: Vec<EntryId>,
    /// Number of decode tokens.
    pub decode_tokens: u64,
    /// Top-k of the stream (`min(k, n_expert_used)`).
    pub k: u32,
}

impl AccessStream {
    /// The access stream of a trace, keeping only ranks `< k` when `k` is given.
    ///
    /// # Errors
    /// [`super::CacheError`] if the header cannot describe a cache (rows were validated by
    /// the parser).
    pub fn from_trace(t: &RouteTrace, k: Option<u32>) -> super::Result<Self> {
        let geom = t.header.geometry()?;
        if k == Some(0) {
            return Err(super::CacheError::Geometry { what: "--k 0: replay at least the first rank".into() });
        }
        let kk = k.unwrap_or(t.header.n_expert_used).min(t.header.n_expert_used);
        let mut groups: Vec<Group> = Vec::new();
        let mut sequence = Vec::new();
        let mut token: u64 = 0;
        let mut last_tok = None;
        let mut last_group = None;
        let mut decode_tokens = 0;
        for r in t.rows.iter().filter(|r| r.slot < kk) {
            let tok_key = match r.phase {
                Phase::Prefill => (r.turn, 0, 0),
                Phase::Decode => (r.turn, 1, r.step),
            };
            let new_token = last_tok != Some(tok_key);
            if new_token {
                if last_tok.is_some() {
                    token += 1;
                }
                if r.phase == Phase::Decode {
                    decode_tokens += 1;
                }
                last_tok = Some(tok_key);
            }
            let gkey = (r.turn, r.phase, r.step, r.layer);
            if last_group != Some(gkey) {
                groups.push(Group {
                    pos: Position { phase: r.phase, token, layer: r.layer },
                    new_token,
                    accesses: Vec::new(),
                });
                last_group = Some(gkey);
            }
            let id = geom.id(ExpertKey { layer: r.layer, expert: r.expert })?;
            let g = groups.last_mut().expect("pushed above");
            if g.accesses.iter().any(|a| a.id == id) {
                continue; // a duplicate within one layer is one access
            }
            g.accesses.push(Access { id, rank: r.slot, weight: r.weight, seq: sequence.len() as u64 });
            sequence.push(id);
        }
        Ok(Self { geom, groups, sequence, decode_tokens, k: kk })
    }

    /// Number of accesses.
    pub fn len(&self) -> usize {
        self.sequence.len()
    }

    /// Whether there are no accesses.
    pub fn is_empty(&self) -> bool {
        self.sequence.is_empty()
    }
}

/// The outcome of one (policy, budget) replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayReport {
    /// Policy name.
    pub policy: &'static str,
    /// Budget in bytes.
    pub budget: u64,
    /// Final counters.
    pub counters: Counters,
    /// Decode tokens replayed.
    pub decode_tokens: u64,
    /// Wall time of the cache calls (lookups, admissions, unpins), ns.
    pub elapsed_ns: u64,
    /// Accesses replayed.
    pub accesses: u64,
}

impl ReplayReport {
    /// The header of the text table [`Self::table_row`] fills.
    pub const TABLE_HEADER: &'static str = "policy       budget_mb   hit%_dec  hit%_all   MiB/token evictions   ns/acc";

    /// One row of the text table (`bmoe replay` without `--json`).
    pub fn table_row(&self) -> String {
        format!(
            "{:<12} {:>9} {:>10.1} {:>9.1} {:>11.1} {:>9} {:>8.0}",
            self.policy,
            self.budget >> 20,
            self.hit_pct_decode(),
            self.hit_pct_all(),
            self.read_mib_per_token(),
            self.counters.total().evictions,
            self.ns_per_access()
        )
    }

    /// One JSON object (`bmoe replay --json`), on one line.
    pub fn json_line(&self) -> String {
        format!(
            "{{\"policy\":\"{}\",\"budget_mb\":{},\"hit_pct_decode\":{:.2},\"hit_pct_all\":{:.2},\
             \"read_mib_per_token\":{:.2},\"evictions\":{},\"refused\":{},\"overflows\":{},\"ns_per_access\":{:.1},\
             \"accesses\":{},\"decode_tokens\":{}}}",
            self.policy,
            self.budget >> 20,
            self.hit_pct_decode(),
            self.hit_pct_all(),
            self.read_mib_per_token(),
            self.counters.total().evictions,
            self.counters.total().refused,
            self.counters.overflows,
            self.ns_per_access(),
            self.accesses,
            self.decode_tokens
        )
    }

    /// Decode-only hit %.
    pub fn hit_pct_decode(&self) -> f64 {
        self.counters.decode.hit_pct().unwrap_or(0.0)
    }

    /// Hit % over prefill and decode.
    pub fn hit_pct_all(&self) -> f64 {
        self.counters.total().hit_pct().unwrap_or(0.0)
    }

    /// MiB read per decode token.
    pub fn read_mib_per_token(&self) -> f64 {
        if self.decode_tokens == 0 {
            return 0.0;
        }
        self.counters.decode.bytes_read as f64 / (1u64 << 20) as f64 / self.decode_tokens as f64
    }

    /// Cache CPU time per access (bookkeeping plus policy), ns.
    pub fn ns_per_access(&self) -> f64 {
        self.elapsed_ns as f64 / self.accesses.max(1) as f64
    }
}

/// Replay `stream` through a cache of `budget` bytes evicting by shipped `policy` (the research
/// variants, oracles and the bound: `cache::research::replay`).
pub fn replay(stream: &AccessStream, budget: u64, policy: CachePolicy, scope: PinScope) -> ReplayReport {
    replay_with(stream, budget, policy.build().expect("shipped policies always build"), scope)
}

/// Replay with an already-built policy object.
pub fn replay_with(
    stream: &AccessStream,
    budget: u64,
    policy: Box<dyn super::Policy>,
    scope: PinScope,
) -> ReplayReport {
    replay_observed(stream, budget, policy, scope, |_| {})
}

/// [`replay_with`], calling `on_miss` with every access that missed, in stream order: the
/// scale-out simulation needs to know *which* reads a host makes, not only how many.
pub fn replay_observed(
    stream: &AccessStream,
    budget: u64,
    policy: Box<dyn super::Policy>,
    scope: PinScope,
    mut on_miss: impl FnMut(&Access),
) -> ReplayReport {
    let mut cache = ExpertCache::new(stream.geom.clone(), budget, policy);
    let mut misses: Vec<Access> = Vec::with_capacity(64);
    let mut evicted: Vec<ExpertKey> = Vec::with_capacity(64);
    let start = Instant::now();
    for g in &stream.groups {
        if scope == PinScope::Token && g.new_token {
            cache.unpin_all();
        }
        cache.begin_layer(g.pos);
        misses.clear();
        for a in &g.accesses {
            if cache.lookup(a) == super::Lookup::Miss {
                misses.push(*a);
            }
        }
        for a in &misses {
            evicted.clear();
            cache.admit(a, &mut evicted);
            on_miss(a);
        }
        if scope == PinScope::Layer {
            cache.unpin_all();
        }
    }
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    ReplayReport {
        policy: cache.policy_name(),
        budget,
        counters: *cache.counters(),
        decode_tokens: stream.decode_tokens,
        elapsed_ns,
        accesses: stream.len() as u64,
    }
}
