//! The seam between llama.cpp's graph and the generic streamer: ggml's scheduler evaluation
//! callback (`cb_eval`) and the abort callback.
//!
//! With a callback installed, ggml's scheduler asks it about each node before computing, and
//! computes the nodes up to the first one the callback wants as one graph segment, then tells
//! the callback that node is computed (`ggml-backend.cpp`). The seam wants two kinds of node:
//! - `ffn_moe_topk-<il>`, the routed expert ids of layer `il` (`[k, n_tokens]` I32, rows at
//!   `nb[1]`): once computed, the layer is routed (hits pinned, misses read);
//! - each `MUL_MAT_ID` whose weights (`src[0]`) are one of the streamed expert tensors: before
//!   it computes, its projection's reads are waited for and overlaid, and its ids (`src[2]`)
//!   must be the routed layer's topk node, else the graph is not what the seam understood and
//!   the decode fails loudly.
//!
//! At the topk node, before routing, a route replay (`--route-replay`, decode steps only)
//! writes the trace's ids into the node, so that everything after it (the gathered router
//! weights, the experts) uses the replayed experts; and after routing, look-ahead predicts the
//! next MoE layer's experts ([`super::predict`]) and the streamer reads them while this layer
//! computes.
//!
//! Segments end right after the topk node and after each projection but a layer's last, so a
//! layer's first projection computes while the others are still being read (and a layer whose
//! reads were all waited for at once, `--overlap off`, costs one split). A failure never answers `false` to ggml (that only ends the segment
//! loop, and `llama_decode` would report success over garbage): it is kept here, and the abort
//! callback, which ggml checks after every node, stops the decode (`llama_decode` returns 2 and
//! removes the micro-batch from the KV cache).

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bmoe_ggml_sys as sys;

use super::experts::GenericExperts;
use super::index::GenericIndex;
use super::predict::Predictor;
use crate::cache::Phase;
use crate::decoder::{LayerRoute, RouteReplay};
use crate::error::{Error, Result};

/// The prefix of the routed ids' node name.
const TOPK: &[u8] = b"ffn_moe_topk-";

/// What the callbacks see: the streamer, and what they learned of the graph.
#[derive(Debug)]
pub struct Seam {
    /// None until the engine has sized the cache (llama.cpp needs its context, and so these
    /// callbacks, before the budget can be known): until then nothing is streamed.
    pub experts: Option<GenericExperts>,
    /// Expert tensor name → (MoE layer index, projection index, the address llama.cpp must
    /// have it at: its mapping's base + the file offset, its index in `checked`).
    tensors: HashMap<Vec<u8>, (usize, usize, usize, usize)>,
    /// Tensors whose address was checked.
    checked: Vec<bool>,
    /// Model layer number → MoE layer index.
    moe_of: HashMap<u32, usize>,
    /// Experts per MoE layer.
    n_expert: Vec<u32>,
    /// The topk node of the routed layer.
    topk: *const sys::ggml_tensor,
    /// Per MoE layer: its projections in the order the graph computed them.
    order: Vec<Vec<usize>>,
    /// The first failure of the decode in progress.
    error: Option<Error>,
    /// Set with `error`, read by the abort callback.
    pub(super) failed: Box<AtomicBool>,
    /// Seconds inside the callbacks that wait, route or map (the rest of a decode computes).
    pub(super) seam_s: f64,
    ids: Vec<u32>,
    /// Look-ahead's predictor (None: look-ahead off).
    pub(super) predictor: Option<Predictor>,
    /// The routing trace replayed at decode steps, and the decode steps done.
    pub(super) replay: Option<RouteReplay>,
    pub(super) decode_steps: u32,
    /// The routing recorded (`--route-trace`), when recording; passes per phase (prefill,
    /// decode) since the recording started or the context was reset.
    pub(super) routes: Option<Vec<LayerRoute>>,
    pub(super) passes: [u32; 2],
}

// SAFETY: the raw topk pointer is only compared, never dereferenced outside the callback
// that got it from ggml; the seam moves with the engine that owns the context.
unsafe impl Send for Seam {}

/// `(moe layer, projection, address)` of each expert tensor, from the index and the base
/// address of each shard's mapping.
fn tensor_table(index: &GenericIndex, bases: &[usize]) -> HashMap<Vec<u8>, (usize, usize, usize, usize)> {
    let mut m = HashMap::new();
    for (li, l) in index.layers.iter().enumerate() {
        for (p, t) in l.tensors.iter().enumerate() {
            let i = m.len();
            m.insert(t.name.as_bytes().to_vec(), (li, p, bases[t.shard] + t.offset as usize, i));
        }
    }
    m
}

