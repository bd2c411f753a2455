//! The quality of the lossy knobs (`bmoe-bench quality`): every cell is teacher-forced on one
//! fixed token sequence (seeded, the same for every cell), and its logits at each decode
//! position are compared with the lossless run's on the same sequence: the share of positions
//! whose top-1 token agrees, and the mean KL divergence KL(lossless ‖ knob) of the softmaxed
//! logits. With `--route-replay`, every cell and the reference decode with a real trace's
//! routing, for the knobs that do not need the router's own decisions (`--drop-cold-experts`
//! and `--n-expert-used` do not; `--route-ahead` does and is refused there by the engine).
//!
//! The prompt part of the sequence is one prefill (no knob acts on it); the rest is one decode
//! step per token, each a position compared. Cells name a few `bmoe run` flags, translated here
//! into the engine's builder (research variants live with the research tools).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use bmoe::engine::cache::CachePolicy;
use bmoe::engine::io::EngineOptions;
use bmoe::{CacheSize, Engine, EngineBuilder, MoeStream, Overlap, StreamOptions};

/// One configuration: `NAME=ARGS`, ARGS among the flags [`Settings::apply`] knows.
#[derive(Clone, Debug, PartialEq)]
pub struct QualityCell {
    pub name: String,
    pub args: Vec<String>,
}

impl QualityCell {
    /// `NAME=ARGS` (ARGS split on white space; may be empty).
    ///
    /// # Errors
    /// Without `=`, or an empty name.
    pub fn parse(spec: &str) -> anyhow::Result<Self> {
        let (name, args) =
            spec.split_once('=').context("a cell is NAME=ARGS, e.g. drop-0.5=--drop-cold-experts 0.5")?;
        if name.trim().is_empty() {
            bail!("cell `{spec}`: empty name");
        }
        Ok(Self { name: name.trim().into(), args: args.split_whitespace().map(String::from).collect() })
    }
}

/// What every engine of a quality run shares, and what a cell may change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    pub threads: Option<usize>,
    pub ctx: u32,
    pub cache: Option<CacheSize>,
    pub overlap: Option<Overlap>,
    pub stream: Option<MoeStream>,
    pub lanes: Option<usize>,
    pub policy: Option<CachePolicy>,
    pub n_expert_used: Option<u32>,
    pub drop_cold: Option<f32>,
    pub route_ahead: Option<u32>,
    pub replay: Option<PathBuf>,
}

