//! Look-ahead's predictor under llama.cpp's graph: at a layer's routed ids, the next MoE
//! layer's router applied on the host to this layer's router input, a guess at the next
//! layer's experts that the streamer reads while this layer computes.
//!
//! The native decoder puts that matvec in its own graph; llama.cpp's graph is not ours to
//! change, so the predictor finds the router's input in it (the `MUL_MAT` whose weights are
//! `blk.L.ffn_gate_inp.weight`, reached from the topk node through its sources; it stays
//! allocated until the layer's experts consume it) and multiplies it by the next layer's router
//! as llama.cpp maps it, for one row in decode and at most 64 evenly spaced rows of a prefill
//! micro-batch (the native rule). Ranking needs no softmax; where the architecture biases the
//! selection (`exp_probs_b`, DeepSeek V3's scheme) the bias is added to the sigmoid (or softmax)
//! of the logits as `build_moe_ffn` does. Expert groups are not applied: a wrong guess costs
//! bandwidth, never correctness (the real routing is what the graph uses).
//!
//! A router the host cannot apply (a type other than F32: converters and llama-quantize keep
//! routers F32) leaves its layer unpredicted.

use std::ffi::CStr;

use bmoe_ggml_sys as sys;

use super::index::GenericIndex;
use crate::ggml::GgmlType;

/// How far the search for the router's input walks back from the topk node, and how many
/// nodes it may look at (`build_moe_ffn`: topk ← argsort ← [group masking] ← [bias] ← probs ←
/// logits, under a dozen nodes).
const MAX_DEPTH: usize = 16;
const MAX_NODES: usize = 256;

/// One MoE layer's router as llama.cpp maps it.
#[derive(Debug)]
struct Router {
    /// `[n_embd, n_expert]` F32, rows contiguous.
    w: *const f32,
    n_embd: usize,
    n_expert: usize,
    /// `exp_probs_b`, `[n_expert]` F32.
    bias: Option<*const f32>,
}

/// The predictor. See the module docs.
#[derive(Debug)]
pub struct Predictor {
    /// Per MoE layer: its router (None: not applicable on the host).
    routers: Vec<Option<Router>>,
    /// Per MoE layer: the router weight's name.
    names: Vec<Vec<u8>>,
    /// The selection applies a sigmoid before the bias (`expert_gating_func` 2), else a softmax.
    sigmoid: bool,
    k: usize,
    logits: Vec<f32>,
    picks: Vec<i32>,
    /// Layers with no usable router, for the report.
    pub unpredicted: Vec<u32>,
}

// SAFETY: the raw pointers point into llama.cpp's read-only mapping of the model file, which
// lives as long as the engine that owns the predictor; they are only read.
unsafe impl Send for Predictor {}

impl Predictor {
    /// A predictor over `index`'s MoE layers, llama.cpp's mapping of shard `s` at `bases[s]`
    /// (the address of file offset 0), top-`k`.
    pub fn new(index: &GenericIndex, bases: &[usize], k: usize) -> Self {
        let f = &index.file;
        let sigmoid = f.metadata().get_u64(&format!("{}.expert_gating_func", index.arch)) == Some(2);
        let mut unpredicted = Vec::new();
        let mut names = Vec::new();
        let routers = index
            .layers
            .iter()
            .map(|l| {
                let name = format!("blk.{}.ffn_gate_inp.weight", l.layer);
                names.push(name.as_bytes().to_vec());
                let r = f
                    .tensor(&name)
                    .filter(|t| t.ty == GgmlType::F32 && t.dims.len() == 2 && t.dims[1] == u64::from(l.n_expert));
                let Some(t) = r else {
                    unpredicted.push(l.layer);
                    return None;
                };
                let bias = f
                    .tensor(&format!("blk.{}.exp_probs_b.bias", l.layer))
                    .filter(|b| b.ty == GgmlType::F32 && b.dims.iter().product::<u64>() == u64::from(l.n_expert))
                    .map(|b| (bases[b.shard] + b.offset as usize) as *const f32);
                Some(Router {
                    w: (bases[t.shard] + t.offset as usize) as *const f32,
                    n_embd: t.dims[0] as usize,
                    n_expert: l.n_expert as usize,
                    bias,
                })
            })
            .collect();
        Self { routers, names, sigmoid, k, logits: Vec::new(), picks: Vec::new(), unpredicted }
    }

