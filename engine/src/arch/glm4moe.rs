//! glm4moe (GLM-4.5-Air, GLM-4.5, GLM-4.6), which only the generic decoder runs (llama.cpp's
//! `src/models/glm4-moe.cpp`): Q/K/V biases, per-head Q/K RMS norms where the file has them
//! (GLM-4.5 and 4.6; not Air), NeoX RoPE over the first half of each head only
//! (`rope.dimension_count` = head_dim / 2, the config's `partial_rotary_factor` 0.5), the FFN
//! norm named `post_attention_norm`; the first `leading_dense_block_count` layers have a dense
//! SwiGLU FFN, the others route: sigmoid router, top-k chosen on the probabilities plus a
//! per-expert selection bias (`exp_probs_b`, which the weights do not see), the k weights
//! normalised and scaled by `expert_weights_scale`, plus one shared expert of the routed size
//! (unscaled, no gate). The last `nextn_predict_layers` blocks are the NextN/MTP head (a MoE
//! layer plus `nextn.*` projections): the real files carry it, llama.cpp skips its tensors
//! unless asked for its MTP draft context (`load_mtp`, off by default), so a plain decode never
//! routes through it and the generic index does not stream it.
//!
//! What streams: the routed experts (gate, up, down) of the MoE layers. The leading dense
//! layers' FFN and the shared experts stay resident with the attention.

use super::synth::{common_metadata, dense_lead_or_shared_moe_ffn, Chat, Role, Shape, Specials, SynthArch, TensorSpec};
use super::SynthSpec;
use crate::gguf::Value;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "glm4moe",
    models: "GLM-4.5-Air, GLM-4.5, GLM-4.6",
    synth: SynthArch { tensors, metadata, fit, chat: &GLM },
    presets: &[("glm-4.5-air", glm_4_5_air), ("glm-4.6", glm_4_6)],
};

/// GLM-4's special tokens (ids 151329-151336 in the real vocabulary): bos `[gMASK]`, eos
/// `<|endoftext|>`; llama.cpp also ends a generation at `<|user|>` and `<|observation|>`.
const GLM_SPECIALS: &[&str] =
    &["<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"];

/// GLM-4's chat format (llama.cpp recognises it by `[gMASK]<sop>` and applies its built-in
/// `chatglm4` template), in the GLM-4 pre-tokenizer.
const GLM: Chat = Chat {
    specials: Specials { tokens: GLM_SPECIALS, bos: "[gMASK]", eos: "<|endoftext|>" },
    pre: "glm4",
    template: "[gMASK]<sop>{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] }}\
               {% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}",
};

/// The shape's extra values, with [`fit`]'s defaults applied.
struct Glm {
    /// Trailing NextN/MTP blocks (`nextn_predict_layers`), counted in `n_layer`.
    nextn: u32,
    /// Leading layers with a dense FFN (`leading_dense_block_count`).
    dense_lead: u32,
    /// Shared experts per MoE layer (`expert_shared_count`); their FFN is that many routed
    /// experts wide.
    n_shared: u64,
    /// Per-head Q/K RMS norms.
    qk_norm: bool,
    /// The MTP blocks carry their own token embedding and LM head (GLM-4.5-Air's files do,
    /// GLM-4.6's do not).
    nextn_heads: bool,
    /// Rotated dimensions of each head (`rope.dimension_count`).
    n_rot: u64,
    /// `expert_weights_scale` (the config's `routed_scaling_factor`).
    scale: f32,
}

impl Glm {
    fn of(s: &Shape) -> Self {
        let get = |k: &str| s.get(k).unwrap_or_else(|| panic!("glm4moe shape without `{k}`: not fitted"));
        Self {
            nextn: get("nextn") as u32,
            dense_lead: get("dense_lead") as u32,
            n_shared: get("n_shared") as u64,
            qk_norm: get("qk_norm") != 0.0,
            nextn_heads: get("nextn_heads") != 0.0,
            n_rot: get("n_rot") as u64,
            scale: get("scale") as f32,
        }
    }
}

/// As `llama_model_glm4_moe::load_arch_tensors` creates them, for every block (the MTP blocks'
/// as the real files have them, though llama.cpp skips them).
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let g = Glm::of(s);
    let (q, kv) = (s.n_head * s.head_dim, s.n_head_kv * s.head_dim);
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
            t("attn_q.weight", vec![s.n_embd, q], Role::AttnQ),
            t("attn_k.weight", vec![s.n_embd, kv], Role::AttnK),
            t("attn_v.weight", vec![s.n_embd, kv], Role::AttnV),
            t("attn_q.bias", vec![q], Role::Bias),
            t("attn_k.bias", vec![kv], Role::Bias),
            t("attn_v.bias", vec![kv], Role::Bias),
            t("attn_output.weight", vec![q, s.n_embd], Role::AttnOut),
        ]);
        if g.qk_norm {
            v.extend([
                t("attn_q_norm.weight", vec![s.head_dim], Role::Norm),
                t("attn_k_norm.weight", vec![s.head_dim], Role::Norm),
            ]);
        }
        v.push(t("post_attention_norm.weight", vec![s.n_embd], Role::Norm));
        v.extend(dense_lead_or_shared_moe_ffn(s, l, g.dense_lead));
        if l >= trunk {
            v.extend([
                t("nextn.eh_proj.weight", vec![2 * s.n_embd, s.n_embd], Role::Weight),
                t("nextn.enorm.weight", vec![s.n_embd], Role::Norm),
                t("nextn.hnorm.weight", vec![s.n_embd], Role::Norm),
                t("nextn.shared_head_norm.weight", vec![s.n_embd], Role::Norm),
            ]);
            if g.nextn_heads {
                v.extend([
                    t("nextn.embed_tokens.weight", vec![s.n_embd, s.n_vocab], Role::Weight),
                    t("nextn.shared_head_head.weight", vec![s.n_embd, s.n_vocab], Role::Weight),
                ]);
            }
        }
    }
    v.push(global("output_norm.weight", vec![s.n_embd], Role::Norm));
    v.push(global("output.weight", vec![s.n_embd, s.n_vocab], Role::Output));
    v
}

