//! The generator's architecture table: for each architecture, its tensors (name, shape,
//! role) and its metadata keys as functions of a [`Shape`], the way llama.cpp's converter
//! (`convert_hf_to_gguf.py`) writes them and its loader (`src/models/<arch>.cpp`) reads them.
//! Adding an architecture is one more [`SynthArch`] entry; the writer, quant mix and presets
//! are shared.

use super::{Shape, SynthArch, CHATML, HARMONY};
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
    /// A bias (attention projections, router, the experts' per-expert biases): always f32,
    /// random.
    Bias,
    /// gpt-oss's per-head attention sinks `attn_sinks` (1-D: always f32, random).
    Sinks,
    /// The shared expert's gate input `ffn_gate_inp_shexp` (1-D: always f32, random).
    ShexpGateInp,
    ShexpGate,
    ShexpUp,
    ShexpDown,
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
pub static SYNTH_ARCHS: &[SynthArch] = &[
    SynthArch { name: "qwen3moe", tensors: qwen3moe_tensors, metadata: qwen3moe_metadata, fit: |_| {}, chat: &CHATML },
    SynthArch { name: "olmoe", tensors: olmoe_tensors, metadata: olmoe_metadata, fit: fit_olmoe, chat: &CHATML },
    SynthArch { name: "llama", tensors: mixtral_tensors, metadata: mixtral_metadata, fit: |_| {}, chat: &CHATML },
    SynthArch {
        name: "qwen2moe",
        tensors: qwen2moe_tensors,
        metadata: qwen2moe_metadata,
        fit: fit_qwen2moe,
        chat: &CHATML,
    },
    SynthArch {
        name: "gpt-oss",
        tensors: gpt_oss_tensors,
        metadata: gpt_oss_metadata,
        fit: fit_gpt_oss,
        chat: &HARMONY,
    },
];

/// What a layer has besides attention projections, norms, router and routed experts.
#[derive(Clone, Copy, Default)]
struct Extras {
    /// `attn_q_norm`/`attn_k_norm` of `[head_dim]` (qwen3moe) or of the whole projection (olmoe).
    qk_norm_per_head: bool,
    qk_norm_whole: bool,
    /// `attn_{q,k,v}.bias` (qwen2moe).
    qkv_bias: bool,
    /// `ffn_{gate_inp,gate,up,down}_shexp` (qwen2moe).
    shared_expert: bool,
    /// gpt-oss: `attn_output.bias`, `attn_sinks`, the FFN norm named `post_attention_norm`,
    /// the router's bias and each expert projection's bias.
    gpt_oss: bool,
}

fn qwen3moe_tensors(s: &Shape) -> Vec<TensorSpec> {
    moe_tensors(s, Extras { qk_norm_per_head: true, ..Extras::default() })
}

fn olmoe_tensors(s: &Shape) -> Vec<TensorSpec> {
    moe_tensors(s, Extras { qk_norm_whole: true, ..Extras::default() })
}

fn mixtral_tensors(s: &Shape) -> Vec<TensorSpec> {
    moe_tensors(s, Extras::default())
}

fn gpt_oss_tensors(s: &Shape) -> Vec<TensorSpec> {
    moe_tensors(s, Extras { qkv_bias: true, gpt_oss: true, ..Extras::default() })
}

fn qwen2moe_tensors(s: &Shape) -> Vec<TensorSpec> {
    moe_tensors(s, Extras { qkv_bias: true, shared_expert: true, ..Extras::default() })
}

/// gpt-oss: a window and YaRN, as the real models have them, when a generic preset has none;
/// the experts' size is the dense size (both 2880 in the real models).
fn fit_gpt_oss(s: &mut Shape) {
    if s.n_swa == 0 {
        s.n_swa = 128;
    }
    if s.yarn.is_none() {
        s.yarn = Some((32.0, 4096.min(s.n_ctx)));
    }
}

/// olmoe's K norm is `[n_embd]` in llama.cpp's loader: K must be as wide as Q (no GQA), and
/// its heads must tile `n_embd`.
fn fit_olmoe(s: &mut Shape) {
    s.n_head_kv = s.n_head;
    s.head_dim = s.n_embd / s.n_head;
}

/// qwen2moe: Q and the output projection are `[n_embd, n_embd]`; a shared expert is required
/// (the dense FFN size when the preset names none).
fn fit_qwen2moe(s: &mut Shape) {
    s.head_dim = s.n_embd / s.n_head;
    if s.n_ff_shexp == 0 {
        s.n_ff_shexp = s.n_ff;
    }
}

