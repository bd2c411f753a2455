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

// ggml's RPC backend (`ggml-rpc.h`), which llama-cpp-sys-2's bindings do not cover. It is built
// when `GGML_RPC=ON` reaches llama.cpp's CMake (the workspace's `.cargo/config.toml` sets it) and
// registers itself in ggml's backend registry as "RPC". Its functions are reached through the
// registry (`ggml_backend_reg_by_name("RPC")`, `ggml_backend_reg_get_proc_address`), as
// llama.cpp's own `--rpc` does, not linked by name: a target directory whose llama.cpp was built
// before `GGML_RPC` was set keeps that build (cargo does not rerun llama-cpp-sys-2's build script
// for a variable it did not track), and a binary naming ggml-rpc's symbols would then not link;
// through the registry it links and says at run time that it has no RPC backend.

/// `ggml_backend_rpc_add_server` (`"ggml_backend_rpc_add_server"` in the RPC registry): the
/// registry of the server at `endpoint` (`host:port`), its devices enumerated. Connects; ggml
/// aborts the process when the connection or the handshake fails.
#[allow(non_camel_case_types)] // ggml's own name, as the bindings spell C types
pub type ggml_backend_rpc_add_server_t =
    unsafe extern "C" fn(endpoint: *const std::os::raw::c_char) -> ggml_backend_reg_t;

/// `ggml_backend_rpc_start_server` (`"ggml_backend_rpc_start_server"` in the RPC registry): serve
/// `devices` at `endpoint`, one client at a time, with ggml-rpc's file cache in `cache_dir` (or
/// null); returns only when the server cannot start (it prints why).
#[allow(non_camel_case_types)] // ggml's own name, as the bindings spell C types
pub type ggml_backend_rpc_start_server_t = unsafe extern "C" fn(
    endpoint: *const std::os::raw::c_char,
    cache_dir: *const std::os::raw::c_char,
    n_threads: usize,
    n_devices: usize,
    devices: *mut ggml_backend_dev_t,
);

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
