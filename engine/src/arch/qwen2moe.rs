//! qwen2moe (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B), after llama.cpp's `src/models/qwen2moe.cpp`:
//! Q/K/V biases, NeoX RoPE, no Q/K norm; softmax router, top-k weights used as they are
//! (`norm_w = false`: Qwen1.5-MoE's `norm_topk_prob` is false); then a shared expert, a dense
//! SwiGLU FFN of `expert_shared_feed_forward_length`, scaled per token by
//! `sigmoid(ffn_gate_inp_shexp · x)` and added to the routed experts' sum before the residual.
//! The shared expert's weights are dense: resident, never streamed.

use super::keys::{no_extra, Ffn, Keys, MAX_DIM};
use super::synth::{common_metadata, moe_tensors, Extras, Shape, SynthArch, CHATML};
use super::{ArchSpec, Recipe, SharedGate, PLAIN, SWIGLU_EXPERTS};
use crate::gguf::Value;
use crate::model::Result;

pub(super) static SPEC: ArchSpec = ArchSpec {
    name: "qwen2moe",
    models: "Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B",
    decodes: "Q/K/V biases, NeoX RoPE; softmax router, top-k, weights not normalised; SwiGLU experts plus a \
              shared SwiGLU expert behind a sigmoid gate",
    streams: "routed experts per (layer, expert); the shared expert stays resident with the dense weights",
    required_keys: KEYS,
    expert_tensors: SWIGLU_EXPERTS,
    router: "ffn_gate_inp",
    may_be_dense: false,
    ffn,
    extra: no_extra,
    recipe: Recipe { shared_expert: Some(SharedGate::Sigmoid), ..PLAIN },
    synth: SynthArch {
        tensors: |s| moe_tensors(s, Extras { qkv_bias: true, shared_expert: true, ..Extras::default() }),
        metadata,
        fit,
        chat: &CHATML,
    },
    presets: &[("qwen1.5-moe-a2.7b", qwen1_5_moe_a2_7b)],
};

/// The expert sizes have fallbacks on `feed_forward_length` (see [`ffn`]).
const KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "attention.head_count",
    "attention.layer_norm_rms_epsilon",
    "expert_count",
    "expert_used_count",
];

/// As `llama_model_qwen2moe::load_arch_tensors`: n_ff_exp defaults to n_ff / k, the shared
/// expert's to n_ff.
fn ffn(k: &Keys<'_>, n_expert_used: u32) -> Result<Ffn> {
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
    Ok(Ffn { n_ff_exp: exp, n_ff_shexp: shexp, norm: false, scale: 0.0 })
}

/// The dense size, the routed experts' and the shared expert's.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("qwen2moe", s);
    v.extend([
        ("qwen2moe.feed_forward_length".into(), Value::U32(s.n_ff as u32)),
        ("qwen2moe.expert_feed_forward_length".into(), Value::U32(s.n_ff_exp as u32)),
        ("qwen2moe.expert_shared_feed_forward_length".into(), Value::U32(s.n_ff_shexp as u32)),
    ]);
    v
}

/// Q and the output projection are `[n_embd, n_embd]`; a shared expert is required (the dense
/// FFN size when the preset names none).
fn fit(s: &mut Shape) {
    s.head_dim = s.n_embd / s.n_head;
    if s.n_ff_shexp == 0 {
        s.n_ff_shexp = s.n_ff;
    }
}

/// Qwen1.5-MoE-A2.7B (Qwen/Qwen1.5-MoE-A2.7B config.json): 14.3B parameters, 2.7B active.
fn qwen1_5_moe_a2_7b() -> Shape {
    Shape {
        n_layer: 24,
        n_embd: 2048,
        n_ff: 5632,
        n_ff_exp: 1408,
        n_ff_shexp: 5632,
        n_expert: 60,
        n_expert_used: 4,
        n_head: 16,
        n_head_kv: 16,
        head_dim: 128,
        n_vocab: 151_936,
        n_ctx: 8192,
        rope_base: 1e6,
        rms_eps: 1e-6,
        n_swa: 0,
        yarn: None,
        extra: Vec::new(),
    }
}
