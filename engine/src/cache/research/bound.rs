//! `opt-bound`: a proven upper bound on the decode hits of *any* policy, online or offline,
//! with or without bypass, at a byte budget (replay only). `belady` (furthest-next-use, every
//! miss kept) is a feasible schedule, so the offline optimum lies between the two lines.
//!
//! The exact optimum with variable entry sizes is NP-hard; the bound relaxes the problem until
//! it is solved exactly by a known-optimal algorithm:
//!
//! 1. **Sizes.** Every entry is charged the smallest entry size `s_min`, so the cache holds
//!    `C = ⌊budget / s_min⌋` entries. Any real resident set (bytes ≤ budget) has at most `C`
//!    entries, so every real schedule is feasible here. (Premise: the real cache holds its
//!    budget, i.e. it never overflows because its pinned entries alone exceed the budget;
//!    replays count overflows, and there are none on the traces from 500 MiB up.)
//! 2. **Groups and pins.** Accesses are taken one at a time in trace order, and a miss may be
//!    bypassed (used without being kept). The real cache must hold a layer's entries together
//!    while pinned; dropping that constraint only widens the feasible set.
//! 3. **Prefill.** Prefill hits are not counted, so a prefill access is a free fetch: keeping
//!    an entry until its next access is worth a hit only if that access is a decode one. Split
//!    each entry's accesses at its prefill accesses into separate "virtual" entries: a prefill
//!    access is then always a first access (never a hit), a virtual entry's hits are exactly
//!    the real entry's decode hits, and maximising all hits of the virtual sequence maximises
//!    decode hits of the real one.
//!
//! The relaxed problem (uniform sizes, sequential requests, bypass allowed, maximise hits) is
//! solved exactly by Bélády's MIN with bypass: on a request for `x`, keep the `C` entries,
//! `x` among the candidates, whose next requests come soonest (Bélády 1966; Mattson et al.
//! 1970). So its hit count is ≥ that of every schedule of the real cache. The unit test
//! `bound_is_the_exact_optimum_of_the_relaxation` checks it against exhaustive search.
//!
//! What it costs against the real problem: `C` counts every entry at the smallest size (the
//! traces' entries differ by 15-21 %, so `C` is up to that much larger than the real cache
//! holds of the larger entries), and bypass of a layer's own misses.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::cache::replay::{AccessStream, ReplayReport};
use crate::cache::{Counters, Phase};

/// The policy name replays and plots show.
pub const NAME: &str = "opt-bound";

/// Replay the relaxation of `stream` at `budget` bytes (see the module docs). The counters'
/// decode hits are the bound; misses, bytes read and evictions are those of the relaxed
/// schedule (bytes at the entries' real sizes), not of a schedule the real cache could run.
/// Prefill counters count accesses as misses (prefill fetches are free in the relaxation).
pub fn replay(stream: &AccessStream, budget: u64) -> ReplayReport {
    let start = Instant::now();
    let n = stream.sequence.len();
    let mut phase = vec![Phase::Decode; n];
    for g in &stream.groups {
        for a in &g.accesses {
            phase[a.seq as usize] = g.pos.phase;
        }
    }
    let s_min = (0..stream.geom.n_layer()).map(|l| stream.geom.entry_bytes(l)).min().unwrap_or(1).max(1);
    let capacity = (budget / s_min) as usize;

    // `worth[i]`: the index of the access after `i` to the same entry when that access is a
    // decode one (keeping the entry until then is a hit); `None` when there is no later access
    // or it is a prefill one (a free fetch: keeping the entry is worth nothing).
    let mut worth = vec![None; n];
    let mut later: Vec<Option<usize>> = vec![None; stream.geom.n_entries()];
    for i in (0..n).rev() {
        let id = stream.sequence[i] as usize;
        worth[i] = later[id].filter(|&j| phase[j] == Phase::Decode);
        later[id] = Some(i);
    }

    let mut counters = Counters::default();
    // Resident entries keyed by the index of their next (decode) access.
    let mut resident: BTreeSet<(usize, u32)> = BTreeSet::new();
    let mut held: Vec<Option<usize>> = vec![None; stream.geom.n_entries()];
    for i in 0..n {
        let id = stream.sequence[i];
        let c = if phase[i] == Phase::Decode { &mut counters.decode } else { &mut counters.prefill };
        match held[id as usize].take() {
            Some(key) => {
                debug_assert_eq!(key, i, "an entry is held only for its next access");
                resident.remove(&(key, id));
                c.hits += 1;
            }
            None => {
                c.misses += 1;
                c.bytes_read += stream.geom.bytes_of(id);
            }
        }
        let Some(next) = worth[i] else { continue };
        if resident.len() < capacity {
            resident.insert((next, id));
            held[id as usize] = Some(next);
            continue;
        }
        // Full: `id` displaces the entry needed furthest ahead, if that is later than `next`.
        match resident.last().copied() {
            Some((far, victim)) if far > next => {
                resident.pop_last();
                held[victim as usize] = None;
                resident.insert((next, id));
                held[id as usize] = Some(next);
                c.evictions += 1;
            }
            _ => c.refused += 1,
        }
    }
    ReplayReport {
        policy: NAME,
        budget,
        counters,
        decode_tokens: stream.decode_tokens,
        elapsed_ns: start.elapsed().as_nanos() as u64,
        accesses: n as u64,
    }
}
