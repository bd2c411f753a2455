//! Synthetic MoE models: real GGUF files (llama.cpp loads and runs them) with random weights,
//! a small byte-level tokenizer, a chosen architecture, shape, quantisation and seed.
//!
//! Weights are generated in their final encoding (see [`blocks`]), never quantised from f32,
//! and streamed to disk tensor by tensor through a large buffered writer, so a real model's
//! shape (18 GB) is written at disk speed. Every tensor draws from its own ChaCha8 stream
//! (seed, tensor index): the bytes depend only on `--seed` and the options, not on chunking
//! or on how the model is split into shards. The `q4_k_m` mix follows llama.cpp's quantizer
//! (`llama-quant.cpp`) so the bytes per expert equal those of the real model's Q4_K_M file.

pub mod blocks;
pub mod skew;
pub mod vocab;

pub use crate::arch::synth::{
    Chat, Init, Role, Shape, SynthArch, TensorSpec, CHATML, CHAT_TEMPLATE, HARMONY, HARMONY_TEMPLATE,
};

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rand::{Rng as _, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::ggml::GgmlType;
use crate::gguf::{split_name, HeaderWriter, Value, ValueType};

/// Why a synthetic model could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("synth: unknown architecture `{0}` (known: {known})", known = crate::arch::synth_archs().map(|a| a.0).collect::<Vec<_>>().join(", "))]
    UnknownArch(String),
    #[error("synth: unknown shape `{0}` (known: {known})", known = presets().join(", "))]
    UnknownShape(String),
    #[error("synth: unknown quantisation `{0}` (known: f32, f16, q8_0, q4_k_m, mxfp4)")]
    UnknownQuant(String),
    #[error("synth: tensor `{name}`: row of {ne0} is not a multiple of {ty}'s block of {block}")]
    Shape { name: String, ne0: u64, ty: GgmlType, block: usize },
    #[error("synth: cannot split {n_tensors} tensors into {split} shards")]
    Split { split: u32, n_tensors: usize },
    #[error("synth: --route-skew must be finite and >= 0, got {0}")]
    Skew(f32),
    #[error("synth: writing {path}: {err}")]
    Io { path: String, err: std::io::Error },
}

/// Result alias of the generator.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The shapes that fit any architecture: `tiny` (~4 MiB at q4_k_m, for tests) and `small`
/// (~250 MiB, for benchmarks).
pub const GENERIC_PRESETS: &[&str] = &["tiny", "small"];

/// Every preset shape name: the generic ones, then each architecture's real models.
pub fn presets() -> Vec<&'static str> {
    let mut v = GENERIC_PRESETS.to_vec();
    v.extend(crate::arch::synth_archs().flat_map(|a| a.1.iter().map(|p| p.0)));
    v
}

/// The architecture of a real model's preset (`None` for the generic shapes, which fit any).
pub fn preset_arch(name: &str) -> Option<&'static str> {
    crate::arch::synth_archs().find(|a| a.1.iter().any(|p| p.0 == name)).map(|a| a.0)
}

/// The shape of preset `name`.
pub fn preset(name: &str) -> Option<Shape> {
    Some(match name {
        "tiny" => Shape {
            n_layer: 4,
            n_embd: 256,
            n_ff: 512,
            n_ff_exp: 256,
            n_ff_shexp: 0,
            n_expert: 8,
            n_expert_used: 2,
            n_head: 4,
            n_head_kv: 2,
            head_dim: 64,
            n_vocab: 512,
            n_ctx: 4096,
            rope_base: 1e6,
            rms_eps: 1e-6,
            n_swa: 0,
            yarn: None,
            extra: Vec::new(),
        },
        "small" => Shape {
            n_layer: 8,
            n_embd: 1024,
            n_ff: 2048,
            n_ff_exp: 512,
            n_ff_shexp: 0,
            n_expert: 32,
            n_expert_used: 4,
            n_head: 16,
            n_head_kv: 4,
            head_dim: 64,
            n_vocab: 32000,
            n_ctx: 8192,
            rope_base: 1e6,
            rms_eps: 1e-6,
            n_swa: 0,
            yarn: None,
            extra: Vec::new(),
        },
        _ => return crate::arch::synth_archs().flat_map(|a| a.1).find(|p| p.0 == name).map(|p| (p.1)()),
    })
}