impl Settings {
    /// Take `args` (`bmoe run` flags): `--drop-cold-experts F`, `--route-ahead L`,
    /// `--n-expert-used K`, `--cache-mb SIZE|auto`, `--overlap off|full|pipeline|lookahead`,
    /// `--moe-stream on|off|auto`, `--io-threads N`, `--cache-policy P`, `-t N`, `-c N`,
    /// `--route-replay TRACE`.
    ///
    /// # Errors
    /// A flag it does not know, or a value that does not parse.
    pub fn apply(&mut self, args: &[String]) -> anyhow::Result<()> {
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
            let bad = |v: &str| format!("{flag} {v}");
            match flag.as_str() {
                "--drop-cold-experts" => {
                    let v = value()?;
                    self.drop_cold = Some(v.parse().with_context(|| bad(v))?);
                }
                "--route-ahead" => {
                    let v = value()?;
                    self.route_ahead = Some(v.parse().with_context(|| bad(v))?);
                }
                "--n-expert-used" => {
                    let v = value()?;
                    self.n_expert_used = Some(v.parse().with_context(|| bad(v))?);
                }
                "--cache-mb" => {
                    let v = value()?;
                    self.cache = Some(v.parse::<CacheSize>().map_err(|e| anyhow::anyhow!("{}: {e}", bad(v)))?);
                }
                "--overlap" => {
                    let v = value()?;
                    self.overlap = Some(match v.as_str() {
                        "off" => Overlap::Off,
                        "full" => Overlap::Full,
                        "pipeline" => Overlap::Pipeline,
                        "lookahead" => Overlap::Lookahead,
                        _ => bail!("{}: off, full, pipeline or lookahead", bad(v)),
                    });
                }
                "--moe-stream" => {
                    let v = value()?;
                    self.stream = Some(match v.as_str() {
                        "on" => MoeStream::On,
                        "off" => MoeStream::Off,
                        "auto" => MoeStream::Auto,
                        _ => bail!("{}: on, off or auto", bad(v)),
                    });
                }
                "--io-threads" => {
                    let v = value()?;
                    self.lanes = Some(v.parse().with_context(|| bad(v))?);
                }
                "--cache-policy" => {
                    let v = value()?;
                    self.policy = Some(v.parse().map_err(|e| anyhow::anyhow!("{}: {e}", bad(v)))?);
                }
                "-t" | "--threads" => {
                    let v = value()?;
                    self.threads = Some(v.parse().with_context(|| bad(v))?);
                }
                "-c" | "--ctx-size" => {
                    let v = value()?;
                    self.ctx = v.parse().with_context(|| bad(v))?;
                }
                "--route-replay" => self.replay = Some(PathBuf::from(value()?)),
                other => bail!(
                    "`{other}`: a quality cell takes --drop-cold-experts, --route-ahead, --n-expert-used, --cache-mb, --overlap, --moe-stream, --io-threads, --cache-policy, -t, -c, --route-replay"
                ),
            }
        }
        Ok(())
    }

    /// The engine these settings describe.
    pub fn builder(&self, model: &Path) -> EngineBuilder {
        let stream = StreamOptions {
            cache: self.cache.unwrap_or(CacheSize::Auto),
            force: matches!(self.cache, Some(CacheSize::Bytes(_))),
            policy: self.policy.unwrap_or(CachePolicy::DEFAULT),
            io: EngineOptions { lanes: self.lanes.unwrap_or(4), ..EngineOptions::default() },
            overlap: self.overlap.unwrap_or(Overlap::Full),
            ..StreamOptions::default()
        };
        let mut b = Engine::builder(model)
            .moe_stream(self.stream.unwrap_or(MoeStream::Auto))
            .stream(stream)
            .context(self.ctx)
            .ubatch_auto()
            .n_expert_used(self.n_expert_used)
            .drop_cold_experts(self.drop_cold)
            .route_ahead(self.route_ahead)
            .route_replay(self.replay.clone());
        if let Some(t) = self.threads {
            b = b.threads(t);
        }
        b
    }

    /// Whether a lossy knob that changes the logits is set (the reference must have none).
    pub fn lossy(&self) -> bool {
        self.drop_cold.is_some() || self.route_ahead.is_some() || self.n_expert_used.is_some()
    }
}

/// The fixed sequence: `len` token ids from a seeded xorshift over the vocabulary (the same for
/// every cell of a run).
pub fn sequence(n_vocab: usize, len: usize, seed: u64) -> Vec<i32> {
    let mut x = seed ^ 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n_vocab.max(1) as u64) as i32
        })
        .collect()
}

/// The log-softmax of `logits`, in f64.
pub fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|&x| (x as f64 - max).exp()).sum();
    let lse = max + sum.ln();
    logits.iter().map(|&x| x as f64 - lse).collect()
}

/// KL(p ‖ q) of two distributions given as log-probabilities.
pub fn kl(logp: &[f64], logq: &[f64]) -> f64 {
    logp.iter().zip(logq).map(|(&a, &b)| a.exp() * (a - b)).sum::<f64>().max(0.0)
}

/// The index of the largest logit (the first of equals).
pub fn argmax(l: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in l.iter().enumerate() {
        if x > l[best] {
            best = i;
        }
    }
    best
}

