//! The table of architectures the index knows: their tensor names, required keys and
//! typed hyper-parameters ([`MoeParams`], read as llama.cpp's loader for that architecture
//! reads them: the arch string and required keys checked once, typed fields after). Adding
//! an MoE architecture is an entry in [`ARCHS`], an [`Arch`] variant and its arm in the parser;
//! nothing else in the index is per-architecture.

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
    /// The models published under this name that this build decodes (for `--list-archs`).
    pub models: &'static str,
    /// What the decoder computes for it, in llama.cpp's terms (for `--list-archs`).
    pub decodes: &'static str,
    /// What streams from the file and what stays resident (for `--list-archs`).
    pub streams: &'static str,
    /// Keys (without the `ARCH.` prefix) that must be present; checked once by the params' parser.
    pub required_keys: &'static [&'static str],
    /// The stacked expert tensors of a MoE layer, `blk.L.<name>.weight`, `[ne0, ne1, n_expert]`.
    pub expert_tensors: &'static [(Proj, &'static str)],
    /// The router, `blk.L.<name>.weight`, `[n_embd, n_expert]`.
    pub router: &'static str,
    /// Parses the typed params.
    pub params: fn(&Metadata) -> Result<ArchParams>,
}

/// The routed experts' tensors, as every architecture of the table names them.
const SWIGLU_EXPERTS: &[(Proj, &str)] =
    &[(Proj::Gate, "ffn_gate_exps"), (Proj::Up, "ffn_up_exps"), (Proj::Down, "ffn_down_exps")];

const ROUTED: &str = "routed experts (gate, up, down) per (layer, expert)";

/// Every architecture this build can index.
pub static ARCHS: &[ArchSpec] = &[
    ArchSpec {
        name: "qwen3moe",
        models: "Qwen3-30B-A3B, Qwen3-235B-A22B",
        decodes: "per-head Q/K RMS norm, NeoX RoPE, GQA; softmax router, top-k, weights normalised; SwiGLU experts",
        streams: ROUTED,
        required_keys: QWEN3MOE_KEYS,
        expert_tensors: SWIGLU_EXPERTS,
        router: "ffn_gate_inp",
        params: |m| parse(m, Arch::Qwen3Moe),
    },
    ArchSpec {
        name: "olmoe",
        models: "OLMoE-1B-7B",
        decodes: "Q/K RMS norm over the whole projection, NeoX RoPE; softmax router, top-k, weights not normalised; \
                  SwiGLU experts",
        streams: ROUTED,
        required_keys: LLAMA_STYLE_KEYS,
        expert_tensors: SWIGLU_EXPERTS,
        router: "ffn_gate_inp",
        params: |m| parse(m, Arch::Olmoe),
    },
    ArchSpec {
        name: "llama",
        models: "Mixtral-8x7B, Mixtral-8x22B (llama with expert_count > 0; dense llama is not streamed)",
        decodes: "normal (adjacent-pair) RoPE, GQA; softmax router, top-k, weights normalised; SwiGLU experts",
        streams: ROUTED,
        required_keys: LLAMA_STYLE_KEYS,
        expert_tensors: SWIGLU_EXPERTS,
        router: "ffn_gate_inp",
        params: |m| parse(m, Arch::Mixtral),
    },
    ArchSpec {
        name: "qwen2moe",
        models: "Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B",
        decodes: "Q/K/V biases, NeoX RoPE; softmax router, top-k, weights not normalised; SwiGLU experts plus a \
                  shared SwiGLU expert behind a sigmoid gate",
        streams: "routed experts per (layer, expert); the shared expert stays resident with the dense weights",
        required_keys: QWEN2MOE_KEYS,
        expert_tensors: SWIGLU_EXPERTS,
        router: "ffn_gate_inp",
        params: |m| parse(m, Arch::Qwen2Moe),
    },
];

/// The spec of architecture `name`.
pub fn arch_spec(name: &str) -> Option<&'static ArchSpec> {
    ARCHS.iter().find(|a| a.name == name)
}

/// The architectures the decoder knows, as families of llama.cpp graph builders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// `qwen3moe` (llama.cpp `src/models/qwen3moe.cpp`).
    Qwen3Moe,
    /// `olmoe` (`src/models/olmoe.cpp`).
    Olmoe,
    /// `llama` with experts: Mixtral (`src/models/llama.cpp`).
    Mixtral,
    /// `qwen2moe` (`src/models/qwen2moe.cpp`).
    Qwen2Moe,
}

impl Arch {
    /// `general.architecture` of this family.
    pub fn gguf_name(self) -> &'static str {
        match self {
            Arch::Qwen3Moe => "qwen3moe",
            Arch::Olmoe => "olmoe",
            Arch::Mixtral => "llama",
            Arch::Qwen2Moe => "qwen2moe",
        }
    }
}

