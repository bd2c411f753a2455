pub mod ggml;
