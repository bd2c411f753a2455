//! What a synthetic file of an architecture holds: the shape it is made from, its tensors
//! (name, shape, role) and its metadata keys as functions of that shape, the way llama.cpp's
//! converter (`convert_hf_to_gguf.py`) writes them and its loader reads them, and the chat
//! vocabulary's special tokens. Each architecture's file fills a [`SynthArch`] from these
//! shared builders; `crate::synth` writes any of them.

use crate::gguf::Value;

/// The special tokens of ChatML vocabularies, appended last.
pub const SPECIALS: &[&str] = &["<|endoftext|>", "<|im_start|>", "<|im_end|>"];

/// The special tokens of the o200k_harmony vocabulary (gpt-oss) that its harmony chat format
/// uses, appended last (the real vocabulary has them at ids 199998-200012).
pub const HARMONY_SPECIALS: &[&str] = &[
    "<|startoftext|>",
    "<|endoftext|>",
    "<|return|>",
    "<|constrain|>",
    "<|channel|>",
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|call|>",
];

/// A vocabulary's special tokens and which of them are bos and eos.
#[derive(Clone, Copy, Debug)]
pub struct Specials {
    pub tokens: &'static [&'static str],
    pub bos: &'static str,
    pub eos: &'static str,
}

/// ChatML's (Qwen): bos `<|endoftext|>`, eos `<|im_end|>`.
pub const CHATML_SPECIALS: Specials = Specials { tokens: SPECIALS, bos: "<|endoftext|>", eos: "<|im_end|>" };

/// Harmony's (gpt-oss): bos `<|startoftext|>`, eos `<|return|>` (llama.cpp also ends a
/// generation at `<|call|>`, and not at `<|end|>` once both are present).
pub const HARMONY_SPECIALS_OF: Specials =
    Specials { tokens: HARMONY_SPECIALS, bos: "<|startoftext|>", eos: "<|return|>" };

/// An architecture's generator entry: its tensors and metadata as functions of a shape.
#[derive(Debug)]
pub struct SynthArch {
    pub tensors: fn(&Shape) -> Vec<TensorSpec>,
    pub metadata: fn(&Shape) -> Vec<(String, Value)>,
    /// Adapts a preset to what the architecture requires of its shape (olmoe: no GQA).
    pub fit: fn(&mut Shape),
    /// The tokenizer's special tokens, its pre-tokenizer and chat template.
    pub chat: &'static Chat,
}

/// What a model's tokenizer carries for chatting: the specials its template uses, the
/// pre-tokenizer name and the template (llama.cpp recognises a template by its markers and
/// applies its built-in version of it).
#[derive(Debug)]
pub struct Chat {
    pub specials: Specials,
    pub pre: &'static str,
    pub template: &'static str,
}

/// Qwen's ChatML.
pub const CHATML: Chat = Chat { specials: CHATML_SPECIALS, pre: "qwen2", template: CHAT_TEMPLATE };

/// gpt-oss's harmony format, in the o200k_harmony vocabulary's pre-tokenizer.
pub const HARMONY: Chat = Chat { specials: HARMONY_SPECIALS_OF, pre: "gpt-4o", template: HARMONY_TEMPLATE };

/// A model shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub n_layer: u32,
    pub n_embd: u64,
    /// Dense FFN size recorded in metadata (`feed_forward_length`).
    pub n_ff: u64,
    pub n_ff_exp: u64,
    /// Hidden size of the shared expert (0: none; qwen2moe).
    pub n_ff_shexp: u64,
    pub n_expert: u64,
    pub n_expert_used: u64,
    pub n_head: u64,
    pub n_head_kv: u64,
    pub head_dim: u64,
    pub n_vocab: u64,
    pub n_ctx: u64,
    pub rope_base: f32,
    pub rms_eps: f32,
    /// Sliding-window size of the layers that slide (0: none; gpt-oss).
    pub n_swa: u64,
    /// YaRN RoPE scaling: factor and original context (gpt-oss: 32 from 4096).
    pub yarn: Option<(f32, u64)>,
    /// What an architecture's shape has beyond these (MLA ranks, linear-attention state sizes,
    /// leading dense layers, …), by name: its file reads its own ([`Shape::get`]) and its `fit`
    /// fills in what a generic preset (`tiny`, `small`) leaves out.
    pub extra: Vec<(&'static str, f64)>,
}

impl Shape {
    /// The extra value `name`, if the shape has it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.extra.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
    }

    /// Set the extra value `name` unless the shape has it (a `fit`'s defaults).
    pub fn or_set(&mut self, name: &'static str, v: f64) {
        if self.get(name).is_none() {
            self.extra.push((name, v));
        }
    }
}

