//! The GGUF header parser. Every length read from the file is checked against the bytes
//! that remain before anything is allocated for it.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::value::{Metadata, Value, ValueType};
use super::{Error, Result, DEFAULT_ALIGNMENT, MAGIC};
use crate::ggml::GgmlType;

/// ggml's `GGML_MAX_NAME` is 64 including the NUL.
pub const MAX_TENSOR_NAME: usize = 63;
/// Bytes of the smallest possible tensor info: name length, n_dims, one dim, type, offset.
const MIN_TENSOR_INFO: u64 = 8 + 4 + 8 + 4 + 8;
/// Bytes of the smallest possible key/value: key length, type, a one-byte value.
const MIN_KV: u64 = 8 + 4 + 1;
/// Upper bound on any count (tensors, keys, array elements), whatever the file length: an
/// in-memory [`Value`] is up to 40x its on-disk size, so a count that fits a huge file must
/// still not be allowed to make us allocate for it. Real models stay far below (the largest
/// vocabularies are ~260k tokens, the largest merge lists ~500k, tensors in the thousands).
pub const MAX_COUNT: u64 = 1 << 24;
/// Initial capacity reserved for a counted list; beyond it vectors grow only as items are read.
const INITIAL_CAPACITY: u64 = 1024;

/// One tensor as the header describes it, with its data located in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// Dimensions, innermost first (ggml order), 1 to 4 of them.
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    /// Offset of the data relative to the start of the data section, as stored.
    pub rel_offset: u64,
    /// Absolute file offset of the data.
    pub offset: u64,
    /// Bytes of data.
    pub size: u64,
}

impl TensorInfo {
    /// Number of elements.
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Bytes of one row (`dims[0]` elements).
    pub fn row_bytes(&self) -> u64 {
        self.dims[0] / self.ty.block_size() as u64 * self.ty.type_size() as u64
    }

    /// Dimension `i`, 1 where the tensor has fewer.
    pub fn dim(&self, i: usize) -> u64 {
        self.dims.get(i).copied().unwrap_or(1)
    }
}

/// A parsed GGUF header: version, metadata, tensor infos and where the data starts.
#[derive(Clone, Debug)]
pub struct GgufHeader {
    pub version: u32,
    pub metadata: Metadata,
    pub tensors: Vec<TensorInfo>,
    pub alignment: u64,
    /// Absolute offset of the tensor data section.
    pub data_offset: u64,
    /// Length of the file the header was parsed from.
    pub file_len: u64,
}

