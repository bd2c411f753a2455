//! The MoE decoder on ggml: qwen3moe, olmoe, mixtral (llama with experts), qwen2moe and
//! gpt-oss.
//!
//! A forward pass over a micro-batch is a sequence of graphs, one per layer boundary:
//! graph 0 embeds the tokens and runs layer 0's attention and router; graph `l` (1 ≤ l < L)
//! runs layer `l-1`'s experts, then layer `l`'s attention and router; graph `L` runs the last
//! layer's experts, the output norm and the lm_head. Between two graphs the host reads the
//! router's top-k ids and asks an [`ExpertProvider`] for the routed experts' weights: the
//! resident provider points into the mapped file, the streamer into its cache slots. Each
//! expert's FFN is its own small set of nodes whose weight tensors point at the provider's
//! bytes, so computing an expert at another address gives the same bits.
//!
//! The math follows llama.cpp's graph builders (`src/models/<arch>.cpp`) over its shared
//! `build_qkv`, `build_attn`, `build_moe_ffn` and `build_ffn`: RMS norms, the architecture's
//! Q/K norm and RoPE layout (YaRN where the file scales it), grouped-query attention over an
//! F16 KV cache (`flash_attn_ext`, with sinks and a sliding-window mask where the architecture
//! has them), softmax router (or a softmax over the top-k logits), top-k, weights divided by
//! their sum (clamped at 6.1e-5) where the architecture does, SwiGLU (or clamped SwiGLU)
//! experts with their biases, the weighted sum of experts in rank order, a resident shared
//! expert where there is one, output norm, lm_head. The blocks are shared
//! (`attention`, `moe`); what differs per architecture is data (`arch`).
//!
//! A verify pass of speculative decoding ([`Decoder::verify`]) is a micro-batch whose every
//! row can be computed as a single step computes it: each row's attention on its own, and row
//! by row the products whose CPU kernel depends on the batch's width (`width_dependent`), so
//! its logits are the single steps' bits. Two lossy knobs act on decode's routing on the host,
//! between a layer's router and its experts: `--drop-cold-experts` (skip a light routing whose
//! expert the provider does not hold) and `--route-ahead` (a layer's experts picked by its
//! router layers earlier, in the graph where the look-ahead predicts).

mod attention;
mod moe;
mod remote;
mod replay;

pub use crate::arch::{Act, QkNorm, Recipe, SharedGate};
pub use remote::{Collected, RemoteExperts};
pub use replay::RouteReplay;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::dense::Mapping;
use crate::error::{Error, Result};
use crate::ggml::{Context, GgmlType, Graph, GraphAllocator, Tensor, TensorSet, ThreadPool};
use crate::model::{ModelIndex, MoeParams};
use crate::provider::{DenseSource, ExpertProvider, ExpertPtrs, Residency, ResidentExperts};

/// Deliberate mistakes, for tests that show the oracle catches real bugs. Never set them
/// outside tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Normalise the top-k weights where the model does not, and not where it does.
    pub flip_weight_norm: bool,
    /// Rotate queries as if one position later than their keys.
    pub rope_shift: bool,
    /// Skip the Q and K RMS norms.
    pub no_qk_norm: bool,
    /// Q/K norms per head where the model norms the whole projection, and vice versa.
    pub wrong_qk_norm: bool,
    /// The other RoPE layout (normal for NeoX, NeoX for normal).
    pub wrong_rope_mode: bool,
    /// The shared expert without its gate.
    pub no_shared_gate: bool,
    /// Attention without the sinks.
    pub no_sinks: bool,
    /// Every layer attends to the whole context (no sliding window).
    pub no_window: bool,
    /// Plain SwiGLU where the model clamps it (gpt-oss's `swiglu_oai`).
    pub plain_swiglu: bool,
    /// The router's softmax over all experts before the top-k, where the model takes the
    /// softmax of the top-k logits only.
    pub softmax_all: bool,
    /// RoPE without the file's YaRN scaling.
    pub no_yarn: bool,
}

/// Decoder settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// KV cache length in tokens.
    pub n_ctx: u32,
    /// CPU threads computing the graphs.
    pub n_threads: usize,
    /// Widest micro-batch of a prefill.
    pub n_ubatch: u32,
    /// Choose each prompt's micro-batch (`--ubatch auto`): the fewest passes of at most
    /// `n_ubatch` tokens, of equal width (see [`PrefillPlan`]); else passes of `n_ubatch`.
    pub auto_ubatch: bool,
    /// Route each token to this many experts instead of the model's top-k (lossy).
    pub n_expert_used: Option<u32>,
    /// Per-expert pipelining (lossless): compute the routed experts whose bytes are in while
    /// the others are still being read, each group as it lands; the sum stays in rank order.
    pub pipeline: bool,
    #[doc(hidden)]
    pub faults: Faults,
}

impl Default for Options {
    fn default() -> Self {
        let n_threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            n_ctx: 4096,
            n_threads,
            n_ubatch: 512,
            auto_ubatch: false,
            n_expert_used: None,
            pipeline: false,
            faults: Faults::default(),
        }
    }
}

/// Which positions of a forward pass return logits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logits {
    /// The last token's only.
    Last,
    /// Every token's (teacher forcing).
    All,
}

/// Indices into the weight set of one layer's dense tensors.
struct LayerWeights {
    attn_norm: usize,
    wq: usize,
    wk: usize,
    wv: usize,
    wo: usize,
    bq: Option<usize>,
    bk: Option<usize>,
    bv: Option<usize>,
    bo: Option<usize>,
    q_norm: Option<usize>,
    k_norm: Option<usize>,
    ffn_norm: usize,
    router: usize,
    /// `ffn_gate_inp.bias`, `[n_expert]`.
    router_b: Option<usize>,
    /// `attn_sinks`, `[n_head]`.
    sinks: Option<usize>,
    /// Per-expert biases of gate, up and down: `[n_ff, n_expert]`, `[n_ff, n_expert]`,
    /// `[n_embd, n_expert]`.
    exp_b: Option<[usize; 3]>,
    shexp: Option<SharedExpert>,
    /// Type and `[ne0, ne1]` of one expert's gate, up and down.
    experts: [(GgmlType, [i64; 2]); 3],
}

/// The resident shared expert of a layer.
struct SharedExpert {
    gate: usize,
    up: usize,
    down: usize,
    /// `ffn_gate_inp_shexp`, `[n_embd]`.
    gate_inp: Option<usize>,
}

/// Indices into the state set.
struct State {
    k: Vec<usize>,
    v: Vec<usize>,
    /// FFN input after its norm, `[n_embd, n_ubatch]`.
    h: usize,
    /// The residual around the FFN, `[n_embd, n_ubatch]`.
    res: usize,
    /// Top-k expert ids, I32 `[k, n_ubatch]`.
    ids: usize,
    /// Top-k weights, F32 `[k, n_ubatch]`.
    wts: usize,
    /// Routed experts' outputs, expert-major, F32 `[n_embd, k × n_ubatch]`.
    y: usize,
    /// The next layer's predicted top-k per row (look-ahead, prefill read-ahead), I32
    /// `[k, n_ubatch]`.
    pred: usize,
    /// The shared expert's gated output, F32 `[n_embd, n_ubatch]` (architectures with one).
    shexp: Option<usize>,
    /// The router's own top-k when route-ahead chose the experts, I32 `[k, n_ubatch]`.
    real: usize,
}

/// One layer's routing in one forward pass (for `--route-trace`): each routed expert with its
/// best rank and largest weight over the pass's rows (a prefill micro-batch routes the union of
/// its tokens' experts), in order of first appearance.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerRoute {
    /// A prompt micro-batch (a forward pass on an empty context or of several tokens).
    pub prefill: bool,
    /// Index of the pass within its phase since the last reset.
    pub step: u32,
    pub layer: u32,
    /// (expert, rank, weight).
    pub experts: Vec<(u32, u32, f32)>,
}

impl LayerRoute {
    /// Its `route_trace v1` rows (turn 0; residency and bytes not recorded).
    pub fn rows(&self) -> impl Iterator<Item = crate::cache::trace::RouteRow> + '_ {
        self.experts.iter().map(|&(expert, slot, weight)| crate::cache::trace::RouteRow {
            turn: 0,
            phase: if self.prefill { crate::cache::Phase::Prefill } else { crate::cache::Phase::Decode },
            step: self.step,
            layer: self.layer,
            slot,
            expert,
            weight,
            residency: false,
            expert_bytes: 0,
        })
    }
}

