//! What a generation measured, in the forms the telemetry contract names (DESIGN.md): one
//! [`Row`] per token (`--progress` JSON, `--csv` rows), and a [`Summary`] at the end (the
//! `generation:`, `compute:`, `moe-stream:`, `moe-cache:`, `moe-overlap:`, `spec:`, `moe-drop:`
//! and `route-ahead:` lines, the `--json` object, the CSV `# summary` line). Built here, once, so that every front end (the CLI, the
//! server, a notebook) reports the same figures under the same names; front ends only choose
//! where to print them.
//!
//! A figure that was not measured is `None` here, `null` in JSON and `unmeasured` in text and
//! CSV, never 0.

use serde_json::{json, Value};

use crate::decoder::{LossyCounters, PrefillPlan};
use crate::rpc::RpcFigures;
use crate::session::{Generation, Telemetry, Token};
use crate::stream::LayerLookahead;

/// Bytes in a MiB, as a float for reports.
pub const MIB: f64 = (1u64 << 20) as f64;

/// The CSV header of the per-token rows.
pub const CSV_HEADER: &str =
    "token,phase,wall_ms,io_ms,stall_ms,manage_ms,compute_ms,read_bytes,spec_bytes,hit_pct,majflt";

/// This process's CPU seconds (user + system) and major page faults so far.
pub fn rusage() -> (f64, u64) {
    let ru = self_rusage();
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(ru.ru_utime) + t(ru.ru_stime), ru.ru_majflt as u64)
}

/// The CPU's model name (`/proc/cpuinfo`), where the system says it.
pub fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split(':').nth(1).unwrap_or("").trim().to_string())
}

/// The kernel's release (`/proc/sys/kernel/osrelease`).
pub fn kernel_release() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_string())
}

/// Peak resident set of this process, bytes.
pub fn max_rss() -> u64 {
    self_rusage().ru_maxrss as u64 * 1024
}

fn self_rusage() -> libc::rusage {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru
}

/// One token's share of the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Row {
    pub wall_s: f64,
    pub io_s: Option<f64>,
    pub manage_s: Option<f64>,
    pub compute_s: Option<f64>,
    pub read_bytes: Option<u64>,
    /// Of which read speculatively (look-ahead, a prefill's read-ahead), and in how many entries.
    pub spec_bytes: Option<u64>,
    pub spec_entries: Option<u64>,
    /// Routed experts found resident, served by a look-ahead read, and read on demand. (The
    /// cache counts a prefetched entry as resident when routed; it is not a cache hit here.)
    pub hits: Option<u64>,
    pub prefetched: Option<u64>,
    pub misses: Option<u64>,
    pub routed_bytes: Option<u64>,
    /// Seconds overlaying cache pages (the generic decoder).
    pub overlay_s: Option<f64>,
    /// Of those, the seconds on the critical path.
    pub overlay_critical_s: Option<f64>,
    pub majflt: u64,
}

impl Row {
    /// The counters that moved from `a` to `b`, in `wall_s` seconds with `majflt` faults.
    pub fn between(a: &Telemetry, b: &Telemetry, wall_s: f64, majflt: u64) -> Self {
        let (pa, pb) = (a.provider.unwrap_or_default(), b.provider);
        Row {
            wall_s,
            io_s: pb.map(|p| p.io_s - pa.io_s),
            manage_s: pb.map(|p| p.manage_s - pa.manage_s),
            compute_s: b.compute_s.map(|c| c - a.compute_s.unwrap_or(0.0)),
            read_bytes: pb.map(|p| p.bytes_read - pa.bytes_read),
            spec_bytes: pb.map(|p| p.spec_bytes - pa.spec_bytes),
            spec_entries: pb.map(|p| p.spec_entries - pa.spec_entries),
            hits: pb.map(|p| (p.hits - p.spec_useful) - (pa.hits - pa.spec_useful)),
            prefetched: pb.map(|p| p.spec_useful - pa.spec_useful),
            misses: pb.map(|p| p.misses - pa.misses),
            routed_bytes: pb.map(|p| p.routed_bytes - pa.routed_bytes),
            overlay_s: pb.and_then(|p| p.overlay_s).map(|o| o - pa.overlay_s.unwrap_or(0.0)),
            overlay_critical_s: pb.and_then(|p| p.overlay_critical_s).map(|o| o - pa.overlay_critical_s.unwrap_or(0.0)),
            majflt,
        }
    }

