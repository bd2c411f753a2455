//! Statistics of the protocol's runs, the summary table, the flags and the plots.

use std::fmt::Write as _;

/// The `q`-quantile (0..=1) of `v` by linear interpolation; `None` for an empty slice.
pub fn quantile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(s[lo] + (s[hi] - s[lo]) * (pos - lo as f64))
}

/// The median of `v`.
pub fn median(v: &[f64]) -> Option<f64> {
    quantile(v, 0.5)
}

/// One decode token of a run, from the engine's `--csv`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TokenRow {
    pub wall_ms: f64,
    pub stall_ms: Option<f64>,
    pub manage_ms: Option<f64>,
    pub compute_ms: Option<f64>,
    pub read_bytes: Option<u64>,
    pub majflt: u64,
}

/// The decode rows of an engine CSV (`bmoe run --csv`).
///
/// # Errors
/// A line that does not parse, named.
pub fn parse_token_csv(text: &str) -> Result<Vec<TokenRow>, String> {
    let mut rows = Vec::new();
    let mut cols: Vec<&str> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if cols.is_empty() {
            cols = f;
            continue;
        }
        let get = |name: &str| cols.iter().position(|c| *c == name).and_then(|j| f.get(j).copied());
        let num = |name: &str| get(name).and_then(|v| v.parse::<f64>().ok());
        if get("phase") != Some("decode") {
            continue;
        }
        let wall_ms = num("wall_ms").ok_or_else(|| format!("line {}: no wall_ms in {line:?}", i + 1))?;
        rows.push(TokenRow {
            wall_ms,
            stall_ms: num("stall_ms"),
            manage_ms: num("manage_ms"),
            compute_ms: num("compute_ms"),
            read_bytes: get("read_bytes").and_then(|v| v.parse().ok()),
            majflt: get("majflt").and_then(|v| v.parse().ok()).unwrap_or(0),
        });
    }
    Ok(rows)
}

/// One cell's figures over its rounds.
#[derive(Clone, Debug, Default)]
pub struct CellSummary {
    pub name: String,
    pub runs: usize,
    pub failed: usize,
    /// Decode tokens per second, median over rounds.
    pub tok_s: Option<f64>,
    /// Token time over every decode token of every round, ms.
    pub p5_ms: Option<f64>,
    pub median_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    /// Bytes read per decode token (the engine's count; the block device's for llama.cpp).
    pub mib_per_token: Option<f64>,
    /// Where `mib_per_token` came from.
    pub bytes_source: &'static str,
    /// Routed experts resident when routed, % (a look-ahead read is not a hit).
    pub hit_pct: Option<f64>,
    /// Routed experts served by a look-ahead read, %.
    pub prefetch_pct: Option<f64>,
    pub majflt_per_token: Option<f64>,
    /// Median per-token split, ms.
    pub stall_ms: Option<f64>,
    pub compute_ms: Option<f64>,
    pub manage_ms: Option<f64>,
    pub peak_rss_mib: Option<f64>,
    /// Seconds the engine took to open, median (`load_s`); for the generic decoder, the GiB
    /// llama.cpp's own load read from storage (`load_llama_read_GiB`).
    pub load_s: Option<f64>,
    pub load_read_gib: Option<f64>,
    pub mem_floor_mib: Option<f64>,
    /// max(MiB/token ÷ disk MiB/s, compute ms), ms.
    pub lower_bound_ms: Option<f64>,
    /// Whether every round's text equals the reference cell's of the same round.
    pub text_identical: Option<bool>,
    /// The prefill, medians over rounds: its seconds, the expert MiB it read, its compute
    /// seconds, and its lower bound max(read ÷ disk MiB/s, compute), s.
    pub prefill_s: Option<f64>,
    pub prefill_read_mib: Option<f64>,
    pub prefill_compute_s: Option<f64>,
    pub prefill_bound_s: Option<f64>,
}

impl CellSummary {
    /// Prefill time ÷ its lower bound.
    pub fn prefill_ratio_to_bound(&self) -> Option<f64> {
        Some(self.prefill_s? / self.prefill_bound_s?)
    }

    /// Median token time ÷ lower bound.
    pub fn ratio_to_bound(&self) -> Option<f64> {
        Some(self.median_ms? / self.lower_bound_ms?)
    }
}

