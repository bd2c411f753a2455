//! Speculative decoding and the lossy knobs of decode, on the native decoder.
//!
//! - The measurement that decides what speculative decoding can promise: rows of a batched
//!   pass (`forward(&[a, b, c], Logits::All)`) against three single steps, every native
//!   architecture, five weight types, a short context and one past 512 keys; and the verify
//!   pass computed row by row (`verify(…, exact)`), which must equal the single steps bit for
//!   bit in every case.
//! - Speculative generation against plain generation, greedy and sampled: drafts replayed from
//!   the plain output (all accepted), corrupted, prompt lookup, the skip rule; the same tokens,
//!   the same logits at every pick, the same context after; streamed == resident.
//! - The lossy knobs: off changes nothing; on, their counters move and the mode line says
//!   LOSSY; route-ahead streamed == route-ahead resident; the facade's counters.
#![cfg(feature = "ffi")]

use std::path::{Path, PathBuf};

use bmoe_engine::decoder::{Decoder, Logits, Options};
use bmoe_engine::engine::{Engine, EngineBuilder, GenParams, MoeStream, Overlap, StreamOptions};
use bmoe_engine::llama::{Sampler, Sampling};
use bmoe_engine::model::{ModelIndex, ARCHS};
use bmoe_engine::session::Control;
use bmoe_engine::speculative::{DraftSource, SpecOptions, SpecStats};
use bmoe_engine::stream::budget::CacheSize;
use bmoe_engine::synth::{self, Quant};
use bmoe_uring_io::{BackendKind, EngineOptions};

const PROMPT: [i32; 12] = [5, 77, 300, 12, 9, 250, 401, 33, 7, 128, 64, 2];

fn synth_arch_quant(dir: &Path, arch: &str, quant: Quant) -> PathBuf {
    let mut o = synth::Options::new(arch, "tiny", quant, 21).unwrap();
    if arch == "gpt-oss" {
        // A window the long context crosses.
        o.shape.n_swa = 8;
    }
    let path = dir.join(format!("{arch}-{quant:?}.gguf"));
    synth::write(&o, &path, &mut |_, _| {}).unwrap();
    path
}

fn argmax(l: &[f32]) -> i32 {
    (0..l.len()).max_by(|&a, &b| l[a].total_cmp(&l[b])).unwrap() as i32
}

fn bits(l: &[f32]) -> Vec<u32> {
    l.iter().map(|x| x.to_bits()).collect()
}

/// After `prompt`: `toks` as three single steps, as one batched pass, and as one exact verify
/// pass; (batched rows equal to the single steps, exact rows equal).
fn batched_vs_single(path: &Path, prompt: &[i32], o: Options) -> (Vec<bool>, Vec<bool>) {
    let toks = [17, 230, 41];
    let mut d = Decoder::open_resident(path, o).unwrap();
    let nv = d.n_vocab();
    d.forward(prompt, Logits::Last).unwrap();
    let mut single = Vec::new();
    for &t in &toks {
        single.push(bits(&d.forward(&[t], Logits::Last).unwrap()));
    }
    let mut pass = |exact: bool| -> Vec<bool> {
        d.reset();
        d.forward(prompt, Logits::Last).unwrap();
        let rows = if exact { d.verify(&toks, true).unwrap() } else { d.forward(&toks, Logits::All).unwrap() };
        rows.chunks(nv).zip(&single).map(|(r, s)| bits(r) == *s).collect()
    };
    (pass(false), pass(true))
}

