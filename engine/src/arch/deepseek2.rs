//! deepseek2 (DeepSeek-V3, DeepSeek-R1, Kimi-K2; also DeepSeek-V2), after llama.cpp's
//! `src/models/deepseek2.cpp`, streamed through the generic decoder (llama.cpp's own graph).
//!
//! What its graph has that matters here:
//! - MLA attention: Q through a low-rank pair (`attn_q_a`, RMS-normed by `attn_q_a_norm`, then
//!   `attn_q_b`), K and V compressed together (`attn_kv_a_mqa`: the `kv_lora_rank` latent plus
//!   the shared RoPE part, the latent RMS-normed by `attn_kv_a_norm`), and the decompression
//!   split as current conversions write it: `attn_k_b` `[qk_nope, kv_lora_rank, n_head]`
//!   absorbed into Q, `attn_v_b` `[kv_lora_rank, v_head, n_head]` applied after attention (the
//!   loader takes this split when `attention.key_length_mla`/`value_length_mla` are present;
//!   the legacy unsplit `attn_kv_b` otherwise). The KV cache is one latent "head"
//!   (`head_count_kv` 1, keys of `kv_lora_rank + qk_rope`, values of `kv_lora_rank`). The
//!   3-D `attn_k_b`/`attn_v_b` are read by batched `mul_mat`, never by `mul_mat_id`: dense.
//! - Leading dense layers (`leading_dense_block_count`): a plain SwiGLU FFN of
//!   `feed_forward_length`, no router, no experts; the index finds no expert tensor there.
//! - The MoE layers: sigmoid gating (`expert_gating_func` 2) whose probabilities, plus the
//!   per-expert selection bias `exp_probs_b` (DeepSeek-V3's `e_score_correction_bias`), pick
//!   the experts; with `expert_group_count` > 1 only the best `expert_group_used_count` groups
//!   (each scored by the sum of its two best biased probabilities) may be picked from; the
//!   top-k weights are the unbiased sigmoids, normalised (`expert_weights_norm`) and scaled by
//!   the routed scaling factor (`expert_weights_scale`); and a shared expert of
//!   `expert_shared_count × expert_feed_forward_length`, always on, added to the routed sum.
//!   The routed ids are `ffn_moe_topk-<il>` as in every `build_moe_ffn` graph (the group
//!   selection's own node is `ffn_moe_group_topk-<il>`), so the seam streams it as it is.
//! - YaRN RoPE on the rope part only, with DeepSeek's `mscale_all_dim` as
//!   `rope.scaling.yarn_log_multiplier` (written × 0.1 by the converter, divided back by the
//!   loader).
//!
//! What streams: the routed experts (gate, up, down) of the MoE layers. The shared experts, the
//! leading dense layers' FFNs, MLA's projections and the routers stay resident.

use super::synth::{common_metadata, Role, Shape, SynthArch, TensorSpec, CHATML};
use super::SynthSpec;
use crate::gguf::Value;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "deepseek2",
    models: "DeepSeek-V3, DeepSeek-R1, Kimi-K2 (DeepSeek-V2, V2.5)",
    synth: SynthArch { tensors, metadata, fit, chat: &CHATML },
    presets: &[("deepseek-v3", deepseek_v3), ("kimi-k2", kimi_k2)],
};

/// The shape's extra values, by name (see [`fit`] for their defaults).
mod x {
    pub const Q_LORA: &str = "q_lora_rank";
    pub const KV_LORA: &str = "kv_lora_rank";
    pub const QK_NOPE: &str = "qk_nope_head_dim";
    pub const QK_ROPE: &str = "qk_rope_head_dim";
    pub const V_HEAD: &str = "v_head_dim";
    pub const DENSE_LEAD: &str = "leading_dense_block_count";
    pub const SHARED: &str = "expert_shared_count";
    pub const GROUPS: &str = "expert_group_count";
    pub const GROUPS_USED: &str = "expert_group_used_count";
    pub const SCALE: &str = "expert_weights_scale";
    /// YaRN's `mscale_all_dim` (config.json's `rope_scaling`).
    pub const MSCALE_ALL_DIM: &str = "mscale_all_dim";
    pub const BETA_FAST: &str = "yarn_beta_fast";
    pub const BETA_SLOW: &str = "yarn_beta_slow";
}