/// As llama.cpp's converter writes a GLM-4.5 config (`Glm4MoeModel.set_gguf_parameters`):
/// `block_count` counts the MTP blocks, `feed_forward_length` is the dense layers' FFN, the
/// head size is explicit (96 heads of 128 are not `n_embd` / `n_head`), the gating is sigmoid,
/// the experts are one group.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let g = Glm::of(s);
    let u = |x: u64| Value::U32(x as u32);
    let mut v = common_metadata("glm4moe", s);
    v.extend(
        [
            ("feed_forward_length", u(s.n_ff)),
            ("attention.key_length", u(s.head_dim)),
            ("attention.value_length", u(s.head_dim)),
            ("rope.dimension_count", u(g.n_rot)),
            ("expert_feed_forward_length", u(s.n_ff_exp)),
            ("expert_shared_count", u(g.n_shared)),
            ("leading_dense_block_count", u(g.dense_lead.into())),
            // LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID
            ("expert_gating_func", Value::U32(2)),
            ("expert_weights_scale", Value::F32(g.scale)),
            ("expert_weights_norm", Value::Bool(true)),
            ("nextn_predict_layers", u(g.nextn.into())),
            // The config's n_group and topk_group: one group, which llama.cpp's graph skips.
            ("expert_group_count", Value::U32(1)),
            ("expert_group_used_count", Value::U32(1)),
        ]
        .map(|(k, x)| (format!("glm4moe.{k}"), x)),
    );
    v
}

/// A generic preset (`tiny`, `small`) becomes a GLM-4.6-like model: its first layer dense, the
/// last block an MTP head, one shared expert, per-head Q/K norms, half the head rotated,
/// weights scaled by 2.5. The shared expert's width follows from the routed one's.
fn fit(s: &mut Shape) {
    s.or_set("nextn", 1.0);
    s.or_set("dense_lead", 1.0);
    s.or_set("n_shared", 1.0);
    s.or_set("qk_norm", 1.0);
    s.or_set("nextn_heads", 1.0);
    s.or_set("n_rot", (s.head_dim / 2) as f64);
    s.or_set("scale", 2.5);
    s.n_ff_shexp = s.n_ff_exp * Glm::of(s).n_shared;
}

/// GLM-4.5-Air (zai-org/GLM-4.5-Air config.json): 46 layers and the MTP block, the first layer
/// dense (10944), 128 experts of 1408 and one shared, top-8, 96 query heads and 8 KV heads of
/// 128, no Q/K norm, `routed_scaling_factor` 1.0; 106 B parameters, 12 B active (the model
/// card; llama.cpp counts 110.47 B in the file, the MTP block's 3.6 B included).
fn glm_4_5_air() -> Shape {
    Shape {
        n_layer: 47,
        n_embd: 4096,
        n_ff: 10_944,
        n_ff_exp: 1408,
        n_ff_shexp: 1408,
        n_expert: 128,
        n_expert_used: 8,
        n_head: 96,
        n_head_kv: 8,
        head_dim: 128,
        n_vocab: 151_552,
        n_ctx: 131_072,
        rope_base: 1e6,
        rms_eps: 1e-5,
        n_swa: 0,
        yarn: None,
        extra: vec![
            ("nextn", 1.0),
            ("dense_lead", 1.0),
            ("n_shared", 1.0),
            ("qk_norm", 0.0),
            ("nextn_heads", 1.0),
            ("n_rot", 64.0),
            ("scale", 1.0),
        ],
    }
}

/// GLM-4.6 (zai-org/GLM-4.6 config.json), which is GLM-4.5's shape with a 202752-token context
/// (GLM-4.5's is 131072; nothing else differs, so this preset stands for both): 92 layers and
/// the MTP block, the first 3 dense (12288), 160 experts of 1536 and one shared, top-8, 96
/// query heads and 8 KV heads of 128 with per-head Q/K norms, `routed_scaling_factor` 2.5;
/// 355 B parameters, 32 B active (the model card).
fn glm_4_6() -> Shape {
    Shape {
        n_layer: 93,
        n_embd: 5120,
        n_ff: 12_288,
        n_ff_exp: 1536,
        n_ff_shexp: 1536,
        n_expert: 160,
        n_expert_used: 8,
        n_head: 96,
        n_head_kv: 8,
        head_dim: 128,
        n_vocab: 151_552,
        n_ctx: 202_752,
        rope_base: 1e6,
        rms_eps: 1e-5,
        n_swa: 0,
        yarn: None,
        extra: vec![
            ("nextn", 1.0),
            ("dense_lead", 3.0),
            ("n_shared", 1.0),
            ("qk_norm", 1.0),
            ("nextn_heads", 0.0),
            ("n_rot", 64.0),
            ("scale", 2.5),
        ],
    }
}
