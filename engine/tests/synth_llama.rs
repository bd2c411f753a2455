//! A synthesized tiny model loads in llama.cpp (through the raw bindings) and llama.cpp
//! generates from it: finite logits at every step and the requested number of tokens.
#![cfg(feature = "ffi")]

use std::ffi::CString;

use bmoe_engine::synth::{self, Options, Quant};
use bmoe_ggml_sys as sys;

/// llama.cpp's log, errors only: its loading chatter (thousands of lines) would bury the
/// test output.
unsafe extern "C" fn errors_only(
    level: sys::ggml_log_level,
    text: *const std::os::raw::c_char,
    _: *mut std::ffi::c_void,
) {
    if level == sys::GGML_LOG_LEVEL_ERROR && !text.is_null() {
        // SAFETY: llama.cpp passes a NUL-terminated message valid for the call.
        eprint!("{}", unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy());
    }
}

/// Greedy-decodes `n` tokens after `prompt` with plain llama.cpp; returns the tokens.
fn llama_generate(path: &std::path::Path, prompt: &str, n: usize) -> Vec<i32> {
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: installs a callback that only reads the message it is given; no user data.
    unsafe { sys::llama_log_set(Some(errors_only), std::ptr::null_mut()) };
    // SAFETY: backend init has no preconditions and is idempotent.
    unsafe { sys::llama_backend_init() };
    // SAFETY: returns a plain struct by value.
    let mparams = unsafe { sys::llama_model_default_params() };
    // SAFETY: cpath is a valid NUL-terminated path; params came from llama.cpp's defaults.
    let model = unsafe { sys::llama_model_load_from_file(cpath.as_ptr(), mparams) };
    assert!(!model.is_null(), "llama.cpp refused to load {}", path.display());
    // SAFETY: returns a plain struct by value.
    let mut cparams = unsafe { sys::llama_context_default_params() };
    cparams.n_ctx = 256;
    cparams.n_batch = 64;
    cparams.n_threads = 2;
    cparams.n_threads_batch = 2;
    // SAFETY: model is a live model loaded above.
    let ctx = unsafe { sys::llama_init_from_model(model, cparams) };
    assert!(!ctx.is_null(), "llama.cpp could not create a context");
    // SAFETY: model is live; the vocab it returns lives as long as the model.
    let vocab = unsafe { sys::llama_model_get_vocab(model) };
    // SAFETY: vocab is live.
    let n_vocab = unsafe { sys::llama_vocab_n_tokens(vocab) } as usize;
    let mut toks = vec![0i32; 64];
    // SAFETY: the text pointer/length describe `prompt`; toks has room for 64 tokens.
    let n_tok = unsafe {
        sys::llama_tokenize(vocab, prompt.as_ptr().cast(), prompt.len() as i32, toks.as_mut_ptr(), 64, false, true)
    };
    assert!(n_tok > 0, "tokenize returned {n_tok}");
    toks.truncate(n_tok as usize);
    let mut out = Vec::new();
    let mut batch_toks = toks.clone();
    for _ in 0..n {
        // SAFETY: batch_toks outlives the decode call that reads the batch.
        let batch = unsafe { sys::llama_batch_get_one(batch_toks.as_mut_ptr(), batch_toks.len() as i32) };
        // SAFETY: ctx is live; batch points at valid tokens.
        let rc = unsafe { sys::llama_decode(ctx, batch) };
        assert_eq!(rc, 0, "llama_decode failed");
        // SAFETY: the last batch entry requested logits (llama_batch_get_one does for the last).
        let logits = unsafe { std::slice::from_raw_parts(sys::llama_get_logits_ith(ctx, -1), n_vocab) };
        assert!(logits.iter().all(|l| l.is_finite()), "non-finite logits");
        let spread = logits.iter().cloned().fold(f32::MIN, f32::max) - logits.iter().cloned().fold(f32::MAX, f32::min);
        assert!(spread > 1e-3, "flat logits: the weights did not reach the output");
        let next = (0..n_vocab).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap() as i32;
        out.push(next);
        batch_toks = vec![next];
    }
    // SAFETY: freeing in reverse order of creation; nothing uses them after.
    unsafe {
        sys::llama_free(ctx);
        sys::llama_model_free(model);
    }
    out
}

