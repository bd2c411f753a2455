//! qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B), after llama.cpp's `src/models/qwen3moe.cpp`:
//! per-head Q/K RMS norms before NeoX RoPE; softmax router, top-k weights divided by their sum
//! (`expert_weights_norm`, read from the file, default on) and scaled by
//! `expert_weights_scale` where the file has it; the experts' hidden size is
//! `expert_feed_forward_length`.

use super::keys::{no_extra, Ffn, Keys, MAX_DIM};
use super::synth::{moe_tensors, Extras, Shape, SynthArch, CHATML};
use super::{ArchSpec, QkNorm, Recipe, PLAIN, ROUTED, SWIGLU_EXPERTS};
use crate::gguf::Value;
use crate::model::{Error, Result};

pub(super) static SPEC: ArchSpec = ArchSpec {
    name: "qwen3moe",
    models: "Qwen3-30B-A3B, Qwen3-235B-A22B",
    decodes: "per-head Q/K RMS norm, NeoX RoPE, GQA; softmax router, top-k, weights normalised; SwiGLU experts",
    streams: ROUTED,
    required_keys: KEYS,
    expert_tensors: SWIGLU_EXPERTS,
    router: "ffn_gate_inp",
    may_be_dense: false,
    ffn,
    extra: no_extra,
    recipe: Recipe { qk_norm: QkNorm::PerHead, ..PLAIN },
    synth: SynthArch {
        tensors: |s| moe_tensors(s, Extras { qk_norm_per_head: true, ..Extras::default() }),
        metadata,
        fit: |_| {},
        chat: &CHATML,
    },
    presets: &[("qwen3-30b-a3b", qwen3_30b_a3b)],
};

/// The keys llama.cpp's qwen3moe loader requires (gpt-oss's loader requires the same).
pub(super) const KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "attention.head_count",
    "attention.layer_norm_rms_epsilon",
    "expert_count",
    "expert_used_count",
    "expert_feed_forward_length",
];

fn ffn(k: &Keys<'_>, _n_expert_used: u32) -> Result<Ffn> {
    Ok(Ffn {
        n_ff_exp: k.uint("expert_feed_forward_length", MAX_DIM)?,
        n_ff_shexp: 0,
        norm: k.boolean("expert_weights_norm", true)?,
        scale: match k.m.get(&k.key("expert_weights_scale")) {
            None => 0.0,
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| Error::KeyType { key: k.key("expert_weights_scale"), expected: "a number >= 0" })?,
        },
    })
}

fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let a = |k: &str| format!("qwen3moe.{k}");
    let u = |x: u64| Value::U32(x as u32);
    vec![
        (a("block_count"), u(s.n_layer.into())),
        (a("context_length"), u(s.n_ctx)),
        (a("embedding_length"), u(s.n_embd)),
        (a("feed_forward_length"), u(s.n_ff)),
        (a("attention.head_count"), u(s.n_head)),
        (a("attention.head_count_kv"), u(s.n_head_kv)),
        (a("rope.freq_base"), Value::F32(s.rope_base)),
        (a("attention.layer_norm_rms_epsilon"), Value::F32(s.rms_eps)),
        (a("expert_used_count"), u(s.n_expert_used)),
        (a("attention.key_length"), u(s.head_dim)),
        (a("attention.value_length"), u(s.head_dim)),
        (a("expert_count"), u(s.n_expert)),
        (a("expert_feed_forward_length"), u(s.n_ff_exp)),
    ]
}

/// Qwen3-30B-A3B as its config.json and llama.cpp's converter have it.
fn qwen3_30b_a3b() -> Shape {
    Shape {
        n_layer: 48,
        n_embd: 2048,
        n_ff: 6144,
        n_ff_exp: 768,
        n_ff_shexp: 0,
        n_expert: 128,
        n_expert_used: 8,
        n_head: 32,
        n_head_kv: 4,
        head_dim: 128,
        n_vocab: 151_936,
        n_ctx: 40_960,
        rope_base: 1e6,
        rms_eps: 1e-6,
        n_swa: 0,
        yarn: None,
        extra: Vec::new(),
    }
}
