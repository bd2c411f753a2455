//! What our native decoder builds for an architecture, as data: the choices the shared blocks
//! (attention, router, routed experts, shared expert) are built with, read off llama.cpp's graph
//! builder for it (`src/models/<arch>.cpp`). Everything not named here is common: RMS norms,
//! SwiGLU experts through the expert provider, F16 KV cache, `flash_attn_ext`, the rank-ordered
//! sum of the experts, output norm and lm_head. The sliding window, YaRN and top-k softmax
//! gating are hyper-parameters of the file (`MoeParams`), read by the shared blocks.

use crate::ggml::RopeMode;

/// How Q and K are RMS-normalised before RoPE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QkNorm {
    /// Not at all.
    None,
    /// Each head on its own, weights `[head_dim]` (qwen3moe).
    PerHead,
    /// The whole projection of a token at once, weights `[n_head × head_dim]` (olmoe).
    Whole,
}

/// The gate in front of a shared expert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedGate {
    /// `sigmoid(ffn_gate_inp_shexp · x)` per token, computed as llama.cpp does:
    /// `silu(g) / g` (qwen2moe).
    Sigmoid,
}

/// The routed experts' activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// `silu(gate) · up`.
    Swiglu,
    /// gpt-oss's `ggml_swiglu_oai(gate, up, OAI_ALPHA, OAI_LIMIT)`: gate clamped above, up
    /// clamped both sides, `g · sigmoid(α g) · (u + 1)`.
    SwigluOai,
}

/// The α of [`Act::SwigluOai`] (llama.cpp's `build_moe_ffn` hard-codes it).
pub const OAI_ALPHA: f32 = 1.702;
/// The clamp of [`Act::SwigluOai`].
pub const OAI_LIMIT: f32 = 7.0;

/// One architecture's choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recipe {
    pub qk_norm: QkNorm,
    pub rope: RopeMode,
    /// The file may carry `attn_q/k/v.bias` (added when present, as llama.cpp's
    /// `create_tensor_qkv` loads them as optional).
    pub qkv_bias: bool,
    /// The file may carry `attn_output.bias` (llama only).
    pub out_bias: bool,
    /// A resident shared expert (`ffn_{gate,up,down}_shexp`) beside the routed ones, and its gate.
    pub shared_expert: Option<SharedGate>,
    /// Per-head attention sinks `attn_sinks` `[n_head]` (gpt-oss).
    pub sinks: bool,
    /// The name of the norm in front of the FFN (`ffn_norm`; gpt-oss: `post_attention_norm`).
    pub ffn_norm: &'static str,
    /// A router bias `ffn_gate_inp.bias` `[n_expert]` added to the logits (gpt-oss).
    pub router_bias: bool,
    /// Per-expert biases `ffn_{gate,up,down}_exps.bias` (`[n_ff, n_expert]`, `[n_embd, n_expert]`),
    /// resident with the dense weights (gpt-oss).
    pub expert_bias: bool,
    pub act: Act,
}

/// What every architecture but gpt-oss has: no sinks, `ffn_norm`, unbiased router and
/// experts, SwiGLU.
pub const PLAIN: Recipe = Recipe {
    qk_norm: QkNorm::None,
    rope: RopeMode::Neox,
    qkv_bias: true,
    out_bias: false,
    shared_expert: None,
    sinks: false,
    ffn_norm: "ffn_norm",
    router_bias: false,
    expert_bias: false,
    act: Act::Swiglu,
};
