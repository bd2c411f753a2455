//! `route_trace v1`: recorded routing decisions, one row per routed (token, layer, rank).
//!
//! The format (../shared/traces/README.md) is a `# route_trace v1` line, a `# model=…` line,
//! one `# layer=L expert_bytes=B dense_bytes=D` line per layer, a CSV header and the rows.
//! The parser validates everything against the header (layer and expert ranges, phase, every
//! layer declared exactly once) and names the line of the first problem; the writer emits the
//! same format so our own runs can be replayed (`bmoe run --route-trace`, which the streaming
//! work adds, will drive [`TraceWriter`]).

use std::io::{self, BufRead, Write};
use std::path::Path;

use super::{Geometry, Phase};

/// The CSV header line of v1.
pub const CSV_HEADER: &str = "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes";

/// Errors reading or writing a route trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Reading or writing failed.
    #[error("route trace {path}: {err}")]
    Io { path: String, err: io::Error },
    /// The content is not valid `route_trace v1`.
    #[error("route trace {path}:{line}: {what}")]
    Parse { path: String, line: usize, what: String },
    /// A path that is not a regular file (opening a FIFO would wait for a writer).
    #[error("route trace {path}: {kind}, not a trace file")]
    NotAFile { path: String, kind: &'static str },
}

/// The `# model=…` line and the per-layer lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHeader {
    /// Model path or name as recorded.
    pub model: String,
    /// Architecture string.
    pub arch: String,
    /// Experts per layer.
    pub n_expert: u32,
    /// Top-k the run applied.
    pub n_expert_used: u32,
    /// Per layer: bytes of one expert entry.
    pub expert_bytes: Vec<u64>,
    /// Per layer: dense bytes.
    pub dense_bytes: Vec<u64>,
}

impl TraceHeader {
    /// Number of layers.
    pub fn n_layer(&self) -> u32 {
        self.expert_bytes.len() as u32
    }

    /// The cache geometry the trace describes.
    ///
    /// # Errors
    /// [`super::CacheError::Geometry`] if the header cannot describe a cache.
    pub fn geometry(&self) -> super::Result<Geometry> {
        Geometry::new(self.n_expert, self.expert_bytes.clone())
    }
}

/// One routed expert.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RouteRow {
    /// Chat turn.
    pub turn: u32,
    /// Prefill or decode.
    pub phase: Phase,
    /// Token index within the phase.
    pub step: u32,
    /// Layer.
    pub layer: u32,
    /// Rank within the layer's top-k (0 = highest weight).
    pub slot: u32,
    /// Expert id.
    pub expert: u32,
    /// Router weight (renormalised).
    pub weight: f32,
    /// Whether the recording engine had it cached.
    pub residency: bool,
    /// Bytes the recording engine read for it (0 on a hit).
    pub expert_bytes: u64,
}

/// A parsed trace.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteTrace {
    /// Header.
    pub header: TraceHeader,
    /// Rows in file order (the access order).
    pub rows: Vec<RouteRow>,
}

