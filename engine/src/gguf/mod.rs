//! GGUF files: a header parser for untrusted input, a writer, and split-model resolution.
//!
//! The parser is our own Rust, not ggml's `gguf_init_from_file` through FFI, for three reasons.
//! A model file is untrusted input: every count, string length, array length and tensor
//! extent is checked against the bytes actually left in the file *before* anything is allocated
//! or read, so a hostile header can neither make us allocate gigabytes nor read past the end.
//! A malformed file must become a typed [`Error`] naming what is wrong, never a C `abort()` or a
//! `NULL` with a line on stderr. And the parser has no FFI at all (it builds with the engine's
//! `ffi` feature off), so cargo-fuzz can drive it under the sanitizer without linking llama.cpp.
//!
//! Only the header is parsed, through a buffered reader: the tensor data (gigabytes) is never
//! touched here. Each tensor is resolved to an absolute file offset and size that the caller
//! (the model index, the streamer) then reads on its own terms.

mod reader;
mod split;
mod value;
mod writer;

pub use reader::{file_kind, parse, parse_file, GgufHeader, TensorInfo, MAX_TENSOR_NAME};
pub use split::{model_files, open_model, shard_paths, split_name, GgufModel, ResolvedTensor, Shard};
pub use value::{Metadata, Value, ValueType};
pub use writer::{align_up, HeaderWriter, TensorSlot};

use crate::ggml::GgmlType;

