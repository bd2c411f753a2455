//! The byte-identity gates: streamed == resident, bit for bit (logits at every step and the
//! tokens), greedy, single-token decode, across cache sizes, backends, lanes, O_DIRECT, split
//! models and sessions; and the failure gates (EIO mid-decode, truncated model).
#![cfg(feature = "ffi")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bmoe_engine::cache::CachePolicy;
use bmoe_engine::decoder::{Decoder, Logits, Options};
use bmoe_engine::dense::{DenseWeights, Mapping};
use bmoe_engine::engine::{Engine, EngineBuilder, GenParams, MoeStream, Overlap, StreamOptions};
use bmoe_engine::model::ModelIndex;
use bmoe_engine::provider::{ExpertProvider, ExpertPtrs, Projections, ProviderCounters, Stack};
use bmoe_engine::stream::budget::CacheSize;
use bmoe_engine::stream::{StreamerOptions, StreamingExperts};
use bmoe_engine::synth::{self, Quant};
use bmoe_uring_io::{BackendKind, EngineOptions};

const PROMPT: [i32; 12] = [5, 77, 300, 12, 9, 250, 401, 33, 7, 128, 64, 2];
const STEPS: usize = 12;

/// Tiny q8_0: every expert slice is whole 4 KiB blocks, so O_DIRECT stays on and the slots are
/// a stack. (Tiny q4_k_m's q6_K down slices are not: see `slices_not_whole_blocks_...` below.)
fn synth_model(dir: &Path, name: &str, split: u32) -> PathBuf {
    synth_quant(dir, name, split, Quant::Q8_0)
}

fn synth_quant(dir: &Path, name: &str, split: u32, quant: Quant) -> PathBuf {
    let mut o = synth::Options::new("qwen3moe", "tiny", quant, 21).unwrap();
    o.split = split;
    let paths = synth::write(&o, &dir.join(name), &mut |_, _| {}).unwrap();
    paths[0].clone()
}

fn opts() -> Options {
    Options { n_ctx: 128, n_threads: 2, n_ubatch: 8, ..Options::default() }
}

/// The gates' engine: a context of 128, 2 threads, micro-batches of 8 (the prompt in two).
fn builder(path: &Path) -> EngineBuilder {
    Engine::builder(path).context(128).threads(2).ubatch(8)
}

/// Greedy: prefill the prompt (two micro-batches), then `STEPS` single-token steps; every
/// step's logits and the tokens.
fn generate(d: &mut Engine) -> (Vec<Vec<f32>>, Vec<i32>) {
    let mut steps = vec![d.eval(&PROMPT).unwrap()];
    let mut toks = Vec::new();
    for _ in 0..STEPS {
        let l = steps.last().unwrap();
        let t = (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32;
        toks.push(t);
        steps.push(d.eval(&[t]).unwrap());
    }
    (steps, toks)
}

fn resident_engine(path: &Path) -> Engine {
    builder(path).moe_stream(MoeStream::Off).open().unwrap()
}

fn resident(path: &Path) -> (Vec<Vec<f32>>, Vec<i32>) {
    generate(&mut resident_engine(path))
}

fn streamer(path: &Path, budget_entries: f64, backend: BackendKind, lanes: usize, direct: bool) -> Engine {
    streamer_full(path, budget_entries, backend, lanes, direct, false, false)
}

fn overlap(lookahead: bool, pipeline: bool) -> Overlap {
    match (lookahead, pipeline) {
        (false, false) => Overlap::Off,
        (true, true) => Overlap::Full,
        (true, false) => Overlap::Lookahead,
        (false, true) => Overlap::Pipeline,
    }
}

/// A budget of `budget_entries` cache slots, through the builder.
fn stream_opts(path: &Path, budget_entries: f64, io: EngineOptions, overlap: Overlap) -> StreamOptions {
    let index = ModelIndex::open(path).unwrap();
    let slot = bmoe_engine::stream::slot_layout_bytes(&index.layers) as f64;
    StreamOptions {
        cache: CacheSize::Bytes((budget_entries * slot) as u64),
        force: true,
        io,
        overlap,
        ..Default::default()
    }
}

fn streamer_full(
    path: &Path,
    budget_entries: f64,
    backend: BackendKind,
    lanes: usize,
    direct: bool,
    lookahead: bool,
    pipeline: bool,
) -> Engine {
    let io = EngineOptions { backend, lanes, register: true, direct };
    let so = stream_opts(path, budget_entries, io, overlap(lookahead, pipeline));
    builder(path).moe_stream(MoeStream::On).stream(so).open().unwrap()
}

fn bits(run: &(Vec<Vec<f32>>, Vec<i32>)) -> (Vec<Vec<u32>>, Vec<i32>) {
    (run.0.iter().map(|s| s.iter().map(|x| x.to_bits()).collect()).collect(), run.1.clone())
}

#[test]
fn streamed_equals_resident() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&resident(&path));
    // tiny: 4 layers × 8 experts, top-2; the prompt routes the union of each layer's
    // experts, wider than 2 slots (cache off, so in parts).
    let cases: &[(&str, f64, BackendKind, usize, bool)] = &[
        ("cache off", 0.0, BackendKind::Uring, 4, true),
        ("evicting every token", 3.0, BackendKind::Uring, 4, true),
        ("every expert fits", 32.0, BackendKind::Uring, 4, true),
        ("pread backend", 5.0, BackendKind::Pread, 4, true),
        ("one lane", 5.0, BackendKind::Uring, 1, true),
        ("no O_DIRECT", 5.0, BackendKind::Uring, 4, false),
    ];
    // Each case serial, then with --overlap (per-expert pipelining + look-ahead).
    for (&(what, budget, backend, lanes, direct), overlap) in cases.iter().flat_map(|c| [(c, false), (c, true)]) {
        let mut d = streamer_full(&path, budget, backend, lanes, direct, overlap, overlap);
        let got = bits(&generate(&mut d));
        assert!(got == want, "{what} (overlap {overlap}): streamed output differs from resident");
        let s = d.streamer().unwrap();
        assert_eq!(s.engine().file(0).unwrap().o_direct(), direct, "{what}: O_DIRECT as asked");
        let c = s.cache().counters().total();
        assert!(c.misses > 0 && s.stats().bytes_read > 0, "{what}: nothing was read");
        if budget < 8.0 {
            assert!(c.evictions > 0, "{what}: no eviction with a budget of {budget} entries");
        }
        if budget >= 32.0 {
            assert_eq!(c.evictions, 0, "{what}");
        }
        if budget == 0.0 {
            assert!(s.budget_raised(), "a budget of 0 is raised to one layer's top-k");
        }
    }
}

