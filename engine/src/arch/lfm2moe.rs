//! lfm2moe (LFM2-8B-A1B), which only the generic decoder runs (llama.cpp's
//! `src/models/lfm2moe.cpp` loads it, `lfm2.cpp`'s graph decodes it): a hybrid of gated
//! short-convolution layers (`shortconv.in_proj` into B, C and x, a causal depthwise conv of
//! `shortconv.l_cache` taps over B·x whose last taps are the recurrent state, C times that,
//! `shortconv.out_proj`) and attention layers (per-head Q/K RMS norms, NeoX RoPE, GQA), told
//! apart by the per-layer `attention.head_count_kv` (0: a conv layer). After its mixer every
//! layer has an FFN: the first `leading_dense_block_count` dense, the others routed: sigmoid
//! router with a selection bias (`exp_probs_b`), the k weights normalised (the graph passes
//! `norm_w = true`, no scale). The embedding is tied: no `output.weight`, the output norm is
//! named `token_embd_norm`.
//!
//! What streams: the routed experts (gate, up, down) of the MoE layers. The conv and attention
//! weights, the dense layers' FFN and the conv state stay with llama.cpp.

use super::synth::{common_metadata, Init, Role, Shape, SynthArch, TensorSpec, CHATML};
use super::SynthSpec;
use crate::gguf::{Value, ValueType};

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "lfm2moe",
    models: "LFM2-8B-A1B",
    synth: SynthArch { tensors, metadata, fit, chat: &CHATML },
    presets: &[("lfm2-8b-a1b", lfm2_8b_a1b)],
};

/// The shape's extra values, with [`fit`]'s defaults applied.
struct Lfm {
    /// Bit `l` set: layer `l` is an attention layer (else a short-conv one).
    attn: u64,
    /// Leading layers with a dense FFN (`leading_dense_block_count`).
    dense_lead: u32,
    /// The conv's taps (`shortconv.l_cache`).
    l_cache: u64,
}

impl Lfm {
    fn of(s: &Shape) -> Self {
        let get = |k: &str| s.get(k).unwrap_or_else(|| panic!("lfm2moe shape without `{k}`: not fitted"));
        Self { attn: get("attn_layers") as u64, dense_lead: get("dense_lead") as u32, l_cache: get("l_cache") as u64 }
    }

    fn is_attn(&self, l: u32) -> bool {
        self.attn >> l & 1 == 1
    }
}

