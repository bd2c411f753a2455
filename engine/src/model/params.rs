//! The typed hyper-parameters every MoE architecture reduces to, as llama.cpp's loaders read
//! them ([`MoeParams`]), the part of them the index needs ([`MoeShape`]), and the projections of
//! a routed expert ([`Proj`]). Each architecture's file in `crate::arch` parses its keys into
//! these.

/// One projection of an expert's FFN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proj {
    Gate,
    Up,
    Down,
    /// Gate and up fused in one tensor (rows `[0, n_ff)` gate, `[n_ff, 2 n_ff)` up).
    GateUp,
}

impl Proj {
    /// Short name (`gate`, `up`, `down`, `gate_up`).
    pub fn name(self) -> &'static str {
        match self {
            Proj::Gate => "gate",
            Proj::Up => "up",
            Proj::Down => "down",
            Proj::GateUp => "gate_up",
        }
    }

    /// The `[ne0, ne1]` of one expert's slice of this projection, for `n_embd` and `n_ff`.
    pub fn expert_dims(self, n_embd: u64, n_ff: u64) -> [u64; 2] {
        match self {
            Proj::Gate | Proj::Up => [n_embd, n_ff],
            Proj::Down => [n_ff, n_embd],
            Proj::GateUp => [n_embd, 2 * n_ff],
        }
    }
}

/// What every MoE architecture's params reduce to for the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeShape {
    pub n_layer: u32,
    pub n_embd: u64,
    /// Hidden size of one expert's FFN.
    pub n_ff_exp: u64,
    pub n_expert: u32,
    /// Experts routed per token (top-k).
    pub n_expert_used: u32,
}

/// Typed hyper-parameters of a known architecture.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchParams {
    /// `general.architecture`.
    pub arch: &'static str,
    pub hp: MoeParams,
}

impl ArchParams {
    /// The MoE shape the index needs.
    pub fn moe(&self) -> MoeShape {
        let p = &self.hp;
        MoeShape {
            n_layer: p.n_layer,
            n_embd: p.n_embd,
            n_ff_exp: p.n_ff_exp,
            n_expert: p.n_expert,
            n_expert_used: p.n_expert_used,
        }
    }
}

/// How the router turns logits into the top-k experts' weights (llama.cpp's
/// `llama_expert_gating_func_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gating {
    /// Softmax over all experts, then the top-k of the probabilities (`SOFTMAX`).
    Softmax,
    /// Top-k of the logits, then a softmax over those k (`SOFTMAX_WEIGHT`, gpt-oss).
    SoftmaxWeight,
}

/// RoPE as a llama.cpp context computes it from the file's scaling keys
/// (`llama_context::llama_context`: `rope.scaling.type`, `.factor`, `.attn_factor`,
/// `.original_context_length`), for every architecture: without those keys, plain RoPE.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeScaling {
    /// Position scale, `1 / rope.scaling.factor` (1: none).
    pub freq_scale: f32,
    /// YaRN extrapolation mix: 1 for `yarn`, else 0.
    pub ext_factor: f32,
    /// The attention factor ggml's rope multiplies by (YaRN's magnitude correction, which
    /// llama.cpp pre-divides by the factor ggml applies itself).
    pub attn_factor: f32,
    pub beta_fast: f32,
    pub beta_slow: f32,
    /// `rope.scaling.original_context_length`, else the training context.
    pub n_ctx_orig: u32,
}

/// Hyper-parameters of a MoE transformer of the table, as llama.cpp reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct MoeParams {
    pub n_layer: u32,
    pub n_ctx_train: u64,
    pub n_embd: u64,
    pub n_head: u32,
    pub n_head_kv: u32,
    /// Per-head dimension of q/k (`attention.key_length`, default `n_embd / n_head`).
    pub head_dim: u64,
    pub n_expert: u32,
    pub n_expert_used: u32,
    /// Hidden size of one routed expert.
    pub n_ff_exp: u64,
    /// Hidden size of the shared expert (0: none).
    pub n_ff_shexp: u64,
    pub rms_eps: f64,
    pub rope_freq_base: f64,
    /// Divide the top-k router weights by their sum. qwen3moe: `expert_weights_norm`, absent
    /// means true (its graph always does); llama (Mixtral) always; olmoe and qwen2moe never
    /// (their graphs pass `norm_w = false` whatever the file says).
    pub expert_weights_norm: bool,
    /// Scale applied to the router weights (0 = none). Only qwen3moe reads
    /// `expert_weights_scale`; for the others llama.cpp never loads the key.
    pub expert_weights_scale: f64,
    /// How the router's top-k weights are computed.
    pub gating: Gating,
    pub rope: RopeScaling,
    /// Sliding-window size (0: every layer attends to the whole context).
    pub n_swa: u32,
    /// Which layers use the sliding window (empty when `n_swa` is 0).
    pub swa_layers: Vec<bool>,
    /// RoPE base of the sliding-window layers (`rope.freq_base_swa`, default `rope_freq_base`).
    pub rope_freq_base_swa: f64,
}

impl MoeParams {
    /// Whether layer `l` attends through the sliding window.
    pub fn is_swa(&self, l: usize) -> bool {
        self.n_swa > 0 && self.swa_layers.get(l).copied().unwrap_or(false)
    }
}

/// The parameters of qwen3moe (the name before the table had more than one entry).
pub type Qwen3MoeParams = MoeParams;
