//! What differs between the architectures the decoder runs, as data: each architecture's file
//! gives its [`Recipe`], the choices the shared blocks (attention, router, routed experts,
//! shared expert) are built with, read off llama.cpp's graph builder for it
//! (`src/models/<arch>.cpp`). Everything not named here is common: RMS norms, SwiGLU
//! experts through the [`ExpertProvider`](super::ExpertProvider), F16 KV cache,
//! `flash_attn_ext`, the rank-ordered sum of the experts, output norm and lm_head.
//!
//! An architecture with attention sinks, a sliding window, biased experts or a clamped
//! activation (gpt-oss) adds fields here and the block code that reads them; the existing
//! recipes keep their values.

mod gpt_oss;
mod mixtral;
mod olmoe;
mod qwen2moe;
mod qwen3moe;

use crate::ggml::RopeMode;
use crate::model::Arch;

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
}

/// The recipe of `arch`.
pub fn recipe(arch: Arch) -> Recipe {
    match arch {
        Arch::Qwen3Moe => qwen3moe::RECIPE,
        Arch::Olmoe => olmoe::RECIPE,
        Arch::Mixtral => mixtral::RECIPE,
        Arch::Qwen2Moe => qwen2moe::RECIPE,
        Arch::GptOss => gpt_oss::RECIPE,
    }
}