/// As `llama_model_lfm2moe::load_arch_tensors` creates them.
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let g = Lfm::of(s);
    let kv = s.n_head_kv * s.head_dim;
    let global = |name: &str, dims: Vec<u64>, role| TensorSpec { name: name.into(), dims, role, layer: None };
    // The tied embedding is the output too: llama-quant gives it the output's type (q6_K in
    // q4_k_m), and its scale is the output's.
    let mut v = vec![global("token_embd.weight", vec![s.n_embd, s.n_vocab], Role::Output)];
    for l in 0..s.n_layer {
        let t = |name: &str, dims: Vec<u64>, role| TensorSpec {
            name: format!("blk.{l}.{name}"),
            dims,
            role,
            layer: Some(l),
        };
        v.push(t("ffn_norm.weight", vec![s.n_embd], Role::Norm));
        if l < g.dense_lead {
            v.extend([
                t("ffn_gate.weight", vec![s.n_embd, s.n_ff], Role::Weight),
                t("ffn_up.weight", vec![s.n_embd, s.n_ff], Role::Weight),
                t("ffn_down.weight", vec![s.n_ff, s.n_embd], Role::ResidualOut),
            ]);
        } else {
            v.extend([
                t("ffn_gate_inp.weight", vec![s.n_embd, s.n_expert], Role::Router),
                t("ffn_gate_exps.weight", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
                t("ffn_up_exps.weight", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
                t("ffn_down_exps.weight", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
                // The selection bias: small against the sigmoid's spread, so that it moves the
                // choice without deciding it.
                t("exp_probs_b.bias", vec![s.n_expert], Role::F32(Init::Uniform(-0.05, 0.05))),
            ]);
        }
        v.push(t("attn_norm.weight", vec![s.n_embd], Role::Norm));
        if g.is_attn(l) {
            v.extend([
                t("attn_q_norm.weight", vec![s.head_dim], Role::Norm),
                t("attn_k_norm.weight", vec![s.head_dim], Role::Norm),
                t("attn_q.weight", vec![s.n_embd, s.n_embd], Role::AttnQ),
                t("attn_k.weight", vec![s.n_embd, kv], Role::AttnK),
                t("attn_v.weight", vec![s.n_embd, kv], Role::AttnV),
                t("attn_output.weight", vec![s.n_embd, s.n_embd], Role::AttnOut),
            ]);
        } else {
            v.extend([
                // The conv kernel: f32 (ggml's ssm_conv reads f32 only; llama-quant leaves it),
                // small taps so B·x stays of its own scale.
                t("shortconv.conv.weight", vec![g.l_cache, s.n_embd], Role::F32(Init::Uniform(-0.5, 0.5))),
                t("shortconv.in_proj.weight", vec![s.n_embd, 3 * s.n_embd], Role::Weight),
                t("shortconv.out_proj.weight", vec![s.n_embd, s.n_embd], Role::ResidualOut),
            ]);
        }
    }
    v.push(global("token_embd_norm.weight", vec![s.n_embd], Role::Norm));
    v
}

/// As llama.cpp's converter writes an LFM2-MoE config (`LFM2MoeModel.set_gguf_parameters`):
/// `attention.head_count_kv` per layer (0 for the conv layers), the dense layers' size as
/// `feed_forward_length`, the experts', the leading dense layers, the sigmoid gating, the
/// conv's taps.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let g = Lfm::of(s);
    let u = |x: u64| Value::U32(x as u32);
    let kv_key = "lfm2moe.attention.head_count_kv";
    let mut v: Vec<_> = common_metadata("lfm2moe", s).into_iter().filter(|(k, _)| k != kv_key).collect();
    let per_layer = (0..s.n_layer).map(|l| u(if g.is_attn(l) { s.n_head_kv } else { 0 })).collect();
    v.push((kv_key.into(), Value::Array(ValueType::U32, per_layer)));
    v.extend(
        [
            ("feed_forward_length", u(s.n_ff)),
            ("expert_feed_forward_length", u(s.n_ff_exp)),
            ("leading_dense_block_count", u(g.dense_lead.into())),
            // LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID (required by this loader)
            ("expert_gating_func", Value::U32(2)),
            ("vocab_size", u(s.n_vocab)),
            ("shortconv.l_cache", u(g.l_cache)),
        ]
        .map(|(k, x)| (format!("lfm2moe.{k}"), x)),
    );
    v
}

/// A generic preset (`tiny`, `small`) becomes an LFM2-MoE-like model: conv and attention layers
/// alternating (the first a conv), the first layer dense, a 3-tap conv. The attention's Q and
/// output are `[n_embd, n_embd]`: the heads tile `n_embd`.
fn fit(s: &mut Shape) {
    s.or_set("attn_layers", 0xaaaa_aaaa_u32 as f64);
    s.or_set("dense_lead", 1.0);
    s.or_set("l_cache", 3.0);
    s.head_dim = s.n_embd / s.n_head;
}

/// LFM2-8B-A1B (LiquidAI/LFM2-8B-A1B config.json): 24 layers, attention at 2, 6, 10, 14, 18
/// and 21 (32 query heads and 8 KV heads of 64), short convs of 3 taps elsewhere, n_embd 2048,
/// the first two layers dense (7168), 32 experts of 1792, top-4, RoPE base 1e6, a 128000-token
/// context, a 65536-token vocabulary, the embedding tied; 8.3 B parameters, 1.5 B active (the
/// model card).
fn lfm2_8b_a1b() -> Shape {
    let attn = [2, 6, 10, 14, 18, 21].iter().map(|l| 1u64 << l).sum::<u64>();
    Shape {
        n_layer: 24,
        n_embd: 2048,
        n_ff: 7168,
        n_ff_exp: 1792,
        n_ff_shexp: 0,
        n_expert: 32,
        n_expert_used: 4,
        n_head: 32,
        n_head_kv: 8,
        head_dim: 64,
        n_vocab: 65_536,
        n_ctx: 128_000,
        rope_base: 1e6,
        rms_eps: 1e-5,
        n_swa: 0,
        yarn: None,
        extra: vec![("attn_layers", attn as f64), ("dense_lead", 2.0), ("l_cache", 3.0)],
    }
}
