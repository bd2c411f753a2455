//! The seam between the decoder and where weights come from: [`ExpertProvider`] (a layer's
//! routed experts, acquired and released around their compute) and [`DenseSource`] (every other
//! tensor), the named pointers and stacks they hand out, and their counters. The decoder depends
//! on this module and not on any provider; the streamer ([`crate::stream`]) and the resident
//! provider ([`ResidentExperts`], experts straight from the mapped file) implement it, and so do
//! tests that spy on or break a provider.
//!
//! The contract is unsafe to implement because the decoder builds ggml tensors on the raw
//! addresses a provider returns: the bytes must be the file's and must stay put until released.

use std::sync::Arc;

use crate::dense::Mapping;
use crate::error::{Error, Result};
use crate::model::{ModelIndex, MoeLayer, Proj};

/// One value per projection of a routed expert's FFN, in the order the decoder computes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Projections<T> {
    pub gate: T,
    pub up: T,
    pub down: T,
}

impl<T: Copy> Projections<T> {
    /// `f(0)`, `f(1)`, `f(2)` as gate, up, down.
    pub fn from_fn(mut f: impl FnMut(usize) -> T) -> Self {
        Self { gate: f(0), up: f(1), down: f(2) }
    }

    /// `[gate, up, down]`.
    pub fn to_array(self) -> [T; 3] {
        [self.gate, self.up, self.down]
    }

    /// The value of projection `which` (0 gate, 1 up, 2 down).
    ///
    /// # Panics
    /// If `which > 2`.
    pub fn get(&self, which: usize) -> T {
        self.to_array()[which]
    }

    /// The value of projection `which` (0 gate, 1 up, 2 down), mutably.
    ///
    /// # Panics
    /// If `which > 2`.
    pub fn get_mut(&mut self, which: usize) -> &mut T {
        match which {
            0 => &mut self.gate,
            1 => &mut self.up,
            2 => &mut self.down,
            _ => panic!("projection {which} of 3"),
        }
    }
}

impl Proj {
    /// The index of this projection in [`Projections`] (gate 0, up 1, down 2).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for fused gate/up experts, which no decoder path takes yet.
    pub fn slot(self) -> Result<usize> {
        match self {
            Proj::Gate => Ok(0),
            Proj::Up => Ok(1),
            Proj::Down => Ok(2),
            Proj::GateUp => Err(Error::Unsupported("fused gate_up experts".into())),
        }
    }
}

/// Where one routed expert's three weight matrices are.
pub type ExpertPtrs = Projections<*const u8>;

impl ExpertPtrs {
    /// Three null pointers (a placeholder before an acquire fills it).
    pub const NULL: Self = Self { gate: std::ptr::null(), up: std::ptr::null(), down: std::ptr::null() };
}

/// Where a layer's routed experts' weights come from.
///
/// # Safety
/// The pointers `acquire` returns (gate, up, down of each requested expert, in the order
/// asked) must point at that expert's bytes of the model (the same bytes the file holds),
/// aligned as in the file modulo 32, readable and unwritten until `release(layer)`. The same
/// holds of the pointers `acquire_start` returns, for each expert from the moment its index
/// was returned as ready (by `acquire_start` or `acquire_more`).
pub unsafe trait ExpertProvider {
    /// Make `experts` of `layer` available; `out` receives one [`ExpertPtrs`] per expert.
    ///
    /// # Errors
    /// Whatever made the bytes unavailable (a read error naming file and offset).
    fn acquire(&mut self, layer: u32, experts: &[u32], out: &mut Vec<ExpertPtrs>) -> Result<()>;
    /// [`Self::acquire`] that may return before every expert's bytes are in: `out` receives
    /// every pointer at once; the result is the indices (into `experts`) whose bytes are in
    /// now; [`Self::acquire_more`] waits for the others. (Default: all at once.)
    ///
    /// # Errors
    /// As [`Self::acquire`].
    fn acquire_start(&mut self, layer: u32, experts: &[u32], out: &mut Vec<ExpertPtrs>) -> Result<Vec<usize>> {
        self.acquire(layer, experts, out)?;
        Ok((0..experts.len()).collect())
    }
    /// Wait until more of the experts of the last [`Self::acquire_start`] are in, and return
    /// their indices; empty once they all are.
    ///
    /// # Errors
    /// A read that failed (the acquire is then over: nothing stays pinned).
    fn acquire_more(&mut self) -> Result<Vec<usize>> {
        Ok(Vec::new())
    }
    /// The experts of `layer` acquired last are no longer in use.
    fn release(&mut self, layer: u32);
    /// The most experts one `acquire` may ask for (at least the model's top-k). A prefill
    /// whose union of routed experts is wider is computed in parts.
    fn capacity(&self) -> usize {
        usize::MAX
    }
    /// A new forward pass starts: a prefill micro-batch (`prefill`) or one decode step.
    fn begin_step(&mut self, _prefill: bool) {}
    /// The provider's counters so far, if it keeps any (the resident provider does not).
    fn counters(&self) -> Option<ProviderCounters> {
        None
    }
    /// Where every expert this provider can hand out for `layer` lies, per projection, as one
    /// stack: index `i` at `base + i × stride`. When the pointers `acquire` returns all sit on
    /// these stacks, the decoder computes the layer's experts with `mul_mat_id` over the stack
    /// (as llama.cpp does over the file's tensor) instead of one `mul_mat` per expert. The
    /// stack's memory outside acquired experts is never read.
    fn stacks(&self, _layer: u32) -> Option<Projections<Stack>> {
        None
    }
    /// Whether the decoder should predict the next layer's experts during decode and pass
    /// them to [`Self::prefetch`] (look-ahead).
    fn wants_lookahead(&self) -> bool {
        false
    }
    /// A prediction of `layer`'s experts for the step in progress: start reading the ones not
    /// resident, without waiting. Never an error: a failed speculative read only matters if the
    /// expert is really routed, and then `acquire` reads it again.
    fn prefetch(&mut self, _layer: u32, _experts: &[u32]) {}
    /// Whether `expert` of `layer` could be handed out now without a read (the lossy
    /// `--drop-cold-experts` asks). Every expert is, unless the provider reads them.
    fn residency(&self, _layer: u32, _expert: u32) -> Residency {
        Residency::Resident
    }
    /// Payload bytes of one routed expert of `layer` read from the file (0 where nothing is read).
    fn entry_bytes(&self, _layer: u32) -> u64 {
        0
    }
}

