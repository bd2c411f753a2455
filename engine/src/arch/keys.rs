//! Typed access to an architecture's GGUF keys (`ARCH.key`, the error naming the full key),
//! the parser every architecture shares (the arch string and required keys checked once, typed
//! fields after), and the pieces llama.cpp's loaders compute the same way for every
//! architecture (the sliding-window pattern, RoPE scaling).

use super::ArchSpec;
use crate::gguf::{Metadata, Value};
use crate::model::{ArchParams, Error, Gating, MoeParams, Result, RopeScaling};

/// Typed access to `ARCH.key` with the error naming the full key.
pub(crate) struct Keys<'a> {
    pub(crate) m: &'a Metadata,
    pub(crate) arch: &'static str,
}

impl Keys<'_> {
    pub(crate) fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.arch)
    }

    pub(crate) fn get(&self, k: &str) -> Result<&Value> {
        self.m.get(&self.key(k)).ok_or_else(|| Error::MissingKey { key: self.key(k) })
    }

    pub(crate) fn uint(&self, k: &str, max: u64) -> Result<u64> {
        let v = self.get(k)?;
        let n = v.as_u64().ok_or_else(|| Error::KeyType { key: self.key(k), expected: "a non-negative integer" })?;
        if n == 0 || n > max {
            return Err(Error::BadParam {
                key: self.key(k),
                value: n.to_string(),
                why: format!("must be in 1..={max}"),
            });
        }
        Ok(n)
    }

    pub(crate) fn uint_or(&self, k: &str, max: u64, default: u64) -> Result<u64> {
        if self.m.get(&self.key(k)).is_none() {
            return Ok(default);
        }
        self.uint(k, max)
    }

    pub(crate) fn float(&self, k: &str) -> Result<f64> {
        let v = self.get(k)?;
        let x = v.as_f64().ok_or_else(|| Error::KeyType { key: self.key(k), expected: "a number" })?;
        if !x.is_finite() || x <= 0.0 {
            return Err(Error::BadParam {
                key: self.key(k),
                value: x.to_string(),
                why: "must be finite and positive".into(),
            });
        }
        Ok(x)
    }
}

/// Sanity bounds: generous for real models, small enough that products cannot overflow.
pub(crate) const MAX_LAYERS: u64 = 1 << 12;
pub(crate) const MAX_DIM: u64 = 1 << 20;
pub(crate) const MAX_EXPERTS: u64 = 1 << 14;

impl Keys<'_> {
    pub(crate) fn boolean(&self, k: &str, default: bool) -> Result<bool> {
        match self.m.get(&self.key(k)) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Error::KeyType { key: self.key(k), expected: "a bool" }),
        }
    }
}

/// What an architecture's loader reads of its FFN: the routed experts' hidden size, the shared
/// expert's (0: none), and how the top-k weights are normalised and scaled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ffn {
    pub n_ff_exp: u64,
    pub n_ff_shexp: u64,
    /// Divide the top-k weights by their sum.
    pub norm: bool,
    /// Scale the router weights (0: none).
    pub scale: f64,
}

/// Checks the architecture string and the required keys of `spec`, then reads its params: the
/// keys every architecture shares here, its FFN through `spec.ffn`, anything else through
/// `spec.extra`.
pub(crate) fn parse(m: &Metadata, spec: &'static ArchSpec) -> Result<ArchParams> {
    let name = spec.name;
    match m.get_str("general.architecture") {
        Some(a) if a == name => {}
        other => return Err(Error::WrongArch { expected: name, found: other.unwrap_or("<missing>").to_string() }),
    }
    let k = Keys { m, arch: name };
    if spec.may_be_dense {
        // A model of this name without experts is a dense model: not a MoE to stream.
        let key = k.key("expert_count");
        if m.get(&key).and_then(Value::as_u64).unwrap_or(0) == 0 {
            return Err(Error::NotMoe { arch: name.to_string() });
        }
    }
    for key in spec.required_keys {
        k.get(key)?;
    }
    let n_embd = k.uint("embedding_length", MAX_DIM)?;
    let n_head = k.uint("attention.head_count", MAX_DIM)? as u32;
    let n_head_kv = k.uint_or("attention.head_count_kv", MAX_DIM, n_head.into())? as u32;
    let head_dim = k.uint_or("attention.key_length", MAX_DIM, n_embd / u64::from(n_head))?;
    let n_expert = k.uint("expert_count", MAX_EXPERTS)? as u32;
    let n_expert_used = k.uint("expert_used_count", MAX_EXPERTS)? as u32;
    if n_expert_used > n_expert {
        return Err(Error::BadParam {
            key: k.key("expert_used_count"),
            value: n_expert_used.to_string(),
            why: format!("more than expert_count {n_expert}"),
        });
    }
    if n_head % n_head_kv != 0 {
        return Err(Error::BadParam {
            key: k.key("attention.head_count_kv"),
            value: n_head_kv.to_string(),
            why: format!("does not divide head_count {n_head}"),
        });
    }
    // Full rotary only (llama.cpp asserts n_rot == head size in these graphs).
    let n_rot = k.uint_or("rope.dimension_count", MAX_DIM, head_dim)?;
    if n_rot != head_dim {
        return Err(Error::BadParam {
            key: k.key("rope.dimension_count"),
            value: n_rot.to_string(),
            why: format!("partial rotary is not supported (head size {head_dim})"),
        });
    }
    if k.get("attention.value_length").is_ok() && k.uint("attention.value_length", MAX_DIM)? != head_dim {
        return Err(Error::BadParam {
            key: k.key("attention.value_length"),
            value: k.uint("attention.value_length", MAX_DIM)?.to_string(),
            why: format!("differs from the key length {head_dim}"),
        });
    }
    let ffn = (spec.ffn)(&k, n_expert_used)?;
    if ffn.n_ff_exp == 0 {
        return Err(Error::BadParam {
            key: k.key("expert_feed_forward_length"),
            value: "0".into(),
            why: "experts need a hidden size".into(),
        });
    }
    let n_layer = k.uint("block_count", MAX_LAYERS)? as u32;
    let n_ctx_train = k.uint("context_length", u64::from(u32::MAX))?;
    let rope_freq_base = if m.get(&k.key("rope.freq_base")).is_some() { k.float("rope.freq_base")? } else { 10_000.0 };
    let mut hp = MoeParams {
        n_layer,
        n_ctx_train,
        n_embd,
        n_head,
        n_head_kv,
        head_dim,
        n_expert,
        n_expert_used,
        n_ff_exp: ffn.n_ff_exp,
        n_ff_shexp: ffn.n_ff_shexp,
        rms_eps: k.float("attention.layer_norm_rms_epsilon")?,
        rope_freq_base,
        expert_weights_norm: ffn.norm,
        expert_weights_scale: ffn.scale,
        gating: Gating::Softmax,
        rope: rope_scaling(&k, n_ctx_train)?,
        n_swa: 0,
        swa_layers: Vec::new(),
        rope_freq_base_swa: rope_freq_base,
    };
    (spec.extra)(&k, &mut hp)?;
    Ok(ArchParams { arch: name, hp })
}