impl Seam {
    /// A seam for `index`'s experts, llama.cpp's mapping of shard `s` at `bases[s]`.
    pub fn new(index: &GenericIndex, bases: &[usize]) -> Self {
        let tensors = tensor_table(index, bases);
        Self {
            experts: None,
            checked: vec![false; tensors.len()],
            tensors,
            moe_of: index.layers.iter().enumerate().map(|(i, l)| (l.layer, i)).collect(),
            n_expert: index.layers.iter().map(|l| l.n_expert).collect(),
            topk: std::ptr::null(),
            order: vec![Vec::new(); index.layers.len()],
            error: None,
            failed: Box::new(AtomicBool::new(false)),
            seam_s: 0.0,
            ids: Vec::new(),
            predictor: None,
            replay: None,
            decode_steps: 0,
            routes: None,
            passes: [0; 2],
        }
    }

    /// The failure of the last decode, if any (cleared).
    pub fn take_error(&mut self) -> Option<Error> {
        self.failed.store(false, Ordering::SeqCst);
        self.error.take()
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.failed.store(true, Ordering::SeqCst);
        if let Some(x) = self.experts.as_mut() {
            x.release();
        }
    }

    /// A decode is over: the last routed layer's experts may be evicted again.
    pub fn end_decode(&mut self) {
        self.topk = std::ptr::null();
        if self.experts.as_ref().is_some_and(|x| x.phase() == Phase::Decode) {
            self.decode_steps = self.decode_steps.wrapping_add(1);
        }
        if let Some(x) = self.experts.as_ref() {
            let i = usize::from(x.phase() == Phase::Decode);
            self.passes[i] = self.passes[i].wrapping_add(1);
        }
        if let Some(x) = self.experts.as_mut() {
            x.release();
        }
    }

    /// ggml asks whether it should stop after node `t`'s segment (`ask`), or tells that it is
    /// computed. See the module docs.
    ///
    /// # Safety
    /// `t` must be a live tensor of the graph being computed, its data computed when `!ask`.
    unsafe fn eval(&mut self, t: &sys::ggml_tensor, ask: bool) -> bool {
        // SAFETY: ggml names are NUL-terminated within the 64-byte array.
        let name = unsafe { CStr::from_ptr(t.name.as_ptr()) }.to_bytes();
        let topk = name.starts_with(TOPK);
        let mmid = t.op == sys::GGML_OP_MUL_MAT_ID && !t.src[0].is_null();
        if !(topk || mmid) || self.experts.is_none() {
            return false;
        }
        if self.error.is_some() {
            // The abort callback stops the decode after the next node; nothing more to do.
            return !ask;
        }
        let t0 = Instant::now();
        let want = if topk {
            if !ask {
                // SAFETY: the caller's contract: t is computed.
                if let Err(e) = unsafe { self.route(t, name) } {
                    self.fail(e);
                }
            }
            true
        } else if ask {
            // SAFETY: src[0] of a live node is a live tensor.
            let w = unsafe { &*t.src[0] };
            // SAFETY: as above for its name.
            let wname = unsafe { CStr::from_ptr(w.name.as_ptr()) }.to_bytes();
            match self.tensors.get(wname).copied() {
                None => false,
                // Split the graph after this projection only if another one of the layer still
                // reads, so that it reads while this one computes.
                Some((layer, p, at, i)) => match self.before_mmid(t, w, wname, (layer, p, at, i)) {
                    Ok(()) => self.experts.as_ref().is_some_and(|x| x.waiting()),
                    Err(e) => {
                        self.fail(e);
                        true
                    }
                },
            }
        } else {
            true
        };
        self.seam_s += t0.elapsed().as_secs_f64();
        want
    }