fn moe_tensors(s: &Shape, x: Extras) -> Vec<TensorSpec> {
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
        let bias = |base: &str, dims: Vec<u64>| TensorSpec {
            name: format!("blk.{l}.{base}.bias"),
            dims,
            role: Role::Bias,
            layer: Some(l),
        };
        v.extend([
            t("attn_norm", vec![s.n_embd], Role::Norm),
            t("attn_q", vec![s.n_embd, q], Role::AttnQ),
            t("attn_k", vec![s.n_embd, kv], Role::AttnK),
            t("attn_v", vec![s.n_embd, kv], Role::AttnV),
            t("attn_output", vec![q, s.n_embd], Role::AttnOut),
        ]);
        if x.qkv_bias {
            v.extend([bias("attn_q", vec![q]), bias("attn_k", vec![kv]), bias("attn_v", vec![kv])]);
        }
        if x.gpt_oss {
            v.extend([bias("attn_output", vec![s.n_embd]), t("attn_sinks", vec![s.n_head], Role::Sinks)]);
        }
        if x.qk_norm_per_head {
            v.extend([t("attn_q_norm", vec![s.head_dim], Role::Norm), t("attn_k_norm", vec![s.head_dim], Role::Norm)]);
        }
        if x.qk_norm_whole {
            v.extend([t("attn_q_norm", vec![q], Role::Norm), t("attn_k_norm", vec![kv], Role::Norm)]);
        }
        v.extend([
            t(if x.gpt_oss { "post_attention_norm" } else { "ffn_norm" }, vec![s.n_embd], Role::Norm),
            t("ffn_gate_inp", vec![s.n_embd, s.n_expert], Role::Router),
            t("ffn_gate_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
            t("ffn_up_exps", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
            t("ffn_down_exps", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
        ]);
        if x.gpt_oss {
            v.extend([
                bias("ffn_gate_inp", vec![s.n_expert]),
                bias("ffn_gate_exps", vec![s.n_ff_exp, s.n_expert]),
                bias("ffn_up_exps", vec![s.n_ff_exp, s.n_expert]),
                bias("ffn_down_exps", vec![s.n_embd, s.n_expert]),
            ]);
        }
        if x.shared_expert {
            v.extend([
                t("ffn_gate_inp_shexp", vec![s.n_embd], Role::ShexpGateInp),
                t("ffn_gate_shexp", vec![s.n_embd, s.n_ff_shexp], Role::ShexpGate),
                t("ffn_up_shexp", vec![s.n_embd, s.n_ff_shexp], Role::ShexpUp),
                t("ffn_down_shexp", vec![s.n_ff_shexp, s.n_embd], Role::ShexpDown),
            ]);
        }
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

/// The keys every architecture of the table writes the same way.
fn common_metadata(arch: &str, s: &Shape) -> Vec<(String, Value)> {
    let a = |k: &str| format!("{arch}.{k}");
    let u = |x: u64| Value::U32(x as u32);
    vec![
        (a("block_count"), u(s.n_layer.into())),
        (a("context_length"), u(s.n_ctx)),
        (a("embedding_length"), u(s.n_embd)),
        (a("attention.head_count"), u(s.n_head)),
        (a("attention.head_count_kv"), u(s.n_head_kv)),
        (a("rope.freq_base"), Value::F32(s.rope_base)),
        (a("attention.layer_norm_rms_epsilon"), Value::F32(s.rms_eps)),
        (a("expert_count"), u(s.n_expert)),
        (a("expert_used_count"), u(s.n_expert_used)),
    ]
}

/// olmoe: the experts' hidden size is `feed_forward_length` (the converter writes OLMoE's
/// `intermediate_size`, 1024, there).
fn olmoe_metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("olmoe", s);
    v.push(("olmoe.feed_forward_length".into(), Value::U32(s.n_ff_exp as u32)));
    v
}

/// Mixtral as llama: `feed_forward_length` is the experts' hidden size (14336), plus the rope
/// dimension count and vocabulary size the converter writes.
fn mixtral_metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("llama", s);
    v.extend([
        ("llama.feed_forward_length".into(), Value::U32(s.n_ff_exp as u32)),
        ("llama.rope.dimension_count".into(), Value::U32(s.head_dim as u32)),
        ("llama.vocab_size".into(), Value::U32(s.n_vocab as u32)),
    ]);
    v
}

/// qwen2moe: the dense size, the routed experts' and the shared expert's.
fn qwen2moe_metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("qwen2moe", s);
    v.extend([
        ("qwen2moe.feed_forward_length".into(), Value::U32(s.n_ff as u32)),
        ("qwen2moe.expert_feed_forward_length".into(), Value::U32(s.n_ff_exp as u32)),
        ("qwen2moe.expert_shared_feed_forward_length".into(), Value::U32(s.n_ff_shexp as u32)),
    ]);
    v
}

/// gpt-oss as llama.cpp's converter writes it: the experts' size, head sizes, the sliding
/// window and YaRN scaling (the layers' pattern is the loader's default, every other layer).
fn gpt_oss_metadata(s: &Shape) -> Vec<(String, Value)> {
    let mut v = common_metadata("gpt-oss", s);
    let u = |x: u64| Value::U32(x as u32);
    v.extend([
        ("gpt-oss.feed_forward_length".into(), u(s.n_ff)),
        ("gpt-oss.expert_feed_forward_length".into(), u(s.n_ff_exp)),
        ("gpt-oss.attention.key_length".into(), u(s.head_dim)),
        ("gpt-oss.attention.value_length".into(), u(s.head_dim)),
        ("gpt-oss.attention.sliding_window".into(), u(s.n_swa)),
    ]);
    if let Some((factor, orig)) = s.yarn {
        v.extend([
            ("gpt-oss.rope.scaling.type".into(), Value::String("yarn".into())),
            ("gpt-oss.rope.scaling.factor".into(), Value::F32(factor)),
            ("gpt-oss.rope.scaling.original_context_length".into(), u(orig)),
        ]);
    }
    v
}