/// Expert slices that are not whole 4 KiB blocks. k-quants (tiny q4_k_m's q6_K slices): read
/// with O_DIRECT, each payload at its offset's place within a block, no stacks (the per-expert
/// `mul_mat` runs the same kernel as `mul_mat_id`). q8_0 (which ggml's sgemm also takes in
/// `mul_mat`, in another summation order): through the page cache, as a stack. Same bits.
#[test]
fn slices_not_whole_blocks_stream_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let q4 = synth_quant(dir.path(), "q4.gguf", 1, Quant::Q4KM);
    let mut o = synth::Options::new("qwen3moe", "tiny", Quant::Q8_0, 1).unwrap();
    o.shape.n_ff_exp = 96;
    let q8 = dir.path().join("q8-96.gguf");
    synth::write(&o, &q8, &mut |_, _| {}).unwrap();
    for (path, want_direct) in [(&q4, true), (&q8, false)] {
        let index = ModelIndex::open(path).unwrap();
        let whole = index.layers.iter().flat_map(|l| &l.tensors).all(|t| t.bytes_per_expert % 4096 == 0);
        assert!(!whole, "{}: the case checked is slices that are not whole blocks", path.display());
        let want = bits(&resident(path));
        for overlap in [false, true] {
            let mut d = streamer_full(path, 3.0, BackendKind::Uring, 4, true, overlap, overlap);
            assert!(bits(&generate(&mut d)) == want, "{} overlap {overlap}: bits differ", path.display());
            let s = d.streamer().unwrap();
            let (direct, stacked) = (s.engine().file(0).unwrap().o_direct(), s.stacks(0).is_some());
            assert_eq!((direct, stacked), (want_direct, !want_direct), "{}: (o_direct, stacked)", path.display());
            assert!(s.cache().counters().total().evictions > 0);
        }
    }
}

#[test]
fn two_generations_over_a_warm_cache_and_a_split_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&resident(&path));
    let split = synth_model(dir.path(), "s.gguf", 3);
    assert!(split.to_str().unwrap().ends_with("-00001-of-00003.gguf"));
    let want_split = bits(&resident(&split));
    for overlap in [false, true] {
        let mut d = streamer_full(&path, 32.0, BackendKind::Auto, 4, true, overlap, overlap);
        assert!(bits(&generate(&mut d)) == want);
        let read_before = d.streamer().unwrap().stats().bytes_read;
        d.reset();
        assert!(bits(&generate(&mut d)) == want, "second generation differs (overlap {overlap})");
        assert_eq!(
            d.streamer().unwrap().stats().bytes_read,
            read_before,
            "a warm cache holding every expert reads nothing"
        );

        let mut d = streamer_full(&split, 4.0, BackendKind::Auto, 4, true, overlap, overlap);
        assert!(
            bits(&generate(&mut d)) == want_split,
            "split model: streamed differs from resident (overlap {overlap})"
        );
    }
}

#[test]
fn tmpfs_model_without_o_direct() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("no /dev/shm here; skipped");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&resident(&path));
    // O_DIRECT asked for; tmpfs refuses it and the files are read buffered.
    for overlap in [false, true] {
        let mut d = streamer_full(&path, 3.0, BackendKind::Auto, 4, true, overlap, overlap);
        assert!(bits(&generate(&mut d)) == want, "overlap {overlap}");
    }
}

#[test]
fn eio_mid_decode_is_an_error_naming_file_and_offset() {
    use bmoe_uring_io::fault::{Fault, FaultBackend};
    use bmoe_uring_io::{backend::pread::PreadBackend, Op, ReadEngine};
    use std::sync::Mutex;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let index = ModelIndex::open(&path).unwrap();
    let build = |plan: Vec<(u64, Fault)>| -> (Decoder<StreamingExperts>, Arc<Mutex<Vec<Op>>>) {
        let so = StreamerOptions {
            budget_bytes: 0,
            policy: CachePolicy::DEFAULT,
            io: EngineOptions { backend: BackendKind::Pread, lanes: 2, register: false, direct: true },
            n_expert_used: None,
            lookahead: false,
        };
        let log = Arc::new(Mutex::new(None));
        let log2 = log.clone();
        let s = StreamingExperts::with_engine_builder(&index, so, move |pool, direct| {
            let inner = PreadBackend::new(pool.clone(), 2).unwrap();
            let fb = FaultBackend::new(Box::new(inner), plan);
            *log2.lock().unwrap() = Some(fb.log());
            ReadEngine::with_backend(pool, Box::new(fb), 2, direct, "fault".into())
        })
        .unwrap();
        let map = Arc::new(Mapping::open(&index.file).unwrap());
        let log = log.lock().unwrap().take().unwrap();
        (Decoder::new(&index, map, s, opts()).unwrap(), log)
    };
    // Count the reads of the prefill, then fail one 40 reads later (a decode step of cache-off
    // tiny reads 24: the second step).
    let (mut d, log) = build(Vec::new());
    d.forward(&PROMPT, Logits::Last).unwrap();
    let prefill_ops = log.lock().unwrap().len() as u64;
    let (mut d, _) = build(vec![(prefill_ops + 40, Fault::Errno(libc::EIO))]);
    let mut l = d.forward(&PROMPT, Logits::Last).unwrap();
    let mut produced = 0;
    let err = loop {
        let t = (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32;
        match d.forward(&[t], Logits::Last) {
            Ok(next) => {
                l = next;
                produced += 1;
                assert!(produced < 100, "the injected EIO never surfaced");
            }
            Err(e) => break e.to_string(),
        }
    };
    assert!(produced >= 1, "the EIO was meant to hit during decode, after {produced} steps");
    assert!(err.contains("m.gguf") && err.contains("offset"), "{err}");
    assert!(err.contains("Input/output error") || err.contains("os error 5"), "{err}");
}

#[test]
fn dense_weights_mmap_warm_and_anon() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&resident(&path));
    let index = ModelIndex::open(&path).unwrap();
    let io = EngineOptions { backend: BackendKind::Auto, lanes: 4, register: true, direct: true };
    let anon = bmoe_engine::dense::AnonDense::load(&index, io, &|_, _| {}).unwrap();
    assert!(anon.bytes() as u64 >= index.dense_bytes());
    for dense in [DenseWeights::Anon, DenseWeights::Warm, DenseWeights::Mmap] {
        let so = stream_opts(&path, 0.0, io, Overlap::Off);
        let mut d = builder(&path).moe_stream(MoeStream::On).stream(so).dense(dense).open().unwrap();
        assert!(bits(&generate(&mut d)) == want, "dense {dense:?}: streamed differs from resident");
    }
}

