//! Where the dense weights (everything but the routed experts) live: on the file's mapping
//! ([`Mapping`], `--dense-weights mmap`, faulted in from the page cache on first use), on the
//! mapping with every page read once at load (`warm`), or read once with O_DIRECT into
//! anonymous memory ([`AnonDense`], `anon`, the default when streaming: the kernel cannot drop
//! those pages and refault them from flash mid-decode, and they count as RSS, not page cache).
//! [`DenseWeights::load`] picks one for an index; the decoder sees only [`DenseSource`].

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use bmoe_uring_io::{align, BufferPool, EngineOptions, FileId, ReadEngine, Request};

use crate::error::{Error, Result};
use crate::gguf::GgufModel;
use crate::model::ModelIndex;
use crate::provider::DenseSource;

/// Where the dense weights live (`--dense-weights`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DenseWeights {
    /// On the file's mapping, faulted in on first use.
    Mmap,
    /// On the mapping, every page read once at load.
    Warm,
    /// Read once with the read engine (O_DIRECT where the file allows) into anonymous memory.
    #[default]
    Anon,
}

impl DenseWeights {
    /// The name `--dense-weights` takes.
    pub fn name(self) -> &'static str {
        match self {
            DenseWeights::Mmap => "mmap",
            DenseWeights::Warm => "warm",
            DenseWeights::Anon => "anon",
        }
    }

    /// The dense tensors of `index` where this says, `io` reading them for `Anon`;
    /// `progress(bytes done, bytes in all)` as they are read (or touched, for `Warm`).
    ///
    /// # Errors
    /// The read engine's (file, offset, length) for `Anon`; [`Error::File`] or
    /// [`Error::Truncated`] for a shard that cannot be mapped.
    pub fn load(
        self,
        index: &ModelIndex,
        io: EngineOptions,
        progress: &dyn Fn(u64, u64),
    ) -> Result<Arc<dyn DenseSource>> {
        Ok(match self {
            DenseWeights::Anon => Arc::new(AnonDense::load(index, io, progress)?),
            DenseWeights::Mmap | DenseWeights::Warm => {
                let map = Mapping::open(&index.file)?;
                if self == DenseWeights::Warm {
                    let total: u64 = index.dense.iter().map(|&i| index.file.tensors[i].size).sum();
                    let mut done = 0;
                    for &i in &index.dense {
                        let t = &index.file.tensors[i];
                        map.touch(t.shard, t.offset, t.size)?;
                        done += t.size;
                        progress(done, total);
                    }
                }
                Arc::new(map)
            }
        })
    }
}

/// Every shard of a model mapped read-only and private (`MAP_PRIVATE`, `PROT_READ`).
#[derive(Debug)]
pub struct Mapping {
    maps: Vec<(memmap2::Mmap, PathBuf, Option<usize>)>,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        for (_, _, g) in &self.maps {
            if let Some(g) = g {
                guard::unregister(*g);
            }
        }
    }
}

impl Mapping {
    /// Map every shard of `model`.
    ///
    /// # Errors
    /// [`Error::File`] naming the file that could not be opened or mapped; [`Error::Truncated`]
    /// if a shard is shorter than its header says.
    pub fn open(model: &GgufModel) -> Result<Self> {
        let mut maps = Vec::with_capacity(model.shards.len());
        for shard in &model.shards {
            let io = |err| Error::File { path: shard.path.clone(), err };
            let file = File::open(&shard.path).map_err(io)?;
            let len = file.metadata().map_err(io)?.len();
            if len < shard.header.file_len {
                return Err(Error::Truncated { path: shard.path.clone(), len, want: shard.header.file_len });
            }
            // SAFETY: a private read-only mapping; nothing of ours writes the file. Another
            // process truncating the file under the mapping makes later reads of the lost pages
            // fault (the hardening notes cover that case); the bytes are never assumed to change.
            let map = unsafe { memmap2::MmapOptions::new().map_copy_read_only(&file) }.map_err(io)?;
            let guard = guard::register(map.as_ptr() as usize, map.len(), &shard.path);
            maps.push((map, shard.path.clone(), guard));
        }
        Ok(Self { maps })
    }

    /// The address of `len` bytes at `offset` of shard `shard`.
    ///
    /// # Errors
    /// [`Error::Truncated`] if the range is not inside the mapped file.
    pub fn ptr(&self, shard: usize, offset: u64, len: u64) -> Result<*const u8> {
        let (m, path, _) = &self.maps[shard];
        match offset.checked_add(len) {
            Some(end) if end <= m.len() as u64 => Ok(m[offset as usize..].as_ptr()),
            _ => Err(Error::Truncated { path: path.clone(), len: m.len() as u64, want: offset.saturating_add(len) }),
        }
    }

