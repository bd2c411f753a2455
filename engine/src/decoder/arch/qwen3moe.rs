//! qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B), after llama.cpp's `src/models/qwen3moe.cpp`:
//! per-head Q/K RMS norms before NeoX RoPE; softmax router, top-k weights divided by their sum
//! (`expert_weights_norm`, read from the file, default on).

use super::{QkNorm, Recipe, PLAIN};

pub(super) const RECIPE: Recipe = Recipe { qk_norm: QkNorm::PerHead, ..PLAIN };
