//! The safe layer over ggml: an owned [`Context`], [`Tensor`]s that borrow it,
//! [`Graph`]s built in it, and a persistent CPU [`ThreadPool`] that computes them.
//!
//! ggml reports most misuse (shape mismatch, a context out of memory) by calling
//! `abort()`. This layer checks those preconditions in Rust first and returns an
//! [`Error`] instead, so a bad model shape becomes a message, not a dead process.
//!
//! Lifetimes carry ownership: a tensor or graph cannot outlive the context whose
//! memory holds it, and a context is neither `Send` nor `Sync` (ggml contexts are
//! not thread-safe), so tensors never cross threads. Computation is synchronous:
//! [`ThreadPool::compute`] returns only when every worker is done with the graph.

mod alloc;
pub mod backend;
mod ops;
mod selfcheck;
mod types;

pub use alloc::{GraphAllocator, TensorSet};
pub use ops::RopeParams;
pub use selfcheck::{self_check, SelfCheck};
pub use types::{GgmlType, RopeMode};

use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Once;

use bmoe_ggml_sys as sys;

/// Errors of the ggml layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `ggml_init` could not create a context of this size.
    #[error("ggml: could not create a context of {mem_size} bytes")]
    ContextInit { mem_size: usize },
    /// The context's arena has no room for another tensor or graph.
    #[error("ggml: context out of memory: need {need} bytes, {free} of {total} free")]
    ContextFull { need: usize, free: usize, total: usize },
    /// An operation's operands do not have compatible shapes.
    #[error("ggml: {op}: incompatible shapes {a:?} and {b:?}")]
    Shape { op: &'static str, a: [i64; 4], b: [i64; 4] },
    /// A tensor's data was read or written with a buffer of the wrong size or type.
    #[error("ggml: tensor data: {what}")]
    Data { what: String },
    /// A tensor has no data (it lives in a `no_alloc` context and nothing was attached).
    #[error("ggml: tensor `{name}` has no data")]
    NoData { name: String },
    /// The thread pool could not be created.
    #[error("ggml: could not create a thread pool of {n_threads} threads")]
    ThreadPool { n_threads: usize },
    /// `ggml_graph_compute` returned a failure status.
    #[error("ggml: graph compute failed with status {status}")]
    Compute { status: i32 },
    /// A quantisation request that ggml cannot satisfy (row length not a multiple of the block).
    #[error("ggml: cannot quantize to {ty}: {what}")]
    Quantize { ty: GgmlType, what: String },
    /// A backend (the CPU's, a remote host's) could not be created or could not allocate.
    #[error("ggml backend: {what}")]
    Backend { what: String },
}

/// Result alias of the ggml layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Initialise ggml's CPU tables (fp16 conversion, activation tables) once per process.
fn cpu_init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // SAFETY: ggml_cpu_init takes no arguments, is idempotent and guards its
        // own tables with a critical section; calling it once up front only
        // avoids doing it lazily inside the first compute.
        unsafe { sys::ggml_cpu_init() };
    });
}

/// The version of the linked ggml, e.g. `0.9.4`.
pub fn version() -> &'static str {
    sys::ggml_version_str()
}

/// The CPU features the linked ggml kernels were compiled to use (AVX2, AVX512,
/// NEON, ...), as llama.cpp's system-info string reports them.
pub fn cpu_features() -> String {
    cpu_init();
    // SAFETY: llama_print_system_info returns a pointer to a static buffer that
    // it fills on each call; it is NUL-terminated. We copy it out immediately.
    let ptr = unsafe { sys::llama_print_system_info() };
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated (above); copied before returning.
    let s = unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned();
    s.trim().trim_end_matches('|').trim().to_string()
}

/// An owned ggml context: an arena holding tensor metadata (and, unless it was
/// created `no_alloc`, their data).
#[derive(Debug)]
pub struct Context {
    ptr: NonNull<sys::ggml_context>,
    no_alloc: bool,
}

impl Context {
    /// A context whose arena holds `mem_size` bytes of tensor metadata and data.
    ///
    /// # Errors
    /// [`Error::ContextInit`] if ggml could not allocate the arena.
    pub fn new(mem_size: usize) -> Result<Self> {
        Self::with_params(mem_size, false)
    }