#[test]
fn session_resize_and_cancel() {
    use bmoe_engine::session::Control;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = resident(&path);
    let argmax = |l: &[f32]| (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32;
    let mut session = streamer(&path, 32.0, BackendKind::Auto, 4, true);
    let params = |n| GenParams { n_predict: n, ignore_eos: true };
    let run = |s: &mut Engine| {
        s.generate(&PROMPT, &params(STEPS + 1), &mut |l| argmax(l), &mut |_| Control::Continue).unwrap()
    };
    let g = run(&mut session);
    assert_eq!(g.tokens, want.1.iter().copied().chain([argmax(want.0.last().unwrap())]).collect::<Vec<_>>());
    // Resize to 0 between generations: the cache empties now, the output does not change.
    let eff = session.set_cache_budget_bytes(0).unwrap();
    let s = session.streamer().unwrap();
    assert!(
        eff == 2 * s.slot_bytes() as u64 && s.cache().resident_bytes() <= eff,
        "resize to 0: scratch for one layer's top-2"
    );
    let g2 = run(&mut session);
    assert_eq!(g2.tokens, g.tokens);
    // Cancel from another thread in the middle of a generation; then a clean generation.
    let cancel = session.cancel_handle();
    let mut seen = 0;
    let g3 = session
        .generate(&PROMPT, &params(100), &mut |l| argmax(l), &mut |t| {
            seen += 1;
            if t.index == 3 {
                let c = cancel.clone();
                std::thread::spawn(move || c.cancel()).join().unwrap();
            }
            Control::Continue
        })
        .unwrap();
    assert!(g3.cancelled() && g3.tokens.len() == 4 && seen == 4, "{:?}", g3.tokens);
    assert_eq!(&g3.tokens[..], &g.tokens[..4]);
    session.set_cache_budget_bytes(64 << 20);
    let g4 = run(&mut session);
    assert_eq!(g4.tokens, g.tokens, "the generation after a cancel differs");
}

#[test]
fn counters_reach_the_metrics_facade() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let (hits, misses, bytes) = metrics::with_local_recorder(&recorder, || {
        let mut d = streamer(&path, 3.0, BackendKind::Auto, 4, true);
        generate(&mut d);
        let s = d.streamer().unwrap();
        let c = s.cache().counters().total();
        (c.hits, c.misses, s.stats().bytes_read)
    });
    let snap: std::collections::HashMap<String, u64> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter_map(|(k, _, _, v)| match v {
            DebugValue::Counter(c) => Some((k.key().name().to_string(), c)),
            _ => None,
        })
        .collect();
    assert_eq!(snap["bmoe_expert_hits_total"], hits);
    assert_eq!(snap["bmoe_expert_misses_total"], misses);
    assert_eq!(snap["bmoe_expert_bytes_read_total"], bytes);
    assert!(snap["bmoe_expert_evictions_total"] > 0);
}

#[test]
fn lookahead_streams_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&resident(&path));
    for (what, budget) in [("cache off", 0.0), ("evicting", 3.0), ("roomy", 12.0), ("all", 32.0)] {
        // Per-expert pipelining alone, then with look-ahead (the figures below are of the latter).
        let mut d = streamer_full(&path, budget, BackendKind::Auto, 4, true, false, true);
        assert!(bits(&generate(&mut d)) == want, "pipelining, {what}: streamed output differs from resident");
        let mut d = streamer_full(&path, budget, BackendKind::Auto, 4, true, true, true);
        assert!(bits(&generate(&mut d)) == want, "look-ahead + pipelining, {what}: output differs from resident");
        let mut d = streamer_full(&path, budget, BackendKind::Auto, 4, true, true, false);
        assert!(bits(&generate(&mut d)) == want, "look-ahead, {what}: streamed output differs from resident");
        let st = d.streamer().unwrap().stats();
        assert!(st.real_with_prediction > 0, "{what}: no decode layer had a prediction");
        if budget < 32.0 {
            // Cache off too: look-ahead raises the budget to two layers' top-k.
            assert!(st.spec_entries > 0, "{what}: nothing was read ahead");
        }
        if (12.0..32.0).contains(&budget) {
            assert!(d.streamer().unwrap().lookahead().0, "{what}: useful predictions keep look-ahead on");
        }
        eprintln!(
            "{what}: predicted {}/{} routed, speculative {} entries ({} useful)",
            st.predicted_real, st.real_with_prediction, st.spec_entries, st.spec_useful
        );
    }
}

/// A `route_trace v1` for the tiny shape (4 layers × 8 experts, top-`k`): `steps` decode steps
/// whose routing no router would give (step s, layer l: experts (3s + l) mod 8 then
/// (5s + 2l + 1) mod 8, or the next one when they collide; weights 0.75 / 0.25).
fn replay_trace(steps: u32, k: u32) -> bmoe_engine::cache::trace::RouteTrace {
    let mut text = format!(
        "# route_trace v1\n# model=tiny arch=qwen3moe n_layer=4 n_expert=8 n_expert_used={k}\n{}\n{}\n",
        (0..4).map(|l| format!("# layer={l} expert_bytes=4096 dense_bytes=1")).collect::<Vec<_>>().join("\n"),
        bmoe_engine::cache::trace::CSV_HEADER
    );
    for s in 0..steps {
        for l in 0..4 {
            let a = (3 * s + l) % 8;
            let mut b = (5 * s + 2 * l + 1) % 8;
            if b == a {
                b = (b + 1) % 8;
            }
            for (slot, (e, w)) in [(a, 0.75), (b, 0.25)].iter().take(k as usize).enumerate() {
                text += &format!("0,1,{s},{l},{slot},{e},{w},0,0\n");
            }
        }
    }
    bmoe_engine::cache::trace::RouteTrace::parse(text.as_bytes(), "replay").unwrap()
}

