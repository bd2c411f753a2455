//! bailingmoe2 (Ling-mini-2.0, Ling-flash-2.0 and their Ring thinking variants), which only the
//! generic decoder runs (llama.cpp's `src/models/bailingmoe2.cpp`): one fused `attn_qkv`
//! projection, per-head Q/K RMS norms, NeoX RoPE over half of each head; the first
//! `leading_dense_block_count` layers have a dense SwiGLU FFN, the others route: sigmoid router,
//! a selection bias (`exp_probs_b`), **expert groups** (256 experts in 8 groups; each token
//! first keeps the 4 groups whose two best experts score highest, then takes its top-8 among
//! their experts), the k weights normalised and scaled by `expert_weights_scale`, plus one
//! shared expert. The last `nextn_predict_layers` blocks, if any, are an MTP head llama.cpp
//! always skips (the released Ling 2.0 checkpoints have none).
//!
//! What streams: the routed experts (gate, up, down) of the MoE layers. The leading dense
//! layer's FFN and the shared experts stay resident with the attention.

use super::synth::{common_metadata, dense_lead_or_shared_moe_ffn, Role, Shape, SynthArch, TensorSpec, CHATML};
use super::SynthSpec;
use crate::gguf::Value;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "bailingmoe2",
    models: "Ling-mini-2.0, Ling-flash-2.0 (and Ring-mini-2.0, Ring-flash-2.0)",
    synth: SynthArch { tensors, metadata, fit, chat: &CHATML },
    presets: &[("ling-mini-2.0", ling_mini_2_0), ("ling-flash-2.0", ling_flash_2_0)],
};

/// The shape's extra values, with [`fit`]'s defaults applied.
struct Ling {
    /// Trailing MTP blocks (`nextn_predict_layers`), counted in `n_layer`.
    nextn: u32,
    /// Leading layers with a dense FFN (`leading_dense_block_count`).
    dense_lead: u32,
    /// Expert groups and the groups each token keeps (`expert_group_count`,
    /// `expert_group_used_count`).
    groups: u32,
    groups_used: u32,
    /// Rotated dimensions of each head (`rope.dimension_count`).
    n_rot: u64,
    /// `expert_weights_scale` (the config's `routed_scaling_factor`).
    scale: f32,
}

impl Ling {
    fn of(s: &Shape) -> Self {
        let get = |k: &str| s.get(k).unwrap_or_else(|| panic!("bailingmoe2 shape without `{k}`: not fitted"));
        Self {
            nextn: get("nextn") as u32,
            dense_lead: get("dense_lead") as u32,
            groups: get("groups") as u32,
            groups_used: get("groups_used") as u32,
            n_rot: get("n_rot") as u64,
            scale: get("scale") as f32,
        }
    }
}

/// As `llama_model_bailingmoe2::load_arch_tensors` creates them, the MTP blocks' (if any) with
/// the tensors it requires of them.
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let g = Ling::of(s);
    let kv = s.n_head_kv * s.head_dim;
    let trunk = s.n_layer - g.nextn;
    let global = |name: &str, dims: Vec<u64>, role| TensorSpec { name: name.into(), dims, role, layer: None };
    let mut v = vec![global("token_embd.weight", vec![s.n_embd, s.n_vocab], Role::TokenEmbd)];
    for l in 0..s.n_layer {
        let t = |name: &str, dims: Vec<u64>, role| TensorSpec {
            name: format!("blk.{l}.{name}"),
            dims,
            role,
            layer: Some(l),
        };
        v.extend([
            t("attn_norm.weight", vec![s.n_embd], Role::Norm),
            // llama-quant treats a fused QKV as it treats attn_v (the attn_v branch catches it
            // first): q6_K on the use_more_bits layers, else the mix's default.
            t("attn_qkv.weight", vec![s.n_embd, s.n_embd + 2 * kv], Role::AttnV),
            t("attn_output.weight", vec![s.n_head * s.head_dim, s.n_embd], Role::AttnOut),
            t("attn_q_norm.weight", vec![s.head_dim], Role::Norm),
            t("attn_k_norm.weight", vec![s.head_dim], Role::Norm),
            t("ffn_norm.weight", vec![s.n_embd], Role::Norm),
        ]);
        v.extend(dense_lead_or_shared_moe_ffn(s, l, g.dense_lead));
        if l >= trunk {
            v.extend([
                t("nextn.eh_proj.weight", vec![2 * s.n_embd, s.n_embd], Role::Weight),
                t("nextn.enorm.weight", vec![s.n_embd], Role::Norm),
                t("nextn.hnorm.weight", vec![s.n_embd], Role::Norm),
                t("layer_output_norm.weight", vec![s.n_embd], Role::Norm),
            ]);
        }
    }
    v.push(global("output_norm.weight", vec![s.n_embd], Role::Norm));
    v.push(global("output.weight", vec![s.n_embd, s.n_vocab], Role::Output));
    v
}