/// Issue point 1: whether a batched pass's logits equal single-token steps, bit for bit.
/// Measured (docs/speculative.md): F32 and F16 weights differ in the low bits in every row
/// (llamafile's sgemm sums a batch of two or more columns in another order than the
/// one-column dot product); Q8_0 and MXFP4 files happen to agree on this CPU at a short context;
/// the tiny q4_k_m files (q8_0 attention K and V, an F32 router) differ in some rows on three
/// architectures of five; past 512 keys every file differs (one query over 512 keys or more
/// splits the keys across the threads; a batch does not). The verify pass computed row by row
/// is bit-equal in every case.
#[test]
fn a_batched_pass_is_not_single_steps_and_the_exact_verify_pass_is() {
    let dir = tempfile::tempdir().unwrap();
    let short = Options { n_ctx: 128, n_threads: 2, n_ubatch: 8, ..Options::default() };
    let long = Options { n_ctx: 1024, n_threads: 2, n_ubatch: 512, ..Options::default() };
    let long_prompt: Vec<i32> = (0..530).map(|i| i * 37 % 400 + 1).collect();
    for a in ARCHS {
        for q in [Quant::F32, Quant::F16, Quant::Q8_0, Quant::Q4KM, Quant::Mxfp4] {
            let path = synth_arch_quant(dir.path(), a.name, q);
            let (batched, exact) = batched_vs_single(&path, &PROMPT, short);
            eprintln!("{} {q:?}, 12 keys: batched rows equal {batched:?}, exact {exact:?}", a.name);
            assert!(exact.iter().all(|&e| e), "{} {q:?}: the exact verify pass differs from single steps", a.name);
            if matches!(q, Quant::F32 | Quant::F16) {
                assert!(batched.iter().all(|&e| !e), "{} {q:?}: batched rows were expected to differ", a.name);
            }
            if q == Quant::Q8_0 {
                let (batched, exact) = batched_vs_single(&path, &long_prompt, long);
                eprintln!("{} {q:?}, 530 keys: batched rows equal {batched:?}, exact {exact:?}", a.name);
                assert!(exact.iter().all(|&e| e), "{}: the exact verify pass differs past 512 keys", a.name);
                assert!(batched.iter().all(|&e| !e), "{}: batched rows past 512 keys were expected to differ", a.name);
            }
        }
    }
}

fn builder(path: &Path) -> EngineBuilder {
    Engine::builder(path).context(256).threads(2).ubatch(8)
}

fn streamed(path: &Path, budget_entries: f64, overlap: Overlap) -> EngineBuilder {
    let index = ModelIndex::open(path).unwrap();
    let slot = bmoe_engine::stream::slot_layout_bytes(&index.layers) as f64;
    let io = EngineOptions { backend: BackendKind::Auto, lanes: 4, register: true, direct: true };
    let so = StreamOptions {
        cache: CacheSize::Bytes((budget_entries * slot) as u64),
        force: true,
        io,
        overlap,
        ..Default::default()
    };
    builder(path).moe_stream(MoeStream::On).stream(so)
}

fn replay(tokens: &[i32], corrupt: f64, n_draft: u32, skip_rule: bool) -> SpecOptions {
    SpecOptions {
        source: DraftSource::Replay { tokens: tokens.to_vec(), corrupt, source: "plain".into() },
        n_draft,
        skip_rule,
        exact: true,
    }
}

fn ngram(min_match: u32, n_draft: u32, skip_rule: bool) -> SpecOptions {
    SpecOptions { source: DraftSource::Ngram { min_match }, n_draft, skip_rule, exact: true }
}

/// A generation's tokens, the bits of the logits of every pick, the context after it, and what
/// speculative decoding did.
#[derive(Debug, PartialEq)]
struct Run {
    tokens: Vec<i32>,
    picks: Vec<Vec<u32>>,
    context: Vec<i32>,
    n_past: u32,
    spec: Option<SpecStats>,
}

/// `n` tokens after `PROMPT` (`ignore_eos`), greedy or sampled with a fixed seed; `stop_at`
/// stops it from the callback at that index.
fn run(e: &mut Engine, n: usize, sampled: bool, stop_at: Option<usize>) -> Run {
    let n_vocab = e.tokenizer().n_vocab();
    let sampling = if sampled { Sampling { temp: 1.0, seed: 7, ..Sampling::default() } } else { Sampling::greedy() };
    let mut sampler = Sampler::new(sampling, n_vocab).unwrap();
    let mut picks = Vec::new();
    let g = e
        .generate(
            &PROMPT,
            &GenParams { n_predict: n, ignore_eos: true },
            &mut |l| {
                picks.push(bits(l));
                sampler.sample(l)
            },
            &mut |t| if Some(t.index) == stop_at { Control::Stop } else { Control::Continue },
        )
        .unwrap();
    // Picks made after a stop are not kept (the pass's later rows): compare the kept ones.
    picks.truncate(g.tokens.len());
    Run { tokens: g.tokens, picks, context: e.context().to_vec(), n_past: e.n_past(), spec: g.spec }
}

