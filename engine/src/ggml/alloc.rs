//! Graph memory: a [`GraphAllocator`] (ggml's `gallocr`) places a graph's intermediate
//! tensors in one reused CPU buffer, and a [`TensorSet`] keeps long-lived tensors (weights
//! pointing into a mapping, a KV cache) together with the context that holds them.

use std::ptr::NonNull;

use bmoe_ggml_sys as sys;

use super::{Context, Error, GgmlType, Graph, Result, Tensor};

/// Places the tensors of one graph at a time in a CPU buffer that is reused from graph to
/// graph (and grown when a graph needs more). Tensors that already have data (weights,
/// persistent state) are left where they are.
#[derive(Debug)]
pub struct GraphAllocator {
    ptr: NonNull<sys::ggml_gallocr>,
}

// SAFETY: a gallocr is an owned allocator state plus its buffer; nothing in it is tied to
// the creating thread, and every use goes through &mut self.
unsafe impl Send for GraphAllocator {}

impl GraphAllocator {
    /// An allocator over the CPU buffer type.
    ///
    /// # Errors
    /// [`Error::ContextInit`] if ggml could not create it.
    pub fn new() -> Result<Self> {
        super::cpu_init();
        // SAFETY: the CPU buffer type is a static singleton; gallocr_new only stores it.
        let ptr = unsafe { sys::ggml_gallocr_new(sys::ggml_backend_cpu_buffer_type()) };
        Ok(Self { ptr: NonNull::new(ptr).ok_or(Error::ContextInit { mem_size: 0 })? })
    }

    /// Give every tensor of `graph` without data a place in the buffer. The places are
    /// valid until the next call; inputs (see [`Tensor::set_input`]) are written after it.
    ///
    /// # Errors
    /// [`Error::ContextInit`] if the buffer could not be (re)allocated.
    pub fn alloc(&mut self, graph: &Graph<'_>) -> Result<()> {
        // SAFETY: a live allocator and a live graph whose tensors belong to live contexts.
        if unsafe { sys::ggml_gallocr_alloc_graph(self.ptr.as_ptr(), graph.ptr.as_ptr()) } {
            Ok(())
        } else {
            Err(Error::ContextInit { mem_size: self.buffer_size() })
        }
    }

    /// Bytes of the allocator's buffer.
    pub fn buffer_size(&self) -> usize {
        // SAFETY: a live allocator; buffer 0 is the only one.
        unsafe { sys::ggml_gallocr_get_buffer_size(self.ptr.as_ptr(), 0) }
    }
}

impl Drop for GraphAllocator {
    fn drop(&mut self) {
        // SAFETY: we own the allocator; no graph is being computed (compute is synchronous).
        unsafe { sys::ggml_gallocr_free(self.ptr.as_ptr()) };
    }
}

/// A context together with the tensors made in it, addressed by index: for tensors that
/// live as long as a model or a session (weights, a KV cache) and are used by graphs built
/// in short-lived contexts.
#[derive(Debug)]
pub struct TensorSet {
    ctx: Context,
    tensors: Vec<NonNull<sys::ggml_tensor>>,
}

impl TensorSet {
    /// A set whose tensors get their data later ([`Tensor::set_data_ptr`]); room for `n` tensors.
    ///
    /// # Errors
    /// [`Error::ContextInit`].
    pub fn no_alloc(n: usize) -> Result<Self> {
        Ok(Self { ctx: Context::new_no_alloc(n, 0)?, tensors: Vec::with_capacity(n) })
    }

    /// A set whose tensors own their (zeroed) data: `data_bytes` in all, `n` tensors at most.
    ///
    /// # Errors
    /// [`Error::ContextInit`].
    pub fn with_data(n: usize, data_bytes: usize) -> Result<Self> {
        // SAFETY: pure size query.
        let overhead = unsafe { sys::ggml_tensor_overhead() };
        let ctx = Context::new(data_bytes + n * (overhead + 64) + 4096)?;
        Ok(Self { ctx, tensors: Vec::with_capacity(n) })
    }

    /// Add a tensor; returns its index.
    ///
    /// # Errors
    /// As [`Context::new_tensor`].
    pub fn push(&mut self, name: &str, ty: GgmlType, ne: &[i64]) -> Result<usize> {
        let t = self.ctx.new_tensor(ty, ne)?;
        t.set_name(name);
        if !self.ctx.no_alloc {
            // SAFETY: a live tensor of an allocating context: data points at nbytes() bytes.
            unsafe { std::ptr::write_bytes(t.data_ptr()?, 0, t.nbytes()) };
        }
        self.tensors.push(t.ptr);
        Ok(self.tensors.len() - 1)
    }

    /// Tensor `i`.
    ///
    /// # Panics
    /// If `i` is not an index [`Self::push`] returned.
    pub fn get(&self, i: usize) -> Tensor<'_> {
        Tensor { ptr: self.tensors[i], _ctx: std::marker::PhantomData }
    }

    /// The context holding the tensors (to place them in a backend's buffer).
    pub(super) fn context(&self) -> &Context {
        &self.ctx
    }

    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }
}