/// A quantisation scheme: one type for everything, or one of llama.cpp's mixes (Q4_K_M;
/// MXFP4_MOE, the gpt-oss files' mix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quant {
    F32,
    F16,
    Q8_0,
    Q4KM,
    /// `LLAMA_FTYPE_MOSTLY_MXFP4_MOE`: routed experts MXFP4, every other 2-D weight (output
    /// and token embedding included) q8_0.
    Mxfp4,
}

impl FromStr for Quant {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "f32" => Quant::F32,
            "f16" => Quant::F16,
            "q8_0" => Quant::Q8_0,
            "q4_k_m" => Quant::Q4KM,
            "mxfp4" | "mxfp4_moe" => Quant::Mxfp4,
            _ => return Err(Error::UnknownQuant(s.to_string())),
        })
    }
}

/// llama.cpp's `use_more_bits`: the first and last eighth of the layers, and every third
/// layer in between, get more bits in the K-quant "_M" mixes.
pub fn use_more_bits(i_layer: u32, n_layer: u32) -> bool {
    i_layer < n_layer / 8 || i_layer >= 7 * n_layer / 8 || (i_layer as i64 - i64::from(n_layer / 8)) % 3 == 2
}

/// `Shape::extra` key of a preset whose published Q4_K_M file (the one its routing trace was
/// recorded on) was not made by the vendored `llama-quant.cpp` but by bartowski's override of
/// it (published as `llama.cpp/llama-quant.cpp` of github.com/bartowski1182/quantization-config,
/// built into the llama.cpp that made his GGUF releases). Its value is that quantizer's
/// `n_ffn_down_exps`: it counts every tensor whose name holds `ffn_down_exps`, 1-D per-expert
/// scales included, while its per-tensor counter advances on the quantized ones only, so that
/// a model with a `ffn_down_exps.scale` per layer (gemma4) gets the down projections of its
/// first `2·n_layer/8` layers and of every third one after in q6_K, not those
/// `use_more_bits(layer, n_layer)` picks. Its other rules, for the tensors such a preset has
/// (n_expert ≥ 8): `attn_q` q6_K where `use_more_bits`, `attn_k` and `attn_v` q8_0,
/// `attn_output` q5_K; the dense FFN (`ffn_gate`, `ffn_up`, `ffn_down`, roles `Shexp*`) and
/// the output as the vendored rules have them.
pub const Q4KM_BARTOWSKI: &str = "q4_k_m.bartowski.n_ffn_down_exps";

/// The Q4_K_M type of `spec` under [`Q4KM_BARTOWSKI`]'s rules (before the row fallback).
fn q4km_bartowski(spec: &TensorSpec, s: &Shape) -> GgmlType {
    let n_down_exps = s.get(Q4KM_BARTOWSKI).unwrap_or(f64::from(s.n_layer)) as u32;
    let more = spec.layer.is_some_and(|l| use_more_bits(l, s.n_layer));
    let many = s.n_expert >= 8;
    match spec.role {
        Role::Output => GgmlType::Q6_K,
        Role::AttnQ if more => GgmlType::Q6_K,
        Role::AttnK | Role::AttnV if many => GgmlType::Q8_0,
        Role::AttnK | Role::AttnOut => GgmlType::Q5_K,
        Role::AttnV if more => GgmlType::Q6_K,
        Role::ExpDown if spec.layer.is_some_and(|l| use_more_bits(l, n_down_exps)) => GgmlType::Q6_K,
        Role::ShexpDown if more => GgmlType::Q6_K,
        _ => GgmlType::Q4_K,
    }
}

impl Quant {
    /// `general.file_type` (llama_ftype).
    pub fn file_type(self) -> u32 {
        match self {
            Quant::F32 => 0,
            Quant::F16 => 1,
            Quant::Q8_0 => 7,
            Quant::Q4KM => 15,
            Quant::Mxfp4 => 38,
        }
    }