/// An architecture with nothing to read beyond the shared keys and its FFN.
pub(crate) fn no_extra(_: &Keys<'_>, _: &mut MoeParams) -> Result<()> {
    Ok(())
}

/// Which layers slide, as llama.cpp's `load_swa_pattern(ml, n_pattern)`: an array
/// `attention.sliding_window_pattern` gives it per layer; else a period `n` (the key, or the
/// architecture's default) makes every layer but the last of each period slide
/// (`il % n < n - 1`), and `n = 0` all of them.
pub(crate) fn swa_pattern(k: &Keys<'_>, n_layer: u32, default: u64) -> Result<Vec<bool>> {
    let key = "attention.sliding_window_pattern";
    let n = match k.m.get(&k.key(key)) {
        Some(Value::Array(_, items)) => {
            if items.len() != n_layer as usize {
                return Err(Error::BadParam {
                    key: k.key(key),
                    value: format!("{} entries", items.len()),
                    why: format!("one per layer ({n_layer})"),
                });
            }
            return items
                .iter()
                .map(|v| match v {
                    Value::Bool(b) => Ok(*b),
                    v => v.as_u64().map(|x| x != 0).ok_or(Error::KeyType { key: k.key(key), expected: "bools" }),
                })
                .collect();
        }
        Some(v) => v.as_u64().ok_or(Error::KeyType { key: k.key(key), expected: "a period or an array" })?,
        None => default,
    };
    Ok((0..u64::from(n_layer)).map(|il| n == 0 || il % n < n - 1).collect())
}

/// The RoPE scaling a llama.cpp context derives from the file (context defaults: YaRN β fast
/// 32, slow 1, no `rope.scaling.yarn_log_multiplier`), in its f32 arithmetic so the bits agree.
fn rope_scaling(k: &Keys<'_>, n_ctx_train: u64) -> Result<RopeScaling> {
    let kind = match k.m.get(&k.key("rope.scaling.type")) {
        None => "linear",
        Some(v) => v.as_str().ok_or(Error::KeyType { key: k.key("rope.scaling.type"), expected: "a string" })?,
    };
    let yarn = match kind {
        "none" | "linear" => false,
        "yarn" => true,
        other => {
            return Err(Error::BadParam {
                key: k.key("rope.scaling.type"),
                value: other.into(),
                why: "this decoder knows none, linear and yarn".into(),
            })
        }
    };
    let factor =
        if k.m.get(&k.key("rope.scaling.factor")).is_some() { k.float("rope.scaling.factor")? as f32 } else { 0.0 };
    let freq_scale = if kind == "none" || factor == 0.0 { 1.0 } else { 1.0 / factor };
    let mut attn_factor = 1.0f32;
    let ext_factor = if yarn { 1.0f32 } else { 0.0 };
    if ext_factor != 0.0 {
        let factor = 1.0f32 / freq_scale;
        // get_mscale(factor, 1): 0.1 · 1 · ln(factor) + 1, or 1 for a factor of at most 1.
        attn_factor = if factor <= 1.0 { 1.0 } else { 0.1 * 1.0 * factor.ln() + 1.0 };
        // ggml's rope multiplies by 1 + 0.1 ln(factor) itself: llama.cpp divides it out here.
        attn_factor *= 1.0 / (1.0 + 0.1 * factor.ln());
    }
    if k.m.get(&k.key("rope.scaling.attn_factor")).is_some() {
        attn_factor *= k.float("rope.scaling.attn_factor")? as f32;
    }
    let n_ctx_orig = match k.m.get(&k.key("rope.scaling.original_context_length")) {
        Some(_) => k.uint("rope.scaling.original_context_length", u64::from(u32::MAX))?,
        None => n_ctx_train,
    } as u32;
    Ok(RopeScaling { freq_scale, ext_factor, attn_factor, beta_fast: 32.0, beta_slow: 1.0, n_ctx_orig })
}