    /// A context that holds tensor metadata only: tensor data pointers are
    /// attached later (into mmap'd files or cache slots) with
    /// [`Tensor::set_data_ptr`]. `n_tensors` bounds how many tensors and graphs
    /// it can hold.
    ///
    /// # Errors
    /// [`Error::ContextInit`] if ggml could not allocate the arena.
    pub fn new_no_alloc(n_tensors: usize, n_graph_nodes: usize) -> Result<Self> {
        // SAFETY: pure size queries with no preconditions.
        let per_tensor = unsafe { sys::ggml_tensor_overhead() };
        // SAFETY: as above.
        let graph = unsafe { sys::ggml_graph_overhead_custom(n_graph_nodes, false) };
        Self::with_params(per_tensor * n_tensors + graph + 1024, true)
    }

    fn with_params(mem_size: usize, no_alloc: bool) -> Result<Self> {
        cpu_init();
        let params = sys::ggml_init_params { mem_size, mem_buffer: std::ptr::null_mut(), no_alloc };
        // SAFETY: params is a valid struct; a null mem_buffer asks ggml to allocate
        // the arena itself, which ggml_free releases.
        let ptr = unsafe { sys::ggml_init(params) };
        let ptr = NonNull::new(ptr).ok_or(Error::ContextInit { mem_size })?;
        Ok(Self { ptr, no_alloc })
    }

    fn raw(&self) -> *mut sys::ggml_context {
        self.ptr.as_ptr()
    }

    /// Bytes of the arena still free.
    pub fn free_bytes(&self) -> usize {
        // SAFETY: self.ptr is a live context owned by self.
        let total = unsafe { sys::ggml_get_mem_size(self.raw()) };
        // SAFETY: as above.
        let used = unsafe { sys::ggml_used_mem(self.raw()) };
        total.saturating_sub(used)
    }

    fn reserve(&self, data_bytes: usize) -> Result<()> {
        // SAFETY: pure size query.
        let overhead = unsafe { sys::ggml_tensor_overhead() };
        // ggml pads tensor data to GGML_MEM_ALIGN (16); pad generously.
        let need = overhead + if self.no_alloc { 0 } else { data_bytes + 64 };
        let free = self.free_bytes();
        if need > free {
            // SAFETY: self.ptr is live.
            let total = unsafe { sys::ggml_get_mem_size(self.raw()) };
            return Err(Error::ContextFull { need, free, total });
        }
        Ok(())
    }