    /// The type of `spec` in a model of shape `s`, as llama-quantize picks it
    /// (`llama_tensor_get_type_impl` and `tensor_type_fallback` in `llama-quant.cpp`): norms,
    /// routers and 1-D tensors stay f32; Q4_K_M gives attn_v and every ffn_down (routed,
    /// shared, or a leading dense layer's) of the `use_more_bits` layers q6_K, the output q6_K;
    /// an 8-expert model (Mixtral) gets q8_0 attn_k and attn_v and q5_K attn_output; a k-quant
    /// whose rows are not whole 256-blocks falls back to q5_0 (for q4_K), q5_1 (q5_K) or q8_0
    /// (q6_K). MXFP4_MOE gives the 3-D expert stacks MXFP4 and every other weight q8_0.
    ///
    /// `attn_v` is `spec`'s place among the model's attn_v tensors and their count, in the
    /// order written (llama-quant's `i_attention_wv` and `n_attention_wv`): the layer and
    /// layer count where every layer has one.
    pub fn tensor_type(self, spec: &TensorSpec, s: &Shape, attn_v: (u32, u32)) -> GgmlType {
        let role = spec.role;
        if matches!(role, Role::Norm | Role::Router | Role::Bias | Role::ShexpGateInp | Role::Sinks | Role::F32(_))
            || spec.dims.len() < 2
        {
            return GgmlType::F32;
        }
        let ty = match self {
            Quant::F32 => GgmlType::F32,
            Quant::F16 => GgmlType::F16,
            Quant::Q8_0 => GgmlType::Q8_0,
            Quant::Q4KM if s.get(Q4KM_BARTOWSKI).is_some() => q4km_bartowski(spec, s),
            Quant::Q4KM => {
                let more = spec.layer.is_some_and(|l| use_more_bits(l, s.n_layer));
                let eight = s.n_expert == 8;
                match role {
                    Role::Output => GgmlType::Q6_K,
                    Role::AttnK | Role::AttnV if eight => GgmlType::Q8_0,
                    Role::AttnOut if eight => GgmlType::Q5_K,
                    Role::AttnV if use_more_bits(attn_v.0, attn_v.1) => GgmlType::Q6_K,
                    Role::ExpDown | Role::ShexpDown if more => GgmlType::Q6_K,
                    // llama-quant's FFN_DOWN category is by name: a dense layer's `ffn_down` too.
                    Role::ResidualOut if more && spec.name.contains("ffn_down") => GgmlType::Q6_K,
                    _ => GgmlType::Q4_K,
                }
            }
            Quant::Mxfp4 if spec.dims.len() > 2 && spec.dims[2] > 1 => GgmlType::MXFP4,
            Quant::Mxfp4 => GgmlType::Q8_0,
        };
        if spec.dims[0] % ty.block_size() as u64 == 0 {
            return ty;
        }
        let fallback = match ty {
            GgmlType::Q4_K => GgmlType::Q5_0,
            GgmlType::Q5_K => GgmlType::Q5_1,
            GgmlType::Q6_K => GgmlType::Q8_0,
            other => other,
        };
        if spec.dims[0] % fallback.block_size() as u64 == 0 {
            fallback
        } else {
            GgmlType::F16
        }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Options {
    pub arch: String,
    pub shape_name: String,
    pub shape: Shape,
    pub quant: Quant,
    pub seed: u64,
    /// Number of shard files (1 = a single file).
    pub split: u32,
    /// Zipf exponent of planted expert popularity (0 = none).
    pub route_skew: f32,
}

impl Options {
    /// Options for a preset shape.
    ///
    /// # Errors
    /// [`Error::UnknownShape`] / [`Error::UnknownArch`].
    pub fn new(arch: &str, shape: &str, quant: Quant, seed: u64) -> Result<Self> {
        let a = synth_arch(arch)?;
        let mut s = preset(shape).ok_or_else(|| Error::UnknownShape(shape.to_string()))?;
        (a.fit)(&mut s);
        Ok(Self { arch: arch.into(), shape_name: shape.into(), shape: s, quant, seed, split: 1, route_skew: 0.0 })
    }
}

fn synth_arch(name: &str) -> Result<&'static SynthArch> {
    crate::arch::synth_of(name).ok_or_else(|| Error::UnknownArch(name.to_string()))
}

/// A tensor in the plan: its spec, type, and index in the whole model.
#[derive(Clone, Debug)]
struct Planned {
    spec: TensorSpec,
    ty: GgmlType,
    index: usize,
}

/// The files to write: one header per shard and the tensors each holds.
#[derive(Debug)]
pub struct Plan {
    shards: Vec<(HeaderWriter, Vec<Planned>)>,
}

impl Plan {
    /// Bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.shards.iter().map(|(h, _)| h.to_bytes().len() as u64 + h.data_len()).sum()
    }

    /// The headers (one per shard).
    pub fn headers(&self) -> impl Iterator<Item = &HeaderWriter> {
        self.shards.iter().map(|(h, _)| h)
    }
}