/// The plain run's parts a speculative run must reproduce.
fn same(a: &Run, b: &Run) -> bool {
    (&a.tokens, &a.picks, &a.context, a.n_past) == (&b.tokens, &b.picks, &b.context, b.n_past)
}

const N: usize = 40;

/// Drafts replayed from the plain greedy output: every drafted token accepted, the plain
/// tokens and logits; corrupted drafts (acceptance about 1 − p): the same text, partly
/// accepted; prompt lookup and the skip rule: the same text. Resident and streamed through an
/// evicting cache with look-ahead, q8_0 and q4_k_m (whose router, F32, is computed row by row).
#[test]
fn speculative_greedy_text_is_the_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    for q in [Quant::Q8_0, Quant::Q4KM] {
        let path = synth_arch_quant(dir.path(), "qwen3moe", q);
        let plain = run(&mut builder(&path).moe_stream(MoeStream::Off).open().unwrap(), N, false, None);
        assert!(plain.spec.is_none());
        let cases: Vec<(&str, SpecOptions)> = vec![
            ("replay, all accepted", replay(&plain.tokens, 0.0, 3, false)),
            ("replay, corrupted 0.3", replay(&plain.tokens, 0.3, 5, false)),
            ("replay, one token", replay(&plain.tokens, 0.0, 1, false)),
            ("replay, skip rule", replay(&plain.tokens, 0.0, 3, true)),
            ("ngram", ngram(1, 4, false)),
        ];
        for (what, opts) in cases {
            for stream in [false, true] {
                let b = if stream {
                    streamed(&path, 3.0, Overlap::Full)
                } else {
                    builder(&path).moe_stream(MoeStream::Off)
                };
                let mut e = b.speculative(Some(opts.clone())).open().unwrap();
                assert!(e.report().mode_line().contains("speculative: "), "{}", e.report().mode_line());
                let got = run(&mut e, N, false, None);
                let s = got.spec.unwrap();
                eprintln!("{q:?} {what} (streamed {stream}): {s:?}");
                assert!(same(&got, &plain), "{q:?} {what} (streamed {stream}): the text differs from plain decode");
                assert_eq!(s.plain_steps + s.verify_passes, (N - 1) as u64 - s.accepted, "{what}: every step counted");
                assert_eq!(s.verify_tokens, s.accepted + s.verify_passes, "{what}: a pass yields its accepted and one");
                match what {
                    "replay, all accepted" | "replay, one token" => {
                        assert!(s.drafted > 0 && s.accepted == s.drafted, "{what}: {s:?}");
                        assert!(s.verify_passes <= (N as u64) / 2, "{what}: {s:?}");
                    }
                    "replay, corrupted 0.3" => assert!(s.accepted > 0 && s.accepted < s.drafted, "{what}: {s:?}"),
                    "replay, skip rule" => assert!(s.verify_passes > 0, "{what}: at acceptance 1 it drafts: {s:?}"),
                    _ => {}
                }
                if stream {
                    assert!(e.streamer().unwrap().cache().counters().total().evictions > 0, "{what}: no eviction");
                }
            }
        }
    }
}

/// Sampled (temperature 1, a fixed seed): the sampler is called once per kept token in the same
/// order, on the same logits: the same text as plain sampled decoding.
#[test]
fn speculative_sampled_text_is_the_plain_sampled_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_arch_quant(dir.path(), "qwen3moe", Quant::Q8_0);
    let plain = run(&mut builder(&path).moe_stream(MoeStream::Off).open().unwrap(), N, true, None);
    for (what, opts) in
        [("replay", replay(&plain.tokens, 0.0, 3, false)), ("replay 0.5", replay(&plain.tokens, 0.5, 3, false))]
    {
        let mut e = streamed(&path, 4.0, Overlap::Full).speculative(Some(opts)).open().unwrap();
        let got = run(&mut e, N, true, None);
        assert!(same(&got, &plain), "{what}: sampled text differs from plain sampled decoding");
        assert!(got.spec.unwrap().accepted > 0, "{what}");
    }
}