    /// Hits of the routed experts (resident when routed), %, when any were routed.
    pub fn hit_pct(&self) -> Option<f64> {
        self.share(self.hits?)
    }

    /// Routed experts served by a look-ahead read, %, when any were routed.
    pub fn prefetch_pct(&self) -> Option<f64> {
        self.share(self.prefetched?)
    }

    fn share(&self, x: u64) -> Option<f64> {
        let n = self.hits? + self.prefetched? + self.misses?;
        (n > 0).then(|| x as f64 / n as f64 * 100.0)
    }

    /// The `--progress` line of token `index`.
    pub fn json(&self, index: usize, phase: &str) -> Value {
        let ms = |x: Option<f64>| x.map(|v| v * 1e3);
        json!({
            "token": index, "phase": phase, "wall_ms": self.wall_s * 1e3, "io_ms": ms(self.io_s),
            "stall_ms": ms(self.io_s), "manage_ms": ms(self.manage_s), "compute_ms": ms(self.compute_s),
            "read_bytes": self.read_bytes, "spec_bytes": self.spec_bytes, "hit_pct": self.hit_pct(),
            "prefetch_pct": self.prefetch_pct(), "majflt": self.majflt,
        })
    }

    /// The CSV row of token `index` (columns of [`CSV_HEADER`]).
    pub fn csv(&self, index: usize, phase: &str) -> String {
        let f = |x: Option<f64>| x.map_or("unmeasured".to_string(), |v| format!("{:.3}", v * 1e3));
        format!(
            "{index},{phase},{:.3},{},{},{},{},{},{},{},{},{}",
            self.wall_s * 1e3,
            f(self.io_s),
            f(self.io_s),
            f(self.manage_s),
            f(self.compute_s),
            self.read_bytes.map_or("unmeasured".into(), |b| b.to_string()),
            self.spec_bytes.map_or("unmeasured".into(), |b| b.to_string()),
            self.hit_pct().map_or("unmeasured".into(), |h| format!("{h:.1}")),
            self.prefetch_pct().map_or("unmeasured".into(), |h| format!("{h:.1}")),
            self.majflt
        )
    }
}

/// Sums over the decode steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub io_s: f64,
    pub manage_s: f64,
    pub compute_s: f64,
    pub read_bytes: u64,
    pub hits: u64,
    pub prefetched: u64,
    pub misses: u64,
    pub routed_bytes: u64,
    /// None unless some row measured it.
    pub overlay_s: Option<f64>,
    pub overlay_critical_s: Option<f64>,
}

impl Totals {
    /// Add one token's row.
    pub fn add(&mut self, r: &Row) {
        self.io_s += r.io_s.unwrap_or(0.0);
        self.manage_s += r.manage_s.unwrap_or(0.0);
        self.compute_s += r.compute_s.unwrap_or(0.0);
        self.read_bytes += r.read_bytes.unwrap_or(0);
        self.hits += r.hits.unwrap_or(0);
        self.prefetched += r.prefetched.unwrap_or(0);
        self.misses += r.misses.unwrap_or(0);
        self.routed_bytes += r.routed_bytes.unwrap_or(0);
        if let Some(o) = r.overlay_s {
            *self.overlay_s.get_or_insert(0.0) += o;
        }
        if let Some(o) = r.overlay_critical_s {
            *self.overlay_critical_s.get_or_insert(0.0) += o;
        }
    }
}

/// Measures a generation token by token: feed it every [`Token`], in order, and it returns each
/// token's [`Row`] and keeps the decode steps' sums, CPU time and faults.
#[derive(Clone, Debug)]
pub struct Meter {
    prev: Telemetry,
    prev_flt: u64,
    cpu_at: f64,
    /// CPU seconds and major faults of the decode steps (tokens after the first).
    pub cpu_decode: f64,
    pub flt_decode: u64,
    /// Sums over the decode steps.
    pub decode: Totals,
    /// The prefill's row (the first token's), once it went by.
    pub prefill: Option<Row>,
}