#[test]
fn route_replay_routes_decode_as_the_trace_says() {
    use bmoe_engine::decoder::RouteReplay;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let trace = replay_trace(5, 2);
    let replay = RouteReplay::from_trace(&trace, "replay").unwrap();
    let own = bits(&resident(&path));

    let mut res = resident_engine(&path);
    res.set_route_replay(Some(replay.clone())).unwrap();
    res.record_routes(true).unwrap();
    let replayed = bits(&generate(&mut res));
    assert!(replayed != own, "replayed routing changes the logits");
    let decode: Vec<_> = res.take_routes().into_iter().filter(|r| !r.prefill).collect();
    assert_eq!(decode.len(), STEPS * 4);
    for r in &decode {
        let want: Vec<(u32, u32, f32)> =
            replay.route(r.step, r.layer as usize).iter().enumerate().map(|(i, &(e, w))| (e, i as u32, w)).collect();
        assert_eq!(r.experts, want, "step {} layer {} (trace of 5 steps, wrapping)", r.step, r.layer);
    }

    // The streamer under the same replay: the same bits, and it read what the trace routes.
    let mut s = streamer(&path, 3.0, BackendKind::Uring, 4, true);
    s.set_route_replay(Some(replay)).unwrap();
    assert!(bits(&generate(&mut s)) == replayed, "streamed replay differs from resident replay");
    assert!(s.streamer().unwrap().cache().counters().total().evictions > 0);

    // A trace of another top-k is refused, naming the flag that would fit.
    let k1 = RouteReplay::from_trace(&replay_trace(2, 1), "k1").unwrap();
    let e = res.set_route_replay(Some(k1)).unwrap_err().to_string();
    assert!(e.contains("top-1") && e.contains("--n-expert-used 1"), "{e}");
}

/// Greedy: the prompt, then `n` single-token steps; every step's logits, as bits.
fn decode_bits(d: &mut Engine, n: usize) -> Vec<Vec<u32>> {
    decode_bits_of(&mut |t: &[i32]| d.eval(t).unwrap(), n)
}

/// As [`decode_bits`], for a decoder built by hand (a spying provider).
fn decode_bits_dec<P: ExpertProvider>(d: &mut Decoder<P>, n: usize) -> Vec<Vec<u32>> {
    decode_bits_of(&mut |t: &[i32]| d.forward(t, Logits::Last).unwrap(), n)
}

fn decode_bits_of(eval: &mut dyn FnMut(&[i32]) -> Vec<f32>, n: usize) -> Vec<Vec<u32>> {
    let mut l = eval(&PROMPT);
    let mut out = vec![l.iter().map(|x| x.to_bits()).collect::<Vec<_>>()];
    for _ in 0..n {
        let t = (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32;
        l = eval(&[t]);
        out.push(l.iter().map(|x| x.to_bits()).collect());
    }
    out
}

#[test]
fn lookahead_switches_itself_off_when_predictions_are_useless() {
    use bmoe_engine::decoder::RouteReplay;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    // Every decode step routes experts 0 and 1 of every layer: the routers' predictions (on
    // the real hidden states) are right by chance only (2 of 8) and read other experts, which
    // no step then uses.
    let mut text = format!(
        "# route_trace v1\n# model=tiny arch=qwen3moe n_layer=4 n_expert=8 n_expert_used=2\n{}\n{}\n",
        (0..4).map(|l| format!("# layer={l} expert_bytes=4096 dense_bytes=1")).collect::<Vec<_>>().join("\n"),
        bmoe_engine::cache::trace::CSV_HEADER
    );
    for l in 0..4 {
        text += &format!("0,1,0,{l},0,0,0.6,0,0\n0,1,0,{l},1,1,0.4,0,0\n");
    }
    let trace = bmoe_engine::cache::trace::RouteTrace::parse(text.as_bytes(), "fixed").unwrap();
    let replay = RouteReplay::from_trace(&trace, "fixed").unwrap();
    let mut res = resident_engine(&path);
    res.set_route_replay(Some(replay.clone())).unwrap();
    let want = decode_bits(&mut res, 48);

    let mut d = streamer_full(&path, 4.0, BackendKind::Uring, 4, true, true, false);
    d.set_route_replay(Some(replay)).unwrap();
    assert!(decode_bits(&mut d, 48) == want, "look-ahead changed the bits");
    let s = d.streamer().unwrap();
    let st = s.stats();
    let (on, why) = s.lookahead();
    let layers = s.lookahead_layers();
    eprintln!("{st:?}\n{why:?}\n{layers:?}");
    assert!(st.spec_entries >= bmoe_engine::stream::LOOKAHEAD_JUDGE_LAYER, "too little was read ahead");
    assert!(st.predicted_real * 4 < st.real_with_prediction, "the predictions were meant to be useless");
    assert!(!on, "look-ahead stayed on at {} of {} predicted", st.predicted_real, st.real_with_prediction);
    let why = why.unwrap();
    assert!(why.contains("< 25 %") || why.contains("under a quarter"), "{why}");
    assert!(layers.iter().any(|l| l.off), "no layer's reads were switched off: {layers:?}");
    for l in layers.iter().filter(|l| l.off) {
        // Judged by the step each read was for (the routed experts predicted for it), or, never
        // scored, by the entries used.
        let judge = bmoe_engine::stream::LOOKAHEAD_JUDGE_LAYER;
        assert!(
            (l.real_with_prediction >= judge && l.predicted_real * 4 < l.real_with_prediction)
                || (l.spec_entries >= judge && l.spec_useful * 4 < l.spec_entries),
            "{l:?}"
        );
    }
    assert_eq!(layers[0].real_with_prediction, 0, "layer 0 is never predicted");
}

/// The look-ahead judge on the native decoder, by the step a read was for: under a replayed
/// trace with look-ahead's predictions drawn from it at 0 % right (the research knob), the
/// reads stop within a few steps even though the entries they read stay cached and some later
/// step routes them (they once kept look-ahead on for tens of GB); at 100 % right look-ahead
/// stays on and serves reads; the bits are those of the resident replay either way.
#[test]
fn lookahead_under_replay_is_judged_by_the_step_it_read_for() {
    use bmoe_engine::decoder::RouteReplay;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let replay = RouteReplay::from_trace(&replay_trace(16, 2), "replay").unwrap();
    let mut res = resident_engine(&path);
    res.set_route_replay(Some(replay.clone())).unwrap();
    let want = decode_bits(&mut res, 32);
    let run = |accuracy: f64| {
        let mut d = streamer_full(&path, 12.0, BackendKind::Uring, 4, true, true, false);
        d.set_route_replay(Some(replay.clone().with_prediction(accuracy).unwrap())).unwrap();
        let got = decode_bits(&mut d, 32);
        let s = d.streamer().unwrap();
        let (on, why) = s.lookahead();
        (got, on, why.map(str::to_string), s.stats())
    };
    let (got, on, why, st) = run(0.0);
    assert!(got == want, "look-ahead changed the bits");
    assert!(!on, "look-ahead stayed on at 0 % right: {st:?}");
    assert!(why.as_deref().is_some_and(|w| w.contains("predicted for their step")), "{why:?}");
    // 3 predicted layers × k 2 per step, each judged after 16 scored experts (8 steps), and
    // the prompt's read-ahead (at most the 8 experts of each predicted layer).
    assert!(st.spec_entries <= 3 * 2 * 9 + 3 * 8, "{st:?}");
    let (got, on, why, st) = run(1.0);
    assert!(got == want, "look-ahead changed the bits");
    assert!(on, "look-ahead went off at 100 % right: {why:?}");
    assert!(st.spec_useful > 0 && st.predicted_real == st.real_with_prediction, "{st:?}");
}

/// The streamer, noting which pushed reads each `prefetch` (look-ahead) issued and in which
/// decode step.
struct Spy {
    inner: StreamingExperts,
    log: Arc<std::sync::Mutex<Vec<bmoe_uring_io::Op>>>,
    decode_step: Option<u32>,
    /// (decode step, layer, ordinals of the reads pushed, 1-based).
    spec: Vec<(u32, u32, std::ops::Range<u64>)>,
}

// SAFETY: every call is the streamer's own; the spy only counts.
unsafe impl ExpertProvider for Spy {
    fn acquire(&mut self, layer: u32, experts: &[u32], out: &mut Vec<ExpertPtrs>) -> bmoe_engine::Result<()> {
        self.inner.acquire(layer, experts, out)
    }
    fn release(&mut self, layer: u32) {
        self.inner.release(layer);
    }
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }
    fn begin_step(&mut self, prefill: bool) {
        if !prefill {
            self.decode_step = Some(self.decode_step.map_or(0, |s| s + 1));
        }
        self.inner.begin_step(prefill);
    }
    fn counters(&self) -> Option<ProviderCounters> {
        self.inner.counters()
    }
    fn stacks(&self, layer: u32) -> Option<Projections<Stack>> {
        self.inner.stacks(layer)
    }
    fn wants_lookahead(&self) -> bool {
        self.inner.wants_lookahead()
    }
    fn prefetch(&mut self, layer: u32, experts: &[u32]) {
        let a = self.log.lock().unwrap().len() as u64;
        self.inner.prefetch(layer, experts);
        let b = self.log.lock().unwrap().len() as u64;
        // A prefill's read-ahead reads too; the test picks decode's speculative reads.
        if let Some(step) = self.decode_step {
            self.spec.push((step, layer, a + 1..b + 1));
        }
    }
}

