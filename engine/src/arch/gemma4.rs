//! gemma4 (Gemma-4-26B-A4B), after llama.cpp's `src/models/gemma4.cpp`, decoded by the generic
//! path only: llama.cpp's own graph with the routed experts streamed in.
//!
//! What its graph has that a synthetic file must carry, and what matters for streaming:
//! - two kinds of attention layer, by `attention.sliding_window_pattern` (one bool per layer;
//!   the real models slide on five layers of six): sliding layers have heads of
//!   `attention.key_length_swa` with `head_count_kv[l]` KV heads, RoPE base
//!   `rope.freq_base_swa`, a `attention.sliding_window` mask; full layers have wider heads
//!   (`attention.key_length`), fewer KV heads, no `attn_v` (K is V: `attention_k_eq_v`) and the
//!   `rope_freqs` factors (one tensor for all of them);
//! - per-head RMS norms of Q and K (`attn_q_norm`, `attn_k_norm`), V RMS-normed without weight,
//!   attention scale 1; post-norms after attention and after the FFN, a per-layer output scale;
//! - each layer's FFN is a dense GELU MLP (`ffn_gate`, `ffn_up`, `ffn_down`, the "shared
//!   expert") plus a routed MoE whose router reads the RMS-normed residual scaled by
//!   `1/√n_embd` and by `ffn_gate_inp.scale` (the graph computes the logits itself and hands
//!   them to `build_moe_ffn`); softmax, top-k, the k weights normalised; GEGLU experts with
//!   gate and up fused in one tensor (`ffn_gate_up_exps`, `[n_embd, 2·n_ff_exp, n_expert]`)
//!   and a per-expert scale on the down projection (`ffn_down_exps.scale`, `[n_expert]` f32,
//!   the converter's `router.per_expert_scale`), applied by `get_rows` on the routed ids;
//! - the input embedding scaled by `√n_embd`, tied to the output, and the logits soft-capped
//!   (`final_logit_softcapping`, 30).
//!
//! What streams: per (layer, expert) the fused gate_up slice and the down slice; the per-expert
//! scale is 4 bytes an expert and stays resident with the dense weights, read by the graph
//! through the same routed ids. Nothing else about the MoE differs from the other
//! architectures: `ffn_moe_topk-<il>` names the ids and both `mul_mat_id`s take them.

use super::synth::{Chat, Init, Role, Shape, Specials, SynthArch, TensorSpec};
use super::SynthSpec;
use crate::gguf::{Value, ValueType};
use crate::synth::Q4KM_BARTOWSKI;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "gemma4",
    models: "Gemma-4-26B-A4B",
    synth: SynthArch { tensors, metadata, fit, chat: &GEMMA },
    presets: &[("gemma-4-26b-a4b", gemma_4_26b_a4b)],
};

/// Gemma's special tokens as its chat template uses them: bos `<bos>`, eos `<eos>`, and the
/// turn markers (llama.cpp ends a generation at `<eos>` and at `<end_of_turn>`).
const GEMMA_SPECIALS: Specials =
    Specials { tokens: &["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"], bos: "<bos>", eos: "<eos>" };

/// Gemma's chat template as llama.cpp's template engine knows it (`gemma`, recognised by its
/// `<start_of_turn>` marker; a system message is prefixed to the first user turn, the
/// assistant is `model`). The real Gemma 4 files carry a newer template (`<|turn>` …
/// `<turn|>`) that the vendored `llama_chat_apply_template` does not recognise; this one it
/// renders exactly as written.
pub const GEMMA_TEMPLATE: &str = "{% if messages[0]['role'] == 'system' %}{% set first_user_prefix = messages[0]['content'] | trim + '\\n\\n' %}\
    {% set loop_messages = messages[1:] %}{% else %}{% set first_user_prefix = '' %}{% set loop_messages = messages %}{% endif %}\
    {% for message in loop_messages %}{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}\
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') + message['content'] | trim + '<end_of_turn>\\n' }}\
    {% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