impl Meter {
    /// A meter starting from the engine's counters `now`.
    pub fn start(now: Telemetry) -> Self {
        let (cpu, flt) = rusage();
        Self {
            prev: now,
            prev_flt: flt,
            cpu_at: cpu,
            cpu_decode: 0.0,
            flt_decode: 0,
            decode: Totals::default(),
            prefill: None,
        }
    }

    /// The next token: its row (its index 0 is the prefill's).
    pub fn token(&mut self, t: &Token) -> Row {
        let (cpu, flt) = rusage();
        let row = Row::between(&self.prev, &t.telemetry, t.step_s, flt - self.prev_flt);
        if t.index == 0 {
            self.prefill = Some(row);
        } else {
            self.decode.add(&row);
            self.cpu_decode += cpu - self.cpu_at;
            self.flt_decode += flt - self.prev_flt;
        }
        self.cpu_at = cpu;
        self.prev_flt = flt;
        self.prev = t.telemetry;
        row
    }
}

/// What a streaming engine reports besides counters.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamFigures {
    /// The cache's true size (the pool), MiB.
    pub budget_mib: f64,
    /// One token's worst-case expert cycle at the top-k applied, MiB.
    pub cycle_mib: f64,
    /// Overlap (`--overlap`) on: the look-ahead figures follow.
    pub overlap: bool,
    /// Why look-ahead switched itself off, if it did.
    pub lookahead_off: Option<String>,
    /// Per MoE layer look-ahead figures.
    pub lookahead_layers: Vec<LayerLookahead>,
    /// The generic decoder: seconds of llama.cpp's load and the bytes it read from storage.
    pub llama_load: Option<(f64, Option<u64>)>,
    /// How the last prompt was cut into micro-batches against the pool.
    pub prefill_plan: Option<PrefillPlan>,
}

/// Everything the end of a generation reports.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The lines after the text, in order (`prefill:`, `generation:`, …), without `load:`.
    pub lines: Vec<String>,
    /// The `--json` object (keys sorted).
    pub json: serde_json::Map<String, Value>,
}

/// The lossy knobs of decode and what they did in a generation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossyFigures {
    /// `--drop-cold-experts F`, `--route-ahead L`, when set.
    pub drop_cold: Option<f32>,
    pub route_ahead: Option<u32>,
    /// Their counters over the generation.
    pub counters: LossyCounters,
}

/// The inputs of a [`Summary`].
#[derive(Clone, Copy, Debug)]
pub struct SummaryInputs<'a> {
    pub generation: &'a Generation,
    pub meter: &'a Meter,
    /// The engine's counters at the end.
    pub end: &'a Telemetry,
    pub threads: usize,
    /// Bytes of the graph buffers, for our decoder.
    pub graph_bytes: Option<usize>,
    /// Streaming only.
    pub stream: Option<&'a StreamFigures>,
    /// Seconds the engine took to open (the `load:` line).
    pub load_s: Option<f64>,
    /// When a lossy knob of decode is set.
    pub lossy: Option<LossyFigures>,
}