/// How the last prompt was cut into micro-batches, and what one layer's union of routed
/// experts asks of the expert provider at that width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrefillPlan {
    /// Tokens of the prompt (of this forward call).
    pub tokens: u32,
    /// Tokens per micro-batch (the last may be narrower) and how many there were.
    pub width: u32,
    pub passes: u32,
    /// Chosen (`--ubatch auto`) rather than given.
    pub auto: bool,
    /// Experts one layer's union routes at `width` rows, expected under uniform routing:
    /// `n_expert × (1 − (1 − k / n_expert)^width)` (skewed routing routes fewer).
    pub union_est: f64,
    /// Entries the provider holds at once (its pool's slots).
    pub capacity: u32,
    /// Largest union of a layer of the prompt, as routed (the union is computed in groups of
    /// at most `capacity` experts).
    pub union_max: u32,
}

impl PrefillPlan {
    /// The verdict against the pool: the union fits beside the next layer's read-ahead, fits
    /// alone, or is computed in groups.
    pub fn fit(&self) -> &'static str {
        let u = self.union_max.max(1);
        if 2 * u <= self.capacity {
            "fits the pool beside the next layer's read-ahead"
        } else if u <= self.capacity {
            "fits the pool, without room to read the next layer ahead"
        } else {
            "is wider than the pool: computed in groups"
        }
    }
}

/// The widest micro-batch `--ubatch auto` chooses: a prompt of up to this many tokens is one
/// pass, each layer's union read once (its compute buffers are sized for it at open).
pub const AUTO_UBATCH_MAX: u32 = 2048;

/// The expected union of experts routed by `rows` rows at top-`k` of `n_expert`, uniformly.
pub fn expected_union(n_expert: u32, k: u32, rows: u32) -> f64 {
    let e = f64::from(n_expert.max(1));
    e * (1.0 - (1.0 - f64::from(k.min(n_expert)) / e).powf(f64::from(rows)))
}

/// The micro-batches of a prompt of `n` tokens: `(width, passes)`. Given (`auto` false):
/// passes of `widest`. Chosen: the fewest passes of at most `widest` tokens, all of one width
/// (rounded up), since each pass reads a layer's union once and a union grows slower than its
/// rows: fewer, wider passes read less (the union of a pass is computed in groups where it is
/// wider than the pool, never re-read within the pass).
pub fn micro_batches(n: usize, widest: usize, auto: bool) -> (usize, usize) {
    let widest = widest.max(1);
    let passes = n.div_ceil(widest).max(1);
    if !auto {
        return (widest.min(n.max(1)), passes);
    }
    (n.div_ceil(passes).max(1), passes)
}

/// Counters of the last forward passes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Graphs computed.
    pub graphs: u64,
    /// Seconds inside graph compute.
    pub compute_s: f64,
    /// Seconds inside the expert provider.
    pub provider_s: f64,
}

/// The weights and state the graphs are built from (borrowed while a graph is built, apart
/// from the decoder's mutable parts).
struct Model {
    hp: MoeParams,
    recipe: Recipe,
    n_vocab: u64,
    opts: Options,
    weights: TensorSet,
    layers: Vec<LayerWeights>,
    tok_embd: usize,
    output_norm: usize,
    output: usize,
    state: TensorSet,
    st: State,
    /// The pass being built is a verify pass computed row by row where a kernel's result
    /// depends on the batch's width (see [`width_dependent`]).
    exact: bool,
}

/// The decoder: dense weights from the mapped file (or memory), experts from a provider.
pub struct Decoder<P: ExpertProvider> {
    m: Model,
    provider: P,
    pool: ThreadPool,
    alloc: GraphAllocator,
    n_past: u32,
    stats: Stats,
    ptrs: Vec<ExpertPtrs>,
    routes: Option<Vec<LayerRoute>>,
    replay: Option<RouteReplay>,
    steps: [u32; 2],
    plan: Option<PrefillPlan>,
    /// Experts computed on other hosts (`--rpc`).
    remote: Option<Box<dyn RemoteExperts>>,
    knobs: Lossy,
    /// Route-ahead: each layer's experts as its router chose them L layers earlier, for the
    /// decode step in progress (empty where none).
    ahead: Vec<Vec<i32>>,
    _dense: Arc<dyn DenseSource>,
}

impl<P: ExpertProvider> std::fmt::Debug for Decoder<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("hp", &self.m.hp)
            .field("opts", &self.m.opts)
            .field("n_past", &self.n_past)
            .finish()
    }
}

impl Decoder<ResidentExperts> {
    /// Open `path` and decode it resident: every weight read through the mapping.
    ///
    /// # Errors
    /// The model's index errors, [`Error::Io`], [`Error::Tensor`] for a tensor of the wrong
    /// shape, [`Error::Unsupported`] for an architecture this decoder does not run.
    pub fn open_resident(path: &Path, opts: Options) -> Result<Self> {
        let index = ModelIndex::open(path).map_err(|err| Error::Open { path: path.into(), err })?;
        let map = Arc::new(Mapping::open(&index.file)?);
        let provider = ResidentExperts::new(&index, map.clone());
        Self::new(&index, map, provider, opts)
    }
}

fn check_dims(index: &ModelIndex, name: &str, want: &[u64]) -> Result<()> {
    let t = index.file.tensor(name).ok_or_else(|| Error::Tensor { name: name.into(), why: "missing".into() })?;
    let mut got = t.dims.clone();
    while got.len() > want.len() && got.last() == Some(&1) {
        got.pop();
    }
    if got != want {
        return Err(Error::Tensor { name: name.into(), why: format!("dims {:?}, expected {want:?}", t.dims) });
    }
    Ok(())
}