/// Gemma's chat, in the byte-level BPE vocabulary every synthetic file has (llama.cpp's vocab
/// loader does not tie a tokenizer to an architecture; the real files' `gemma4` tokenizer,
/// SPM-style BPE with byte-fallback tokens, is not reproduced).
pub const GEMMA: Chat = Chat { specials: GEMMA_SPECIALS, pre: "default", template: GEMMA_TEMPLATE };

// The shape's gemma4 values (`Shape::extra`), as the converter reads them from config.json.
/// Head size of the full-attention layers (`global_head_dim`); `Shape::head_dim` is the
/// sliding layers' (`head_dim`).
const HEAD_DIM_FULL: &str = "head_dim_full";
/// KV heads of the full-attention layers (`num_global_key_value_heads`); `Shape::n_head_kv`
/// is the sliding layers'.
const N_HEAD_KV_FULL: &str = "n_head_kv_full";
/// Every `SWA_PERIOD`-th layer attends fully, the others slide (`layer_types`).
const SWA_PERIOD: &str = "swa_period";
/// RoPE base of the sliding layers; `Shape::rope_base` is the full layers'.
const ROPE_BASE_SWA: &str = "rope_base_swa";
/// `final_logit_softcapping`.
const SOFTCAP: &str = "softcap";

/// Whether layer `l` slides (the pattern the converter writes from `layer_types`).
fn slides(s: &Shape, l: u32) -> bool {
    let period = s.get(SWA_PERIOD).unwrap_or(6.0) as u32;
    (l + 1) % period.max(1) != 0
}

/// The values a generic preset (`tiny`, `small`) lacks: full layers with heads twice as wide
/// and a quarter of the KV heads, one layer in six attending fully (the last of `tiny`'s
/// four), a window short enough that the gates' 24 positions cross it.
fn fit(s: &mut Shape) {
    s.or_set(HEAD_DIM_FULL, (2 * s.head_dim) as f64);
    s.or_set(N_HEAD_KV_FULL, (s.n_head_kv / 4).max(1) as f64);
    s.or_set(SWA_PERIOD, f64::from(s.n_layer.min(6)));
    s.or_set(ROPE_BASE_SWA, 10_000.0);
    s.or_set(SOFTCAP, 30.0);
    if s.n_swa == 0 {
        s.n_swa = 16;
    }
}

/// Head size and KV heads of layer `l`.
fn attn_of(s: &Shape, l: u32) -> (u64, u64) {
    if slides(s, l) {
        (s.head_dim, s.n_head_kv)
    } else {
        (s.get(HEAD_DIM_FULL).unwrap_or(s.head_dim as f64) as u64, s.get(N_HEAD_KV_FULL).unwrap_or(1.0) as u64)
    }
}