    /// Read every page of `len` bytes at `offset` of shard `shard` once, so that they are in
    /// the page cache and mapped (`--dense-weights warm`). Returns the bytes touched.
    ///
    /// # Errors
    /// [`Error::Truncated`] if the range is outside the file.
    pub fn touch(&self, shard: usize, offset: u64, len: u64) -> Result<u64> {
        self.ptr(shard, offset, len)?;
        let (m, _, _) = &self.maps[shard];
        let bytes = &m[offset as usize..(offset + len) as usize];
        // Read-ahead first; a refusal only makes the loop below slower.
        let _ = m.advise_range(memmap2::Advice::WillNeed, offset as usize, len as usize);
        let sum = bytes.iter().step_by(4096).fold(0u8, |s, &b| s.wrapping_add(b));
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

/// The dense weights read once with the read engine (O_DIRECT where the file allows) into an
/// anonymous, block-aligned pool (`--dense-weights anon`): they then cost RSS, not page
/// cache, and nothing of them is faulted in from the file later.
#[derive(Debug)]
pub struct AnonDense {
    pool: Arc<BufferPool>,
    /// (shard, file offset) → (length, pool offset of the payload), sorted.
    ranges: Vec<((usize, u64), (u64, usize))>,
}

impl AnonDense {
    /// Read every dense tensor of `index`, telling `progress(bytes done, bytes in all)` as
    /// the reads complete (in order; all of them are in flight meanwhile).
    ///
    /// # Errors
    /// The read engine's error naming the file, offset and length of a failed read.
    pub fn load(index: &ModelIndex, io: EngineOptions, progress: &dyn Fn(u64, u64)) -> Result<Self> {
        let mut ranges = Vec::with_capacity(index.dense.len());
        let mut at = 0usize;
        for &i in &index.dense {
            let t = &index.file.tensors[i];
            let dest = at + (t.offset % align::BLOCK) as usize;
            ranges.push(((t.shard, t.offset), (t.size, dest)));
            at += crate::stream::layout::region_bytes(t.size);
        }
        ranges.sort_unstable();
        let pool = Arc::new(BufferPool::new(at.max(1))?);
        let engine = ReadEngine::new(pool.clone(), io)?;
        let files = open_all(&engine, &index.file)?;
        let reqs: Vec<Request> = ranges
            .iter()
            .filter(|(_, (len, _))| *len > 0)
            .map(|&((shard, offset), (len, dest))| Request { file: files[shard], offset, len: len as usize, dest })
            .collect();
        let tickets = engine.submit(&reqs)?;
        let total: u64 = reqs.iter().map(|r| r.len as u64).sum();
        let (mut done, mut first) = (0u64, Ok(()));
        // As `wait_all`: every read waited for, then the first error.
        for (t, r) in tickets.iter().zip(&reqs) {
            if let Err(e) = t.wait() {
                first = first.and(Err(e));
            }
            done += r.len as u64;
            progress(done, total);
        }
        first?;
        Ok(Self { pool, ranges })
    }

    /// Bytes of the pool.
    pub fn bytes(&self) -> usize {
        self.pool.size()
    }
}

/// Open every shard of `model` in `engine`.
///
/// # Errors
/// The read engine's open error (path and OS error).
pub(crate) fn open_all(engine: &ReadEngine, model: &GgufModel) -> Result<Vec<FileId>> {
    model.shards.iter().map(|s| engine.open(&s.path).map_err(Error::from)).collect()
}

// SAFETY: every range was read completely before `load` returned (wait_all), the pool is
// never written again, and it lives as long as self.
unsafe impl DenseSource for AnonDense {
    fn ptr(&self, shard: usize, offset: u64, len: u64) -> Result<*const u8> {
        let i = self.ranges.binary_search_by_key(&(shard, offset), |r| r.0).map_err(|_| Error::Tensor {
            name: format!("shard {shard} offset {offset}"),
            why: "not a dense tensor that was loaded".into(),
        })?;
        let (have, dest) = self.ranges[i].1;
        if len > have {
            return Err(Error::Tensor {
                name: format!("shard {shard} offset {offset}"),
                why: "longer than loaded".into(),
            });
        }
        Ok(self.pool.ptr_at(dest, len as usize)?.cast_const())
    }
}

/// Which file a mapped address belongs to, for a `SIGBUS` handler: a file truncated (or a
/// device failing) under a mapping faults the reader with `SIGBUS`, which cannot be turned into
/// an error, only reported. The table is fixed-size and read with atomics only, so a signal
/// handler may consult it ([`guard::mapped_file_at`] is async-signal-safe).
pub mod guard {
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

    const SLOTS: usize = 64;

    struct Slot {
        start: AtomicUsize,
        end: AtomicUsize,
        name: AtomicPtr<u8>,
        name_len: AtomicUsize,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Slot = Slot {
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        name: AtomicPtr::new(std::ptr::null_mut()),
        name_len: AtomicUsize::new(0),
    };
    static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

    /// Note that `[start, start + len)` maps `path`; `None` when the table is full (the mapping
    /// then goes unnamed in a fault report).
    pub(crate) fn register(start: usize, len: usize, path: &Path) -> Option<usize> {
        // The name outlives the mapping on purpose: a handler may be reading it as it goes.
        let name: &'static mut [u8] = Box::leak(path.display().to_string().into_bytes().into_boxed_slice());
        for (i, s) in TABLE.iter().enumerate() {
            if s.end.compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                s.name.store(name.as_mut_ptr(), Ordering::Relaxed);
                s.name_len.store(name.len(), Ordering::Relaxed);
                s.start.store(start, Ordering::Relaxed);
                s.end.store(start.saturating_add(len), Ordering::Release);
                return Some(i);
            }
        }
        None
    }

    pub(crate) fn unregister(i: usize) {
        TABLE[i].start.store(0, Ordering::Relaxed);
        TABLE[i].end.store(0, Ordering::Release);
    }

    /// The path of the mapping holding `addr`, if one of ours does. Async-signal-safe: atomic
    /// loads only, no allocation, no lock.
    pub fn mapped_file_at(addr: usize) -> Option<&'static [u8]> {
        for s in &TABLE {
            let end = s.end.load(Ordering::Acquire);
            if end == 0 || end == usize::MAX {
                continue;
            }
            if (s.start.load(Ordering::Relaxed)..end).contains(&addr) {
                let (p, n) = (s.name.load(Ordering::Relaxed), s.name_len.load(Ordering::Relaxed));
                // SAFETY: the name was leaked at registration (never freed) with this length.
                return Some(unsafe { std::slice::from_raw_parts(p, n) });
            }
        }
        None
    }
}
