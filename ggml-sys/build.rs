//! Passes on what llama-cpp-sys-2 publishes (its ggml cmake dir) to our own
//! dependents as `DEP_BMOE_GGML_CMAKE_DIR`, so a crate that builds C against
//! ggml later uses the same headers and libraries; and warns when `GGML_RPC` is
//! asked for but the llama.cpp in this target directory was built without it.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_LLAMA_GGML_CMAKE_DIR");
    println!("cargo:rerun-if-env-changed=GGML_RPC");
    let Ok(dir) = std::env::var("DEP_LLAMA_GGML_CMAKE_DIR") else { return };
    println!("cargo:ggml_cmake_dir={dir}");
    // llama-cpp-sys-2's build script reruns only for the GGML_* variables that were set when it
    // last ran: a target directory that built llama.cpp before `.cargo/config.toml` set
    // GGML_RPC keeps a build without ggml-rpc (bmoe still links; `--rpc` says it has no RPC
    // backend at run time).
    let asked = std::env::var("GGML_RPC").is_ok_and(|v| matches!(v.to_ascii_uppercase().as_str(), "ON" | "1" | "TRUE"));
    let lib = Path::new(&dir).parent().map(|l| ["libggml-rpc.a", "ggml-rpc.lib"].iter().any(|n| l.join(n).exists()));
    if asked && lib == Some(false) {
        println!(
            "cargo:warning=GGML_RPC=ON, but the llama.cpp of this target directory was built without ggml-rpc \
             (cargo does not rerun llama-cpp-sys-2's build script for a variable it did not track): \
             `cargo clean -p llama-cpp-sys-2` once to rebuild it with the RPC backend (bmoe rpc-server, --rpc)"
        );
    }
}
