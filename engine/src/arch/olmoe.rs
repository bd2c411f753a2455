//! olmoe (OLMoE-1B-7B), after llama.cpp's `src/models/olmoe.cpp`: Q and K are RMS-normalised
//! over the whole projection of each token (`attn_q_norm` and `attn_k_norm` are `[n_embd]`,
//! applied before the reshape into heads, unlike qwen3moe's per-head norms), NeoX RoPE;
//! softmax router, top-k weights used as they are (`norm_w = false`); the experts' hidden size
//! is `feed_forward_length`.

use super::keys::{no_extra, Ffn, Keys, MAX_DIM};
use super::synth::{common_metadata, moe_tensors, Extras, Shape, SynthArch, CHATML};
use super::{ArchSpec, QkNorm, Recipe, PLAIN, ROUTED, SWIGLU_EXPERTS};
use crate::gguf::Value;
use crate::model::Result;

pub(super) static SPEC: ArchSpec = ArchSpec {
    name: "olmoe",
    models: "OLMoE-1B-7B",
    decodes: "Q/K RMS norm over the whole projection, NeoX RoPE; softmax router, top-k, weights not normalised; \
              SwiGLU experts",
    streams: ROUTED,
    required_keys: LLAMA_STYLE_KEYS,
    expert_tensors: SWIGLU_EXPERTS,
    router: "ffn_gate_inp",
    may_be_dense: false,
    ffn,
    extra: no_extra,
    recipe: Recipe { qk_norm: QkNorm::Whole, ..PLAIN },
    synth: SynthArch {
        tensors: |s| moe_tensors(s, Extras { qk_norm_whole: true, ..Extras::default() }),
        metadata,
        fit,
        chat: &CHATML,
    },
    presets: &[("olmoe-1b-7b", olmoe_1b_7b)],
};

/// olmoe and llama (Mixtral): the experts' hidden size is `feed_forward_length`.
pub(super) const LLAMA_STYLE_KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.layer_norm_rms_epsilon",
    "expert_count",
    "expert_used_count",
];

/// llama.cpp's olmoe graph sizes the experts with n_ff and passes `norm_w = false` whatever
/// the file says.
fn ffn(k: &Keys<'_>, _n_expert_used: u32) -> Result<Ffn> {
    Ok(Ffn { n_ff_exp: k.uint("feed_forward_length", MAX_DIM)?, n_ff_shexp: 0, norm: false, scale: 0.0 })
}

/// The experts' hidden size is `feed_forward_length` (the converter writes OLMoE's
/// `intermediate_size`, 1024, there).
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("olmoe", s);
    v.push(("olmoe.feed_forward_length".into(), Value::U32(s.n_ff_exp as u32)));
    v
}

/// olmoe's K norm is `[n_embd]` in llama.cpp's loader: K must be as wide as Q (no GQA), and
/// its heads must tile `n_embd`.
fn fit(s: &mut Shape) {
    s.n_head_kv = s.n_head;
    s.head_dim = s.n_embd / s.n_head;
}

/// OLMoE-1B-7B (allenai/OLMoE-1B-7B-0924 config.json): 6.92B parameters, 1.28B active.
fn olmoe_1b_7b() -> Shape {
    Shape {
        n_layer: 16,
        n_embd: 2048,
        n_ff: 1024,
        n_ff_exp: 1024,
        n_ff_shexp: 0,
        n_expert: 64,
        n_expert_used: 8,
        n_head: 16,
        n_head_kv: 16,
        head_dim: 128,
        n_vocab: 50_304,
        n_ctx: 4096,
        rope_base: 10_000.0,
        rms_eps: 1e-5,
        n_swa: 0,
        yarn: None,
        extra: Vec::new(),
    }
}
