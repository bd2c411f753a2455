//! qwen35moe (Qwen3.5-35B-A3B, Qwen3.6-35B-A3B, Qwen3.5-397B-A17B), after llama.cpp's
//! `src/models/qwen35moe.cpp` over `delta-net-base.cpp`: a hybrid of gated delta-net linear
//! attention and gated full attention, every layer's FFN a routed MoE plus a shared expert.
//!
//! - Three layers of four (`(il + 1) % full_attention_interval != 0`) are *recurrent*: a fused
//!   Q/K/V projection `attn_qkv` and the output gate `attn_gate` (z), a causal conv
//!   (`ssm_conv1d`, kernel `ssm.conv_kernel`) over Q/K/V, L2-normalised Q and K, a per-head
//!   decay `softplus(ssm_alpha · x + ssm_dt.bias) · ssm_a` and write strength
//!   `sigmoid(ssm_beta · x)`, the delta rule on a `[head_v, head_v]` state per value head, an
//!   RMS norm (`ssm_norm`) gated by `silu(z)`, and `ssm_out`. Their state is llama.cpp's
//!   recurrent memory.
//! - Every fourth layer is full attention whose Q projection carries a per-head output gate
//!   (`attn_q` is `[n_embd, 2 · head_dim · n_head]`), per-head Q/K RMS norms, interleaved
//!   multi-section RoPE (`rope.dimension_sections`) on the first quarter of each head.
//! - The FFN norm is `post_attention_norm`; the routed experts are SwiGLU behind a softmax
//!   router with the top-k weights normalised; the shared expert is a SwiGLU of
//!   `expert_shared_feed_forward_length` scaled by `sigmoid(ffn_gate_inp_shexp · x)`.
//!
//! Gate and up of the routed experts may be separate (`ffn_gate_exps`, `ffn_up_exps`: what
//! llama.cpp's converter writes by default, and what the published GGUF files have) or fused
//! (`ffn_gate_up_exps`, `[n_embd, 2 · n_ff_exp, n_expert]`, gate rows first: the converter's
//! `--fuse-gate-up-exps`); llama.cpp's loader takes the fused one when the file has it. The
//! shape's extra `fused_gate_up` (1) writes the fused form.
//!
//! What streams: the routed experts, one `(layer, expert)` entry of gate + up + down (or
//! gate_up + down). The recurrent and attention weights, the router and the shared expert are
//! dense. The recurrent layer's f32 parameters are chosen so a random model stays finite: the
//! decay `ssm_a` negative (the converter writes `-exp(A_log)`), the time-step bias small, the
//! conv kernel of fan-in 4 scale.
//!
//! qwen3next (`super::qwen3next`) is the same family (Qwen3-Next-80B-A3B): this file's tensor
//! and metadata builders serve both.

use super::synth::{Init, Role, Shape, SynthArch, TensorSpec, CHATML};
use super::SynthSpec;
use crate::gguf::{Value, ValueType};

pub(super) static SPEC: SynthSpec = SynthSpec {
    name: "qwen35moe",
    models: "Qwen3.5-35B-A3B, Qwen3.6-35B-A3B, Qwen3.5-122B-A10B, Qwen3.5-397B-A17B",
    synth: SynthArch {
        tensors: |s| tensors(s, Family::Qwen35),
        metadata: |s| metadata(s, Family::Qwen35),
        fit,
        chat: &CHATML,
    },
    presets: &[("qwen3.6-35b-a3b", qwen3_6_35b_a3b), ("qwen3.5-397b-a17b", qwen3_5_397b_a17b)],
};

/// The two architectures of the family: what differs in their files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Family {
    /// qwen35moe: `ssm_alpha` and `ssm_beta` separate, multi-section RoPE.
    Qwen35,
    /// qwen3next: `ssm_ba` fused (`[n_embd, 2 · n_v_heads]`), plain NeoX RoPE.
    Qwen3Next,
}

impl Family {
    fn arch(self) -> &'static str {
        match self {
            Family::Qwen35 => "qwen35moe",
            Family::Qwen3Next => "qwen3next",
        }
    }
}

/// The shape's extras, as `fit` completes them.
struct Linear {
    d_conv: u64,
    /// Head size of Q, K and V (`ssm.state_size`).
    d_state: u64,
    /// Q/K heads (`ssm.group_count`).
    n_group: u64,
    /// V heads (`ssm.time_step_rank`).
    dt_rank: u64,
    interval: u32,
    fused_gate_up: bool,
}