impl<P: ExpertProvider> Decoder<P> {
    /// A decoder over `index`'s dense weights in `dense`, with experts from `provider`.
    ///
    /// # Errors
    /// See [`Decoder::open_resident`].
    pub fn new(index: &ModelIndex, dense: Arc<dyn DenseSource>, provider: P, opts: Options) -> Result<Self> {
        let mut hp = index.params.hp.clone();
        let recipe = index.arch.recipe;
        if index.layers.len() != hp.n_layer as usize
            || index.layers.iter().enumerate().any(|(i, l)| l.layer as usize != i)
        {
            return Err(Error::Unsupported(format!(
                "layers without routed experts ({} of {} layers have them)",
                index.layers.len(),
                hp.n_layer
            )));
        }
        if let Some(k) = opts.n_expert_used {
            if k == 0 || k > hp.n_expert {
                return Err(Error::Unsupported(format!("--n-expert-used {k}: the model has {} experts", hp.n_expert)));
            }
            hp.n_expert_used = k;
        }
        if opts.n_ctx == 0 || opts.n_ubatch == 0 {
            return Err(Error::Unsupported("a context and a micro-batch of at least one token".into()));
        }
        let emb = index
            .file
            .tensor("token_embd.weight")
            .ok_or_else(|| Error::Tensor { name: "token_embd.weight".into(), why: "missing".into() })?;
        let n_vocab = emb.dim(1);
        let (e, q, kv) = (hp.n_embd, u64::from(hp.n_head) * hp.head_dim, u64::from(hp.n_head_kv) * hp.head_dim);

        let n_dense = index.dense.len();
        let mut weights = TensorSet::no_alloc(n_dense + 4)?;
        let mut add = |name: &str, want: &[u64]| -> Result<usize> {
            check_dims(index, name, want)?;
            let t = index.file.tensor(name).expect("checked above");
            let ne: Vec<i64> = want.iter().map(|&d| d as i64).collect();
            let i = weights.push(name, t.ty, &ne)?;
            let ptr = dense.ptr(t.shard, t.offset, t.size)?;
            // SAFETY: the mapping holds t.size bytes at ptr (checked by Mapping::ptr), which is
            // the tensor's nbytes for these dims; it is read-only and lives as long as the
            // decoder (self._dense).
            unsafe { weights.get(i).set_data_ptr(ptr.cast_mut()) };
            Ok(i)
        };
        // A tensor the architecture may have: loaded when the file has it.
        let has = |name: &str, allowed: bool| allowed && index.file.tensor(name).is_some();
        let tok_embd = add("token_embd.weight", &[e, n_vocab])?;
        let output_norm = add("output_norm.weight", &[e])?;
        let output =
            if index.file.tensor("output.weight").is_some() { add("output.weight", &[e, n_vocab])? } else { tok_embd };
        let mut layers = Vec::with_capacity(hp.n_layer as usize);
        for l in 0..hp.n_layer {
            let n = |s: &str| format!("blk.{l}.{s}.weight");
            let ml = &index.layers[l as usize];
            let mut experts = [(GgmlType::F32, [0i64; 2]); 3];
            for t in &ml.tensors {
                let slot = t.proj.slot()?;
                let d = t.proj.expert_dims(e, hp.n_ff_exp);
                experts[slot] = (t.ty, [d[0] as i64, d[1] as i64]);
            }
            let b = |s: &str| format!("blk.{l}.{s}.bias");
            let mut opt = |name: String, want: &[u64], allowed: bool| -> Result<Option<usize>> {
                if has(&name, allowed) {
                    add(&name, want).map(Some)
                } else {
                    Ok(None)
                }
            };
            let (bq, bk, bv) = (
                opt(b("attn_q"), &[q], recipe.qkv_bias)?,
                opt(b("attn_k"), &[kv], recipe.qkv_bias)?,
                opt(b("attn_v"), &[kv], recipe.qkv_bias)?,
            );
            let bo = opt(b("attn_output"), &[e], recipe.out_bias)?;
            let (ne, ff) = (u64::from(hp.n_expert), hp.n_ff_exp);
            let router_b = if recipe.router_bias { Some(add(&b("ffn_gate_inp"), &[ne])?) } else { None };
            let sinks = if recipe.sinks { Some(add(&n("attn_sinks"), &[u64::from(hp.n_head)])?) } else { None };
            let exp_b = if recipe.expert_bias {
                Some([
                    add(&b("ffn_gate_exps"), &[ff, ne])?,
                    add(&b("ffn_up_exps"), &[ff, ne])?,
                    add(&b("ffn_down_exps"), &[e, ne])?,
                ])
            } else {
                None
            };
            let (q_norm, k_norm) = match recipe.qk_norm {
                QkNorm::None => (None, None),
                QkNorm::PerHead => {
                    (Some(add(&n("attn_q_norm"), &[hp.head_dim])?), Some(add(&n("attn_k_norm"), &[hp.head_dim])?))
                }
                QkNorm::Whole => (Some(add(&n("attn_q_norm"), &[q])?), Some(add(&n("attn_k_norm"), &[kv])?)),
            };
            let shexp = match recipe.shared_expert {
                None => None,
                Some(gate) => {
                    let f = hp.n_ff_shexp;
                    Some(SharedExpert {
                        gate: add(&n("ffn_gate_shexp"), &[e, f])?,
                        up: add(&n("ffn_up_shexp"), &[e, f])?,
                        down: add(&n("ffn_down_shexp"), &[f, e])?,
                        gate_inp: match gate {
                            SharedGate::Sigmoid => Some(add(&n("ffn_gate_inp_shexp"), &[e])?),
                        },
                    })
                }
            };
            layers.push(LayerWeights {
                attn_norm: add(&n("attn_norm"), &[e])?,
                wq: add(&n("attn_q"), &[e, q])?,
                wk: add(&n("attn_k"), &[e, kv])?,
                wv: add(&n("attn_v"), &[e, kv])?,
                wo: add(&n("attn_output"), &[q, e])?,
                bq,
                bk,
                bv,
                bo,
                q_norm,
                k_norm,
                ffn_norm: add(&n(recipe.ffn_norm), &[e])?,
                router: add(&n("ffn_gate_inp"), &[e, u64::from(hp.n_expert)])?,
                router_b,
                sinks,
                exp_b,
                shexp,
                experts,
            });
        }

        let (ctx, ub, k) = (i64::from(opts.n_ctx), i64::from(opts.n_ubatch), i64::from(hp.n_expert_used));
        let kv_bytes = 2 * kv as usize * opts.n_ctx as usize * 2 * hp.n_layer as usize;
        let scratch = (3 * e as usize + 4 * k as usize + e as usize * k as usize) * ub as usize * 4;
        let mut state = TensorSet::with_data(2 * hp.n_layer as usize + 8, kv_bytes + scratch + 64 * k as usize + 1024)?;
        let (mut ks, mut vs) = (Vec::new(), Vec::new());
        let (hd, nkv) = (hp.head_dim as i64, i64::from(hp.n_head_kv));
        for l in 0..hp.n_layer {
            ks.push(state.push(&format!("cache_k_l{l}"), GgmlType::F16, &[hd, nkv, ctx])?);
            vs.push(state.push(&format!("cache_v_l{l}"), GgmlType::F16, &[hd, nkv, ctx])?);
        }
        let st = State {
            k: ks,
            v: vs,
            h: state.push("ffn_in", GgmlType::F32, &[e as i64, ub])?,
            res: state.push("ffn_res", GgmlType::F32, &[e as i64, ub])?,
            ids: state.push("moe_ids", GgmlType::I32, &[k, ub])?,
            wts: state.push("moe_w", GgmlType::F32, &[k, ub])?,
            y: state.push("moe_y", GgmlType::F32, &[e as i64, k * ub])?,
            pred: state.push("moe_pred", GgmlType::I32, &[k, ub])?,
            shexp: match recipe.shared_expert {
                Some(_) => Some(state.push("shexp_out", GgmlType::F32, &[e as i64, ub])?),
                None => None,
            },
            real: state.push("moe_ids_real", GgmlType::I32, &[k, ub])?,
        };
        let hp_layers = hp.n_layer as usize;
        Ok(Self {
            m: Model {
                hp,
                recipe,
                n_vocab,
                opts,
                weights,
                layers,
                tok_embd,
                output_norm,
                output,
                state,
                st,
                exact: false,
            },
            provider,
            pool: ThreadPool::new(opts.n_threads)?,
            alloc: GraphAllocator::new()?,
            n_past: 0,
            stats: Stats::default(),
            ptrs: Vec::new(),
            routes: None,
            replay: None,
            steps: [0; 2],
            plan: None,
            remote: None,
            knobs: Lossy::default(),
            ahead: vec![Vec::new(); hp_layers],
            _dense: dense,
        })
    }

    /// Compute the experts `remote` takes on other hosts (or none: `None`); see
    /// [`RemoteExperts`].
    pub fn set_remote(&mut self, remote: Option<Box<dyn RemoteExperts>>) {
        self.remote = remote;
    }

    /// The model's hyper-parameters.
    pub fn params(&self) -> &MoeParams {
        &self.m.hp
    }

    /// Vocabulary size (rows of the embedding).
    pub fn n_vocab(&self) -> usize {
        self.m.n_vocab as usize
    }

    /// Tokens in the KV cache.
    pub fn n_past(&self) -> u32 {
        self.n_past
    }

    /// The settings.
    pub fn options(&self) -> &Options {
        &self.m.opts
    }

    /// Bytes of the buffer the graphs' intermediate tensors live in (the largest graph so far).
    pub fn graph_buffer_bytes(&self) -> usize {
        self.alloc.buffer_size()
    }

    /// How the last prompt of more than one token was cut into micro-batches.
    pub fn prefill_plan(&self) -> Option<PrefillPlan> {
        self.plan
    }

    /// Counters since the decoder was made.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The expert provider.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The expert provider, mutably.
    pub fn provider_mut(&mut self) -> &mut P {
        &mut self.provider
    }

    /// Forget the KV cache: the next token is at position 0.
    pub fn reset(&mut self) {
        self.n_past = 0;
        self.steps = [0; 2];
    }

    /// Keep the first `n` positions of the KV cache and forget the rest: the next token is at
    /// position `n` (the cells past it are overwritten before the masks let anything see them).
    pub fn truncate(&mut self, n: u32) {
        self.n_past = self.n_past.min(n);
    }

    /// The KV cache's first `n_past` positions, every layer's K then V, as bytes.
    ///
    /// # Errors
    /// ggml's, for a state tensor without data (never, for ours).
    pub fn kv_snapshot(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for (&k, &v) in self.m.st.k.iter().zip(&self.m.st.v) {
            for t in [k, v] {
                let t = self.m.state.get(t);
                let row = t.nb()[2];
                out.extend(t.read_range(0, row * self.n_past as usize)?);
            }
        }
        Ok(out)
    }

    /// Bytes [`Self::kv_snapshot`] takes per position: every layer's K and V rows (F16).
    pub fn kv_bytes_per_position(&self) -> usize {
        self.m.st.k.iter().map(|&k| self.m.state.get(k).nb()[2]).sum::<usize>() * 2
    }