/// Stopped by the caller in the middle of a verify pass's tokens, and by -n: the tokens and
/// the context of the plain run stopped at the same token; a generation after continues the
/// same.
#[test]
fn a_stop_in_the_middle_of_a_pass_leaves_the_plain_context() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_arch_quant(dir.path(), "qwen3moe", Q8);
    let mut p = builder(&path).moe_stream(MoeStream::Off).open().unwrap();
    let full = run(&mut p, N, false, None);
    for stop in [1, 6, 13] {
        let want = run(&mut p, N, false, Some(stop));
        assert_eq!(want.tokens.len(), stop + 1);
        let spec = Some(replay(&full.tokens, 0.0, 5, false));
        let mut e = builder(&path).moe_stream(MoeStream::Off).speculative(spec).open().unwrap();
        let got = run(&mut e, N, false, Some(stop));
        assert!(same(&got, &want), "stopped at {stop}: {:?} vs {:?}", got.tokens, want.tokens);
        // -n inside a pass: 7 tokens from passes of up to 6.
        let got = run(&mut e, 7, false, None);
        assert_eq!((got.tokens.as_slice(), got.n_past), (&full.tokens[..7], (PROMPT.len() + 6) as u32));
    }
}

const Q8: Quant = Quant::Q8_0;

/// Every native architecture: replayed drafts (some corrupted) streamed through an evicting
/// cache give the plain resident text.
#[test]
fn every_arch_speculates_the_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    for a in ARCHS {
        let quant = if a.name == "gpt-oss" { Quant::Mxfp4 } else { Q8 };
        let path = synth_arch_quant(dir.path(), a.name, quant);
        let plain = run(&mut builder(&path).moe_stream(MoeStream::Off).open().unwrap(), 24, false, None);
        let spec = Some(replay(&plain.tokens, 0.25, 3, false));
        let mut e = streamed(&path, 3.0, Overlap::Full).speculative(spec).open().unwrap();
        let got = run(&mut e, 24, false, None);
        assert!(same(&got, &plain), "{}: speculative streamed text differs from plain resident", a.name);
        assert!(got.spec.unwrap().accepted > 0, "{}", a.name);
    }
}

/// At acceptance 0 (every draft corrupted) the skip rule verifies nothing: the skipped drafts,
/// compared with the text, say so before any pass is spent; plain decode, exactly.
#[test]
fn the_skip_rule_verifies_nothing_at_acceptance_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_arch_quant(dir.path(), "qwen3moe", Q8);
    let plain = run(&mut builder(&path).moe_stream(MoeStream::Off).open().unwrap(), N, false, None);
    let mut e =
        streamed(&path, 3.0, Overlap::Full).speculative(Some(replay(&plain.tokens, 1.0, 3, true))).open().unwrap();
    let got = run(&mut e, N, false, None);
    assert!(same(&got, &plain));
    let s = got.spec.unwrap();
    assert_eq!((s.verify_passes, s.drafted), (0, 0), "{s:?}");
    assert!(s.skipped > 0 && s.shadow_drafted > 0 && s.shadow_accepted == 0, "{s:?}");
    assert_eq!(e.report().speculative.as_ref().map(|o| o.skip_rule), Some(true));
}