    /// A new tensor of `ty` with up to four dimensions `ne` (innermost first, as ggml orders them).
    ///
    /// # Errors
    /// [`Error::ContextFull`] if the arena has no room; [`Error::Shape`] if a dimension
    /// is not positive or the row length is not a multiple of the type's block size.
    pub fn new_tensor(&self, ty: GgmlType, ne: &[i64]) -> Result<Tensor<'_>> {
        if ne.is_empty() || ne.len() > 4 || ne.iter().any(|&n| n <= 0) {
            return Err(Error::Shape { op: "new_tensor", a: pad4(ne), b: [0; 4] });
        }
        if ne[0] % ty.block_size() as i64 != 0 {
            return Err(Error::Shape { op: "new_tensor (row not a whole number of blocks)", a: pad4(ne), b: [0; 4] });
        }
        let nelem = ne.iter().try_fold(1i64, |acc, &n| acc.checked_mul(n));
        let bytes = nelem
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| n.checked_mul(ty.type_size()))
            .map(|b| b / ty.block_size())
            .ok_or(Error::Shape { op: "new_tensor (size overflows)", a: pad4(ne), b: [0; 4] })?;
        self.reserve(bytes)?;
        // SAFETY: the context is live, ne has ne.len() (1..=4) valid elements,
        // and we checked above that the arena has room, so ggml will not abort.
        let ptr = unsafe { sys::ggml_new_tensor(self.raw(), ty.raw(), ne.len() as i32, ne.as_ptr()) };
        Tensor::from_raw(ptr)
    }

    /// `a × b` in ggml's convention: `a` is `[k, m]` (weights, possibly quantised),
    /// `b` is `[k, n]` (F32 activations); the result is F32 `[m, n]`.
    ///
    /// # Errors
    /// [`Error::Shape`] if the inner dimensions differ; [`Error::ContextFull`].
    pub fn mul_mat<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>) -> Result<Tensor<'a>> {
        let (na, nb) = (a.ne(), b.ne());
        if na[0] != nb[0] || nb[2] % na[2] != 0 || nb[3] % na[3] != 0 {
            return Err(Error::Shape { op: "mul_mat", a: na, b: nb });
        }
        self.reserve(0)?;
        // SAFETY: both tensors belong to this live context (lifetime 'a ties them to
        // it) and the shape preconditions of ggml_mul_mat were checked above.
        let ptr = unsafe { sys::ggml_mul_mat(self.raw(), a.raw(), b.raw()) };
        Tensor::from_raw(ptr)
    }

    /// Element-wise `a + b`, with `b` broadcast over `a` where it repeats.
    ///
    /// # Errors
    /// [`Error::Shape`] if `b` cannot be repeated to `a`'s shape; [`Error::ContextFull`].
    pub fn add<'a>(&'a self, a: Tensor<'a>, b: Tensor<'a>) -> Result<Tensor<'a>> {
        // SAFETY: both tensors are live tensors of this context.
        if !unsafe { sys::ggml_can_repeat(b.raw(), a.raw()) } {
            return Err(Error::Shape { op: "add", a: a.ne(), b: b.ne() });
        }
        self.reserve(0)?;
        // SAFETY: live tensors of this context; broadcast precondition checked.
        let ptr = unsafe { sys::ggml_add(self.raw(), a.raw(), b.raw()) };
        Tensor::from_raw(ptr)
    }

    /// A new, empty computation graph with room for `n_nodes` nodes.
    ///
    /// # Errors
    /// [`Error::ContextFull`] if the arena has no room for the graph.
    pub fn new_graph(&self, n_nodes: usize) -> Result<Graph<'_>> {
        // SAFETY: pure size query.
        let need = unsafe { sys::ggml_graph_overhead_custom(n_nodes, false) };
        let free = self.free_bytes();
        if need > free {
            // SAFETY: self.ptr is live.
            let total = unsafe { sys::ggml_get_mem_size(self.raw()) };
            return Err(Error::ContextFull { need, free, total });
        }
        // SAFETY: live context with room for the graph (checked above).
        let ptr = unsafe { sys::ggml_new_graph_custom(self.raw(), n_nodes, false) };
        let ptr = NonNull::new(ptr).ok_or(Error::ContextFull { need, free, total: 0 })?;
        Ok(Graph { ptr, n_nodes, _ctx: PhantomData })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: we own the context; every Tensor and Graph borrowing it has been
        // dropped (the borrow checker guarantees it), so nothing points into it.
        unsafe { sys::ggml_free(self.raw()) };
    }
}

fn pad4(ne: &[i64]) -> [i64; 4] {
    let mut out = [1i64; 4];
    for (o, n) in out.iter_mut().zip(ne) {
        *o = *n;
    }
    out
}

/// A tensor living in a [`Context`]; cheap to copy, and cannot outlive the context.
#[derive(Clone, Copy, Debug)]
pub struct Tensor<'ctx> {
    ptr: NonNull<sys::ggml_tensor>,
    _ctx: PhantomData<&'ctx Context>,
}

impl<'ctx> Tensor<'ctx> {
    fn from_raw(ptr: *mut sys::ggml_tensor) -> Result<Self> {
        let ptr = NonNull::new(ptr).ok_or(Error::ContextFull { need: 0, free: 0, total: 0 })?;
        Ok(Self { ptr, _ctx: PhantomData })
    }

    /// The raw pointer, for code in this crate that calls ggml ops directly.
    pub(crate) fn raw(&self) -> *mut sys::ggml_tensor {
        self.ptr.as_ptr()
    }

    fn inner(&self) -> &sys::ggml_tensor {
        // SAFETY: the tensor lives in its context's arena for 'ctx, which outlives self.
        unsafe { self.ptr.as_ref() }
    }

    /// Dimensions, innermost first.
    pub fn ne(&self) -> [i64; 4] {
        self.inner().ne
    }

    /// Element type.
    pub fn ty(&self) -> GgmlType {
        GgmlType::from_raw(self.inner().type_).expect("ggml tensor has a type this build knows")
    }