#[test]
fn eio_on_a_speculative_read_fails_only_when_the_entry_is_needed_and_cannot_be_reread() {
    use bmoe_uring_io::fault::{Fault, FaultBackend};
    use bmoe_uring_io::{backend::pread::PreadBackend, ReadEngine};
    const N: usize = 24;
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let index = ModelIndex::open(&path).unwrap();
    let want = decode_bits(&mut resident_engine(&path), N);
    let slot = bmoe_engine::stream::slot_layout_bytes(&index.layers) as f64;
    // Faults by file offset (a read's window start): `times` reads there fail with EIO.
    let build = |faults: &[(u64, u32)]| -> Decoder<Spy> {
        let so = StreamerOptions {
            budget_bytes: (5.0 * slot) as u64,
            policy: CachePolicy::DEFAULT,
            io: EngineOptions { backend: BackendKind::Pread, lanes: 32, register: false, direct: true },
            n_expert_used: None,
            lookahead: true,
        };
        let faults = faults.to_vec();
        let log = Arc::new(std::sync::Mutex::new(None));
        let log2 = log.clone();
        let s = StreamingExperts::with_engine_builder(&index, so, move |pool, direct| {
            // 32 lanes: every read reaches the backend when submitted, so the spy below sees
            // which reads each prefetch issued.
            let mut fb = FaultBackend::new(Box::new(PreadBackend::new(pool.clone(), 32).unwrap()), []);
            for &(offset, times) in &faults {
                fb = fb.fail_offset(offset, times, Fault::Errno(libc::EIO));
            }
            *log2.lock().unwrap() = Some(fb.log());
            ReadEngine::with_backend(pool, Box::new(fb), 32, direct, "fault".into())
        })
        .unwrap();
        let log = log.lock().unwrap().take().unwrap();
        let spy = Spy { inner: s, log, decode_step: None, spec: Vec::new() };
        let map = Arc::new(Mapping::open(&index.file).unwrap());
        Decoder::new(&index, map, spy, opts()).unwrap()
    };
    // The expert an op reads: the slice that starts in the op's first block.
    let expert_of = |layer: u32, op: &bmoe_uring_io::Op| -> u32 {
        let l = &index.layers[layer as usize];
        (0..l.tensors.len())
            .flat_map(|i| (0..l.n_expert).map(move |e| (i, e)))
            .find(|&(i, e)| (op.offset..op.offset + 4096).contains(&l.range(i, e).offset))
            .expect("the op reads an expert slice of its layer")
            .1
    };
    let pushes =
        |d: &Decoder<Spy>, offset: u64| d.provider().log.lock().unwrap().iter().filter(|o| o.offset == offset).count();

    // Fault-free: entries whose first read was a speculative one (so any run that computes
    // the same bits reads them that way first), one that the step it was read for did not
    // route, one that it did.
    let mut d = build(&[]);
    d.record_routes(true);
    assert!(decode_bits_dec(&mut d, N) == want);
    let routes = d.take_routes();
    let (mut unused, mut needed) = (None, None);
    {
        let spy = d.provider();
        let log = spy.log.lock().unwrap();
        for (step, layer, ops) in &spy.spec {
            let real = routes.iter().find(|r| !r.prefill && r.step == *step && r.layer == *layer).unwrap();
            for n in ops.clone() {
                let op = log[n as usize - 1];
                if log.iter().position(|o| o.offset == op.offset).unwrap() as u64 + 1 != n {
                    continue;
                }
                let used = real.experts.iter().any(|x| x.0 == expert_of(*layer, &op));
                let pick = if used { &mut needed } else { &mut unused };
                pick.get_or_insert(op.offset);
            }
        }
    }
    let (unused, needed) = (unused.expect("an unused speculative read"), needed.expect("a used speculative read"));

    // EIO on a speculative read the step did not need: the output does not change.
    let mut d = build(&[(unused, 1)]);
    assert!(decode_bits_dec(&mut d, N) == want, "a failed unused speculative read changed the output");
    assert!(pushes(&d, unused) >= 1, "the faulty block was read");
    // EIO on the speculative read of an entry a step needs: it is read again, same output.
    let mut d = build(&[(needed, 1)]);
    assert!(decode_bits_dec(&mut d, N) == want, "a failed needed speculative read was not read again");
    assert!(pushes(&d, needed) >= 2, "read ahead, failed, read again");
    // And when the re-read fails too, the generation fails as any failed read does.
    let mut d = build(&[(needed, u32::MAX)]);
    let mut l = d.forward(&PROMPT, Logits::Last).unwrap();
    let err = loop {
        let t = (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32;
        match d.forward(&[t], Logits::Last) {
            Ok(next) => l = next,
            Err(e) => break e.to_string(),
        }
    };
    // The error names the slice asked for, which starts in the failed read's first block.
    let at: u64 = err.split("offset ").nth(1).and_then(|r| r.split(':').next()).unwrap().parse().unwrap();
    assert!(err.contains("m.gguf") && (needed..needed + 4096).contains(&at), "{err} (expected {needed})");
}

/// Tiny q8_0 of `arch` (the same shape as the qwen3moe gates, adapted to the architecture).
fn synth_arch(dir: &Path, arch: &str) -> PathBuf {
    synth_arch_quant(dir, arch, Quant::Q8_0)
}

/// gpt-oss's window in the gates: the 24 tokens of a run cross it.
const GATE_SWA: u64 = 8;

fn synth_arch_quant(dir: &Path, arch: &str, quant: Quant) -> PathBuf {
    let mut o = synth::Options::new(arch, "tiny", quant, 21).unwrap();
    if arch == "gpt-oss" {
        o.shape.n_swa = GATE_SWA;
    }
    let path = dir.join(format!("{arch}-{quant:?}.gguf"));
    synth::write(&o, &path, &mut |_, _| {}).unwrap();
    path
}

/// `arch` streamed under a budget of 3 entries (of 32: evicting every token), serial and with
/// look-ahead (evicting and roomy), gives the resident run's logits and tokens, bit for bit.
fn arch_streams_the_same_bits(arch: &str) {
    let dir = tempfile::tempdir().unwrap();
    streams_the_same_bits(arch, &synth_arch(dir.path(), arch));
}

fn streams_the_same_bits(arch: &str, path: &Path) {
    let path = path.to_path_buf();
    let want = bits(&resident(&path));
    let mut d = streamer(&path, 3.0, BackendKind::Auto, 4, true);
    assert!(bits(&generate(&mut d)) == want, "{arch}: streamed output differs from resident");
    let c = d.streamer().unwrap().cache().counters().total();
    assert!(c.misses > 0 && c.evictions > 0, "{arch}: a budget of 3 entries must miss and evict: {c:?}");
    for (what, budget) in [("evicting", 3.0), ("roomy", 12.0)] {
        let mut d = streamer_full(&path, budget, BackendKind::Auto, 4, true, true, false);
        assert!(bits(&generate(&mut d)) == want, "{arch}, look-ahead {what}: streamed output differs from resident");
        let st = d.streamer().unwrap().stats();
        assert!(st.real_with_prediction > 0, "{arch}, {what}: no decode layer had a prediction");
        if budget == 3.0 {
            assert!(
                d.streamer().unwrap().cache().counters().total().evictions > 0,
                "{arch}, look-ahead {what}: no eviction"
            );
        }
    }
}

#[test]
fn olmoe_streams_the_same_bits() {
    arch_streams_the_same_bits("olmoe");
}

#[test]
fn mixtral_streams_the_same_bits() {
    arch_streams_the_same_bits("llama");
}

#[test]
fn qwen2moe_streams_the_same_bits() {
    arch_streams_the_same_bits("qwen2moe");
    // The shared expert is dense: resident with the attention weights, never in a cache slot.
    let dir = tempfile::tempdir().unwrap();
    let index = ModelIndex::open(&synth_arch(dir.path(), "qwen2moe")).unwrap();
    let dense: Vec<&str> = index.dense.iter().map(|&i| index.file.tensors[i].name.as_str()).collect();
    for l in 0..4 {
        for t in ["ffn_gate_inp_shexp", "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp"] {
            assert!(dense.contains(&format!("blk.{l}.{t}.weight").as_str()), "{t} of layer {l} is not dense");
        }
    }
    assert!(index.layers.iter().all(|l| l.tensors.len() == 3), "an entry is the routed gate, up and down only");
}

/// gpt-oss, q8_0 and MXFP4 (the experts' type of its files): the gates above, with a window
/// the run crosses; per-expert pipelining (whose partial `mul_mat_id` adds the experts'
/// biases by expert id, not by slot); the biases and sinks are dense, an entry is gate, up and
/// down only.
#[test]
fn gpt_oss_streams_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    for quant in [Quant::Q8_0, Quant::Mxfp4] {
        let path = synth_arch_quant(dir.path(), "gpt-oss", quant);
        streams_the_same_bits(&format!("gpt-oss {quant:?}"), &path);
        let want = bits(&resident(&path));
        for (budget, lookahead) in [(3.0, false), (5.0, true)] {
            let mut d = streamer_full(&path, budget, BackendKind::Auto, 2, true, lookahead, true);
            assert!(bits(&generate(&mut d)) == want, "gpt-oss {quant:?}, pipelined at {budget}: bits differ");
        }
        // MXFP4 slices are not whole blocks (as in the real files: 4,406,400 B): O_DIRECT puts
        // each payload at its offset's place within a block, the slots are no stack, and the
        // per-expert path computes the same bits. q8_0 slices that were not whole blocks (which
        // ggml's sgemm also takes in `mul_mat`) would be read through the page cache, as a stack.
        let index = ModelIndex::open(&path).unwrap();
        let whole = index.layers.iter().flat_map(|l| &l.tensors).all(|t| t.bytes_per_expert % 4096 == 0);
        if quant == Quant::Mxfp4 {
            assert!(!whole, "the tiny MXFP4 slices should not be whole blocks (the case checked here)");
        }
        let (want_direct, want_stacked) = match (whole, quant) {
            (true, _) => (true, true),
            (false, Quant::Mxfp4) => (true, false),
            (false, _) => (false, true),
        };
        for (budget, lookahead, pipeline) in [(2.0, false, false), (3.0, true, true)] {
            let mut d = streamer_full(&path, budget, BackendKind::Uring, 2, true, lookahead, pipeline);
            let direct = d.streamer().unwrap().engine().file(0).unwrap().o_direct();
            let stacked = d.streamer().unwrap().stacks(0).is_some();
            assert_eq!((direct, stacked), (want_direct, want_stacked), "gpt-oss {quant:?}: (o_direct, stacked)");
            assert!(bits(&generate(&mut d)) == want, "gpt-oss {quant:?}, O_DIRECT asked at {budget}: bits differ");
            assert!(d.streamer().unwrap().stats().reads > 0);
        }
    }
    let index = ModelIndex::open(&synth_arch(dir.path(), "gpt-oss")).unwrap();
    let dense: Vec<&str> = index.dense.iter().map(|&i| index.file.tensors[i].name.as_str()).collect();
    for l in 0..4 {
        for t in
            ["ffn_gate_exps.bias", "ffn_up_exps.bias", "ffn_down_exps.bias", "ffn_gate_inp.bias", "attn_sinks.weight"]
        {
            assert!(dense.contains(&format!("blk.{l}.{t}").as_str()), "{t} of layer {l} is not dense");
        }
    }
    assert!(index.layers.iter().all(|l| l.tensors.len() == 3), "an entry is the routed gate, up and down only");
}