/// Lays out the model: metadata, tokenizer, every tensor's type and offset, and the shards.
///
/// # Errors
/// [`Error::Shape`] if a tensor's rows are not whole blocks of its type; [`Error::Split`].
pub fn plan(o: &Options) -> Result<Plan> {
    let arch = synth_arch(&o.arch)?;
    if !o.route_skew.is_finite() || o.route_skew < 0.0 {
        return Err(Error::Skew(o.route_skew));
    }
    let s = &o.shape;
    let specs = (arch.tensors)(s);
    // llama-quant counts the attn_v tensors apart (its i_attention_wv of n_attention_wv): in a
    // hybrid model only some layers have one.
    let n_attn_v = specs.iter().filter(|t| t.role == Role::AttnV).count() as u32;
    let mut i_attn_v = 0;
    let mut tensors = Vec::new();
    for (index, spec) in specs.into_iter().enumerate() {
        let ty = o.quant.tensor_type(&spec, s, (i_attn_v, n_attn_v));
        i_attn_v += u32::from(spec.role == Role::AttnV);
        if spec.dims[0] % ty.block_size() as u64 != 0 {
            return Err(Error::Shape { name: spec.name, ne0: spec.dims[0], ty, block: ty.block_size() });
        }
        tensors.push(Planned { spec, ty, index });
    }
    let split = o.split.max(1);
    if split as usize > tensors.len() {
        return Err(Error::Split { split, n_tensors: tensors.len() });
    }
    let n_tensors = tensors.len();
    // Contiguous groups of roughly equal bytes, none empty.
    let size = |p: &Planned| p.spec.dims.iter().product::<u64>() / p.ty.block_size() as u64 * p.ty.type_size() as u64;
    let total: u64 = tensors.iter().map(size).sum();
    let mut groups: Vec<Vec<Planned>> = vec![Vec::new(); split as usize];
    let mut acc = 0u64;
    for (i, t) in tensors.into_iter().enumerate() {
        let by_bytes = (u128::from(acc) * u128::from(split) / u128::from(total.max(1))) as usize;
        // Leave at least one tensor for each later shard.
        let g = by_bytes.max((split as usize).saturating_sub(n_tensors - i)).min(split as usize - 1);
        let g = g.max(groups.iter().rposition(|g| !g.is_empty()).unwrap_or(0));
        acc += size(&t);
        groups[g].push(t);
    }
    let vocab = vocab::build(s.n_vocab as usize, o.seed, &arch.chat.specials);
    let mut shards = Vec::new();
    for (no, group) in groups.into_iter().enumerate() {
        let mut h = HeaderWriter::new();
        if no == 0 {
            h.kv("general.architecture", Value::String(o.arch.clone()));
            h.kv("general.name", Value::String(format!("bmoe synthetic {} {}", o.arch, o.shape_name)));
            h.kv("general.file_type", Value::U32(o.quant.file_type()));
            h.kv("general.quantization_version", Value::U32(2));
            for (k, v) in (arch.metadata)(s) {
                h.kv(&k, v);
            }
            h.kv("tokenizer.ggml.model", Value::String("gpt2".into()));
            h.kv("tokenizer.ggml.pre", Value::String(arch.chat.pre.into()));
            let strings =
                |v: &[String]| Value::Array(ValueType::String, v.iter().cloned().map(Value::String).collect());
            h.kv("tokenizer.ggml.tokens", strings(&vocab.tokens));
            h.kv(
                "tokenizer.ggml.token_type",
                Value::Array(ValueType::I32, vocab.types.iter().map(|&t| Value::I32(t)).collect()),
            );
            h.kv("tokenizer.ggml.merges", strings(&vocab.merges));
            h.kv("tokenizer.ggml.bos_token_id", Value::U32(vocab.bos));
            h.kv("tokenizer.ggml.eos_token_id", Value::U32(vocab.eos));
            h.kv("tokenizer.ggml.padding_token_id", Value::U32(vocab.bos));
            h.kv("tokenizer.ggml.add_bos_token", Value::Bool(false));
            // The architecture's chat format, so that `bmoe run --chat` has a template to apply.
            h.kv("tokenizer.chat_template", Value::String(arch.chat.template.into()));
            h.kv("bmoe.synth.shape", Value::String(o.shape_name.clone()));
            h.kv("bmoe.synth.seed", Value::U64(o.seed));
            h.kv("bmoe.synth.route_skew", Value::F32(o.route_skew));
        }
        if split > 1 {
            h.kv("split.no", Value::U16(no as u16));
            h.kv("split.count", Value::U16(split as u16));
            h.kv("split.tensors.count", Value::I32(n_tensors as i32));
        }
        for t in &group {
            h.tensor(&t.spec.name, &t.spec.dims, t.ty);
        }
        shards.push((h, group));
    }
    Ok(Plan { shards })
}

