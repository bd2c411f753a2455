//! llama4 (Llama-4-Scout-17B-16E, Llama-4-Maverick-17B-128E), which only the generic decoder
//! runs (llama.cpp's `src/models/llama4.cpp`): every `interleave_moe_layer_step`-th layer routes
//! (Scout every layer, Maverick every other one; the others have a dense SwiGLU FFN of
//! `feed_forward_length`); a MoE layer's router is a top-k of the logits, the chosen experts'
//! weights their sigmoid, applied to the input *before* the experts (llama.cpp's
//! `weight_before_ffn`), plus one shared expert of the routed size. Attention is chunked: three
//! layers of four see only their 8192-token chunk (the loader's fixed `n_swa`, iSWA KV cache),
//! the fourth sees everything and skips RoPE, its queries scaled by a position temperature
//! instead; the RoPE layers L2-normalise Q and K (not Maverick: the loader decides by its 128
//! experts). RoPE is normal (not NeoX) with the llama3 frequency factors of `rope_freqs`.
//!
//! What streams: the routed experts (gate, up, down) of the MoE layers. The dense layers' FFN
//! and the shared experts stay resident with the attention.

use super::synth::{common_metadata, Init, Role, Shape, SynthArch, TensorSpec, CHATML};
use super::SynthSpec;
use crate::gguf::Value;

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "llama4",
    models: "Llama-4-Scout-17B-16E, Llama-4-Maverick-17B-128E",
    synth: SynthArch { tensors, metadata, fit, chat: &CHATML },
    presets: &[("llama-4-scout", llama_4_scout), ("llama-4-maverick", llama_4_maverick)],
};

/// Every how many layers one routes (`interleave_moe_layer_step`).
fn moe_step(s: &Shape) -> u32 {
    s.get("moe_step").expect("llama4 shape without `moe_step`: not fitted") as u32
}

/// As `llama_model_llama4::load_arch_tensors` creates them, with the `rope_freqs` the converter
/// writes for a llama3 RoPE scaling (ones here: no scaling).
fn tensors(s: &Shape) -> Vec<TensorSpec> {
    let step = moe_step(s);
    let (q, kv) = (s.n_head * s.head_dim, s.n_head_kv * s.head_dim);
    let global = |name: &str, dims: Vec<u64>, role| TensorSpec { name: name.into(), dims, role, layer: None };
    let mut v = vec![
        global("token_embd.weight", vec![s.n_embd, s.n_vocab], Role::TokenEmbd),
        global("rope_freqs.weight", vec![s.head_dim / 2], Role::F32(Init::Const(1.0))),
    ];
    for l in 0..s.n_layer {
        let t = |name: &str, dims: Vec<u64>, role| TensorSpec {
            name: format!("blk.{l}.{name}.weight"),
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
            t("ffn_norm", vec![s.n_embd], Role::Norm),
        ]);
        if (l + 1) % step == 0 {
            v.extend([
                t("ffn_gate_inp", vec![s.n_embd, s.n_expert], Role::Router),
                t("ffn_gate_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
                t("ffn_up_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
                t("ffn_down_exps", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
                t("ffn_gate_shexp", vec![s.n_embd, s.n_ff_shexp], Role::ShexpGate),
                t("ffn_up_shexp", vec![s.n_embd, s.n_ff_shexp], Role::ShexpUp),
                t("ffn_down_shexp", vec![s.n_ff_shexp, s.n_embd], Role::ShexpDown),
            ]);
        } else {
            v.extend([
                t("ffn_gate", vec![s.n_embd, s.n_ff], Role::Weight),
                t("ffn_up", vec![s.n_embd, s.n_ff], Role::Weight),
                t("ffn_down", vec![s.n_ff, s.n_embd], Role::ResidualOut),
            ]);
        }
    }
    v.push(global("output_norm.weight", vec![s.n_embd], Role::Norm));
    v.push(global("output.weight", vec![s.n_embd, s.n_vocab], Role::Output));
    v
}

/// As llama.cpp's converter writes a Llama 4 text config (`Llama4Model` over `LlamaModel`):
/// `feed_forward_length` is the dense layers' `intermediate_size_mlp`, the experts'
/// `intermediate_size` is `expert_feed_forward_length`; no `attention.sliding_window` (its
/// absence is what turns chunked attention on; a 0 would turn it off, and the temperature
/// scaling the graph always builds would then abort).
fn metadata(s: &Shape) -> Vec<(String, Value)> {
    let u = |x: u64| Value::U32(x as u32);
    let mut v = common_metadata("llama4", s);
    v.extend(
        [
            ("feed_forward_length", u(s.n_ff)),
            ("vocab_size", u(s.n_vocab)),
            ("rope.dimension_count", u(s.head_dim)),
            ("attention.key_length", u(s.head_dim)),
            ("attention.value_length", u(s.head_dim)),
            ("interleave_moe_layer_step", u(moe_step(s).into())),
            ("expert_feed_forward_length", u(s.n_ff_exp)),
        ]
        .map(|(k, x)| (format!("llama4.{k}"), x)),
    );
    v
}

/// A generic preset (`tiny`, `small`) becomes a Llama-4-like model with both kinds of layer:
/// every other layer routes, top-1 (as both real models), and a shared expert as wide as a
/// routed one.
fn fit(s: &mut Shape) {
    s.or_set("moe_step", 2.0);
    s.n_expert_used = 1;
    s.n_ff_shexp = s.n_ff_exp;
}

/// Llama-4-Scout-17B-16E (meta-llama/Llama-4-Scout-17B-16E config.json, its text_config): 48
/// layers, all routed, n_embd 5120, 16 experts of 8192 and one shared, top-1, 40 query heads
/// and 8 KV heads of 128, RoPE base 500000 (llama3 scaling ×16 from 8192), a 10485760-token
/// context, a 202048-token vocabulary; 109 B parameters (the vision encoder's included, which
/// a GGUF leaves to its mmproj file), 17 B active (the model card).
fn llama_4_scout() -> Shape {
    Shape {
        n_layer: 48,
        n_embd: 5120,
        n_ff: 16_384,
        n_ff_exp: 8192,
        n_ff_shexp: 8192,
        n_expert: 16,
        n_expert_used: 1,
        n_head: 40,
        n_head_kv: 8,
        head_dim: 128,
        n_vocab: 202_048,
        n_ctx: 10_485_760,
        rope_base: 500_000.0,
        rms_eps: 1e-5,
        n_swa: 0,
        yarn: None,
        extra: vec![("moe_step", 1.0)],
    }
}

/// Llama-4-Maverick-17B-128E (its config.json's text_config): Scout's layer shape with 128
/// experts on every other layer (`interleave_moe_layer_step` 2; the other 24 layers have a dense
/// FFN of 16384) and a 1048576-token context; 400 B parameters, 17 B active (the model card).
fn llama_4_maverick() -> Shape {
    Shape { n_expert: 128, n_ctx: 1_048_576, extra: vec![("moe_step", 2.0)], ..llama_4_scout() }
}
