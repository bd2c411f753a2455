//! gpt-oss (gpt-oss-20b, gpt-oss-120b), after llama.cpp's `src/models/openai-moe.cpp`
//! (`LLM_ARCH_OPENAI_MOE`): Q/K/V and output biases, NeoX RoPE with YaRN scaling, no Q/K norm.

use super::{QkNorm, Recipe};
use crate::ggml::RopeMode;

pub(super) const RECIPE: Recipe =
    Recipe { qk_norm: QkNorm::None, rope: RopeMode::Neox, qkv_bias: true, out_bias: true, shared_expert: None };
