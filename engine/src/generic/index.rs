//! The generic index: a MoE model's routed experts found by their tensor names alone, for any
//! architecture llama.cpp decodes, with no architecture table. llama.cpp's loader names the
//! stacked expert tensors `blk.N.ffn_{gate,up,down,gate_up}_exps.weight` for every MoE
//! architecture (`src/llama-arch.cpp`), each `[ne0, ne1, n_expert]`, and its graphs read
//! expert `e` of such a tensor at `data + e × nb[2]` (ggml's `mul_mat_id`). That is all the
//! streamer needs: where each expert's slice of each projection lies in the file. Everything
//! else stays where llama.cpp keeps it (dense).
//!
//! Untrusted input as everywhere: dims and sizes come from the header the reader checked
//! (`offset + size <= file length`, `size` = the dims' bytes), and the projections of a layer
//! must agree on the expert count.

use std::collections::BTreeMap;

use crate::gguf::GgufModel;
use crate::model::{Error, ExpertTensor, MoeLayer, Proj, Result};

/// The projections a routed expert tensor may be, by the name llama.cpp's loader gives it.
pub const EXPERT_TENSORS: [(Proj, &str); 4] = [
    (Proj::GateUp, "ffn_gate_up_exps"),
    (Proj::Gate, "ffn_gate_exps"),
    (Proj::Up, "ffn_up_exps"),
    (Proj::Down, "ffn_down_exps"),
];

/// A MoE model's routed experts, found by name.
#[derive(Clone, Debug)]
pub struct GenericIndex {
    pub file: GgufModel,
    /// `general.architecture`.
    pub arch: String,
    /// The most experts a layer has.
    pub n_expert: u32,
    /// `<arch>.expert_used_count`: experts each token routes to.
    pub n_expert_used: u32,
    /// The MoE layers in order; each layer's projections in file order.
    pub layers: Vec<MoeLayer>,
    /// Indices into `file.tensors` of every other tensor a decode reads (kept where llama.cpp
    /// maps them).
    pub dense: Vec<usize>,
    /// Indices into `file.tensors` of the NextN/MTP blocks' tensors (the last
    /// `nextn_predict_layers` blocks): llama.cpp skips them unless asked for its MTP draft
    /// context, so a decode never reads them: neither streamed nor dense.
    pub nextn: Vec<usize>,
}

/// The block number of a per-layer tensor's name (`blk.N.…`).
fn block_of(name: &str) -> Option<u64> {
    let (layer, _) = name.strip_prefix("blk.")?.split_once('.')?;
    layer.parse().ok().filter(|_| layer.bytes().all(|b| b.is_ascii_digit()))
}

/// `(layer, projection)` of a routed expert tensor's name, e.g. `blk.3.ffn_up_exps.weight`.
pub fn expert_tensor_of(name: &str) -> Option<(u32, Proj)> {
    let rest = name.strip_prefix("blk.")?;
    let (layer, kind) = rest.split_once('.')?;
    let layer: u32 = layer.parse().ok().filter(|_| layer.bytes().all(|b| b.is_ascii_digit()))?;
    let base = kind.strip_suffix(".weight")?;
    EXPERT_TENSORS.iter().find(|(_, n)| *n == base).map(|&(p, _)| (layer, p))
}