/// The lower bound of a token's time: its missed bytes at the disk's measured rate, or its
/// compute, whichever is longer (ms).
pub fn lower_bound_ms(mib_per_token: f64, disk_mib_s: f64, compute_ms: f64) -> f64 {
    (mib_per_token / disk_mib_s * 1e3).max(compute_ms)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}

/// The summary as a markdown table.
pub fn markdown_table(cells: &[CellSummary]) -> String {
    let mut s = String::from(
        "| cell | runs | tok/s | token ms p5 / median / p95 | MiB/token | hit % | prefetched % | majflt/token | stall / compute / manage ms | peak RSS MiB | MemAvailable floor MiB | lower bound ms | × bound | text = reference |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for c in cells {
        let _ = writeln!(
            s,
            "| {} | {}{} | {} | {} / {} / {} | {}{} | {} | {} | {} | {} / {} / {} | {} | {} | {} | {} | {} |",
            c.name,
            c.runs,
            if c.failed > 0 { format!(" ({} failed)", c.failed) } else { String::new() },
            opt(c.tok_s, 3),
            opt(c.p5_ms, 0),
            opt(c.median_ms, 0),
            opt(c.p95_ms, 0),
            opt(c.mib_per_token, 1),
            if c.bytes_source.is_empty() { String::new() } else { format!(" ({})", c.bytes_source) },
            opt(c.hit_pct, 1),
            opt(c.prefetch_pct, 1),
            opt(c.majflt_per_token, 1),
            opt(c.stall_ms, 0),
            opt(c.compute_ms, 0),
            opt(c.manage_ms, 1),
            opt(c.peak_rss_mib, 0),
            opt(c.mem_floor_mib, 0),
            opt(c.lower_bound_ms, 0),
            opt(c.ratio_to_bound(), 2),
            c.text_identical.map_or("–", |b| if b { "yes" } else { "NO" }),
        );
    }
    s
}

/// The prefill of each cell as a markdown table.
pub fn prefill_table(cells: &[CellSummary]) -> String {
    let mut s = String::from(
        "| cell | load s (llama.cpp's load read GiB) | prefill s | read MiB | compute s | lower bound s | × bound |\n|---|---|---|---|---|---|---|\n",
    );
    for c in cells {
        let _ = writeln!(
            s,
            "| {} | {}{} | {} | {} | {} | {} | {} |",
            c.name,
            opt(c.load_s, 2),
            c.load_read_gib.map_or(String::new(), |g| format!(" ({g:.2})")),
            opt(c.prefill_s, 3),
            opt(c.prefill_read_mib, 1),
            opt(c.prefill_compute_s, 3),
            opt(c.prefill_bound_s, 3),
            opt(c.prefill_ratio_to_bound(), 2),
        );
    }
    s
}

/// The summary as CSV.
pub fn csv(cells: &[CellSummary]) -> String {
    let mut s = String::from(
        "cell,runs,failed,tok_s,p5_ms,median_ms,p95_ms,mib_per_token,bytes_source,hit_pct,prefetch_pct,majflt_per_token,stall_ms,compute_ms,manage_ms,peak_rss_mib,mem_floor_mib,lower_bound_ms,ratio_to_bound,text_identical,prefill_s,prefill_read_mib,prefill_compute_s,prefill_bound_s,prefill_ratio_to_bound\n",
    );
    let o = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.4}"));
    for c in cells {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.name,
            c.runs,
            c.failed,
            o(c.tok_s),
            o(c.p5_ms),
            o(c.median_ms),
            o(c.p95_ms),
            o(c.mib_per_token),
            c.bytes_source,
            o(c.hit_pct),
            o(c.prefetch_pct),
            o(c.majflt_per_token),
            o(c.stall_ms),
            o(c.compute_ms),
            o(c.manage_ms),
            o(c.peak_rss_mib),
            o(c.mem_floor_mib),
            o(c.lower_bound_ms),
            o(c.ratio_to_bound()),
            c.text_identical.map_or(String::new(), |b| b.to_string()),
            o(c.prefill_s),
            o(c.prefill_read_mib),
            o(c.prefill_compute_s),
            o(c.prefill_bound_s),
            o(c.prefill_ratio_to_bound()),
        );
    }
    s
}

