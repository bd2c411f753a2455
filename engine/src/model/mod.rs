//! The model index: everything the streamer needs to know about a MoE GGUF model without
//! reading its weights. The architecture and its typed hyper-parameters, the dense tensor
//! set (kept in memory), and the expert layout: for each MoE layer and expert, the byte
//! range of each projection inside the stacked `blk.L.ffn_*_exps.weight` tensors (tensor
//! offset + e × bytes per expert), from which come the entry size per layer (one cache slot),
//! the worst-case token cycle and the widest layer.
//!
//! The index trusts nothing: each expert tensor's shape is checked against the params before
//! any range is derived from it, so every range it hands out lies inside its shard file (the
//! reader already checked each tensor's extent against the file length).

mod params;

pub use crate::arch::{spec as arch_spec, ArchSpec, ARCHS};
pub use params::{ArchParams, Gating, MoeParams, MoeShape, Proj, Qwen3MoeParams, RopeScaling};

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::ggml::GgmlType;
use crate::gguf::{self, GgufModel, ResolvedTensor};

/// Why a model cannot be indexed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file itself is malformed or unreadable.
    #[error(transparent)]
    Gguf(#[from] gguf::Error),
    /// `general.architecture` is absent.
    #[error("model: general.architecture is missing")]
    NoArch,
    /// An architecture this build cannot index.
    #[error("model: architecture `{arch}` is not supported (known: {known})")]
    UnknownArch { arch: String, known: String },
    /// An architecture of the table whose file has no experts (a dense llama).
    #[error("model: this `{arch}` model has no experts (expert_count absent or 0): a dense model, not streamed")]
    NotMoe { arch: String },
    /// Params parsed for one architecture from a file of another.
    #[error("model: expected architecture `{expected}`, found `{found}`")]
    WrongArch { expected: &'static str, found: String },
    /// A required hyper-parameter key is absent.
    #[error("model: required key `{key}` is missing")]
    MissingKey { key: String },
    /// A key of the wrong type.
    #[error("model: key `{key}` must be {expected}")]
    KeyType { key: String, expected: &'static str },
    /// A hyper-parameter out of range.
    #[error("model: key `{key}` = {value}: {why}")]
    BadParam { key: String, value: String, why: String },
    /// A tensor the architecture requires is absent.
    #[error("model: tensor `{name}` is missing")]
    MissingTensor { name: String },
    /// Tensors of layers past `block_count`: llama.cpp refuses such a file (it counts every
    /// tensor it loads against the file's), and they would go unused.
    #[error("model: {count} tensors are of layers at or past block_count {n_layer} and would go unused ({first}, …)")]
    UnusedTensors { n_layer: u32, count: usize, first: String },
    /// An expert (or router) tensor whose shape does not match the params.
    #[error("model: tensor `{name}` has shape {dims:?}, expected {expected:?}")]
    TensorShape { name: String, dims: Vec<u64>, expected: Vec<u64> },
}

impl Error {
    /// Whether the model is well formed but not something this build decodes (an unknown
    /// architecture, a dense model): `bmoe run` hands such a model to llama.cpp.
    pub fn not_streamable(&self) -> bool {
        matches!(self, Error::UnknownArch { .. } | Error::NotMoe { .. })
    }
}

/// Result alias of the model index.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A byte range in one shard file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteRange {
    pub shard: usize,
    pub offset: u64,
    pub len: u64,
}

/// One stacked expert tensor of a layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpertTensor {
    pub proj: Proj,
    pub name: String,
    pub ty: GgmlType,
    pub shard: usize,
    /// Absolute offset of expert 0's slice.
    pub offset: u64,
    /// Bytes of one expert's slice.
    pub bytes_per_expert: u64,
}

/// The experts of one MoE layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoeLayer {
    pub layer: u32,
    pub n_expert: u32,
    pub tensors: Vec<ExpertTensor>,
}

impl MoeLayer {
    /// Bytes of one (layer, expert) entry: all of its projections.
    pub fn entry_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.bytes_per_expert).sum()
    }

    /// The byte range of projection `i` (index into `tensors`) of `expert`.
    ///
    /// # Panics
    /// If `expert >= n_expert` or `i` is out of range.
    pub fn range(&self, i: usize, expert: u32) -> ByteRange {
        assert!(expert < self.n_expert, "expert {expert} of {}", self.n_expert);
        let t = &self.tensors[i];
        ByteRange { shard: t.shard, offset: t.offset + u64::from(expert) * t.bytes_per_expert, len: t.bytes_per_expert }
    }

    /// Every projection's byte range of `expert`.
    pub fn ranges(&self, expert: u32) -> Vec<(Proj, ByteRange)> {
        (0..self.tensors.len()).map(|i| (self.tensors[i].proj, self.range(i, expert))).collect()
    }
}