impl RouteTrace {
    /// Read and validate a trace file.
    ///
    /// # Errors
    /// [`TraceError::Io`] if it cannot be read, [`TraceError::Parse`] naming the line otherwise.
    pub fn read(path: &Path) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|err| TraceError::Io { path: name.clone(), err })?;
        if !meta.is_file() {
            // Opening a FIFO would wait for a writer.
            let kind = crate::gguf::file_kind(&meta);
            return Err(TraceError::NotAFile { path: name, kind });
        }
        let f = std::fs::File::open(path).map_err(|err| TraceError::Io { path: name.clone(), err })?;
        Self::parse(io::BufReader::new(f), &name)
    }

    /// Parse a trace from a reader; `name` is used in errors.
    ///
    /// # Errors
    /// As [`Self::read`].
    pub fn parse<R: BufRead>(r: R, name: &str) -> Result<Self, TraceError> {
        let err = |line: usize, what: String| TraceError::Parse { path: name.to_string(), line, what };
        let mut model: Option<(String, String, u32, u32, u32)> = None;
        let mut layers: Vec<Option<(u64, u64)>> = Vec::new();
        let mut saw_magic = false;
        let mut saw_csv = false;
        let mut rows = Vec::new();
        for (i, line) in r.lines().enumerate() {
            let ln = i + 1;
            let line = line.map_err(|err| TraceError::Io { path: name.to_string(), err })?;
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() {
                continue;
            }
            if !saw_magic {
                if line.trim() != "# route_trace v1" {
                    return Err(err(ln, format!("expected `# route_trace v1`, found `{}`", excerpt(line))));
                }
                saw_magic = true;
                continue;
            }
            if let Some(c) = line.strip_prefix('#') {
                if saw_csv {
                    continue; // comments among rows are allowed and ignored
                }
                let kv = parse_kv(c);
                let get = |k: &str| kv.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v);
                let num = |k: &str| -> Result<u64, TraceError> {
                    let v = get(k).ok_or_else(|| err(ln, format!("missing `{k}=`")))?;
                    v.parse::<u64>().map_err(|_| err(ln, format!("`{k}={}` is not a non-negative integer", excerpt(v))))
                };
                if get("model").is_some() {
                    if model.is_some() {
                        return Err(err(ln, "second `# model=` line".into()));
                    }
                    let n_layer = num("n_layer")?;
                    let n_expert = num("n_expert")?;
                    let k = num("n_expert_used")?;
                    if n_layer == 0 || n_layer > 4096 || n_expert == 0 || n_expert > 65536 || k == 0 || k > n_expert {
                        return Err(err(
                            ln,
                            format!("implausible shape: n_layer={n_layer} n_expert={n_expert} n_expert_used={k}"),
                        ));
                    }
                    let model_s = get("model").unwrap_or_default().to_string();
                    let arch = get("arch").unwrap_or("").to_string();
                    layers = vec![None; n_layer as usize];
                    model = Some((model_s, arch, n_layer as u32, n_expert as u32, k as u32));
                } else if get("layer").is_some() {
                    if model.is_none() {
                        return Err(err(ln, "`# layer=` line before the `# model=` line".into()));
                    }
                    let l = num("layer")?;
                    let b = num("expert_bytes")?;
                    let d = num("dense_bytes")?;
                    let n_layer = layers.len();
                    let slot = layers
                        .get_mut(l as usize)
                        .ok_or_else(|| err(ln, format!("layer {l} out of range (n_layer={n_layer})")))?;
                    if slot.is_some() {
                        return Err(err(ln, format!("layer {l} declared twice")));
                    }
                    if b == 0 || b > MAX_ENTRY_BYTES || d > MAX_ENTRY_BYTES * 1024 {
                        return Err(err(
                            ln,
                            format!("layer {l}: implausible expert_bytes={b} dense_bytes={d} (an expert entry is 1 B to 16 GiB)"),
                        ));
                    }
                    *slot = Some((b, d));
                }
                continue;
            }
            if !saw_csv {
                if line.trim() != CSV_HEADER {
                    return Err(err(ln, format!("expected the CSV header `{CSV_HEADER}`, found `{}`", excerpt(line))));
                }
                let Some(_) = model else { return Err(err(ln, "CSV header before the `# model=` line".into())) };
                if let Some(l) = layers.iter().position(Option::is_none) {
                    return Err(err(ln, format!("layer {l} has no `# layer=` line")));
                }
                saw_csv = true;
                continue;
            }
            let (_, _, n_layer, n_expert, k) = model.as_ref().expect("checked at the CSV header");
            rows.push(parse_row(line, *n_layer, *n_expert, *k).map_err(|w| err(ln, w))?);
        }
        if !saw_csv {
            return Err(err(0, "no CSV header: not a complete route trace".into()));
        }
        let (model, arch, _, n_expert, n_expert_used) = model.expect("checked at the CSV header");
        let (expert_bytes, dense_bytes) = layers.into_iter().map(|o| o.expect("checked at the CSV header")).unzip();
        Ok(Self { header: TraceHeader { model, arch, n_expert, n_expert_used, expert_bytes, dense_bytes }, rows })
    }
}

