//! The ggml operations the decoders use, as checked methods on [`Context`].
//!
//! Each wrapper checks the preconditions that ggml would otherwise enforce with
//! `GGML_ASSERT` (an `abort()`), using the same conditions as `ggml.c`, and
//! returns [`Error::Shape`] or [`Error::Data`] instead. Operations only build
//! graph nodes; nothing is computed until [`ThreadPool::compute`](super::ThreadPool::compute).

use super::{Context, Error, GgmlType, Result, RopeMode, Tensor};
use bmoe_ggml_sys as sys;

/// Parameters of `ggml_rope_ext` besides the tensors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeParams {
    /// Dimensions rotated per head (the head size for full rotary).
    pub n_dims: i32,
    /// Pair layout.
    pub mode: RopeMode,
    /// Training context length (YaRN uses it; 0 otherwise is fine).
    pub n_ctx_orig: i32,
    /// θ base.
    pub freq_base: f32,
    /// Position scale (1 / linear scaling factor).
    pub freq_scale: f32,
    /// YaRN extrapolation mix (0 = off).
    pub ext_factor: f32,
    /// Attention magnitude factor (1 = none).
    pub attn_factor: f32,
    /// YaRN β fast.
    pub beta_fast: f32,
    /// YaRN β slow.
    pub beta_slow: f32,
}

impl RopeParams {
    /// Plain RoPE with base `freq_base` over `n_dims` dimensions, no scaling.
    pub fn plain(n_dims: i32, mode: RopeMode, freq_base: f32) -> Self {
        Self {
            n_dims,
            mode,
            n_ctx_orig: 0,
            freq_base,
            freq_scale: 1.0,
            ext_factor: 0.0,
            attn_factor: 1.0,
            beta_fast: 32.0,
            beta_slow: 1.0,
        }
    }
}

fn nelements(ne: &[i64; 4]) -> i64 {
    ne.iter().product()
}

impl<'a> Tensor<'a> {
    /// Byte strides, innermost first.
    pub fn nb(&self) -> [usize; 4] {
        // SAFETY: a live tensor of a live context ('a).
        unsafe { (*self.raw()).nb }
    }

    /// Whether the tensor's elements are laid out densely in order.
    pub fn is_contiguous(&self) -> bool {
        // SAFETY: a live tensor.
        unsafe { sys::ggml_is_contiguous(self.raw()) }
    }

    /// Number of elements.
    pub fn nelements(&self) -> i64 {
        nelements(&self.ne())
    }
}

