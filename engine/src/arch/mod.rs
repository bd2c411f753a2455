//! One table row per architecture, in one file each: its GGUF metadata keys and how its loader
//! reads them, its tensor names, the recipe our native decoder builds for it, and what a
//! synthetic file of it holds (tensors, metadata, chat vocabulary, presets of real models'
//! shapes). The index (`crate::model`), the decoder (`crate::decoder`) and the generator
//! (`crate::synth`) all read these rows; llama.cpp's `src/llama-arch.cpp` name table and its
//! `src/models/<arch>.cpp` graph builders are the model.
//!
//! Adding an architecture is one new file here that fills an [`ArchSpec`] and one line in
//! [`ARCHS`].

mod bailingmoe2;
mod deepseek2;
mod gemma4;
mod glm4moe;
mod gpt_oss;
mod keys;
mod lfm2moe;
mod llama4;
pub mod llama_moe;
mod minimax_m2;
mod mixtral;
mod olmoe;
mod qwen2moe;
mod qwen35moe;
mod qwen3moe;
mod qwen3next;
pub mod recipe;
pub mod synth;

pub(crate) use keys::parse;
pub use keys::Ffn;
pub use recipe::{Act, QkNorm, Recipe, SharedGate, OAI_ALPHA, OAI_LIMIT, PLAIN};

use crate::gguf::Metadata;
use crate::model::{ArchParams, MoeParams, Proj, Result};
use synth::{Shape, SynthArch};

/// A real model's shape: its preset name and a function making it.
pub type Preset = (&'static str, fn() -> Shape);

/// An architecture's row of the table.
#[derive(Debug)]
pub struct ArchSpec {
    /// `general.architecture`.
    pub name: &'static str,
    /// The models published under this name that this build decodes (for `--list-archs`).
    pub models: &'static str,
    /// What the decoder computes for it, in llama.cpp's terms (for `--list-archs`).
    pub decodes: &'static str,
    /// What streams from the file and what stays resident (for `--list-archs`).
    pub streams: &'static str,
    /// Keys (without the `ARCH.` prefix) that must be present; checked once by the parser.
    pub required_keys: &'static [&'static str],
    /// The stacked expert tensors of a MoE layer, `blk.L.<name>.weight`, `[ne0, ne1, n_expert]`.
    pub expert_tensors: &'static [(Proj, &'static str)],
    /// The router, `blk.L.<name>.weight`, `[n_embd, n_expert]`.
    pub router: &'static str,
    /// A file of this name may be a dense model (llama without experts): refused as not MoE.
    pub may_be_dense: bool,
    /// The FFN sizes and weight normalisation, as this architecture's loader reads them.
    pub(crate) ffn: fn(&keys::Keys<'_>, u32) -> Result<Ffn>,
    /// Anything else its loader reads (a sliding window, another gating).
    pub(crate) extra: fn(&keys::Keys<'_>, &mut MoeParams) -> Result<()>,
    /// Our native decoder's recipe.
    pub recipe: Recipe,
    /// What `bmoe synth` writes for it.
    pub synth: SynthArch,
    /// Presets of real models of this architecture: name and shape.
    pub presets: &'static [Preset],
}

impl ArchSpec {
    /// The typed params of a file of this architecture.
    ///
    /// # Errors
    /// [`crate::model::Error`] naming the key that is missing, mistyped or out of range.
    pub fn params(&'static self, m: &Metadata) -> Result<ArchParams> {
        parse(m, self)
    }
}

/// An architecture `bmoe synth` writes and the generic decoder streams, with no native recipe:
/// llama.cpp's own graph decodes it (`src/models/<arch>.cpp`), so all bmoe needs of it is a
/// synthetic file llama.cpp loads unmodified, its presets of real models' shapes, and the
/// generic gates.
#[derive(Debug)]
pub struct SynthSpec {
    /// `general.architecture`.
    pub name: &'static str,
    /// The real models published under this name (for `--list-archs`).
    pub models: &'static str,
    /// What `bmoe synth` writes for it.
    pub synth: SynthArch,
    /// Presets of real models of this architecture: name and shape.
    pub presets: &'static [Preset],
}

/// The architectures only the generic decoder runs that `bmoe synth` writes and the generic
/// gates check (one file each, like [`ARCHS`]).
pub static GENERIC_ARCHS: &[&SynthSpec] = &[
    &gemma4::SPEC,
    &deepseek2::SPEC,
    &qwen35moe::SPEC,
    &qwen3next::SPEC,
    &glm4moe::SPEC,
    &minimax_m2::SPEC,
    &llama4::SPEC,
    &bailingmoe2::SPEC,
    &lfm2moe::SPEC,
];

/// What `bmoe synth` writes for architecture `name`: a native one's or a generic one's.
pub fn synth_of(name: &str) -> Option<&'static SynthArch> {
    spec(name).map(|a| &a.synth).or_else(|| GENERIC_ARCHS.iter().find(|a| a.name == name).map(|a| &a.synth))
}