    /// The topk node of layer `il` is computed: route the layer to the union of its ids.
    ///
    /// # Safety
    /// `t` is computed (its data holds the ids).
    unsafe fn route(&mut self, t: &sys::ggml_tensor, name: &[u8]) -> Result<()> {
        let il: Option<u32> = std::str::from_utf8(&name[TOPK.len()..]).ok().and_then(|s| s.parse().ok());
        let Some(&layer) = il.and_then(|il| self.moe_of.get(&il)) else { return Ok(()) };
        let bad = |why: String| Error::Provider(format!("llama.cpp's {}: {why}", String::from_utf8_lossy(name)));
        if t.type_ != sys::GGML_TYPE_I32 || t.data.is_null() || t.ne[2] != 1 || t.ne[3] != 1 {
            return Err(bad(format!("type {} shape {:?}: not the [k, n_tokens] I32 ids expected", t.type_, t.ne)));
        }
        let (k, n) = (t.ne[0] as usize, t.ne[1] as usize);
        let n_expert = self.n_expert[layer];
        let decode = self.experts.as_ref().is_some_and(|x| x.phase() == Phase::Decode);
        if let (Some(r), true, 1) = (&self.replay, decode, n) {
            let route = r.route(self.decode_steps, layer);
            if route.len() != k {
                return Err(bad(format!("the replayed trace gives {} experts, the graph routes {k}", route.len())));
            }
            for (j, &(e, _)) in route.iter().enumerate() {
                // SAFETY: j < ne0 of the computed I32 topk node, nothing has read it yet (the
                // segment ended at it), addressed by its stride.
                unsafe { t.data.cast::<u8>().add(j * t.nb[0]).cast::<i32>().write_unaligned(e as i32) };
            }
        }
        self.ids.clear();
        for i in 0..n {
            for j in 0..k {
                // SAFETY: (j, i) < (ne0, ne1) of a computed I32 tensor, addressed by its strides.
                let id = unsafe { t.data.cast::<u8>().add(i * t.nb[1] + j * t.nb[0]).cast::<i32>().read_unaligned() };
                let id = u32::try_from(id)
                    .ok()
                    .filter(|&e| e < n_expert)
                    .ok_or_else(|| bad(format!("token {i} routes to expert {id}, and the layer has {n_expert}")))?;
                if !self.ids.contains(&id) {
                    self.ids.push(id);
                }
            }
        }
        if self.routes.is_some() {
            // SAFETY: t is computed and its sources live (the caller's contract).
            unsafe { self.record(t, layer, k, n, decode) };
        }
        self.topk = t;
        let ids = std::mem::take(&mut self.ids);
        let r = self.experts.as_mut().expect("checked by eval").route(layer, &ids, &self.order[layer]);
        self.ids = ids;
        r?;
        if let (Some(p), Some(x)) = (self.predictor.as_mut(), self.experts.as_mut()) {
            if layer + 1 < self.n_expert.len() && x.lookahead().0 {
                // A replay's research knob: the prediction drawn from the trace's next layer at a
                // chosen accuracy (decode steps).
                let drawn = self
                    .replay
                    .as_ref()
                    .filter(|_| decode && n == 1)
                    .and_then(|r| r.predict(self.decode_steps, layer + 1));
                let next = match drawn {
                    Some(v) => v,
                    // SAFETY: t is computed and its sources live (the caller's contract).
                    None => unsafe { p.predict(t, layer, layer + 1) },
                };
                if !next.is_empty() {
                    x.prefetch(layer + 1, &next);
                }
            }
        }
        Ok(())
    }

    /// Record layer `layer`'s routing of this pass (`--route-trace`): per expert of the union
    /// over the micro-batch, its best rank and its largest weight, the weight being the router's
    /// probability of the expert (`ffn_moe_probs`, before llama.cpp renormalises or scales the
    /// top-k; NaN where the graph names no such node).
    ///
    /// # Safety
    /// `t` is the computed topk node of the layer, its sources live.
    unsafe fn record(&mut self, t: &sys::ggml_tensor, layer: usize, k: usize, n: usize, decode: bool) {
        let probs = find_source(t, b"ffn_moe_probs-")
            .filter(|p| p.type_ == sys::GGML_TYPE_F32 && !p.data.is_null() && p.ne[1] as usize >= n);
        let mut experts: Vec<(u32, u32, f32)> = Vec::new();
        for i in 0..n {
            for j in 0..k {
                // SAFETY: (j, i) < (ne0, ne1) of the computed I32 topk node, by its strides.
                let id = unsafe { t.data.cast::<u8>().add(i * t.nb[1] + j * t.nb[0]).cast::<i32>().read_unaligned() };
                let Ok(e) = u32::try_from(id) else { continue };
                let w = match probs {
                    // SAFETY: (e, i) < (ne0, ne1) of the computed F32 probs node (e was checked
                    // against the layer's experts by the caller's routing), by its strides.
                    Some(p) if (e as i64) < p.ne[0] => unsafe {
                        p.data.cast::<u8>().add(i * p.nb[1] + e as usize * p.nb[0]).cast::<f32>().read_unaligned()
                    },
                    _ => f32::NAN,
                };
                match experts.iter_mut().find(|x| x.0 == e) {
                    Some(x) => {
                        x.1 = x.1.min(j as u32);
                        x.2 = x.2.max(w);
                    }
                    None => experts.push((e, j as u32, w)),
                }
            }
        }
        let step = self.passes[usize::from(decode)];
        if let Some(log) = self.routes.as_mut() {
            log.push(LayerRoute { prefill: !decode, step, layer: layer as u32, experts });
        }
    }