/// What one cell measured against the reference.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QualityRow {
    pub name: String,
    pub args: String,
    /// Decode positions compared.
    pub positions: usize,
    /// Positions whose top-1 token agrees with the lossless run's, %.
    pub top1_pct: f64,
    /// Mean KL(lossless ‖ this) over the positions, nats.
    pub mean_kl: f64,
    /// The largest KL of a position.
    pub max_kl: f64,
    /// `--drop-cold-experts`: routings dropped, %, and the router weight discarded, %.
    pub drop_pct: Option<f64>,
    pub drop_weight_pct: Option<f64>,
    /// `--route-ahead`: routings not the layer's own router's, %.
    pub ahead_mismatch_pct: Option<f64>,
    /// Expert MiB read per decode position (streaming only).
    pub read_mib_per_token: Option<f64>,
    /// Hit % of the routed experts in decode (streaming only).
    pub hit_pct: Option<f64>,
}

/// Teacher-force `engine` on `seq` (the first `prompt` tokens as one prefill) and call
/// `each(position, logits)` for every decode step's logits.
///
/// # Errors
/// The engine's.
pub fn teacher_forced(
    engine: &mut Engine,
    seq: &[i32],
    prompt: usize,
    each: &mut dyn FnMut(usize, &[f32]),
) -> anyhow::Result<()> {
    engine.reset();
    engine.eval(&seq[..prompt])?;
    for (i, &t) in seq[prompt..].iter().enumerate() {
        let l = engine.eval(&[t])?;
        each(i, &l);
    }
    Ok(())
}

/// Run the reference (`base` alone) and every cell (`base` then the cell's flags) on the same
/// sequence of `prompt + tokens` ids from `seed`, one engine at a time; a row per cell.
///
/// # Errors
/// A cell whose flags do not parse, a reference with a lossy knob, an engine that does not
/// open or fails.
pub fn run(
    model: &Path,
    base: &Settings,
    cells: &[QualityCell],
    prompt: usize,
    tokens: usize,
    seed: u64,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<Vec<QualityRow>> {
    if base.drop_cold.is_some() || base.route_ahead.is_some() {
        bail!("the reference is lossless: no --drop-cold-experts or --route-ahead in the common flags");
    }
    let mut settings = Vec::new();
    for c in cells {
        let mut s = base.clone();
        s.apply(&c.args).with_context(|| format!("cell {}", c.name))?;
        settings.push(s);
    }
    progress("reference (lossless)");
    let mut reference = base.builder(model).open().context("opening the reference")?;
    let n_vocab = reference.tokenizer().n_vocab();
    let seq = sequence(n_vocab, prompt + tokens, seed);
    let mut want: Vec<Vec<f64>> = Vec::with_capacity(tokens);
    let mut top: Vec<usize> = Vec::with_capacity(tokens);
    teacher_forced(&mut reference, &seq, prompt, &mut |_, l| {
        want.push(log_softmax(l));
        top.push(argmax(l));
    })?;
    drop(reference);
    let mut rows = Vec::new();
    for (c, s) in cells.iter().zip(&settings) {
        progress(&format!("cell {} ({})", c.name, c.args.join(" ")));
        let mut e = s.builder(model).open().with_context(|| format!("opening cell {}", c.name))?;
        let (mut same, mut sum_kl, mut max_kl) = (0usize, 0.0f64, 0.0f64);
        e.reset();
        e.eval(&seq[..prompt])?;
        let (t_decode, l0) = (e.telemetry(), e.lossy_counters());
        for (i, &t) in seq[prompt..].iter().enumerate() {
            let l = e.eval(&[t])?;
            same += usize::from(argmax(&l) == top[i]);
            let d = kl(&want[i], &log_softmax(&l));
            sum_kl += d;
            max_kl = max_kl.max(d);
        }
        let (t1, l1) = (e.telemetry(), e.lossy_counters());
        let c_l = l1.map(|b| b - l0.unwrap_or_default());
        let pct = |a: f64, b: f64| (b > 0.0).then(|| 100.0 * a / b);
        let (read, hit) = match (t_decode.provider, t1.provider) {
            (Some(a), Some(b)) => {
                let routed = (b.hits + b.misses - a.hits - a.misses) as f64;
                (
                    Some((b.bytes_read - a.bytes_read) as f64 / (1u64 << 20) as f64 / tokens.max(1) as f64),
                    pct((b.hits - a.hits) as f64, routed),
                )
            }
            _ => (None, None),
        };
        rows.push(QualityRow {
            name: c.name.clone(),
            args: c.args.join(" "),
            positions: tokens,
            top1_pct: 100.0 * same as f64 / tokens.max(1) as f64,
            mean_kl: sum_kl / tokens.max(1) as f64,
            max_kl,
            drop_pct: c_l
                .filter(|_| s.drop_cold.is_some())
                .and_then(|c| pct(c.dropped as f64, c.drop_considered as f64)),
            drop_weight_pct: c_l
                .filter(|_| s.drop_cold.is_some())
                .and_then(|c| pct(c.drop_weight_dropped, c.drop_weight_all)),
            ahead_mismatch_pct: c_l
                .filter(|_| s.route_ahead.is_some())
                .and_then(|c| pct(c.ahead_mismatched as f64, c.ahead_routings as f64)),
            read_mib_per_token: read,
            hit_pct: hit,
        });
    }
    Ok(rows)
}

/// The rows as a markdown table.
pub fn markdown(rows: &[QualityRow]) -> String {
    let f = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| format!("{v:.d$}"));
    let mut s = String::from(
        "| cell | args | positions | top-1 agree % | mean KL (nats) | max KL | drop % | weight dropped % | route-ahead mismatch % | MiB/token | hit % |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | `{}` | {} | {:.1} | {:.5} | {:.4} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.args,
            r.positions,
            r.top1_pct,
            r.mean_kl,
            r.max_kl,
            f(r.drop_pct, 1),
            f(r.drop_weight_pct, 2),
            f(r.ahead_mismatch_pct, 1),
            f(r.read_mib_per_token, 1),
            f(r.hit_pct, 1),
        );
    }
    s
}