/// Every tensor llama.cpp's gemma4 loader creates for a MoE model without per-layer
/// embeddings, named and shaped as it asks (`load_arch_tensors`), in the converter's order.
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let global = |name: &str, dims: Vec<u64>, role| TensorSpec { name: name.into(), dims, role, layer: None };
    // Tied to the output (no `output.weight`): the quantizer types it as the output, and its
    // scale is the output's, so that the √n_embd-scaled input is O(1) and so are the logits.
    let mut v = vec![global("token_embd.weight", vec![s.n_embd, s.n_vocab], Role::Output)];
    let hd_full = s.get(HEAD_DIM_FULL).unwrap_or(s.head_dim as f64) as u64;
    if (0..s.n_layer).any(|l| !slides(s, l)) {
        // The full layers' RoPE factors; the real ones leave 3/4 of each head unrotated
        // (proportional RoPE, factors 1e30), which changes no shape.
        v.push(global("rope_freqs.weight", vec![hd_full / 2], Role::F32(Init::Const(1.0))));
    }
    v.push(global("output_norm.weight", vec![s.n_embd], Role::Norm));
    let e = s.n_embd;
    for l in 0..s.n_layer {
        let t = |base: &str, dims: Vec<u64>, role| TensorSpec {
            name: format!("blk.{l}.{base}"),
            dims,
            role,
            layer: Some(l),
        };
        let (hd, kv) = attn_of(s, l);
        let q = s.n_head * hd;
        v.extend([
            t("attn_norm.weight", vec![e], Role::Norm),
            t("attn_q.weight", vec![e, q], Role::AttnQ),
            t("attn_k.weight", vec![e, kv * hd], Role::AttnK),
        ]);
        if slides(s, l) {
            v.push(t("attn_v.weight", vec![e, kv * hd], Role::AttnV));
        }
        v.extend([
            t("attn_output.weight", vec![q, e], Role::AttnOut),
            t("attn_q_norm.weight", vec![hd], Role::Norm),
            t("attn_k_norm.weight", vec![hd], Role::Norm),
            t("post_attention_norm.weight", vec![e], Role::Norm),
            t("layer_output_scale.weight", vec![1], Role::F32(Init::Const(1.0))),
            // The dense MLP, which the MoE layers run beside the experts as a shared expert.
            t("ffn_norm.weight", vec![e], Role::Norm),
            t("ffn_gate.weight", vec![e, s.n_ff], Role::ShexpGate),
            t("ffn_up.weight", vec![e, s.n_ff], Role::ShexpUp),
            t("ffn_down.weight", vec![s.n_ff, e], Role::ShexpDown),
            t("post_ffw_norm.weight", vec![e], Role::Norm),
            t("ffn_gate_inp.weight", vec![e, s.n_expert], Role::Router),
            // The router's input is RMS-normed and scaled by 1/√n_embd; this scale of √n_embd
            // gives the router a unit-RMS input, hence unit-variance logits.
            t("ffn_gate_inp.scale", vec![e], Role::F32(Init::Const((e as f32).sqrt()))),
            t("pre_ffw_norm_2.weight", vec![e], Role::Norm),
            t("post_ffw_norm_1.weight", vec![e], Role::Norm),
            t("post_ffw_norm_2.weight", vec![e], Role::Norm),
            t("ffn_gate_up_exps.weight", vec![e, 2 * s.n_ff_exp, s.n_expert], Role::ExpGate),
            t("ffn_down_exps.weight", vec![s.n_ff_exp, e, s.n_expert], Role::ExpDown),
            t("ffn_down_exps.scale", vec![s.n_expert], Role::F32(Init::Uniform(0.5, 1.5))),
        ]);
    }
    v
}

/// The keys llama.cpp's gemma4 loader reads, as its converter (`Gemma4Model`) writes them:
/// the head sizes and KV heads per kind of layer, the window and its pattern, both RoPE bases,
/// the soft-cap, no per-layer embeddings and no shared KV layers.
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let a = |k: &str| format!("gemma4.{k}");
    let u = |x: u64| Value::U32(x as u32);
    let hd_full = s.get(HEAD_DIM_FULL).unwrap_or(s.head_dim as f64) as u64;
    let kv: Vec<Value> = (0..s.n_layer).map(|l| Value::I32(attn_of(s, l).1 as i32)).collect();
    let swa: Vec<Value> = (0..s.n_layer).map(|l| Value::Bool(slides(s, l))).collect();
    vec![
        (a("block_count"), u(s.n_layer.into())),
        (a("context_length"), u(s.n_ctx)),
        (a("embedding_length"), u(s.n_embd)),
        (a("feed_forward_length"), u(s.n_ff)),
        (a("attention.head_count"), u(s.n_head)),
        (a("attention.head_count_kv"), Value::Array(ValueType::I32, kv)),
        (a("attention.layer_norm_rms_epsilon"), Value::F32(s.rms_eps)),
        (a("attention.key_length"), u(hd_full)),
        (a("attention.value_length"), u(hd_full)),
        (a("attention.key_length_swa"), u(s.head_dim)),
        (a("attention.value_length_swa"), u(s.head_dim)),
        (a("attention.sliding_window"), u(s.n_swa)),
        (a("attention.sliding_window_pattern"), Value::Array(ValueType::Bool, swa)),
        (a("attention.shared_kv_layers"), u(0)),
        (a("embedding_length_per_layer_input"), u(0)),
        (a("rope.freq_base"), Value::F32(s.rope_base)),
        (a("rope.freq_base_swa"), Value::F32(s.get(ROPE_BASE_SWA).unwrap_or(10_000.0) as f32)),
        (a("rope.dimension_count"), u(hd_full)),
        (a("rope.dimension_count_swa"), u(s.head_dim)),
        (a("final_logit_softcapping"), Value::F32(s.get(SOFTCAP).unwrap_or(30.0) as f32)),
        (a("expert_count"), u(s.n_expert)),
        (a("expert_used_count"), u(s.n_expert_used)),
        (a("expert_feed_forward_length"), u(s.n_ff_exp)),
    ]
}

