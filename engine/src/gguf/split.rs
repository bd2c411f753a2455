//! Models in one file or split into shards `NAME-00001-of-0000N.gguf` (llama.cpp's
//! `gguf-split` layout: the first shard holds the model's metadata, every shard holds
//! `split.no`, `split.count`, and some of the tensors). The user passes the first shard;
//! every tensor resolves to (shard, absolute offset, size).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::reader::{parse_file, GgufHeader, TensorInfo};
use super::value::Metadata;
use super::{Error, Result};
use crate::ggml::GgmlType;

/// The file name llama.cpp gives shard `index` (0-based) of `count`: `PREFIX-0000i-of-0000N.gguf`.
pub fn split_name(prefix: &str, index: u32, count: u32) -> String {
    format!("{prefix}-{:05}-of-{:05}.gguf", index + 1, count)
}

/// The paths of all `count` shards of the split model whose first shard is `first`.
///
/// # Errors
/// [`Error::BadSplit`] if `first` is not named like a first shard of `count`.
pub fn shard_paths(first: &Path, count: u32) -> Result<Vec<PathBuf>> {
    let bad = |why: String| Error::BadSplit { path: first.display().to_string(), why };
    let name = first.file_name().and_then(|n| n.to_str()).ok_or_else(|| bad("file name is not UTF-8".into()))?;
    let suffix = format!("-00001-of-{count:05}.gguf");
    let prefix = name.strip_suffix(&suffix).ok_or_else(|| {
        bad(format!("split.count is {count}, so the first shard must be named PREFIX{suffix} (pass the first shard)"))
    })?;
    Ok((0..count).map(|i| first.with_file_name(split_name(prefix, i, count))).collect())
}

/// One shard file of a model.
#[derive(Clone, Debug)]
pub struct Shard {
    pub path: PathBuf,
    pub header: GgufHeader,
}

/// A tensor of a model, located in one of its shards.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedTensor {
    pub name: String,
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    /// Index into [`GgufModel::shards`].
    pub shard: usize,
    /// Absolute offset of the data in that shard's file.
    pub offset: u64,
    /// Bytes of data.
    pub size: u64,
}

impl ResolvedTensor {
    fn new(t: &TensorInfo, shard: usize) -> Self {
        Self { name: t.name.clone(), dims: t.dims.clone(), ty: t.ty, shard, offset: t.offset, size: t.size }
    }

    /// Dimension `i`, 1 where the tensor has fewer.
    pub fn dim(&self, i: usize) -> u64 {
        self.dims.get(i).copied().unwrap_or(1)
    }

    /// Bytes of one row (`dims[0]` elements).
    pub fn row_bytes(&self) -> u64 {
        self.dims[0] / self.ty.block_size() as u64 * self.ty.type_size() as u64
    }
}

/// A whole model: its shards, the first shard's metadata, and every tensor resolved.
#[derive(Clone, Debug)]
pub struct GgufModel {
    pub shards: Vec<Shard>,
    pub tensors: Vec<ResolvedTensor>,
}

impl GgufModel {
    /// A one-file model from an already parsed header (the fuzz target builds models this way).
    pub fn single(path: PathBuf, header: GgufHeader) -> Self {
        let tensors = header.tensors.iter().map(|t| ResolvedTensor::new(t, 0)).collect();
        Self { shards: vec![Shard { path, header }], tensors }
    }

    /// The model's metadata (the first shard's).
    pub fn metadata(&self) -> &Metadata {
        &self.shards[0].header.metadata
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&ResolvedTensor> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// Total bytes of all shard files.
    pub fn file_bytes(&self) -> u64 {
        self.shards.iter().map(|s| s.header.file_len).sum()
    }
}

/// Opens the model whose (first) file is `path`, following its shards if it is split.
///
/// # Errors
/// Any header error of any shard; [`Error::MissingShard`] naming the first absent shard file;
/// [`Error::BadSplit`] if the split keys disagree; [`Error::DuplicateTensor`] across shards.
pub fn open_model(path: &Path) -> Result<GgufModel> {
    let first = parse_file(path)?;
    let count = split_key(&first, path, "split.count")?.unwrap_or(1);
    let bad = |why: String| Error::BadSplit { path: path.display().to_string(), why };
    if count == 0 {
        return Err(bad("split.count is 0".into()));
    }
    let no = split_key(&first, path, "split.no")?.unwrap_or(0);
    if no != 0 {
        return Err(bad(format!("this is shard {} of {count}: pass the first shard", no + 1)));
    }
    let paths = if count == 1 { vec![path.to_path_buf()] } else { shard_paths(path, count)? };
    if let Some(missing) = paths.iter().position(|p| !p.exists()) {
        return Err(Error::MissingShard {
            index: missing as u32 + 1,
            count,
            path: paths[missing].display().to_string(),
        });
    }
    let mut shards = vec![Shard { path: paths[0].clone(), header: first }];
    for (i, p) in paths.iter().enumerate().skip(1) {
        let header = parse_file(p)?;
        let (sno, scount) = (split_key(&header, p, "split.no")?, split_key(&header, p, "split.count")?);
        if sno != Some(i as u32) || scount != Some(count) {
            return Err(Error::BadSplit {
                path: p.display().to_string(),
                why: format!(
                    "expected split.no={i} split.count={count}, found split.no={} split.count={}",
                    sno.map_or("(absent)".into(), |n| n.to_string()),
                    scount.map_or("(absent)".into(), |n| n.to_string())
                ),
            });
        }
        shards.push(Shard { path: p.clone(), header });
    }
    let mut tensors = Vec::new();
    let mut names = HashSet::new();
    for (i, s) in shards.iter().enumerate() {
        for t in &s.header.tensors {
            if !names.insert(t.name.as_str()) {
                return Err(Error::DuplicateTensor { name: t.name.clone() });
            }
            tensors.push(ResolvedTensor::new(t, i));
        }
    }
    if count > 1 {
        if let Some(n) = shards[0].header.metadata.get_u64("split.tensors.count") {
            if n != tensors.len() as u64 {
                return Err(bad(format!("split.tensors.count is {n} but the shards hold {} tensors", tensors.len())));
            }
        }
    }
    Ok(GgufModel { shards, tensors })
}

/// The files of the model whose first file is `path` (every shard of a split model), as far as
/// its header says; just `path` when the header cannot be read. For refusing an output path
/// that would overwrite the model, before the model is loaded.
pub fn model_files(path: &Path) -> Vec<PathBuf> {
    let count = parse_file(path).ok().and_then(|h| split_key(&h, path, "split.count").ok().flatten()).unwrap_or(1);
    if count > 1 {
        if let Ok(paths) = shard_paths(path, count) {
            return paths;
        }
    }
    vec![path.to_path_buf()]
}

fn split_key(h: &GgufHeader, path: &Path, key: &str) -> Result<Option<u32>> {
    match h.metadata.get(key) {
        None => Ok(None),
        Some(v) => v.as_u64().and_then(|n| u32::try_from(n).ok()).map(Some).ok_or_else(|| Error::BadSplit {
            path: path.display().to_string(),
            why: format!("{key} is not a small non-negative integer: {v:?}"),
        }),
    }
}
