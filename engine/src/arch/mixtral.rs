//! Mixtral, which llama.cpp runs as arch `llama` with `llama.expert_count` > 0
//! (`src/models/llama.cpp`): no Q/K norm, normal RoPE (adjacent pairs rotate, not halves),
//! grouped-query attention; softmax over all experts, then top-k, then the k weights divided by
//! their sum (`norm_w = true`); the experts' hidden size is `feed_forward_length`. The optional
//! `attn_output.bias` llama loads is honoured. A llama without experts is a dense model, which
//! this build does not stream.

use super::keys::{no_extra, Ffn, Keys, MAX_DIM};
use super::olmoe::LLAMA_STYLE_KEYS;
use super::synth::{common_metadata, moe_tensors, Extras, Shape, SynthArch, CHATML};
use super::{ArchSpec, Recipe, PLAIN, ROUTED, SWIGLU_EXPERTS};
use crate::ggml::RopeMode;
use crate::gguf::Value;
use crate::model::Result;

pub(super) static SPEC: ArchSpec = ArchSpec {
    name: "llama",
    models: "Mixtral-8x7B, Mixtral-8x22B (llama with expert_count > 0; dense llama is not streamed)",
    decodes: "normal (adjacent-pair) RoPE, GQA; softmax router, top-k, weights normalised; SwiGLU experts",
    streams: ROUTED,
    required_keys: LLAMA_STYLE_KEYS,
    expert_tensors: SWIGLU_EXPERTS,
    router: "ffn_gate_inp",
    may_be_dense: true,
    ffn,
    extra: no_extra,
    recipe: Recipe { rope: RopeMode::Normal, out_bias: true, ..PLAIN },
    synth: SynthArch { tensors: |s| moe_tensors(s, Extras::default()), metadata, fit: |_| {}, chat: &CHATML },
    presets: &[("mixtral-8x7b", mixtral_8x7b)],
};

/// llama.cpp's llama graph sizes the experts with n_ff and always normalises the top-k weights.
fn ffn(k: &Keys<'_>, _n_expert_used: u32) -> Result<Ffn> {
    Ok(Ffn { n_ff_exp: k.uint("feed_forward_length", MAX_DIM)?, n_ff_shexp: 0, norm: true, scale: 0.0 })
}

/// `feed_forward_length` is the experts' hidden size (14336), plus the rope dimension count
/// and vocabulary size the converter writes.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("llama", s);
    v.extend([
        ("llama.feed_forward_length".into(), Value::U32(s.n_ff_exp as u32)),
        ("llama.rope.dimension_count".into(), Value::U32(s.head_dim as u32)),
        ("llama.vocab_size".into(), Value::U32(s.n_vocab as u32)),
    ]);
    v
}

/// Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): 46.7B parameters, 12.9B active.
fn mixtral_8x7b() -> Shape {
    Shape {
        n_layer: 32,
        n_embd: 4096,
        n_ff: 14_336,
        n_ff_exp: 14_336,
        n_ff_shexp: 0,
        n_expert: 8,
        n_expert_used: 2,
        n_head: 32,
        n_head_kv: 8,
        head_dim: 128,
        n_vocab: 32_000,
        n_ctx: 32_768,
        rope_base: 1e6,
        rms_eps: 1e-5,
        n_swa: 0,
        yarn: None,
        extra: Vec::new(),
    }
}
