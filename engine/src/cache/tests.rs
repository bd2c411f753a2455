//! Replays pinned on tiny hand-checkable traces, and the pin/budget property.

use super::policy::{Decay, DecayParams};
use super::replay::{replay, replay_with, AccessStream, PinScope};
use super::trace::RouteTrace;
use super::*;

/// A decode-only trace: `tokens[t][layer]` = that layer's experts in rank order; every entry
/// is 100 bytes.
fn trace(n_layer: u32, n_expert: u32, tokens: &[&[&[u32]]]) -> AccessStream {
    let k = tokens[0][0].len();
    let mut s =
        format!("# route_trace v1\n# model=t arch=test n_layer={n_layer} n_expert={n_expert} n_expert_used={k}\n");
    for l in 0..n_layer {
        s += &format!("# layer={l} expert_bytes=100 dense_bytes=0\n");
    }
    s += trace::CSV_HEADER;
    s += "\n";
    for (t, layers) in tokens.iter().enumerate() {
        for (l, experts) in layers.iter().enumerate() {
            for (r, e) in experts.iter().enumerate() {
                s += &format!("0,1,{t},{l},{r},{e},0.5,0,100\n");
            }
        }
    }
    let t = RouteTrace::parse(s.as_bytes(), "test").unwrap();
    AccessStream::from_trace(&t, None).unwrap()
}

fn run(s: &AccessStream, budget: u64, p: &str) -> PhaseCounters {
    replay(s, budget, p.parse().unwrap(), PinScope::Layer).counters.decode
}

/// 2 layers x top-2, the same routing every token, 3 entries of room (cycle = 4).
/// LRU, by hand (order oldest → newest; hits are pinned before a layer's misses are admitted):
/// t0: 4 misses; L1e1 evicts L0e0           → {L0e1, L1e0, L1e1}
/// t1 L0: e1 hits; e0 evicts L1e0           → {L1e1, L0e1, L0e0}
/// t1 L1: e1 hits; e0 evicts L0e1           → {L0e0, L1e1, L1e0}
/// t2 L0: e0 hits; e1 evicts L1e1; t2 L1: e0 hits; e1 evicts L0e0.
/// Hits 2 + 2 = 4 of 12, evictions 1 + 2 + 2 = 5, read 8 x 100 bytes.
#[test]
fn lru_hand_checked() {
    let tok: &[&[u32]] = &[&[0, 1], &[0, 1]];
    let s = trace(2, 4, &[tok, tok, tok]);
    let c = run(&s, 300, "lru");
    assert_eq!((c.hits, c.misses, c.evictions, c.bytes_read), (4, 8, 5, 800));
    // With room for the cycle everything after the first token hits.
    let c = run(&s, 400, "lru");
    assert_eq!((c.hits, c.misses, c.evictions), (8, 4, 0));
}

/// 1 layer, top-1, room for 2; experts 0 1 0 2 0 3 1 0.
/// LRU: m m h(0) m(evicts 1) h(0) m(evicts 2) m(evicts 0) m(evicts 3)   → 2 hits.
/// LFU: 0 gains count; 2 evicts 1, 3 evicts 2, 1 evicts 3, 0 hits       → 3 hits.
/// Bélády: 2 evicts 1 (next use 6 vs 4), 3 evicts 2 (never), 1 evicts 3 → 3 hits, the optimum.
#[test]
fn frequency_beats_recency_hand_checked() {
    let seq = [0u32, 1, 0, 2, 0, 3, 1, 0];
    let toks: Vec<Vec<Vec<u32>>> = seq.iter().map(|&e| vec![vec![e]]).collect();
    let refs: Vec<Vec<&[u32]>> = toks.iter().map(|t| t.iter().map(|v| v.as_slice()).collect()).collect();
    let refs2: Vec<&[&[u32]]> = refs.iter().map(|v| v.as_slice()).collect();
    let s = trace(1, 4, &refs2);
    assert_eq!(run(&s, 200, "lru").hits, 2);
    assert_eq!(run(&s, 200, "lfu").hits, 3);
    assert_eq!(run(&s, 200, "belady").hits, 3);
    assert_eq!(run(&s, 200, "decay").hits, 3);
}

