//! The generic decoder's gates: llama.cpp's own graph with the routed experts streamed in ==
//! llama.cpp resident on the same file, bit for bit (logits at every step and the tokens,
//! greedy and sampled), on tiny synthetic qwen3moe, qwen2moe, olmoe, Mixtral, gpt-oss, gemma4,
//! deepseek2, qwen35moe (separate and fused gate/up experts), qwen3next, glm4moe, minimax-m2,
//! llama4, bailingmoe2 and lfm2moe; with the cache evicting, with no cache, with the pread
//! backend. Poison first: every page wholly inside an expert tensor of llama.cpp's mapping shows
//! 0xFF bytes unless our slots are mapped over it, so equal bits prove every routed byte came
//! from the cache; a negative case skips one read and sees the bits change.
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
    synth_model_with(dir, arch, quant, &[])
}

/// The tiny shape of `arch` with the shape extras `extra` set (a variant of the architecture's
/// files, such as fused gate/up experts).
fn synth_model_with(dir: &Path, arch: &str, quant: Quant, extra: &[(&'static str, f64)]) -> PathBuf {
    let mut o = synth::Options::new(arch, "tiny", quant, 21).unwrap();
    for &(k, v) in extra {
        o.shape.extra.retain(|(name, _)| *name != k);
        o.shape.extra.push((k, v));
    }
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

const FITS: Case = Case { what: "every expert fits", slots: 64, ..BASE };
const EVICTING: Case = Case { what: "evicting", slots: 9, ..BASE };
const NO_CACHE: Case = Case { what: "no cache", slots: 0, ..BASE };
const IN_PLACE: Case = Case { what: "in place (no memfd)", in_place: true, ..BASE };

const CASES: &[Case] = &[
    FITS,
    EVICTING,
    NO_CACHE,
    Case { what: "pipelined, no look-ahead", overlap: Overlap::Pipeline, ..BASE },
    Case { what: "look-ahead, not pipelined", overlap: Overlap::Lookahead, ..BASE },
    Case { what: "pread backend", backend: BackendKind::Pread, ..BASE },
    Case { what: "serial", overlap: Overlap::Off, ..BASE },
    Case { what: "no O_DIRECT", direct: false, ..BASE },
    IN_PLACE,
    Case { what: "in place, no cache", slots: 0, in_place: true, ..BASE },
];

/// The cases for the other architectures: the cache evicting, and none.
const SOME_CASES: &[Case] = &[EVICTING, NO_CACHE];

/// llama.cpp resident at micro-batches of `ubatch`: its greedy and sampled runs.
fn resident_runs(path: &Path, ubatch: u32) -> [(Vec<Vec<u32>>, Vec<i32>); 2] {
    let mut r = builder(path).ubatch(ubatch).engine(EngineKind::LlamaPlain).open().unwrap();
    let n_vocab = r.tokenizer().n_vocab();
    let g = generate(&mut r, &mut greedy);
    r.reset();
    [g, generate(&mut r, &mut sampled(n_vocab))]
}

/// Every case of `cases`, greedy and sampled, against llama.cpp resident.
fn gates(arch: &str, quant: Quant, cases: &[Case]) {
    gates_with(arch, quant, &[], cases);
}

/// llama.cpp resident's logits (their bits, per step) and tokens, greedy and sampled.
type Reference = (Vec<Vec<u32>>, Vec<i32>);

/// As [`gates`], on the tiny shape with the extras `extra`.
fn gates_with(arch: &str, quant: Quant, extra: &[(&'static str, f64)], cases: &[Case]) {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model_with(dir.path(), arch, quant, extra);
    // llama.cpp resident at the micro-batch asked (8). llama.cpp's own kernels are not
    // micro-batch invariant for every architecture and type (qwen35moe at q4_k_m differs between
    // -ub 1 and -ub 8, resident alone), so the generic decoder never lowers it to fit a small
    // cache (it once did, and its text then depended on the cache size): a cache of 0 slots is
    // raised to one micro-batch's union and equals resident at -ub 8.
    let mut want: std::collections::HashMap<u32, [Reference; 2]> = Default::default();
    let n_vocab = bmoe_engine::llama::Model::vocab_only(&path).unwrap().n_vocab();
    for &c in cases {
        let mut g = generic(&path, c);
        let line = g.report().mode_line();
        assert!(line.contains("decoder generic") && line.contains("poisoned"), "{arch} {}: {line}", c.what);
        assert_eq!(line.contains("read in place"), c.in_place, "{arch} {}: {line}", c.what);
        let ub = g.report().n_ubatch;
        assert_eq!(ub, 8, "{arch} {}: the micro-batch moved: {line}", c.what);
        let [want_greedy, want_sampled] = want.entry(ub).or_insert_with(|| resident_runs(&path, ub));
        assert!(
            generate(&mut g, &mut greedy) == *want_greedy,
            "{arch} {} greedy: generic differs from resident at -ub {ub}",
            c.what
        );
        g.reset();
        assert!(
            generate(&mut g, &mut sampled(n_vocab)) == *want_sampled,
            "{arch} {} sampled: generic differs from resident at -ub {ub}",
            c.what
        );
        let p = g.telemetry().provider.unwrap();
        assert!(p.misses > 0 && p.bytes_read > 0, "{arch} {}: nothing was read", c.what);
        if c.overlap.lookahead() && c.slots >= 9 {
            // Look-ahead read entries, and some of them were then routed (prefetch-served).
            assert!(p.spec_entries > 0 && p.spec_bytes > 0, "{arch} {}: look-ahead read nothing", c.what);
            assert!(p.real_with_prediction > 0, "{arch} {}: no prediction was scored", c.what);
        } else if !c.overlap.lookahead() {
            assert_eq!(p.spec_entries, 0, "{arch} {}: read ahead with look-ahead off", c.what);
        }
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

/// gemma4: the experts' gate and up fused in one tensor (`ffn_gate_up_exps`, one slice and one
/// `mul_mat_id` per expert for both), a per-expert scale on the down projection that the graph
/// reads with the same routed ids (resident), the router's logits computed by the model's own
/// graph, sliding-window layers beside full ones, soft-capped logits. q4_k_m, every case: the
/// fused slices are whole pages, the q6_K down slices are not.
#[test]
fn gemma4_generic_equals_llama_resident() {
    gates("gemma4", Quant::Q4KM, CASES);
}

#[test]
fn gemma4_q8_0_generic_equals_llama_resident() {
    gates("gemma4", Quant::Q8_0, SOME_CASES);
}

/// deepseek2 (DeepSeek-V3, Kimi-K2): MLA attention (its 3-D `attn_k_b`/`attn_v_b` dense), a
/// leading dense layer with no experts (layer 0: the MoE layers are 1..), expert groups (4 of
/// 2 experts, 2 used: `ffn_moe_group_topk` masks the other groups before `ffn_moe_topk`),
/// sigmoid gating with the `exp_probs_b` selection bias, weights normalised and scaled by 2.5,
/// a shared expert, YaRN. q8_0, and q4_k_m (q6_K downs on `use_more_bits` layers: slices not
/// whole pages; q5_0 `attn_k_b`, whose 64-wide rows are not whole 256-blocks).
#[test]
fn deepseek2_generic_equals_llama_resident() {
    gates("deepseek2", Quant::Q8_0, SOME_CASES);
    gates("deepseek2", Quant::Q4KM, &[EVICTING, FITS]);
}

/// Evicted windows are retired lazily (they keep showing their old slot); with the cap on such
/// stale windows at 1, they are put back (to the poison) oldest first: the same bits.
#[test]
fn stale_windows_put_back_under_their_cap_keep_the_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q4KM);
    let want = generate(&mut resident(&path), &mut greedy);
    for cap in [0, 1, 5] {
        let mut g = generic(&path, EVICTING);
        g.generic_mut().unwrap().experts_mut().overlay_mut().set_stale_cap(cap);
        assert!(generate(&mut g, &mut greedy) == want, "stale cap {cap}: generic differs from resident");
        let x = g.generic().unwrap().experts();
        assert!(x.overlay().stale() <= cap, "cap {cap}: {} stale windows", x.overlay().stale());
        assert!(x.cache().counters().total().evictions > 0, "cap {cap}: nothing was evicted");
    }
    let mut g = generic(&path, EVICTING);
    generate(&mut g, &mut greedy);
    assert!(g.generic().unwrap().experts().overlay().stale() > 5, "no window was retired lazily");
}

/// qwen35moe (Qwen3.5/3.6 MoE): gated delta-net layers with their recurrent state, gated full
/// attention every fourth layer, a shared expert; gate and up separate, as the published files.
/// q8_0 and q4_k_m (the published mix), evicting and with no cache. No cache lowers the
/// micro-batch to 1 (k slots), and llama.cpp's own qwen35moe graph is not micro-batch invariant
/// at q4_k_m (resident at -ub 1 and -ub 8 differ in low bits, streaming or not; at q8_0 it is):
/// the reference is resident at the micro-batch the generic engine runs.
#[test]
fn qwen35moe_generic_equals_llama_resident() {
    gates("qwen35moe", Quant::Q8_0, SOME_CASES);
    gates("qwen35moe", Quant::Q4KM, SOME_CASES);
}

/// qwen35moe with the fused `ffn_gate_up_exps` (`--fuse-gate-up-exps` files): one slice per
/// expert holds gate and up, one `mul_mat_id` computes both. q8_0 evicting and with no cache;
/// q4_k_m evicting and in place, where the q6_K down slices of the `use_more_bits` layers are
/// not whole pages.
#[test]
fn qwen35moe_fused_gate_up_generic_equals_llama_resident() {
    let fused = [("fused_gate_up", 1.0)];
    let dir = tempfile::tempdir().unwrap();
    let g = GenericIndex::new(
        bmoe_engine::gguf::open_model(&synth_model_with(dir.path(), "qwen35moe", Quant::Q4KM, &fused)).unwrap(),
    )
    .unwrap();
    for l in &g.layers {
        let names: Vec<&str> = l.tensors.iter().map(|t| t.proj.name()).collect();
        assert_eq!(names, ["gate_up", "down"], "layer {}", l.layer);
    }
    gates_with("qwen35moe", Quant::Q8_0, &fused, SOME_CASES);
    gates_with("qwen35moe", Quant::Q4KM, &fused, &[EVICTING, IN_PLACE, NO_CACHE]);
}

/// qwen3next (Qwen3-Next-80B-A3B): the layer stack of qwen35moe with one `ssm_ba` projection
/// and plain NeoX RoPE. q8_0 evicting and with no cache; q4_k_m evicting.
#[test]
fn qwen3next_generic_equals_llama_resident() {
    gates("qwen3next", Quant::Q8_0, SOME_CASES);
    gates("qwen3next", Quant::Q4KM, SOME_CASES);
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
    let case = EVICTING;
    let mut g = generic(&path, case);
    assert!(generate(&mut g, &mut greedy) == want, "the control run");
    let mut g = generic(&path, case);
    g.generic_mut().unwrap().experts_mut().skip_read(Some(3));
    let bits = |l: &[f32]| l.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let got = bits(&g.eval(&PROMPT).unwrap());
    assert!(got != want.0[0], "a skipped read still gave llama.cpp's bits: the poison is not what it reads");
}

/// `--n-expert-used`: llama.cpp's `expert_used_count` overridden at load, the same for the
/// resident run and the generic one: equal bits, with fewer experts read per token.
#[test]
fn fewer_experts_per_token_equal_llama_resident_with_the_same_k() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q8_0);
    let mut r = builder(&path).engine(EngineKind::LlamaPlain).n_expert_used(Some(1)).open().unwrap();
    let want = generate(&mut r, &mut greedy);
    let mut full = resident(&path);
    assert!(generate(&mut full, &mut greedy) != want, "k = 1 computes the same as the file's k = 2: not applied");
    let so = StreamOptions {
        cache: CacheSize::Bytes(9 * slot_bytes(&path)),
        force: true,
        io: EngineOptions { backend: BackendKind::Uring, lanes: 4, register: true, direct: true },
        ..Default::default()
    };
    let open = |k: u32| {
        builder(&path)
            .decoder(DecoderKind::Generic)
            .moe_stream(MoeStream::On)
            .stream(so)
            .poison_experts(true)
            .n_expert_used(Some(k))
            .open()
    };
    let mut g = open(1).unwrap();
    assert!(g.report().mode_line().contains("LOSSY --n-expert-used 1"), "{}", g.report().mode_line());
    assert!(generate(&mut g, &mut greedy) == want, "generic at k = 1 differs from llama.cpp resident at k = 1");
    let e = open(65).expect_err("more experts than the model has").to_string();
    assert!(e.contains("--n-expert-used 65") && e.contains("1..="), "{e}");
}

/// A `route_trace v1` of `steps` decode steps over `g`'s MoE layers in `dir`, rank `j` of
/// layer `l` at step `s` routed to `route(s, l, j)` (weights 1/k).
fn write_trace(dir: &Path, g: &GenericIndex, steps: u32, route: &dyn Fn(u32, u32, u32) -> u32) -> PathBuf {
    use std::fmt::Write as _;
    let (n_layer, n_expert, k) = (g.layers.len() as u32, g.n_expert, g.n_expert_used);
    let mut t =
        format!("# route_trace v1\n# model=t arch=qwen3moe n_layer={n_layer} n_expert={n_expert} n_expert_used={k}\n");
    for l in 0..n_layer {
        writeln!(t, "# layer={l} expert_bytes=1 dense_bytes=1").unwrap();
    }
    writeln!(t, "{}", bmoe_engine::cache::trace::CSV_HEADER).unwrap();
    for step in 0..steps {
        for l in 0..n_layer {
            for j in 0..k {
                writeln!(t, "0,1,{step},{l},{j},{},{},0,0", route(step, l, j), 1.0 / k as f32).unwrap();
            }
        }
    }
    let path = dir.join("t.route.csv");
    std::fs::write(&path, t).unwrap();
    path
}

/// `--route-replay`: the trace's ids are written into the topk node before anything consumes
/// them: decode steps route as the trace says (the cache sees exactly its experts) and the
/// logits follow (they differ from the router's own choice); streamed with the cache evicting
/// and poisoned == with every expert resident.
#[test]
fn a_replayed_trace_routes_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q8_0);
    let g = GenericIndex::new(bmoe_engine::gguf::open_model(&path).unwrap()).unwrap();
    let (n_layer, n_expert, k) = (g.layers.len() as u32, g.n_expert, g.n_expert_used);
    // Two decode steps, each layer routed to k experts from a fixed small set (l + step + j).
    let route = |step: u32, l: u32, j: u32| (l + step + 3 * j) % n_expert;
    let trace = write_trace(dir.path(), &g, 2, &route);
    let open = |slots: u64, replay: bool| {
        let so = StreamOptions {
            cache: CacheSize::Bytes(slots * slot_bytes(&path)),
            force: true,
            io: EngineOptions { backend: BackendKind::Uring, lanes: 4, register: true, direct: true },
            ..Default::default()
        };
        builder(&path)
            .decoder(DecoderKind::Generic)
            .moe_stream(MoeStream::On)
            .stream(so)
            .poison_experts(true)
            .route_replay(replay.then(|| trace.clone()))
            .open()
            .unwrap()
    };
    let mut plain = open(64, false);
    let own = generate(&mut plain, &mut greedy);
    let mut all = open(64, true);
    assert!(all.report().mode_line().contains("LOSSY routing replayed"), "{}", all.report().mode_line());
    let replayed = generate(&mut all, &mut greedy);
    assert_eq!(replayed.0[0], own.0[0], "the prompt is not replayed (decode steps only)");
    assert!(replayed.0[1..] != own.0[1..], "the replayed routing did not change the logits");
    let mut evicting = open(9, true);
    assert!(generate(&mut evicting, &mut greedy) == replayed, "evicting differs from every expert resident");
    // The last decode step (the 12th: the trace's second, as steps wrap) routed every layer to
    // exactly the trace's experts.
    let x = evicting.generic().unwrap().experts();
    for l in 0..n_layer {
        let mut got = x.last_routed(l as usize).to_vec();
        let mut want: Vec<u32> = (0..k).map(|j| route((STEPS as u32 - 1) % 2, l, j)).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "layer {l}");
    }
}