/// What the builder refuses: a draft wider than the micro-batch, speculative decoding or the
/// lossy knobs on engines they are not built for, route-ahead with drafting or replay, values
/// out of range.
#[test]
fn the_builder_refuses_what_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_arch_quant(dir.path(), "qwen3moe", Q8);
    let err = |b: EngineBuilder| b.open().map(|_| ()).unwrap_err().to_string();
    let e = err(builder(&path).speculative(Some(ngram(2, 8, true))));
    assert!(e.contains("--draft 8") && e.contains("--ubatch 8"), "{e}");
    let e = err(builder(&path).engine(bmoe_engine::engine::EngineKind::Llama).speculative(Some(ngram(2, 3, true))));
    assert!(e.contains("native decoder"), "{e}");
    let e = err(builder(&path).moe_stream(MoeStream::Off).drop_cold_experts(Some(0.5)));
    assert!(e.contains("--moe-stream off"), "{e}");
    let e = err(builder(&path).route_ahead(Some(1)).speculative(Some(ngram(2, 3, true))));
    assert!(e.contains("--route-ahead 1"), "{e}");
    let e = err(builder(&path).route_ahead(Some(4)));
    assert!(e.contains("--route-ahead 4: 1 to 3"), "{e}");
    let e = err(builder(&path).drop_cold_experts(Some(3.0)));
    assert!(e.contains("--drop-cold-experts 3"), "{e}");
    let e = err(builder(&path).speculative(Some(replay(&[1, 2, 999_999], 0.0, 3, true))));
    assert!(e.contains("999999") && e.contains("vocabulary"), "{e}");
    let e = err(builder(&path).speculative(Some(replay(&[1], 2.0, 3, true))));
    assert!(e.contains("--draft-corrupt 2"), "{e}");
}

/// Greedy, `n` single steps after `PROMPT` (eval): every step's logits, as bits.
fn steps(e: &mut Engine, n: usize) -> Vec<Vec<u32>> {
    let mut l = e.eval(&PROMPT).unwrap();
    let mut out = vec![bits(&l)];
    for _ in 0..n {
        l = e.eval(&[argmax(&l)]).unwrap();
        out.push(bits(&l));
    }
    out
}

/// Off by default: no counters, no LOSSY on the mode line, and the runs of every other gate.
/// `--drop-cold-experts 1`: routings dropped and reads avoided through an evicting cache
/// (serial and with look-ahead), LOSSY on the mode line, the logits changed.
#[test]
fn drop_cold_experts_drops_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // q8_0 computes the experts on the pool's stacks (mul_mat_id), q4_k_m one expert at a time
    // (a dropped routing names its row's first expert twice: that path once failed on it).
    for quant in [Quant::Q4KM, Q8] {
        let path = synth_arch_quant(dir.path(), "qwen3moe", quant);
        let mut plain = streamed(&path, 3.0, Overlap::Off).open().unwrap();
        assert!(plain.lossy_counters().is_none() && !plain.report().mode_line().contains("LOSSY"));
        let want = steps(&mut plain, 24);
        for overlap in [Overlap::Off, Overlap::Full] {
            let mut e = streamed(&path, 3.0, overlap).drop_cold_experts(Some(1.0)).open().unwrap();
            let line = e.report().mode_line();
            assert!(line.contains("LOSSY --drop-cold-experts 1"), "{line}");
            let got = steps(&mut e, 24);
            let c = e.lossy_counters().unwrap();
            eprintln!("{quant:?}, overlap {overlap:?}: {c:?}");
            assert_eq!(got[0], want[0], "the prefill drops nothing");
            assert!(got != want, "dropping changed nothing");
            assert!(c.dropped > 0 && c.dropped < c.drop_considered, "{c:?}");
            assert_eq!(c.drop_considered, 24 * 4 * 2, "every decode routing looked at: {c:?}");
            assert!(c.drop_weight_dropped > 0.0 && c.drop_weight_dropped < c.drop_weight_all, "{c:?}");
            if overlap == Overlap::Off {
                assert!(c.drop_avoided > 0 && c.drop_avoided_bytes > 0, "{c:?}");
            }
        }
    }
    let path = synth_arch_quant(dir.path(), "qwen3moe", Q8);
    // Every expert in the cache, warmed by a first run: nothing is cold, nothing dropped.
    let mut e = streamed(&path, 32.0, Overlap::Off).drop_cold_experts(Some(1.0)).open().unwrap();
    e.eval(&(0..200).map(|i| i * 7 % 400).collect::<Vec<i32>>()).unwrap();
    let before = e.lossy_counters().unwrap();
    e.reset();
    let got = steps(&mut e, 24);
    assert_eq!(e.lossy_counters().unwrap().dropped, before.dropped, "a hit is never dropped");
    let mut res = builder(&path).moe_stream(MoeStream::Off).open().unwrap();
    assert!(got == steps(&mut res, 24), "nothing dropped: the lossless bits");
}