    /// Restore [`Self::kv_snapshot`]'s bytes of `n` positions: the context then holds them.
    ///
    /// # Errors
    /// [`Error::Invalid`] if the bytes are not `n` positions of this model's KV cache (another
    /// model, another size) or `n` exceeds the context.
    pub fn kv_restore(&mut self, bytes: &[u8], n: u32) -> Result<()> {
        let row = self.kv_bytes_per_position();
        if n > self.m.opts.n_ctx || Some(bytes.len()) != row.checked_mul(n as usize) {
            return Err(Error::Invalid(format!(
                "a saved KV cache of {} bytes is not {n} positions of this model's ({} bytes each, context {})",
                bytes.len(),
                row,
                self.m.opts.n_ctx
            )));
        }
        let mut at = 0;
        for (&k, &v) in self.m.st.k.iter().zip(&self.m.st.v) {
            for t in [k, v] {
                let t = self.m.state.get(t);
                let len = t.nb()[2] * n as usize;
                t.write_range(0, &bytes[at..at + len])?;
                at += len;
            }
        }
        self.n_past = n;
        Ok(())
    }

    /// Decode with routing replayed from a trace (benchmark only: the text is meaningless),
    /// or with the model's router again (`None`). Decode step `i` after a [`Self::reset`]
    /// takes the trace's step `i` (wrapping).
    ///
    /// # Errors
    /// [`Error::Replay`] if the trace's layers, experts or top-k differ from the model's.
    pub fn set_route_replay(&mut self, replay: Option<RouteReplay>) -> Result<()> {
        if let Some(r) = &replay {
            let hp = &self.m.hp;
            r.check(hp.n_layer, hp.n_expert, hp.n_expert_used as usize)?;
        }
        self.replay = replay;
        Ok(())
    }

    /// Start (or stop) recording every layer's routing.
    pub fn record_routes(&mut self, on: bool) {
        self.routes = on.then(Vec::new);
    }

    /// The routing recorded since [`Self::record_routes`] (or the last take).
    pub fn take_routes(&mut self) -> Vec<LayerRoute> {
        self.routes.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Run `tokens` at the next positions; returns the logits `want`ed (`n_vocab` per row).
    ///
    /// # Errors
    /// [`Error::BadToken`], [`Error::ContextFull`] (nothing is computed then), provider and
    /// ggml errors (the KV cache may then hold part of the batch: [`Self::reset`] before reuse).
    pub fn forward(&mut self, tokens: &[i32], want: Logits) -> Result<Vec<f32>> {
        Ok(self.forward_until(tokens, want, &mut |_| true)?.expect("never stopped"))
    }

    /// [`Self::forward`] that calls `go(tokens done)` before each micro-batch and returns
    /// `None` when it says false (the KV cache then holds the micro-batches run so far).
    ///
    /// # Errors
    /// As [`Self::forward`].
    pub fn forward_until(
        &mut self,
        tokens: &[i32],
        want: Logits,
        go: &mut dyn FnMut(usize) -> bool,
    ) -> Result<Option<Vec<f32>>> {
        let (n_vocab, n_ctx) = (self.m.n_vocab, self.m.opts.n_ctx);
        if let Some(&t) = tokens.iter().find(|&&t| t < 0 || t as u64 >= n_vocab) {
            return Err(Error::BadToken { token: t, n_vocab });
        }
        if tokens.is_empty() || self.n_past as usize + tokens.len() > n_ctx as usize {
            return Err(Error::ContextFull { n_past: self.n_past, n_new: tokens.len(), n_ctx });
        }
        let mut out = Vec::new();
        let (width, passes) = micro_batches(tokens.len(), self.m.opts.n_ubatch as usize, self.m.opts.auto_ubatch);
        if tokens.len() > 1 {
            let hp = &self.m.hp;
            self.plan = Some(PrefillPlan {
                tokens: tokens.len() as u32,
                width: width as u32,
                passes: passes as u32,
                auto: self.m.opts.auto_ubatch,
                union_est: expected_union(hp.n_expert, hp.n_expert_used, width as u32),
                capacity: self.provider.capacity() as u32,
                union_max: 0,
            });
        }
        let chunks: Vec<&[i32]> = tokens.chunks(width).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            if !go(i * width) {
                return Ok(None);
            }
            let rows = match want {
                Logits::All => Rows::All,
                Logits::Last if i + 1 == chunks.len() => Rows::Last,
                Logits::Last => Rows::None,
            };
            let prefill = self.n_past == 0 || tokens.len() > 1;
            let step = self.steps[usize::from(!prefill)];
            self.steps[usize::from(!prefill)] += 1;
            let logits = self.ubatch(chunk, rows, prefill, step, false)?;
            out.extend_from_slice(&logits);
            self.n_past += chunk.len() as u32;
        }
        Ok(Some(out))
    }

    /// A verify pass of speculative decoding: `tokens` (the token to run and a draft of the
    /// ones after it) at the next positions in one micro-batch, every row's logits. With
    /// `exact`, every row is computed as a single step of [`Self::forward`] computes it (its
    /// own attention over the keys up to its position; row by row the products whose CPU kernel
    /// depends on the batch's width, `width_dependent`): the same bits as `tokens.len()`
    /// single steps, with the routed experts' union acquired once. Otherwise as one batch
    /// (other bits). A decode pass for the cache (its decode phase) and for routing replay
    /// (row `j` takes the replay's next step but `j`); [`Self::rewind`] drops the rows not kept.
    ///
    /// # Errors
    /// As [`Self::forward`]; [`Error::Invalid`] for a pass wider than the micro-batch.
    pub fn verify(&mut self, tokens: &[i32], exact: bool) -> Result<Vec<f32>> {
        let (n_vocab, n_ctx) = (self.m.n_vocab, self.m.opts.n_ctx);
        if let Some(&t) = tokens.iter().find(|&&t| t < 0 || t as u64 >= n_vocab) {
            return Err(Error::BadToken { token: t, n_vocab });
        }
        if tokens.is_empty() || self.n_past as usize + tokens.len() > n_ctx as usize {
            return Err(Error::ContextFull { n_past: self.n_past, n_new: tokens.len(), n_ctx });
        }
        if tokens.len() > self.m.opts.n_ubatch as usize {
            return Err(Error::Invalid(format!(
                "a verify pass of {} tokens is wider than the micro-batch ({})",
                tokens.len(),
                self.m.opts.n_ubatch
            )));
        }
        let step = self.steps[1];
        self.steps[1] += tokens.len() as u32;
        self.m.exact = exact;
        let logits = self.ubatch(tokens, Rows::All, false, step, true);
        self.m.exact = false;
        let logits = logits?;
        self.n_past += tokens.len() as u32;
        Ok(logits)
    }

    /// Keep the first `n` positions after a verify pass: the draft's rows not accepted are
    /// forgotten, and with them their decode steps (routing replay continues from the first
    /// dropped one).
    pub fn rewind(&mut self, n: u32) {
        let dropped = self.n_past.saturating_sub(n);
        self.steps[1] = self.steps[1].saturating_sub(dropped);
        self.truncate(n);
    }

    /// `--drop-cold-experts F` (lossy), or off (`None`): in decode, a routing of rank 1 or more
    /// whose weight is under F / k and whose expert is not resident in the provider (not in the
    /// cache, or its look-ahead read not landed) is skipped, and the row's other weights are
    /// renormalised where the architecture normalises them.
    ///
    /// # Errors
    /// [`Error::Invalid`] unless 0 < F ≤ k.
    pub fn set_drop_cold_experts(&mut self, f: Option<f32>) -> Result<()> {
        if let Some(f) = f {
            let k = self.m.hp.n_expert_used as f32;
            if !(f > 0.0 && f <= k) {
                return Err(Error::Invalid(format!(
                    "--drop-cold-experts {f}: a fraction of the even share 1/k, in (0, {k}] (k = {k})"
                )));
            }
        }
        self.knobs.drop_cold = f;
        Ok(())
    }

    /// `--route-ahead L` (lossy, experimental), or off: in a decode step, layer `l ≥ L`'s
    /// experts are the ones its own router picks on layer `l − L`'s FFN input (its weights
    /// still its router's on its own input, at those experts), so that their reads can start
    /// L layers early (the look-ahead reads them).
    ///
    /// # Errors
    /// [`Error::Invalid`] unless 1 ≤ L < the layers.
    pub fn set_route_ahead(&mut self, l: Option<u32>) -> Result<()> {
        if let Some(l) = l {
            let n = self.m.hp.n_layer;
            if l == 0 || l >= n {
                return Err(Error::Invalid(format!("--route-ahead {l}: 1 to {} (the model has {n} layers)", n - 1)));
            }
        }
        self.knobs.route_ahead = l;
        Ok(())
    }