/// Every architecture `bmoe synth` writes, with its presets: `(name, presets)`.
pub fn synth_archs() -> impl Iterator<Item = (&'static str, &'static [Preset])> {
    ARCHS.iter().map(|a| (a.name, a.presets)).chain(GENERIC_ARCHS.iter().map(|a| (a.name, a.presets)))
}

/// The routed experts' tensors, as every architecture of the table names them.
pub(crate) const SWIGLU_EXPERTS: &[(Proj, &str)] =
    &[(Proj::Gate, "ffn_gate_exps"), (Proj::Up, "ffn_up_exps"), (Proj::Down, "ffn_down_exps")];

/// What streams for an architecture whose routed experts are gate, up and down.
pub(crate) const ROUTED: &str = "routed experts (gate, up, down) per (layer, expert)";

/// Every architecture this build can index, decode and synthesize.
pub static ARCHS: &[&ArchSpec] = &[&qwen3moe::SPEC, &olmoe::SPEC, &mixtral::SPEC, &qwen2moe::SPEC, &gpt_oss::SPEC];

/// The row of architecture `name`.
pub fn spec(name: &str) -> Option<&'static ArchSpec> {
    ARCHS.iter().copied().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::Value;
    use crate::model::{Error, Gating};

    fn parse(m: &Metadata, arch: &str) -> Result<ArchParams> {
        super::parse(m, spec(arch).unwrap())
    }

    fn meta(arch: &str, kv: &[(&str, u32)]) -> Metadata {
        let mut m = Metadata::new();
        m.insert("general.architecture", Value::String(arch.into()));
        m.insert(format!("{arch}.attention.layer_norm_rms_epsilon"), Value::F32(1e-6));
        for &(k, v) in kv {
            m.insert(format!("{arch}.{k}"), Value::U32(v));
        }
        m
    }

    const BASE: &[(&str, u32)] = &[
        ("block_count", 2),
        ("context_length", 64),
        ("embedding_length", 256),
        ("attention.head_count", 4),
        ("expert_count", 8),
        ("expert_used_count", 2),
    ];

    #[test]
    fn qwen2moe_sizes_fall_back_on_feed_forward_length() {
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 1024));
        let p = parse(&meta("qwen2moe", &kv), "qwen2moe").unwrap().hp;
        assert_eq!((p.n_ff_exp, p.n_ff_shexp, p.expert_weights_norm), (512, 1024, false));
        kv.extend([("expert_feed_forward_length", 128), ("expert_shared_feed_forward_length", 384)]);
        let p = parse(&meta("qwen2moe", &kv), "qwen2moe").unwrap().hp;
        assert_eq!((p.n_ff_exp, p.n_ff_shexp), (128, 384));
    }

    #[test]
    fn llama_experts_are_feed_forward_length_and_a_dense_llama_is_not_moe() {
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 768));
        let p = parse(&meta("llama", &kv), "llama").unwrap().hp;
        assert_eq!((p.n_ff_exp, p.n_ff_shexp, p.expert_weights_norm, p.head_dim), (768, 0, true, 64));
        let dense: Vec<_> = kv.iter().copied().filter(|(k, _)| !k.starts_with("expert_")).collect();
        assert!(matches!(parse(&meta("llama", &dense), "llama"), Err(Error::NotMoe { .. })));
        // Partial rotary is refused, not silently decoded wrong.
        kv.push(("rope.dimension_count", 32));
        assert!(matches!(parse(&meta("llama", &kv), "llama"), Err(Error::BadParam { .. })));
    }

    #[test]
    fn olmoe_weights_are_never_normalised() {
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 512));
        let mut m = meta("olmoe", &kv);
        m.insert("olmoe.expert_weights_norm", Value::Bool(true));
        let p = parse(&m, "olmoe").unwrap().hp;
        assert!(!p.expert_weights_norm, "llama.cpp's olmoe graph passes norm_w = false");
        assert!(matches!(parse(&m, "qwen2moe"), Err(Error::WrongArch { .. })));
    }

    #[test]
    fn gpt_oss_slides_on_even_layers_with_yarn() {
        let mut kv = BASE.to_vec();
        kv.extend([("expert_feed_forward_length", 256), ("attention.sliding_window", 128)]);
        let mut m = meta("gpt-oss", &kv);
        m.insert("gpt-oss.rope.scaling.type", Value::String("yarn".into()));
        m.insert("gpt-oss.rope.scaling.factor", Value::F32(32.0));
        m.insert("gpt-oss.rope.scaling.original_context_length", Value::U32(4096));
        let p = parse(&m, "gpt-oss").unwrap().hp;
        assert_eq!((p.n_swa, p.swa_layers.clone()), (128, vec![true, false]));
        assert_eq!((p.gating, p.expert_weights_norm), (Gating::SoftmaxWeight, false));
        assert_eq!((p.rope.freq_scale, p.rope.ext_factor, p.rope.n_ctx_orig), (1.0 / 32.0, 1.0, 4096));
        assert!((p.rope.attn_factor - 1.0).abs() < 1e-6);
        // A period of 3 slides two layers of three; an array names each layer.
        let four: Vec<_> = kv.iter().map(|&(k, v)| if k == "block_count" { (k, 4) } else { (k, v) }).collect();
        let mut m = meta("gpt-oss", &four);
        m.insert("gpt-oss.attention.sliding_window_pattern", Value::U32(3));
        assert_eq!(parse(&m, "gpt-oss").unwrap().hp.swa_layers, vec![true, true, false, true]);
        let arr = [false, true, true, false].map(Value::Bool).to_vec();
        let mut m = meta("gpt-oss", &four);
        m.insert("gpt-oss.attention.sliding_window_pattern", Value::Array(crate::gguf::ValueType::Bool, arr));
        assert_eq!(parse(&m, "gpt-oss").unwrap().hp.swa_layers, vec![false, true, true, false]);
        // Without the window the file is refused, as llama.cpp's loader refuses it.
        let m = meta("gpt-oss", &kv[..kv.len() - 1]);
        assert!(matches!(parse(&m, "gpt-oss"), Err(Error::MissingKey { .. })));
        // Other architectures: no window, plain RoPE.
        let mut kv = BASE.to_vec();
        kv.push(("feed_forward_length", 512));
        let p = parse(&meta("olmoe", &kv), "olmoe").unwrap().hp;
        assert_eq!((p.n_swa, p.gating, p.rope.ext_factor, p.rope.freq_scale), (0, Gating::Softmax, 0.0, 1.0));
    }

    #[test]
    fn every_row_is_consistent() {
        let mut presets = std::collections::HashSet::new();
        for a in ARCHS {
            assert_eq!(spec(a.name).map(|s| s.name), Some(a.name));
            for (p, shape) in a.presets {
                assert!(presets.insert(*p), "preset {p} twice");
                let s = shape();
                assert!(s.n_expert_used <= s.n_expert && s.n_layer > 0, "{p}");
            }
        }
    }
}