#[test]
fn tiny_models_load_and_generate_in_llama_cpp() {
    let dir = tempfile::tempdir().unwrap();
    for (quant, skew) in [(Quant::Q4KM, 0.0), (Quant::Q8_0, 1.0), (Quant::F16, 0.0)] {
        let mut o = Options::new("qwen3moe", "tiny", quant, 11).unwrap();
        o.route_skew = skew;
        let path = dir.path().join(format!("tiny-{quant:?}.gguf"));
        synth::write(&o, &path, &mut |_, _| {}).unwrap();
        let toks = llama_generate(&path, "Hello world, the quick brown fox", 8);
        assert_eq!(toks.len(), 8, "{quant:?}");
    }
}

/// gpt-oss (llama.cpp's OPENAI_MOE graph: sinks, sliding window, YaRN, biased experts) loads
/// and generates from our tiny files, MXFP4 experts included.
#[test]
fn tiny_gpt_oss_loads_and_generates_in_llama_cpp() {
    let dir = tempfile::tempdir().unwrap();
    for quant in [Quant::Mxfp4, Quant::Q8_0, Quant::F32] {
        let mut o = Options::new("gpt-oss", "tiny", quant, 5).unwrap();
        o.shape.n_swa = 8;
        let path = dir.path().join(format!("gpt-oss-{quant:?}.gguf"));
        synth::write(&o, &path, &mut |_, _| {}).unwrap();
        let toks = llama_generate(&path, "<|start|>user<|message|>Hello world, the quick brown fox<|end|>", 12);
        assert_eq!(toks.len(), 12, "{quant:?}");
    }
}

#[test]
fn split_model_loads_in_llama_cpp() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::new("qwen3moe", "tiny", Quant::Q4KM, 3).unwrap();
    o.split = 3;
    let paths = synth::write(&o, &dir.path().join("m.gguf"), &mut |_, _| {}).unwrap();
    assert_eq!(paths.len(), 3);
    assert!(paths[0].to_str().unwrap().ends_with("m-00001-of-00003.gguf"));
    assert_eq!(llama_generate(&paths[0], "abc", 3).len(), 3);
}

#[test]
fn generated_blocks_dequantize_to_the_requested_scale() {
    use bmoe_engine::ggml::{dequantize, GgmlType};
    use rand::SeedableRng;
    for ty in [GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16, GgmlType::MXFP4] {
        let n = 256 * 64;
        let mut buf = vec![0u8; ty.row_size(n)];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        synth::blocks::fill(ty, &mut buf, 0.02, &mut rng, None);
        let x = dequantize(ty, &buf, n).unwrap();
        let mean = x.iter().sum::<f32>() / n as f32;
        let sd = (x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32).sqrt();
        assert!(mean.abs() < 0.002, "{ty}: mean {mean}");
        assert!((sd - 0.02).abs() < 0.003, "{ty}: sd {sd}");
        if ty != GgmlType::Q6_K && ty != GgmlType::MXFP4 {
            // A planted offset moves the mean and keeps the spread.
            let at = |_: usize| 0.05f32;
            let off = synth::blocks::Offset { row_len: 256, at: &at };
            synth::blocks::fill(ty, &mut buf, 0.02, &mut rng, Some(&off));
            let x = dequantize(ty, &buf, n).unwrap();
            let mean = x.iter().sum::<f32>() / n as f32;
            assert!((mean - 0.05).abs() < 0.005, "{ty}: offset mean {mean}");
        }
    }
}

/// A big synthetic model (e.g. `qwen3-30b-a3b` q4_k_m) loads and generates in llama.cpp:
/// `BMOE_BIG_MODEL=models/qwen3-30b-a3b-q4_k_m.gguf cargo test -p bmoe-engine --test synth_llama -- --ignored`.
#[test]
#[ignore = "needs a big synthetic model; set BMOE_BIG_MODEL"]
fn big_synthetic_model_generates_in_llama_cpp() {
    let path = std::env::var("BMOE_BIG_MODEL").expect("BMOE_BIG_MODEL=path to a synthetic model");
    assert_eq!(llama_generate(std::path::Path::new(&path), "Hello", 3).len(), 3);
}