    /// The lossy knobs' counters since the decoder was made (None when neither is set).
    pub fn lossy_counters(&self) -> Option<LossyCounters> {
        (self.knobs.drop_cold.is_some() || self.knobs.route_ahead.is_some()).then_some(self.knobs.c)
    }

    fn ubatch(&mut self, tokens: &[i32], rows: Rows, prefill: bool, step: u32, verify: bool) -> Result<Vec<f32>> {
        let m = &self.m;
        let hp = &m.hp;
        let n_layer = hp.n_layer as usize;
        let k = hp.n_expert_used as usize;
        let n = tokens.len();
        let pos0 = self.n_past;
        // Rows flowing into the phase being built: all tokens until the last layer's
        // attention, which keeps only the rows whose logits are wanted.
        let mut n_rows = n;
        let mut ids: Vec<i32> = Vec::new();
        let mask = causal_mask(pos0 as usize, n, None);
        let swa_mask =
            (hp.n_swa > 0 && !m.opts.faults.no_window).then(|| causal_mask(pos0 as usize, n, Some(hp.n_swa)));
        let mut logits = Vec::new();
        // A verify pass is decode work (several rows).
        self.provider.begin_step(n > 1 && !verify);
        if let Some(r) = self.remote.as_mut() {
            r.begin_step(n > 1 && !verify);
        }
        // Look-ahead in decode; in a prefill, read-ahead: the next layer's router on this
        // layer's FFN input, every row, names the experts to read while this layer computes.
        // With route-ahead (a decode step), the router of the layer L ahead, whose routing it
        // then is.
        let lookahead = self.provider.wants_lookahead();
        let ahead = self.knobs.route_ahead.filter(|_| !prefill && !verify && n == 1).map(|l| l as usize);
        if ahead.is_some() {
            self.ahead.iter_mut().for_each(Vec::clear);
        }
        let offset = ahead.unwrap_or(1);
        let mut pred: Vec<i32> = Vec::new();
        let mut pred_layer = 0usize;
        let renorm = hp.expert_weights_norm || hp.gating == crate::model::Gating::SoftmaxWeight;
        for p in 0..=n_layer {
            let keep = if p + 1 == n_layer && rows != Rows::All { 1 } else { n };
            let used = used_experts(&ids, k);
            let mut groups: Vec<Vec<u32>> = Vec::new();
            let mut remote_out = BTreeMap::new();
            if p > 0 {
                let cap = self.provider.capacity().max(k);
                // The experts other hosts compute (--rpc) are sent their rows of the FFN input
                // now, and compute while this host computes the rest.
                let remote = match self.remote.as_mut() {
                    Some(r) => {
                        let h = m.state.get(m.st.h).read_f32_rows(n_rows)?;
                        r.dispatch(p as u32 - 1, &h, hp.n_embd as usize, &used)
                    }
                    None => Vec::new(),
                };
                let experts: Vec<u32> = used.keys().copied().filter(|e| !remote.contains(e)).collect();
                if let Some(plan) = self.plan.as_mut().filter(|_| prefill && n > 1) {
                    plan.union_max = plan.union_max.max(used.len() as u32);
                }
                groups = experts.chunks(cap).map(<[u32]>::to_vec).collect();
                let group = groups.pop().unwrap_or_default();
                // All groups but the last: those experts' outputs, each in a graph of its own
                // (pipelined, each in graphs of the experts landed so far while the rest read).
                for group in &groups {
                    if m.opts.pipeline {
                        let mut ready =
                            Self::start(&mut self.provider, &mut self.ptrs, &mut self.stats, p as u32 - 1, group)?;
                        let mut waiting = group.len() - ready.len();
                        loop {
                            if !ready.is_empty() {
                                let part: Vec<u32> = ready.iter().map(|&i| group[i]).collect();
                                let part_ptrs: Vec<ExpertPtrs> = ready.iter().map(|&i| self.ptrs[i]).collect();
                                let (a, tp, st) = (&mut self.alloc, &mut self.pool, &mut self.stats);
                                Self::experts_graph(
                                    m,
                                    &self.provider,
                                    a,
                                    tp,
                                    st,
                                    p - 1,
                                    n_rows,
                                    &used,
                                    &part,
                                    &part_ptrs,
                                )?;
                                ready.clear();
                            }
                            if waiting == 0 {
                                break;
                            }
                            Self::more(&mut self.provider, &mut self.stats, &mut waiting, &mut ready)?;
                        }
                        self.provider.release(p as u32 - 1);
                        continue;
                    }
                    Self::acquire(&mut self.provider, &mut self.ptrs, &mut self.stats, p as u32 - 1, group)?;
                    let (a, tp, st) = (&mut self.alloc, &mut self.pool, &mut self.stats);
                    Self::experts_graph(m, &self.provider, a, tp, st, p - 1, n_rows, &used, group, &self.ptrs)?;
                    self.provider.release(p as u32 - 1);
                }
                let mut ready = if group.is_empty() {
                    self.ptrs.clear();
                    Vec::new()
                } else {
                    Self::start(&mut self.provider, &mut self.ptrs, &mut self.stats, p as u32 - 1, &group)?
                };
                // Look-ahead: the next layer's predicted experts queue behind this layer's
                // misses and read while this layer computes. In a prefill, the union of the
                // rows' predictions, as many as the pool holds beside this group (in expert
                // order, as the next layer's first group will be).
                if !pred.is_empty() && pred_layer < n_layer {
                    let mut experts: Vec<u32> = pred.iter().map(|&e| e as u32).collect();
                    if n > 1 {
                        experts = readahead_union(&pred, hp.n_expert as usize, predict_rows(n).1);
                        experts.truncate(self.provider.capacity().saturating_sub(group.len()));
                    }
                    if let Some(r) = self.remote.as_ref() {
                        experts.retain(|&e| r.local(pred_layer as u32, e));
                    }
                    if !experts.is_empty() {
                        self.provider.prefetch(pred_layer as u32, &experts);
                    }
                }
                // Per-expert pipelining: while some are still being read, compute the ones in
                // (into the expert-major buffer; the last graph sums every expert in rank order).
                let mut waiting = group.len() - ready.len();
                while waiting > 0 {
                    if m.opts.pipeline && !ready.is_empty() {
                        let part: Vec<u32> = ready.iter().map(|&i| group[i]).collect();
                        let part_ptrs: Vec<ExpertPtrs> = ready.iter().map(|&i| self.ptrs[i]).collect();
                        let (a, tp, st) = (&mut self.alloc, &mut self.pool, &mut self.stats);
                        Self::experts_graph(m, &self.provider, a, tp, st, p - 1, n_rows, &used, &part, &part_ptrs)?;
                        ready.clear();
                    }
                    Self::more(&mut self.provider, &mut self.stats, &mut waiting, &mut ready)?;
                }
                // The last graph computes the rest (all of them without pipelining).
                if m.opts.pipeline && ready.len() < group.len() {
                    groups.push(ready.iter().map(|&i| group[i]).collect());
                    let ptrs: Vec<ExpertPtrs> = ready.iter().map(|&i| self.ptrs[i]).collect();
                    self.ptrs = ptrs;
                } else {
                    groups.push(group);
                }
                if !remote.is_empty() {
                    // This host's experts in a graph of their own, computed while the hosts
                    // compute theirs; then the hosts' outputs (a lost host's experts computed
                    // here instead), and the last graph only weights and sums.
                    let ours = groups.pop().unwrap_or_default();
                    if !ours.is_empty() {
                        let (a, tp, st) = (&mut self.alloc, &mut self.pool, &mut self.stats);
                        Self::experts_graph(m, &self.provider, a, tp, st, p - 1, n_rows, &used, &ours, &self.ptrs)?;
                        self.provider.release(p as u32 - 1);
                    }
                    let got = self.remote.as_mut().expect("dispatched above").collect(p as u32 - 1);
                    for lost in got.lost.chunks(cap) {
                        Self::acquire(&mut self.provider, &mut self.ptrs, &mut self.stats, p as u32 - 1, lost)?;
                        let (a, tp, st) = (&mut self.alloc, &mut self.pool, &mut self.stats);
                        Self::experts_graph(m, &self.provider, a, tp, st, p - 1, n_rows, &used, lost, &self.ptrs)?;
                        self.provider.release(p as u32 - 1);
                    }
                    self.ptrs.clear();
                    remote_out = got.outputs;
                    groups.push(Vec::new());
                }
            }
            let nodes = 256 + NODES_PER_EXPERT * k * n.min(hp.n_expert as usize) + if m.exact { 64 * n } else { 0 };
            let ctx = Context::new_no_alloc(nodes * 2, nodes)?;
            let mut g = ctx.new_graph(nodes)?;
            let mut inputs: Vec<(Tensor<'_>, Vec<u8>)> = Vec::new();
            let x = if p == 0 {
                let tok = input(&ctx, GgmlType::I32, &[n as i64], &mut inputs, i32_bytes(tokens))?;
                ctx.get_rows(m.weights.get(m.tok_embd), tok)?
            } else {
                let last = &groups[groups.len() - 1];
                let st = self.provider.stacks(p as u32 - 1);
                let moe =
                    m.moe(&ctx, &mut g, p - 1, n_rows, &used, last, &self.ptrs, st, true, &mut inputs, &remote_out)?;
                let moe = m.ffn_out(&ctx, moe.expect("the last group sums"), n_rows)?;
                let res = m.state.get(m.st.res);
                ctx.add(moe, ctx.view(res, &[res.ne()[0], n_rows as i64], &[res.nb()[1]], 0)?)?
            };
            let out = if p < n_layer {
                let mask = match &swa_mask {
                    Some(w) if hp.is_swa(p) => w,
                    _ => &mask,
                };
                let ffn_inp = m.attention(&ctx, &mut g, p, x, n, pos0, mask, &mut inputs)?;
                let target = target_of(p, offset, n_layer, lookahead || ahead.is_some());
                let route = ahead.filter(|&l| p >= l).map(|_| self.ahead[p].as_slice()).filter(|r| !r.is_empty());
                m.ffn_head(&ctx, &mut g, p, ffn_inp, n, keep, target, route, &mut inputs)?;
                None
            } else {
                let normed = ctx.mul(ctx.rms_norm(x, hp.rms_eps as f32)?, m.weights.get(m.output_norm))?;
                let out = m.mm(&ctx, m.weights.get(m.output), normed)?;
                out.set_output();
                g.build_forward_expand(out)?;
                Some(out)
            };
            Self::compute(&mut self.alloc, &mut self.pool, &mut self.stats, &g, &inputs)?;
            if p > 0 {
                self.provider.release(p as u32 - 1);
            }
            if let Some(out) = out {
                if rows != Rows::None {
                    logits = out.read_f32()?;
                }
            } else {
                let mut all = m.state.get(m.st.ids).read_i32()?;
                // The weights, once read on the host to be changed (written back below).
                let mut wts: Option<Vec<f32>> = None;
                if let Some(r) = self.replay.as_ref().filter(|_| !prefill) {
                    // Replay: the trace's experts and weights stand in for the router's (row by
                    // row in a verify pass, each its own decode step).
                    let mut w = m.state.get(m.st.wts).read_f32()?;
                    for row in 0..keep {
                        for (i, &(e, wt)) in r.route(step + row as u32, p).iter().enumerate() {
                            (all[row * k + i], w[row * k + i]) = (e as i32, wt);
                        }
                    }
                    wts = Some(w);
                }
                if ahead.is_some_and(|l| p >= l) && !self.ahead[p].is_empty() {
                    // Route-ahead chose this layer's experts: how many its own router would not have.
                    let real = m.state.get(m.st.real).read_i32()?;
                    let missed = all[..k].iter().filter(|e| !real[..k].contains(e)).count() as u64;
                    self.knobs.c.ahead_routings += k as u64;
                    self.knobs.c.ahead_mismatched += missed;
                    metrics::counter!("bmoe_route_ahead_routings_total").increment(k as u64);
                    metrics::counter!("bmoe_route_ahead_mismatches_total").increment(missed);
                }
                if let Some(f) = self.knobs.drop_cold.filter(|_| !prefill) {
                    let mut w = match wts.take() {
                        Some(w) => w,
                        None => m.state.get(m.st.wts).read_f32()?,
                    };
                    let provider = &self.provider;
                    let layer = p as u32;
                    let before = self.knobs.c;
                    let c = &mut self.knobs.c;
                    let (dropped, weight_all) = drop_cold(&mut all, &mut w, k, keep, f, renorm, &mut |e| {
                        provider.residency(layer, e) != Residency::Resident
                    });
                    c.drop_considered += (k * keep) as u64;
                    c.drop_weight_all += weight_all;
                    c.drop_weight_dropped += dropped.iter().map(|d| f64::from(d.1)).sum::<f64>();
                    c.dropped += dropped.len() as u64;
                    // Reads avoided: experts no kept routing of the pass names, not being read.
                    let mut gone: Vec<u32> = dropped.iter().map(|d| d.0).collect();
                    gone.sort_unstable();
                    gone.dedup();
                    for e in gone {
                        if !all[..k * keep].contains(&(e as i32)) && provider.residency(layer, e) == Residency::Absent {
                            c.drop_avoided += 1;
                            c.drop_avoided_bytes += provider.entry_bytes(layer);
                        }
                    }
                    metrics::counter!("bmoe_moe_dropped_routings_total").increment(c.dropped - before.dropped);
                    metrics::counter!("bmoe_moe_drop_avoided_bytes_total")
                        .increment(c.drop_avoided_bytes - before.drop_avoided_bytes);
                    if !dropped.is_empty() {
                        wts = Some(w);
                    }
                }
                if let Some(w) = wts {
                    m.state.get(m.st.ids).write_i32(&all)?;
                    m.state.get(m.st.wts).write_f32(&w)?;
                }
                ids = all[..k * keep].to_vec();
                n_rows = keep;
                pred = match target_of(p, offset, n_layer, lookahead || ahead.is_some()) {
                    Some(t) => {
                        let mut all = m.state.get(m.st.pred).read_i32()?;
                        all.truncate(k * predict_rows(keep).1);
                        // A replay's research knob: the prediction drawn from the trace's next
                        // layer at a chosen accuracy (look-ahead only, one decode row).
                        let drawn = self.replay.as_ref().filter(|_| !prefill && keep == 1 && ahead.is_none());
                        if let Some(v) = drawn.and_then(|r| r.predict(step, t)) {
                            all = v.into_iter().map(|e| e as i32).collect();
                        }
                        if ahead.is_some() {
                            self.ahead[t] = all.clone();
                        }
                        pred_layer = t;
                        all
                    }
                    None => Vec::new(),
                };
                if let Some(log) = self.routes.as_mut() {
                    let w = m.state.get(m.st.wts).read_f32()?;
                    let mut experts: Vec<(u32, u32, f32)> = Vec::new();
                    for (i, &e) in ids.iter().enumerate() {
                        let (rank, weight) = ((i % k) as u32, w[i]);
                        match experts.iter_mut().find(|x| x.0 == e as u32) {
                            Some(x) => {
                                x.1 = x.1.min(rank);
                                x.2 = x.2.max(weight);
                            }
                            None => experts.push((e as u32, rank, weight)),
                        }
                    }
                    log.push(LayerRoute { prefill, step, layer: p as u32, experts });
                }
            }
        }
        Ok(logits)
    }

    /// Start acquiring `experts` of `layer`: the indices of those ready now (hits first), the
    /// rest to come from `acquire_more`.
    fn start(
        provider: &mut P,
        ptrs: &mut Vec<ExpertPtrs>,
        stats: &mut Stats,
        layer: u32,
        experts: &[u32],
    ) -> Result<Vec<usize>> {
        let t0 = std::time::Instant::now();
        let ready = provider.acquire_start(layer, experts, ptrs)?;
        stats.provider_s += t0.elapsed().as_secs_f64();
        if ptrs.len() != experts.len() {
            return Err(Error::Provider(format!("{} pointers for {} experts", ptrs.len(), experts.len())));
        }
        Ok(ready)
    }

    /// Wait for more of an acquire's experts to land: their indices join `ready`.
    fn more(provider: &mut P, stats: &mut Stats, waiting: &mut usize, ready: &mut Vec<usize>) -> Result<()> {
        let t0 = std::time::Instant::now();
        let more = provider.acquire_more()?;
        stats.provider_s += t0.elapsed().as_secs_f64();
        if more.is_empty() {
            return Err(Error::Provider(format!("{waiting} experts never landed")));
        }
        *waiting -= more.len();
        ready.extend(more);
        Ok(())
    }

    /// One graph computing `experts`' outputs of MoE layer `layer` into the expert-major buffer
    /// (not summed: the layer's last graph sums every expert in rank order).
    #[allow(clippy::too_many_arguments)]
    fn experts_graph(
        m: &Model,
        provider: &P,
        alloc: &mut GraphAllocator,
        pool: &mut ThreadPool,
        stats: &mut Stats,
        layer: usize,
        n_rows: usize,
        used: &BTreeMap<u32, Vec<(usize, usize)>>,
        experts: &[u32],
        ptrs: &[ExpertPtrs],
    ) -> Result<()> {
        let nodes = 64 + NODES_PER_EXPERT * experts.len();
        let ctx = Context::new_no_alloc(nodes * 2, nodes)?;
        let mut g = ctx.new_graph(nodes)?;
        let mut inputs: Vec<(Tensor<'_>, Vec<u8>)> = Vec::new();
        let st = provider.stacks(layer as u32);
        m.moe(&ctx, &mut g, layer, n_rows, used, experts, ptrs, st, false, &mut inputs, &BTreeMap::new())?;
        Self::compute(alloc, pool, stats, &g, &inputs)
    }

    fn acquire(
        provider: &mut P,
        ptrs: &mut Vec<ExpertPtrs>,
        stats: &mut Stats,
        layer: u32,
        experts: &[u32],
    ) -> Result<()> {
        let t0 = std::time::Instant::now();
        let r = provider.acquire(layer, experts, ptrs);
        stats.provider_s += t0.elapsed().as_secs_f64();
        if r.is_ok() && ptrs.len() != experts.len() {
            return Err(Error::Provider(format!("{} pointers for {} experts", ptrs.len(), experts.len())));
        }
        r
    }

    fn compute(
        alloc: &mut GraphAllocator,
        pool: &mut ThreadPool,
        stats: &mut Stats,
        g: &Graph<'_>,
        inputs: &[(Tensor<'_>, Vec<u8>)],
    ) -> Result<()> {
        alloc.alloc(g)?;
        for (t, bytes) in inputs {
            t.write_bytes(bytes)?;
        }
        let t0 = std::time::Instant::now();
        pool.compute(g)?;
        stats.compute_s += t0.elapsed().as_secs_f64();
        stats.graphs += 1;
        Ok(())
    }
}

/// The experts a prefill micro-batch of `rows` rows reads ahead from its rows' predictions
/// `pred` (top-k each), in expert order: every predicted expert, or from 16 rows on those that at
/// least two rows predict (an expert of the real union there is routed by several rows; one
/// lone vote is more often a misprediction, which costs its bytes of bandwidth).
pub(crate) fn readahead_union(pred: &[i32], n_expert: usize, rows: usize) -> Vec<u32> {
    let mut votes = vec![0u32; n_expert];
    for &e in pred {
        if let Some(v) = votes.get_mut(e as usize) {
            *v += 1;
        }
    }
    let min = if rows >= READAHEAD_TWO_VOTES_FROM { 2 } else { 1 };
    (0..n_expert as u32).filter(|&e| votes[e as usize] >= min).collect()
}

/// See [`readahead_union`].
const READAHEAD_TWO_VOTES_FROM: usize = 16;

/// The layer whose experts graph `p` predicts (`p + offset`: the next one, or the one
/// route-ahead routes), when predictions are `on` and that layer exists.
fn target_of(p: usize, offset: usize, n_layer: usize, on: bool) -> Option<usize> {
    (on && p + offset < n_layer).then_some(p + offset)
}

/// `--drop-cold-experts F` on one layer's routing of `rows` rows (`ids`, `w`: `k` per row, in
/// rank order): a routing of rank 1 or more whose weight is under F / k and whose expert is
/// `cold` is dropped: its place routes the row's first expert with weight 0 (nothing is read
/// for it, and adding 0 changes no sum), and the row's kept weights are scaled by (all its
/// weights) / (the kept ones) where the architecture normalises them (`renorm`: what its
/// router gives when it picks only those). The first expert is never dropped. Returns the
/// dropped (expert, weight) and the sum of every weight looked at.
fn drop_cold(
    ids: &mut [i32],
    w: &mut [f32],
    k: usize,
    rows: usize,
    f: f32,
    renorm: bool,
    cold: &mut dyn FnMut(u32) -> bool,
) -> (Vec<(u32, f32)>, f64) {
    let threshold = f / k as f32;
    let mut dropped = Vec::new();
    let mut all = 0.0f64;
    for r in 0..rows {
        let (ids, w) = (&mut ids[r * k..(r + 1) * k], &mut w[r * k..(r + 1) * k]);
        all += w.iter().map(|&x| f64::from(x)).sum::<f64>();
        let before = dropped.len();
        for j in 1..k {
            if w[j] < threshold && cold(ids[j] as u32) {
                dropped.push((ids[j] as u32, w[j]));
                (ids[j], w[j]) = (ids[0], 0.0);
            }
        }
        if renorm && dropped.len() > before {
            let gone: f32 = dropped[before..].iter().map(|d| d.1).sum();
            let kept: f32 = w.iter().sum();
            if kept > 0.0 {
                let scale = (kept + gone) / kept;
                w.iter_mut().for_each(|x| *x *= scale);
            }
        }
    }
    (dropped, all)
}

/// The lossy knobs of decode (`--drop-cold-experts`, `--route-ahead`) and their counters.
#[derive(Clone, Copy, Debug, Default)]
struct Lossy {
    drop_cold: Option<f32>,
    route_ahead: Option<u32>,
    c: LossyCounters,
}

/// What the lossy knobs of decode did, since the decoder was made.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossyCounters {
    /// `--drop-cold-experts`: routings of decode steps (and verify passes) looked at, and how
    /// many were dropped.
    pub drop_considered: u64,
    pub dropped: u64,
    /// Entries not read because every routing of them in the pass was dropped and no read of
    /// them was in flight, and their payload bytes.
    pub drop_avoided: u64,
    pub drop_avoided_bytes: u64,
    /// Router weight of the routings looked at, and of the dropped ones (before the kept ones
    /// were renormalised).
    pub drop_weight_all: f64,
    pub drop_weight_dropped: f64,
    /// `--route-ahead`: routings chosen L layers ahead, and how many of them the layer's own
    /// router (on its own input) would not have chosen.
    pub ahead_routings: u64,
    pub ahead_mismatched: u64,
}

impl std::ops::Sub for LossyCounters {
    type Output = Self;
    fn sub(self, b: Self) -> Self {
        Self {
            drop_considered: self.drop_considered - b.drop_considered,
            dropped: self.dropped - b.dropped,
            drop_avoided: self.drop_avoided - b.drop_avoided,
            drop_avoided_bytes: self.drop_avoided_bytes - b.drop_avoided_bytes,
            drop_weight_all: self.drop_weight_all - b.drop_weight_all,
            drop_weight_dropped: self.drop_weight_dropped - b.drop_weight_dropped,
            ahead_routings: self.ahead_routings - b.ahead_routings,
            ahead_mismatched: self.ahead_mismatched - b.ahead_mismatched,
        }
    }
}

/// The rows of a micro-batch of `rows` whose next-layer prediction is computed: every
/// `stride`-th, at most [`PREDICT_ROWS`] of them (`(stride, count)`). The prediction is the next
/// layer's router over those rows, as costly per row as the router itself (measured: reading ahead
/// on all 2048 rows of a pass added 7 % to the prefill's compute); the union of a wide
/// micro-batch's experts is named by far fewer rows.
pub(crate) fn predict_rows(rows: usize) -> (usize, usize) {
    let stride = rows.div_ceil(PREDICT_ROWS).max(1);
    (stride, rows.div_ceil(stride))
}

/// See [`predict_rows`].
const PREDICT_ROWS: usize = 64;

/// Graph nodes one routed expert may take (its inputs, three projections with their biases,
/// the activation, the weighting and the copy out).
const NODES_PER_EXPERT: usize = 24;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rows {
    All,
    Last,
    None,
}

/// Experts routed by `ids` (`k` per row): expert → its (row, rank) pairs, row-major.
fn used_experts(ids: &[i32], k: usize) -> BTreeMap<u32, Vec<(usize, usize)>> {
    let mut used: BTreeMap<u32, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, &e) in ids.iter().enumerate() {
        used.entry(e as u32).or_default().push((i / k, i % k));
    }
    used
}

/// The F16 attention mask of `n` queries at positions `pos0..` over keys `0..pos0 + n`:
/// 0 where a query may look, −∞ after it and, with a window of `w`, −∞ also on keys `w` or
/// more positions before it (llama.cpp's `LLAMA_SWA_TYPE_STANDARD`: `p_q − p_k >= w`).
fn causal_mask(pos0: usize, n: usize, window: Option<u32>) -> Vec<u8> {
    let n_kv = pos0 + n;
    let mut mask = vec![0u8; n_kv * n * 2];
    let ninf = 0xFC00u16.to_le_bytes(); // −∞ in f16
    for (i, row) in mask.chunks_exact_mut(n_kv * 2).enumerate() {
        let q = pos0 + i;
        for cell in row[(q + 1) * 2..].chunks_exact_mut(2) {
            cell.copy_from_slice(&ninf);
        }
        if let Some(w) = window {
            let first = (q + 1).saturating_sub(w as usize);
            for cell in row[..first * 2].chunks_exact_mut(2) {
                cell.copy_from_slice(&ninf);
            }
        }
    }
    mask
}

fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl Model {
    /// `weight · x`, plus `bias` where the file has one (llama.cpp's `build_lora_mm` then the
    /// bias add): the Q/K/V and output projections, the router.
    fn linear<'a>(&'a self, ctx: &'a Context, weight: usize, bias: Option<usize>, x: Tensor<'a>) -> Result<Tensor<'a>> {
        let y = self.mm(ctx, self.weights.get(weight), x)?;
        Ok(match bias {
            Some(b) => ctx.add(y, self.weights.get(b))?,
            None => y,
        })
    }
}

