//! The attention block shared by every architecture: norm, Q/K/V projections (with biases
//! where the file has them), the recipe's Q/K norm, RoPE (YaRN-scaled where the file says),
//! the F16 KV cache, `flash_attn_ext` over grouped-query heads (with the layer's sliding-window
//! mask and the recipe's sinks), the output projection and the residual. As llama.cpp's
//! `build_qkv` + `build_attn` with the KV cache, node for node, so the bits agree.

use super::{i32_bytes, input, Model};
use crate::arch::QkNorm;
use crate::error::Result;
use crate::ggml::{Context, GgmlType, Graph, RopeMode, RopeParams, Tensor};

impl Model {
    /// Layer `l`'s attention on `x` (`[n_embd, n]`) at positions `pos0..`: stores K and V in the
    /// cache and returns the attention output plus the residual (llama.cpp's `ffn_inp`), `n`
    /// rows. `mask` is the layer's: causal, or causal within its sliding window.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention<'a>(
        &'a self,
        ctx: &'a Context,
        g: &mut Graph<'a>,
        l: usize,
        x: Tensor<'a>,
        n: usize,
        pos0: u32,
        mask: &[u8],
        inputs: &mut Vec<(Tensor<'a>, Vec<u8>)>,
    ) -> Result<Tensor<'a>> {
        let hp = &self.hp;
        let lw = &self.layers[l];
        let w = |i| self.weights.get(i);
        let eps = hp.rms_eps as f32;
        let (hd, nh, nkv, ni) = (hp.head_dim as i64, i64::from(hp.n_head), i64::from(hp.n_head_kv), n as i64);
        let pos0 = i64::from(pos0);
        let faults = self.opts.faults;

        let cur = ctx.mul(ctx.rms_norm(x, eps)?, w(lw.attn_norm))?;
        let proj = |wi: usize, b: Option<usize>| self.linear(ctx, wi, b, cur);
        let (mut q, mut k, v) = (proj(lw.wq, lw.bq)?, proj(lw.wk, lw.bk)?, proj(lw.wv, lw.bv)?);
        let mut qk_norm = self.recipe.qk_norm;
        if faults.no_qk_norm {
            qk_norm = QkNorm::None;
        } else if faults.wrong_qk_norm {
            qk_norm = match qk_norm {
                QkNorm::PerHead => QkNorm::Whole,
                QkNorm::Whole => QkNorm::PerHead,
                QkNorm::None => QkNorm::None,
            };
        }
        // Whole: each token's projection at once, before the split into heads (olmoe).
        // (Under the fault, a per-head model's `[head_dim]` weights repeat along the row.)
        if let (QkNorm::Whole, Some(qn), Some(kn)) = (qk_norm, lw.q_norm, lw.k_norm) {
            q = ctx.mul(ctx.rms_norm(q, eps)?, w(qn))?;
            k = ctx.mul(ctx.rms_norm(k, eps)?, w(kn))?;
        }
        let mut q = ctx.reshape(q, &[hd, nh, ni])?;
        let mut k = ctx.reshape(k, &[hd, nkv, ni])?;
        let v = ctx.reshape(v, &[hd, nkv, ni])?;
        // Per head: each head's vector on its own (qwen3moe). The weights are `[head_dim]`
        // (or, under the fault, a whole-projection model's, one row per head).
        if let (QkNorm::PerHead, Some(qn), Some(kn)) = (qk_norm, lw.q_norm, lw.k_norm) {
            let per_head = |t: Tensor<'a>| ctx.reshape(t, &[hd, t.nelements() / hd]);
            q = ctx.mul(ctx.rms_norm(q, eps)?, per_head(w(qn))?)?;
            k = ctx.mul(ctx.rms_norm(k, eps)?, per_head(w(kn))?)?;
        }
        let positions: Vec<i32> = (0..ni).map(|i| (pos0 + i) as i32).collect();
        let pos = input(ctx, GgmlType::I32, &[ni], inputs, i32_bytes(&positions))?;
        let mut mode = self.recipe.rope;
        if faults.wrong_rope_mode {
            mode = if mode == RopeMode::Neox { RopeMode::Normal } else { RopeMode::Neox };
        }
        // As llama.cpp's graphs pass them: the layer's base (a sliding layer may have its own)
        // and the context's scaling (YaRN: ext_factor 1, its attention factor, β 32 / 1).
        let base = if hp.is_swa(l) { hp.rope_freq_base_swa } else { hp.rope_freq_base };
        let sc = &hp.rope;
        let rope = if faults.no_yarn {
            RopeParams { n_ctx_orig: sc.n_ctx_orig as i32, ..RopeParams::plain(hd as i32, mode, base as f32) }
        } else {
            RopeParams {
                n_dims: hd as i32,
                mode,
                n_ctx_orig: sc.n_ctx_orig.min(i32::MAX as u32) as i32,
                freq_base: base as f32,
                freq_scale: sc.freq_scale,
                ext_factor: sc.ext_factor,
                attn_factor: sc.attn_factor,
                beta_fast: sc.beta_fast,
                beta_slow: sc.beta_slow,
            }
        };
        let q_pos = if faults.rope_shift {
            let shifted: Vec<i32> = positions.iter().map(|p| p + 1).collect();
            input(ctx, GgmlType::I32, &[ni], inputs, i32_bytes(&shifted))?
        } else {
            pos
        };
        let q = ctx.rope_ext(q, q_pos, &rope)?;
        let k = ctx.rope_ext(k, pos, &rope)?;