/// Where a routed expert's bytes are when it is routed (see [`ExpertProvider::residency`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    /// In memory: a cache hit, or a look-ahead read that landed.
    Resident,
    /// A look-ahead read of it is in flight.
    InFlight,
    /// Neither: acquiring it reads it.
    Absent,
}

/// A projection's experts at a fixed stride (see [`ExpertProvider::stacks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stack {
    pub base: *const u8,
    pub stride: usize,
    pub count: usize,
}

impl Stack {
    /// A stack of nothing (a placeholder).
    pub const EMPTY: Self = Self { base: std::ptr::null(), stride: 1, count: 0 };

    /// The stack index of `ptr`, if it lies on this stack.
    pub fn index_of(&self, ptr: *const u8) -> Option<usize> {
        let d = (ptr as usize).checked_sub(self.base as usize)?;
        (d % self.stride == 0 && d / self.stride < self.count).then_some(d / self.stride)
    }
}

impl Default for Stack {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// Cumulative counters of a streaming provider, for telemetry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProviderCounters {
    /// Expert payload bytes read from the file.
    pub bytes_read: u64,
    /// Seconds waiting for reads (in serial mode, the compute's stall).
    pub io_s: f64,
    /// Seconds of cache bookkeeping.
    pub manage_s: f64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Payload bytes of every expert acquired (hits and misses).
    pub routed_bytes: u64,
    /// The most payload bytes a decode-step layer routed.
    pub max_layer_routed_bytes: u64,
    /// Bytes resident in the cache now.
    pub resident_bytes: u64,
    /// Look-ahead: speculative entries and bytes read, entries a real routing then used, and
    /// real routed experts predicted / with a prediction.
    pub spec_entries: u64,
    pub spec_bytes: u64,
    pub spec_useful: u64,
    pub predicted_real: u64,
    pub real_with_prediction: u64,
    /// Seconds mapping cache pages over llama.cpp's mapping and back (the generic decoder; None
    /// where nothing is overlaid).
    pub overlay_s: Option<f64>,
    /// Of those, the seconds on the critical path: mappings made once a layer's reads had
    /// landed (or with none in flight), which the compute waited for.
    pub overlay_critical_s: Option<f64>,
}

/// Where the dense weights (everything but the routed experts) are read from.
///
/// # Safety
/// `ptr` must return the address of `len` bytes equal to the file's bytes at `offset` of
/// shard `shard`, aligned as in the file modulo 32, valid and unwritten for as long as the
/// source lives.
pub unsafe trait DenseSource: std::fmt::Debug + Send + Sync {
    /// The address of the file's bytes `offset..offset + len` of shard `shard`.
    ///
    /// # Errors
    /// If the range is not held (outside the file, not loaded).
    fn ptr(&self, shard: usize, offset: u64, len: u64) -> Result<*const u8>;
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
    fn acquire(&mut self, layer: u32, experts: &[u32], out: &mut Vec<ExpertPtrs>) -> Result<()> {
        let l = &self.layers[layer as usize];
        out.clear();
        for &e in experts {
            let mut p = ExpertPtrs::NULL;
            for (i, t) in l.tensors.iter().enumerate() {
                let r = l.range(i, e);
                *p.get_mut(t.proj.slot()?) = self.map.ptr(r.shard, r.offset, r.len)?;
            }
            out.push(p);
        }
        Ok(())
    }

    fn release(&mut self, _layer: u32) {}

    fn stacks(&self, layer: u32) -> Option<Projections<Stack>> {
        let l = self.layers.get(layer as usize)?;
        let mut st = Projections::<Stack>::default();
        for t in &l.tensors {
            let which = t.proj.slot().ok()?;
            let all = t.bytes_per_expert.checked_mul(u64::from(l.n_expert))?;
            let base = self.map.ptr(t.shard, t.offset, all).ok()?;
            *st.get_mut(which) = Stack { base, stride: t.bytes_per_expert as usize, count: l.n_expert as usize };
        }
        Some(st)
    }
}