impl Model {
    /// `w · x` (`x` `[k, n]`). In a verify pass computed row by row ([`Model::exact`]), each
    /// column on its own where the CPU's kernel for `w`'s type depends on the width
    /// ([`width_dependent`]), the columns joined: each then has the bits of a single step.
    fn mm<'a>(&'a self, ctx: &'a Context, w: Tensor<'a>, x: Tensor<'a>) -> Result<Tensor<'a>> {
        let ne = x.ne();
        if !self.exact || ne[1] < 2 || ne[2] * ne[3] != 1 || !width_dependent(w.ty()) {
            return Ok(ctx.mul_mat(w, x)?);
        }
        let mut out: Option<Tensor<'a>> = None;
        for j in 0..ne[1] as usize {
            let col = ctx.view(x, &[ne[0], 1], &[x.nb()[1]], j * x.nb()[1])?;
            let y = ctx.mul_mat(w, col)?;
            out = Some(match out {
                None => y,
                Some(o) => ctx.concat(o, y, 1)?,
            });
        }
        Ok(out.expect("two columns or more"))
    }
}

/// Whether the CPU's `mul_mat` computes weights of type `ty` with another kernel (another
/// order of summation) for two columns or more than for one: llamafile's sgemm takes F32, F16,
/// BF16, Q8_0, Q4_0, Q5_0 and IQ4_NL from two columns on (`llamafile_sgemm` refuses `n < 2`:
/// "only enable sgemm for prompt processing"); every other type runs the one-column dot
/// product for each column at any width. (Q8_0 measured bit-equal here on AVX-512 all the
/// same; it stays on the list: the tiles and the dot product differ on other CPUs.)
fn width_dependent(ty: GgmlType) -> bool {
    matches!(
        ty,
        GgmlType::F32
            | GgmlType::F16
            | GgmlType::BF16
            | GgmlType::Q8_0
            | GgmlType::Q4_0
            | GgmlType::Q5_0
            | GgmlType::IQ4_NL
    )
}

