//! ggml's backends, safely: a [`Backend`] (this machine's CPU, or another host's CPU through
//! ggml's RPC backend), a [`BackendBuffer`] holding a context's tensors on a backend, a
//! [`BackendAllocator`] placing a graph's intermediates in the backend's memory, tensor bytes
//! moved in and out through the backend ([`tensor_set`], [`tensor_get`]), and the RPC server
//! ([`rpc_serve`]).
//!
//! The decoder never uses this: it computes on [`super::ThreadPool`] with tensors on memory it
//! owns. This is for driving a remote host (the RPC worker of [`crate::rpc`]) and for computing
//! the same graph locally to check that the remote bits are this machine's. A tensor of an RPC
//! buffer has a *remote* address as its data pointer: its bytes are only reachable through
//! [`tensor_set`] and [`tensor_get`], never through [`super::Tensor::read_bytes`].
//!
//! ggml-rpc aborts the process when a host dies mid-command or the connection or handshake
//! fails (`RPC_STATUS_ASSERT`); an RPC backend must therefore live in a process whose death the
//! caller handles (a child process).

use std::ffi::CString;
use std::path::Path;
use std::ptr::NonNull;

use bmoe_ggml_sys as sys;

use super::{Error, Graph, Result, Tensor, TensorSet};

/// A ggml backend: where graphs compute and buffers live.
#[derive(Debug)]
pub struct Backend {
    ptr: NonNull<sys::ggml_backend>,
    name: String,
}

impl Backend {
    /// This machine's CPU with `n_threads` threads.
    ///
    /// # Errors
    /// [`Error::Backend`] if ggml could not create it.
    pub fn cpu(n_threads: usize) -> Result<Self> {
        super::cpu_init();
        // SAFETY: no preconditions; returns null on failure.
        let ptr = unsafe { sys::ggml_backend_cpu_init() };
        let ptr =
            NonNull::new(ptr).ok_or_else(|| Error::Backend { what: "could not create the CPU backend".into() })?;
        // SAFETY: a live CPU backend (just created).
        unsafe { sys::ggml_backend_cpu_set_n_threads(ptr.as_ptr(), n_threads.max(1) as i32) };
        Ok(Self { ptr, name: "CPU".into() })
    }

    /// Device 0 of the ggml RPC server at `endpoint` (`host:port`). Connects and does the
    /// protocol handshake now.
    ///
    /// # Errors
    /// [`Error::Backend`] if this build has no RPC backend, the endpoint has a NUL byte, or the
    /// server offers no device.
    ///
    /// # Aborts
    /// ggml aborts the process when it cannot connect or the server speaks another protocol
    /// version: call it in a process whose death the caller handles.
    pub fn rpc(endpoint: &str) -> Result<Self> {
        if !rpc_supported() {
            return Err(Error::Backend { what: "this build has no ggml RPC backend (GGML_RPC=ON)".into() });
        }
        let c = CString::new(endpoint)
            .map_err(|_| Error::Backend { what: format!("an RPC endpoint with a NUL byte: {endpoint:?}") })?;
        super::cpu_init();
        let add = rpc_proc(c"ggml_backend_rpc_add_server")?;
        // SAFETY: the registry's entry of this name is ggml_backend_rpc_add_server, whose
        // signature ggml_backend_rpc_add_server_t copies from ggml-rpc.h.
        let add: sys::ggml_backend_rpc_add_server_t = unsafe { std::mem::transmute(add) };
        // SAFETY: c is a NUL-terminated string that outlives the call (ggml copies it).
        let reg = unsafe { add(c.as_ptr()) };
        let none = || Error::Backend { what: format!("the RPC server at {endpoint} offers no device") };
        if reg.is_null() {
            return Err(none());
        }
        // SAFETY: a live registry with its devices enumerated (add_server returned it).
        if unsafe { sys::ggml_backend_reg_dev_count(reg) } == 0 {
            return Err(none());
        }
        // SAFETY: device 0 exists (counted above): the server's first device (bmoe rpc-server
        // serves exactly one, its CPU); ggml_backend_dev_init takes no parameters for RPC.
        let ptr = unsafe { sys::ggml_backend_dev_init(sys::ggml_backend_reg_dev_get(reg, 0), std::ptr::null()) };
        let ptr = NonNull::new(ptr)
            .ok_or_else(|| Error::Backend { what: format!("could not create an RPC backend for {endpoint}") })?;
        Ok(Self { ptr, name: format!("RPC[{endpoint}]") })
    }

