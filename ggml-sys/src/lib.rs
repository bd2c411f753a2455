//! Raw bindings to ggml (tensors, graphs, the CPU backend and its threadpool),
//! gguf and llama.h, as vendored and statically built by the `llama-cpp-sys-2`
//! crate (with its default `common` feature off).
//!
//! Why this crate exists: the binary must link exactly one ggml. The engine's
//! own decoder, llama.cpp's tokenizer, the `--engine llama` baseline and the test
//! oracle all go through this one build, so a tensor type or kernel can never
//! differ between our decoder and the reference it is checked against.
//!
//! Nothing safe lives here; `bmoe-engine::ggml` is the safe layer.

pub use llama_cpp_sys_2::*;

// ggml's RPC backend (`ggml-rpc.h`), which llama-cpp-sys-2's bindings do not cover. The library
// is built when `GGML_RPC=ON` reaches llama.cpp's CMake (the workspace's `.cargo/config.toml`
// sets it) and is linked with the other static libraries of that build; `llama_supports_rpc()`
// says at run time whether this binary has it.
extern "C" {
    /// A backend computing on device `device` of the ggml RPC server at `endpoint`
    /// (`host:port`). Connects on first use; ggml aborts the process when the connection or
    /// the protocol handshake fails.
    pub fn ggml_backend_rpc_init(endpoint: *const std::os::raw::c_char, device: u32) -> ggml_backend_t;
    /// Whether `backend` is an RPC backend.
    pub fn ggml_backend_is_rpc(backend: ggml_backend_t) -> bool;
    /// The buffer type of device `device` at `endpoint`.
    pub fn ggml_backend_rpc_buffer_type(
        endpoint: *const std::os::raw::c_char,
        device: u32,
    ) -> ggml_backend_buffer_type_t;
    /// Free and total memory of device `device` at `endpoint`.
    pub fn ggml_backend_rpc_get_device_memory(
        endpoint: *const std::os::raw::c_char,
        device: u32,
        free: *mut usize,
        total: *mut usize,
    );
    /// Serve `devices` to RPC clients at `endpoint`, one client at a time; returns only when
    /// the server cannot start (it prints why to stderr).
    pub fn ggml_backend_rpc_start_server(
        endpoint: *const std::os::raw::c_char,
        cache_dir: *const std::os::raw::c_char,
        n_threads: usize,
        n_devices: usize,
        devices: *mut ggml_backend_dev_t,
    );
}

/// The RPC protocol version of the linked ggml-rpc (`ggml-rpc.h`): a client and a server of
/// different major versions refuse each other at the handshake.
pub const RPC_PROTO_VERSION: (u8, u8, u8) = (7, 0, 0);

/// Version string of the vendored ggml (`ggml_version()`), e.g. `0.9.4`.
///
/// A plain function over a static C string; kept here because it is the one
/// thing `--version` needs from the raw layer before any engine is built.
pub fn ggml_version_str() -> &'static str {
    // SAFETY: ggml_version() returns a pointer to a static, NUL-terminated
    // string literal compiled into ggml; it is valid for the program's life.
    let ptr = unsafe { ggml_version() };
    if ptr.is_null() {
        return "unknown";
    }
    // SAFETY: non-null, NUL-terminated and static (see above).
    let cstr = unsafe { std::ffi::CStr::from_ptr(ptr) };
    cstr.to_str().unwrap_or("unknown")
}