    /// Bytes of data (`ggml_nbytes`).
    pub fn nbytes(&self) -> usize {
        // SAFETY: a live tensor.
        unsafe { sys::ggml_nbytes(self.raw()) }
    }

    /// Name the tensor (shown in ggml's own error messages and graph dumps).
    pub fn set_name(&self, name: &str) {
        let mut buf = [0u8; 64];
        let n = name.len().min(buf.len() - 1);
        buf[..n].copy_from_slice(&name.as_bytes()[..n]);
        // SAFETY: a live tensor; buf is NUL-terminated and ggml copies at most
        // sizeof(name) bytes out of it.
        unsafe { sys::ggml_set_name(self.raw(), buf.as_ptr().cast()) };
    }

    /// The tensor's name.
    pub fn name(&self) -> String {
        let name = &self.inner().name;
        let bytes: Vec<u8> = name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Mark the tensor as a graph input: the allocator places it where nothing else
    /// overwrites it, and the caller writes it after [`GraphAllocator::alloc`].
    pub fn set_input(&self) {
        // SAFETY: a live tensor; only sets a flag.
        unsafe { sys::ggml_set_input(self.raw()) };
    }

    /// Mark the tensor as a graph output: its memory is not reused by later nodes.
    pub fn set_output(&self) {
        // SAFETY: a live tensor; only sets a flag.
        unsafe { sys::ggml_set_output(self.raw()) };
    }

    /// Copy `values` into an I32 tensor.
    ///
    /// # Errors
    /// [`Error::Data`] if the tensor is not I32 or the length differs.
    pub fn write_i32(&self, values: &[i32]) -> Result<()> {
        if self.ty() != GgmlType::I32 {
            return Err(Error::Data { what: format!("write_i32 into a {} tensor", self.ty()) });
        }
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_bytes(&bytes)
    }

    /// An I32 tensor's values, copied out.
    ///
    /// # Errors
    /// [`Error::Data`] if the tensor is not I32; [`Error::NoData`].
    pub fn read_i32(&self) -> Result<Vec<i32>> {
        if self.ty() != GgmlType::I32 {
            return Err(Error::Data { what: format!("read_i32 from a {} tensor", self.ty()) });
        }
        let bytes = self.read_bytes()?;
        Ok(bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    fn data_ptr(&self) -> Result<*mut u8> {
        let data = self.inner().data as *mut u8;
        if data.is_null() {
            return Err(Error::NoData { name: self.name() });
        }
        Ok(data)
    }

    /// Copy `bytes` into the tensor's data; `bytes.len()` must equal [`Self::nbytes`].
    ///
    /// # Errors
    /// [`Error::Data`] on a size mismatch; [`Error::NoData`] if the tensor has no data.
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != self.nbytes() {
            return Err(Error::Data {
                what: format!("wrote {} bytes into a tensor of {}", bytes.len(), self.nbytes()),
            });
        }
        let dst = self.data_ptr()?;
        // SAFETY: dst points at nbytes() writable bytes owned by the context (or
        // attached by the caller of set_data_ptr, who promised the same); the
        // source slice cannot overlap ggml's arena.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        Ok(())
    }

    /// Copy `values` into an F32 tensor.
    ///
    /// # Errors
    /// [`Error::Data`] if the tensor is not F32 or the length differs.
    pub fn write_f32(&self, values: &[f32]) -> Result<()> {
        if self.ty() != GgmlType::F32 {
            return Err(Error::Data { what: format!("write_f32 into a {} tensor", self.ty()) });
        }
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_bytes(&bytes)
    }

    /// The tensor's data bytes, copied out.
    ///
    /// # Errors
    /// [`Error::NoData`] if the tensor has no data.
    pub fn read_bytes(&self) -> Result<Vec<u8>> {
        let src = self.data_ptr()?;
        let mut out = vec![0u8; self.nbytes()];
        // SAFETY: src points at nbytes() readable bytes; no compute is running
        // (compute is synchronous and holds &mut ThreadPool until done).
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        Ok(out)
    }

    /// `len` bytes of the tensor's data from `offset`, copied out.
    ///
    /// # Errors
    /// [`Error::Data`] if the range is outside the tensor; [`Error::NoData`].
    pub fn read_range(&self, offset: usize, len: usize) -> Result<Vec<u8>> {
        self.check_range(offset, len)?;
        let src = self.data_ptr()?;
        let mut out = vec![0u8; len];
        // SAFETY: [offset, offset + len) lies inside the tensor's nbytes() readable bytes
        // (checked above); no compute is running.
        unsafe { std::ptr::copy_nonoverlapping(src.add(offset), out.as_mut_ptr(), len) };
        Ok(out)
    }

    /// Copy `bytes` into the tensor's data from `offset`.
    ///
    /// # Errors
    /// [`Error::Data`] if the range is outside the tensor; [`Error::NoData`].
    pub fn write_range(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        self.check_range(offset, bytes.len())?;
        let dst = self.data_ptr()?;
        // SAFETY: [offset, offset + len) lies inside the tensor's writable bytes (checked
        // above); the source cannot overlap ggml's arena.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.add(offset), bytes.len()) };
        Ok(())
    }

    fn check_range(&self, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.nbytes() => Ok(()),
            _ => Err(Error::Data { what: format!("bytes {offset}+{len} of a tensor of {}", self.nbytes()) }),
        }
    }

    /// An F32 tensor's values, copied out.
    ///
    /// # Errors
    /// [`Error::Data`] if the tensor is not F32; [`Error::NoData`].
    pub fn read_f32(&self) -> Result<Vec<f32>> {
        if self.ty() != GgmlType::F32 {
            return Err(Error::Data { what: format!("read_f32 from a {} tensor", self.ty()) });
        }
        let bytes = self.read_bytes()?;
        Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// The first `rows` rows of a contiguous 2-D F32 tensor, copied out.
    ///
    /// # Errors
    /// [`Error::Data`] if the tensor is not F32 or has fewer rows; [`Error::NoData`].
    pub fn read_f32_rows(&self, rows: usize) -> Result<Vec<f32>> {
        if self.ty() != GgmlType::F32 {
            return Err(Error::Data { what: format!("read_f32_rows from a {} tensor", self.ty()) });
        }
        let row = self.inner().nb[1];
        let bytes = self.read_range(0, rows.saturating_mul(row))?;
        Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// Set the byte stride of dimension `dim` (1..=3): a tensor whose slices lie at a
    /// fixed distance in memory the caller owns (expert slots of a pool).
    ///
    /// # Safety
    /// The stride must keep every element the graph reads inside memory valid under
    /// [`Self::set_data_ptr`]'s contract, and must not be smaller than the extent of the
    /// dimension below it (slices must not overlap).
    pub unsafe fn set_stride(&self, dim: usize, stride: usize) {
        assert!((1..4).contains(&dim), "stride of dimension {dim}");
        // SAFETY: a live tensor; the caller guarantees the memory the new strides reach.
        unsafe { (*self.raw()).nb[dim] = stride };
    }

    /// Point the tensor's data at memory the caller owns (an mmap'd file, a cache slot).
    ///
    /// # Safety
    /// `data` must point at [`Self::nbytes`] bytes, aligned for the tensor's type,
    /// that stay valid, and are not written by anyone else, for as long as any
    /// graph using this tensor may be computed.
    pub unsafe fn set_data_ptr(&self, data: *mut u8) {
        // SAFETY: the tensor is live; the caller guarantees the pointed-to memory.
        unsafe { (*self.raw()).data = data.cast() };
    }
}

/// A computation graph built in a [`Context`].
#[derive(Debug)]
pub struct Graph<'ctx> {
    ptr: NonNull<sys::ggml_cgraph>,
    n_nodes: usize,
    _ctx: PhantomData<&'ctx Context>,
}

impl<'ctx> Graph<'ctx> {
    /// Add `t` and everything it depends on to the graph.
    ///
    /// # Errors
    /// [`Error::ContextFull`] if the graph has no room for more nodes.
    pub fn build_forward_expand(&mut self, t: Tensor<'ctx>) -> Result<()> {
        // Each op adds at most itself and its leaves; refuse before ggml aborts.
        // SAFETY: a live graph of a live context.
        let used = unsafe { sys::ggml_graph_n_nodes(self.ptr.as_ptr()) } as usize;
        if used + 8 > self.n_nodes {
            return Err(Error::ContextFull {
                need: used + 8,
                free: self.n_nodes.saturating_sub(used),
                total: self.n_nodes,
            });
        }
        // SAFETY: graph and tensor are live and belong to the same context ('ctx).
        unsafe { sys::ggml_build_forward_expand(self.ptr.as_ptr(), t.raw()) };
        Ok(())
    }

    /// Number of compute nodes in the graph.
    pub fn n_nodes(&self) -> usize {
        // SAFETY: a live graph.
        unsafe { sys::ggml_graph_n_nodes(self.ptr.as_ptr()) as usize }
    }
}

/// A persistent pool of CPU worker threads that computes graphs (`-t` threads),
/// with its own reusable work buffer, so that no step of a decode loop spawns a
/// thread or allocates unless a graph needs a bigger work buffer than any before.
#[derive(Debug)]
pub struct ThreadPool {
    ptr: NonNull<sys::ggml_threadpool>,
    n_threads: usize,
    work: Vec<u8>,
}

// SAFETY: a ggml threadpool is an owned set of worker threads plus a control
// block; nothing in it is tied to the thread that created it, and every use goes
// through &mut self, so moving it to another thread is sound. It is not Sync.
unsafe impl Send for ThreadPool {}

impl ThreadPool {
    /// A pool of `n_threads` workers (at least 1).
    ///
    /// # Errors
    /// [`Error::ThreadPool`] if ggml could not create it.
    pub fn new(n_threads: usize) -> Result<Self> {
        cpu_init();
        let n = n_threads.max(1);
        let n_i32 = i32::try_from(n).map_err(|_| Error::ThreadPool { n_threads })?;
        // SAFETY: pure constructor of a params struct.
        let mut params = unsafe { sys::ggml_threadpool_params_default(n_i32) };
        // SAFETY: params is a valid, initialised struct that outlives the call.
        let ptr = unsafe { sys::ggml_threadpool_new(&mut params) };
        let ptr = NonNull::new(ptr).ok_or(Error::ThreadPool { n_threads })?;
        Ok(Self { ptr, n_threads: n, work: Vec::new() })
    }

    /// Number of worker threads.
    pub fn n_threads(&self) -> usize {
        self.n_threads
    }

    /// The raw pool, to attach to a llama.cpp context (which must not outlive it).
    pub(crate) fn as_ptr(&self) -> *mut sys::ggml_threadpool {
        self.ptr.as_ptr()
    }

    /// Compute `graph`; returns when every node has been computed.
    ///
    /// # Errors
    /// [`Error::Compute`] if ggml reports a failure.
    pub fn compute(&mut self, graph: &Graph<'_>) -> Result<()> {
        // SAFETY: graph and pool are live; ggml_graph_plan only reads the graph.
        let mut plan = unsafe { sys::ggml_graph_plan(graph.ptr.as_ptr(), self.n_threads as i32, self.ptr.as_ptr()) };
        if plan.work_size > self.work.len() {
            self.work.resize(plan.work_size, 0);
        }
        plan.work_data = if plan.work_size > 0 { self.work.as_mut_ptr() } else { std::ptr::null_mut() };
        // SAFETY: the plan's work buffer is ours and at least work_size bytes; the
        // graph's tensors all have data (owned by their context or attached under
        // set_data_ptr's contract); compute is synchronous, so both outlive it.
        let status = unsafe { sys::ggml_graph_compute(graph.ptr.as_ptr(), &mut plan) };
        if status != sys::GGML_STATUS_SUCCESS {
            return Err(Error::Compute { status: status as i32 });
        }
        Ok(())
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        // SAFETY: we own the pool and no compute is running (compute takes &mut self
        // and is synchronous); ggml joins the workers before freeing.
        unsafe { sys::ggml_threadpool_free(self.ptr.as_ptr()) };
    }
}

/// Quantise `src` (F32, `n_rows` rows of `n_per_row` values) to `ty`, as ggml's
/// quantisers do for llama.cpp's `llama-quantize` without an importance matrix.
///
/// # Errors
/// [`Error::Quantize`] if `n_per_row` is not a multiple of `ty`'s block size or the
/// input length does not match.
pub fn quantize(ty: GgmlType, src: &[f32], n_rows: usize, n_per_row: usize) -> Result<Vec<u8>> {
    if n_per_row % ty.block_size() != 0 {
        return Err(Error::Quantize {
            ty,
            what: format!("row of {n_per_row} is not a multiple of {}", ty.block_size()),
        });
    }
    if src.len() != n_rows * n_per_row {
        return Err(Error::Quantize { ty, what: format!("{} values for {n_rows}×{n_per_row}", src.len()) });
    }
    let row_bytes = ty.row_size(n_per_row);
    let mut out = vec![0u8; row_bytes * n_rows];
    if out.is_empty() {
        return Ok(out);
    }
    // SAFETY: src holds n_rows*n_per_row floats; out holds n_rows rows of
    // row_size(ty, n_per_row) bytes; no imatrix (null) is allowed for these types.
    let written = unsafe {
        sys::ggml_quantize_chunk(
            ty.raw(),
            src.as_ptr(),
            out.as_mut_ptr().cast(),
            0,
            n_rows as i64,
            n_per_row as i64,
            std::ptr::null(),
        )
    };
    if written != out.len() {
        return Err(Error::Quantize { ty, what: format!("ggml wrote {written} bytes, expected {}", out.len()) });
    }
    Ok(out)
}

/// Dequantise `data` of type `ty` holding `n` values to F32.
///
/// # Errors
/// [`Error::Quantize`] if `n` is not a whole number of blocks or `data` is the wrong length.
pub fn dequantize(ty: GgmlType, data: &[u8], n: usize) -> Result<Vec<f32>> {
    if n % ty.block_size() != 0 || data.len() != ty.row_size(n) {
        return Err(Error::Quantize { ty, what: format!("{} bytes do not hold {n} values", data.len()) });
    }
    let mut out = vec![0f32; n];
    // SAFETY: ggml_get_type_traits returns a pointer into a static table for any valid type.
    let traits = unsafe { &*sys::ggml_get_type_traits(ty.raw()) };
    if ty == GgmlType::F32 {
        for (o, c) in out.iter_mut().zip(data.chunks_exact(4)) {
            *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        return Ok(out);
    }
    let to_float = traits.to_float.ok_or(Error::Quantize { ty, what: "type has no dequantiser".into() })?;
    // SAFETY: data holds row_size(ty, n) bytes (checked) and out holds n floats.
    unsafe { to_float(data.as_ptr().cast(), out.as_mut_ptr(), n as i64) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_refuses_what_would_abort() {
        let ctx = Context::new(1 << 20).unwrap();
        let a = ctx.new_tensor(GgmlType::F32, &[4, 3]).unwrap();
        let b = ctx.new_tensor(GgmlType::F32, &[5, 2]).unwrap();
        assert!(matches!(ctx.mul_mat(a, b), Err(Error::Shape { .. })));
        assert!(matches!(ctx.add(a, b), Err(Error::Shape { .. })));
        assert!(matches!(ctx.new_tensor(GgmlType::F32, &[1 << 20]), Err(Error::ContextFull { .. })));
        assert!(matches!(ctx.new_tensor(GgmlType::Q8_0, &[33]), Err(Error::Shape { .. })));
        assert!(matches!(ctx.new_tensor(GgmlType::F32, &[0]), Err(Error::Shape { .. })));
    }

    #[test]
    fn no_alloc_tensor_without_data_is_an_error() {
        let ctx = Context::new_no_alloc(4, 16).unwrap();
        let t = ctx.new_tensor(GgmlType::F32, &[8]).unwrap();
        t.set_name("w");
        assert!(matches!(t.read_f32(), Err(Error::NoData { .. })));
        assert_eq!(t.name(), "w");
    }

    #[test]
    fn quantize_roundtrip_is_close() {
        let src: Vec<f32> = (0..512).map(|i| ((i as f32) * 0.37).sin()).collect();
        for ty in [GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16] {
            let q = quantize(ty, &src, 2, 256).unwrap();
            assert_eq!(q.len(), 2 * ty.row_size(256));
            let back = dequantize(ty, &q, 512).unwrap();
            let max_err = src.iter().zip(&back).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(max_err < 0.1, "{ty}: max error {max_err}");
        }
    }
}