/// The magic bytes at the start of every GGUF file.
pub const MAGIC: [u8; 4] = *b"GGUF";
/// Tensor data alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// What went wrong reading a GGUF file. Offsets are byte offsets in the file being parsed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the file failed at the OS level.
    #[error("gguf: {op} {path}: {err}")]
    Io { op: &'static str, path: String, err: std::io::Error },
    /// The file ended before a fixed-size field could be read.
    #[error("gguf: truncated header: {what} at offset {offset} needs {need} bytes, file ends at {file_len}")]
    Truncated { what: String, offset: u64, need: u64, file_len: u64 },
    /// The first four bytes are not `GGUF`.
    #[error("gguf: bad magic {found:02x?} (expected \"GGUF\"): not a GGUF file")]
    BadMagic { found: [u8; 4] },
    /// A version this parser does not read (1 used 32-bit counts; only 2 and 3 are supported).
    #[error("gguf: unsupported version {version} (supported: 2, 3)")]
    UnsupportedVersion { version: u32 },
    /// A count (tensors, key/values, array elements) that cannot fit in the bytes left: the file
    /// is truncated, or the count is corrupt.
    #[error("gguf: {what} count {count} at offset {offset} needs at least {min_bytes} bytes, but only {remaining} are left: the file is truncated or corrupt")]
    AbsurdCount { what: String, count: u64, offset: u64, min_bytes: u128, remaining: u64 },
    /// A string whose declared length runs past the end of the file.
    #[error(
        "gguf: {what}: string of {len} bytes at offset {offset} runs past the end of the file ({remaining} bytes left)"
    )]
    StringPastEof { what: String, len: u64, offset: u64, remaining: u64 },
    /// A string that is not UTF-8.
    #[error("gguf: {what}: string at offset {offset} is not valid UTF-8")]
    BadUtf8 { what: String, offset: u64 },
    /// A metadata value type id that GGUF does not define.
    #[error("gguf: key `{key}`: unknown value type {ty} at offset {offset}")]
    UnknownValueType { key: String, ty: u32, offset: u64 },
    /// An array nested in an array (GGUF does not allow it).
    #[error("gguf: key `{key}`: nested arrays are not supported")]
    NestedArray { key: String },
    /// The same key twice.
    #[error("gguf: duplicate key `{key}`")]
    DuplicateKey { key: String },
    /// A key with the wrong value type (e.g. `general.alignment` not a u32).
    #[error("gguf: key `{key}` has type {found}, expected {expected}")]
    KeyType { key: String, found: String, expected: &'static str },
    /// `general.alignment` zero or not a power of two.
    #[error("gguf: general.alignment = {alignment} is not a power of two")]
    BadAlignment { alignment: u64 },
    /// A tensor name too long for ggml (which limits names to 63 bytes).
    #[error("gguf: tensor name `{name}` is {len} bytes, ggml's limit is {max}")]
    TensorNameTooLong { name: String, len: usize, max: usize },
    /// The same tensor name twice.
    #[error("gguf: duplicate tensor `{name}`")]
    DuplicateTensor { name: String },
    /// A tensor with 0 or more than 4 dimensions, or a negative or overflowing dimension.
    #[error("gguf: tensor `{name}`: bad shape {dims:?}: {why}")]
    BadShape { name: String, dims: Vec<i64>, why: &'static str },
    /// A tensor element type this build does not know.
    #[error("gguf: tensor `{name}`: unknown ggml type {ty}")]
    UnknownType { name: String, ty: u32 },
    /// A tensor's row length is not a whole number of its type's blocks.
    #[error("gguf: tensor `{name}`: row of {ne0} elements is not a multiple of {ty}'s block of {block}")]
    PartialBlock { name: String, ne0: i64, ty: GgmlType, block: usize },
    /// A tensor data offset not aligned to the file's alignment.
    #[error("gguf: tensor `{name}`: data offset {offset} is not a multiple of the alignment {alignment}")]
    MisalignedTensor { name: String, offset: u64, alignment: u64 },
    /// A path that is not a regular file (a directory, a FIFO, a device): refused before it is
    /// opened, since opening a FIFO waits for a writer.
    #[error("gguf: {path} is {kind}, not a model file")]
    NotAFile { path: String, kind: &'static str },
    /// A tensor's data that does not follow the previous tensor's (a gap or an overlap), which
    /// ggml's own reader refuses.
    #[error("gguf: tensor `{name}` has data offset {offset}, expected {expected} (each tensor's data must follow the previous one's, as ggml requires)")]
    TensorLayout { name: String, offset: u64, expected: u64 },
    /// A tensor whose data (offset + size) runs past the end of its file.
    #[error("gguf: tensor `{name}`: data [{start}, {end}) runs past the end of the file ({file_len} bytes)")]
    TensorPastEof { name: String, start: u64, end: u128, file_len: u64 },
    /// Size arithmetic that overflows 64 bits.
    #[error("gguf: {what}: size arithmetic overflows")]
    Overflow { what: String },
    /// A split model whose shard file is not there.
    #[error("gguf: split model: shard {index} of {count} is missing: {path}")]
    MissingShard { index: u32, count: u32, path: String },
    /// A split model whose split keys are inconsistent (or a shard passed that is not the first).
    #[error("gguf: split model {path}: {why}")]
    BadSplit { path: String, why: String },
}

/// Result alias of the GGUF layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The fuzz target's body (`fuzz/fuzz_targets/gguf_index.rs`), here so that the regression test
/// over the fuzz corpus (`engine/tests/fuzz_corpus.rs`) runs exactly the same checks: parsing
/// and indexing arbitrary bytes may fail, but never panic, abort or allocate without bound, and
/// whatever they accept is self-consistent (every tensor and every expert range inside the file).
#[doc(hidden)]
pub fn fuzz_check(data: &[u8]) {
    let Ok(header) = parse(data, data.len() as u64) else { return };
    for t in &header.tensors {
        assert!(t.offset >= header.data_offset);
        assert!(u128::from(t.offset) + u128::from(t.size) <= data.len() as u128);
    }
    let Ok(idx) = crate::model::ModelIndex::new(GgufModel::single("fuzz.gguf".into(), header)) else { return };
    for layer in &idx.layers {
        for e in 0..layer.n_expert {
            for (_, r) in layer.ranges(e) {
                assert!(u128::from(r.offset) + u128::from(r.len) <= data.len() as u128);
            }
        }
    }
    let _ = (idx.dense_bytes(), idx.expert_bytes(), idx.cycle_bytes(8), idx.widest_layer(), idx.types_by_kind());
}