impl GgufHeader {
    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

/// Parses the header of the GGUF file at `path` with buffered reads.
///
/// # Errors
/// [`Error::Io`] if the file cannot be opened or read; any other variant for a malformed header.
pub fn parse_file(path: &Path) -> Result<GgufHeader> {
    let io = |op| move |err| Error::Io { op, path: path.display().to_string(), err };
    // Look before opening: opening a FIFO blocks until a writer comes, a device may be endless.
    let meta = std::fs::metadata(path).map_err(io("opening"))?;
    if !meta.is_file() {
        return Err(Error::NotAFile { path: path.display().to_string(), kind: file_kind(&meta) });
    }
    let file = File::open(path).map_err(io("opening"))?;
    let file_len = file.metadata().map_err(io("stat"))?.len();
    parse(BufReader::with_capacity(1 << 20, file), file_len).map_err(|e| match e {
        Error::Io { op, err, .. } => Error::Io { op, path: path.display().to_string(), err },
        e => e,
    })
}

/// Parses a GGUF header from `src`, the start of a file of `file_len` bytes.
///
/// # Errors
/// A typed [`Error`] naming what is malformed; [`Error::Io`] (without a path) for read failures.
pub fn parse<R: Read>(src: R, file_len: u64) -> Result<GgufHeader> {
    let mut r = Cursor { src, pos: 0, file_len };
    let magic: [u8; 4] = r.array("magic")?;
    if magic != MAGIC {
        return Err(Error::BadMagic { found: magic });
    }
    let version = r.u32("version")?;
    if version != 2 && version != 3 {
        return Err(Error::UnsupportedVersion { version });
    }
    let n_tensors = r.u64("tensor count")?;
    let n_kv = r.u64("key/value count")?;
    r.check_count("tensor", n_tensors, MIN_TENSOR_INFO)?;
    r.check_count("key/value", n_kv, MIN_KV)?;

    let mut metadata = Metadata::new();
    for _ in 0..n_kv {
        let key = r.string("key")?;
        let ty_off = r.pos;
        let ty_raw = r.u32("value type")?;
        let ty = ValueType::from_raw(ty_raw).ok_or_else(|| Error::UnknownValueType {
            key: key.clone(),
            ty: ty_raw,
            offset: ty_off,
        })?;
        let value = r.value(&key, ty)?;
        if !metadata.insert(key.clone(), value) {
            return Err(Error::DuplicateKey { key });
        }
    }

    let alignment = match metadata.get("general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some(Value::U32(a)) => u64::from(*a),
        Some(v) => {
            return Err(Error::KeyType { key: "general.alignment".into(), found: v.ty().to_string(), expected: "u32" })
        }
    };
    if alignment == 0 || !alignment.is_power_of_two() {
        return Err(Error::BadAlignment { alignment });
    }

    let mut tensors: Vec<TensorInfo> = Vec::with_capacity(n_tensors.min(INITIAL_CAPACITY) as usize);
    let mut names = HashSet::with_capacity(n_tensors.min(INITIAL_CAPACITY) as usize);
    for _ in 0..n_tensors {
        let name = r.string("tensor name")?;
        if name.len() > MAX_TENSOR_NAME {
            return Err(Error::TensorNameTooLong { len: name.len(), name, max: MAX_TENSOR_NAME });
        }
        let n_dims = r.u32("tensor n_dims")?;
        if n_dims == 0 || n_dims > 4 {
            return Err(Error::BadShape { name, dims: vec![], why: "number of dimensions is not 1 to 4" });
        }
        let mut raw_dims = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            raw_dims.push(r.u64("tensor dimension")? as i64);
        }
        let ty_raw = r.u32("tensor type")?;
        let rel_offset = r.u64("tensor offset")?;
        let ty = GgmlType::from_raw(ty_raw).ok_or_else(|| Error::UnknownType { name: name.clone(), ty: ty_raw })?;
        let (dims, size) = tensor_size(&name, &raw_dims, ty)?;
        if rel_offset % alignment != 0 {
            return Err(Error::MisalignedTensor { name, offset: rel_offset, alignment });
        }
        if !names.insert(name.clone()) {
            return Err(Error::DuplicateTensor { name });
        }
        tensors.push(TensorInfo { name, dims, ty, rel_offset, offset: 0, size });
    }

    let data_offset =
        super::align_up(r.pos, alignment).ok_or_else(|| Error::Overflow { what: "data section offset".into() })?;
    // ggml (gguf.cpp) and so llama.cpp require each tensor's data to follow the previous one's,
    // padded to the alignment, in header order: no gaps, no overlaps. Checked here so that every
    // command refuses what llama.cpp would.
    let mut expected = 0u64;
    for t in &tensors {
        if t.rel_offset != expected {
            return Err(Error::TensorLayout { name: t.name.clone(), offset: t.rel_offset, expected });
        }
        expected = super::align_up(t.size, alignment)
            .and_then(|p| expected.checked_add(p))
            .ok_or_else(|| Error::Overflow { what: format!("tensor `{}`: data section size", t.name) })?;
    }
    for t in &mut tensors {
        let start = data_offset.checked_add(t.rel_offset);
        let end = start.map(|s| u128::from(s) + u128::from(t.size));
        match (start, end) {
            (Some(start), Some(end)) if end <= u128::from(file_len) => t.offset = start,
            _ => {
                return Err(Error::TensorPastEof {
                    name: t.name.clone(),
                    start: start.unwrap_or(u64::MAX),
                    end: end.unwrap_or(u128::MAX),
                    file_len,
                })
            }
        }
    }
    Ok(GgufHeader { version, metadata, tensors, alignment, data_offset, file_len })
}

/// Validates a tensor's dimensions and type, and returns its dims and data size in bytes.
fn tensor_size(name: &str, raw: &[i64], ty: GgmlType) -> Result<(Vec<u64>, u64)> {
    let bad = |why| Error::BadShape { name: name.to_string(), dims: raw.to_vec(), why };
    if raw.iter().any(|&d| d < 0) {
        return Err(bad("negative dimension"));
    }
    // ggml keeps element counts in int64.
    let n = raw.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d)).ok_or_else(|| bad("element count overflows"))?;
    let block = ty.block_size() as i64;
    if raw[0] % block != 0 {
        return Err(Error::PartialBlock { name: name.to_string(), ne0: raw[0], ty, block: ty.block_size() });
    }
    let size = ((n / block) as u64)
        .checked_mul(ty.type_size() as u64)
        .ok_or_else(|| Error::Overflow { what: format!("tensor `{name}` size") })?;
    Ok((raw.iter().map(|&d| d as u64).collect(), size))
}

