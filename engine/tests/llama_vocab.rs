//! The llama.cpp pieces the CLI uses: tokenizer and chat template (vocab-only load) and the
//! sampler chain.
#![cfg(feature = "ffi")]

use bmoe_engine::llama::{Model, Sampler, Sampling};
use bmoe_engine::synth::{self, Quant};

#[test]
fn tokenize_detokenize_and_chat_template() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.gguf");
    synth::write(&synth::Options::new("qwen3moe", "tiny", Quant::Q8_0, 1).unwrap(), &path, &mut |_, _| {}).unwrap();
    let m = Model::vocab_only(&path).unwrap();
    assert_eq!(m.n_vocab(), 512);
    let text = "Hello world, ünïcode too";
    let toks = m.tokenize(text, true).unwrap();
    assert!(!toks.is_empty());
    let back: Vec<u8> = toks.iter().flat_map(|&t| m.piece(t)).collect();
    assert_eq!(String::from_utf8(back).unwrap(), text);
    let chat = m.chat("hi there").unwrap();
    assert_eq!(chat, "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n");
    // Special tokens written by the template are parsed as such, not spelled out.
    let ct = m.tokenize(&chat, true).unwrap();
    let im_start = m.tokenize("<|im_start|>", false).unwrap();
    assert_eq!(im_start.len(), 1, "<|im_start|> is one special token");
    assert_eq!(ct[0], im_start[0]);
    assert!(
        m.is_eog(m.tokenize("<|im_end|>", false).unwrap()[0])
            || m.is_eog(m.tokenize("<|endoftext|>", false).unwrap()[0])
    );
    // A missing file is an error naming it.
    let err = Model::vocab_only(&dir.path().join("missing.gguf")).unwrap_err().to_string();
    assert!(err.contains("missing.gguf"), "{err}");
}

#[test]
fn sampler_greedy_and_seeded() {
    let logits: Vec<f32> = (0..100).map(|i| ((i * 37) % 100) as f32 / 10.0).collect();
    let argmax = (0..100).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap() as i32;
    assert_eq!(Sampler::new(Sampling::greedy(), 100).unwrap().sample(&logits), argmax);
    let s = |seed| Sampling { temp: 1.5, top_k: 0, top_p: 1.0, min_p: 0.0, seed, ..Sampling::default() };
    let draw = |seed| {
        let mut sm = Sampler::new(s(seed), 100).unwrap();
        (0..20).map(|_| sm.sample(&logits)).collect::<Vec<_>>()
    };
    assert_eq!(draw(3), draw(3), "same seed, same draws");
    assert_ne!(draw(3), draw(4), "another seed, other draws");
    let mut k1 = Sampler::new(Sampling { temp: 2.0, top_k: 1, seed: 9, ..Sampling::default() }, 100).unwrap();
    assert!((0..10).all(|_| k1.sample(&logits) == argmax), "top-k 1 is greedy");
    // A repeat penalty (llama.cpp's penalties sampler) steers greedy decoding off a token it
    // has just seen: with the argmax penalized hard, the runner-up wins.
    let pen = Sampling { repeat_penalty: 100.0, repeat_last_n: 8, ..Sampling::greedy() };
    let mut p = Sampler::new(pen, 100).unwrap();
    p.accept(argmax);
    assert_ne!(p.sample(&logits), argmax, "the penalized argmax loses");
    // min-p keeps only tokens within p of the best: 0.999 leaves the argmax alone.
    let mut mp = Sampler::new(Sampling { temp: 5.0, min_p: 0.999, seed: 1, ..Sampling::default() }, 100).unwrap();
    assert!((0..10).all(|_| mp.sample(&logits) == argmax), "min-p 0.999 keeps the argmax only");
}