/// One row as a JSON object (for scripts).
pub fn json(r: &QualityRow) -> serde_json::Value {
    serde_json::json!({
        "cell": r.name, "args": r.args, "positions": r.positions, "top1_pct": r.top1_pct,
        "mean_kl": r.mean_kl, "max_kl": r.max_kl, "drop_pct": r.drop_pct, "drop_weight_pct": r.drop_weight_pct,
        "route_ahead_mismatch_pct": r.ahead_mismatch_pct, "read_MiB_per_token": r.read_mib_per_token,
        "hit_pct": r.hit_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kl_and_softmax() {
        let p = log_softmax(&[1.0, 2.0, 3.0]);
        assert!((p.iter().map(|x| x.exp()).sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(kl(&p, &p), 0.0);
        let q = log_softmax(&[3.0, 2.0, 1.0]);
        assert!(kl(&p, &q) > 0.5);
        assert_eq!(argmax(&[0.5, 2.0, 2.0, -1.0]), 1);
    }

    #[test]
    fn the_sequence_is_fixed_by_its_seed() {
        let a = sequence(1000, 64, 7);
        assert_eq!(a, sequence(1000, 64, 7));
        assert_ne!(a, sequence(1000, 64, 8));
        assert!(a.iter().all(|&t| (0..1000).contains(&t)));
    }

    #[test]
    fn cells_take_the_knobs_and_refuse_the_rest() {
        let mut s = Settings { ctx: 256, ..Settings::default() };
        let c = QualityCell::parse("drop=--drop-cold-experts 0.5 --cache-mb 0 --overlap off").unwrap();
        s.apply(&c.args).unwrap();
        assert_eq!((s.drop_cold, s.cache, s.overlap), (Some(0.5), Some(CacheSize::Bytes(0)), Some(Overlap::Off)));
        assert!(s.lossy());
        assert!(s.apply(&["--temp".into(), "1".into()]).is_err());
        assert!(s.apply(&["--route-ahead".into()]).is_err());
        assert!(QualityCell::parse("no-equals").is_err());
        assert_eq!(QualityCell::parse("ref=").unwrap().args, Vec::<String>::new());
    }
}
