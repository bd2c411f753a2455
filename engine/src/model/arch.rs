//! The table of architectures the index knows: their tensor names, required keys and
//! typed hyper-parameters. Adding an MoE architecture is an entry in [`ARCHS`] plus its
//! params struct; nothing else in the index is per-architecture.

use super::{Error, Result};
use crate::gguf::{Metadata, Value};

/// One projection of an expert's FFN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proj {
    Gate,
    Up,
    Down,
    /// Gate and up fused in one tensor (rows `[0, n_ff)` gate, `[n_ff, 2 n_ff)` up).
    GateUp,
}

impl Proj {
    /// Short name (`gate`, `up`, `down`, `gate_up`).
    pub fn name(self) -> &'static str {
        match self {
            Proj::Gate => "gate",
            Proj::Up => "up",
            Proj::Down => "down",
            Proj::GateUp => "gate_up",
        }
    }

    /// The `[ne0, ne1]` of one expert's slice of this projection, for `n_embd` and `n_ff`.
    pub fn expert_dims(self, n_embd: u64, n_ff: u64) -> [u64; 2] {
        match self {
            Proj::Gate | Proj::Up => [n_embd, n_ff],
            Proj::Down => [n_ff, n_embd],
            Proj::GateUp => [n_embd, 2 * n_ff],
        }
    }
}

/// What every MoE architecture's params reduce to for the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeShape {
    pub n_layer: u32,
    pub n_embd: u64,
    /// Hidden size of one expert's FFN.
    pub n_ff_exp: u64,
    pub n_expert: u32,
    /// Experts routed per token (top-k).
    pub n_expert_used: u32,
}

/// An architecture's entry in the table.
#[derive(Debug)]
pub struct ArchSpec {
    /// `general.architecture`.
    pub name: &'static str,
    /// Keys (without the `ARCH.` prefix) that must be present; checked once by the params' `TryFrom`.
    pub required_keys: &'static [&'static str],
    /// The stacked expert tensors of a MoE layer, `blk.L.<name>.weight`, `[ne0, ne1, n_expert]`.
    pub expert_tensors: &'static [(Proj, &'static str)],
    /// The router, `blk.L.<name>.weight`, `[n_embd, n_expert]`.
    pub router: &'static str,
    /// Parses the typed params.
    pub params: fn(&Metadata) -> Result<ArchParams>,
}

/// Every architecture this build can index.
pub static ARCHS: &[ArchSpec] = &[ArchSpec {
    name: "qwen3moe",
    required_keys: QWEN3MOE_KEYS,
    expert_tensors: &[(Proj::Gate, "ffn_gate_exps"), (Proj::Up, "ffn_up_exps"), (Proj::Down, "ffn_down_exps")],
    router: "ffn_gate_inp",
    params: |m| Qwen3MoeParams::try_from(m).map(ArchParams::Qwen3Moe),
}];

/// The spec of architecture `name`.
pub fn arch_spec(name: &str) -> Option<&'static ArchSpec> {
    ARCHS.iter().find(|a| a.name == name)
}

/// Typed hyper-parameters of a known architecture.
#[derive(Clone, Debug, PartialEq)]
pub enum ArchParams {
    Qwen3Moe(Qwen3MoeParams),
}

impl ArchParams {
    /// The MoE shape the index needs.
    pub fn moe(&self) -> MoeShape {
        match self {
            ArchParams::Qwen3Moe(p) => MoeShape {
                n_layer: p.n_layer,
                n_embd: p.n_embd,
                n_ff_exp: p.n_ff_exp,
                n_expert: p.n_expert,
                n_expert_used: p.n_expert_used,
            },
        }
    }
}

const QWEN3MOE_KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "attention.head_count",
    "attention.layer_norm_rms_epsilon",
    "expert_count",
    "expert_used_count",
    "expert_feed_forward_length",
];

/// Hyper-parameters of `qwen3moe` (Qwen3-30B-A3B, Qwen3-235B-A22B), as llama.cpp reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct Qwen3MoeParams {
    pub n_layer: u32,
    pub n_ctx_train: u64,
    pub n_embd: u64,
    pub n_head: u32,
    pub n_head_kv: u32,
    /// Per-head dimension of q/k (`attention.key_length`, default `n_embd / n_head`).
    pub head_dim: u64,
    pub n_expert: u32,
    pub n_expert_used: u32,
    pub n_ff_exp: u64,
    pub rms_eps: f64,
    pub rope_freq_base: f64,
    /// Divide the top-k router weights by their sum (`expert_weights_norm`; llama.cpp's
    /// qwen3moe graph always does, so absent means true).
    pub expert_weights_norm: bool,
    /// Scale applied to the router weights (`expert_weights_scale`; 0 or absent = none).
    pub expert_weights_scale: f64,
}

