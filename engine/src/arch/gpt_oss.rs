//! gpt-oss (gpt-oss-20b, gpt-oss-120b), after llama.cpp's `src/models/openai-moe.cpp`
//! (`LLM_ARCH_OPENAI_MOE`): Q/K/V and output biases, no Q/K norm, NeoX RoPE with YaRN scaling
//! (the file's `rope.scaling.*`), per-head attention sinks in every layer's softmax, a sliding
//! window on every other layer (layer 0 slides; `attention.sliding_window`), the FFN norm named
//! `post_attention_norm`; the router has a bias and its weights are a softmax over the top-k
//! logits only (`SOFTMAX_WEIGHT`, no normalisation after); each expert's gate, up and down add
//! their own bias, and the activation is the clamped `swiglu_oai` (α 1.702, limit 7). The
//! experts' biases and the sinks are dense: resident with the attention weights.

use super::keys::{swa_pattern, Ffn, Keys, MAX_DIM};
use super::synth::{common_metadata, moe_tensors, Extras, Shape, SynthArch, HARMONY};
use super::{Act, ArchSpec, Recipe, PLAIN, SWIGLU_EXPERTS};
use crate::gguf::Value;
use crate::model::{Gating, MoeParams, Result};

pub(super) static SPEC: ArchSpec = ArchSpec {
    name: "gpt-oss",
    models: "gpt-oss-20b, gpt-oss-120b",
    decodes: "Q/K/V/O biases, attention sinks, sliding-window attention on alternate layers, YaRN NeoX RoPE; \
              router with bias, softmax over the top-k logits; clamped SwiGLU (alpha 1.702, limit 7) experts \
              with biases",
    streams: "routed experts (gate, up, down) per (layer, expert); the experts' biases stay resident with the \
              dense weights",
    // As qwen3moe's; `attention.sliding_window`, also required, is read by `extra`.
    required_keys: super::qwen3moe::KEYS,
    expert_tensors: SWIGLU_EXPERTS,
    router: "ffn_gate_inp",
    may_be_dense: false,
    ffn,
    extra,
    recipe: Recipe {
        out_bias: true,
        sinks: true,
        ffn_norm: "post_attention_norm",
        router_bias: true,
        expert_bias: true,
        act: Act::SwigluOai,
        ..PLAIN
    },
    synth: SynthArch {
        tensors: |s| moe_tensors(s, Extras { qkv_bias: true, gpt_oss: true, ..Extras::default() }),
        metadata,
        fit,
        chat: &HARMONY,
    },
    presets: &[("gpt-oss-20b", || gpt_oss(24, 32)), ("gpt-oss-120b", || gpt_oss(36, 128))],
};

/// The graph passes `norm_w = false` and the file's `expert_weights_scale`, which gpt-oss's
/// loader never reads (0: none).
fn ffn(k: &Keys<'_>, _n_expert_used: u32) -> Result<Ffn> {
    Ok(Ffn { n_ff_exp: k.uint("expert_feed_forward_length", MAX_DIM)?, n_ff_shexp: 0, norm: false, scale: 0.0 })
}

/// The window and its layers (the loader's default period 2), the gating, the window layers'
/// RoPE base.
fn extra(k: &Keys<'_>, hp: &mut MoeParams) -> Result<()> {
    hp.n_swa = k.uint("attention.sliding_window", u64::from(u32::MAX))? as u32;
    hp.swa_layers = swa_pattern(k, hp.n_layer, 2)?;
    hp.gating = Gating::SoftmaxWeight;
    if k.m.get(&k.key("rope.freq_base_swa")).is_some() {
        hp.rope_freq_base_swa = k.float("rope.freq_base_swa")?;
    }
    Ok(())
}

/// As llama.cpp's converter writes it: the experts' size, head sizes, the sliding window and
/// YaRN scaling (the layers' pattern is the loader's default, every other layer).
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("gpt-oss", s);
    let u = |x: u64| Value::U32(x as u32);
    v.extend([
        ("gpt-oss.feed_forward_length".into(), u(s.n_ff)),
        ("gpt-oss.expert_feed_forward_length".into(), u(s.n_ff_exp)),
        ("gpt-oss.attention.key_length".into(), u(s.head_dim)),
        ("gpt-oss.attention.value_length".into(), u(s.head_dim)),
        ("gpt-oss.attention.sliding_window".into(), u(s.n_swa)),
    ]);
    if let Some((factor, orig)) = s.yarn {
        v.extend([
            ("gpt-oss.rope.scaling.type".into(), Value::String("yarn".into())),
            ("gpt-oss.rope.scaling.factor".into(), Value::F32(factor)),
            ("gpt-oss.rope.scaling.original_context_length".into(), u(orig)),
        ]);
    }
    v
}

/// A window and YaRN, as the real models have them, when a generic preset has none.
fn fit(s: &mut Shape) {
    if s.n_swa == 0 {
        s.n_swa = 128;
    }
    if s.yarn.is_none() {
        s.yarn = Some((32.0, 4096.min(s.n_ctx)));
    }
}

/// The gpt-oss shapes (openai/gpt-oss-20b and -120b config.json, as llama.cpp's converter
/// writes them; 20.9 B / 3.6 B active and 116.8 B / 5.1 B, OpenAI's model card, Table 1):
/// n_embd 2880, experts of 2880 (gate, up and down all square), 64 query heads and 8 KV heads
/// of 64, a 128-token window on every other layer, YaRN ×32 from 4096 to the 131072 context,
/// RoPE base 150000, the o200k_harmony vocabulary's 201088 rows.
fn gpt_oss(n_layer: u32, n_expert: u64) -> Shape {
    Shape {
        n_layer,
        n_embd: 2880,
        n_ff: 2880,
        n_ff_exp: 2880,
        n_ff_shexp: 0,
        n_expert,
        n_expert_used: 4,
        n_head: 64,
        n_head_kv: 8,
        head_dim: 64,
        n_vocab: 201_088,
        n_ctx: 131_072,
        rope_base: 150_000.0,
        rms_eps: 1e-5,
        n_swa: 128,
        yarn: Some((32.0, 4096)),
        extra: Vec::new(),
    }
}