    /// The backend's name (`CPU`, `RPC[host:port]`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compute `graph`, whose tensors all live in buffers of this backend; returns when done
    /// (for RPC, when the command is sent: the next [`tensor_get`] waits for the result).
    ///
    /// # Errors
    /// [`Error::Compute`] if ggml reports a failure.
    pub fn compute(&mut self, graph: &Graph<'_>) -> Result<()> {
        // SAFETY: a live backend and graph; every tensor of the graph has a buffer of this
        // backend (the caller allocated them with BackendBuffer / BackendAllocator, which the
        // compute only reads through ggml).
        let status = unsafe { sys::ggml_backend_graph_compute(self.ptr.as_ptr(), graph.ptr.as_ptr()) };
        if status != sys::GGML_STATUS_SUCCESS {
            return Err(Error::Compute { status: status as i32 });
        }
        Ok(())
    }

    fn buffer_type(&self) -> sys::ggml_backend_buffer_type_t {
        // SAFETY: a live backend; the default buffer type is a static of its device.
        unsafe { sys::ggml_backend_get_default_buffer_type(self.ptr.as_ptr()) }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        // SAFETY: we own the backend; buffers keep their own reference to what they need
        // (ggml-rpc's dispatcher is shared by its buffers), and no compute is running.
        unsafe { sys::ggml_backend_free(self.ptr.as_ptr()) };
    }
}

/// One buffer of a backend holding every tensor of a `no_alloc` [`TensorSet`] (weights uploaded
/// once). The tensors' data pointers point into it for as long as it lives.
#[derive(Debug)]
pub struct BackendBuffer {
    ptr: NonNull<sys::ggml_backend_buffer>,
}

impl BackendBuffer {
    /// Place every tensor of `set` (made with [`TensorSet::no_alloc`]) in one new buffer of
    /// `backend`, marked as weights (so ggml-rpc offers tensors over 10 MiB to the server's file
    /// cache by hash first).
    ///
    /// # Errors
    /// [`Error::Backend`] if the backend could not allocate it (out of memory on that host).
    pub fn alloc_tensors(set: &TensorSet, backend: &Backend) -> Result<Self> {
        // SAFETY: a live no_alloc context and a live backend; ggml places every tensor without
        // data and returns null (allocating nothing) on failure.
        let ptr = unsafe { sys::ggml_backend_alloc_ctx_tensors(set.context().raw(), backend.ptr.as_ptr()) };
        let ptr = NonNull::new(ptr).ok_or_else(|| Error::Backend {
            what: format!("{} could not allocate a buffer for the tensors (out of memory?)", backend.name()),
        })?;
        // SAFETY: a live buffer we own.
        unsafe { sys::ggml_backend_buffer_set_usage(ptr.as_ptr(), sys::GGML_BACKEND_BUFFER_USAGE_WEIGHTS) };
        Ok(Self { ptr })
    }

    /// Bytes of the buffer.
    pub fn size(&self) -> usize {
        // SAFETY: a live buffer.
        unsafe { sys::ggml_backend_buffer_get_size(self.ptr.as_ptr()) }
    }
}

impl Drop for BackendBuffer {
    fn drop(&mut self) {
        // SAFETY: we own the buffer; graphs using its tensors are computed synchronously, so
        // none is running.
        unsafe { sys::ggml_backend_buffer_free(self.ptr.as_ptr()) };
    }
}

/// Places one graph's tensors at a time in a buffer of a backend, reused and grown as needed
/// (ggml's `gallocr` on the backend's buffer type).
#[derive(Debug)]
pub struct BackendAllocator {
    ptr: NonNull<sys::ggml_gallocr>,
}

