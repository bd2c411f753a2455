//! qwen2moe (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B), after llama.cpp's `src/models/qwen2moe.cpp`:
//! Q/K/V biases, NeoX RoPE, no Q/K norm; softmax router, top-k weights used as they are
//! (`norm_w = false`: Qwen1.5-MoE's `norm_topk_prob` is false); then a shared expert, a dense
//! SwiGLU FFN of `expert_shared_feed_forward_length`, scaled per token by
//! `sigmoid(ffn_gate_inp_shexp · x)` and added to the routed experts' sum before the residual.
//! The shared expert's weights are dense: resident, never streamed.

use super::{Recipe, SharedGate, PLAIN};

pub(super) const RECIPE: Recipe = Recipe { shared_expert: Some(SharedGate::Sigmoid), ..PLAIN };