/// A conversation saved from the generic decoder (llama.cpp's state and the experts cached) and
/// loaded into a new engine continues bit-identically to one that never stopped, its cache
/// warmed; each turn reuses the context it holds.
#[test]
fn a_saved_generic_conversation_continues_bit_identically() {
    use bmoe_engine::engine::GenParams;
    use bmoe_engine::session::Control;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q8_0);
    let turn = |e: &mut Engine, conv: &mut Vec<i32>| {
        let mut logits = Vec::new();
        let mut pick = |l: &[f32]| {
            logits.push(l.iter().map(|x| x.to_bits()).collect::<Vec<u32>>());
            greedy(l)
        };
        let params = GenParams { n_predict: 6, ignore_eos: true };
        let held = e.context().len();
        let g = e.generate_from(conv, &params, &mut pick, &mut |_| Control::Continue, &mut |_, _| {}).unwrap();
        assert_eq!(g.reused_tokens, held, "the context held was not reused");
        conv.extend(&g.tokens);
        (g.tokens, logits)
    };
    let second: [i32; 3] = [17, 3, 99];
    let mut a = generic(&path, EVICTING);
    let mut conv = PROMPT.to_vec();
    turn(&mut a, &mut conv);
    conv.extend(second);
    let want = turn(&mut a, &mut conv);
    drop(a);
    let file = dir.path().join("s.session");
    let mut b = generic(&path, EVICTING);
    let mut conv = PROMPT.to_vec();
    turn(&mut b, &mut conv);
    b.save_session(&file, serde_json::json!({ "conv": conv })).unwrap();
    let held = b.generic().unwrap().experts().cache().resident_ids().count();
    drop(b);
    let mut c = generic(&path, EVICTING);
    let extra = c.load_session(&file).unwrap();
    assert_eq!(c.generic().unwrap().experts().cache().resident_ids().count(), held, "the load did not warm the cache");
    let mut conv: Vec<i32> = serde_json::from_value(extra["conv"].clone()).unwrap();
    conv.extend(second);
    assert!(turn(&mut c, &mut conv) == want, "turn 2 after a load differs from the conversation that never stopped");
}

