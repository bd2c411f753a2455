//! The generic decoder's gates: llama.cpp's own graph with the routed experts streamed in ==
//! llama.cpp resident on the same file, bit for bit (logits at every step and the tokens,
//! greedy and sampled), on tiny synthetic qwen3moe, qwen2moe, olmoe, Mixtral, gpt-oss and the
//! architectures only the generic decoder runs (glm4moe, minimax-m2, llama4, bailingmoe2,
//! lfm2moe); with the cache evicting, with no cache, with the pread backend. Poison first: every
//! page wholly inside an expert tensor of llama.cpp's mapping shows 0xFF bytes unless our slots
//! are mapped over it, so equal bits prove every routed byte came from the cache; a negative case
//! skips one read and sees the bits change.
#![cfg(feature = "ffi")]

use std::path::{Path, PathBuf};

use bmoe_engine::engine::{DecoderKind, Engine, EngineBuilder, EngineKind, MoeStream, Overlap, StreamOptions};
use bmoe_engine::generic::experts;
use bmoe_engine::generic::index::GenericIndex;
use bmoe_engine::llama::{Sampler, Sampling};
use bmoe_engine::stream::budget::CacheSize;
use bmoe_engine::synth::{self, Quant};
use bmoe_uring_io::{BackendKind, EngineOptions};

const PROMPT: [i32; 12] = [5, 77, 300, 12, 9, 250, 401, 33, 7, 128, 64, 2];
const STEPS: usize = 12;

fn synth_model(dir: &Path, arch: &str, quant: Quant) -> PathBuf {
    let o = synth::Options::new(arch, "tiny", quant, 21).unwrap();
    synth::write(&o, &dir.join(format!("{arch}.gguf")), &mut |_, _| {}).unwrap()[0].clone()
}

/// A context of 128, 2 threads, micro-batches of 8 (the prompt in two).
fn builder(path: &Path) -> EngineBuilder {
    Engine::builder(path).context(128).threads(2).ubatch(8)
}

fn resident(path: &Path) -> Engine {
    builder(path).engine(EngineKind::LlamaPlain).open().unwrap()
}

/// The bytes of one slot of the generic streamer for this model.
fn slot_bytes(path: &Path) -> u64 {
    let g = GenericIndex::new(bmoe_engine::gguf::open_model(path).unwrap()).unwrap();
    experts::slot_bytes(&g, bmoe_uring_io::page_size().max(4096) as u64) as u64
}

#[derive(Clone, Copy, Debug)]
struct Case {
    what: &'static str,
    slots: u64,
    backend: BackendKind,
    direct: bool,
    overlap: Overlap,
    /// The fallback for kernels without memfd: reads in place into llama.cpp's mapping.
    in_place: bool,
}

fn generic(path: &Path, c: Case) -> Engine {
    let so = StreamOptions {
        cache: CacheSize::Bytes(c.slots * slot_bytes(path)),
        force: true,
        io: EngineOptions { backend: c.backend, lanes: 4, register: true, direct: c.direct },
        overlap: c.overlap,
        ..Default::default()
    };
    builder(path)
        .decoder(DecoderKind::Generic)
        .moe_stream(MoeStream::On)
        .stream(so)
        .poison_experts(true)
        .generic_in_place(c.in_place)
        .open()
        .unwrap()
}

/// The prompt (two micro-batches), then `STEPS` single steps, each token picked by `pick`;
/// every step's logits as bits, and the tokens.
fn generate(e: &mut Engine, pick: &mut dyn FnMut(&[f32]) -> i32) -> (Vec<Vec<u32>>, Vec<i32>) {
    let bits = |l: &[f32]| l.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let mut l = e.eval(&PROMPT).unwrap();
    let mut steps = vec![bits(&l)];
    let mut toks = Vec::new();
    for _ in 0..STEPS {
        assert!(l.iter().all(|x| x.is_finite()), "logits not finite: bit-equality would mean nothing");
        let t = pick(&l);
        toks.push(t);
        l = e.eval(&[t]).unwrap();
        steps.push(bits(&l));
    }
    (steps, toks)
}

