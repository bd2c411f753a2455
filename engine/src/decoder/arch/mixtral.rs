//! Mixtral, which llama.cpp runs as arch `llama` with `llama.expert_count` > 0
//! (`src/models/llama.cpp`): no Q/K norm, normal RoPE (adjacent pairs rotate, not halves),
//! grouped-query attention; softmax over all experts, then top-k, then the k weights divided by
//! their sum (`norm_w = true`); the experts' hidden size is `feed_forward_length`. The optional
//! `attn_output.bias` llama loads is honoured.

use super::{Recipe, PLAIN};
use crate::ggml::RopeMode;

pub(super) const RECIPE: Recipe = Recipe { rope: RopeMode::Normal, out_bias: true, ..PLAIN };