/// The cliff: 3 layers, top-1, the same expert every token, room for 2 of the 3 (a cycle).
/// LRU evicts exactly the entry needed next: 0 hits. The default policy: at t0 the three
/// entries tie and the most recent unpinned (L1) goes; from then on L0, used every token,
/// out-scores the entry inserted last, which is the one that goes: L0 hits every later token.
/// Per-layer: each layer's share (66 bytes) is under one entry, so each layer only keeps its
/// pinned entry while computing: 0 hits.
#[test]
fn no_cliff_under_the_cycle() {
    let tok: &[&[u32]] = &[&[0], &[0], &[0]];
    let s = trace(3, 2, &[tok, tok, tok]);
    assert_eq!(run(&s, 200, "lru").hits, 0);
    let c = run(&s, 200, "decay");
    assert_eq!((c.hits, c.misses), (2, 7));
}

/// The same cliff trace under `hd`, by hand. Routing is identical every token, so every
/// resident entry has the same (age, decayed count) state at its next chance whenever two are
/// compared (the table values then cancel, whatever was learned), except at t1 L1, where the
/// table has seen only cold entries so every warm state is at the prior, the overall rate.
/// So the time to the next chance decides: the entry whose layer comes soonest stays.
/// t0: L0, L1 kept; L2 needs room: L0 (next chance in 1/3 cycle) stays, L1 (2/3) goes.
/// t1 L0: hit. L1: miss; L2 (next chance this token, 1/3) stays, L0 (2/3) goes. L2: hit.
/// t2 L0: miss; L1 (1/3) stays, L2 (2/3) goes. L1: hit. L2: miss; L0 stays, L1 goes.
/// 3 hits, 6 misses, against the default's 2 and LRU's 0.
#[test]
fn hd_keeps_the_entry_needed_soonest() {
    let tok: &[&[u32]] = &[&[0], &[0], &[0]];
    let s = trace(3, 2, &[tok, tok, tok]);
    let c = run(&s, 200, "hd");
    assert_eq!((c.hits, c.misses, c.evictions), (3, 6, 4));
}

/// `hd` learns from what it observes. 1 layer, top-1, room for 2: expert 0 every third token,
/// a new expert on each of the others (0 a b 0 c d 0 e f ...); `hd` learns from even tokens.
/// LRU always evicts 0 just before it returns: 0 hits. Under `hd`: at t2 nothing warm has been
/// observed, all states are at the prior, and the entry of least decayed count (0) goes: the
/// first return is missed. At t5 the newcomer's state (one use, age 2 at its next chance) has
/// been observed once and not routed (expert 0 itself at t2), while 0's state (age 3) is still
/// at the prior: the newcomer goes. From then on 0's state is observed routed at its returns and
/// one-offs never are: 0 stays. 8 hits of 9 returns.
#[test]
fn hd_learns_to_keep_the_recurring_entry() {
    let mut seq = Vec::new();
    for t in 0..30u32 {
        seq.push(if t % 3 == 0 { 0 } else { 1 + t });
    }
    let toks: Vec<[&[u32]; 1]> = seq.iter().map(|e| [std::slice::from_ref(e)]).collect();
    let refs: Vec<&[&[u32]]> = toks.iter().map(|t| t.as_slice()).collect();
    let s = trace(1, 32, &refs);
    assert_eq!(run(&s, 200, "lru").hits, 0);
    let c = run(&s, 200, "hd");
    assert_eq!((c.hits, c.misses), (8, 22));
}

#[test]
fn policy_names_round_trip_and_default() {
    for p in CachePolicy::all() {
        assert_eq!(p.name().parse::<CachePolicy>().unwrap(), p);
    }
    assert_eq!(CachePolicy::DEFAULT.name(), "hd");
    assert!("nope".parse::<CachePolicy>().is_err());
    assert!(CachePolicy::Belady.build().is_err());
    let names: std::collections::HashSet<_> = CachePolicy::all().iter().map(|p| p.name()).collect();
    assert_eq!(names.len(), CachePolicy::all().len());
    for p in CachePolicy::all() {
        assert_eq!(p.build().is_err(), p.is_offline(), "{p}");
    }
}