/// Gemma-4-26B-A4B (google/gemma-4-26B-A4B-it config.json `text_config`, as llama.cpp's
/// converter writes it; 25.2 B parameters, 3.8 B active, Google's model card): 30 layers of
/// n_embd 2816; sliding layers (five of six, window 1024, RoPE base 10000) with 16 query heads
/// and 8 KV heads of 256, full layers with 16 query heads and 2 KV heads of 512 (K is V,
/// RoPE base 1e6); a dense GELU MLP of 2112 beside 128 experts of 704, top-8; the 262144-row
/// vocabulary tied to the output; logits soft-capped at 30.
///
/// Its q4_k_m is the published Q4_K_M file the routing trace `gemma4-26b-a4b.route.csv` was
/// recorded on (bartowski's, see [`Q4KM_BARTOWSKI`]), whose quantizer counted the 30 per-expert
/// scales among its 60 `ffn_down_exps` tensors.
fn gemma_4_26b_a4b() -> Shape {
    let n_layer = 30;
    Shape {
        n_layer,
        n_embd: 2816,
        n_ff: 2112,
        n_ff_exp: 704,
        n_ff_shexp: 0,
        n_expert: 128,
        n_expert_used: 8,
        n_head: 16,
        n_head_kv: 8,
        head_dim: 256,
        n_vocab: 262_144,
        n_ctx: 262_144,
        rope_base: 1e6,
        rms_eps: 1e-6,
        n_swa: 1024,
        yarn: None,
        extra: vec![
            (HEAD_DIM_FULL, 512.0),
            (N_HEAD_KV_FULL, 2.0),
            (SWA_PERIOD, 6.0),
            (ROPE_BASE_SWA, 10_000.0),
            (SOFTCAP, 30.0),
            (Q4KM_BARTOWSKI, f64::from(2 * n_layer)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_pattern_slides_five_layers_of_six() {
        let s = gemma_4_26b_a4b();
        let full: Vec<u32> = (0..s.n_layer).filter(|&l| !slides(&s, l)).collect();
        assert_eq!(full, [5, 11, 17, 23, 29]);
        let t = tensors(&s);
        // 25 sliding layers of 22 tensors, 5 full ones of 21 (no attn_v), token_embd,
        // rope_freqs and output_norm: the 658 of the published files.
        assert_eq!(t.len(), 658);
        assert!(t.iter().all(|t| t.name != "output.weight"));
        let k5 = t.iter().find(|t| t.name == "blk.5.attn_k.weight").unwrap();
        assert_eq!(k5.dims, [2816, 1024]);
        let q0 = t.iter().find(|t| t.name == "blk.0.attn_q.weight").unwrap();
        assert_eq!(q0.dims, [2816, 4096]);
    }

    #[test]
    fn tiny_fits_with_one_full_layer() {
        let mut s = crate::synth::preset("tiny").unwrap();
        fit(&mut s);
        let full: Vec<u32> = (0..s.n_layer).filter(|&l| !slides(&s, l)).collect();
        assert_eq!(full, [3]);
        assert_eq!(attn_of(&s, 3), (128, 1));
        assert_eq!(attn_of(&s, 0), (64, 2));
        assert!(s.n_swa > 0);
    }
}
