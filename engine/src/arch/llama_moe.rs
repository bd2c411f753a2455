//! The MoE architectures the vendored llama.cpp knows: every `general.architecture` whose
//! loader creates routed-expert tensors (`ffn_{gate,up,down,gate_up}_exps`). The generic decoder
//! runs any of them that llama.cpp decodes with `build_moe_ffn` (a file whose graph it does not
//! understand is refused loudly at the first decode); `--list-archs` marks each as native,
//! generic with gates here, or generic untested.
//!
//! The table is derived from the vendored source (`llama_model_mapping` in
//! `src/llama-model.cpp`, each model's `load_arch_tensors` in `src/models/*.cpp`, the names in
//! `src/llama-arch.cpp`); `engine/tests/llama_archs.rs` derives it again from the source in the
//! cargo registry and fails when it is out of date (after a llama-cpp-sys-2 upgrade).

/// `general.architecture` of every MoE architecture of the vendored llama.cpp, sorted, without
/// the encoders ([`ENCODERS`]). Some of them are MoE only when the file has experts (`llama`,
/// `granite`, `minicpm`, …): a file without is refused as not MoE.
pub const LLAMA_MOE_ARCHS: &[&str] = &[
    "afmoe",
    "arctic",
    "bailingmoe",
    "bailingmoe2",
    "bailingmoe3",
    "cohere2moe",
    "dbrx",
    "deepseek",
    "deepseek2",
    "deepseek2-ocr",
    "deepseek32",
    "deepseek4",
    "dflash",
    "dots1",
    "dots3note",
    "ernie4_5",
    "exaone-moe",
    "gemma4",
    "glm-dsa",
    "glm4moe",
    "glm5-next",
    "gpt-oss",
    "granite",
    "granite_swa",
    "granitehybrid",
    "granitemoe",
    "grok",
    "grovemoe",
    "hunyuan-moe",
    "hy_v3",
    "hy_v4",
    "jamba",
    "kimi-k3",
    "kimi-linear",
    "laguna",
    "lfm2",
    "lfm2moe",
    "llada-moe",
    "llama",
    "llama4",
    "maple",
    "mellum",
    "mimo2",
    "minicpm",
    "minimax-01",
    "minimax-m2",
    "minimax-m3",
    "mistral3",
    "nemotron_h",
    "olmoe",
    "phimoe",
    "qwen2moe",
    "qwen35moe",
    "qwen3moe",
    "qwen3next",
    "qwen3vlmoe",
    "qwen4exp",
    "refact",
    "rnd1",
    "smallthinker",
    "step35",
];

/// MoE architectures of the vendored llama.cpp that are encoders (embeddings, no generation):
/// not runnable by `bmoe run`.
pub const ENCODERS: &[&str] = &["nomic-bert-moe"];