fn parse_kv(s: &str) -> Vec<(&str, &str)> {
    s.split_whitespace().filter_map(|t| t.split_once('=')).collect()
}

/// The largest expert entry a trace may declare (16 GiB; the largest real one is tens of MiB):
/// keeps byte sums of a replay far from overflow.
const MAX_ENTRY_BYTES: u64 = 1 << 34;

fn parse_row(line: &str, n_layer: u32, n_expert: u32, k: u32) -> Result<RouteRow, String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    if f.len() != 9 {
        return Err(format!("expected 9 fields, found {}", f.len()));
    }
    fn int<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
        v.parse().map_err(|_| format!("{name} `{}` is not a non-negative integer", excerpt(v)))
    }
    let phase = match f[1] {
        "0" => Phase::Prefill,
        "1" => Phase::Decode,
        v => return Err(format!("phase `{}` is not 0 (prefill) or 1 (decode)", excerpt(v))),
    };
    let layer: u32 = int("layer", f[3])?;
    if layer >= n_layer {
        return Err(format!("layer {layer} out of range (n_layer={n_layer})"));
    }
    let slot: u32 = int("slot", f[4])?;
    if slot >= k {
        return Err(format!("slot {slot} out of range: a rank of the top-{k} (n_expert_used={k})"));
    }
    let expert: u32 = int("expert", f[5])?;
    if expert >= n_expert {
        return Err(format!("expert {expert} out of range (n_expert={n_expert})"));
    }
    let weight: f32 = f[6].parse().map_err(|_| format!("weight `{}` is not a number", excerpt(f[6])))?;
    if !weight.is_finite() {
        return Err(format!("weight `{}` is not finite", excerpt(f[6])));
    }
    let residency = match f[7] {
        "0" => false,
        "1" => true,
        v => return Err(format!("residency `{}` is not 0 or 1", excerpt(v))),
    };
    Ok(RouteRow {
        turn: int("turn", f[0])?,
        phase,
        step: int("step", f[2])?,
        layer,
        slot,
        expert,
        weight,
        residency,
        expert_bytes: int("expert_bytes", f[8])?,
    })
}

/// Writes `route_trace v1`: the header on creation, then one row per call.
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: W,
    n_layer: u32,
    n_expert: u32,
}

impl<W: Write> TraceWriter<W> {
    /// Write the header.
    ///
    /// # Errors
    /// The writer's I/O error.
    pub fn new(mut out: W, h: &TraceHeader) -> io::Result<Self> {
        writeln!(out, "# route_trace v1")?;
        let model: String = h.model.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
        writeln!(
            out,
            "# model={model} arch={} n_layer={} n_expert={} n_expert_used={}",
            h.arch,
            h.n_layer(),
            h.n_expert,
            h.n_expert_used
        )?;
        for (l, b) in h.expert_bytes.iter().enumerate() {
            writeln!(out, "# layer={l} expert_bytes={b} dense_bytes={}", h.dense_bytes.get(l).copied().unwrap_or(0))?;
        }
        writeln!(out, "{CSV_HEADER}")?;
        Ok(Self { out, n_layer: h.n_layer(), n_expert: h.n_expert })
    }