/// Every key of the `--json` summary, in every mode: what was not measured is `null`.
pub const SUMMARY_KEYS: &[&str] = &[
    "tokens",
    "prompt_tokens",
    "reused_tokens",
    "prefill_tok/s",
    "prefill_s",
    "prefill_read_MiB",
    "prefill_read_MiB/s",
    "prefill_stall_s",
    "prefill_compute_s",
    "prefill_manage_s",
    "prefill_spec_MiB",
    "prefill_spec_useful_pct",
    "prefill_ubatch",
    "prefill_passes",
    "s/tok",
    "tok/s",
    "stop_reason",
    "majflt/tok",
    "max_rss_MiB",
    "read_MiB",
    "cache_hit_pct",
    "prefetch_served_pct",
    "token_demand_MiB",
    "layer_demand_MiB",
    "cache_budget_MiB",
    "cache_cycle_mb",
    "stall_s/tok",
    "read_MiB/s",
    "evictions",
    "lookahead_accuracy_by_layer",
    "lookahead_layers_off",
    "lookahead_accuracy_pct",
    "spec_MiB",
    "spec_useful_pct",
    "overlay_ms/tok",
    "overlay_critical_ms/tok",
    "load_s",
    "load_llama_s",
    "load_llama_read_GiB",
    "rpc_hosts",
    "spec_verify_passes",
    "spec_plain_steps",
    "spec_no_draft",
    "spec_skipped",
    "spec_drafted",
    "spec_accepted",
    "spec_acceptance_pct",
    "spec_tokens_per_pass",
    "spec_verify_MiB_per_token",
    "spec_plain_MiB_per_step",
    "spec_shadow_acceptance_pct",
    "drop_routings",
    "drop_considered",
    "drop_pct",
    "drop_reads_avoided",
    "drop_reads_avoided_MiB",
    "drop_weight_discarded_pct",
    "route_ahead_routings",
    "route_ahead_mismatch_pct",
];

