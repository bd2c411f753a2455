//! The model file mapped into memory, and the experts served straight from that mapping
//! (the resident provider).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::Arc;

use super::{DenseSource, Error, ExpertProvider, Result, Stack};
use crate::gguf::GgufModel;
use crate::model::{ModelIndex, MoeLayer, Proj};

/// Every shard of a model mapped read-only (`MAP_PRIVATE`, `PROT_READ`).
#[derive(Debug)]
pub struct Mapping {
    maps: Vec<Map>,
}

#[derive(Debug)]
struct Map {
    ptr: NonNull<u8>,
    len: usize,
    path: PathBuf,
}

// SAFETY: the mappings are read-only for their whole life and unmapped only on drop, so
// sharing or moving the pointers between threads cannot race.
unsafe impl Send for Mapping {}
// SAFETY: as above: nothing writes through them.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Map every shard of `model`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be opened or mapped.
    pub fn open(model: &GgufModel) -> Result<Self> {
        let mut maps = Vec::with_capacity(model.shards.len());
        for shard in &model.shards {
            let io = |source| Error::Io { path: shard.path.clone(), source };
            let file = File::open(&shard.path).map_err(io)?;
            let len = usize::try_from(file.metadata().map_err(io)?.len()).unwrap_or(usize::MAX);
            if (len as u64) < shard.header.file_len {
                return Err(Error::Truncated {
                    path: shard.path.clone(),
                    len: len as u64,
                    want: shard.header.file_len,
                });
            }
            // SAFETY: a fresh read-only private mapping of an open file of `len` bytes; the
            // kernel picks the address. The fd may be closed afterwards.
            let ptr = unsafe {
                libc::mmap(std::ptr::null_mut(), len.max(1), libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0)
            };
            if ptr == libc::MAP_FAILED {
                return Err(io(std::io::Error::last_os_error()));
            }
            let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io(std::io::Error::other("mmap returned null")))?;
            maps.push(Map { ptr, len, path: shard.path.clone() });
        }
        Ok(Self { maps })
    }

    /// The address of `len` bytes at `offset` of shard `shard`.
    ///
    /// # Errors
    /// [`Error::Truncated`] if the range is not inside the mapped file.
    pub fn ptr(&self, shard: usize, offset: u64, len: u64) -> Result<*const u8> {
        let m = &self.maps[shard];
        match offset.checked_add(len) {
            Some(end) if end <= m.len as u64 => {
                // SAFETY: offset + len lies within the mapping (checked just above).
                Ok(unsafe { m.ptr.as_ptr().add(offset as usize) })
            }
            _ => Err(Error::Truncated { path: m.path.clone(), len: m.len as u64, want: offset.saturating_add(len) }),
        }
    }
}

impl Mapping {
    /// Read every page of `len` bytes at `offset` of shard `shard` once, so that they are in
    /// the page cache and mapped (`--dense-weights warm`). Returns the bytes touched.
    ///
    /// # Errors
    /// [`Error::Truncated`] if the range is outside the file.
    pub fn touch(&self, shard: usize, offset: u64, len: u64) -> Result<u64> {
        let p = self.ptr(shard, offset, len)?;
        // SAFETY: MADV_WILLNEED on the page-aligned span of a live read-only mapping only
        // schedules read-ahead.
        unsafe {
            let start = (p as usize) & !4095;
            libc::madvise(start as *mut _, len as usize + (p as usize - start), libc::MADV_WILLNEED);
        }
        let mut sum = 0u8;
        let mut i = 0u64;
        while i < len {
            // SAFETY: i < len and [p, p + len) is inside the mapping (checked by ptr).
            sum = sum.wrapping_add(unsafe { std::ptr::read_volatile(p.add(i as usize)) });
            i += 4096;
        }
        std::hint::black_box(sum);
        Ok(len)
    }
}

// SAFETY: Mapping::ptr checks the range against the mapping, which is read-only and lives as
// long as the Mapping.
unsafe impl DenseSource for Mapping {
    fn ptr(&self, shard: usize, offset: u64, len: u64) -> Result<*const u8> {
        Mapping::ptr(self, shard, offset, len)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: we mapped exactly this range in `open` and nothing refers to it any
            // more: every user holds an Arc to this mapping.
            unsafe { libc::munmap(m.ptr.as_ptr().cast(), m.len.max(1)) };
        }
    }
}

/// Experts served from the mapped file: what a model that fits in RAM runs on.
#[derive(Debug)]
pub struct ResidentExperts {
    map: Arc<Mapping>,
    layers: Vec<MoeLayer>,
}

impl ResidentExperts {
    /// Experts of `index`, read through `map`.
    pub fn new(index: &ModelIndex, map: Arc<Mapping>) -> Self {
        Self { map, layers: index.layers.clone() }
    }
}

// SAFETY: the pointers are into the read-only mapping this provider holds an Arc to, so they
// stay valid and unwritten for the provider's life, which is longer than any acquire/release.
unsafe impl ExpertProvider for ResidentExperts {
    fn acquire(&mut self, layer: u32, experts: &[u32], out: &mut Vec<[*const u8; 3]>) -> Result<()> {
        let l = &self.layers[layer as usize];
        out.clear();
        for &e in experts {
            let mut p = [std::ptr::null(); 3];
            for (i, t) in l.tensors.iter().enumerate() {
                let slot = match t.proj {
                    Proj::Gate => 0,
                    Proj::Up => 1,
                    Proj::Down => 2,
                    Proj::GateUp => return Err(Error::Unsupported("fused gate_up experts".into())),
                };
                let r = l.range(i, e);
                p[slot] = self.map.ptr(r.shard, r.offset, r.len)?;
            }
            out.push(p);
        }
        Ok(())
    }

    fn release(&mut self, _layer: u32) {}

    fn stacks(&self, layer: u32) -> Option<[Stack; 3]> {
        let l = self.layers.get(layer as usize)?;
        let mut st = [Stack { base: std::ptr::null(), stride: 1, count: 0 }; 3];
        for t in &l.tensors {
            let which = match t.proj {
                Proj::Gate => 0,
                Proj::Up => 1,
                Proj::Down => 2,
                Proj::GateUp => return None,
            };
            let all = t.bytes_per_expert.checked_mul(u64::from(l.n_expert))?;
            let base = self.map.ptr(t.shard, t.offset, all).ok()?;
            st[which] = Stack { base, stride: t.bytes_per_expert as usize, count: l.n_expert as usize };
        }
        Some(st)
    }
}
