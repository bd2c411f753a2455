//! bmoe runs Mixture-of-Experts language models stored as GGUF that are larger
//! than the machine's RAM, on the CPU: the dense part stays in memory and only
//! the experts each token routes to are read from flash, through io_uring, into a
//! fixed pool of registered buffers that is also the expert cache.
//!
//! This crate is the facade: a small surface to open a model and generate ([`Engine`], built
//! by [`Engine::builder`]), its options, its error type and its telemetry, and the build stamp
//! ([`build_info`]) every metrics preamble starts with. Everything else (the decoder, the
//! streamer, the cache and its policies, the GGUF reader, the read engine) is reachable for
//! tools through [`engine`].
//!
//! ```
//! use bmoe::{CacheSize, Control, DenseWeights, Engine, GenParams, Sampler, Sampling, StreamOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A tiny synthetic model (random weights in a real model's format) to run on.
//! let dir = std::env::temp_dir().join(format!("bmoe-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("tiny.gguf");
//! let o = bmoe::engine::synth::Options::new("qwen3moe", "tiny", bmoe::engine::synth::Quant::Q8_0, 1)?;
//! bmoe::engine::synth::write(&o, &path, &mut |_, _| {})?;
//!
//! // Stream its experts through a 4 MiB cache, dense weights in anonymous memory, 2 threads.
//! let stream = StreamOptions { cache: CacheSize::Bytes(4 << 20), force: true, ..StreamOptions::default() };
//! let mut engine = Engine::builder(&path).stream(stream).dense(DenseWeights::Anon).threads(2).open()?;
//! println!("{}", engine.report().mode_line()); // mode: streaming (decoder native, backend uring, …)
//!
//! let prompt = engine.tokenizer().tokenize("Once upon a time", true)?;
//! let mut sampler = Sampler::new(Sampling::greedy(), engine.tokenizer().n_vocab())?;
//! let gen = engine.generate(&prompt, &GenParams::new(8), &mut |l| sampler.sample(l), &mut |_| Control::Continue)?;
//! assert!(gen.tokens.len() <= 8);
//! std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```

pub use bmoe_engine as engine;

pub use bmoe_engine::dense::DenseWeights;
pub use bmoe_engine::engine::{
    DecoderKind, Engine, EngineBuilder, EngineKind, GenParams, Mode, MoeStream, Overlap, Report, StreamOptions,
    StreamReport,
};
pub use bmoe_engine::llama::{Sampler, Sampling};
pub use bmoe_engine::session::{CancelToken, Control, Generation, Telemetry, Token};
pub use bmoe_engine::stream::budget::CacheSize;
pub use bmoe_engine::telemetry::{Meter, Summary, SummaryInputs};
pub use bmoe_engine::{Error, Result};

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
        ggml_version: engine::ggml::version(),
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