impl Summary {
    /// The summary of a generation.
    pub fn new(i: SummaryInputs<'_>) -> Self {
        let gen = i.generation;
        let (meter, decode) = (i.meter, &i.meter.decode);
        let threads = i.threads;
        let mut lines = Vec::new();
        let prompt = gen.prompt_tokens;
        let mut summary = serde_json::Map::new();
        for k in SUMMARY_KEYS {
            summary.insert((*k).into(), Value::Null);
        }
        let mut put = |k: &str, v: Value| {
            debug_assert!(SUMMARY_KEYS.contains(&k), "{k} is not a summary key");
            summary.insert(k.into(), v);
        };
        if let Some(l) = i.load_s {
            put("load_s", json!(l));
        }
        lines.push(format!(
            "prefill: {} tokens in {:.3} s, {:.1} tok/s{}",
            prompt,
            gen.prefill_s,
            prompt as f64 / gen.prefill_s.max(1e-9),
            match gen.reused_tokens {
                0 => String::new(),
                r => format!(" ({r} more reused from the context, not evaluated)"),
            }
        ));
        put("prefill_s", json!(gen.prefill_s));
        // The prefill's reads and its split, where the engine measures them (our decoder; a
        // streamed one reads): the bound is max(read ÷ the disk's rate, compute).
        if let Some(r) = meter.prefill.filter(|_| prompt > 0) {
            put("prefill_compute_s", r.compute_s.map_or(Value::Null, |c| json!(c)));
            if let (Some(read), Some(io), Some(manage), Some(compute)) = (r.read_bytes, r.io_s, r.manage_s, r.compute_s)
            {
                let read_mib = read as f64 / MIB;
                put("prefill_read_MiB", json!(read_mib));
                put("prefill_read_MiB/s", json!(read_mib / gen.prefill_s.max(1e-9)));
                put("prefill_stall_s", json!(io));
                put("prefill_manage_s", json!(manage));
                // The read-ahead's share of the reads, and how much of it the routing then used.
                let ahead = match (r.spec_bytes, r.spec_entries, r.prefetched) {
                    (Some(b), Some(n), Some(used)) if n > 0 => {
                        let pct = 100.0 * used as f64 / n as f64;
                        put("prefill_spec_MiB", json!(b as f64 / MIB));
                        put("prefill_spec_useful_pct", json!(pct));
                        format!("; read ahead {:.1} MiB ({n} entries, {pct:.1} % then routed)", b as f64 / MIB)
                    }
                    _ => String::new(),
                };
                let plan = match i.stream.and_then(|s| s.prefill_plan) {
                    Some(p) => {
                        put("prefill_ubatch", json!(p.width));
                        put("prefill_passes", json!(p.passes));
                        format!(
                            "; micro-batch {} tokens × {} pass{} ({}), a layer's union up to {} experts (≈ {:.0} expected) {} (a pool of {} slots)",
                            p.width,
                            p.passes,
                            if p.passes == 1 { "" } else { "es" },
                            if p.auto { "auto" } else { "--ubatch" },
                            p.union_max,
                            p.union_est,
                            p.fit(),
                            p.capacity
                        )
                    }
                    None => String::new(),
                };
                lines.push(format!(
                    "moe-prefill: read {read_mib:.1} MiB in the prefill ({:.0} MiB/s over its {:.3} s); compute {compute:.3} s, \
                     cache management {manage:.3} s, I/O wait (stall) {io:.3} s, other {:.3} s{ahead}{plan}",
                    read_mib / gen.prefill_s.max(1e-9),
                    gen.prefill_s,
                    (gen.prefill_s - compute - manage - io).max(0.0),
                ));
            }
        }
        let steps = gen.step_s.len();
        let decode_s: f64 = gen.step_s.iter().sum();
        put("tokens", json!(gen.tokens.len()));
        put("prompt_tokens", json!(prompt));
        put("reused_tokens", json!(gen.reused_tokens));
        put("prefill_tok/s", json!(prompt as f64 / gen.prefill_s.max(1e-9)));
        put("stop_reason", json!(gen.stop.name()));
        let per = |x: f64| if steps > 0 { json!(x / steps as f64) } else { Value::Null };
        put("s/tok", per(decode_s));
        put("tok/s", if steps > 0 { json!(steps as f64 / decode_s.max(1e-9)) } else { Value::Null });
        if steps > 0 {
            lines.push(format!(
                "generation: {} tokens, {:.4} s/token, {:.2} tok/s",
                gen.tokens.len(),
                decode_s / steps as f64,
                steps as f64 / decode_s.max(1e-9)
            ));
            lines.push(format!(
                "compute: CPU occupancy {:.0} % of {threads} threads, major faults/token {:.1}",
                100.0 * meter.cpu_decode / (decode_s.max(1e-9) * threads as f64),
                meter.flt_decode as f64 / steps as f64
            ));
        } else {
            lines.push(format!("generation: {} tokens, s/token unmeasured (fewer than two tokens)", gen.tokens.len()));
        }
        lines.push(format!("stop: {}", gen.stop.describe()));
        put("majflt/tok", per(meter.flt_decode as f64));
        let rss = max_rss() as f64 / MIB;
        put("max_rss_MiB", json!(rss));
        lines.push(format!(
            "memory: max RSS {rss:.0} MiB{}",
            i.graph_bytes.map_or(String::new(), |g| format!(" (graph buffers {:.0} MiB)", g as f64 / MIB))
        ));
        let mib = |b: u64| b as f64 / MIB;
        if let Some(si) = i.stream {
            put("cache_budget_MiB", json!(si.budget_mib));
            put("cache_cycle_mb", json!(si.cycle_mib));
            if let Some((s, read)) = si.llama_load {
                put("load_llama_s", json!(s));
                put("load_llama_read_GiB", read.map_or(Value::Null, |b| json!(b as f64 / (1u64 << 30) as f64)));
            }
        }
        if let (Some(p), Some(si)) = (i.end.provider, i.stream) {
            let read = mib(decode.read_bytes);
            let routed = (decode.hits + decode.prefetched + decode.misses).max(1) as f64;
            let (hits, prefetched) = (decode.hits as f64 / routed * 100.0, decode.prefetched as f64 / routed * 100.0);
            let measured = steps > 0;
            if measured {
                lines.push(format!(
                    "moe-stream: read {read:.1} MiB in decode ({:.2} MiB/token); decode time: compute {:.3} s, cache \
                     management {:.3} s{}, I/O wait (stall) {:.3} s, other {:.3} s; {} while reading",
                    read / steps as f64,
                    decode.compute_s,
                    decode.manage_s,
                    decode.overlay_s.map_or(String::new(), |o| format!(
                        " (of which overlaying cache pages onto llama.cpp's mapping {:.3} ms/token, {} on the \
                         critical path)",
                        o * 1e3 / steps as f64,
                        decode
                            .overlay_critical_s
                            .map_or("unmeasured".to_string(), |c| format!("{:.3} ms/token", c * 1e3 / steps as f64))
                    )),
                    decode.io_s,
                    (decode_s - decode.compute_s - decode.manage_s - decode.io_s).max(0.0),
                    if decode.io_s > 0.0 {
                        format!("{:.0} MiB/s", read / decode.io_s)
                    } else {
                        "unmeasured (no reads)".into()
                    },
                ));
                let all = (p.hits + p.misses).max(1) as f64;
                lines.push(format!(
                    "moe-cache: hit {hits:.1} % in decode (resident when routed), {prefetched:.1} % served by \
                     look-ahead reads, {:.1} % read on demand ({:.1} % hit overall); resident {:.0} MiB of {:.0} MiB; \
                     evictions {}",
                    decode.misses as f64 / routed * 100.0,
                    (p.hits - p.spec_useful) as f64 / all * 100.0,
                    mib(p.resident_bytes),
                    si.budget_mib,
                    p.evictions
                ));
                put("cache_hit_pct", json!(hits));
                put("prefetch_served_pct", json!(prefetched));
                put("layer_demand_MiB", json!(mib(p.max_layer_routed_bytes)));
            }
            put("read_MiB", json!(read));
            put("token_demand_MiB", per(mib(decode.routed_bytes)));
            put("stall_s/tok", per(decode.io_s));
            put("read_MiB/s", if decode.io_s > 0.0 { json!(read / decode.io_s) } else { Value::Null });
            put("evictions", json!(p.evictions));
            if let Some(o) = decode.overlay_s {
                put("overlay_ms/tok", per(o * 1e3));
                put("overlay_critical_ms/tok", decode.overlay_critical_s.map_or(Value::Null, |c| per(c * 1e3)));
            }
            if si.overlap {
                let acc = (p.real_with_prediction > 0)
                    .then(|| 100.0 * p.predicted_real as f64 / p.real_with_prediction as f64);
                let useful = (p.spec_entries > 0).then(|| 100.0 * p.spec_useful as f64 / p.spec_entries as f64);
                let by_layer: Vec<Option<f64>> = si.lookahead_layers.iter().map(|l| l.accuracy_pct()).collect();
                let mut sorted: Vec<f64> = by_layer.iter().flatten().copied().collect();
                sorted.sort_by(f64::total_cmp);
                let spread = match (sorted.first(), sorted.get(sorted.len() / 2), sorted.last()) {
                    (Some(lo), Some(mid), Some(hi)) => {
                        format!(" (per layer min/median/max {lo:.0}/{mid:.0}/{hi:.0} %)")
                    }
                    _ => String::new(),
                };
                let n_off = si.lookahead_layers.iter().filter(|l| l.off).count();
                lines.push(format!(
                    "moe-overlap: stall {:.4} s/token; look-ahead accuracy {}{spread}, speculative {:.1} MiB ({} \
                     entries, {} useful); reads off in {n_off} of {} layers{}",
                    if steps > 0 { decode.io_s / steps as f64 } else { 0.0 },
                    acc.map_or("unmeasured".into(), |a| format!("{a:.1} %")),
                    mib(p.spec_bytes),
                    p.spec_entries,
                    useful.map_or("unmeasured".into(), |u| format!("{u:.1} %")),
                    si.lookahead_layers.len(),
                    si.lookahead_off.as_ref().map_or(String::new(), |why| format!("; look-ahead switched off: {why}")),
                ));
                put("lookahead_accuracy_by_layer", json!(by_layer));
                put("lookahead_layers_off", json!(n_off));
                put("lookahead_accuracy_pct", acc.map_or(Value::Null, |a| json!(a)));
                put("spec_MiB", json!(mib(p.spec_bytes)));
                put("spec_useful_pct", useful.map_or(Value::Null, |u| json!(u)));
            }
        }
        if let Some(sp) = gen.spec {
            let opt = |x: Option<f64>| x.map_or(Value::Null, |v| json!(v));
            let f1 = |x: Option<f64>, unit: &str| x.map_or("unmeasured".into(), |v| format!("{v:.2}{unit}"));
            let shadow = (sp.shadow_drafted > 0).then(|| 100.0 * sp.shadow_accepted as f64 / sp.shadow_drafted as f64);
            lines.push(format!(
                "spec: {} verify passes, {} plain steps ({} with nothing to draft, {} skipped by the rule); drafted {}, \
                 accepted {} ({}), {} tokens per verify pass; expert reads {} per token of the verify passes vs {} per \
                 plain step; skipped drafts against the text: {}",
                sp.verify_passes,
                sp.plain_steps,
                sp.no_draft,
                sp.skipped,
                sp.drafted,
                sp.accepted,
                f1(sp.acceptance_pct(), " %"),
                f1(sp.tokens_per_pass(), ""),
                f1(sp.verify_mib_per_token(), " MiB"),
                f1(sp.plain_mib_per_step(), " MiB"),
                shadow.map_or("none".into(), |p| format!(
                    "{p:.1} % of {} positions agreed",
                    sp.shadow_drafted
                )),
            ));
            put("spec_verify_passes", json!(sp.verify_passes));
            put("spec_plain_steps", json!(sp.plain_steps));
            put("spec_no_draft", json!(sp.no_draft));
            put("spec_skipped", json!(sp.skipped));
            put("spec_drafted", json!(sp.drafted));
            put("spec_accepted", json!(sp.accepted));
            put("spec_acceptance_pct", opt(sp.acceptance_pct()));
            put("spec_tokens_per_pass", opt(sp.tokens_per_pass()));
            put("spec_verify_MiB_per_token", opt(sp.verify_mib_per_token()));
            put("spec_plain_MiB_per_step", opt(sp.plain_mib_per_step()));
            put("spec_shadow_acceptance_pct", opt(shadow));
        }
        if let Some(lf) = i.lossy {
            let c = lf.counters;
            if let Some(f) = lf.drop_cold {
                let pct = (c.drop_considered > 0).then(|| 100.0 * c.dropped as f64 / c.drop_considered as f64);
                let wpct = (c.drop_weight_all > 0.0).then(|| 100.0 * c.drop_weight_dropped / c.drop_weight_all);
                lines.push(format!(
                    "moe-drop: --drop-cold-experts {f} (lossy): dropped {} of {} routings in decode ({}), {} reads avoided \
                     ({:.1} MiB{}), router weight discarded {}",
                    c.dropped,
                    c.drop_considered,
                    pct.map_or("unmeasured".into(), |p| format!("{p:.1} %")),
                    c.drop_avoided,
                    mib(c.drop_avoided_bytes),
                    if steps > 0 { format!(", {:.2} MiB/token", mib(c.drop_avoided_bytes) / steps as f64) } else { String::new() },
                    wpct.map_or("unmeasured".into(), |p| format!("{p:.2} %")),
                ));
                put("drop_routings", json!(c.dropped));
                put("drop_considered", json!(c.drop_considered));
                put("drop_pct", pct.map_or(Value::Null, |p| json!(p)));
                put("drop_reads_avoided", json!(c.drop_avoided));
                put("drop_reads_avoided_MiB", json!(mib(c.drop_avoided_bytes)));
                put("drop_weight_discarded_pct", wpct.map_or(Value::Null, |p| json!(p)));
            }
            if let Some(l) = lf.route_ahead {
                let pct = (c.ahead_routings > 0).then(|| 100.0 * c.ahead_mismatched as f64 / c.ahead_routings as f64);
                lines.push(format!(
                    "route-ahead: --route-ahead {l} (lossy, experimental): {} of {} routings chosen {l} layer{} ahead \
                     ({}) are not what the layer's own router picks",
                    c.ahead_mismatched,
                    c.ahead_routings,
                    if l == 1 { "" } else { "s" },
                    pct.map_or("unmeasured".into(), |p| format!("{p:.1} %")),
                ));
                put("route_ahead_routings", json!(c.ahead_routings));
                put("route_ahead_mismatch_pct", pct.map_or(Value::Null, |p| json!(p)));
            }
        }
        Self { lines, json: summary }
    }