/// Typed access to `ARCH.key` with the error naming the full key.
struct Keys<'a> {
    m: &'a Metadata,
    arch: &'static str,
}

impl Keys<'_> {
    fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.arch)
    }

    fn get(&self, k: &str) -> Result<&Value> {
        self.m.get(&self.key(k)).ok_or_else(|| Error::MissingKey { key: self.key(k) })
    }

    fn uint(&self, k: &str, max: u64) -> Result<u64> {
        let v = self.get(k)?;
        let n = v.as_u64().ok_or_else(|| Error::KeyType { key: self.key(k), expected: "a non-negative integer" })?;
        if n == 0 || n > max {
            return Err(Error::BadParam {
                key: self.key(k),
                value: n.to_string(),
                why: format!("must be in 1..={max}"),
            });
        }
        Ok(n)
    }

    fn uint_or(&self, k: &str, max: u64, default: u64) -> Result<u64> {
        if self.m.get(&self.key(k)).is_none() {
            return Ok(default);
        }
        self.uint(k, max)
    }

    fn float(&self, k: &str) -> Result<f64> {
        let v = self.get(k)?;
        let x = v.as_f64().ok_or_else(|| Error::KeyType { key: self.key(k), expected: "a number" })?;
        if !x.is_finite() || x <= 0.0 {
            return Err(Error::BadParam {
                key: self.key(k),
                value: x.to_string(),
                why: "must be finite and positive".into(),
            });
        }
        Ok(x)
    }
}

/// Sanity bounds: generous for real models, small enough that products cannot overflow.
const MAX_LAYERS: u64 = 1 << 12;
const MAX_DIM: u64 = 1 << 20;
const MAX_EXPERTS: u64 = 1 << 14;

impl TryFrom<&Metadata> for Qwen3MoeParams {
    type Error = Error;

    fn try_from(m: &Metadata) -> Result<Self> {
        let arch = "qwen3moe";
        match m.get_str("general.architecture") {
            Some(a) if a == arch => {}
            other => return Err(Error::WrongArch { expected: arch, found: other.unwrap_or("<missing>").to_string() }),
        }
        let k = Keys { m, arch };
        for key in QWEN3MOE_KEYS {
            k.get(key)?;
        }
        let n_embd = k.uint("embedding_length", MAX_DIM)?;
        let n_head = k.uint("attention.head_count", MAX_DIM)? as u32;
        let n_head_kv = k.uint_or("attention.head_count_kv", MAX_DIM, n_head.into())? as u32;
        let head_dim = k.uint_or("attention.key_length", MAX_DIM, n_embd / u64::from(n_head))?;
        let n_expert = k.uint("expert_count", MAX_EXPERTS)? as u32;
        let n_expert_used = k.uint("expert_used_count", MAX_EXPERTS)? as u32;
        if n_expert_used > n_expert {
            return Err(Error::BadParam {
                key: k.key("expert_used_count"),
                value: n_expert_used.to_string(),
                why: format!("more than expert_count {n_expert}"),
            });
        }
        if n_head % n_head_kv != 0 {
            return Err(Error::BadParam {
                key: k.key("attention.head_count_kv"),
                value: n_head_kv.to_string(),
                why: format!("does not divide head_count {n_head}"),
            });
        }
        Ok(Self {
            n_layer: k.uint("block_count", MAX_LAYERS)? as u32,
            n_ctx_train: k.uint("context_length", u64::from(u32::MAX))?,
            n_embd,
            n_head,
            n_head_kv,
            head_dim,
            n_expert,
            n_expert_used,
            n_ff_exp: k.uint("expert_feed_forward_length", MAX_DIM)?,
            rms_eps: k.float("attention.layer_norm_rms_epsilon")?,
            rope_freq_base: if m.get(&k.key("rope.freq_base")).is_some() {
                k.float("rope.freq_base")?
            } else {
                10_000.0
            },
            expert_weights_norm: match m.get(&k.key("expert_weights_norm")) {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(Error::KeyType { key: k.key("expert_weights_norm"), expected: "a bool" }),
            },
            expert_weights_scale: match m.get(&k.key("expert_weights_scale")) {
                None => 0.0,
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| Error::KeyType { key: k.key("expert_weights_scale"), expected: "a number >= 0" })?,
            },
        })
    }
}