/// llama.cpp's load under the generic decoder reads the dense tensors only (every routed-expert
/// tensor lazy, the vendored llama.cpp's patch): with the model's pages out of the page cache
/// first, what the opening thread read from storage (`/proc/thread-self/io`) is at most the
/// dense bytes + 5 %, and far below the file; the dense pages are locked, or the load line says
/// why not.
#[test]
fn the_generic_load_reads_the_dense_tensors_only() {
    use std::os::fd::AsRawFd as _;
    let dir = tempfile::tempdir().unwrap();
    let mut o = synth::Options::new("qwen3moe", "small", Quant::Q8_0, 21).unwrap();
    o.shape.n_layer = o.shape.n_layer.min(8);
    let path = synth::write(&o, &dir.path().join("small.gguf"), &mut |_, _| {}).unwrap()[0].clone();
    let file_len = std::fs::metadata(&path).unwrap().len();
    let g = GenericIndex::new(bmoe_engine::gguf::open_model(&path).unwrap()).unwrap();
    let (dense, experts) = (g.dense_bytes(), g.expert_bytes());
    assert!(experts > 4 * dense, "the model must be mostly experts: dense {dense}, experts {experts}");
    // Written pages made clean, then dropped from the page cache.
    let f = std::fs::File::open(&path).unwrap();
    f.sync_all().unwrap();
    // SAFETY: advice on our own descriptor; no memory is touched.
    assert_eq!(unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) }, 0);
    let e = generic(&path, EVICTING);
    let r = match &e.report().mode {
        bmoe_engine::engine::Mode::Streaming(s) => s.generic.clone().unwrap(),
        m => panic!("not streaming: {m:?}"),
    };
    let read = r.llama_read_bytes.expect("/proc/thread-self/io readable here");
    assert!(read > 0, "the load read nothing from storage: the page cache was not dropped");
    assert!(
        read as f64 <= dense as f64 * 1.05,
        "the load read {read} bytes for {dense} of dense tensors (file {file_len}): {}",
        e.report().load_line()
    );
    // Locked where the memlock limit allows (root here), else the load line says why.
    match &r.dense_unlocked {
        None => assert!(r.dense_locked_bytes >= dense, "{}", e.report().load_line()),
        Some(why) => assert!(why.contains("RLIMIT_MEMLOCK"), "{}", e.report().load_line()),
    }
    assert!(e.report().load_line().contains("locked in RAM"), "{}", e.report().load_line());
}

