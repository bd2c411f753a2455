//! `bmoe replay TRACE`: replay a recorded routing trace (`route_trace v1`) through the
//! engine's expert cache under each policy and budget, and report hit rates, bytes read per
//! token and the cache's CPU time per access. Runs the engine's own cache and policy types.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use bmoe::engine::cache::replay::{self, AccessStream, PinScope, ReplayReport};
use bmoe::engine::cache::trace::RouteTrace;
use bmoe::engine::cache::CachePolicy;

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
    let policies: Vec<CachePolicy> = if args.policy.trim() == "all" {
        CachePolicy::all()
    } else {
        args.policy.split(',').map(|s| s.parse::<CachePolicy>()).collect::<Result<_, _>>()?
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
            reports.push(replay::replay(&stream, mb << 20, p, scope));
        }
    }
    if args.json {
        for r in &reports {
            let v = serde_json::json!({
                "policy": r.policy,
                "budget_mb": r.budget >> 20,
                "hit_pct_decode": round(r.hit_pct_decode(), 2),
                "hit_pct_all": round(r.hit_pct_all(), 2),
                "read_mib_per_token": round(r.read_mib_per_token(), 2),
                "evictions": r.counters.total().evictions,
                "refused": r.counters.total().refused,
                "overflows": r.counters.overflows,
                "ns_per_access": round(r.ns_per_access(), 1),
                "accesses": r.accesses,
                "decode_tokens": r.decode_tokens,
            });
            println!("{v}");
        }
    } else {
        println!(
            "{:<12} {:>9} {:>10} {:>9} {:>11} {:>9} {:>8}",
            "policy", "budget_mb", "hit%_dec", "hit%_all", "MiB/token", "evictions", "ns/acc"
        );
        for r in &reports {
            println!(
                "{:<12} {:>9} {:>10.1} {:>9.1} {:>11.1} {:>9} {:>8.0}",
                r.policy,
                r.budget >> 20,
                r.hit_pct_decode(),
                r.hit_pct_all(),
                r.read_mib_per_token(),
                r.counters.total().evictions,
                r.ns_per_access()
            );
        }
    }
    if let Some(path) = &args.plot {
        let title = format!("{} top-{}: decode hit % vs budget (cycle {:.0} MiB)", trace.header.arch, stream.k, cycle);
        std::fs::write(path, svg(&title, &policies, &args.budget_mb, &reports, cycle))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("replay: plot written to {}", path.display());
    }
    Ok(())
}

const MIB: f64 = (1u64 << 20) as f64;

fn round(x: f64, d: i32) -> f64 {
    let m = 10f64.powi(d);
    (x * m).round() / m
}

const COLORS: [&str; 10] =
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// A small hand-written SVG line chart: x = budget MiB, y = decode hit %.
fn svg(title: &str, policies: &[CachePolicy], budgets: &[u64], reports: &[ReplayReport], cycle: f64) -> String {
    let (w, h, ml, mr, mt, mb) = (720.0, 440.0, 60.0, 150.0, 40.0, 50.0);
    let xmax = budgets.iter().copied().max().unwrap_or(1).max(1) as f64;
    let x = |mb: f64| ((ml + (w - ml - mr) * mb / xmax) * 10.0).round() / 10.0;
    let y = |pct: f64| ((mt + (h - mt - mb) * (1.0 - pct / 100.0)) * 10.0).round() / 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{ml}" y="22" font-size="14">{}</text>"#, esc(title));
    for pct in (0..=100).step_by(20) {
        let yy = y(pct as f64);
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{yy}" x2="{}" y2="{yy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{pct}</text>"##,
            w - mr,
            ml - 6.0,
            yy + 4.0
        );
    }
    for &b in budgets {
        let xx = x(b as f64);
        let _ = writeln!(s, r#"<text x="{xx}" y="{}" text-anchor="middle">{b}</text>"#, h - mb + 16.0);
    }
    let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">budget MiB</text>"#, (ml + w - mr) / 2.0, h - 10.0);
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">decode hit %</text>"#,
        (mt + h - mb) / 2.0,
        (mt + h - mb) / 2.0
    );
    if cycle <= xmax {
        let xc = x(cycle);
        let _ = writeln!(
            s,
            r##"<line x1="{xc}" y1="{mt}" x2="{xc}" y2="{}" stroke="#999" stroke-dasharray="4 3"/><text x="{}" y="{}" fill="#666">token cycle</text>"##,
            h - mb,
            xc + 3.0,
            mt + 12.0
        );
    }
    let _ = writeln!(s, r##"<line x1="{ml}" y1="{}" x2="{}" y2="{}" stroke="#000"/>"##, h - mb, w - mr, h - mb);
    for (i, p) in policies.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let pts: Vec<String> = reports
            .iter()
            .filter(|r| r.policy == p.name())
            .map(|r| format!("{:.1},{:.1}", x((r.budget >> 20) as f64), y(r.hit_pct_decode())))
            .collect();
        let dash = if p.is_offline() { r#" stroke-dasharray="6 3""# } else { "" };
        let _ =
            writeln!(s, r#"<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"/>"#, pts.join(" "));
        let ly = mt + 16.0 * i as f64 + 10.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
            w - mr + 10.0,
            w - mr + 30.0,
            w - mr + 35.0,
            ly + 4.0,
            esc(p.name())
        );
    }
    s.push_str("</svg>\n");
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