    /// Write one row.
    ///
    /// # Errors
    /// `InvalidInput` if the row is outside the header's shape; the writer's I/O error.
    pub fn write_row(&mut self, r: &RouteRow) -> io::Result<()> {
        if r.layer >= self.n_layer || r.expert >= self.n_expert || r.slot >= self.n_expert || !r.weight.is_finite() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("route row out of the header's shape: {r:?}"),
            ));
        }
        writeln!(
            self.out,
            "{},{},{},{},{},{},{},{},{}",
            r.turn,
            u8::from(r.phase == Phase::Decode),
            r.step,
            r.layer,
            r.slot,
            r.expert,
            r.weight,
            u8::from(r.residency),
            r.expert_bytes
        )
    }

    /// Flush and return the inner writer.
    ///
    /// # Errors
    /// The flush error.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `s` as a message may echo it: at most 64 characters, control characters escaped, and the
/// length said when cut (an untrusted field can be megabytes of anything).
pub fn excerpt(s: &str) -> String {
    const MAX: usize = 64;
    let mut out: String = s.chars().take(MAX).flat_map(char::escape_debug).collect();
    let n = s.chars().count();
    if n > MAX {
        out.push_str(&format!("… ({n} characters)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "# route_trace v1\n# model=m.gguf arch=qwen3moe n_layer=2 n_expert=4 n_expert_used=2\n\
# layer=0 expert_bytes=100 dense_bytes=7\n# layer=1 expert_bytes=200 dense_bytes=7\n\
turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n\
0,0,0,0,0,1,0.6,0,100\n0,1,1,1,1,3,0.25,1,0\n";

    fn parse(s: &str) -> Result<RouteTrace, TraceError> {
        RouteTrace::parse(s.as_bytes(), "t.csv")
    }

    fn parse_err_line(s: &str) -> (usize, String) {
        match parse(s) {
            Err(TraceError::Parse { line, what, .. }) => (line, what),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn parses_and_round_trips() {
        let t = parse(GOOD).unwrap();
        assert_eq!(t.header.n_layer(), 2);
        assert_eq!(t.header.expert_bytes, vec![100, 200]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1].phase, Phase::Decode);
        assert_eq!(t.rows[1].expert, 3);
        assert!(t.rows[1].residency);
        let mut w = TraceWriter::new(Vec::new(), &t.header).unwrap();
        for r in &t.rows {
            w.write_row(r).unwrap();
        }
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(out, GOOD);
        assert_eq!(parse(&out).unwrap(), t);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(parse_err_line("# route_trace v2\n").0, 1);
        let bad_expert = GOOD.replace("0,1,1,1,1,3,0.25,1,0", "0,1,1,1,1,4,0.25,1,0");
        let (l, w) = parse_err_line(&bad_expert);
        assert_eq!(l, 7);
        assert!(w.contains("expert 4 out of range"), "{w}");
        let bad_layer = GOOD.replace("0,0,0,0,0,1,0.6,0,100", "0,0,0,2,0,1,0.6,0,100");
        assert_eq!(parse_err_line(&bad_layer).0, 6);
        let bad_phase = GOOD.replace("0,0,0,0,0,1,0.6,0,100", "0,2,0,0,0,1,0.6,0,100");
        assert!(parse_err_line(&bad_phase).1.contains("phase"));
        let short = GOOD.replace("0,1,1,1,1,3,0.25,1,0", "0,1,1,1,1,3");
        assert!(parse_err_line(&short).1.contains("9 fields"));
        let nan = GOOD.replace("0.25", "NaN");
        assert!(parse_err_line(&nan).1.contains("not finite"));
        let missing_layer = GOOD.replace("# layer=1 expert_bytes=200 dense_bytes=7\n", "");
        let (l, w) = parse_err_line(&missing_layer);
        assert_eq!((l, w.contains("layer 1 has no")), (4, true));
        let dup = GOOD.replace("# layer=1 ", "# layer=0 ");
        assert!(parse_err_line(&dup).1.contains("declared twice"));
        let bad_header = GOOD.replace("turn,phase", "turn,phaze");
        assert_eq!(parse_err_line(&bad_header).0, 5);
        assert!(parse_err_line("# route_trace v1\n").1.contains("no CSV header"));
    }
}
