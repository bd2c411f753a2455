//! The generator's architecture table: for each architecture, its tensors (name, shape,
//! role) and its metadata keys as functions of a [`Shape`]. Adding an architecture is one
//! more [`SynthArch`] entry; the writer, quant mix and presets are shared.

use super::{Shape, SynthArch};
use crate::gguf::Value;

/// What a tensor is for: decides its type in a quant mix and the scale of its weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    TokenEmbd,
    Output,
    /// RMS-norm weights (always f32, all ones).
    Norm,
    AttnQ,
    AttnK,
    AttnV,
    AttnOut,
    /// The MoE router (always f32, as llama.cpp's converter and quantizer leave it).
    Router,
    ExpGate,
    ExpUp,
    ExpDown,
}

/// One tensor to generate.
#[derive(Clone, Debug)]
pub struct TensorSpec {
    pub name: String,
    /// ggml order, innermost first.
    pub dims: Vec<u64>,
    pub role: Role,
    /// Block index for per-layer tensors.
    pub layer: Option<u32>,
}

/// Every architecture the generator can write.
pub static SYNTH_ARCHS: &[SynthArch] =
    &[SynthArch { name: "qwen3moe", tensors: qwen3moe_tensors, metadata: qwen3moe_metadata }];

fn qwen3moe_tensors(s: &Shape) -> Vec<TensorSpec> {
    let q = s.n_head * s.head_dim;
    let kv = s.n_head_kv * s.head_dim;
    let mut v = vec![TensorSpec {
        name: "token_embd.weight".into(),
        dims: vec![s.n_embd, s.n_vocab],
        role: Role::TokenEmbd,
        layer: None,
    }];
    for l in 0..s.n_layer {
        let t = |base: &str, dims: Vec<u64>, role| TensorSpec {
            name: format!("blk.{l}.{base}.weight"),
            dims,
            role,
            layer: Some(l),
        };
        v.extend([
            t("attn_norm", vec![s.n_embd], Role::Norm),
            t("attn_q", vec![s.n_embd, q], Role::AttnQ),
            t("attn_k", vec![s.n_embd, kv], Role::AttnK),
            t("attn_v", vec![s.n_embd, kv], Role::AttnV),
            t("attn_output", vec![q, s.n_embd], Role::AttnOut),
            t("attn_q_norm", vec![s.head_dim], Role::Norm),
            t("attn_k_norm", vec![s.head_dim], Role::Norm),
            t("ffn_norm", vec![s.n_embd], Role::Norm),
            t("ffn_gate_inp", vec![s.n_embd, s.n_expert], Role::Router),
            t("ffn_gate_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
            t("ffn_up_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
            t("ffn_down_exps", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
        ]);
    }
    v.push(TensorSpec { name: "output_norm.weight".into(), dims: vec![s.n_embd], role: Role::Norm, layer: None });
    v.push(TensorSpec {
        name: "output.weight".into(),
        dims: vec![s.n_embd, s.n_vocab],
        role: Role::Output,
        layer: None,
    });
    v
}

fn qwen3moe_metadata(s: &Shape) -> Vec<(String, Value)> {
    let a = |k: &str| format!("qwen3moe.{k}");
    let u = |x: u64| Value::U32(x as u32);
    vec![
        (a("block_count"), u(s.n_layer.into())),
        (a("context_length"), u(s.n_ctx)),
        (a("embedding_length"), u(s.n_embd)),
        (a("feed_forward_length"), u(s.n_ff)),
        (a("attention.head_count"), u(s.n_head)),
        (a("attention.head_count_kv"), u(s.n_head_kv)),
        (a("rope.freq_base"), Value::F32(s.rope_base)),
        (a("attention.layer_norm_rms_epsilon"), Value::F32(s.rms_eps)),
        (a("expert_used_count"), u(s.n_expert_used)),
        (a("attention.key_length"), u(s.head_dim)),
        (a("attention.value_length"), u(s.head_dim)),
        (a("expert_count"), u(s.n_expert)),
        (a("expert_feed_forward_length"), u(s.n_ff_exp)),
    ]
}
