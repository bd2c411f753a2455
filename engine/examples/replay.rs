//! `cargo run --release -p bmoe-engine --no-default-features --example replay -- TRACE
//! [--budget-mb 500,1000,...] [--policy NAME,...|all] [--k K] [--pin-token] [--json] [--plot PATH]`
//!
//! The same replay `bmoe replay` runs (the engine's own cache and policy types), without the
//! CLI crate, so policy sweeps build without llama.cpp. Prints the same table / JSON rows.

use std::process::ExitCode;

use bmoe_engine::cache::replay::{AccessStream, PinScope, ReplayReport};
use bmoe_engine::cache::research::{self, ReplayPolicy};
use bmoe_engine::cache::trace::RouteTrace;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut trace = None;
    let mut budgets: Vec<u64> = vec![500, 1000, 1500, 2000, 2500, 3000, 3500, 4000];
    let mut policy = "all".to_string();
    let mut k = None;
    let (mut json, mut pin_token) = (false, false);
    let mut plot: Option<String> = None;
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a}: missing value"));
        match a.as_str() {
            "--budget-mb" => budgets = val()?.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>()?,
            "--policy" => policy = val()?,
            "--k" => k = Some(val()?.parse()?),
            "--json" => json = true,
            "--pin-token" => pin_token = true,
            "--plot" => plot = Some(val()?),
            _ if a.starts_with("--") => return Err(format!("unknown flag {a}").into()),
            _ => trace = Some(a),
        }
    }
    let path = std::path::PathBuf::from(trace.ok_or("usage: replay TRACE [--budget-mb ..] [--policy ..]")?);
    let trace = RouteTrace::read(&path)?;
    let stream = AccessStream::from_trace(&trace, k)?;
    let policies: Vec<ReplayPolicy> = if policy.trim() == "all" {
        ReplayPolicy::all()
    } else {
        policy.split(',').map(|s| s.parse::<ReplayPolicy>()).collect::<Result<_, _>>()?
    };
    let scope = if pin_token { PinScope::Token } else { PinScope::Layer };
    eprintln!(
        "replay: {} ({}), {} layers x {} experts, top-{}, {} accesses, {} decode tokens, token cycle {:.0} MiB",
        trace.header.model,
        trace.header.arch,
        stream.geom.n_layer(),
        stream.geom.n_expert(),
        stream.k,
        stream.len(),
        stream.decode_tokens,
        stream.geom.cycle_bytes(stream.k) as f64 / (1u64 << 20) as f64,
    );
    if !json {
        println!("{}", ReplayReport::TABLE_HEADER);
    }
    let mut reports = Vec::new();
    for &p in &policies {
        for &mb in &budgets {
            let r = research::replay(&stream, mb << 20, p, scope);
            println!("{}", if json { r.json_line() } else { r.table_row() });
            reports.push(r);
        }
    }
    if let Some(path) = plot {
        let cycle = stream.geom.cycle_bytes(stream.k) as f64 / (1u64 << 20) as f64;
        let title = format!("{} top-{}: decode hit % vs budget (cycle {:.0} MiB)", trace.header.arch, stream.k, cycle);
        std::fs::write(&path, research::plot::svg(&title, &policies, &budgets, &reports, cycle))?;
        eprintln!("replay: plot written to {path}");
    }
    Ok(())
}