impl BackendAllocator {
    /// An allocator over `backend`'s buffer type.
    ///
    /// # Errors
    /// [`Error::Backend`] if ggml could not create it.
    pub fn new(backend: &Backend) -> Result<Self> {
        // SAFETY: the buffer type is a static of the backend's device; gallocr_new only stores it.
        let ptr = unsafe { sys::ggml_gallocr_new(backend.buffer_type()) };
        let ptr = NonNull::new(ptr).ok_or_else(|| Error::Backend { what: "could not create an allocator".into() })?;
        Ok(Self { ptr })
    }

    /// Give every tensor of `graph` without data a place; valid until the next call.
    ///
    /// # Errors
    /// [`Error::Backend`] if the buffer could not be (re)allocated.
    pub fn alloc(&mut self, graph: &Graph<'_>) -> Result<()> {
        // SAFETY: a live allocator and graph.
        if unsafe { sys::ggml_gallocr_alloc_graph(self.ptr.as_ptr(), graph.ptr.as_ptr()) } {
            Ok(())
        } else {
            Err(Error::Backend { what: "could not allocate a graph's buffer (out of memory?)".into() })
        }
    }

    /// Bytes of the allocator's buffer.
    pub fn buffer_size(&self) -> usize {
        // SAFETY: a live allocator; buffer 0 is the only one.
        unsafe { sys::ggml_gallocr_get_buffer_size(self.ptr.as_ptr(), 0) }
    }
}

impl Drop for BackendAllocator {
    fn drop(&mut self) {
        // SAFETY: we own the allocator; no graph is being computed.
        unsafe { sys::ggml_gallocr_free(self.ptr.as_ptr()) };
    }
}

fn check_backend_range(t: Tensor<'_>, offset: usize, len: usize) -> Result<()> {
    if t.inner().buffer.is_null() || t.inner().data.is_null() {
        return Err(Error::NoData { name: t.name() });
    }
    match offset.checked_add(len) {
        Some(end) if end <= t.nbytes() => Ok(()),
        _ => Err(Error::Data { what: format!("bytes {offset}+{len} of a tensor of {}", t.nbytes()) }),
    }
}

/// Write `bytes` into `t`'s data from `offset`, through its buffer's backend.
///
/// # Errors
/// [`Error::NoData`] if `t` has no buffer; [`Error::Data`] if the range is outside it.
pub fn tensor_set(t: Tensor<'_>, bytes: &[u8], offset: usize) -> Result<()> {
    check_backend_range(t, offset, bytes.len())?;
    // SAFETY: t lives in a buffer (checked) and the range lies inside it (checked), which are
    // ggml_backend_tensor_set's assertions; bytes is readable for its length.
    unsafe { sys::ggml_backend_tensor_set(t.raw(), bytes.as_ptr().cast(), offset, bytes.len()) };
    Ok(())
}

/// `t`'s bytes, through its buffer's backend (for RPC: waits for the graphs sent before).
///
/// # Errors
/// [`Error::NoData`] if `t` has no buffer.
pub fn tensor_get(t: Tensor<'_>) -> Result<Vec<u8>> {
    let n = t.nbytes();
    check_backend_range(t, 0, n)?;
    let mut out = vec![0u8; n];
    // SAFETY: as tensor_set; out is writable for n bytes.
    unsafe { sys::ggml_backend_tensor_get(t.raw(), out.as_mut_ptr().cast(), 0, n) };
    Ok(out)
}

/// Whether this build has ggml's RPC backend (`GGML_RPC=ON`).
pub fn rpc_supported() -> bool {
    // SAFETY: a pure query of the build (llama.cpp looks "RPC" up in ggml's registry).
    unsafe { sys::llama_supports_rpc() }
}