    /// The experts of MoE layer `next` predicted from MoE layer `layer`'s router input, found
    /// from its computed topk node `topk` (`[k, n_tokens]`): one row's top-k in decode, the
    /// read-ahead union of a micro-batch's rows otherwise. Empty when nothing can be predicted.
    ///
    /// # Safety
    /// `topk` must be a computed node of the graph being computed, whose sources are live.
    pub unsafe fn predict(&mut self, topk: &sys::ggml_tensor, layer: usize, next: usize) -> Vec<u32> {
        let Some(Some(r)) = self.routers.get(next) else { return Vec::new() };
        // SAFETY: the caller's contract.
        let Some(x) = (unsafe { find_input(topk, &self.names[layer]) }) else { return Vec::new() };
        let n_tokens = topk.ne[1].max(0) as usize;
        if x.type_ != sys::GGML_TYPE_F32
            || x.data.is_null()
            || x.ne[0] as usize != r.n_embd
            || x.ne[1] as usize != n_tokens
            || x.nb[0] != 4
        {
            return Vec::new();
        }
        let (stride, rows) = crate::decoder::predict_rows(n_tokens);
        let k = self.k.min(r.n_expert);
        self.picks.clear();
        self.logits.resize(r.n_expert, 0.0);
        for i in 0..rows {
            // SAFETY: row i × stride < n_tokens of a computed F32 [n_embd, n_tokens] tensor,
            // its elements contiguous (nb[0] = 4), addressed by its row stride.
            let row = unsafe {
                std::slice::from_raw_parts(x.data.cast::<u8>().add(i * stride * x.nb[1]).cast::<f32>(), r.n_embd)
            };
            for e in 0..r.n_expert {
                // SAFETY: row e of the [n_embd, n_expert] F32 router in llama.cpp's mapping.
                let w = unsafe { std::slice::from_raw_parts(r.w.add(e * r.n_embd), r.n_embd) };
                self.logits[e] = dot(row, w);
            }
            if let Some(b) = r.bias {
                // SAFETY: n_expert F32 values in llama.cpp's mapping.
                let b = unsafe { std::slice::from_raw_parts(b, r.n_expert) };
                select_scores(&mut self.logits, b, self.sigmoid);
            }
            let mut order: Vec<u32> = (0..r.n_expert as u32).collect();
            order.select_nth_unstable_by(k - 1, |&a, &b| self.logits[b as usize].total_cmp(&self.logits[a as usize]));
            self.picks.extend(order[..k].iter().map(|&e| e as i32));
        }
        if n_tokens == 1 {
            return self.picks.iter().map(|&e| e as u32).collect();
        }
        crate::decoder::readahead_union(&self.picks, r.n_expert, n_tokens)
    }
}

/// `Σ a_i b_i`, in eight lanes so the compiler vectorises it.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

/// Logits to the scores experts are selected by when the selection is biased: the gating
/// function (sigmoid, or softmax) plus the bias, as `build_moe_ffn` adds `exp_probs_b`.
fn select_scores(logits: &mut [f32], bias: &[f32], sigmoid: bool) {
    if sigmoid {
        for (l, b) in logits.iter_mut().zip(bias) {
            *l = 1.0 / (1.0 + (-*l).exp()) + b;
        }
    } else {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = logits.iter().map(|l| (l - max).exp()).sum();
        for (l, b) in logits.iter_mut().zip(bias) {
            *l = (*l - max).exp() / sum + b;
        }
    }
}

/// The input of the `MUL_MAT` by the weight named `router`, among the sources of `t` (walked
/// back at most [`MAX_DEPTH`] levels, [`MAX_NODES`] nodes).
///
/// # Safety
/// `t` must be a live node whose sources are live.
unsafe fn find_input<'a>(t: &'a sys::ggml_tensor, router: &[u8]) -> Option<&'a sys::ggml_tensor> {
    let mut stack: Vec<(*const sys::ggml_tensor, usize)> = vec![(t, 0)];
    let mut seen = 0;
    while let Some((n, depth)) = stack.pop() {
        seen += 1;
        if seen > MAX_NODES {
            return None;
        }
        // SAFETY: n is t or a source of a live node: live (the caller's contract).
        let node = unsafe { &*n };
        if node.op == sys::GGML_OP_MUL_MAT && !node.src[0].is_null() && !node.src[1].is_null() {
            // SAFETY: a live node's source, its name NUL-terminated within its array.
            let w = unsafe { CStr::from_ptr((*node.src[0]).name.as_ptr()) }.to_bytes();
            if w == router {
                // SAFETY: as above.
                return Some(unsafe { &*node.src[1] });
            }
        }
        if depth < MAX_DEPTH {
            stack.extend(node.src.iter().filter(|s| !s.is_null()).map(|&s| (s.cast_const(), depth + 1)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f32> = (0..21).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..21).map(|i| 1.0 - i as f32 * 0.25).collect();
        let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - want).abs() < 1e-3, "{} vs {want}", dot(&a, &b));
    }

    #[test]
    fn a_bias_reorders_the_selection_after_the_gating_function() {
        // Logits 0 and 10 under a sigmoid are ~0.5 and ~1.0: a bias of 0.6 on the first wins.
        let mut l = vec![0.0, 10.0];
        select_scores(&mut l, &[0.6, 0.0], true);
        assert!(l[0] > l[1], "{l:?}");
        let mut l = vec![0.0, 10.0];
        select_scores(&mut l, &[0.6, 0.0], false);
        assert!(l[1] > l[0], "softmax: 0.0000454 + 0.6 < 0.99995: {l:?}");
    }
}