#[test]
fn admission_refusal_is_transient() {
    // gamma 0.5, admission with no credit: a newcomer with no history is refused whenever
    // keeping it would cost a kept entry; it is held while pinned and goes first.
    let p = DecayParams {
        gamma: 0.5,
        prefill_weight: 1.0,
        size_aware: false,
        admission: true,
        rank_slope: 0.0,
        admit_credit: 0.0,
        mru_ties: true,
    };
    let toks: Vec<[&[u32]; 1]> = [0u32, 1, 2, 3, 1].iter().map(|e| [std::slice::from_ref(e)]).collect();
    let refs: Vec<&[&[u32]]> = toks.iter().map(|t| t.as_slice()).collect();
    let s = trace(1, 4, &refs);
    let r = replay_with(&s, 200, Box::new(Decay::new("t", p)), PinScope::Layer);
    // t0, t1: room, 0 and 1 kept. t2: 2 is refused; it still needs room, so the cheaper kept
    // entry goes (0: 1 x 0.5^2 < 1: 1 x 0.5) and 2 is transient. t3: 3 is refused and
    // displaces transient 2, not kept 1. t4: 1 hits.
    let c = r.counters.decode;
    assert_eq!((c.refused, c.evictions, c.hits, c.misses), (2, 2, 1, 4));

    // 0 1 2 2: the transient 2 is hit while still held, and is promoted without evicting.
    let toks: Vec<[&[u32]; 1]> = [0u32, 1, 2, 2].iter().map(|e| [std::slice::from_ref(e)]).collect();
    let refs: Vec<&[&[u32]]> = toks.iter().map(|t| t.as_slice()).collect();
    let s = trace(1, 4, &refs);
    let r = replay_with(&s, 200, Box::new(Decay::new("t", p)), PinScope::Layer);
    let c = r.counters.decode;
    assert_eq!((c.refused, c.evictions, c.hits, c.misses), (1, 1, 1, 3));
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// Whatever the policy and routing: a pinned entry is never evicted, and resident bytes
        /// stay within the budget unless the pinned entries alone exceed it.
        #[test]
        fn pinned_never_evicted_and_budget_held(
            sizes in proptest::collection::vec(1u64..5, 1..4),
            routing in proptest::collection::vec(proptest::collection::vec(0u32..6, 1..4), 1..60),
            budget in 1u64..20,
            pol in 0usize..4096,
            token_scope in any::<bool>(),
        ) {
            let n_expert = 6;
            let geom = Geometry::new(n_expert, sizes.clone()).unwrap();
            let all = CachePolicy::all();
            let policy = all[pol % all.len()];
            let seq: Vec<EntryId> = routing
                .iter()
                .enumerate()
                .flat_map(|(g, es)| {
                    let l = (g % sizes.len()) as u32;
                    es.iter().map(move |&e| l * n_expert + e).collect::<Vec<_>>()
                })
                .collect();
            let mut cache = ExpertCache::new(geom.clone(), budget, policy.build_offline(&seq));
            let mut n = 0u64;
            let mut pinned: Vec<EntryId> = Vec::new();
            let mut held: Vec<EntryId> = Vec::new();
            let mut evicted = Vec::new();
            for (g, es) in routing.iter().enumerate() {
                let layer = (g % sizes.len()) as u32;
                if !token_scope || layer == 0 {
                    cache.unpin_all();
                    pinned.clear();
                    held.clear();
                }
                cache.begin_layer(Position { phase: Phase::Decode, token: (g / sizes.len()) as u64, layer });
                let mut misses = Vec::new();
                for &e in es {
                    let id = layer * n_expert + e;
                    if pinned.contains(&id) {
                        n += 1;
                        continue;
                    }
                    let a = Access { id, rank: 0, weight: 1.0, seq: n };
                    n += 1;
                    if cache.lookup(&a) == Lookup::Miss {
                        misses.push(a);
                    } else {
                        held.push(id);
                    }
                    pinned.push(id);
                }
                for a in misses {
                    evicted.clear();
                    cache.admit(&a, &mut evicted);
                    for k in &evicted {
                        let id = geom.id(*k).unwrap();
                        prop_assert!(!pinned.contains(&id), "{} evicted pinned {k}", policy.name());
                    }
                    held.push(a.id);
                    for &p in &held {
                        // Every pinned entry looked up or admitted so far is resident and pinned.
                        prop_assert!(cache.is_resident(p) && cache.is_pinned(p), "{}: pinned {p} lost", policy.name());
                    }
                    let pinned_bytes: u64 = pinned.iter().filter(|&&p| cache.is_resident(p)).map(|&p| geom.bytes_of(p)).sum();
                    prop_assert!(
                        cache.resident_bytes() <= budget.max(pinned_bytes),
                        "{}: resident {} > budget {budget} with {pinned_bytes} pinned", policy.name(), cache.resident_bytes()
                    );
                }
                let sum: u64 = cache.resident_ids().map(|id| geom.bytes_of(id)).sum();
                prop_assert_eq!(sum, cache.resident_bytes());
            }
        }
    }
}
