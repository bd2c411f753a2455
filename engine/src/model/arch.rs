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
    ArchSpec {
        name: "gpt-oss",
        models: "gpt-oss-20b, gpt-oss-120b",
        decodes: "Q/K/V/O biases, attention sinks, sliding-window attention on alternate layers, YaRN NeoX RoPE; \
                  router with bias, softmax over the top-k logits; clamped SwiGLU (alpha 1.702, limit 7) experts \
                  with biases",
        streams: "routed experts (gate, up, down) per (layer, expert); the experts' biases stay resident with the \
                  dense weights",
        // As qwen3moe's; `attention.sliding_window`, also required, is read by the parser.
        required_keys: QWEN3MOE_KEYS,
        expert_tensors: SWIGLU_EXPERTS,
        router: "ffn_gate_inp",
        params: |m| parse(m, Arch::GptOss),
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
    /// `gpt-oss` (llama.cpp's `LLM_ARCH_OPENAI_MOE`, `src/models/openai-moe.cpp`).
    GptOss,
}

impl Arch {
    /// `general.architecture` of this family.
    pub fn gguf_name(self) -> &'static str {
        match self {
            Arch::Qwen3Moe => "qwen3moe",
            Arch::Olmoe => "olmoe",
            Arch::Mixtral => "llama",
            Arch::Qwen2Moe => "qwen2moe",
            Arch::GptOss => "gpt-oss",
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

/// How the router turns logits into the top-k experts' weights (llama.cpp's
/// `llama_expert_gating_func_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gating {
    /// Softmax over all experts, then the top-k of the probabilities (`SOFTMAX`).
    Softmax,
    /// Top-k of the logits, then a softmax over those k (`SOFTMAX_WEIGHT`, gpt-oss).
    SoftmaxWeight,
}

/// RoPE as a llama.cpp context computes it from the file's scaling keys
/// (`llama_context::llama_context`: `rope.scaling.type`, `.factor`, `.attn_factor`,
/// `.original_context_length`), for every architecture: without those keys, plain RoPE.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeScaling {
    /// Position scale, `1 / rope.scaling.factor` (1: none).
    pub freq_scale: f32,
    /// YaRN extrapolation mix: 1 for `yarn`, else 0.
    pub ext_factor: f32,
    /// The attention factor ggml's rope multiplies by (YaRN's magnitude correction, which
    /// llama.cpp pre-divides by the factor ggml applies itself).
    pub attn_factor: f32,
    pub beta_fast: f32,
    pub beta_slow: f32,
    /// `rope.scaling.original_context_length`, else the training context.
    pub n_ctx_orig: u32,
}

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
    /// How the router's top-k weights are computed.
    pub gating: Gating,
    pub rope: RopeScaling,
    /// Sliding-window size (0: every layer attends to the whole context).
    pub n_swa: u32,
    /// Which layers use the sliding window (empty when `n_swa` is 0).
    pub swa_layers: Vec<bool>,
    /// RoPE base of the sliding-window layers (`rope.freq_base_swa`, default `rope_freq_base`).
    pub rope_freq_base_swa: f64,
}

impl MoeParams {
    /// Whether layer `l` attends through the sliding window.
    pub fn is_swa(&self, l: usize) -> bool {
        self.n_swa > 0 && self.swa_layers.get(l).copied().unwrap_or(false)
    }
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
        // The graph passes norm_w = false and the file's expert_weights_scale, which gpt-oss's
        // loader never reads (0: none).
        Arch::GptOss => (k.uint("expert_feed_forward_length", MAX_DIM)?, 0, false, 0.0),
    };
    if n_ff_exp == 0 {
        return Err(Error::BadParam {
            key: k.key("expert_feed_forward_length"),
            value: "0".into(),
            why: "experts need a hidden size".into(),
        });
    }
    let n_layer = k.uint("block_count", MAX_LAYERS)? as u32;
    let n_ctx_train = k.uint("context_length", u64::from(u32::MAX))?;
    let rope_freq_base = if m.get(&k.key("rope.freq_base")).is_some() { k.float("rope.freq_base")? } else { 10_000.0 };
    let (n_swa, swa_layers) = match arch {
        Arch::GptOss => (k.uint("attention.sliding_window", u64::from(u32::MAX))? as u32, swa_pattern(&k, n_layer, 2)?),
        _ => (0, Vec::new()),
    };
    let hp = MoeParams {
        n_layer,
        n_ctx_train,
        n_embd,
        n_head,
        n_head_kv,
        head_dim,
        n_expert,
        n_expert_used,
        n_ff_exp,
        n_ff_shexp,
        rms_eps: k.float("attention.layer_norm_rms_epsilon")?,
        rope_freq_base,
        expert_weights_norm: norm,
        expert_weights_scale: scale,
        gating: if arch == Arch::GptOss { Gating::SoftmaxWeight } else { Gating::Softmax },
        rope: rope_scaling(&k, n_ctx_train)?,
        n_swa,
        swa_layers,
        rope_freq_base_swa: match arch {
            Arch::GptOss if m.get(&k.key("rope.freq_base_swa")).is_some() => k.float("rope.freq_base_swa")?,
            _ => rope_freq_base,
        },
    };
    Ok(ArchParams { arch, hp })
}