/// Per-expert pipelining computes whichever experts are in, in any subset of the routed ones:
/// at top-4 of 8 (lossy for the model, the same for both runs) the subsets are not neighbours
/// in the expert-major buffer, and the bits must still be the resident run's.
#[test]
fn pipelining_any_subset_of_experts_gives_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&generate(&mut builder(&path).moe_stream(MoeStream::Off).n_expert_used(Some(4)).open().unwrap()));
    for (budget, lookahead) in [(4.0, false), (6.0, false), (8.0, true), (14.0, true)] {
        let io = EngineOptions { backend: BackendKind::Uring, lanes: 2, register: true, direct: true };
        let so = stream_opts(&path, budget, io, overlap(lookahead, true));
        let mut d = builder(&path).moe_stream(MoeStream::On).stream(so).n_expert_used(Some(4)).open().unwrap();
        assert!(bits(&generate(&mut d)) == want, "budget {budget}, look-ahead {lookahead}: bits differ");
        assert!(d.streamer().unwrap().stats().reads > 0);
    }
}

/// The turns of a conversation, as token ids: each turn's new tokens follow the context and the
/// previous reply.
const TURNS: [&[i32]; 3] = [&PROMPT, &[44, 91, 3, 17, 250], &[8, 8, 120, 33, 61, 2, 400, 19]];

