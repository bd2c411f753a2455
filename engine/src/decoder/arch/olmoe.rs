//! olmoe (OLMoE-1B-7B), after llama.cpp's `src/models/olmoe.cpp`: Q and K are RMS-normalised
//! over the whole projection of each token (`attn_q_norm` and `attn_k_norm` are `[n_embd]`,
//! applied before the reshape into heads, unlike qwen3moe's per-head norms), NeoX RoPE;
//! softmax router, top-k weights used as they are (`norm_w = false`).

use super::{QkNorm, Recipe, PLAIN};

pub(super) const RECIPE: Recipe = Recipe { qk_norm: QkNorm::Whole, ..PLAIN };