impl Context {
    fn check<'a>(&'a self, op: &'static str, ok: bool, a: Tensor<'a>, b: Option<Tensor<'a>>) -> Result<()> {
        if ok {
            self.reserve_node()
        } else {
            Err(Error::Shape { op, a: a.ne(), b: b.map(|t| t.ne()).unwrap_or([0; 4]) })
        }
    }

    fn reserve_node(&self) -> Result<()> {
        // SAFETY: pure size query.
        let need = unsafe { sys::ggml_tensor_overhead() };
        let free = self.free_bytes();
        if need > free {
            return Err(Error::ContextFull { need, free, total: 0 });
        }
        Ok(())
    }

    fn f32_only<'a>(&self, op: &'static str, t: Tensor<'a>) -> Result<()> {
        if t.ty() != GgmlType::F32 {
            return Err(Error::Data { what: format!("{op}: expected an f32 tensor, got {}", t.ty()) });
        }
        Ok(())
    }

    /// RMS normalisation over the innermost dimension (no weight).
    ///
    /// # Errors
    /// [`Error::Data`] if `a` is not F32; [`Error::ContextFull`].
    pub fn rms_norm<'a>(&'a self, a: Tensor<'a>, eps: f32) -> Result<Tensor<'a>> {
        self.f32_only("rms_norm", a)?;
        self.reserve_node()?;
        // SAFETY: live context and tensor; F32 input as ggml_rms_norm requires.
        Tensor::from_raw(unsafe { sys::ggml_rms_norm(self.raw(), a.raw(), eps) })
    }

    /// Element-wise `a * b`, `b` broadcast over `a`.
    ///
    /// # Errors
    /// [`Error::Shape`] if `b` does not repeat to `a`.
    pub fn mul<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>) -> Result<Tensor<'a>> {
        // SAFETY: live tensors.
        let ok = unsafe { sys::ggml_can_repeat(b.raw(), a.raw()) };
        self.check("mul", ok, a, Some(b))?;
        // SAFETY: live tensors of this context; broadcast checked.
        Tensor::from_raw(unsafe { sys::ggml_mul(self.raw(), a.raw(), b.raw()) })
    }

    /// Element-wise `a / b`, `b` broadcast over `a`.
    ///
    /// # Errors
    /// [`Error::Shape`] if `b` does not repeat to `a`.
    pub fn div<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>) -> Result<Tensor<'a>> {
        // SAFETY: live tensors.
        let ok = unsafe { sys::ggml_can_repeat(b.raw(), a.raw()) };
        self.check("div", ok, a, Some(b))?;
        // SAFETY: live tensors of this context; broadcast checked.
        Tensor::from_raw(unsafe { sys::ggml_div(self.raw(), a.raw(), b.raw()) })
    }

    /// `a * s`.
    ///
    /// # Errors
    /// [`Error::ContextFull`].
    pub fn scale<'a>(&'a self, a: Tensor<'a>, s: f32) -> Result<Tensor<'a>> {
        self.reserve_node()?;
        // SAFETY: live context and tensor.
        Tensor::from_raw(unsafe { sys::ggml_scale(self.raw(), a.raw(), s) })
    }

    /// Sum of each row (innermost dimension) → `[1, ne1, ne2, ne3]`.
    ///
    /// # Errors
    /// [`Error::ContextFull`].
    pub fn sum_rows<'a>(&'a self, a: Tensor<'a>) -> Result<Tensor<'a>> {
        self.reserve_node()?;
        // SAFETY: live context and tensor.
        Tensor::from_raw(unsafe { sys::ggml_sum_rows(self.raw(), a.raw()) })
    }

    /// Clamp every element to `[min, max]`.
    ///
    /// # Errors
    /// [`Error::ContextFull`].
    pub fn clamp<'a>(&'a self, a: Tensor<'a>, min: f32, max: f32) -> Result<Tensor<'a>> {
        self.reserve_node()?;
        // SAFETY: live context and tensor.
        Tensor::from_raw(unsafe { sys::ggml_clamp(self.raw(), a.raw(), min, max) })
    }

    /// `silu(gate) * up`, element-wise (SwiGLU with separate gate and up tensors).
    ///
    /// # Errors
    /// [`Error::Shape`] if the shapes differ.
    pub fn swiglu_split<'a>(&'a self, gate: Tensor<'a>, up: Tensor<'a>) -> Result<Tensor<'a>> {
        self.check("swiglu_split", gate.ne() == up.ne(), gate, Some(up))?;
        // SAFETY: live tensors of equal shape.
        Tensor::from_raw(unsafe { sys::ggml_swiglu_split(self.raw(), gate.raw(), up.raw()) })
    }

    /// gpt-oss's clamped SwiGLU (`ggml_swiglu_oai`), element-wise: with `g = min(gate, limit)`
    /// and `u = clamp(up, −limit, limit)`, `g · sigmoid(alpha · g) · (u + 1)`.
    ///
    /// # Errors
    /// [`Error::Shape`] if the shapes differ.
    pub fn swiglu_oai<'a>(&'a self, gate: Tensor<'a>, up: Tensor<'a>, alpha: f32, limit: f32) -> Result<Tensor<'a>> {
        self.check("swiglu_oai", gate.ne() == up.ne(), gate, Some(up))?;
        // SAFETY: live tensors of equal shape.
        Tensor::from_raw(unsafe { sys::ggml_swiglu_oai(self.raw(), gate.raw(), up.raw(), alpha, limit) })
    }

    /// `a[:, i, t] + b[:, ids[i, t]]`: a per-expert bias (`b` `[ne0, n_expert]`) added to each
    /// routed expert's output (`a` `[ne0, k, n]`, `ids` I32 `[k, n]`), as `ggml_add_id`.
    ///
    /// # Errors
    /// [`Error::Shape`] on the rules of `ggml_add_id`.
    pub fn add_id<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>, ids: Tensor<'a>) -> Result<Tensor<'a>> {
        let (na, nb, ni) = (a.ne(), b.ne(), ids.ne());
        let ok = ids.ty() == GgmlType::I32 && na[0] == nb[0] && na[1] == ni[0] && na[2] == ni[1] && nb[2] == 1;
        self.check("add_id", ok, a, Some(b))?;
        // SAFETY: live tensors; ggml_add_id's assertions checked above.
        Tensor::from_raw(unsafe { sys::ggml_add_id(self.raw(), a.raw(), b.raw(), ids.raw()) })
    }

    /// SiLU, element-wise: `x · sigmoid(x)`.
    ///
    /// # Errors
    /// [`Error::ContextFull`].
    pub fn silu<'a>(&'a self, a: Tensor<'a>) -> Result<Tensor<'a>> {
        self.reserve_node()?;
        // SAFETY: live context and tensor.
        Tensor::from_raw(unsafe { sys::ggml_silu(self.raw(), a.raw()) })
    }

    /// Softmax over rows.
    ///
    /// # Errors
    /// [`Error::Shape`] if `a` is not contiguous.
    pub fn soft_max<'a>(&'a self, a: Tensor<'a>) -> Result<Tensor<'a>> {
        self.check("soft_max", a.is_contiguous(), a, None)?;
        // SAFETY: live contiguous tensor.
        Tensor::from_raw(unsafe { sys::ggml_soft_max(self.raw(), a.raw()) })
    }

    /// Fused `softmax(a * scale + mask)` over rows; `mask` (F16/F32) is `[ne0, ≥ne1, ...]`.
    ///
    /// # Errors
    /// [`Error::Shape`] on the shape rules of `ggml_soft_max_ext`.
    pub fn soft_max_ext<'a>(&'a self, a: Tensor<'a>, mask: Option<Tensor<'a>>, scale: f32) -> Result<Tensor<'a>> {
        let mut ok = a.is_contiguous();
        if let Some(m) = mask {
            let (na, nm) = (a.ne(), m.ne());
            ok &= matches!(m.ty(), GgmlType::F16 | GgmlType::F32)
                && m.is_contiguous()
                && nm[0] == na[0]
                && nm[1] >= na[1]
                && na[2] % nm[2] == 0
                && na[3] % nm[3] == 0;
        }
        self.check("soft_max_ext", ok, a, mask)?;
        let m = mask.map_or(std::ptr::null_mut(), |m| m.raw());
        // SAFETY: live tensors; every ggml_soft_max_ext assertion was checked above.
        Tensor::from_raw(unsafe { sys::ggml_soft_max_ext(self.raw(), a.raw(), m, scale, 0.0) })
    }

    /// Rotary position embedding of `a` (`[head_dim, n_head, n_tokens]`) at positions `pos` (I32 `[n_tokens]`).
    ///
    /// # Errors
    /// [`Error::Shape`] if `pos` is not an I32 vector of `a.ne[2]` positions or `n_dims` exceeds the head.
    pub fn rope_ext<'a>(&'a self, a: Tensor<'a>, pos: Tensor<'a>, p: &RopeParams) -> Result<Tensor<'a>> {
        let (na, np) = (a.ne(), pos.ne());
        let ok = pos.ty() == GgmlType::I32
            && np[1] == 1
            && np[2] == 1
            && np[3] == 1
            && np[0] == na[2]
            && p.n_dims > 0
            && p.n_dims % 2 == 0
            && i64::from(p.n_dims) <= na[0];
        self.check("rope_ext", ok, a, Some(pos))?;
        // SAFETY: live tensors; the vector/I32/length assertions of ggml_rope_impl were checked.
        Tensor::from_raw(unsafe {
            sys::ggml_rope_ext(
                self.raw(),
                a.raw(),
                pos.raw(),
                std::ptr::null_mut(),
                p.n_dims,
                p.mode.raw(),
                p.n_ctx_orig,
                p.freq_base,
                p.freq_scale,
                p.ext_factor,
                p.attn_factor,
                p.beta_fast,
                p.beta_slow,
            )
        })
    }

    /// Rows of `a` picked by `ids` (I32 `[n, ne2_of_a?, ...]`), converted to F32.
    ///
    /// # Errors
    /// [`Error::Shape`] on the rules of `ggml_get_rows`.
    pub fn get_rows<'a>(&'a self, a: Tensor<'a>, ids: Tensor<'a>) -> Result<Tensor<'a>> {
        let (na, ni) = (a.ne(), ids.ne());
        let ok = ids.ty() == GgmlType::I32 && na[2] == ni[1] && na[3] == ni[2] && ni[3] == 1;
        self.check("get_rows", ok, a, Some(ids))?;
        // SAFETY: live tensors; ggml_get_rows' assertions checked above.
        Tensor::from_raw(unsafe { sys::ggml_get_rows(self.raw(), a.raw(), ids.raw()) })
    }

    /// Indices (I32) of the `k` largest values of each row, largest first.
    ///
    /// # Errors
    /// [`Error::Shape`] if `k` exceeds the row length or is not positive.
    pub fn argsort_top_k<'a>(&'a self, a: Tensor<'a>, k: usize) -> Result<Tensor<'a>> {
        let ok = k > 0 && (k as i64) <= a.ne()[0];
        self.check("argsort_top_k", ok, a, None)?;
        // SAFETY: live tensor; k within the row (ggml_argsort_top_k's assertion).
        Tensor::from_raw(unsafe { sys::ggml_argsort_top_k(self.raw(), a.raw(), k as i32) })
    }

    /// `as[ids[i, t]] × b[:, i or 0, t]` for stacked expert matrices `as` (`[k, m, n_expert]`).
    ///
    /// # Errors
    /// [`Error::Shape`] on the rules of `ggml_mul_mat_id`.
    pub fn mul_mat_id<'a>(&'a self, r#as: Tensor<'a>, b: Tensor<'a>, ids: Tensor<'a>) -> Result<Tensor<'a>> {
        let (na, nb, ni) = (r#as.ne(), b.ne(), ids.ne());
        let ok = ids.ty() == GgmlType::I32
            && na[3] == 1
            && nb[3] == 1
            && ni[2] == 1
            && ni[3] == 1
            && ni[1] == nb[2]
            && na[0] == nb[0]
            && nb[1] > 0
            && ni[0] % nb[1] == 0;
        self.check("mul_mat_id", ok, r#as, Some(b))?;
        // SAFETY: live tensors; ggml_mul_mat_id's assertions checked above.
        Tensor::from_raw(unsafe { sys::ggml_mul_mat_id(self.raw(), r#as.raw(), b.raw(), ids.raw()) })
    }

    /// `a` with a new shape of the same element count (`a` must be contiguous).
    ///
    /// # Errors
    /// [`Error::Shape`] if the counts differ or `a` is not contiguous.
    pub fn reshape<'a>(&'a self, a: Tensor<'a>, ne: &[i64]) -> Result<Tensor<'a>> {
        let want = super::pad4(ne);
        let ok = !ne.is_empty() && ne.len() <= 4 && a.is_contiguous() && nelements(&want) == a.nelements();
        self.check("reshape", ok, a, None)?;
        // SAFETY: live contiguous tensor; element counts equal (ggml_reshape_*'s assertions).
        let ptr = unsafe {
            match ne.len() {
                1 => sys::ggml_reshape_1d(self.raw(), a.raw(), want[0]),
                2 => sys::ggml_reshape_2d(self.raw(), a.raw(), want[0], want[1]),
                3 => sys::ggml_reshape_3d(self.raw(), a.raw(), want[0], want[1], want[2]),
                _ => sys::ggml_reshape_4d(self.raw(), a.raw(), want[0], want[1], want[2], want[3]),
            }
        };
        Tensor::from_raw(ptr)
    }

    /// A view of `a` with dimensions `ne` (1 to 3 of them), byte strides `nb` for
    /// dimensions 1.. and a byte `offset`.
    ///
    /// # Errors
    /// [`Error::Shape`] if the view would reach past `a`'s data.
    pub fn view<'a>(&'a self, a: Tensor<'a>, ne: &[i64], nb: &[usize], offset: usize) -> Result<Tensor<'a>> {
        let ok_dims = (1..=3).contains(&ne.len()) && nb.len() + 1 == ne.len() && ne.iter().all(|&n| n > 0);
        // Last byte touched: offset + Σ (ne_i − 1)·nb_i + one row of ne0 elements.
        let row = a.ty().row_size(ne.first().copied().unwrap_or(0).max(0) as usize);
        let extent = ne.iter().skip(1).zip(nb).try_fold(offset.checked_add(row), |acc, (&n, &s)| {
            Some(acc.and_then(|acc| acc.checked_add((n as usize - 1).checked_mul(s)?)))
        });
        let ok = ok_dims && extent.flatten().is_some_and(|e| e <= a.nbytes());
        self.check("view", ok, a, None)?;
        // SAFETY: live tensor; the view lies within a's data (checked above).
        let ptr = unsafe {
            match ne.len() {
                1 => sys::ggml_view_1d(self.raw(), a.raw(), ne[0], offset),
                2 => sys::ggml_view_2d(self.raw(), a.raw(), ne[0], ne[1], nb[0], offset),
                _ => sys::ggml_view_3d(self.raw(), a.raw(), ne[0], ne[1], ne[2], nb[0], nb[1], offset),
            }
        };
        Tensor::from_raw(ptr)
    }

    /// `a` with its axes permuted: axis `i` of `a` becomes axis `axes[i]` (ggml's convention).
    ///
    /// # Errors
    /// [`Error::Shape`] if `axes` is not a permutation of 0..4.
    pub fn permute<'a>(&'a self, a: Tensor<'a>, axes: [i32; 4]) -> Result<Tensor<'a>> {
        let mut seen = [false; 4];
        let ok = axes.iter().all(|&x| (0..4).contains(&x) && !std::mem::replace(&mut seen[x as usize], true));
        self.check("permute", ok, a, None)?;
        // SAFETY: live tensor; a valid permutation (ggml_permute's assertions).
        Tensor::from_raw(unsafe { sys::ggml_permute(self.raw(), a.raw(), axes[0], axes[1], axes[2], axes[3]) })
    }

    /// A contiguous copy of `a`.
    ///
    /// # Errors
    /// [`Error::ContextFull`].
    pub fn cont<'a>(&'a self, a: Tensor<'a>) -> Result<Tensor<'a>> {
        self.reserve_node()?;
        // SAFETY: live tensor.
        Tensor::from_raw(unsafe { sys::ggml_cont(self.raw(), a.raw()) })
    }

    /// `a` then `b` along dimension `dim` (`ggml_concat`): a new tensor; the other dimensions
    /// and the types must agree.
    ///
    /// # Errors
    /// [`Error::Shape`] if they do not, or `dim > 3`; [`Error::ContextFull`].
    pub fn concat<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>, dim: usize) -> Result<Tensor<'a>> {
        let (na, nb) = (a.ne(), b.ne());
        let ok = dim < 4 && a.ty() == b.ty() && (0..4).all(|d| d == dim || na[d] == nb[d]);
        self.check("concat", ok, a, Some(b))?;
        // SAFETY: live tensors of one type whose other dimensions agree (ggml_concat's
        // assertions), dim in 0..4.
        Tensor::from_raw(unsafe { sys::ggml_concat(self.raw(), a.raw(), b.raw(), dim as i32) })
    }

    /// Copy `a` into `b` (converting type, e.g. F32 → F16 for a KV cache); returns the view of `b`.
    ///
    /// # Errors
    /// [`Error::Shape`] if the element counts differ.
    pub fn cpy<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>) -> Result<Tensor<'a>> {
        self.check("cpy", a.nelements() == b.nelements(), a, Some(b))?;
        // SAFETY: live tensors with equal element counts.
        Tensor::from_raw(unsafe { sys::ggml_cpy(self.raw(), a.raw(), b.raw()) })
    }

    /// Fused attention (`ggml_flash_attn_ext`): q `[d, n_q, n_head]`, k `[d, n_kv, n_head_kv]`,
    /// v `[d_v, n_kv, n_head_kv]`, mask F16 `[n_kv, ≥n_q]`; result `[d_v, n_head, n_q]`.
    ///
    /// # Errors
    /// [`Error::Shape`] on the rules of `ggml_flash_attn_ext`.
    pub fn flash_attn_ext<'a>(
        &'a self,
        q: Tensor<'a>,
        k: Tensor<'a>,
        v: Tensor<'a>,
        mask: Tensor<'a>,
        scale: f32,
    ) -> Result<Tensor<'a>> {
        let (nq, nk, nv, nm) = (q.ne(), k.ne(), v.ne(), mask.ne());
        let ok = nk[0] == nq[0]
            && nk[2] > 0
            && nq[2] % nk[2] == 0
            && nq[3] % nk[3] == 0
            && nq[3] == nk[3]
            && nq[3] == nv[3]
            && nv[1] == nk[1]
            && nv[2] == nk[2]
            && mask.ty() == GgmlType::F16
            && mask.is_contiguous()
            && nm[0] == nk[1]
            && nm[1] >= nq[1]
            && nq[2] % nm[2] == 0
            && nq[3] % nm[3] == 0;
        self.check("flash_attn_ext", ok, q, Some(k))?;
        // SAFETY: live tensors; ggml_flash_attn_ext's assertions checked above.
        Tensor::from_raw(unsafe {
            sys::ggml_flash_attn_ext(self.raw(), q.raw(), k.raw(), v.raw(), mask.raw(), scale, 0.0, 0.0)
        })
    }

    /// Attention sinks on a `flash_attn_ext` result: one F32 logit per query head that joins
    /// each softmax's denominator (and attends to nothing), as `ggml_flash_attn_ext_add_sinks`.
    ///
    /// # Errors
    /// [`Error::Shape`] unless `att` is a `flash_attn_ext` node of `sinks.ne[0]` query heads
    /// and `sinks` is F32.
    pub fn flash_attn_add_sinks<'a>(&'a self, att: Tensor<'a>, sinks: Tensor<'a>) -> Result<()> {
        // SAFETY: live tensors; reading the node's op and first source.
        let (is_fa, n_head) = unsafe {
            let raw = att.raw();
            ((*raw).op == sys::GGML_OP_FLASH_ATTN_EXT && (*raw).src[4].is_null(), (*(*raw).src[0]).ne[2])
        };
        let ok = is_fa && sinks.ty() == GgmlType::F32 && sinks.ne()[0] == n_head;
        if !ok {
            return Err(Error::Shape { op: "flash_attn_add_sinks", a: att.ne(), b: sinks.ne() });
        }
        // SAFETY: a flash_attn_ext node without sinks and F32 sinks of one per query head, as
        // the function asserts; the sinks tensor lives in a context at least as long as 'a.
        unsafe { sys::ggml_flash_attn_ext_add_sinks(att.raw(), sinks.raw()) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::ThreadPool;
    use super::*;

    fn run<'a>(ctx: &'a Context, out: Tensor<'a>) -> Vec<f32> {
        let mut g = ctx.new_graph(64).unwrap();
        g.build_forward_expand(out).unwrap();
        ThreadPool::new(2).unwrap().compute(&g).unwrap();
        out.read_f32().unwrap()
    }

    fn f32_tensor<'a>(ctx: &'a Context, ne: &[i64], v: &[f32]) -> Tensor<'a> {
        let t = ctx.new_tensor(GgmlType::F32, ne).unwrap();
        t.write_f32(v).unwrap();
        t
    }

    #[test]
    fn rms_norm_mul_scale() {
        let ctx = Context::new(1 << 20).unwrap();
        let x = f32_tensor(&ctx, &[4], &[1.0, 2.0, 3.0, 4.0]);
        let w = f32_tensor(&ctx, &[4], &[1.0, 0.5, 2.0, -1.0]);
        let y = ctx.scale(ctx.mul(ctx.rms_norm(x, 0.0).unwrap(), w).unwrap(), 2.0).unwrap();
        let rms = ((1.0 + 4.0 + 9.0 + 16.0) / 4.0f32).sqrt();
        let want: Vec<f32> = [1.0, 1.0, 6.0, -4.0].iter().map(|v| 2.0 * v / rms).collect();
        for (g, w) in run(&ctx, y).iter().zip(&want) {
            assert!((g - w).abs() < 1e-5, "{g} vs {w}");
        }
    }

    #[test]
    fn top_k_and_get_rows_pick_the_largest() {
        let ctx = Context::new(1 << 20).unwrap();
        let probs = f32_tensor(&ctx, &[5, 1], &[0.1, 0.5, 0.05, 0.3, 0.05]);
        let ids = ctx.argsort_top_k(probs, 2).unwrap();
        let mut g = ctx.new_graph(16).unwrap();
        g.build_forward_expand(ids).unwrap();
        ThreadPool::new(1).unwrap().compute(&g).unwrap();
        let raw = ids.read_bytes().unwrap();
        let got: Vec<i32> = raw.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, vec![1, 3]);
        assert!(matches!(ctx.argsort_top_k(probs, 6), Err(Error::Shape { .. })));
    }

    #[test]
    fn swiglu_is_silu_gate_times_up() {
        let ctx = Context::new(1 << 20).unwrap();
        let g = f32_tensor(&ctx, &[3], &[-1.0, 0.0, 2.0]);
        let u = f32_tensor(&ctx, &[3], &[2.0, 5.0, 0.5]);
        let y = ctx.swiglu_split(g, u).unwrap();
        let silu = |x: f32| x / (1.0 + (-x).exp());
        let want = [silu(-1.0) * 2.0, 0.0, silu(2.0) * 0.5];
        for (g, w) in run(&ctx, y).iter().zip(&want) {
            assert!((g - w).abs() < 1e-3, "{g} vs {w}");
        }
    }

    #[test]
    fn views_and_reshapes_are_bounds_checked() {
        let ctx = Context::new(1 << 20).unwrap();
        let a = ctx.new_tensor(GgmlType::F32, &[8, 4]).unwrap();
        assert!(ctx.view(a, &[8, 4], &[32], 0).is_ok());
        assert!(matches!(ctx.view(a, &[8, 4], &[32], 4), Err(Error::Shape { .. })));
        assert!(matches!(ctx.view(a, &[8, 5], &[32], 0), Err(Error::Shape { .. })));
        assert!(ctx.reshape(a, &[4, 8]).is_ok());
        assert!(matches!(ctx.reshape(a, &[4, 9]), Err(Error::Shape { .. })));
        assert!(matches!(ctx.permute(a, [0, 0, 1, 2]), Err(Error::Shape { .. })));
    }

    #[test]
    fn mul_mat_id_matches_per_expert_mul_mat() {
        // Three experts [k=32, m=2]; one token routed to experts 2 and 0.
        let ctx = Context::new(1 << 20).unwrap();
        let w: Vec<f32> = (0..32 * 2 * 3).map(|i| ((i * 7 % 11) as f32 - 5.0) / 8.0).collect();
        let x: Vec<f32> = (0..32).map(|i| ((i % 5) as f32 - 2.0) / 4.0).collect();
        let stacked = f32_tensor(&ctx, &[32, 2, 3], &w);
        let b = f32_tensor(&ctx, &[32, 1, 1], &x);
        let ids = ctx.new_tensor(GgmlType::I32, &[2, 1]).unwrap();
        ids.write_bytes(&[2i32.to_le_bytes(), 0i32.to_le_bytes()].concat()).unwrap();
        let y = ctx.mul_mat_id(stacked, b, ids).unwrap();
        assert_eq!(y.ne(), [2, 2, 1, 1]);
        let got = run(&ctx, y);
        for (slot, e) in [2usize, 0].iter().enumerate() {
            for r in 0..2 {
                let row = &w[(e * 2 + r) * 32..(e * 2 + r + 1) * 32];
                let dot: f32 = row.iter().zip(&x).map(|(a, b)| a * b).sum();
                assert!((got[slot * 2 + r] - dot).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn neox_rope_rotates_halves() {
        // One head of 4 at position 3: NEOX pairs (0,2) and (1,3) with θ_i = p·base^(−2i/4).
        let ctx = Context::new(1 << 20).unwrap();
        let x = [0.5f32, -1.0, 2.0, 0.25];
        let a = f32_tensor(&ctx, &[4, 1, 1], &x);
        let pos = ctx.new_tensor(GgmlType::I32, &[1]).unwrap();
        pos.write_bytes(&3i32.to_le_bytes()).unwrap();
        let base = 10_000f32;
        let y = ctx.rope_ext(a, pos, &RopeParams::plain(4, RopeMode::Neox, base)).unwrap();
        let got = run(&ctx, y);
        for i in 0..2 {
            let theta = 3.0 * base.powf(-2.0 * i as f32 / 4.0);
            let (s, c) = theta.sin_cos();
            assert!((got[i] - (x[i] * c - x[i + 2] * s)).abs() < 1e-4, "dim {i}");
            assert!((got[i + 2] - (x[i] * s + x[i + 2] * c)).abs() < 1e-4, "dim {}", i + 2);
        }
        let bad_pos = ctx.new_tensor(GgmlType::F32, &[1]).unwrap();
        assert!(matches!(
            ctx.rope_ext(a, bad_pos, &RopeParams::plain(4, RopeMode::Neox, base)),
            Err(Error::Shape { .. })
        ));
    }

    #[test]
    fn flash_attention_matches_softmax_reference() {
        // One query over three keys, head 32, one head; mask hides key 2. K and V go
        // through F16 as in a KV cache, hence the tolerance.
        let d = 32usize;
        let ctx = Context::new(1 << 20).unwrap();
        let q: Vec<f32> = (0..d).map(|i| ((i % 7) as f32 - 3.0) / 4.0).collect();
        let k: Vec<f32> = (0..3 * d).map(|i| ((i * 5 % 9) as f32 - 4.0) / 5.0).collect();
        let v: Vec<f32> = (0..3 * d).map(|i| ((i * 3 % 11) as f32 - 5.0) / 6.0).collect();
        let tq = f32_tensor(&ctx, &[d as i64, 1, 1], &q);
        let tk = f32_tensor(&ctx, &[d as i64, 3, 1], &k);
        let tv = f32_tensor(&ctx, &[d as i64, 3, 1], &v);
        let to16 = |t| ctx.cpy(t, ctx.new_tensor(GgmlType::F16, &[d as i64, 3, 1]).unwrap()).unwrap();
        let mask = ctx.new_tensor(GgmlType::F16, &[3, 1]).unwrap();
        // f16 0.0, 0.0, -inf
        mask.write_bytes(&[0u8, 0, 0, 0, 0x00, 0xFC]).unwrap();
        let scale = 1.0 / (d as f32).sqrt();
        let out = ctx.flash_attn_ext(tq, to16(tk), to16(tv), mask, scale).unwrap();
        assert_eq!(out.ne(), [d as i64, 1, 1, 1]);
        let got = run(&ctx, out);
        let s: Vec<f32> = (0..2).map(|j| (0..d).map(|i| q[i] * k[j * d + i]).sum::<f32>() * scale).collect();
        let m = s[0].max(s[1]);
        let (e0, e1) = ((s[0] - m).exp(), (s[1] - m).exp());
        for i in 0..d {
            let want = (e0 * v[i] + e1 * v[d + i]) / (e0 + e1);
            assert!((got[i] - want).abs() < 5e-3, "dim {i}: {} vs {want}", got[i]);
        }
    }
}