/// Cells whose measurement looks contaminated: major faults per token an order of magnitude
/// apart between rounds of one cell; compute per token rising as top-k falls.
pub fn flags(per_round_majflt: &[(String, Vec<f64>)], compute_by_k: &[(String, u32, f64)]) -> Vec<String> {
    let mut out = Vec::new();
    for (name, v) in per_round_majflt {
        let (lo, hi) = (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(0.0, f64::max));
        if hi >= 1.0 && hi >= 10.0 * lo.max(0.1) {
            out.push(format!("{name}: major faults/token range {lo:.1}..{hi:.1} across rounds (10×): contaminated"));
        }
    }
    for (a, ka, ca) in compute_by_k {
        for (b, kb, cb) in compute_by_k {
            if ka < kb && ca > &(cb * 1.1) {
                out.push(format!(
                    "{a} (top-{ka}) computes {ca:.0} ms/token, more than {b} (top-{kb}, {cb:.0} ms): contaminated"
                ));
            }
        }
    }
    out
}

const COLORS: [&str; 8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// An SVG's opening, white background, title and five horizontal grid lines from 0 to `top`
/// (labelled with `digits` decimals) between x = `ml` and `x2`.
#[allow(clippy::too_many_arguments)]
fn frame(title: &str, w: f64, h: f64, ml: f64, x2: f64, top: f64, y: &dyn Fn(f64) -> f64, digits: usize) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{ml}\" y=\"22\" font-size=\"14\">{}</text>\n",
        esc(title)
    );
    for i in 0..=4 {
        let v = top * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<line x1=\"{ml}\" y1=\"{0:.1}\" x2=\"{x2}\" y2=\"{0:.1}\" stroke=\"#ddd\"/><text x=\"{1}\" y=\"{2:.1}\" text-anchor=\"end\">{v:.digits$}</text>",
            y(v),
            ml - 6.0,
            y(v) + 4.0
        );
    }
    s
}