/// The index of a MoE model.
#[derive(Clone, Debug)]
pub struct ModelIndex {
    pub file: GgufModel,
    pub arch: &'static ArchSpec,
    pub params: ArchParams,
    /// Indices into `file.tensors` of the tensors that are not experts.
    pub dense: Vec<usize>,
    /// The MoE layers in order.
    pub layers: Vec<MoeLayer>,
}

impl ModelIndex {
    /// Opens and indexes the model at `path` (the first shard of a split model).
    ///
    /// # Errors
    /// Any [`gguf::Error`] of the file or its shards; the other variants if the model is not an
    /// indexable MoE model.
    pub fn open(path: &Path) -> Result<Self> {
        Self::new(gguf::open_model(path)?)
    }

    /// Indexes an opened model.
    ///
    /// # Errors
    /// See [`ModelIndex::open`].
    pub fn new(file: GgufModel) -> Result<Self> {
        let arch_name = file.metadata().get_str("general.architecture").ok_or(Error::NoArch)?;
        let arch = arch_spec(arch_name).ok_or_else(|| Error::UnknownArch {
            arch: arch_name.to_string(),
            known: ARCHS.iter().map(|a| a.name).collect::<Vec<_>>().join(", "),
        })?;
        let params = arch.params(file.metadata())?;
        let shape = params.moe();
        let mut expert_names = HashSet::new();
        let mut layers = Vec::new();
        for l in 0..shape.n_layer {
            let name = |base: &str| format!("blk.{l}.{base}.weight");
            let first = name(arch.expert_tensors[0].1);
            if file.tensor(&first).is_none() {
                continue; // a dense layer
            }
            let router = name(arch.router);
            let r = file.tensor(&router).ok_or(Error::MissingTensor { name: router.clone() })?;
            check_dims(r, &[shape.n_embd, u64::from(shape.n_expert)])?;
            let mut tensors = Vec::new();
            for &(proj, base) in arch.expert_tensors {
                let n = name(base);
                let t = file.tensor(&n).ok_or_else(|| Error::MissingTensor { name: n.clone() })?;
                let [ne0, ne1] = proj.expert_dims(shape.n_embd, shape.n_ff_exp);
                check_dims(t, &[ne0, ne1, u64::from(shape.n_expert)])?;
                // The reader checked ne0 is whole blocks and offset + size <= file length,
                // and size = n_expert × this.
                let bytes_per_expert = t.row_bytes() * ne1;
                tensors.push(ExpertTensor {
                    proj,
                    name: n.clone(),
                    ty: t.ty,
                    shard: t.shard,
                    offset: t.offset,
                    bytes_per_expert,
                });
                expert_names.insert(n);
            }
            layers.push(MoeLayer { layer: l, n_expert: shape.n_expert, tensors });
        }
        let past: Vec<&str> = file
            .tensors
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| block_of(n).is_some_and(|b| b >= u64::from(shape.n_layer)))
            .collect();
        if let Some(first) = past.first() {
            return Err(Error::UnusedTensors {
                n_layer: shape.n_layer,
                count: past.len(),
                first: (*first).to_string(),
            });
        }
        let dense = (0..file.tensors.len()).filter(|&i| !expert_names.contains(&file.tensors[i].name)).collect();
        Ok(Self { file, arch, params, dense, layers })
    }

    /// The MoE shape.
    pub fn shape(&self) -> MoeShape {
        self.params.moe()
    }

    /// Bytes of all dense (non-expert) tensors.
    pub fn dense_bytes(&self) -> u64 {
        self.dense.iter().map(|&i| self.file.tensors[i].size).sum()
    }

    /// Bytes of all experts of all layers.
    pub fn expert_bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.entry_bytes() * u64::from(l.n_expert)).sum()
    }

    /// Parameters (weights) of the whole model: every tensor's element count.
    pub fn n_params(&self) -> u64 {
        self.file.tensors.iter().map(|t| t.dims.iter().product::<u64>()).sum()
    }

    /// Parameters one token computes with at top-`k`: every dense tensor (shared experts
    /// included) plus `min(k, n_expert)` routed experts per MoE layer (the "active" count
    /// model cards publish).
    /// A routed expert's per-expert bias slices (gpt-oss's `blk.L.ffn_*_exps.bias`,
    /// `[ne, n_expert]`, resident with the dense tensors) count `k` of `n_expert` slices.
    pub fn active_params(&self, k: u32) -> u64 {
        let s = self.shape();
        let k_of = u64::from(k.min(s.n_expert));
        let dense: u64 = self
            .dense
            .iter()
            .map(|&i| {
                let t = &self.file.tensors[i];
                let n = t.dims.iter().product::<u64>();
                let kind = tensor_kind(&t.name);
                let per_expert = self.arch.expert_tensors.iter().any(|(_, base)| kind == format!("{base}.bias"));
                if per_expert {
                    n / u64::from(s.n_expert) * k_of
                } else {
                    n
                }
            })
            .sum();
        let experts: u64 = self
            .layers
            .iter()
            .map(|l| {
                let per: u64 =
                    l.tensors.iter().map(|t| t.proj.expert_dims(s.n_embd, s.n_ff_exp).iter().product::<u64>()).sum();
                u64::from(k.min(l.n_expert)) * per
            })
            .sum();
        dense + experts
    }

    /// Parameters of the input embedding (`token_embd`), a row lookup rather than compute:
    /// some model cards (gpt-oss's) leave it out of their active count.
    pub fn embedding_params(&self) -> u64 {
        self.file.tensor("token_embd.weight").map_or(0, |t| t.dims.iter().product())
    }

    /// Entry bytes of each MoE layer, in layer order.
    pub fn entry_bytes(&self) -> Vec<u64> {
        self.layers.iter().map(MoeLayer::entry_bytes).collect()
    }

    /// The worst-case bytes one token can route to at top-`k`: `Σ_layers min(k, n_expert) × entry`.
    pub fn cycle_bytes(&self, k: u32) -> u64 {
        self.layers.iter().map(|l| u64::from(k.min(l.n_expert)) * l.entry_bytes()).sum()
    }

    /// The MoE layer with the largest entry (the first such), if any.
    pub fn widest_layer(&self) -> Option<&MoeLayer> {
        self.layers.iter().rev().max_by_key(|l| l.entry_bytes())
    }

    /// The byte ranges of `expert` in MoE layer `layer` (model layer number).
    pub fn expert_ranges(&self, layer: u32, expert: u32) -> Option<Vec<(Proj, ByteRange)>> {
        let l = self.layers.iter().find(|l| l.layer == layer)?;
        (expert < l.n_expert).then(|| l.ranges(expert))
    }

    /// Tensor types by kind (the name with `blk.N.` removed), with counts.
    pub fn types_by_kind(&self) -> BTreeMap<String, BTreeMap<&'static str, u32>> {
        let mut out: BTreeMap<String, BTreeMap<&'static str, u32>> = BTreeMap::new();
        for t in &self.file.tensors {
            *out.entry(tensor_kind(&t.name).to_string()).or_default().entry(t.ty.name()).or_default() += 1;
        }
        out
    }
}

/// The layer number of a tensor named `blk.N.…`.
fn block_of(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("blk.")?;
    let n = &rest[..rest.find('.')?];
    n.bytes().all(|b| b.is_ascii_digit()).then(|| n.parse().ok()).flatten()
}

/// The kind of a tensor: its name without a leading `blk.N.`.
pub fn tensor_kind(name: &str) -> &str {
    if let Some(rest) = name.strip_prefix("blk.") {
        if let Some(dot) = rest.find('.') {
            if rest[..dot].bytes().all(|b| b.is_ascii_digit()) {
                return &rest[dot + 1..];
            }
        }
    }
    name
}

fn check_dims(t: &ResolvedTensor, expected: &[u64]) -> Result<()> {
    if t.dims != expected {
        return Err(Error::TensorShape { name: t.name.clone(), dims: t.dims.clone(), expected: expected.to_vec() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(tensor_kind("blk.12.ffn_down_exps.weight"), "ffn_down_exps.weight");
        assert_eq!(tensor_kind("output.weight"), "output.weight");
        assert_eq!(tensor_kind("blk.x.y"), "blk.x.y");
    }
}