impl GenericIndex {
    /// Index `file`.
    ///
    /// # Errors
    /// [`Error::NoArch`]; [`Error::NotMoe`] when the file has no routed expert tensors or no
    /// expert count; [`Error::TensorShape`] for an expert tensor that is not 3-D or whose
    /// expert count differs from its layer's other projections; [`Error::BadParam`] for an
    /// `expert_used_count` of 0 or above the experts of a layer.
    pub fn new(file: GgufModel) -> Result<Self> {
        let arch = file.metadata().get_str("general.architecture").ok_or(Error::NoArch)?.to_string();
        let key = |k: &str| format!("{arch}.{k}");
        let used_key = key("expert_used_count");
        let mut by_layer: BTreeMap<u32, Vec<ExpertTensor>> = BTreeMap::new();
        let mut n_of_layer: BTreeMap<u32, u64> = BTreeMap::new();
        let mut is_expert = vec![false; file.tensors.len()];
        // MTP ("nextn") layers past the decoder's own are loaded by llama.cpp only for its MTP
        // context: their experts are never routed by a plain decode.
        let n_layer = file.metadata().get_u64(&key("block_count")).unwrap_or(u64::MAX);
        let nextn = file.metadata().get_u64(&key("nextn_predict_layers")).unwrap_or(0);
        let routed_layers = n_layer.saturating_sub(nextn);
        let is_nextn: Vec<bool> =
            file.tensors.iter().map(|t| block_of(&t.name).is_some_and(|l| l >= routed_layers)).collect();
        for (i, t) in file.tensors.iter().enumerate() {
            let Some((layer, proj)) = expert_tensor_of(&t.name) else { continue };
            if is_nextn[i] {
                continue;
            }
            if t.dims.len() != 3 || t.dims[2] == 0 {
                let expected = vec![t.dim(0), t.dim(1), t.dim(2).max(1)];
                return Err(Error::TensorShape { name: t.name.clone(), dims: t.dims.clone(), expected });
            }
            let n = t.dims[2];
            if let Some(&other) = n_of_layer.get(&layer) {
                if other != n {
                    let expected = vec![t.dims[0], t.dims[1], other];
                    return Err(Error::TensorShape { name: t.name.clone(), dims: t.dims.clone(), expected });
                }
            }
            n_of_layer.insert(layer, n);
            // The reader checked ne0 is whole blocks and size = the dims' bytes, inside the file.
            let bytes_per_expert = t.row_bytes() * t.dims[1];
            by_layer.entry(layer).or_default().push(ExpertTensor {
                proj,
                name: t.name.clone(),
                ty: t.ty,
                shard: t.shard,
                offset: t.offset,
                bytes_per_expert,
            });
            is_expert[i] = true;
        }
        if by_layer.is_empty() {
            return Err(Error::NotMoe { arch });
        }
        let n_expert = n_of_layer.values().copied().max().unwrap_or(0);
        let n_expert = u32::try_from(n_expert).map_err(|_| Error::BadParam {
            key: "expert tensors' ne[2]".into(),
            value: n_expert.to_string(),
            why: "more experts than a u32 counts".into(),
        })?;
        let used = file.metadata().get_u64(&used_key).ok_or(Error::MissingKey { key: used_key.clone() })?;
        if used == 0 || used > u64::from(n_expert) {
            return Err(Error::BadParam {
                key: used_key,
                value: used.to_string(),
                why: format!("must be in 1..={n_expert} (the experts of a layer)"),
            });
        }
        let layers = by_layer
            .into_iter()
            .map(|(layer, mut tensors)| {
                tensors.sort_by_key(|t| (t.shard, t.offset));
                MoeLayer { layer, n_expert: n_of_layer[&layer] as u32, tensors }
            })
            .collect();
        let dense = (0..file.tensors.len()).filter(|&i| !is_expert[i] && !is_nextn[i]).collect();
        let nextn = (0..file.tensors.len()).filter(|&i| is_nextn[i]).collect();
        Ok(Self { file, arch, n_expert, n_expert_used: used as u32, layers, dense, nextn })
    }

    /// Bytes of all dense (non-expert) tensors.
    pub fn dense_bytes(&self) -> u64 {
        self.dense.iter().map(|&i| self.file.tensors[i].size).sum()
    }

    /// Bytes of all experts of all layers.
    pub fn expert_bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.entry_bytes() * u64::from(l.n_expert)).sum()
    }

    /// The worst-case bytes one token can route to at top-`k`: `Σ_layers min(k, n_expert) × entry`.
    pub fn cycle_bytes(&self, k: u32) -> u64 {
        self.layers.iter().map(|l| u64::from(k.min(l.n_expert)) * l.entry_bytes()).sum()
    }

    /// Parameters (weights) of the whole model: every tensor's element count (the NextN/MTP
    /// blocks' included).
    pub fn n_params(&self) -> u64 {
        self.file.tensors.iter().map(|t| t.dims.iter().product::<u64>()).sum()
    }

    /// Parameters of the NextN/MTP blocks, which a decode never reads.
    pub fn nextn_params(&self) -> u64 {
        self.nextn.iter().map(|&i| self.file.tensors[i].dims.iter().product::<u64>()).sum()
    }

    /// Parameters one token computes with at top-`k`: every dense tensor plus `min(k, n_expert)`
    /// routed experts per MoE layer (the NextN/MTP blocks not at all) (per-expert side tensors such as biases counted whole: an
    /// upper bound by their share).
    pub fn active_params(&self, k: u32) -> u64 {
        let dense: u64 = self.dense.iter().map(|&i| self.file.tensors[i].dims.iter().product::<u64>()).sum();
        let experts: u64 = self
            .layers
            .iter()
            .map(|l| {
                let per: u64 =
                    l.tensors.iter().filter_map(|t| self.file.tensor(&t.name)).map(|t| t.dim(0) * t.dim(1)).sum();
                u64::from(k.min(l.n_expert)) * per
            })
            .sum();
        dense + experts
    }

    /// `<arch>.block_count`, where the file has it.
    pub fn n_layer(&self) -> Option<u64> {
        self.file.metadata().get_u64(&format!("{}.block_count", self.arch))
    }

    /// The MoE layer numbered `layer` (the model's layer number), if it has experts.
    pub fn layer(&self, layer: u32) -> Option<&MoeLayer> {
        self.layers.binary_search_by_key(&layer, |l| l.layer).ok().map(|i| &self.layers[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expert_tensor_names() {
        assert_eq!(expert_tensor_of("blk.3.ffn_up_exps.weight"), Some((3, Proj::Up)));
        assert_eq!(expert_tensor_of("blk.12.ffn_gate_up_exps.weight"), Some((12, Proj::GateUp)));
        assert_eq!(expert_tensor_of("blk.0.ffn_down_exps.weight"), Some((0, Proj::Down)));
        for not in [
            "blk.3.ffn_up_exps.bias",
            "blk.3.ffn_up_shexp.weight",
            "blk.x.ffn_up_exps.weight",
            "blk.-1.ffn_up_exps.weight",
            "blk.3.ffn_up_chexps.weight",
            "output.weight",
            "blk.3.ffn_gate_inp.weight",
        ] {
            assert_eq!(expert_tensor_of(not), None, "{not}");
        }
    }
}