/// Typed hyper-parameters of a known architecture.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchParams {
    pub arch: Arch,
    pub hp: MoeParams,
}

impl ArchParams {
    /// The MoE shape the index needs.
    pub fn moe(&self) -> MoeShape {
        let p = &self.hp;
        MoeShape {
            n_layer: p.n_layer,
            n_embd: p.n_embd,
            n_ff_exp: p.n_ff_exp,
            n_expert: p.n_expert,
            n_expert_used: p.n_expert_used,
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

/// olmoe and llama (Mixtral): the experts' hidden size is `feed_forward_length`.
const LLAMA_STYLE_KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.layer_norm_rms_epsilon",
    "expert_count",
    "expert_used_count",
];

/// qwen2moe: the expert sizes have fallbacks on `feed_forward_length` (see [`parse`]).
const QWEN2MOE_KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "attention.head_count",
    "attention.layer_norm_rms_epsilon",
    "expert_count",
    "expert_used_count",
];

/// Hyper-parameters of a MoE transformer of the table, as llama.cpp reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct MoeParams {
    pub n_layer: u32,
    pub n_ctx_train: u64,
    pub n_embd: u64,
    pub n_head: u32,
    pub n_head_kv: u32,
    /// Per-head dimension of q/k (`attention.key_length`, default `n_embd / n_head`).
    pub head_dim: u64,
    pub n_expert: u32,
    pub n_expert_used: u32,
    /// Hidden size of one routed expert.
    pub n_ff_exp: u64,
    /// Hidden size of the shared expert (0: none).
    pub n_ff_shexp: u64,
    pub rms_eps: f64,
    pub rope_freq_base: f64,
    /// Divide the top-k router weights by their sum. qwen3moe: `expert_weights_norm`, absent
    /// means true (its graph always does); llama (Mixtral) always; olmoe and qwen2moe never
    /// (their graphs pass `norm_w = false` whatever the file says).
    pub expert_weights_norm: bool,
    /// Scale applied to the router weights (0 = none). Only qwen3moe reads
    /// `expert_weights_scale`; for the others llama.cpp never loads the key.
    pub expert_weights_scale: f64,
}

/// The parameters of qwen3moe (the name before the table had more than one entry).
pub type Qwen3MoeParams = MoeParams;

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

impl Keys<'_> {
    fn boolean(&self, k: &str, default: bool) -> Result<bool> {
        match self.m.get(&self.key(k)) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Error::KeyType { key: self.key(k), expected: "a bool" }),
        }
    }
}