fn linear(s: &Shape) -> Linear {
    let g = |k: &str| s.get(k).unwrap_or_else(|| panic!("qwen35moe shape without `{k}`: fit fills it")) as u64;
    Linear {
        d_conv: g("ssm_d_conv"),
        d_state: g("ssm_d_state"),
        n_group: g("ssm_n_group"),
        dt_rank: g("ssm_dt_rank"),
        interval: g("full_attention_interval") as u32,
        fused_gate_up: s.get("fused_gate_up").is_some_and(|v| v != 0.0),
    }
}

/// Whether layer `il` is a linear-attention (recurrent) layer, as the loader's default pattern.
fn is_recurrent(il: u32, interval: u32) -> bool {
    (il + 1) % interval != 0
}

/// The delta-net decay `ssm_a` (`-exp(A_log)` in the real files, in `[-16, 0)`): a gentler
/// range keeps the chunked form's `exp` of cumulated decays well inside f32.
const SSM_A: Init = Init::Uniform(-1.0, -0.1);
/// The time-step bias `ssm_dt.bias`: softplus of it (plus `ssm_alpha · x`, of unit scale) is
/// the per-token step.
const SSM_DT: Init = Init::Uniform(-2.0, 0.0);
/// The conv kernel: fan-in `d_conv` (4), as a default init of its scale.
const SSM_CONV: Init = Init::Uniform(-0.5, 0.5);