/// Run the conversation's turns `from..` on `e` (greedy, 6 tokens a reply), continuing `conv`
/// (every token so far); each reply's tokens and the bits of every step's logits.
fn converse(e: &mut Engine, conv: &mut Vec<i32>, turns: std::ops::Range<usize>) -> Vec<(Vec<i32>, Vec<Vec<u32>>)> {
    use bmoe_engine::session::Control;
    let mut replies = Vec::new();
    for (i, turn) in TURNS.iter().enumerate().take(turns.end).skip(turns.start) {
        let held = e.context().len();
        conv.extend_from_slice(turn);
        let mut logits = Vec::new();
        let mut pick = |l: &[f32]| {
            logits.push(l.iter().map(|x| x.to_bits()).collect::<Vec<u32>>());
            (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32
        };
        let params = GenParams { n_predict: 6, ignore_eos: true };
        let g = e.generate_from(conv, &params, &mut pick, &mut |_| Control::Continue, &mut |_, _| {}).unwrap();
        // The tokens the context held were reused, only the rest evaluated: after the first
        // turn, the turn's own tokens and the previous reply's last token (never run).
        assert_eq!((g.reused_tokens, g.prompt_tokens), (held, conv.len() - held), "turn {i}");
        if i > 0 {
            assert_eq!(g.prompt_tokens, turn.len() + 1, "turn {i} evaluated more than its new tokens");
        }
        conv.extend(&g.tokens);
        assert_eq!(e.context(), &conv[..conv.len() - 1], "turn {i}: the context is the conversation");
        replies.push((g.tokens, logits));
    }
    replies
}

/// Multi-turn gate: a three-turn conversation streamed through an evicting cache produces the
/// tokens and logits of the same conversation resident, each turn after the first evaluating
/// only its new tokens; and each turn equals a fresh engine running the whole history at once.
#[test]
fn a_conversation_keeps_its_context_and_streams_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = converse(&mut resident_engine(&path), &mut Vec::new(), 0..3);
    let mut s = streamer(&path, 3.0, BackendKind::Auto, 4, true);
    let got = converse(&mut s, &mut Vec::new(), 0..3);
    assert_eq!(got, want, "streamed conversation differs from resident");
    assert!(s.telemetry().provider.unwrap().evictions > 0, "the cache did not evict");
    // A fresh engine given the whole history of turn 3 at once replies the same.
    let mut history: Vec<i32> = Vec::new();
    for (turn, (reply, _)) in TURNS.iter().zip(&want).take(2) {
        history.extend_from_slice(turn);
        history.extend(reply);
    }
    history.extend_from_slice(TURNS[2]);
    let mut fresh = resident_engine(&path);
    let g = fresh
        .generate(
            &history,
            &GenParams { n_predict: 6, ignore_eos: true },
            &mut |l| (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32,
            &mut |_| bmoe_engine::session::Control::Continue,
        )
        .unwrap();
    assert_eq!(g.tokens, want[2].0, "turn 3 differs from a fresh run of its history");
}

/// Save/load gate (in one process; the CLI's test does it across two): saved after turn 2
/// and loaded into a new engine, turn 3 is bit-identical to the conversation that never
/// stopped, and the load warmed the cache with the experts it held.
#[test]
fn a_saved_conversation_continues_bit_identically() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = converse(&mut streamer(&path, 6.0, BackendKind::Auto, 4, true), &mut Vec::new(), 0..3);
    let file = dir.path().join("s.session");
    let mut b = streamer(&path, 6.0, BackendKind::Auto, 4, true);
    let mut conv = Vec::new();
    converse(&mut b, &mut conv, 0..2);
    b.save_session(&file, serde_json::json!({ "conv": conv })).unwrap();
    let held = b.streamer().unwrap().cache().resident_ids().count();
    drop(b);
    let mut c = streamer(&path, 6.0, BackendKind::Auto, 4, true);
    let extra = c.load_session(&file).unwrap();
    assert_eq!(c.streamer().unwrap().cache().resident_ids().count(), held, "the load did not warm the cache");
    let mut conv: Vec<i32> = serde_json::from_value(extra["conv"].clone()).unwrap();
    let got = converse(&mut c, &mut conv, 2..3);
    assert_eq!(got[0], want[2], "turn 3 after a load differs from the conversation that never stopped");
    // Not a session, or another model's: refused, naming the file.
    let junk = dir.path().join("junk");
    std::fs::write(&junk, b"not a session\n").unwrap();
    let e = c.load_session(&junk).unwrap_err().to_string();
    assert!(e.contains("junk") && e.contains("not a session"), "{e}");
    let other = synth_quant(dir.path(), "o.gguf", 1, Quant::Q4KM);
    let e = streamer(&other, 6.0, BackendKind::Auto, 4, true).load_session(&file).unwrap_err().to_string();
    assert!(e.contains("saved with"), "{e}");
}