/// Checks the architecture string and the required keys of `arch`, then reads its params.
fn parse(m: &Metadata, arch: Arch) -> Result<ArchParams> {
    let name = arch.gguf_name();
    match m.get_str("general.architecture") {
        Some(a) if a == name => {}
        other => return Err(Error::WrongArch { expected: name, found: other.unwrap_or("<missing>").to_string() }),
    }
    let k = Keys { m, arch: name };
    if arch == Arch::Mixtral {
        // A llama without experts is a dense model: not a MoE to stream.
        let key = k.key("expert_count");
        if m.get(&key).and_then(Value::as_u64).unwrap_or(0) == 0 {
            return Err(Error::NotMoe { arch: name.to_string() });
        }
    }
    let spec = arch_spec(name).expect("every Arch has a table entry");
    for key in spec.required_keys {
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
    // Full rotary only (llama.cpp asserts n_rot == head size in these graphs).
    let n_rot = k.uint_or("rope.dimension_count", MAX_DIM, head_dim)?;
    if n_rot != head_dim {
        return Err(Error::BadParam {
            key: k.key("rope.dimension_count"),
            value: n_rot.to_string(),
            why: format!("partial rotary is not supported (head size {head_dim})"),
        });
    }
    if k.get("attention.value_length").is_ok() && k.uint("attention.value_length", MAX_DIM)? != head_dim {
        return Err(Error::BadParam {
            key: k.key("attention.value_length"),
            value: k.uint("attention.value_length", MAX_DIM)?.to_string(),
            why: format!("differs from the key length {head_dim}"),
        });
    }
    let (n_ff_exp, n_ff_shexp, norm, scale) = match arch {
        Arch::Qwen3Moe => (
            k.uint("expert_feed_forward_length", MAX_DIM)?,
            0,
            k.boolean("expert_weights_norm", true)?,
            match m.get(&k.key("expert_weights_scale")) {
                None => 0.0,
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| Error::KeyType { key: k.key("expert_weights_scale"), expected: "a number >= 0" })?,
            },
        ),
        // llama.cpp's olmoe and llama graphs size the experts with n_ff.
        Arch::Olmoe => (k.uint("feed_forward_length", MAX_DIM)?, 0, false, 0.0),
        Arch::Mixtral => (k.uint("feed_forward_length", MAX_DIM)?, 0, true, 0.0),
        Arch::Qwen2Moe => {
            // As llama_model_qwen2moe::load_arch_tensors: n_ff_exp defaults to n_ff / k, the
            // shared expert's to n_ff.
            let n_ff = || k.uint("feed_forward_length", MAX_DIM);
            let exp = if k.get("expert_feed_forward_length").is_ok() {
                k.uint("expert_feed_forward_length", MAX_DIM)?
            } else {
                n_ff()? / u64::from(n_expert_used)
            };
            let shexp = if k.get("expert_shared_feed_forward_length").is_ok() {
                k.uint("expert_shared_feed_forward_length", MAX_DIM)?
            } else {
                n_ff()?
            };
            (exp, shexp, false, 0.0)
        }
    };
    if n_ff_exp == 0 {
        return Err(Error::BadParam {
            key: k.key("expert_feed_forward_length"),
            value: "0".into(),
            why: "experts need a hidden size".into(),
        });
    }
    let hp = MoeParams {
        n_layer: k.uint("block_count", MAX_LAYERS)? as u32,
        n_ctx_train: k.uint("context_length", u64::from(u32::MAX))?,
        n_embd,
        n_head,
        n_head_kv,
        head_dim,
        n_expert,
        n_expert_used,
        n_ff_exp,
        n_ff_shexp,
        rms_eps: k.float("attention.layer_norm_rms_epsilon")?,
        rope_freq_base: if m.get(&k.key("rope.freq_base")).is_some() { k.float("rope.freq_base")? } else { 10_000.0 },
        expert_weights_norm: norm,
        expert_weights_scale: scale,
    };
    Ok(ArchParams { arch, hp })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(arch: &str, kv: &[(&str, u32)]) -> Metadata {
        let mut m = Metadata::new();
        m.insert("general.architecture", Value::String(arch.into()));
        m.insert(format!("{arch}.attention.layer_norm_rms_epsilon"), Value::F32(1e-6));
        for &(k, v) in kv {
            m.insert(format!("{arch}.{k}"), Value::U32(v));
        }
        m
    }

    const BASE: &[(&str, u32)] = &[
        ("block_count", 2),
        ("context_length", 64),
        ("embedding_length", 256),
        ("attention.head_count", 4),
        ("expert_count", 8),
        ("expert_used_count", 2),
    ];

    #[test]
    fn qwen2moe_sizes_fall_back_on_feed_forward_length() {
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 1024));
        let p = parse(&meta("qwen2moe", &kv), Arch::Qwen2Moe).unwrap().hp;
        assert_eq!((p.n_ff_exp, p.n_ff_shexp, p.expert_weights_norm), (512, 1024, false));
        kv.extend([("expert_feed_forward_length", 128), ("expert_shared_feed_forward_length", 384)]);
        let p = parse(&meta("qwen2moe", &kv), Arch::Qwen2Moe).unwrap().hp;
        assert_eq!((p.n_ff_exp, p.n_ff_shexp), (128, 384));
    }

    #[test]
    fn llama_experts_are_feed_forward_length_and_a_dense_llama_is_not_moe() {
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 768));
        let p = parse(&meta("llama", &kv), Arch::Mixtral).unwrap().hp;
        assert_eq!((p.n_ff_exp, p.n_ff_shexp, p.expert_weights_norm, p.head_dim), (768, 0, true, 64));
        let dense: Vec<_> = kv.iter().copied().filter(|(k, _)| !k.starts_with("expert_")).collect();
        assert!(matches!(parse(&meta("llama", &dense), Arch::Mixtral), Err(Error::NotMoe { .. })));
        // Partial rotary is refused, not silently decoded wrong.
        kv.push(("rope.dimension_count", 32));
        assert!(matches!(parse(&meta("llama", &kv), Arch::Mixtral), Err(Error::BadParam { .. })));
    }

    #[test]
    fn olmoe_weights_are_never_normalised() {
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 512));
        let mut m = meta("olmoe", &kv);
        m.insert("olmoe.expert_weights_norm", Value::Bool(true));
        let p = parse(&m, Arch::Olmoe).unwrap().hp;
        assert!(!p.expert_weights_norm, "llama.cpp's olmoe graph passes norm_w = false");
        assert!(matches!(parse(&m, Arch::Qwen2Moe), Err(Error::WrongArch { .. })));
    }
}
