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
