//! Writing GGUF v3 headers. The tensor data itself is streamed by the caller, tensor by
//! tensor in header order, each starting at its aligned offset (see [`HeaderWriter::layout`]).

use super::value::{Metadata, Value, ValueType};
use super::{DEFAULT_ALIGNMENT, MAGIC};
use crate::ggml::GgmlType;

/// `n` rounded up to a multiple of `align` (a power of two), or `None` on overflow.
pub fn align_up(n: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    n.checked_add(align - 1).map(|v| v & !(align - 1))
}

/// One tensor of a header being written, with its place in the data section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSlot {
    pub name: String,
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    /// Offset from the start of the data section.
    pub rel_offset: u64,
    /// Bytes of data.
    pub size: u64,
}

/// Builds a GGUF v3 header: metadata in insertion order, tensors laid out back to back at
/// the file's alignment in the order they were added.
#[derive(Debug, Default)]
pub struct HeaderWriter {
    metadata: Metadata,
    tensors: Vec<TensorSlot>,
    data_len: u64,
}

impl HeaderWriter {
    /// An empty header.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a key/value.
    ///
    /// # Panics
    /// If the key is already present (a bug in the caller's table).
    pub fn kv(&mut self, key: &str, value: Value) -> &mut Self {
        assert!(self.metadata.insert(key, value), "duplicate GGUF key {key}");
        self
    }

    /// Adds a tensor after the previous ones and returns its slot.
    ///
    /// # Panics
    /// If the row is not a whole number of blocks of `ty` (a bug in the caller's table).
    pub fn tensor(&mut self, name: &str, dims: &[u64], ty: GgmlType) -> &TensorSlot {
        assert!(dims[0] % ty.block_size() as u64 == 0, "{name}: row {} not a multiple of {ty} blocks", dims[0]);
        let size = dims.iter().product::<u64>() / ty.block_size() as u64 * ty.type_size() as u64;
        let rel_offset = align_up(self.data_len, DEFAULT_ALIGNMENT).expect("data section fits in u64");
        self.data_len = rel_offset + size;
        self.tensors.push(TensorSlot { name: name.to_string(), dims: dims.to_vec(), ty, rel_offset, size });
        self.tensors.last().expect("just pushed")
    }

    /// The tensors in data order.
    pub fn layout(&self) -> &[TensorSlot] {
        &self.tensors
    }

    /// Bytes of the data section (up to the end of the last tensor).
    pub fn data_len(&self) -> u64 {
        self.data_len
    }

    /// The metadata written so far.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The header, padded to the alignment: the data section starts right after it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        b.extend_from_slice(&(self.metadata.len() as u64).to_le_bytes());
        for (k, v) in self.metadata.iter() {
            put_str(&mut b, k);
            b.extend_from_slice(&(v.ty() as u32).to_le_bytes());
            put_value(&mut b, v);
        }
        for t in &self.tensors {
            put_str(&mut b, &t.name);
            b.extend_from_slice(&(t.dims.len() as u32).to_le_bytes());
            for d in &t.dims {
                b.extend_from_slice(&d.to_le_bytes());
            }
            b.extend_from_slice(&(t.ty as u32).to_le_bytes());
            b.extend_from_slice(&t.rel_offset.to_le_bytes());
        }
        let padded = align_up(b.len() as u64, DEFAULT_ALIGNMENT).expect("header fits") as usize;
        b.resize(padded, 0);
        b
    }
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u64).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
}

fn put_value(b: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U8(x) => b.push(*x),
        Value::I8(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::U16(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::I16(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::Bool(x) => b.push(u8::from(*x)),
        Value::String(s) => put_str(b, s),
        Value::Array(ty, items) => {
            assert!(*ty != ValueType::Array, "nested GGUF arrays are not allowed");
            b.extend_from_slice(&(*ty as u32).to_le_bytes());
            b.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items {
                debug_assert_eq!(item.ty(), *ty);
                put_value(b, item);
            }
        }
        Value::U64(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => b.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => b.extend_from_slice(&x.to_le_bytes()),
    }
}