fn greedy(l: &[f32]) -> i32 {
    (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32
}

fn sampled(n_vocab: usize) -> impl FnMut(&[f32]) -> i32 {
    let mut s = Sampler::new(Sampling { seed: 7, ..Sampling::default() }, n_vocab).unwrap();
    move |l: &[f32]| s.sample(l)
}

const BASE: Case =
    Case { what: "", slots: 10, backend: BackendKind::Uring, direct: true, overlap: Overlap::Full, in_place: false };

const CASES: &[Case] = &[
    Case { what: "every expert fits", slots: 64, ..BASE },
    Case { what: "evicting", slots: 9, ..BASE },
    Case { what: "no cache", slots: 0, ..BASE },
    Case { what: "pread backend", backend: BackendKind::Pread, ..BASE },
    Case { what: "serial", overlap: Overlap::Off, ..BASE },
    Case { what: "no O_DIRECT", direct: false, ..BASE },
    Case { what: "in place (no memfd)", in_place: true, ..BASE },
    Case { what: "in place, no cache", slots: 0, in_place: true, ..BASE },
];

/// The cases for the other architectures: the cache evicting, and none.
const SOME_CASES: &[Case] = &[CASES[1], CASES[2]];

/// Every case of `cases`, greedy and sampled, against llama.cpp resident.
fn gates(arch: &str, quant: Quant, cases: &[Case]) {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), arch, quant);
    let mut r = resident(&path);
    let n_vocab = r.tokenizer().n_vocab();
    let want_greedy = generate(&mut r, &mut greedy);
    r.reset();
    let want_sampled = generate(&mut r, &mut sampled(n_vocab));
    drop(r);
    for &c in cases {
        let mut g = generic(&path, c);
        let line = g.report().mode_line();
        assert!(line.contains("decoder generic") && line.contains("poisoned"), "{arch} {}: {line}", c.what);
        assert_eq!(line.contains("read in place"), c.in_place, "{arch} {}: {line}", c.what);
        assert!(
            generate(&mut g, &mut greedy) == want_greedy,
            "{arch} {} greedy: generic differs from resident",
            c.what
        );
        g.reset();
        assert!(
            generate(&mut g, &mut sampled(n_vocab)) == want_sampled,
            "{arch} {} sampled: generic differs from resident",
            c.what
        );
        let p = g.telemetry().provider.unwrap();
        assert!(p.misses > 0 && p.bytes_read > 0, "{arch} {}: nothing was read", c.what);
        if c.slots < 32 {
            assert!(p.evictions > 0, "{arch} {}: no eviction with {} slots", c.what, c.slots);
        } else {
            assert_eq!(p.evictions, 0, "{arch} {}", c.what);
        }
    }
}

#[test]
fn qwen3moe_generic_equals_llama_resident() {
    gates("qwen3moe", Quant::Q8_0, CASES);
}

/// q4_k_m: the q6_K down slices are not whole pages, so neighbouring experts share a page (the
/// overlay table's boundary pages).
#[test]
fn qwen3moe_q4_k_m_generic_equals_llama_resident() {
    gates("qwen3moe", Quant::Q4KM, CASES);
}

#[test]
fn qwen2moe_generic_equals_llama_resident() {
    gates("qwen2moe", Quant::Q8_0, SOME_CASES);
}

#[test]
fn olmoe_generic_equals_llama_resident() {
    gates("olmoe", Quant::Q8_0, SOME_CASES);
}

#[test]
fn mixtral_generic_equals_llama_resident() {
    gates("llama", Quant::Q4KM, SOME_CASES);
}

#[test]
fn gpt_oss_generic_equals_llama_resident() {
    gates("gpt-oss", Quant::Mxfp4, SOME_CASES);
}

/// glm4moe: a leading dense layer and a shared expert (both resident), sigmoid routing with a
/// selection bias, normalised and scaled weights, partial RoPE, and an MTP block llama.cpp does
/// not load (the index does not stream it); every case at q4_k_m, whose q6_K and q8_0 down
/// slices are not whole pages.
#[test]
fn glm4moe_generic_equals_llama_resident() {
    gates("glm4moe", Quant::Q4KM, CASES);
}

/// minimax-m2: Q/K norms over the whole projections, partial RoPE, sigmoid routing with a
/// selection bias and normalised weights, every layer MoE.
#[test]
fn minimax_m2_generic_equals_llama_resident() {
    gates("minimax-m2", Quant::Q8_0, SOME_CASES);
}

/// llama4: MoE and dense layers interleaved, top-1 with the router weight applied before the
/// experts, a shared expert, chunked attention with no-RoPE layers (the chunk is llama.cpp's
/// fixed 8192, past these contexts); every case at q4_k_m.
#[test]
fn llama4_generic_equals_llama_resident() {
    gates("llama4", Quant::Q4KM, CASES);
}

/// bailingmoe2: expert groups (each token keeps 2 of 4 groups, then its top-k among their
/// experts), a fused QKV, a leading dense layer, a shared expert, sigmoid routing with a
/// selection bias, and an MTP block llama.cpp skips; q4_k_m.
#[test]
fn bailingmoe2_generic_equals_llama_resident() {
    gates("bailingmoe2", Quant::Q4KM, SOME_CASES);
}

/// lfm2moe: short-conv layers (a recurrent conv state) and attention layers alternating, a
/// leading dense layer, sigmoid routing with a selection bias, the embedding tied; every case at
/// q4_k_m.
#[test]
fn lfm2moe_generic_equals_llama_resident() {
    gates("lfm2moe", Quant::Q4KM, CASES);
}

/// The poison is real: skip one read and the bits change (llama.cpp then computes on 0xFF
/// bytes, or on a slot's stale ones, where the expert's should be).
#[test]
fn a_skipped_read_changes_the_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q8_0);
    let want = generate(&mut resident(&path), &mut greedy);
    let case = CASES[1];
    let mut g = generic(&path, case);
    assert!(generate(&mut g, &mut greedy) == want, "the control run");
    let mut g = generic(&path, case);
    g.generic_mut().unwrap().experts_mut().skip_read(Some(3));
    let bits = |l: &[f32]| l.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let got = bits(&g.eval(&PROMPT).unwrap());
    assert!(got != want.0[0], "a skipped read still gave llama.cpp's bits: the poison is not what it reads");
}