    /// The CSV file's last line: `# summary key=value …` (`unmeasured` for null).
    pub fn csv_line(&self) -> String {
        let fields: Vec<String> = self
            .json
            .iter()
            .map(|(k, v)| format!("{k}={}", if v.is_null() { "unmeasured".into() } else { v.to_string() }))
            .collect();
        format!("# summary {}", fields.join(" "))
    }

    /// The `--json` object as one line.
    pub fn json_line(&self) -> String {
        Value::Object(self.json.clone()).to_string()
    }
}

impl Summary {
    /// The expert hosts' part (`--rpc`), from the coordinator's figures at the start and the end
    /// of the generation: one `rpc:` line for the placement and one per host, per decode token
    /// (what ggml-rpc sent and received, its round trips, the coordinator's wait, the tokens the
    /// host bounded, or when and why it was lost), and the `rpc_hosts` key.
    pub fn add_rpc(&mut self, start: &RpcFigures, end: &RpcFigures) {
        let steps = end.decode_steps.saturating_sub(start.decode_steps);
        let per = |x: f64| if steps > 0 { Some(x / steps as f64) } else { None };
        self.lines.push(format!(
            "rpc: placement {}{} over this host and {} more ({} up); this host holds {} experts over all layers",
            end.placement,
            end.trace
                .as_ref()
                .map_or(" (no trace: every expert counts the same)".into(), |t| format!(" (counts from {t})")),
            end.hosts.len(),
            end.hosts_up(),
            end.local_experts,
        ));
        let mut rows = Vec::new();
        let num = |x: Option<f64>, prec: usize| x.map_or("unmeasured".to_string(), |v| format!("{v:.prec$}"));
        for (i, (a, b)) in start.hosts.iter().zip(&end.hosts).enumerate() {
            let d = b.decode.since(&a.decode);
            let (sent, received) = (per(d.sent_bytes as f64 / MIB), per(d.received_bytes as f64 / MIB));
            let (trips, wait) = (per(d.round_trips as f64), per(d.wait_s * 1e3));
            let state = match &b.lost {
                Some(l) => format!(
                    "; LOST {}{}: {}",
                    if l.phase == "start" { "at start".to_string() } else { format!("in {} step {}", l.phase, l.step) },
                    l.layer.map_or(String::new(), |x| format!(", layer {x}")),
                    l.why
                ),
                None => String::new(),
            };
            self.lines.push(format!(
                "rpc: host {} {}: per decode token {} MiB sent, {} MiB received, {} round trips, waited {} ms; bounded \
                 {} of {steps} tokens; {} experts in its RAM ({:.1} MiB uploaded){state}",
                i + 1,
                b.endpoint,
                num(sent, 4),
                num(received, 4),
                num(trips, 1),
                num(wait, 3),
                d.bounded,
                b.experts_held,
                b.uploaded_bytes as f64 / MIB,
            ));
            let lost =
                b.lost.as_ref().map(|l| json!({"phase": l.phase, "step": l.step, "layer": l.layer, "why": l.why}));
            rows.push(json!({
                "host": b.endpoint,
                "up": b.lost.is_none(),
                "experts_held": b.experts_held,
                "uploaded_MiB": b.uploaded_bytes as f64 / MIB,
                "sent_MiB/tok": sent,
                "received_MiB/tok": received,
                "round_trips/tok": trips,
                "wait_ms/tok": wait,
                "bounded_tokens": d.bounded,
                "lost": lost,
            }));
        }
        self.json.insert("rpc_hosts".into(), Value::Array(rows));
    }
}

/// The expert hosts' part of one token's `--progress` line: per host what the step sent,
/// received and waited, and the host that bounded it (`null`: none, this host's own experts
/// took longest).
pub fn rpc_step_json(f: &RpcFigures) -> Value {
    let s = &f.step;
    json!({
        "bound_host": s.bound().map(|i| f.hosts[i].endpoint.clone()),
        "sent_bytes": s.hosts.iter().map(|c| c.sent_bytes).collect::<Vec<_>>(),
        "received_bytes": s.hosts.iter().map(|c| c.received_bytes).collect::<Vec<_>>(),
        "round_trips": s.hosts.iter().map(|c| c.round_trips).collect::<Vec<_>>(),
        "wait_ms": s.hosts.iter().map(|c| c.wait_s * 1e3).collect::<Vec<_>>(),
        "hosts_up": f.hosts_up(),
    })
}