/// The shard paths for output `path`: `path` itself, or `PREFIX-0000i-of-0000N.gguf` with
/// PREFIX `path` without its `.gguf` (or without an `-00001-of-0000N.gguf` already there).
pub fn output_paths(path: &Path, split: u32) -> Vec<PathBuf> {
    if split <= 1 {
        return vec![path.to_path_buf()];
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let suffix = format!("-00001-of-{split:05}.gguf");
    let prefix = name.strip_suffix(&suffix).or_else(|| name.strip_suffix(".gguf")).unwrap_or(&name).to_string();
    (0..split).map(|i| path.with_file_name(split_name(&prefix, i, split))).collect()
}

/// Bytes generated per chunk (whole rows, at least one).
const CHUNK_BYTES: u64 = 8 << 20;

/// Writes the model to `path` (or its shards) and returns the files written.
/// `progress(done, total)` is called after every chunk.
///
/// # Errors
/// Any planning error; [`Error::Io`] if a file cannot be written.
pub fn write(o: &Options, path: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<Vec<PathBuf>> {
    let plan = plan(o)?;
    let total = plan.total_bytes();
    let paths = output_paths(path, o.split);
    let s = &o.shape;
    let embd_sign = skew::direction_sign(o.seed, s.n_embd);
    let embd_offset = |i: usize| skew::ALPHA * embd_sign[i];
    let offset = blocks::Offset { row_len: s.n_embd as usize, at: &embd_offset };
    let mut done = 0u64;
    let mut buf = Vec::new();
    let mut staged = Staged::default();
    for ((header, tensors), p) in plan.shards.iter().zip(&paths) {
        let io = |err| Error::Io { path: p.display().to_string(), err };
        let file = staged.create(p)?;
        let mut w = BufWriter::with_capacity(16 << 20, file);
        let head = header.to_bytes();
        w.write_all(&head).map_err(io)?;
        let mut pos = 0u64;
        for (t, slot) in tensors.iter().zip(header.layout()) {
            let pad = slot.rel_offset - pos;
            w.write_all(&vec![0u8; pad as usize]).map_err(io)?;
            pos += pad;
            let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
            rng.set_stream(t.index as u64 + 1);
            let row_bytes = t.ty.row_size(t.spec.dims[0] as usize) as u64;
            let rows_per_chunk = (CHUNK_BYTES / row_bytes).max(1);
            let n_rows = slot.size / row_bytes;
            let router = (t.spec.role == Role::Router)
                .then(|| skew::router_weights(s, o.seed, o.route_skew, t.spec.layer.unwrap_or(0)));
            let mut row = 0;
            while row < n_rows {
                let rows = rows_per_chunk.min(n_rows - row);
                buf.resize((rows * row_bytes) as usize, 0);
                match t.spec.role {
                    Role::Norm => {
                        for c in buf.chunks_exact_mut(4) {
                            c.copy_from_slice(&1f32.to_le_bytes());
                        }
                    }
                    Role::F32(Init::Const(v)) => {
                        for c in buf.chunks_exact_mut(4) {
                            c.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    Role::F32(Init::Uniform(lo, hi)) => {
                        for c in buf.chunks_exact_mut(4) {
                            c.copy_from_slice(&rng.random_range(lo..=hi).to_le_bytes());
                        }
                    }
                    Role::Router => {
                        let w = router.as_ref().expect("router weights");
                        let from = (row * row_bytes / 4) as usize;
                        for (c, v) in buf.chunks_exact_mut(4).zip(&w[from..]) {
                            c.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    role => {
                        let sigma = sigma(role, &t.spec.dims, s.n_layer);
                        let off = (role == Role::TokenEmbd && o.route_skew > 0.0).then_some(&offset);
                        blocks::fill(t.ty, &mut buf, sigma, &mut rng, off);
                    }
                }
                w.write_all(&buf).map_err(io)?;
                row += rows;
                pos += rows * row_bytes;
                done += rows * row_bytes;
                progress(done + head.len() as u64, total);
            }
        }
        w.flush().map_err(io)?;
        let file = w.into_inner().map_err(|e| io(e.into_error()))?;
        // Nothing past the last tensor: the file ends where its data does.
        let end = head.len() as u64 + header.data_len();
        let mut file = file;
        debug_assert_eq!(file.stream_position().ok(), Some(end));
        file.seek(SeekFrom::Start(end)).map_err(io)?;
        file.sync_all().map_err(io)?;
        done += head.len() as u64;
    }
    staged.commit()?;
    progress(total, total);
    Ok(paths)
}

/// Files written under temporary names beside their final ones and renamed into place only
/// when every one of them is complete: a full disk or an error leaves neither a partial model
/// nor an empty shard, and whatever was at those paths before stays as it was.
#[derive(Debug, Default)]
struct Staged {
    /// (temporary, final) of each file created so far.
    files: Vec<(PathBuf, PathBuf)>,
}

impl Staged {
    fn create(&mut self, path: &Path) -> Result<File> {
        let name = path.file_name().map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
        let f = File::create(&tmp).map_err(|err| Error::Io { path: path.display().to_string(), err })?;
        self.files.push((tmp, path.to_path_buf()));
        Ok(f)
    }

    fn commit(mut self) -> Result<()> {
        for (tmp, path) in std::mem::take(&mut self.files) {
            std::fs::rename(&tmp, &path).map_err(|err| {
                let _ = std::fs::remove_file(&tmp);
                Error::Io { path: path.display().to_string(), err }
            })?;
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes only the headers of the model `o` describes, each file extended to its full length
/// with a hole where the tensor data would be: the same headers (hence the same index, entry
/// sizes and token cycle for `bmoe inspect`) as [`write()`], in no disk space and no time, for
/// real models' shapes. The weights read as zeros: not a model to run.
///
/// # Errors
/// Any planning error; [`Error::Io`] if a file cannot be written.
pub fn write_sparse(o: &Options, path: &Path) -> Result<Vec<PathBuf>> {
    let plan = plan(o)?;
    let paths = output_paths(path, o.split);
    let mut staged = Staged::default();
    for ((header, _), p) in plan.shards.iter().zip(&paths) {
        let io = |err| Error::Io { path: p.display().to_string(), err };
        let mut file = staged.create(p)?;
        let head = header.to_bytes();
        file.write_all(&head).map_err(io)?;
        file.set_len(head.len() as u64 + header.data_len()).map_err(io)?;
    }
    staged.commit()?;
    Ok(paths)
}

/// Standard deviation of a tensor's weights: unit-scale outputs for unit-RMS inputs, with the
/// residual-branch outputs (attention output, expert down) scaled by 1/√(2·n_layer) so the
/// residual stream stays O(1) at any depth, and logits of s.d. ≈ 2.
fn sigma(role: Role, dims: &[u64], n_layer: u32) -> f32 {
    let fan_in = dims[0] as f32;
    match role {
        Role::TokenEmbd => 1.0,
        Role::Output => 2.0 / fan_in.sqrt(),
        Role::AttnOut | Role::ExpDown | Role::ShexpDown | Role::ResidualOut => {
            1.0 / fan_in.sqrt() / (2.0 * n_layer as f32).sqrt()
        }
        // Biases move q, k and v by a fraction of their unit scale.
        Role::Bias => 0.5,
        // Sinks: per-head logits of the order of the scores (~1).
        Role::Sinks => 1.0,
        _ => 1.0 / fan_in.sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_more_bits_picks_half_of_48_layers() {
        let more: Vec<u32> = (0..48).filter(|&l| use_more_bits(l, 48)).collect();
        assert_eq!(more.len(), 24);
        assert_eq!(&more[..8], &[0, 1, 2, 3, 4, 5, 8, 11]);
        assert!(more.ends_with(&[38, 41, 42, 43, 44, 45, 46, 47]));
    }

    #[test]
    fn split_groups_are_contiguous_and_non_empty() {
        for split in [1, 2, 3, 7] {
            let mut o = Options::new("qwen3moe", "tiny", Quant::Q8_0, 1).unwrap();
            o.split = split;
            let p = plan(&o).unwrap();
            assert_eq!(p.shards.len(), split as usize);
            let idx: Vec<usize> = p.shards.iter().flat_map(|(_, t)| t.iter().map(|t| t.index)).collect();
            assert_eq!(idx, (0..idx.len()).collect::<Vec<_>>());
            assert!(p.shards.iter().all(|(_, t)| !t.is_empty()));
        }
    }
}
