//! The SVG plots of the replay tool: decode hit % against budget, one line per policy; and the
//! scale-out token-time bound against the number of hosts, one line per placement and link.

use std::fmt::Write as _;

use super::scaleout::ScaleReport;
use super::ReplayPolicy;
use crate::cache::replay::ReplayReport;

const COLORS: [&str; 10] =
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// Line styles by link, fastest first.
const DASHES: [&str; 3] = ["", r#" stroke-dasharray="6 3""#, r#" stroke-dasharray="2 3""#];

/// A small hand-written SVG line chart of decode hit % against budget MiB, one line per policy
/// (offline ones dashed), with the token cycle marked: what `bmoe replay --plot` and the replay
/// example write.
pub fn svg(title: &str, policies: &[ReplayPolicy], budgets: &[u64], reports: &[ReplayReport], cycle: f64) -> String {
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

/// The token-time bound (ms, log scale) against the number of hosts, one line per (placement,
/// link) (colour by placement, solid for the fastest link, dashed for the next, dotted after),
/// the single-host streamed bound as a grey dashed line and one host with every expert in RAM as
/// a grey dotted one: what `bmoe replay --hosts … --plot` writes. Only the first budget's rows
/// are drawn; a placement without a one-host row starts from the one-host row of its link (with
/// one host every placement is the same).
pub fn scaleout_svg(title: &str, reports: &[ScaleReport]) -> String {
    let Some(first) = reports.first() else { return String::new() };
    let rows: Vec<&ScaleReport> = reports.iter().filter(|r| r.budget == first.budget).collect();
    let mut hosts: Vec<u32> = rows.iter().map(|r| r.cluster.hosts).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut links: Vec<f64> = rows.iter().map(|r| r.cluster.link_gbps).collect();
    links.sort_by(|a, b| b.total_cmp(a));
    links.dedup();
    let mut placements: Vec<String> = Vec::new();
    for r in &rows {
        if !placements.contains(&r.cluster.placement.name()) {
            placements.push(r.cluster.placement.name());
        }
    }
    let ms = |r: &ScaleReport| (r.bound_s * 1e3).max(1e-3);
    let (single, resident) = (first.single_s * 1e3, (first.resident_s * 1e3).max(1e-3));
    let hi = rows.iter().map(|r| ms(r)).fold(single.max(resident), f64::max);
    let lo = rows.iter().map(|r| ms(r)).fold(single.min(resident), f64::min);
    let (d0, d1) = (lo.log10().floor(), hi.log10().ceil().max(lo.log10().floor() + 1.0));
    let (w, h, ml, mr, mt, mb) = (760.0, 460.0, 60.0, 230.0, 40.0, 50.0);
    let x = |n: u32| {
        let i = hosts.iter().position(|&v| v == n).unwrap_or(0) as f64;
        let span = (hosts.len().max(2) - 1) as f64;
        ((ml + 20.0 + (w - ml - mr - 40.0) * i / span) * 10.0).round() / 10.0
    };
    let y = |v: f64| ((mt + (h - mt - mb) * (d1 - v.log10()) / (d1 - d0)) * 10.0).round() / 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{ml}" y="22" font-size="14">{}</text>"#, esc(title));
    for d in d0 as i32..=d1 as i32 {
        let v = 10f64.powi(d);
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{yy}" x2="{}" y2="{yy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{v}</text>"##,
            w - mr,
            ml - 6.0,
            yy + 4.0
        );
    }
    for &n in &hosts {
        let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">{n}</text>"#, x(n), h - mb + 16.0);
    }
    let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">hosts</text>"#, (ml + w - mr) / 2.0, h - 10.0);
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">token-time bound, ms (log)</text>"#,
        (mt + h - mb) / 2.0,
        (mt + h - mb) / 2.0
    );
    let _ = writeln!(s, r##"<line x1="{ml}" y1="{}" x2="{}" y2="{}" stroke="#000"/>"##, h - mb, w - mr, h - mb);
    let mut legend = Vec::new();
    for (v, dash, name) in [
        (single, r#" stroke-dasharray="8 4""#, "one host, streamed"),
        (resident, r#" stroke-dasharray="2 3""#, "one host, all in RAM"),
    ] {
        let yv = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{yv}" x2="{}" y2="{yv}" stroke="#666" stroke-width="2"{dash}/>"##,
            w - mr
        );
        legend.push(("#666".to_string(), dash, name.to_string()));
    }
    for (pi, p) in placements.iter().enumerate() {
        let c = COLORS[pi % COLORS.len()];
        for (li, &g) in links.iter().enumerate() {
            let dash = DASHES[li.min(DASHES.len() - 1)];
            let mut pts: Vec<(u32, f64)> = rows
                .iter()
                .filter(|r| r.cluster.placement.name() == *p && r.cluster.link_gbps == g)
                .map(|r| (r.cluster.hosts, ms(r)))
                .collect();
            if !pts.iter().any(|&(n, _)| n == 1) {
                let one = rows.iter().find(|r| r.cluster.hosts == 1 && r.cluster.link_gbps == g);
                pts.extend(one.map(|r| (1, ms(r))));
            }
            pts.sort_by_key(|&(n, _)| n);
            let pts: Vec<String> = pts.iter().map(|&(n, v)| format!("{},{}", x(n), y(v))).collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"/>"#,
                pts.join(" ")
            );
            legend.push((c.to_string(), dash, format!("{p} @ {g} Gbit/s")));
        }
    }
    for (i, (c, dash, name)) in legend.iter().enumerate() {
        let ly = mt + 16.0 * i as f64 + 10.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
            w - mr + 10.0,
            w - mr + 30.0,
            w - mr + 35.0,
            ly + 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
