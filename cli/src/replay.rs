//! `bmoe replay TRACE`: replay a recorded routing trace (`route_trace v1`) through the
//! engine's expert cache under each policy and budget, and report hit rates, bytes read per
//! token and the cache's CPU time per access. Runs the engine's own cache and policy types.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::replay::{AccessStream, PinScope, ReplayReport};
use bmoe::engine::cache::research::{self, ReplayPolicy};
use bmoe::engine::cache::trace::RouteTrace;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A `route_trace v1` file.
    trace: PathBuf,
    /// Cache budgets in MiB, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [500u64, 1000, 1500, 2000, 2500, 3000, 3500, 4000])]
    budget_mb: Vec<u64>,
    /// Policies, comma-separated, or `all`.
    #[arg(long, default_value = "all")]
    policy: String,
    /// Replay only the ranks < K of each layer's top-k.
    #[arg(long)]
    k: Option<u32>,
    /// Hold pins to the end of the token instead of the end of the layer.
    #[arg(long)]
    pin_token: bool,
    /// One JSON object per row on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Write an SVG plot of decode hit % against budget per policy.
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let trace = RouteTrace::read(&args.trace)?;
    let stream = AccessStream::from_trace(&trace, args.k).context("building the access stream")?;
    let policies: Vec<ReplayPolicy> = if args.policy.trim() == "all" {
        ReplayPolicy::all()
    } else {
        args.policy.split(',').map(|s| s.parse::<ReplayPolicy>()).collect::<Result<_, _>>()?
    };
    if args.budget_mb.is_empty() {
        bail!("--budget-mb: no budgets");
    }
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

const MIB: f64 = (1u64 << 20) as f64;
