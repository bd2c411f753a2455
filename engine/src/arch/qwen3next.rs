//! qwen3next (Qwen3-Next-80B-A3B), after llama.cpp's `src/models/qwen3next.cpp` over
//! `delta-net-base.cpp`: the layer stack of qwen35moe (`super::qwen35moe`, whose tensor and
//! metadata builders this file shares): gated delta-net linear attention on three layers of
//! four, gated full attention on the fourth, every FFN a routed MoE (softmax router, top-k
//! weights normalised) plus a shared expert behind `sigmoid(ffn_gate_inp_shexp · x)`. What
//! differs in its files: the delta-net's write strength and decay projections are one tensor
//! `ssm_ba` (`[n_embd, 2 · n_v_heads]`, per Q/K head group its beta rows then its alpha rows),
//! RoPE is plain NeoX on the first quarter of each head (no M-RoPE sections), and the config's
//! dense `intermediate_size` is recorded as `feed_forward_length` (no layer uses it: every layer
//! is MoE). Gate and up of the routed experts separate, as the converter writes them, or fused
//! (`fused_gate_up`).
//!
//! What streams: the routed experts per `(layer, expert)`; the rest is dense.

use super::qwen35moe::{delta_net, fit_delta_net, metadata, qwen3_6_35b_a3b, tensors, Family};
use super::synth::{Shape, SynthArch, CHATML};
use super::SynthSpec;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "qwen3next",
    models: "Qwen3-Next-80B-A3B (Instruct, Thinking), Qwen3-Coder-Next",
    synth: SynthArch {
        tensors: |s| tensors(s, Family::Qwen3Next),
        metadata: |s| metadata(s, Family::Qwen3Next),
        fit: fit_delta_net,
        chat: &CHATML,
    },
    presets: &[("qwen3-next-80b-a3b", qwen3_next_80b_a3b)],
};

/// Qwen3-Next-80B-A3B (Qwen/Qwen3-Next-80B-A3B-Thinking config.json; -Instruct has the same):
/// 48 layers of 2048, 36 gated delta-net (16 Q/K heads and 32 V heads of 128, conv kernel 4)
/// and 12 gated attention (16 Q heads, 2 KV heads of 256, 64 rotary dimensions); 512 experts of
/// 512, 10 routed, a shared expert of 512; `intermediate_size` 5120; vocabulary 151936, context
/// 262144, RoPE base 1e7.
fn qwen3_next_80b_a3b() -> Shape {
    Shape {
        n_layer: 48,
        n_ff: 5120,
        n_expert: 512,
        n_expert_used: 10,
        n_vocab: 151_936,
        extra: delta_net(16, 32),
        ..qwen3_6_35b_a3b()
    }
}
