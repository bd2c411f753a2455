//! Passes on what llama-cpp-sys-2 publishes (its ggml cmake dir) to our own
//! dependents as `DEP_BMOE_GGML_CMAKE_DIR`, so a crate that builds C against
//! ggml later uses the same headers and libraries.

fn main() {
    if let Ok(dir) = std::env::var("DEP_LLAMA_GGML_CMAKE_DIR") {
        println!("cargo:ggml_cmake_dir={dir}");
    }
    println!("cargo:rerun-if-env-changed=DEP_LLAMA_GGML_CMAKE_DIR");
}