/// Every tensor of a model of the family, as llama.cpp's loader (`load_arch_tensors`) creates
/// them and the converter writes them: no MTP block (the published files have none).
pub(super) fn tensors(s: &Shape, fam: Family) -> Vec<TensorSpec> {
    let x = linear(s);
    let key_dim = x.d_state * x.n_group;
    let value_dim = x.d_state * x.dt_rank;
    let conv_dim = 2 * key_dim + value_dim;
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
            name: format!("blk.{l}.{base}"),
            dims,
            role,
            layer: Some(l),
        };
        v.push(t("attn_norm.weight", vec![s.n_embd], Role::Norm));
        if is_recurrent(l, x.interval) {
            v.extend([
                // llama-quant.cpp counts attn_qkv with attn_v (q6_K on the use_more_bits layers).
                t("attn_qkv.weight", vec![s.n_embd, conv_dim], Role::AttnV),
                t("attn_gate.weight", vec![s.n_embd, value_dim], Role::Weight),
                t("ssm_conv1d.weight", vec![x.d_conv, conv_dim], Role::F32(SSM_CONV)),
                t("ssm_dt.bias", vec![x.dt_rank], Role::F32(SSM_DT)),
                t("ssm_a", vec![x.dt_rank], Role::F32(SSM_A)),
            ]);
            match fam {
                Family::Qwen35 => v.extend([
                    t("ssm_beta.weight", vec![s.n_embd, x.dt_rank], Role::Weight),
                    t("ssm_alpha.weight", vec![s.n_embd, x.dt_rank], Role::Weight),
                ]),
                Family::Qwen3Next => v.push(t("ssm_ba.weight", vec![s.n_embd, 2 * x.dt_rank], Role::Weight)),
            }
            v.extend([
                t("ssm_norm.weight", vec![x.d_state], Role::Norm),
                t("ssm_out.weight", vec![value_dim, s.n_embd], Role::ResidualOut),
            ]);
        } else {
            v.extend([
                // Q and its per-head output gate, interleaved per head.
                t("attn_q.weight", vec![s.n_embd, 2 * q], Role::AttnQ),
                t("attn_k.weight", vec![s.n_embd, kv], Role::AttnK),
                t("attn_v.weight", vec![s.n_embd, kv], Role::AttnV),
                t("attn_output.weight", vec![q, s.n_embd], Role::AttnOut),
                t("attn_q_norm.weight", vec![s.head_dim], Role::Norm),
                t("attn_k_norm.weight", vec![s.head_dim], Role::Norm),
            ]);
        }
        v.extend([
            t("post_attention_norm.weight", vec![s.n_embd], Role::Norm),
            t("ffn_gate_inp.weight", vec![s.n_embd, s.n_expert], Role::Router),
        ]);
        if x.fused_gate_up {
            // Gate and up of one expert are one slice: llama-quant.cpp's category for the name
            // is ffn_gate (q4_K at q4_k_m), its scale gate's and up's.
            v.push(t("ffn_gate_up_exps.weight", vec![s.n_embd, 2 * s.n_ff_exp, s.n_expert], Role::ExpGate));
        } else {
            v.extend([
                t("ffn_gate_exps.weight", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpGate),
                t("ffn_up_exps.weight", vec![s.n_embd, s.n_ff_exp, s.n_expert], Role::ExpUp),
            ]);
        }
        v.extend([
            t("ffn_down_exps.weight", vec![s.n_ff_exp, s.n_embd, s.n_expert], Role::ExpDown),
            t("ffn_gate_inp_shexp.weight", vec![s.n_embd], Role::ShexpGateInp),
            t("ffn_gate_shexp.weight", vec![s.n_embd, s.n_ff_shexp], Role::ShexpGate),
            t("ffn_up_shexp.weight", vec![s.n_embd, s.n_ff_shexp], Role::ShexpUp),
            t("ffn_down_shexp.weight", vec![s.n_ff_shexp, s.n_embd], Role::ShexpDown),
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

/// The keys llama.cpp's converter writes (`Qwen3NextModel.set_gguf_parameters` and, for
/// qwen35moe, the M-RoPE sections): the head size (256 ≠ n_embd / n_head), the experts' and
/// shared expert's sizes, the delta-net sizes, the full-attention period, the rotary
/// dimensions, and `feed_forward_length` only where the config has an `intermediate_size`
/// (Qwen3-Next's 5120; the Qwen3.5 configs have none).
pub(super) fn metadata(s: &Shape, fam: Family) -> Vec<(String, Value)> {
    let x = linear(s);
    let arch = fam.arch();
    let a = |k: &str| format!("{arch}.{k}");
    let u = |v: u64| Value::U32(v as u32);
    let n_rot = s.get("rope_dims").unwrap_or((s.head_dim / 4) as f64) as u64;
    let mut v = vec![
        (a("block_count"), u(s.n_layer.into())),
        (a("context_length"), u(s.n_ctx)),
        (a("embedding_length"), u(s.n_embd)),
        (a("attention.head_count"), u(s.n_head)),
        (a("attention.head_count_kv"), u(s.n_head_kv)),
        (a("rope.freq_base"), Value::F32(s.rope_base)),
        (a("attention.layer_norm_rms_epsilon"), Value::F32(s.rms_eps)),
        (a("expert_count"), u(s.n_expert)),
        (a("expert_used_count"), u(s.n_expert_used)),
        (a("attention.key_length"), u(s.head_dim)),
        (a("attention.value_length"), u(s.head_dim)),
        (a("expert_feed_forward_length"), u(s.n_ff_exp)),
        (a("expert_shared_feed_forward_length"), u(s.n_ff_shexp)),
        (a("ssm.conv_kernel"), u(x.d_conv)),
        (a("ssm.state_size"), u(x.d_state)),
        (a("ssm.group_count"), u(x.n_group)),
        (a("ssm.time_step_rank"), u(x.dt_rank)),
        (a("ssm.inner_size"), u(x.d_state * x.dt_rank)),
        (a("full_attention_interval"), u(x.interval.into())),
        (a("rope.dimension_count"), u(n_rot)),
    ];
    if s.n_ff > 0 {
        v.push((a("feed_forward_length"), u(s.n_ff)));
    }
    if fam == Family::Qwen35 {
        v.push((a("rope.dimension_sections"), Value::Array(ValueType::I32, sections(n_rot).map(Value::I32).to_vec())));
    }
    v
}

/// The M-RoPE sections over `n_rot / 2` rotary pairs: the real models' `[11, 11, 10, 0]` for
/// 64 rotary dimensions, in the same proportions for a smaller head (text positions are equal
/// in the first three sections, so only their sum matters to a text model, and it must not be
/// 0: ggml takes the pair index modulo it).
fn sections(n_rot: u64) -> [i32; 4] {
    let half = (n_rot / 2).max(1) as i32;
    let t = half * 11 / 32;
    [t, t, half - 2 * t, 0]
}

/// Fills what a generic preset (`tiny`, `small`) leaves out, in the real models' proportions
/// ([`fit_delta_net`]); the Qwen3.5 configs have no dense FFN size (`intermediate_size`), so
/// the file records none.
fn fit(s: &mut Shape) {
    fit_delta_net(s);
    s.n_ff = 0;
}

/// The family's part of `fit`: delta-net heads of `head_dim` (at most 128) with as many Q/K
/// heads as fit `n_embd` and twice as many V heads, a conv kernel of 4, full attention every
/// fourth layer, a quarter of each head rotary, a shared expert of the routed experts' size.
pub(super) fn fit_delta_net(s: &mut Shape) {
    let d_state = s.head_dim.min(128);
    s.or_set("ssm_d_state", d_state as f64);
    let d_state = s.get("ssm_d_state").unwrap_or(d_state as f64);
    let n_group = (s.n_embd as f64 / d_state).max(1.0);
    s.or_set("ssm_n_group", n_group);
    s.or_set("ssm_dt_rank", 2.0 * s.get("ssm_n_group").unwrap_or(n_group));
    s.or_set("ssm_d_conv", 4.0);
    s.or_set("full_attention_interval", 4.0);
    s.or_set("rope_dims", (s.head_dim / 4) as f64);
    if s.n_ff_shexp == 0 {
        s.n_ff_shexp = s.n_ff_exp;
    }
}

/// Qwen3.6-35B-A3B (Qwen/Qwen3.6-35B-A3B config.json `text_config`; Qwen3.5-35B-A3B has the
/// same): 40 layers of 2048, 30 gated delta-net (16 Q/K heads and 32 V heads of 128, conv
/// kernel 4) and 10 gated attention (16 Q heads, 2 KV heads of 256, 64 rotary dimensions);
/// 256 experts of 512, 8 routed, a shared expert of 512; vocabulary 248320, context 262144,
/// RoPE base 1e7.
pub(super) fn qwen3_6_35b_a3b() -> Shape {
    Shape {
        n_layer: 40,
        n_embd: 2048,
        n_ff: 0,
        n_ff_exp: 512,
        n_ff_shexp: 512,
        n_expert: 256,
        n_expert_used: 8,
        n_head: 16,
        n_head_kv: 2,
        head_dim: 256,
        n_vocab: 248_320,
        n_ctx: 262_144,
        rope_base: 1e7,
        rms_eps: 1e-6,
        n_swa: 0,
        yarn: None,
        extra: delta_net(16, 32),
    }
}

/// Qwen3.5-397B-A17B (Qwen/Qwen3.5-397B-A17B config.json `text_config`): 60 layers of 4096,
/// 45 gated delta-net (16 Q/K heads and 64 V heads of 128) and 15 gated attention (32 Q heads,
/// 2 KV heads of 256); 512 experts of 1024, 10 routed, a shared expert of 1024.
fn qwen3_5_397b_a17b() -> Shape {
    Shape {
        n_layer: 60,
        n_embd: 4096,
        n_ff_exp: 1024,
        n_ff_shexp: 1024,
        n_expert: 512,
        n_expert_used: 10,
        n_head: 32,
        extra: delta_net(16, 64),
        ..qwen3_6_35b_a3b()
    }
}

/// The delta-net extras of the real models: heads of 128, `n_group` Q/K heads and `dt_rank` V
/// heads, conv kernel 4, full attention every fourth layer, 64 rotary dimensions (a quarter of
/// 256), gate and up separate as the published files have them.
pub(super) fn delta_net(n_group: u32, dt_rank: u32) -> Vec<(&'static str, f64)> {
    vec![
        ("ssm_d_conv", 4.0),
        ("ssm_d_state", 128.0),
        ("ssm_n_group", n_group.into()),
        ("ssm_dt_rank", dt_rank.into()),
        ("full_attention_interval", 4.0),
        ("rope_dims", 64.0),
        ("fused_gate_up", 0.0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_the_real_ones_at_64_rotary_dimensions() {
        assert_eq!(sections(64), [11, 11, 10, 0]);
        assert_eq!(sections(16).iter().sum::<i32>(), 8);
    }

    #[test]
    fn three_layers_of_four_are_recurrent() {
        let r: Vec<bool> = (0..8).map(|il| is_recurrent(il, 4)).collect();
        assert_eq!(r, [true, true, true, false, true, true, true, false]);
    }

    #[test]
    fn fused_gate_up_replaces_gate_and_up() {
        let mut s = crate::synth::preset("tiny").unwrap();
        fit(&mut s);
        let names = |s: &Shape| -> Vec<String> {
            tensors(s, Family::Qwen35)
                .into_iter()
                .filter(|t| t.name.starts_with("blk.0.ffn_"))
                .map(|t| t.name)
                .collect()
        };
        assert!(names(&s).contains(&"blk.0.ffn_gate_exps.weight".to_string()));
        s.extra.push(("fused_gate_up", 1.0));
        let fused = names(&s);
        assert!(fused.contains(&"blk.0.ffn_gate_up_exps.weight".to_string()));
        assert!(!fused.iter().any(|n| n.contains("ffn_gate_exps") || n.contains("ffn_up_exps")));
    }
}