/// Which layers slide, as llama.cpp's `load_swa_pattern(ml, n_pattern)`: an array
/// `attention.sliding_window_pattern` gives it per layer; else a period `n` (the key, or the
/// architecture's default) makes every layer but the last of each period slide
/// (`il % n < n - 1`), and `n = 0` all of them.
fn swa_pattern(k: &Keys<'_>, n_layer: u32, default: u64) -> Result<Vec<bool>> {
    let key = "attention.sliding_window_pattern";
    let n = match k.m.get(&k.key(key)) {
        Some(Value::Array(_, items)) => {
            if items.len() != n_layer as usize {
                return Err(Error::BadParam {
                    key: k.key(key),
                    value: format!("{} entries", items.len()),
                    why: format!("one per layer ({n_layer})"),
                });
            }
            return items
                .iter()
                .map(|v| match v {
                    Value::Bool(b) => Ok(*b),
                    v => v.as_u64().map(|x| x != 0).ok_or(Error::KeyType { key: k.key(key), expected: "bools" }),
                })
                .collect();
        }
        Some(v) => v.as_u64().ok_or(Error::KeyType { key: k.key(key), expected: "a period or an array" })?,
        None => default,
    };
    Ok((0..u64::from(n_layer)).map(|il| n == 0 || il % n < n - 1).collect())
}

/// The RoPE scaling a llama.cpp context derives from the file (context defaults: YaRN β fast
/// 32, slow 1, no `rope.scaling.yarn_log_multiplier`), in its f32 arithmetic so the bits agree.
fn rope_scaling(k: &Keys<'_>, n_ctx_train: u64) -> Result<RopeScaling> {
    let kind = match k.m.get(&k.key("rope.scaling.type")) {
        None => "linear",
        Some(v) => v.as_str().ok_or(Error::KeyType { key: k.key("rope.scaling.type"), expected: "a string" })?,
    };
    let yarn = match kind {
        "none" | "linear" => false,
        "yarn" => true,
        other => {
            return Err(Error::BadParam {
                key: k.key("rope.scaling.type"),
                value: other.into(),
                why: "this decoder knows none, linear and yarn".into(),
            })
        }
    };
    let factor =
        if k.m.get(&k.key("rope.scaling.factor")).is_some() { k.float("rope.scaling.factor")? as f32 } else { 0.0 };
    let freq_scale = if kind == "none" || factor == 0.0 { 1.0 } else { 1.0 / factor };
    let mut attn_factor = 1.0f32;
    let ext_factor = if yarn { 1.0f32 } else { 0.0 };
    if ext_factor != 0.0 {
        let factor = 1.0f32 / freq_scale;
        // get_mscale(factor, 1): 0.1 · 1 · ln(factor) + 1, or 1 for a factor of at most 1.
        attn_factor = if factor <= 1.0 { 1.0 } else { 0.1 * 1.0 * factor.ln() + 1.0 };
        // ggml's rope multiplies by 1 + 0.1 ln(factor) itself: llama.cpp divides it out here.
        attn_factor *= 1.0 / (1.0 + 0.1 * factor.ln());
    }
    if k.m.get(&k.key("rope.scaling.attn_factor")).is_some() {
        attn_factor *= k.float("rope.scaling.attn_factor")? as f32;
    }
    let n_ctx_orig = match k.m.get(&k.key("rope.scaling.original_context_length")) {
        Some(_) => k.uint("rope.scaling.original_context_length", u64::from(u32::MAX))?,
        None => n_ctx_train,
    } as u32;
    Ok(RopeScaling { freq_scale, ext_factor, attn_factor, beta_fast: 32.0, beta_slow: 1.0, n_ctx_orig })
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

    #[test]
    fn gpt_oss_slides_on_even_layers_with_yarn() {
        let mut kv = BASE.to_vec();
        kv.extend([("expert_feed_forward_length", 256), ("attention.sliding_window", 128)]);
        let mut m = meta("gpt-oss", &kv);
        m.insert("gpt-oss.rope.scaling.type", Value::String("yarn".into()));
        m.insert("gpt-oss.rope.scaling.factor", Value::F32(32.0));
        m.insert("gpt-oss.rope.scaling.original_context_length", Value::U32(4096));
        let p = parse(&m, Arch::GptOss).unwrap().hp;
        assert_eq!((p.n_swa, p.swa_layers.clone()), (128, vec![true, false]));
        assert_eq!((p.gating, p.expert_weights_norm), (Gating::SoftmaxWeight, false));
        assert_eq!((p.rope.freq_scale, p.rope.ext_factor, p.rope.n_ctx_orig), (1.0 / 32.0, 1.0, 4096));
        assert!((p.rope.attn_factor - 1.0).abs() < 1e-6);
        // A period of 3 slides two layers of three; an array names each layer.
        let four: Vec<_> = kv.iter().map(|&(k, v)| if k == "block_count" { (k, 4) } else { (k, v) }).collect();
        let mut m = meta("gpt-oss", &four);
        m.insert("gpt-oss.attention.sliding_window_pattern", Value::U32(3));
        assert_eq!(parse(&m, Arch::GptOss).unwrap().hp.swa_layers, vec![true, true, false, true]);
        let arr = [false, true, true, false].map(Value::Bool).to_vec();
        let mut m = meta("gpt-oss", &four);
        m.insert("gpt-oss.attention.sliding_window_pattern", Value::Array(crate::gguf::ValueType::Bool, arr));
        assert_eq!(parse(&m, Arch::GptOss).unwrap().hp.swa_layers, vec![false, true, true, false]);
        // Without the window the file is refused, as llama.cpp's loader refuses it.
        let m = meta("gpt-oss", &kv[..kv.len() - 1]);
        assert!(matches!(parse(&m, Arch::GptOss), Err(Error::MissingKey { .. })));
        // Other architectures: no window, plain RoPE.
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 512));
        let p = parse(&meta("olmoe", &kv), Arch::Olmoe).unwrap().hp;
        assert_eq!((p.n_swa, p.gating, p.rope.ext_factor, p.rope.freq_scale), (0, Gating::Softmax, 0.0, 1.0));
    }
}
