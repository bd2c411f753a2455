//! gpt-oss (gpt-oss-20b, gpt-oss-120b), after llama.cpp's `src/models/openai-moe.cpp`
//! (`LLM_ARCH_OPENAI_MOE`): Q/K/V and output biases, no Q/K norm, NeoX RoPE with YaRN scaling
//! (the file's `rope.scaling.*`), per-head attention sinks in every layer's softmax, a sliding
//! window on every other layer (layer 0 slides; `attention.sliding_window`), the FFN norm named
//! `post_attention_norm`; the router has a bias and its weights are a softmax over the top-k
//! logits only (`SOFTMAX_WEIGHT`, no normalisation after); each expert's gate, up and down add
//! their own bias, and the activation is the clamped `swiglu_oai` (α 1.702, limit 7).

use super::{Act, Recipe, PLAIN};

pub(super) const RECIPE: Recipe = Recipe {
    out_bias: true,
    sinks: true,
    ffn_norm: "post_attention_norm",
    router_bias: true,
    expert_bias: true,
    act: Act::SwigluOai,
    ..PLAIN
};
