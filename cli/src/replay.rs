//! `bmoe replay TRACE`: replay a recorded routing trace (`route_trace v1`) through the
//! engine's expert cache under each policy and budget, and report hit rates, bytes read per
//! token and the cache's CPU time per access. Runs the engine's own cache and policy types.
//! With `--hosts`, simulate expert-parallel serving of the same routing over N hosts instead
//! (`cache::research::scaleout`, docs/scale-out.md).

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::replay::{AccessStream, PinScope, ReplayReport};
use bmoe::engine::cache::research::scaleout::{self, Cluster, Placement, ScaleReport, Setup};
use bmoe::engine::cache::research::{self, ReplayPolicy};
use bmoe::engine::cache::trace::RouteTrace;
use bmoe::engine::cache::CachePolicy;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A `route_trace v1` file.
    trace: PathBuf,
    /// Cache budgets in MiB, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [500u64, 1000, 1500, 2000, 2500, 3000, 3500, 4000])]
    budget_mb: Vec<u64>,
    /// Policies, comma-separated, or `all` (the default). With `--hosts`: the one shipped
    /// policy of every host's cache (default `hd`).
    #[arg(long)]
    policy: Option<String>,
    /// Replay only the ranks < K of each layer's top-k.
    #[arg(long)]
    k: Option<u32>,
    /// Hold pins to the end of the token instead of the end of the layer.
    #[arg(long)]
    pin_token: bool,
    /// One JSON object per row on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Write an SVG plot of decode hit % against budget per policy (with `--hosts`: the
    /// token-time bound against hosts per placement and link).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Simulate expert-parallel serving over N hosts (comma-separated: one sweep), each with an
    /// expert cache of each `--budget-mb`, instead of the policy table.
    #[arg(long, value_delimiter = ',')]
    hosts: Vec<u32>,
    /// The coordinator's link, Gbit/s (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [10.0])]
    link_gbps: Vec<f64>,
    /// Round-trip time coordinator ↔ host, µs.
    #[arg(long, default_value_t = 100.0)]
    rtt_us: f64,
    /// Who holds which expert: round-robin, popularity, replicate-hot-K, tensor (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = ["round-robin", "popularity", "replicate-hot-4", "tensor"].map(String::from)
    )]
    placement: Vec<String>,
    /// Width of the hidden state (not in the trace; Qwen3-30B-A3B 2048, Gemma-4-26B-A4B 2816).
    #[arg(long)]
    n_embd: Option<u32>,
    /// Bytes per activation element on the wire (F32 in ggml's graphs).
    #[arg(long, default_value_t = 4)]
    act_bytes: u32,
    /// A host's flash read rate, MiB/s (measure it with fio at the engine's request size).
    #[arg(long)]
    disk_mibps: Option<f64>,
    /// Expert compute per MiB of expert weights, ms (docs/scale-out.md says how it was measured).
    #[arg(long)]
    expert_ms_per_mib: Option<f64>,
    /// Start every cache empty (the policy replay's rule) instead of loaded with its host's
    /// most used entries.
    #[arg(long)]
    cold: bool,
}

/// More hosts than this is refused before the trace is read: the sweep replays every host's
/// cache, and a cluster past it is no plan docs/scale-out.md makes.
const MAX_HOSTS: u32 = 256;

pub fn run(args: Args) -> anyhow::Result<()> {
    // The flags first: nothing is read for a sweep that cannot run.
    if let Some(&h) = args.hosts.iter().find(|&&h| !(1..=MAX_HOSTS).contains(&h)) {
        bail!("--hosts {h}: a cluster has 1 to {MAX_HOSTS} hosts (the coordinator is host 0)");
    }
    let trace = RouteTrace::read(&args.trace)?;
    if let Some(&h) = args.hosts.iter().find(|&&h| h > trace.header.n_expert) {
        bail!(
            "--hosts {h}: the trace's model has {} experts per layer: placing whole experts would leave {} of the \
             {h} hosts with none of a layer (at most --hosts {})",
            trace.header.n_expert,
            h - trace.header.n_expert,
            trace.header.n_expert
        );
    }
    let stream = AccessStream::from_trace(&trace, args.k).context("building the access stream")?;
    if args.budget_mb.is_empty() {
        bail!("--budget-mb: no budgets");
    }
    if !args.hosts.is_empty() {
        return run_hosts(&args, &trace, &stream);
    }
    let policies: Vec<ReplayPolicy> = match args.policy.as_deref().map(str::trim) {
        None | Some("all") => ReplayPolicy::all(),
        Some(list) => list.split(',').map(|s| s.parse::<ReplayPolicy>()).collect::<Result<_, _>>()?,
    };
    let scope = if args.pin_token { PinScope::Token } else { PinScope::Layer };
    let cycle = stream.geom.cycle_bytes(stream.k) as f64 / MIB;
    eprintln!(
        "replay: {} ({}), {} layers x {} experts, top-{}, {} accesses, {} decode tokens, token cycle {:.0} MiB, pins per {}",
        trace.header.model,
        trace.header.arch,
        stream.geom.n_layer(),
        stream.geom.n_expert(),
        stream.k,
        stream.len(),
        stream.decode_tokens,
        cycle,
        if args.pin_token { "token" } else { "layer" },
    );
    let mut reports: Vec<ReplayReport> = Vec::new();
    for &p in &policies {
        for &mb in &args.budget_mb {
            reports.push(research::replay(&stream, mb << 20, p, scope));
        }
    }
    if args.json {
        for r in &reports {
            println!("{}", r.json_line());
        }
    } else {
        println!("{}", ReplayReport::TABLE_HEADER);
        for r in &reports {
            println!("{}", r.table_row());
        }
    }
    if let Some(path) = &args.plot {
        let title = format!("{} top-{}: decode hit % vs budget (cycle {:.0} MiB)", trace.header.arch, stream.k, cycle);
        std::fs::write(path, research::plot::svg(&title, &policies, &args.budget_mb, &reports, cycle))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("replay: plot written to {}", path.display());
    }
    Ok(())
}