/// Bars of median tok/s per cell, with the lower bound's tok/s marked (SVG).
pub fn bars_svg(title: &str, cells: &[CellSummary]) -> String {
    let (w, h, ml, mt, mb) = (120.0 + 110.0 * cells.len() as f64, 380.0, 60.0, 40.0, 70.0);
    let bound = |c: &CellSummary| c.lower_bound_ms.map(|b| 1e3 / b);
    let top = cells.iter().flat_map(|c| [c.tok_s, bound(c)]).flatten().fold(0.0, f64::max).max(1e-9) * 1.1;
    let y = |v: f64| mt + (h - mt - mb) * (1.0 - v / top);
    let mut s = frame(title, w, h, ml, w - 20.0, top, &y, 2);
    for (i, c) in cells.iter().enumerate() {
        let x = ml + 20.0 + 110.0 * i as f64;
        if let Some(t) = c.tok_s {
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{:.1}\" width=\"70\" height=\"{:.1}\" fill=\"{}\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"middle\">{t:.2}</text>",
                y(t),
                y(0.0) - y(t),
                COLORS[i % COLORS.len()],
                x + 35.0,
                y(t) - 4.0
            );
        }
        if let Some(b) = bound(c) {
            let _ = writeln!(
                s,
                "<line x1=\"{0}\" y1=\"{1:.1}\" x2=\"{2}\" y2=\"{1:.1}\" stroke=\"black\" stroke-dasharray=\"4 2\"/>",
                x - 5.0,
                y(b),
                x + 75.0
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x + 35.0,
            h - mb + 16.0,
            esc(&c.name)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{ml}\" y=\"{}\">median decode tok/s per cell; dashed: the lower bound's tok/s</text>\n</svg>",
        h - 12.0
    );
    s
}

/// Token time (ms) against token index, one line per run (SVG).
pub fn series_svg(title: &str, series: &[(String, Vec<f64>)]) -> String {
    let (w, h, ml, mr, mt, mb) = (760.0, 420.0, 60.0, 170.0, 40.0, 50.0);
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(1).max(2);
    let top = quantile(&series.iter().flat_map(|s| s.1.iter().copied()).collect::<Vec<_>>(), 0.99).unwrap_or(1.0) * 1.1;
    let x = |i: usize| ml + (w - ml - mr) * i as f64 / (n - 1) as f64;
    let y = |v: f64| mt + (h - mt - mb) * (1.0 - v.min(top) / top);
    let mut s = frame(title, w, h, ml, w - mr, top, &y, 0);
    for (j, (name, v)) in series.iter().enumerate() {
        let pts: Vec<String> = v.iter().enumerate().map(|(i, &t)| format!("{:.1},{:.1}", x(i), y(t))).collect();
        let c = COLORS[j % COLORS.len()];
        let _ = writeln!(s, "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"1\" points=\"{}\"/>", pts.join(" "));
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"{c}\">{}</text>",
            w - mr + 8.0,
            mt + 16.0 * j as f64,
            esc(name)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">decode token (ms per token, capped at the p99)</text>\n</svg>",
        (ml + w - mr) / 2.0,
        h - 12.0
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [4.0, 1.0, 3.0, 2.0, 5.0];
        assert_eq!(median(&v), Some(3.0));
        assert_eq!(quantile(&v, 0.0), Some(1.0));
        assert_eq!(quantile(&v, 1.0), Some(5.0));
        assert_eq!(quantile(&[1.0, 2.0], 0.5), Some(1.5));
        assert_eq!(quantile(&v, 0.05), Some(1.2));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn token_csv_keeps_decode_rows() {
        let text = "# bmoe x\n# summary\ntoken,phase,wall_ms,io_ms,stall_ms,manage_ms,compute_ms,read_bytes,hit_pct,majflt\n\
                    0,prefill,900.0,1,1,0.1,800,100,unmeasured,3\n1,decode,120.5,20,20,0.5,90,2097152,50.0,0\n\
                    2,decode,110.0,unmeasured,unmeasured,unmeasured,unmeasured,unmeasured,unmeasured,7\n# summary tokens=3\n";
        let rows = parse_token_csv(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            TokenRow {
                wall_ms: 120.5,
                stall_ms: Some(20.0),
                manage_ms: Some(0.5),
                compute_ms: Some(90.0),
                read_bytes: Some(2_097_152),
                majflt: 0
            }
        );
        assert_eq!((rows[1].compute_ms, rows[1].read_bytes, rows[1].majflt), (None, None, 7));
        assert!(parse_token_csv("token,phase,wall_ms\n1,decode,x\n").is_err());
    }

    #[test]
    fn lower_bound_is_disk_or_compute() {
        // 800 MiB at 1600 MiB/s = 500 ms > 200 ms of compute.
        assert_eq!(lower_bound_ms(800.0, 1600.0, 200.0), 500.0);
        assert_eq!(lower_bound_ms(100.0, 1600.0, 200.0), 200.0);
        let c = CellSummary { median_ms: Some(600.0), lower_bound_ms: Some(500.0), ..CellSummary::default() };
        assert_eq!(c.ratio_to_bound(), Some(1.2));
    }

    #[test]
    fn plots_are_whole_svgs_naming_every_series() {
        let cells = [
            CellSummary { name: "a<b".into(), tok_s: Some(1.5), lower_bound_ms: Some(500.0), ..CellSummary::default() },
            CellSummary { name: "c".into(), ..CellSummary::default() },
        ];
        let bars = bars_svg("t", &cells);
        assert!(bars.starts_with("<svg") && bars.trim_end().ends_with("</svg>"));
        assert!(bars.contains("a&lt;b") && bars.contains(">c<") && bars.contains("stroke-dasharray"));
        let lines = series_svg("t", &[("r1".into(), vec![1.0, 2.0, 3.0]), ("r2".into(), vec![2.0])]);
        assert_eq!(lines.matches("<polyline").count(), 2);
        assert!(lines.contains(">r1<") && lines.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn flags_name_contaminated_cells() {
        let f = flags(
            &[("a".into(), vec![0.2, 30.0]), ("b".into(), vec![5.0, 6.0]), ("c".into(), vec![0.0, 0.5])],
            &[("k4".into(), 4, 300.0), ("k8".into(), 8, 200.0), ("k6".into(), 6, 190.0)],
        );
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f[0].starts_with("a:"));
        assert!(f[1].starts_with("k4") && f[1].contains("k8"));
        assert!(f[2].starts_with("k4") && f[2].contains("k6"));
    }
}