/// `--route-ahead L`: deterministic (it does not depend on the cache), so streamed with
/// look-ahead == resident under the same knob, bit for bit; its mismatch counted; its reads
/// issued L layers early and used.
#[test]
fn route_ahead_streams_the_bits_of_its_resident_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth_arch_quant(dir.path(), "qwen3moe", Q8);
    let lossless = steps(&mut builder(&path).moe_stream(MoeStream::Off).open().unwrap(), 24);
    for l in [1, 2] {
        let mut res = builder(&path).moe_stream(MoeStream::Off).route_ahead(Some(l)).open().unwrap();
        assert!(res.report().mode_line().contains(&format!("LOSSY experimental --route-ahead {l}")));
        let want = steps(&mut res, 24);
        let c = res.lossy_counters().unwrap();
        assert_eq!(c.ahead_routings, 24 * (4 - u64::from(l)) * 2, "{c:?}");
        assert!(c.ahead_mismatched > 0 && c.ahead_mismatched < c.ahead_routings, "{c:?}");
        assert!(want != lossless, "route-ahead {l} changed nothing");
        assert_eq!(want[0], lossless[0], "the prefill keeps its router");
        for budget in [3.0, 12.0] {
            let mut s = streamed(&path, budget, Overlap::Full).route_ahead(Some(l)).open().unwrap();
            assert!(steps(&mut s, 24) == want, "route-ahead {l}, budget {budget}: streamed differs from resident");
            assert_eq!(s.lossy_counters().unwrap(), c, "the same routings, the same mismatches");
            let st = s.streamer().unwrap().stats();
            assert!(st.spec_entries > 0 && st.spec_useful > 0, "{st:?}");
        }
    }
}

/// The counters reach the `metrics` facade (the server's /metrics).
#[test]
fn speculative_and_lossy_counters_reach_the_metrics_facade() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let dir = tempfile::tempdir().unwrap();
    let path = synth_arch_quant(dir.path(), "qwen3moe", Q8);
    let plain = run(&mut builder(&path).moe_stream(MoeStream::Off).open().unwrap(), 16, false, None);
    let (spec, drop, ahead) = metrics::with_local_recorder(&recorder, || {
        let spec = Some(replay(&plain.tokens, 0.0, 3, false));
        let mut e = builder(&path).moe_stream(MoeStream::Off).speculative(spec).open().unwrap();
        let spec = run(&mut e, 16, false, None).spec.unwrap();
        let mut d = streamed(&path, 3.0, Overlap::Off).drop_cold_experts(Some(1.0)).open().unwrap();
        steps(&mut d, 8);
        let mut a = builder(&path).moe_stream(MoeStream::Off).route_ahead(Some(1)).open().unwrap();
        steps(&mut a, 8);
        (spec, d.lossy_counters().unwrap(), a.lossy_counters().unwrap())
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
    assert_eq!(snap["bmoe_spec_verify_passes_total"], spec.verify_passes);
    assert_eq!(snap["bmoe_spec_drafted_tokens_total"], spec.drafted);
    assert_eq!(snap["bmoe_spec_accepted_tokens_total"], spec.accepted);
    assert_eq!(snap["bmoe_moe_dropped_routings_total"], drop.dropped);
    assert_eq!(snap["bmoe_moe_drop_avoided_bytes_total"], drop.drop_avoided_bytes);
    assert_eq!(snap["bmoe_route_ahead_routings_total"], ahead.ahead_routings);
    assert_eq!(snap["bmoe_route_ahead_mismatches_total"], ahead.ahead_mismatched);
}