    /// Before an expert `mul_mat_id` computes: check it is what the seam routed, wait for its
    /// projection's bytes, overlay them.
    fn before_mmid(
        &mut self,
        t: &sys::ggml_tensor,
        w: &sys::ggml_tensor,
        wname: &[u8],
        (layer, p, at, i): (usize, usize, usize, usize),
    ) -> Result<()> {
        let name = || String::from_utf8_lossy(wname).into_owned();
        if !self.checked[i] {
            if w.data as usize != at {
                return Err(Error::Provider(format!(
                    "llama.cpp holds {} at {:#x}, not on its mapping of the file ({at:#x}): the model is not on mmap without repacking",
                    name(),
                    w.data as usize
                )));
            }
            self.checked[i] = true;
        }
        let experts = self.experts.as_mut().expect("checked by eval");
        if experts.routed_layer() != Some(layer) || !std::ptr::eq(t.src[2].cast_const(), self.topk) {
            return Err(Error::Provider(format!(
                "the graph computes {} with ids that are not layer {layer}'s routed experts (ffn_moe_topk): this architecture's MoE is not the one the generic path streams",
                name()
            )));
        }
        if !self.order[layer].contains(&p) {
            self.order[layer].push(p);
        }
        experts.wait(p)
    }
}

/// The first node whose name starts with `prefix` among `t`'s sources, searched breadth-first
/// up to a dozen steps back (`build_moe_ffn`: topk ← argsort ← [bias] ← probs).
fn find_source<'a>(t: &'a sys::ggml_tensor, prefix: &[u8]) -> Option<&'a sys::ggml_tensor> {
    let mut frontier: Vec<&sys::ggml_tensor> = vec![t];
    for _ in 0..12 {
        let mut next = Vec::new();
        for node in frontier {
            for &src in node.src.iter().filter(|s| !s.is_null()) {
                // SAFETY: the sources of a live node are live tensors of the same graph.
                let src = unsafe { &*src };
                // SAFETY: ggml names are NUL-terminated within the 64-byte array.
                if unsafe { CStr::from_ptr(src.name.as_ptr()) }.to_bytes().starts_with(prefix) {
                    return Some(src);
                }
                if next.len() < 64 {
                    next.push(src);
                }
            }
        }
        if next.is_empty() {
            return None;
        }
        frontier = next;
    }
    None
}

/// ggml's evaluation callback over a [`Seam`].
///
/// # Safety
/// `ud` is the `*mut Seam` a [`crate::llama::Hooks`] was built with, alive and used by no one
/// else during the decode; `t` a live node of the graph being computed.
pub unsafe extern "C" fn eval_cb(t: *mut sys::ggml_tensor, ask: bool, ud: *mut std::ffi::c_void) -> bool {
    if t.is_null() || ud.is_null() {
        return false;
    }
    // SAFETY: the contract above: the engine owns the seam and runs the decode that calls this
    // on its own thread, so nothing else touches the seam meanwhile.
    let seam = unsafe { &mut *ud.cast::<Seam>() };
    // SAFETY: t is a live node (ggml's contract), computed when !ask.
    unsafe { seam.eval(&*t, ask) }
}

/// ggml's abort callback: true once the seam failed.
///
/// # Safety
/// `ud` is the `*const AtomicBool` a [`crate::llama::Hooks`] was built with (the seam's
/// `failed`), alive for the session.
pub unsafe extern "C" fn abort_cb(ud: *mut std::ffi::c_void) -> bool {
    // SAFETY: the contract above.
    !ud.is_null() && unsafe { &*ud.cast_const().cast::<AtomicBool>() }.load(Ordering::Relaxed)
}