/// Prefill read-ahead (look-ahead on, in a prompt's micro-batches): while a layer computes, the
/// next layer's experts that the micro-batch's predictions name (the union over its rows) are
/// read into free slots. Same bits as resident when the next layer's union fits beside this
/// one's, when only part of it does, serial and pipelined; the read-ahead read and was used;
/// a prefill's predictions are not scored as decode's accuracy.
#[test]
fn prefill_readahead_streams_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let prefill_bits = |d: &mut Engine| -> Vec<u32> { d.eval(&PROMPT).unwrap().iter().map(|x| x.to_bits()).collect() };
    let want = prefill_bits(&mut resident_engine(&path));
    let want_all = bits(&resident(&path));
    for (what, budget) in [("part of the next union", 6.0), ("roomy", 16.0)] {
        for pipeline in [false, true] {
            let mut d = streamer_full(&path, budget, BackendKind::Auto, 4, true, true, pipeline);
            assert!(prefill_bits(&mut d) == want, "{what}, pipeline {pipeline}: prefill logits differ from resident");
            let st = d.streamer().unwrap().stats();
            assert!(st.spec_entries > 0, "{what}, pipeline {pipeline}: the prefill read nothing ahead");
            assert!(st.spec_useful > 0, "{what}, pipeline {pipeline}: no read-ahead entry was then routed");
            assert_eq!(st.real_with_prediction, 0, "{what}: a prefill's predictions are not scored");
            eprintln!("{what}, pipeline {pipeline}: read ahead {} entries, {} used", st.spec_entries, st.spec_useful);
            let mut d = streamer_full(&path, budget, BackendKind::Auto, 4, true, true, pipeline);
            assert!(
                bits(&generate(&mut d)) == want_all,
                "{what}, pipeline {pipeline}: generation differs from resident"
            );
        }
    }
}

/// Read-ahead on a micro-batch wider than 64 rows, whose predictions come from every other row
/// (a strided view of the FFN input): the same bits as resident, and it read ahead.
#[test]
fn prefill_readahead_on_a_wide_micro_batch_streams_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let prompt: Vec<i32> = (0..100).map(|i| i * 37 % 400 + 1).collect();
    let prefill_bits = |d: &mut Engine| -> Vec<u32> { d.eval(&prompt).unwrap().iter().map(|x| x.to_bits()).collect() };
    let want = prefill_bits(&mut builder(&path).ubatch_auto().moe_stream(MoeStream::Off).open().unwrap());
    let io = EngineOptions { backend: BackendKind::Auto, lanes: 4, register: true, direct: true };
    let so = stream_opts(&path, 20.0, io, Overlap::Full);
    let mut d = builder(&path).ubatch_auto().moe_stream(MoeStream::On).stream(so).open().unwrap();
    assert!(prefill_bits(&mut d) == want, "streamed prefill of 100 rows differs from resident");
    let plan = d.stream_figures().unwrap().prefill_plan.unwrap();
    assert_eq!((plan.width, plan.passes), (100, 1));
    assert!(d.streamer().unwrap().stats().spec_entries > 0, "nothing was read ahead");
}

/// `--ubatch auto`: the 12-token prompt in one pass (not the two of 8 the other gates use),
/// streamed (with read-ahead) and resident alike, the same bits; the plan says so.
#[test]
fn auto_micro_batch_streams_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_model(dir.path(), "m.gguf", 1);
    let want = bits(&generate(&mut builder(&path).ubatch_auto().moe_stream(MoeStream::Off).open().unwrap()));
    for budget in [3.0, 16.0] {
        let io = EngineOptions { backend: BackendKind::Auto, lanes: 4, register: true, direct: true };
        let so = stream_opts(&path, budget, io, Overlap::Full);
        let mut d = builder(&path).ubatch_auto().moe_stream(MoeStream::On).stream(so).open().unwrap();
        assert!(bits(&generate(&mut d)) == want, "budget {budget}: streamed output differs from resident");
        let plan = d.stream_figures().unwrap().prefill_plan.expect("a prefill ran");
        assert_eq!((plan.tokens, plan.width, plan.passes, plan.auto), (12, 12, 1, true), "{plan:?}");
        assert!(plan.union_max >= 2 && plan.union_max <= 8, "{plan:?}");
    }
}
