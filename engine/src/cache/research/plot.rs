//! The SVG plot of a replay sweep: decode hit % against budget, one line per policy.

use std::fmt::Write as _;

use super::ReplayPolicy;
use crate::cache::replay::ReplayReport;

const COLORS: [&str; 10] =
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
