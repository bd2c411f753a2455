//! The feed-forward half of a layer, shared by every architecture: the FFN norm, the router
//! (with its bias where the recipe has one; softmax over all experts then top-k, or top-k of
//! the logits then a softmax over those k; the weights normalised and scaled as the params
//! say), the optional resident shared expert with its gate, and the routed experts (SwiGLU or
//! gpt-oss's clamped SwiGLU, with per-expert biases where the recipe has them), computed on
//! weights the [`ExpertProvider`](super::ExpertProvider) hands out: `mul_mat_id` over its
//! stacks as llama.cpp's `build_moe_ffn` does over the file's tensor, or one `mul_mat` per
//! expert, then summed in rank order. The biases are dense (resident): an expert's bias is a
//! column of the layer's bias tensor, the same bytes streamed or not.

use std::collections::BTreeMap;

use super::{i32_bytes, input, Model};
use crate::arch::{Act, SharedGate, OAI_ALPHA, OAI_LIMIT};
use crate::error::Result;
use crate::ggml::{Context, GgmlType, Graph, Tensor};
use crate::model::Gating;
use crate::provider::{ExpertPtrs, Projections, Stack};

impl Model {
    /// Layer `l`'s FFN norm, router and shared expert on the last `keep` of the `n` rows of
    /// `ffn_inp`; writes the FFN input, the residual, the expert ids and weights (and the
    /// shared expert's gated output) into the state tensors. With `predict`, also that later
    /// layer's router on this FFN input (look-ahead: the next layer; route-ahead: the layer it
    /// routes). With `route` (route-ahead: `k` ids per row, chosen layers earlier), those are
    /// the experts, weighted by this router's probabilities at them; the router's own top-k
    /// goes to the state's `real` for the mismatch count.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ffn_head<'a>(
        &'a self,
        ctx: &'a Context,
        g: &mut Graph<'a>,
        l: usize,
        ffn_inp: Tensor<'a>,
        n: usize,
        keep: usize,
        predict: Option<usize>,
        route: Option<&[i32]>,
        inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
    ) -> Result<()> {
        let hp = &self.hp;
        let lw = &self.layers[l];
        let w = |i| self.weights.get(i);
        let faults = self.opts.faults;
        let mut ffn_inp = ffn_inp;
        if keep < n {
            ffn_inp =
                ctx.view(ffn_inp, &[hp.n_embd as i64, keep as i64], &[ffn_inp.nb()[1]], (n - keep) * ffn_inp.nb()[1])?;
        }
        let h = ctx.mul(ctx.rms_norm(ffn_inp, hp.rms_eps as f32)?, w(lw.ffn_norm))?;

        // Router: (softmax over experts, top-k) or (top-k of the logits, softmax over them),
        // weights normalised as the model says.
        let kk = hp.n_expert_used as i64;
        let nk = keep as i64;
        let logits = self.linear(ctx, lw.router, lw.router_b, h)?;
        let top_k_softmax = hp.gating == Gating::SoftmaxWeight && !faults.softmax_all;
        let probs = if top_k_softmax { logits } else { ctx.soft_max(logits)? };
        let top = ctx.argsort_top_k(probs, kk as usize)?;
        let chosen = match route {
            Some(r) => input(ctx, GgmlType::I32, &[kk, nk], inputs, i32_bytes(r))?,
            None => top,
        };
        let probs3 = ctx.reshape(probs, &[1, i64::from(hp.n_expert), nk])?;
        let mut wts = ctx.reshape(ctx.get_rows(probs3, chosen)?, &[kk, nk])?;
        if top_k_softmax {
            wts = ctx.soft_max(wts)?;
        }
        if hp.expert_weights_norm != faults.flip_weight_norm {
            let sum = ctx.clamp(ctx.sum_rows(wts)?, 6.103_515_6e-5, f32::INFINITY)?;
            wts = ctx.div(wts, sum)?;
        }
        if hp.expert_weights_scale != 0.0 && hp.expert_weights_scale != 1.0 {
            wts = ctx.scale(wts, hp.expert_weights_scale as f32)?;
        }

        let st = &self.state;
        let dst = |i: usize, ne0: i64| -> Result<Tensor<'a>> {
            let t = st.get(i);
            Ok(ctx.view(t, &[ne0, nk], &[t.nb()[1]], 0)?)
        };
        g.build_forward_expand(ctx.cpy(h, dst(self.st.h, hp.n_embd as i64)?)?)?;
        g.build_forward_expand(ctx.cpy(ffn_inp, dst(self.st.res, hp.n_embd as i64)?)?)?;
        g.build_forward_expand(ctx.cpy(chosen, dst(self.st.ids, kk)?)?)?;
        if route.is_some() {
            g.build_forward_expand(ctx.cpy(top, dst(self.st.real, kk)?)?)?;
        }
        g.build_forward_expand(ctx.cpy(wts, dst(self.st.wts, kk)?)?)?;
        if let (Some(sh), Some(out)) = (&lw.shexp, self.st.shexp) {
            // The shared expert: dense, resident, on every row (llama.cpp's build_ffn, PAR gate).
            let up = self.mm(ctx, w(sh.up), h)?;
            let gate = self.mm(ctx, w(sh.gate), h)?;
            let mut y = self.mm(ctx, w(sh.down), ctx.swiglu_split(gate, up)?)?;
            match (self.recipe.shared_expert, sh.gate_inp) {
                (Some(SharedGate::Sigmoid), Some(gi)) if !faults.no_shared_gate => {
                    // sigmoid(g) as llama.cpp writes it: silu(g) / g.
                    let g_in = self.mm(ctx, w(gi), h)?;
                    y = ctx.mul(y, ctx.div(ctx.silu(g_in)?, g_in)?)?;
                }
                _ => {}
            }
            g.build_forward_expand(ctx.cpy(y, dst(out, hp.n_embd as i64)?)?)?;
        }
        if let Some(target) = predict {
            // A later layer's router applied to this layer's FFN input: a guess at its experts.
            // In a wide micro-batch on evenly spaced rows only (it costs as much as the router).
            let next = &self.layers[target];
            let (stride, rows) = super::predict_rows(keep);
            let hr =
                if stride == 1 { h } else { ctx.view(h, &[hp.n_embd as i64, rows as i64], &[h.nb()[1] * stride], 0)? };
            let guess = ctx.argsort_top_k(self.linear(ctx, next.router, next.router_b, hr)?, kk as usize)?;
            let pred = self.state.get(self.st.pred);
            g.build_forward_expand(ctx.cpy(guess, ctx.view(pred, &[kk, rows as i64], &[pred.nb()[1]], 0)?)?)?;
        }
        Ok(())
    }

    /// The routed experts' sum of layer `l` for `n` rows (from [`Self::moe`] with `last`), plus
    /// the shared expert's output where the layer has one: llama.cpp's `ffn_out`, before the
    /// residual.
    pub(super) fn ffn_out<'a>(&'a self, ctx: &'a Context, moe: Tensor<'a>, n: usize) -> Result<Tensor<'a>> {
        match self.st.shexp {
            Some(i) => {
                let t = self.state.get(i);
                Ok(ctx.add(moe, ctx.view(t, &[self.hp.n_embd as i64, n as i64], &[t.nb()[1]], 0)?)?)
            }
            None => Ok(moe),
        }
    }

    /// Layer `l`'s experts `group` (a part of `used`, whose weights are `ptrs`) on the FFN
    /// input of `n` rows: each on the rows routed to it, scaled by its weight, written to its
    /// place in the expert-major output buffer. With `last`, also the outputs other hosts
    /// computed (`remote`, see [`Self::remote_outputs`]) and the sum per row in rank order of
    /// every routed expert's output (the earlier groups wrote theirs in earlier graphs).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn moe<'a>(
        &'a self,
        ctx: &'a Context,
        g: &mut Graph<'a>,
        l: usize,
        n: usize,
        used: &BTreeMap<u32, Vec<(usize, usize)>>,
        group: &[u32],
        ptrs: &[ExpertPtrs],
        stacks: Option<Projections<Stack>>,
        last: bool,
        inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
        remote: &BTreeMap<u32, Vec<f32>>,
    ) -> Result<Option<Tensor<'a>>> {
        let k = self.hp.n_expert_used as usize;
        let e = self.hp.n_embd as i64;
        let hs = self.state.get(self.st.h);
        let h = ctx.view(hs, &[e, n as i64], &[hs.nb()[1]], 0)?;
        let ws = self.state.get(self.st.wts);
        // Every acquired expert on the provider's stacks: mul_mat_id over them.
        let stacked = stacks.filter(|_| !group.is_empty()).and_then(|st| {
            let idx: Option<Vec<usize>> = ptrs
                .iter()
                .map(|p| {
                    let i = st.gate.index_of(p.gate)?;
                    (st.up.index_of(p.up) == Some(i) && st.down.index_of(p.down) == Some(i)).then_some(i)
                })
                .collect();
            idx.map(|i| (st, i))
        });
        if let Some((st, idx)) = &stacked {
            if last && group.len() == used.len() {
                return self.moe_stacked(ctx, l, n, h, ws, used, group, st, idx, inputs).map(Some);
            }
        }
        let wflat = ctx.reshape(ctx.view(ws, &[(k * n) as i64], &[], 0)?, &[1, (k * n) as i64])?;
        let y_all = self.state.get(self.st.y);
        let mut perm = vec![0i32; k * n];
        let mut off = 0usize;
        if let Some((st, idx)) = &stacked {
            // A part of the routed experts (of a wider union, or those whose bytes are in while
            // others are read): the part's routed rows, gathered in the expert-major order of the
            // output buffer, through mul_mat_id with one expert per row; then copied to the
            // buffer run by run (the part's experts need not be neighbours there).
            let (mut rows, mut slots, mut sidx, mut eids) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            // (first row in the part, first row in the buffer, rows)
            let mut runs: Vec<(usize, usize, usize)> = Vec::new();
            for (&expert, routes) in used {
                if let Some(i) = group.iter().position(|&x| x == expert) {
                    match runs.last_mut() {
                        Some(r) if r.1 + r.2 == off => r.2 += routes.len(),
                        _ => runs.push((rows.len(), off, routes.len())),
                    }
                    for &(t, j) in routes {
                        rows.push(t as i32);
                        slots.push((t * k + j) as i32);
                        sidx.push(idx[i] as i32);
                        eids.push(expert as i32);
                    }
                }
                for (q, &(t, j)) in routes.iter().enumerate() {
                    perm[t * k + j] = (off + q) as i32;
                }
                off += routes.len();
            }
            let m = rows.len() as i64;
            let x = ctx.get_rows(h, input(ctx, GgmlType::I32, &[m], inputs, i32_bytes(&rows))?)?;
            let x = ctx.reshape(x, &[e, 1, m])?;
            let ids = input(ctx, GgmlType::I32, &[1, m], inputs, i32_bytes(&sidx))?;
            let eids = self.has_expert_bias(l).then(|| input(ctx, GgmlType::I32, &[1, m], inputs, i32_bytes(&eids)));
            let y = self.experts_id(ctx, l, x, ids, eids.transpose()?, st)?;
            let y = ctx.reshape(y, &[e, m])?;
            let w = ctx.get_rows(wflat, input(ctx, GgmlType::I32, &[m], inputs, i32_bytes(&slots))?)?;
            let y = ctx.mul(y, w)?;
            for &(from, to, len) in &runs {
                let src = ctx.view(y, &[e, len as i64], &[y.nb()[1]], from * y.nb()[1])?;
                let dst = ctx.view(y_all, &[e, len as i64], &[y_all.nb()[1]], to * y_all.nb()[1])?;
                g.build_forward_expand(ctx.cpy(src, dst)?)?;
            }
            if !last {
                return Ok(None);
            }
            self.remote_outputs(ctx, g, used, remote, wflat, y_all, inputs)?;
            return self.moe_sum(ctx, n, y_all, &perm, inputs).map(Some);
        }
        for (&expert, routes) in used {
            let m = routes.len();
            if let Some(i) = group.iter().position(|&x| x == expert) {
                let rows: Vec<i32> = routes.iter().map(|&(t, _)| t as i32).collect();
                let slots: Vec<i32> = routes.iter().map(|&(t, j)| (t * k + j) as i32).collect();
                let sl = input(ctx, GgmlType::I32, &[m as i64], inputs, i32_bytes(&slots))?;
                // (Inputs must be used by the graph, or they get no memory.) One row routed once
                // is the whole input; `--drop-cold-experts` can route a row to one expert twice
                // (a dropped routing names the row's first expert, weight 0): gathered then.
                let xe = if n == 1 && m == 1 {
                    h
                } else {
                    ctx.get_rows(h, input(ctx, GgmlType::I32, &[m as i64], inputs, i32_bytes(&rows))?)?
                };
                // Each projection on its input, plus the expert's bias where the layer has them.
                let proj = |which: usize, x: Tensor<'a>| -> Result<Tensor<'a>> {
                    let y = self.mm(ctx, self.expert_proj(ctx, l, which, ptrs[i].get(which))?, x)?;
                    self.expert_bias(ctx, l, which, expert, y)
                };
                let act = self.expert_act(ctx, proj(0, xe)?, proj(1, xe)?)?;
                let y = proj(2, act)?;
                let y = ctx.mul(y, ctx.get_rows(wflat, sl)?)?;
                let dst = ctx.view(y_all, &[e, m as i64], &[y_all.nb()[1]], off * y_all.nb()[1])?;
                g.build_forward_expand(ctx.cpy(y, dst)?)?;
            }
            for (q, &(t, j)) in routes.iter().enumerate() {
                perm[t * k + j] = (off + q) as i32;
            }
            off += m;
        }
        if !last {
            return Ok(None);
        }
        self.remote_outputs(ctx, g, used, remote, wflat, y_all, inputs)?;
        self.moe_sum(ctx, n, y_all, &perm, inputs).map(Some)
    }

    /// The outputs other hosts computed (`remote`: expert → its routed rows' unweighted outputs,
    /// `n_embd` F32 per row in `used`'s row order), weighted and written to their places in the
    /// expert-major buffer exactly as this host's own are (the same `mul` by the same weights),
    /// so the sum that follows has the bits one host gives.
    #[allow(clippy::too_many_arguments)]
    fn remote_outputs<'a>(
        &'a self,
        ctx: &'a Context,
        g: &mut Graph<'a>,
        used: &BTreeMap<u32, Vec<(usize, usize)>>,
        remote: &BTreeMap<u32, Vec<f32>>,
        wflat: Tensor<'a>,
        y_all: Tensor<'a>,
        inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
    ) -> Result<()> {
        let k = self.hp.n_expert_used as usize;
        let e = self.hp.n_embd as usize;
        let mut off = 0usize;
        for (&expert, routes) in used {
            let m = routes.len();
            if let Some(y) = remote.get(&expert) {
                if y.len() != m * e {
                    return Err(crate::error::Error::Provider(format!(
                        "expert {expert}: {} remote values for {m} rows of {e}",
                        y.len()
                    )));
                }
                let bytes: Vec<u8> = y.iter().flat_map(|x| x.to_le_bytes()).collect();
                let yt = input(ctx, GgmlType::F32, &[e as i64, m as i64], inputs, bytes)?;
                let slots: Vec<i32> = routes.iter().map(|&(t, j)| (t * k + j) as i32).collect();
                let sl = input(ctx, GgmlType::I32, &[m as i64], inputs, i32_bytes(&slots))?;
                let y = ctx.mul(yt, ctx.get_rows(wflat, sl)?)?;
                let dst = ctx.view(y_all, &[e as i64, m as i64], &[y_all.nb()[1]], off * y_all.nb()[1])?;
                g.build_forward_expand(ctx.cpy(y, dst)?)?;
            }
            off += m;
        }
        Ok(())
    }

    /// The per-row sum, in rank order, of the expert outputs in the expert-major buffer
    /// (`perm[t × k + j]` = the buffer row of row `t`'s rank-`j` expert).
    fn moe_sum<'a>(
        &'a self,
        ctx: &'a Context,
        n: usize,
        y_all: Tensor<'a>,
        perm: &[i32],
        inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
    ) -> Result<Tensor<'a>> {
        let k = self.hp.n_expert_used as usize;
        let e = self.hp.n_embd as i64;
        let perm = input(ctx, GgmlType::I32, &[(k * n) as i64], inputs, i32_bytes(perm))?;
        let y_used = ctx.view(y_all, &[e, (k * n) as i64], &[y_all.nb()[1]], 0)?;
        let z = ctx.reshape(ctx.get_rows(y_used, perm)?, &[e, k as i64, n as i64])?;
        self.sum_ranks(ctx, z, n)
    }

    /// `z` `[e, k, n]` summed over the ranks in order: z₀ + z₁ + … (llama.cpp's order).
    fn sum_ranks<'a>(&'a self, ctx: &'a Context, z: Tensor<'a>, n: usize) -> Result<Tensor<'a>> {
        let k = self.hp.n_expert_used as usize;
        let e = self.hp.n_embd as i64;
        let mut out = ctx.view(z, &[e, n as i64], &[z.nb()[2]], 0)?;
        for j in 1..k {
            out = ctx.add(out, ctx.view(z, &[e, n as i64], &[z.nb()[2]], j * z.nb()[1])?)?;
        }
        if k == 1 {
            out = ctx.cont(out)?;
        }
        Ok(out)
    }

    /// A projection's stack as a `[ne0, ne1, count]` tensor with the stack's stride.
    fn stack_tensor<'a>(&self, ctx: &'a Context, l: usize, which: usize, st: &Stack) -> Result<Tensor<'a>> {
        let (ty, ne) = self.layers[l].experts[which];
        let t = ctx.new_tensor(ty, &[ne[0], ne[1], st.count as i64])?;
        // SAFETY: the provider's contract (ExpertProvider::stacks and acquire): every index
        // the ids name is an acquired expert whose projection lies at base + index × stride,
        // ne[0] × ne[1] of `ty`, until release (after this graph is computed); the stride is at
        // least one expert's bytes (stacks never overlap their entries), and mul_mat_id reads
        // only the rows of the experts the ids name.
        unsafe {
            t.set_stride(2, st.stride);
            t.set_data_ptr(st.base.cast_mut());
        }
        Ok(t)
    }

    /// gate/up/down through `mul_mat_id` on the stacks: `x` `[e, 1 or k, rows]`, `ids`
    /// `[k', rows]` (stack indices) → `[e, k', rows]`; with the experts' biases where the layer
    /// has them, added by `eids` (`[k', rows]`, expert ids) as llama.cpp's `ggml_add_id`.
    fn experts_id<'a>(
        &'a self,
        ctx: &'a Context,
        l: usize,
        x: Tensor<'a>,
        ids: Tensor<'a>,
        eids: Option<Tensor<'a>>,
        st: &Projections<Stack>,
    ) -> Result<Tensor<'a>> {
        let biased = |which: usize, y: Tensor<'a>| -> Result<Tensor<'a>> {
            match (self.layers[l].exp_b, eids) {
                (Some(b), Some(e)) => Ok(ctx.add_id(y, self.weights.get(b[which]), e)?),
                _ => Ok(y),
            }
        };
        let up = biased(1, ctx.mul_mat_id(self.stack_tensor(ctx, l, 1, &st.up)?, x, ids)?)?;
        let gate = biased(0, ctx.mul_mat_id(self.stack_tensor(ctx, l, 0, &st.gate)?, x, ids)?)?;
        let act = self.expert_act(ctx, gate, up)?;
        biased(2, ctx.mul_mat_id(self.stack_tensor(ctx, l, 2, &st.down)?, act, ids)?)
    }

    /// Whether layer `l`'s experts have biases.
    fn has_expert_bias(&self, l: usize) -> bool {
        self.layers[l].exp_b.is_some()
    }

    /// `y` (`[ne0, rows]`, one expert's projection `which`) plus that expert's bias, if the
    /// layer has biases: the bias tensor's column `expert`, broadcast over the rows.
    fn expert_bias<'a>(
        &'a self,
        ctx: &'a Context,
        l: usize,
        which: usize,
        expert: u32,
        y: Tensor<'a>,
    ) -> Result<Tensor<'a>> {
        let Some(b) = self.layers[l].exp_b else { return Ok(y) };
        let b = self.weights.get(b[which]);
        let col = ctx.view(b, &[b.ne()[0]], &[], expert as usize * b.nb()[1])?;
        Ok(ctx.add(y, col)?)
    }

    /// The experts' activation of `gate` and `up`, as the recipe says.
    fn expert_act<'a>(&self, ctx: &'a Context, gate: Tensor<'a>, up: Tensor<'a>) -> Result<Tensor<'a>> {
        match self.recipe.act {
            Act::SwigluOai if !self.opts.faults.plain_swiglu => Ok(ctx.swiglu_oai(gate, up, OAI_ALPHA, OAI_LIMIT)?),
            _ => Ok(ctx.swiglu_split(gate, up)?),
        }
    }

    /// All of a layer's routed experts at once on the stacks, as llama.cpp's `build_moe_ffn`:
    /// mul_mat_id over `[e, 1, n]` with the rows' stack indices, times the weights, summed.
    #[allow(clippy::too_many_arguments)]
    fn moe_stacked<'a>(
        &'a self,
        ctx: &'a Context,
        l: usize,
        n: usize,
        h: Tensor<'a>,
        ws: Tensor<'a>,
        used: &BTreeMap<u32, Vec<(usize, usize)>>,
        group: &[u32],
        st: &Projections<Stack>,
        idx: &[usize],
        inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
    ) -> Result<Tensor<'a>> {
        let k = self.hp.n_expert_used as usize;
        let e = self.hp.n_embd as i64;
        let (mut ids, mut eids) = (vec![0i32; k * n], vec![0i32; k * n]);
        for (&expert, routes) in used {
            let i = group.iter().position(|&x| x == expert).expect("every used expert is in the group");
            for &(t, j) in routes {
                ids[t * k + j] = idx[i] as i32;
                eids[t * k + j] = expert as i32;
            }
        }
        let ids = input(ctx, GgmlType::I32, &[k as i64, n as i64], inputs, i32_bytes(&ids))?;
        let eids =
            self.has_expert_bias(l).then(|| input(ctx, GgmlType::I32, &[k as i64, n as i64], inputs, i32_bytes(&eids)));
        let x = ctx.reshape(h, &[e, 1, n as i64])?;
        let y = self.experts_id(ctx, l, x, ids, eids.transpose()?, st)?;
        let w = ctx.reshape(ctx.view(ws, &[(k * n) as i64], &[], 0)?, &[1, k as i64, n as i64])?;
        let y = ctx.mul(y, w)?;
        self.sum_ranks(ctx, y, n)
    }

    /// An expert's projection `which` (0 gate, 1 up, 2 down) as a tensor on the provider's bytes.
    fn expert_proj<'a>(&self, ctx: &'a Context, l: usize, which: usize, ptr: *const u8) -> Result<Tensor<'a>> {
        let (ty, ne) = self.layers[l].experts[which];
        let t = ctx.new_tensor(ty, &ne)?;
        // SAFETY: the provider's contract: the pointer holds this expert's projection
        // (ne[0] × ne[1] of `ty`, the bytes of the file) until release, which comes after the
        // graph using it is computed.
        unsafe { t.set_data_ptr(ptr.cast_mut()) };
        Ok(t)
    }
}