/// The chat template written into synthetic models (ChatML, as Qwen3's, without tools).
pub const CHAT_TEMPLATE: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + \
    message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/// The chat template written into synthetic gpt-oss models: harmony, as gpt-oss's own
/// template renders a conversation without a system prompt or tools (llama.cpp knows it as
/// `gpt-oss` by its `<|start|>` and `<|channel|>` markers).
pub const HARMONY_TEMPLATE: &str = "{% for message in messages %}{{ '<|start|>' + message['role'] + '<|message|>' + \
    message['content'] + ('<|return|>' if message['role'] == 'assistant' else '<|end|>') }}{% endfor %}\
    {% if add_generation_prompt %}{{ '<|start|>assistant' }}{% endif %}{# final answers: <|channel|>final #}";

/// The values of an f32 tensor whose role is [`Role::F32`]: what an architecture's recurrent
/// or gating parameters need to keep a random model's activations finite (a decay that is
/// negative, a time step that is positive, a conv kernel of small weights).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// Every value this constant.
    Const(f32),
    /// Uniform on `[lo, hi]`.
    Uniform(f32, f32),
}

/// What a tensor is for: decides its type in a quant mix and the scale of its weights.
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// The shared expert's gate, up and down (qwen2moe, deepseek2), or a dense layer's SwiGLU
    /// FFN in a MoE model (deepseek2's leading dense layers): llama-quantize types them by name,
    /// every `ffn_down` alike.
    ShexpGate,
    ShexpUp,
    ShexpDown,
    /// Any other weight matrix read by a matmul (an architecture's own projections: MLA's
    /// low-rank factors, a linear-attention layer's input projections, …): the mix's default
    /// type, weights of s.d. 1/√fan_in.
    Weight,
    /// Any other matrix whose output joins the residual stream (a linear-attention layer's
    /// output projection): the mix's default type, scaled like [`Role::AttnOut`].
    ResidualOut,
    /// An f32 tensor whose values the architecture sets ([`Init`]): always f32.
    F32(Init),
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

/// What a layer has besides attention projections, norms, router and routed experts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras {
    /// `attn_q_norm`/`attn_k_norm` of `[head_dim]` (qwen3moe) or of the whole projection (olmoe).
    pub qk_norm_per_head: bool,
    pub qk_norm_whole: bool,
    /// `attn_{q,k,v}.bias` (qwen2moe).
    pub qkv_bias: bool,
    /// `ffn_{gate_inp,gate,up,down}_shexp` (qwen2moe).
    pub shared_expert: bool,
    /// gpt-oss: `attn_output.bias`, `attn_sinks`, the FFN norm named `post_attention_norm`,
    /// the router's bias and each expert projection's bias.
    pub gpt_oss: bool,
}

/// The FFN tensors of block `l` of a file whose first `dense_lead` blocks are dense (glm4moe,
/// bailingmoe2): a SwiGLU FFN there; else a router, its selection bias `exp_probs_b`, the routed
/// experts and one shared expert, in the converters' order.
pub fn dense_lead_or_shared_moe_ffn(s: &Shape, l: u32, dense_lead: u32) -> Vec<TensorSpec> {
    let t =
        |name: &str, dims: Vec<u64>, role| TensorSpec { name: format!("blk.{l}.{name}"), dims, role, layer: Some(l) };
    if l < dense_lead {
        return vec![
            t("ffn_gate.weight", vec![s.n_embd, s.n_ff], Role::Weight),
            t("ffn_up.weight", vec![s.n_embd, s.n_ff], Role::Weight),
            t("ffn_down.weight", vec![s.n_ff, s.n_embd], Role::ResidualOut),
        ];
    }
    vec![
        t("ffn_gate_inp.weight", vec![s.n_embd, s.n_expert], Role::Router),
        // The selection bias: small against the sigmoid's spread, so that it moves the choice
        // without deciding it.
        t("exp_probs_b.bias", vec![s.n_expert], Role::F32(Init::Uniform(-0.05, 0.05))),
        t("ffn_gate_exps.weight", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
        t("ffn_up_exps.weight", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
        t("ffn_down_exps.weight", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
        t("ffn_gate_shexp.weight", vec![s.n_embd, s.n_ff_shexp], Role::ShexpGate),
        t("ffn_up_shexp.weight", vec![s.n_embd, s.n_ff_shexp], Role::ShexpUp),
        t("ffn_down_shexp.weight", vec![s.n_ff_shexp, s.n_embd], Role::ShexpDown),
    ]
}

/// Every tensor of a MoE transformer of shape `s` with the layer extras `x`.
pub fn moe_tensors(s: &Shape, x: Extras) -> Vec<TensorSpec> {
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

/// The keys every architecture of the table writes the same way.
pub fn common_metadata(arch: &str, s: &Shape) -> Vec<(String, Value)> {
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