/// The look-ahead judge, by the step a read was for: under a replayed trace with look-ahead's
/// predictions drawn from it at 0 % right, look-ahead switches itself off within a few steps
/// (and the gates' bits do not move); at 100 % right it stays on and serves reads.
#[test]
fn look_ahead_under_replay_is_judged_by_the_step_it_read_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q8_0);
    let g = GenericIndex::new(bmoe_engine::gguf::open_model(&path).unwrap()).unwrap();
    let (n_layer, n_expert, k) = (g.layers.len() as u32, g.n_expert, g.n_expert_used);
    let trace = write_trace(dir.path(), &g, 16, &|step, l, j| (5 * step + l + 3 * j) % n_expert);
    let run = |accuracy: f64| {
        let so = StreamOptions {
            cache: CacheSize::Bytes(24 * slot_bytes(&path)),
            force: true,
            io: EngineOptions { backend: BackendKind::Uring, lanes: 4, register: true, direct: true },
            overlap: Overlap::Full,
            ..Default::default()
        };
        let mut e = builder(&path)
            .decoder(DecoderKind::Generic)
            .moe_stream(MoeStream::On)
            .stream(so)
            .poison_experts(true)
            .route_replay(Some(trace.clone()))
            .route_replay_prediction(Some(accuracy))
            .open()
            .unwrap();
        let out = generate(&mut e, &mut greedy);
        let x = e.generic().unwrap().experts();
        let (on, why) = x.lookahead();
        (out, on, why.map(str::to_string), e.telemetry().provider.unwrap())
    };
    let (wrong, on, why, p) = run(0.0);
    assert!(!on, "look-ahead stayed on at 0 % right: {p:?}");
    assert!(why.as_deref().is_some_and(|w| w.contains("predicted for their step")), "{why:?}");
    assert_eq!(p.predicted_real, 0, "{p:?}");
    // Judged after 16 scored experts per layer: the reads stopped long before the run ended.
    let per_step = u64::from(k) * u64::from(n_layer - 1);
    assert!(p.spec_entries <= per_step * (16u64.div_ceil(u64::from(k)) + 1), "{p:?}");
    let (right, on, why, p) = run(1.0);
    assert!(on, "look-ahead went off at 100 % right: {why:?}");
    assert!(p.spec_useful > 0 && p.predicted_real == p.real_with_prediction, "{p:?}");
    assert!(right == wrong, "look-ahead's predictions changed the bits");
}