/// A reader that knows its position and how much of the file is left.
struct Cursor<R> {
    src: R,
    pos: u64,
    file_len: u64,
}

impl<R: Read> Cursor<R> {
    fn remaining(&self) -> u64 {
        self.file_len.saturating_sub(self.pos)
    }

    fn fill(&mut self, what: &str, buf: &mut [u8]) -> Result<()> {
        let need = buf.len() as u64;
        if need > self.remaining() {
            return Err(Error::Truncated { what: what.to_string(), offset: self.pos, need, file_len: self.file_len });
        }
        self.src.read_exact(buf).map_err(|err| {
            if err.kind() == std::io::ErrorKind::UnexpectedEof {
                // The file is shorter than its length said (it shrank under us).
                Error::Truncated { what: what.to_string(), offset: self.pos, need, file_len: self.file_len }
            } else {
                Error::Io { op: "reading", path: String::new(), err }
            }
        })?;
        self.pos += need;
        Ok(())
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.fill(what, &mut b)?;
        Ok(b)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// Fails with [`Error::AbsurdCount`] unless `count` items of at least `min` bytes fit in
    /// what is left of the file and `count` is at most [`MAX_COUNT`].
    fn check_count(&self, what: &str, count: u64, min: u64) -> Result<()> {
        let min_bytes = u128::from(count) * u128::from(min);
        if min_bytes > u128::from(self.remaining()) || count > MAX_COUNT {
            return Err(Error::AbsurdCount {
                what: what.to_string(),
                count,
                offset: self.pos,
                min_bytes,
                remaining: self.remaining(),
            });
        }
        Ok(())
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let offset = self.pos;
        let len = self.u64(what)?;
        if len > self.remaining() {
            return Err(Error::StringPastEof { what: what.to_string(), len, offset, remaining: self.remaining() });
        }
        // Bounded by the file length just checked.
        let mut buf = vec![0u8; len as usize];
        self.fill(what, &mut buf)?;
        String::from_utf8(buf).map_err(|_| Error::BadUtf8 { what: what.to_string(), offset })
    }

    fn value(&mut self, key: &str, ty: ValueType) -> Result<Value> {
        Ok(match ty {
            ValueType::U8 => Value::U8(u8::from_le_bytes(self.array(key)?)),
            ValueType::I8 => Value::I8(i8::from_le_bytes(self.array(key)?)),
            ValueType::U16 => Value::U16(u16::from_le_bytes(self.array(key)?)),
            ValueType::I16 => Value::I16(i16::from_le_bytes(self.array(key)?)),
            ValueType::U32 => Value::U32(u32::from_le_bytes(self.array(key)?)),
            ValueType::I32 => Value::I32(i32::from_le_bytes(self.array(key)?)),
            ValueType::F32 => Value::F32(f32::from_le_bytes(self.array(key)?)),
            ValueType::Bool => Value::Bool(u8::from_le_bytes(self.array(key)?) != 0),
            ValueType::U64 => Value::U64(u64::from_le_bytes(self.array(key)?)),
            ValueType::I64 => Value::I64(i64::from_le_bytes(self.array(key)?)),
            ValueType::F64 => Value::F64(f64::from_le_bytes(self.array(key)?)),
            ValueType::String => Value::String(self.string(key)?),
            ValueType::Array => {
                let ty_off = self.pos;
                let raw = self.u32(key)?;
                let elem = ValueType::from_raw(raw).ok_or_else(|| Error::UnknownValueType {
                    key: key.to_string(),
                    ty: raw,
                    offset: ty_off,
                })?;
                if elem == ValueType::Array {
                    return Err(Error::NestedArray { key: key.to_string() });
                }
                let n = self.u64(key)?;
                self.check_count(&format!("array `{key}` element"), n, elem.min_size())?;
                // n elements of at least min_size bytes each fit in the file and n <= MAX_COUNT;
                // reserve little up front so memory follows the bytes actually read.
                let mut items = Vec::with_capacity(n.min(INITIAL_CAPACITY) as usize);
                for _ in 0..n {
                    items.push(self.value(key, elem)?);
                }
                Value::Array(elem, items)
            }
        })
    }
}

/// What a path that is not a regular file is, for messages.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_char_device() {
            return "a character device";
        }
    }
    "not a regular file"
}