/// A graph input of `ty` and shape `ne` whose bytes are written after allocation.
fn input<'a>(
    ctx: &'a Context,
    ty: GgmlType,
    ne: &[i64],
    inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
    bytes: Vec<u8>,
) -> Result<Tensor<'a>> {
    let t = ctx.new_tensor(ty, ne)?;
    t.set_input();
    inputs.push((t, bytes));
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_batches_given_and_chosen() {
        // Given: passes of the width, the last narrower.
        assert_eq!(micro_batches(2048, 512, false), (512, 4));
        assert_eq!(micro_batches(501, 512, false), (501, 1));
        assert_eq!(micro_batches(12, 8, false), (8, 2));
        // Chosen: the fewest passes of at most the widest, of equal width.
        assert_eq!(micro_batches(2048, 2048, true), (2048, 1));
        assert_eq!(micro_batches(2049, 2048, true), (1025, 2));
        assert_eq!(micro_batches(128, 2048, true), (128, 1));
        assert_eq!(micro_batches(1, 2048, true), (1, 1));
    }

    #[test]
    fn expected_union_grows_slower_than_its_rows() {
        // One row routes k experts; 128 rows of top-8 over 128 route all but ~0.03 % ...
        assert!((expected_union(128, 8, 1) - 8.0).abs() < 1e-9);
        let u128 = expected_union(128, 8, 128);
        assert!(u128 > 127.0 && u128 < 128.0, "{u128}");
        // ... so two passes of 64 read more than one of 128.
        assert!(2.0 * expected_union(128, 8, 64) > u128);
        assert!((expected_union(8, 8, 3) - 8.0).abs() < 1e-9);
    }

    #[test]
    fn readahead_takes_the_union_and_from_16_rows_two_votes() {
        assert_eq!(readahead_union(&[3, 1, 1, 5], 8, 2), vec![1, 3, 5]);
        let mut pred = vec![2; 15];
        pred.push(6);
        assert_eq!(readahead_union(&pred, 8, 16), vec![2]);
        assert_eq!(readahead_union(&[7, 7, 99], 8, 2), vec![7], "ids out of range are ignored");
    }

    #[test]
    fn predictions_on_at_most_64_evenly_spaced_rows() {
        assert_eq!(predict_rows(1), (1, 1));
        assert_eq!(predict_rows(64), (1, 64));
        assert_eq!(predict_rows(65), (2, 33));
        assert_eq!(predict_rows(128), (2, 64));
        assert_eq!(predict_rows(2048), (32, 64));
        assert_eq!(predict_rows(2047), (32, 64));
    }

    #[test]
    fn drop_cold_skips_cold_light_routings_and_renormalises() {
        // Two rows of top-3: row 0 (0.6, 0.3, 0.1), row 1 (0.5, 0.25, 0.25); experts 4 and 7 cold.
        let (mut ids, mut w) = (vec![1, 4, 7, 7, 2, 4], vec![0.6f32, 0.3, 0.1, 0.5, 0.25, 0.25]);
        let cold = |e: u32| e == 4 || e == 7;
        // F = 1: under 1/3 and cold. Row 0 drops 7 (0.1; 4 at 0.3 too), row 1 drops 4 (the
        // first expert, 7, is never dropped, cold or not).
        let (dropped, all) = drop_cold(&mut ids, &mut w, 3, 2, 1.0, true, &mut |e| cold(e));
        assert_eq!(dropped, vec![(4, 0.3), (7, 0.1), (4, 0.25)]);
        assert!((all - 2.0).abs() < 1e-6);
        assert_eq!(ids, vec![1, 1, 1, 7, 2, 7], "a dropped routing routes the row's first expert");
        // Renormalised to the row's weight: 0.6 alone carries 1.0; row 1 (0.5, 0.25) → 1.0.
        assert_eq!(w[1..3], [0.0, 0.0]);
        assert!((w[0] - 1.0).abs() < 1e-6 && (w[3] + w[4] - 1.0).abs() < 1e-6 && w[5] == 0.0, "{w:?}");
        // Without renormalisation (a softmax over every expert, olmoe's): kept weights stay.
        let (mut ids, mut w) = (vec![1, 4, 7], vec![0.5f32, 0.2, 0.1]);
        let (d, _) = drop_cold(&mut ids, &mut w, 3, 1, 0.5, false, &mut |e| cold(e));
        assert_eq!((d.len(), w), (1, vec![0.5, 0.2, 0.0]), "F = 0.5: under 1/6 only");
        // Nothing cold: nothing dropped.
        let (mut ids, mut w) = (vec![1, 4], vec![0.9f32, 0.1]);
        assert!(drop_cold(&mut ids, &mut w, 2, 1, 1.0, true, &mut |_| false).0.is_empty());
        assert_eq!(w, vec![0.9, 0.1]);
    }

    #[test]
    fn plan_fit() {
        let p = |union_max, capacity| PrefillPlan {
            tokens: 128,
            width: 128,
            passes: 1,
            auto: true,
            union_est: 0.0,
            capacity,
            union_max,
        };
        assert!(p(100, 200).fit().starts_with("fits the pool beside"));
        assert!(p(100, 150).fit().starts_with("fits the pool, without"));
        assert!(p(100, 70).fit().starts_with("is wider"));
    }
}
