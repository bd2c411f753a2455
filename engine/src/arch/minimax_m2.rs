//! minimax-m2 (MiniMax-M2), which only the generic decoder runs (llama.cpp's
//! `src/models/minimax-m2.cpp`): Q and K RMS-normalised over the whole projection of each
//! token (`attn_q_norm` of `n_head × head_dim`, `attn_k_norm` of `n_head_kv × head_dim`, before
//! the split into heads, as olmoe), NeoX RoPE over the first 64 of each head's 128 dimensions
//! (`rope.dimension_count`); every layer routes: sigmoid router (`expert_gating_func`, which
//! the file must carry: llama.cpp's graph aborts without a gating function), top-k chosen on the
//! probabilities plus a per-expert selection bias (`exp_probs_b`), the k weights normalised
//! (the graph passes `norm_w = true`, and no scale: the loader reads none). No shared expert, no
//! dense layer; the experts' hidden size is `feed_forward_length` (the graph's `n_ff`), which
//! the converter writes equal to `expert_feed_forward_length`.
//!
//! What streams: the routed experts (gate, up, down) of every layer.

use super::synth::{common_metadata, moe_tensors, Extras, Init, Role, Shape, SynthArch, TensorSpec, CHATML};
use super::SynthSpec;
use crate::gguf::Value;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "minimax-m2",
    models: "MiniMax-M2",
    synth: SynthArch { tensors, metadata, fit, chat: &CHATML },
    presets: &[("minimax-m2", minimax_m2)],
};

/// As `llama_model_minimax_m2::load_arch_tensors` creates them: a MoE transformer with Q/K
/// norms over the whole projections, and each layer's selection bias.
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let mut v = moe_tensors(s, Extras { qk_norm_whole: true, ..Extras::default() });
    let output = v.split_off(v.len() - 2);
    v.extend((0..s.n_layer).map(|l| TensorSpec {
        name: format!("blk.{l}.exp_probs_b.bias"),
        dims: vec![s.n_expert],
        // Small against the sigmoid's spread: it moves the choice without deciding it.
        role: Role::F32(Init::Uniform(-0.05, 0.05)),
        layer: Some(l),
    }));
    v.extend(output);
    v
}

/// As llama.cpp's converter writes a MiniMax-M2 config (`MiniMaxM2Model.set_gguf_parameters`
/// over the base one): `intermediate_size` as both `feed_forward_length` and
/// `expert_feed_forward_length`, the explicit head size, `rotary_dim`, and the sigmoid scoring.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let u = |x: u64| Value::U32(x as u32);
    let n_rot = s.get("n_rot").expect("minimax-m2 shape without `n_rot`: not fitted") as u64;
    let mut v = common_metadata("minimax-m2", s);
    v.extend(
        [
            ("feed_forward_length", u(s.n_ff_exp)),
            ("expert_feed_forward_length", u(s.n_ff_exp)),
            ("attention.key_length", u(s.head_dim)),
            ("attention.value_length", u(s.head_dim)),
            ("rope.dimension_count", u(n_rot)),
            // LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID
            ("expert_gating_func", Value::U32(2)),
        ]
        .map(|(k, x)| (format!("minimax-m2.{k}"), x)),
    );
    v
}

/// Half of each head rotated, as MiniMax-M2's 64 of 128; the dense size is the experts' (the
/// graph sizes the experts with it).
fn fit(s: &mut Shape) {
    s.or_set("n_rot", (s.head_dim / 2) as f64);
    s.n_ff = s.n_ff_exp;
}

/// MiniMax-M2 (MiniMaxAI/MiniMax-M2 config.json): 62 layers, n_embd 3072, 256 experts of 1536,
/// top-8, 48 query heads and 8 KV heads of 128 (64 dimensions rotated), RoPE base 5e6, a
/// 196608-token context, a 200064-token vocabulary; 230 B parameters, 10 B active (the model
/// card).
fn minimax_m2() -> Shape {
    Shape {
        n_layer: 62,
        n_embd: 3072,
        n_ff: 1536,
        n_ff_exp: 1536,
        n_ff_shexp: 0,
        n_expert: 256,
        n_expert_used: 8,
        n_head: 48,
        n_head_kv: 8,
        head_dim: 128,
        n_vocab: 200_064,
        n_ctx: 196_608,
        rope_base: 5e6,
        rms_eps: 1e-6,
        n_swa: 0,
        yarn: None,
        extra: vec![("n_rot", 64.0)],
    }
}