/// As llama.cpp's converter writes a Ling 2.0 config (`BailingMoeV2Model.set_gguf_parameters`
/// over the base one, which writes the groups from `n_group`/`topk_group` and the sigmoid
/// gating from `score_function`).
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let g = Ling::of(s);
    let u = |x: u64| Value::U32(x as u32);
    let mut v = common_metadata("bailingmoe2", s);
    v.extend(
        [
            ("feed_forward_length", u(s.n_ff)),
            ("attention.key_length", u(s.head_dim)),
            ("attention.value_length", u(s.head_dim)),
            ("rope.dimension_count", u(g.n_rot)),
            ("leading_dense_block_count", u(g.dense_lead.into())),
            ("vocab_size", u(s.n_vocab)),
            ("expert_feed_forward_length", u(s.n_ff_exp)),
            ("expert_shared_feed_forward_length", u(s.n_ff_shexp)),
            ("expert_shared_count", Value::U32(1)),
            ("expert_weights_scale", Value::F32(g.scale)),
            ("expert_weights_norm", Value::Bool(true)),
            ("expert_group_count", u(g.groups.into())),
            ("expert_group_used_count", u(g.groups_used.into())),
            // LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID (required by this loader)
            ("expert_gating_func", Value::U32(2)),
            ("nextn_predict_layers", u(g.nextn.into())),
        ]
        .map(|(k, x)| (format!("bailingmoe2.{k}"), x)),
    );
    v
}

/// A generic preset (`tiny`, `small`) becomes a Ling-2.0-like model: its first layer dense, the
/// experts in 4 groups of which each token keeps 2, one shared expert as wide as a routed one,
/// half the head rotated, weights scaled by 2.5, and an MTP block at the end (which the loader
/// supports and the generic index must leave out). The fused QKV needs the heads to tile
/// `n_embd`.
fn fit(s: &mut Shape) {
    s.or_set("nextn", 1.0);
    s.or_set("dense_lead", 1.0);
    s.or_set("groups", 4.0);
    s.or_set("groups_used", 2.0);
    s.head_dim = s.n_embd / s.n_head;
    s.or_set("n_rot", (s.head_dim / 2) as f64);
    s.or_set("scale", 2.5);
    s.n_ff_shexp = s.n_ff_exp;
}

/// Ling-mini-2.0 (inclusionAI/Ling-mini-2.0 config.json): 20 layers, the first dense (5120),
/// n_embd 2048, 256 experts of 512 in 8 groups (4 kept), top-8, one shared expert, 16 query
/// heads and 4 KV heads of 128 (64 dimensions rotated), RoPE base 600000, a 32768-token context,
/// a 157184-token vocabulary, `routed_scaling_factor` 2.5, no MTP block in the release;
/// 16.26 B parameters, 1.43 B active (789 M without the embedding and head: the model card).
fn ling_mini_2_0() -> Shape {
    Shape {
        n_layer: 20,
        n_embd: 2048,
        n_ff: 5120,
        n_ff_exp: 512,
        n_ff_shexp: 512,
        n_expert: 256,
        n_expert_used: 8,
        n_head: 16,
        n_head_kv: 4,
        head_dim: 128,
        n_vocab: 157_184,
        n_ctx: 32_768,
        rope_base: 600_000.0,
        rms_eps: 1e-6,
        n_swa: 0,
        yarn: None,
        extra: vec![
            ("nextn", 0.0),
            ("dense_lead", 1.0),
            ("groups", 8.0),
            ("groups_used", 4.0),
            ("n_rot", 64.0),
            ("scale", 2.5),
        ],
    }
}

/// Ling-flash-2.0 (inclusionAI/Ling-flash-2.0 config.json): Ling-mini's design at 32 layers,
/// n_embd 4096, a dense first layer of 9216, 256 experts of 1024, 32 query heads and 4 KV heads
/// of 128; 100 B parameters (102,889,705,216 in its safetensors), 6.1 B active (4.8 B without
/// the embedding and head: the model card).
fn ling_flash_2_0() -> Shape {
    Shape { n_layer: 32, n_embd: 4096, n_ff: 9216, n_ff_exp: 1024, n_ff_shexp: 1024, n_head: 32, ..ling_mini_2_0() }
}
