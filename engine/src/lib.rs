pub mod cache;
pub mod ggml;
