//! bmoe runs Mixture-of-Experts language models stored as GGUF that are larger
//! than the machine's RAM, on the CPU: the dense part stays in memory and only
//! the experts each token routes to are read from flash, through io_uring, into a
//! fixed pool of registered buffers that is also the expert cache.
//!
//! This crate is the facade: it re-exports the engine's public API
//! ([`engine`]) and the read engine ([`io`]), and carries the build stamp
//! ([`build_info`]) that every metrics preamble starts with.

pub use bmoe_engine as engine;
pub use bmoe_engine::ggml;
pub use bmoe_uring_io as io;

/// What this binary was built from, for `--version` and metrics preambles.
#[derive(Clone, Debug)]
pub struct BuildInfo {
    /// Crate version (`CARGO_PKG_VERSION`).
    pub version: &'static str,
    /// Short git revision, `-dirty` if the tree had changes, or `unknown` outside git.
    pub git_rev: &'static str,
    /// Target triple.
    pub target: &'static str,
    /// `target_feature`s the Rust code was compiled with (comma-separated).
    pub target_features: &'static str,
    /// Version of the linked ggml.
    pub ggml_version: &'static str,
}

/// The build stamp of this binary.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        version: env!("CARGO_PKG_VERSION"),
        git_rev: env!("BMOE_GIT_REV"),
        target: env!("BMOE_TARGET"),
        target_features: env!("BMOE_TARGET_FEATURES"),
        ggml_version: ggml::version(),
    }
}

impl BuildInfo {
    /// The SIMD-relevant subset of the target features (avx2, avx512f, fma, neon, ...).
    pub fn simd_features(&self) -> Vec<&'static str> {
        const INTERESTING: &[&str] = &[
            "sse4.2",
            "avx",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512vnni",
            "avx512bf16",
            "avx512fp16",
            "avxvnni",
            "neon",
            "dotprod",
            "i8mm",
            "sve",
            "fp16",
        ];
        self.target_features.split(',').filter(|f| INTERESTING.contains(f)).collect()
    }
}