/// The text does not depend on the cache size: at budgets of 0, 1 and 4 MiB (below one
/// micro-batch's union of routed experts, once lowering the micro-batch and with it llama.cpp's
/// kernels' bits) the generic decoder keeps llama.cpp's micro-batch, raises the pool to its
/// floor, and equals llama.cpp resident at that micro-batch, on qwen35moe at q4_k_m, whose
/// kernels differ between micro-batches.
#[test]
fn the_generic_text_does_not_depend_on_the_cache_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen35moe", Quant::Q4KM);
    let [want, _] = resident_runs(&path, 8);
    for mib in [0u64, 1, 4] {
        let so = StreamOptions { cache: CacheSize::Bytes(mib << 20), force: true, ..Default::default() };
        let mut g = builder(&path)
            .decoder(DecoderKind::Generic)
            .moe_stream(MoeStream::On)
            .stream(so)
            .poison_experts(true)
            .open()
            .unwrap();
        let line = g.report().mode_line();
        assert_eq!(g.report().n_ubatch, 8, "{mib} MiB: {line}");
        assert!(line.contains("floor"), "{mib} MiB: {line}");
        assert!(generate(&mut g, &mut greedy) == want, "{mib} MiB: generic differs from resident at -ub 8: {line}");
    }
}

/// `--route-trace` on the generic decoder: every pass's routing per MoE layer (the union over
/// the micro-batch), decode steps with exactly the experts the streamer was asked for, weights
/// from the router's probabilities; written as `route_trace v1` it reads back and replays.
#[test]
fn the_generic_decoder_records_its_routing() {
    use bmoe_engine::cache::trace::{RouteTrace, TraceWriter};
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "qwen3moe", Quant::Q8_0);
    let g = GenericIndex::new(bmoe_engine::gguf::open_model(&path).unwrap()).unwrap();
    let (n_layer, k) = (g.layers.len(), g.n_expert_used as usize);
    let mut e = generic(&path, EVICTING);
    e.record_routes(true).unwrap();
    generate(&mut e, &mut greedy);
    let routes = e.take_routes();
    let decode: Vec<_> = routes.iter().filter(|r| !r.prefill).collect();
    assert_eq!(decode.len(), STEPS * n_layer, "one record per decode step and MoE layer");
    assert_eq!(routes.iter().filter(|r| r.prefill).count(), 2 * n_layer, "two prompt micro-batches");
    for r in &decode {
        assert_eq!(r.experts.len(), k, "{r:?}");
        let mut ranks: Vec<u32> = r.experts.iter().map(|x| x.1).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..k as u32).collect::<Vec<_>>(), "{r:?}");
        assert!(r.experts.iter().all(|x| x.2.is_finite() && x.2 > 0.0 && x.2 <= 1.0), "{r:?}");
    }
    let x = e.generic().unwrap().experts();
    for l in 0..n_layer {
        let last = decode.iter().rfind(|r| r.layer as usize == l).unwrap();
        let mut got: Vec<u32> = last.experts.iter().map(|x| x.0).collect();
        let mut want = x.last_routed(l).to_vec();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "layer {l}: the record is not what the streamer was asked for");
    }
    let header = e.trace_header("t").unwrap();
    assert_eq!(header.n_layer() as usize, n_layer);
    let mut buf = Vec::new();
    let mut w = TraceWriter::new(&mut buf, &header).unwrap();
    for row in routes.iter().flat_map(|r| r.rows()) {
        w.write_row(&row).unwrap();
    }
    w.finish().unwrap();
    let t = RouteTrace::parse(buf.as_slice(), "recorded").unwrap();
    let replay = bmoe_engine::decoder::RouteReplay::from_trace(&t, "recorded").unwrap();
    replay.check(n_layer as u32, g.n_expert, k).unwrap();
    assert_eq!(replay.len(), STEPS);
}