/// `--hosts`: the scale-out sweep (every hosts × link × placement at every budget).
fn run_hosts(args: &Args, trace: &RouteTrace, stream: &AccessStream) -> anyhow::Result<()> {
    let need = |v: Option<f64>, flag: &str| -> anyhow::Result<f64> {
        match v {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            Some(x) => bail!("{flag} {x}: must be a positive number"),
            None => bail!("--hosts needs {flag} (docs/scale-out.md: how it was measured)"),
        }
    };
    let n_embd = match args.n_embd {
        Some(n) if n > 0 => n,
        _ => bail!("--hosts needs --n-embd (the trace does not record it)"),
    };
    if !(1..=16).contains(&args.act_bytes) {
        bail!("--act-bytes {}: must be 1 to 16", args.act_bytes);
    }
    if !(args.rtt_us.is_finite() && args.rtt_us >= 0.0) {
        bail!("--rtt-us {}: must be a non-negative number", args.rtt_us);
    }
    let policy: CachePolicy = match args.policy.as_deref() {
        None => CachePolicy::DEFAULT,
        Some(p) => p.parse().context("--policy with --hosts takes one shipped policy")?,
    };
    let setup = Setup {
        n_embd,
        act_bytes: args.act_bytes,
        rtt_us: args.rtt_us,
        disk_mibps: need(args.disk_mibps, "--disk-mibps")?,
        compute_ms_per_mib: need(args.expert_ms_per_mib, "--expert-ms-per-mib")?,
        policy,
        preload: !args.cold,
    };
    let placements: Vec<Placement> = args.placement.iter().map(|p| p.parse()).collect::<Result<_, _>>()?;
    if placements.is_empty() {
        bail!("--placement: no placements");
    }
    let mut clusters = Vec::new();
    for &hosts in &args.hosts {
        for &link_gbps in &args.link_gbps {
            if !(link_gbps.is_finite() && link_gbps > 0.0) {
                bail!("--link-gbps {link_gbps}: must be a positive number");
            }
            // One host holds everything whatever the placement: one row is enough.
            let n = if hosts == 1 { 1 } else { placements.len() };
            clusters.extend(placements[..n].iter().map(|&placement| Cluster { hosts, link_gbps, placement }));
        }
    }
    let budgets: Vec<u64> = args
        .budget_mb
        .iter()
        .map(|&mb| mb.checked_mul(1 << 20).with_context(|| format!("--budget-mb {mb}: too large")))
        .collect::<anyhow::Result<_>>()?;
    eprintln!(
        "replay --hosts: {} ({}), {} layers x {} experts, top-{}, {} decode tokens; n_embd {} x {} B on the wire, \
         RTT {} us, flash {} MiB/s, expert compute {} ms/MiB, host caches `{}` starting {}",
        trace.header.model,
        trace.header.arch,
        stream.geom.n_layer(),
        stream.geom.n_expert(),
        stream.k,
        stream.decode_tokens,
        setup.n_embd,
        setup.act_bytes,
        setup.rtt_us,
        setup.disk_mibps,
        setup.compute_ms_per_mib,
        setup.policy,
        if setup.preload { "loaded with their most used entries" } else { "empty" },
    );
    let reports = scaleout::sweep(stream, &budgets, &clusters, &setup);
    if args.json {
        for r in &reports {
            println!("{}", r.json_line());
        }
    } else {
        println!("{}", ScaleReport::TABLE_HEADER);
        for r in &reports {
            println!("{}", r.table_row());
        }
        // What letting the weights travel would cost instead, once per budget and link.
        let mut seen = Vec::new();
        for r in &reports {
            if !seen.contains(&(r.budget, r.cluster.link_gbps.to_bits())) {
                seen.push((r.budget, r.cluster.link_gbps.to_bits()));
                println!(
                    "# weights travelling instead ({} MiB budget, {} Gbit/s): {:.1} MiB/token, bound {:.1} ms/token",
                    r.budget >> 20,
                    r.cluster.link_gbps,
                    r.weights_bytes / MIB,
                    r.weights_s * 1e3
                );
            }
        }
        println!(
            "# one host with every expert in RAM: {:.1} ms/token of expert compute",
            scaleout::resident_s(stream, &setup) * 1e3
        );
        // In no column: the same with one host or many, but it sets how much of a token's time
        // the experts are (the output head is not in the trace at all).
        let dense = trace.header.dense_bytes.iter().sum::<u64>() as f64 / MIB;
        println!(
            "# dense layers on the coordinator, in no column: {dense:.0} MiB/token (the trace's dense_bytes), \
             ~{:.1} ms/token at the same ms/MiB",
            dense * setup.compute_ms_per_mib
        );
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "{} top-{}: token-time bound vs hosts ({} MiB per host, RTT {} us)",
            trace.header.arch, stream.k, args.budget_mb[0], args.rtt_us
        );
        std::fs::write(path, research::plot::scaleout_svg(&title, &reports))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("replay: plot written to {}", path.display());
    }
    Ok(())
}

const MIB: f64 = (1u64 << 20) as f64;