        // Store K and V at positions pos0.. of the cache.
        let (kc, vc) = (self.state.get(self.st.k[l]), self.state.get(self.st.v[l]));
        let row = kc.nb()[2];
        let k_dst = ctx.view(kc, &[hd, nkv, ni], &[kc.nb()[1], row], pos0 as usize * row)?;
        let v_dst = ctx.view(vc, &[hd, nkv, ni], &[vc.nb()[1], row], pos0 as usize * row)?;
        g.build_forward_expand(ctx.cpy(k, k_dst)?)?;
        g.build_forward_expand(ctx.cpy(v, v_dst)?)?;

        let n_kv = pos0 + ni;
        // Each query over the keys `0..keys` with its `mask` row(s).
        let attend = |q: Tensor<'a>, keys: i64, mask: Tensor<'a>| -> Result<Tensor<'a>> {
            let k_all = ctx.view(kc, &[hd, keys, nkv], &[row, kc.nb()[1]], 0)?;
            let v_all = ctx.view(vc, &[hd, keys, nkv], &[row, vc.nb()[1]], 0)?;
            let att =
                ctx.flash_attn_ext(ctx.permute(q, [0, 2, 1, 3])?, k_all, v_all, mask, 1.0 / (hd as f32).sqrt())?;
            if let Some(s) = lw.sinks.filter(|_| !faults.no_sinks) {
                ctx.flash_attn_add_sinks(att, w(s))?;
            }
            Ok(ctx.reshape(att, &[hd * nh, q.ne()[2]])?)
        };
        let att = if self.exact && ni > 1 {
            // A verify pass row by row: each query as a single step at its position runs it,
            // over the keys up to its own with its row of the mask (the kernel's path, and so
            // its order of summation, depends on the queries and keys of the call: one query
            // over 512 keys or more splits the keys across the threads).
            let mut out: Option<Tensor<'a>> = None;
            for j in 0..ni {
                let keys = pos0 + j + 1;
                let qj = ctx.view(q, &[hd, nh, 1], &[q.nb()[1], q.nb()[2]], j as usize * q.nb()[2])?;
                let at = (j * n_kv * 2) as usize;
                let mj = input(ctx, GgmlType::F16, &[keys, 1], inputs, mask[at..at + keys as usize * 2].to_vec())?;
                let a = attend(qj, keys, mj)?;
                out = Some(match out {
                    None => a,
                    Some(o) => ctx.concat(o, a, 1)?,
                });
            }
            out.expect("two rows or more")
        } else {
            attend(q, n_kv, input(ctx, GgmlType::F16, &[n_kv, ni], inputs, mask.to_vec())?)?
        };
        let att = self.linear(ctx, lw.wo, lw.bo, att)?;
        Ok(ctx.add(att, x)?)
    }
}