/// The RPC backend's function `name` from ggml's registry.
fn rpc_proc(name: &std::ffi::CStr) -> Result<*mut std::ffi::c_void> {
    let missing = || Error::Backend { what: "this build has no ggml RPC backend (GGML_RPC=ON)".into() };
    // SAFETY: a lookup by a NUL-terminated name in ggml's static registry; null when absent.
    let reg = unsafe { sys::ggml_backend_reg_by_name(c"RPC".as_ptr()) };
    if reg.is_null() {
        return Err(missing());
    }
    // SAFETY: a live registry and a NUL-terminated name; null when the backend has no such entry.
    let f = unsafe { sys::ggml_backend_reg_get_proc_address(reg, name.as_ptr()) };
    if f.is_null() {
        return Err(Error::Backend { what: format!("ggml's RPC backend has no {}", name.to_string_lossy()) });
    }
    Ok(f)
}

/// Serve this machine's CPU (`n_threads` threads) to ggml RPC clients at `endpoint`
/// (`host:port`), one client at a time, with ggml-rpc's file cache of large tensors in
/// `cache_dir` if given. Returns only when the server could not start (ggml printed why).
///
/// # Errors
/// [`Error::Backend`] if this build has no RPC backend, no CPU device, or a string has a NUL.
pub fn rpc_serve(endpoint: &str, cache_dir: Option<&Path>, n_threads: usize) -> Result<()> {
    let start = rpc_proc(c"ggml_backend_rpc_start_server")?;
    // SAFETY: the registry's entry of this name is ggml_backend_rpc_start_server, whose
    // signature ggml_backend_rpc_start_server_t copies from ggml-rpc.h.
    let start: sys::ggml_backend_rpc_start_server_t = unsafe { std::mem::transmute(start) };
    let nul = |what: &str| Error::Backend { what: format!("{what} has a NUL byte") };
    let ep = CString::new(endpoint).map_err(|_| nul("the endpoint"))?;
    let cache = cache_dir
        .map(|d| CString::new(d.as_os_str().as_encoded_bytes()).map_err(|_| nul("the cache directory")))
        .transpose()?;
    super::cpu_init();
    // SAFETY: a pure lookup in ggml's device registry.
    let mut dev = unsafe { sys::ggml_backend_dev_by_type(sys::GGML_BACKEND_DEVICE_TYPE_CPU) };
    if dev.is_null() {
        return Err(Error::Backend { what: "no CPU device in ggml's registry".into() });
    }
    // SAFETY: the strings are NUL-terminated and outlive the call (which serves until it
    // fails); `dev` is one valid device pointer, read as an array of one.
    unsafe {
        start(ep.as_ptr(), cache.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()), n_threads.max(1), 1, &mut dev)
    };
    Ok(())
}

/// Bytes of one serialised tensor in ggml-rpc's messages (`sizeof(rpc_tensor)`: id, type,
/// buffer, ne, nb, op, op_params, flags, src, view_src, view_offs, data, name, use_count).
pub const RPC_TENSOR_BYTES: u64 = 8 + 4 + 8 + 16 + 16 + 4 + 64 + 4 + 80 + 8 + 8 + 8 + 64 + 4;

/// What ggml-rpc sends for `graph` (`GRAPH_COMPUTE`: the command byte, the size, the device, the
/// node ids and every tensor the nodes reach through their sources and views, serialised):
/// `(nodes, tensors, bytes)`.
pub fn rpc_graph_bytes(graph: &Graph<'_>) -> (usize, usize, u64) {
    let g = graph.ptr.as_ptr();
    // SAFETY: a live graph.
    let n_nodes = unsafe { sys::ggml_graph_n_nodes(g) }.max(0) as usize;
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<*mut sys::ggml_tensor> = Vec::new();
    for i in 0..n_nodes {
        // SAFETY: i is below the graph's node count.
        stack.push(unsafe { sys::ggml_graph_node(g, i as i32) });
    }
    while let Some(t) = stack.pop() {
        if t.is_null() || !seen.insert(t as usize) {
            continue;
        }
        // SAFETY: every pointer reached from a live graph's nodes (sources, view sources) is a
        // live tensor of a live context, or null (skipped above).
        let tensor = unsafe { &*t };
        stack.extend(tensor.src.iter().copied());
        stack.push(tensor.view_src);
    }
    let bytes = 1 + 8 + 4 + 4 + 8 * n_nodes as u64 + 4 + RPC_TENSOR_BYTES * seen.len() as u64;
    (n_nodes, seen.len(), bytes)
}