/// An extra value [`fit`] guarantees, as a size.
fn dim(s: &Shape, name: &str) -> u64 {
    s.get(name).unwrap_or_else(|| panic!("deepseek2 shape without {name}: fit() sets it")) as u64
}

/// Every tensor `llama_model_deepseek2::load_arch_tensors` creates (none optional left out but
/// the legacy `attn_kv_b` and the MTP layers the converter skips), in the converter's order.
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let (q_lora, kv_lora) = (dim(s, x::Q_LORA), dim(s, x::KV_LORA));
    let (nope, rope, v_head) = (dim(s, x::QK_NOPE), dim(s, x::QK_ROPE), dim(s, x::V_HEAD));
    let n_dense = dim(s, x::DENSE_LEAD);
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
            t("attn_q_a_norm", vec![q_lora], Role::Norm),
            t("attn_kv_a_norm", vec![kv_lora], Role::Norm),
            t("attn_q_a", vec![s.n_embd, q_lora], Role::Weight),
            t("attn_q_b", vec![q_lora, s.n_head * (nope + rope)], Role::Weight),
            t("attn_kv_a_mqa", vec![s.n_embd, kv_lora + rope], Role::Weight),
            t("attn_k_b", vec![nope, kv_lora, s.n_head], Role::Weight),
            t("attn_v_b", vec![kv_lora, v_head, s.n_head], Role::Weight),
            t("attn_output", vec![s.n_head * v_head, s.n_embd], Role::AttnOut),
            t("ffn_norm", vec![s.n_embd], Role::Norm),
        ]);
        if u64::from(l) < n_dense {
            // A dense SwiGLU FFN: llama-quantize types every `ffn_down` alike (by name), as it
            // does the shared expert's, hence the shared expert's roles.
            v.extend([
                t("ffn_gate", vec![s.n_embd, s.n_ff], Role::ShexpGate),
                t("ffn_down", vec![s.n_ff, s.n_embd], Role::ShexpDown),
                t("ffn_up", vec![s.n_embd, s.n_ff], Role::ShexpUp),
            ]);
            continue;
        }
        v.extend([
            t("ffn_gate_inp", vec![s.n_embd, s.n_expert], Role::Router),
            TensorSpec {
                name: format!("blk.{l}.exp_probs_b.bias"),
                dims: vec![s.n_expert],
                role: Role::Bias,
                layer: Some(l),
            },
            t("ffn_gate_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
            t("ffn_down_exps", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
            t("ffn_up_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
            t("ffn_gate_shexp", vec![s.n_embd, s.n_ff_shexp], Role::ShexpGate),
            t("ffn_down_shexp", vec![s.n_ff_shexp, s.n_embd], Role::ShexpDown),
            t("ffn_up_shexp", vec![s.n_embd, s.n_ff_shexp], Role::ShexpUp),
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

/// As `DeepseekV2Model.set_gguf_parameters` (llama.cpp's `conversion/deepseek.py`, over the
/// text model's common keys) writes them: MQA of one latent head (`head_count_kv` 1), the key
/// and value lengths of that head and the MLA head sizes, the low ranks, the dense lead, the
/// routed and shared experts, sigmoid gating with its groups, weights normalised and scaled,
/// YaRN.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let a = |k: &str| format!("deepseek2.{k}");
    let u = |v: u64| Value::U32(v as u32);
    let (kv_lora, nope, rope) = (dim(s, x::KV_LORA), dim(s, x::QK_NOPE), dim(s, x::QK_ROPE));
    let mut v = common_metadata("deepseek2", s);
    v.extend([
        (a("feed_forward_length"), u(s.n_ff)),
        (a("leading_dense_block_count"), u(dim(s, x::DENSE_LEAD))),
        (a("vocab_size"), u(s.n_vocab)),
        (a("attention.q_lora_rank"), u(dim(s, x::Q_LORA))),
        (a("attention.kv_lora_rank"), u(kv_lora)),
        (a("attention.key_length"), u(kv_lora + rope)),
        (a("attention.value_length"), u(kv_lora)),
        (a("attention.key_length_mla"), u(nope + rope)),
        (a("attention.value_length_mla"), u(dim(s, x::V_HEAD))),
        (a("expert_feed_forward_length"), u(s.n_ff_exp)),
        (a("expert_shared_count"), u(dim(s, x::SHARED))),
        (a("expert_weights_scale"), Value::F32(s.get(x::SCALE).unwrap_or(1.0) as f32)),
        (a("expert_weights_norm"), Value::Bool(true)),
        (a("expert_gating_func"), Value::U32(2)),
        (a("rope.dimension_count"), u(rope)),
    ]);
    if let (Some(g), Some(used)) = (s.get(x::GROUPS), s.get(x::GROUPS_USED)) {
        v.extend([(a("expert_group_count"), u(g as u64)), (a("expert_group_used_count"), u(used as u64))]);
    }
    if let Some((factor, orig)) = s.yarn {
        v.extend([
            (a("rope.scaling.type"), Value::String("yarn".into())),
            (a("rope.scaling.factor"), Value::F32(factor)),
            (a("rope.scaling.original_context_length"), u(orig)),
        ]);
        // The converter writes the betas (deepseek2's loader does not read them) and
        // 0.1 × mscale_all_dim, which the loader divides back by 0.1.
        for (key, name) in
            [("rope.scaling.yarn_beta_fast", x::BETA_FAST), ("rope.scaling.yarn_beta_slow", x::BETA_SLOW)]
        {
            if let Some(b) = s.get(name) {
                v.push((a(key), Value::F32(b as f32)));
            }
        }
        if let Some(m) = s.get(x::MSCALE_ALL_DIM) {
            v.push((a("rope.scaling.yarn_log_multiplier"), Value::F32((0.1 * m) as f32)));
        }
    }
    v
}

/// What a generic preset (`tiny`, `small`) lacks, in the proportions of the real models: MLA
/// ranks of half the width, heads of `head_dim` (nope) + `head_dim / 2` (rope) for Q/K and
/// `head_dim` for V; one latent KV head; one leading dense layer; one shared expert; four
/// expert groups of which two are used (the tiny shape's 8 experts: groups of 2, top-2 among
/// the 4 of the two best groups); DeepSeek-V3's scaling factor 2.5 and YaRN ×40 from 4096.
fn fit(s: &mut Shape) {
    s.n_head_kv = 1;
    s.or_set(x::Q_LORA, (s.n_embd / 2) as f64);
    s.or_set(x::KV_LORA, (s.n_embd / 2) as f64);
    s.or_set(x::QK_NOPE, s.head_dim as f64);
    s.or_set(x::QK_ROPE, (s.head_dim / 2) as f64);
    s.or_set(x::V_HEAD, s.head_dim as f64);
    s.or_set(x::DENSE_LEAD, 1.0);
    s.or_set(x::SHARED, 1.0);
    if s.get(x::GROUPS).is_none() && s.n_expert % 4 == 0 && s.n_expert / 4 >= 2 {
        s.or_set(x::GROUPS, 4.0);
        s.or_set(x::GROUPS_USED, 2.0);
    }
    s.or_set(x::SCALE, 2.5);
    s.n_ff_shexp = s.n_ff_exp * dim(s, x::SHARED);
    if s.yarn.is_none() {
        s.yarn = Some((40.0, 4096.min(s.n_ctx)));
        s.or_set(x::MSCALE_ALL_DIM, 1.0);
    }
}

/// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json; DeepSeek-R1's is the same shape): 61
/// layers of width 7168, the first 3 dense (FFN of 18432); MLA of Q rank 1536 and KV rank 512,
/// 128 heads of 128 + 64 (Q/K) and 128 (V); 256 routed experts of 2048 in 8 groups of which 4
/// are used, top-8, sigmoid scores, scaling factor 2.5, one shared expert of 2048; vocabulary
/// 129280, context 163840, RMS eps 1e-6, RoPE base 10000, YaRN ×40 from 4096 (β 32/1,
/// `mscale_all_dim` 1). 671 B parameters, 37 B active (the model card, without the 14 B MTP
/// module, the 62nd layer, which llama.cpp's converter does not convert).
fn deepseek_v3() -> Shape {
    Shape {
        n_layer: 61,
        n_embd: 7168,
        n_ff: 18432,
        n_ff_exp: 2048,
        n_ff_shexp: 2048,
        n_expert: 256,
        n_expert_used: 8,
        n_head: 128,
        n_head_kv: 1,
        head_dim: 192,
        n_vocab: 129_280,
        n_ctx: 163_840,
        rope_base: 10_000.0,
        rms_eps: 1e-6,
        n_swa: 0,
        yarn: Some((40.0, 4096)),
        extra: vec![
            (x::Q_LORA, 1536.0),
            (x::KV_LORA, 512.0),
            (x::QK_NOPE, 128.0),
            (x::QK_ROPE, 64.0),
            (x::V_HEAD, 128.0),
            (x::DENSE_LEAD, 3.0),
            (x::SHARED, 1.0),
            (x::GROUPS, 8.0),
            (x::GROUPS_USED, 4.0),
            (x::SCALE, 2.5),
            (x::MSCALE_ALL_DIM, 1.0),
            (x::BETA_FAST, 32.0),
            (x::BETA_SLOW, 1.0),
        ],
    }
}

/// Kimi-K2 (moonshotai/Kimi-K2-Instruct config.json, `DeepseekV3ForCausalLM`): DeepSeek-V3's
/// shape but for 384 routed experts in a single group (written as 1 group of which 1 is used:
/// no group selection), scaling factor 2.827, 1 leading dense layer, 64 heads, vocabulary
/// 163840, context 131072, RoPE base 50000, YaRN ×32 (β 1/1).
fn kimi_k2() -> Shape {
    let mut s = deepseek_v3();
    (s.n_expert, s.n_head, s.n_vocab, s.n_ctx, s.rope_base, s.yarn) =
        (384, 64, 163_840, 131_072, 50_000.0, Some((32.0, 4096)));
    for (k, v) in &mut s.extra {
        *v = match *k {
            x::DENSE_LEAD | x::GROUPS | x::GROUPS_USED | x::BETA_FAST | x::BETA_SLOW => 1.0,
            x::SCALE => 2.827,
            _ => *v,
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::preset;

    /// The constraints llama.cpp's loader asserts (`llama_model_base::load_hparams`) and the
    /// group selection needs, on every shape bmoe writes of this architecture.
    #[test]
    fn shapes_satisfy_the_loader_and_the_group_selection() {
        for name in ["tiny", "small", "deepseek-v3", "kimi-k2"] {
            let mut s = preset(name).unwrap();
            fit(&mut s);
            let (g, used) = (s.get(x::GROUPS).unwrap_or(0.0) as u64, s.get(x::GROUPS_USED).unwrap_or(0.0) as u64);
            assert!(g < s.n_expert, "{name}");
            if g > 1 {
                assert!(s.n_expert % g == 0 && used > 0 && used < g, "{name}");
                // argsort_top_k(…, 2) per group, and enough experts left for top-k.
                assert!(s.n_expert / g >= 2 && used * (s.n_expert / g) >= s.n_expert_used, "{name}");
            }
            assert!(dim(&s, x::DENSE_LEAD) >= 1 && dim(&s, x::DENSE_LEAD) < u64::from(s.n_layer), "{name}");
            assert_eq!(s.n_ff_shexp, s.n_ff_exp * dim(&s, x::SHARED), "{name}");
            assert!(dim(&s, x::QK_NOPE) >= 1 && s.n_head_kv == 1, "{name}");
        }
        // The tiny shape exercises groups (4 of 2 experts, 2 used), a dense lead and YaRN.
        let mut s = preset("tiny").unwrap();
        fit(&mut s);
        assert_eq!((s.get(x::GROUPS), s.get(x::GROUPS_USED), s.get(x::DENSE_LEAD)), (Some(4.0), Some(2.0), Some(1.0)));
        assert!(s.yarn.is_some());
    }

    #[test]
    fn dense_lead_layers_have_no_experts() {
        let mut s = preset("tiny").unwrap();
        fit(&mut s);
        let t = tensors(&s);
        let has = |n: &str| t.iter().any(|t| t.name == n);
        assert!(has("blk.0.ffn_down.weight") && !has("blk.0.ffn_gate_inp.weight") && !has("blk.0.ffn_up_exps.weight"));
        assert!(has("blk.1.ffn_up_exps.weight") && has("blk.1.exp_probs_b.bias") && has("blk.1.ffn_up_shexp.weight"));
        assert!(!has("blk.1.ffn_up.weight") && !has("blk.0.attn_kv_b.weight"));
    }
}
