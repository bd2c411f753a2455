//! The GGUF reader and model index on synthesized tiny models: hand-computed sizes, split
//! resolution against the unsplit file, and a typed error for each kind of malformed file.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use bmoe_engine::gguf::{self, Error};
use bmoe_engine::model::{self, ModelIndex, Proj};
use bmoe_engine::synth::{self, Options, Quant};

fn tiny(dir: &Path, name: &str, quant: Quant, seed: u64, split: u32) -> Vec<PathBuf> {
    let mut o = Options::new("qwen3moe", "tiny", quant, seed).unwrap();
    o.split = split;
    synth::write(&o, &dir.join(name), &mut |_, _| {}).unwrap()
}

fn read_at(path: &Path, offset: u64, len: u64) -> Vec<u8> {
    let mut f = fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut b = vec![0; len as usize];
    f.read_exact(&mut b).unwrap();
    b
}

#[test]
fn tiny_q4_k_m_numbers_match_hand_computation() {
    let dir = tempfile::tempdir().unwrap();
    let path = &tiny(dir.path(), "t.gguf", Quant::Q4KM, 1, 1)[0];
    let idx = ModelIndex::open(path).unwrap();
    let s = idx.shape();
    assert_eq!((s.n_layer, s.n_expert, s.n_expert_used, s.n_embd, s.n_ff_exp), (4, 8, 2, 256, 256));
    // tiny: n_embd 256, expert ffn 256, 8 experts, top-2, 4 layers.
    // use_more_bits(l, 4) holds for l = 2 (l % 3 == 2) and l = 3 (l >= 7·4/8): ffn_down Q6_K there.
    // gate = up = 256 rows × 1 Q4_K block (144 B) = 36_864 B per expert.
    // down Q4_K: 256 rows × 144 = 36_864; down Q6_K: 256 rows × 210 = 53_760.
    let q4 = 36_864 * 3; // 110_592
    let q6 = 36_864 * 2 + 53_760; // 127_488
    assert_eq!(idx.entry_bytes(), vec![q4, q4, q6, q6]);
    // cycle at k=2: 2 × (2·110_592 + 2·127_488) = 952_320
    assert_eq!(idx.cycle_bytes(2), 952_320);
    assert_eq!(idx.cycle_bytes(100), 8 * (2 * q4 + 2 * q6), "k is capped at n_expert");
    assert_eq!(idx.expert_bytes(), 8 * (2 * q4 + 2 * q6));
    assert_eq!(idx.widest_layer().unwrap().layer, 2);
    // dense: token_embd [256, 512] Q4_K = 512·144 = 73_728; output [256, 512] Q6_K = 512·210 =
    // 107_520; output_norm 256·4 = 1_024. Per layer, with llama-quantize's 8-expert rules (tiny
    // has 8 experts): attn_norm 1_024 + attn_q [256,256] Q4_K 36_864 + attn_k [256,128] Q8_0
    // 128·272 = 34_816 + attn_v Q8_0 34_816 + attn_output Q5_K 256·176 = 45_056 + q_norm 256 +
    // k_norm 256 + ffn_norm 1_024 + router [256, 8] f32 8_192.
    let layer = 1_024 + 36_864 + 34_816 + 34_816 + 45_056 + 256 + 256 + 1_024 + 8_192; // 162_304
    assert_eq!(idx.dense_bytes(), 73_728 + 107_520 + 1_024 + 4 * layer);
    assert_eq!(idx.dense_bytes(), 831_488);
    // The file is header + dense + experts (+ alignment padding under 32 B per tensor).
    let file_len = fs::metadata(path).unwrap().len();
    let data = idx.dense_bytes() + idx.expert_bytes();
    let header = idx.file.shards[0].header.data_offset;
    assert!(file_len >= header + data && file_len < header + data + 32 * idx.file.tensors.len() as u64);
    // Types by kind follow the Q4_K_M mix.
    let types = idx.types_by_kind();
    assert_eq!(types["ffn_down_exps.weight"].get("q6_K"), Some(&2));
    assert_eq!(types["ffn_down_exps.weight"].get("q4_K"), Some(&2));
    assert_eq!(types["output.weight"].get("q6_K"), Some(&1));
    assert_eq!(types["token_embd.weight"].get("q4_K"), Some(&1));
    assert_eq!(types["ffn_gate_inp.weight"].get("f32"), Some(&4));
    assert_eq!(types["attn_k.weight"].get("q8_0"), Some(&4));
    assert_eq!(types["attn_output.weight"].get("q5_K"), Some(&4));
}

#[test]
fn expert_ranges_are_slices_of_the_stacked_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let path = &tiny(dir.path(), "t.gguf", Quant::Q8_0, 2, 1)[0];
    let idx = ModelIndex::open(path).unwrap();
    let down = idx.file.tensor("blk.1.ffn_down_exps.weight").unwrap().clone();
    let whole = read_at(path, down.offset, down.size);
    let per = down.size / 8;
    for e in 0..8 {
        let r = idx.expert_ranges(1, e).unwrap();
        assert_eq!(r.iter().map(|(p, _)| *p).collect::<Vec<_>>(), vec![Proj::Gate, Proj::Up, Proj::Down]);
        let (_, d) = r[2];
        assert_eq!((d.offset, d.len), (down.offset + u64::from(e) * per, per));
        assert_eq!(
            read_at(path, d.offset, d.len),
            whole[(u64::from(e) * per) as usize..((u64::from(e) + 1) * per) as usize]
        );
    }
    assert!(idx.expert_ranges(1, 8).is_none());
    assert!(idx.expert_ranges(9, 0).is_none());
}

#[test]
fn split_model_resolves_every_tensor_to_its_shard_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let whole = ModelIndex::open(&tiny(dir.path(), "w.gguf", Quant::Q4KM, 9, 1)[0]).unwrap();
    let paths = tiny(dir.path(), "s.gguf", Quant::Q4KM, 9, 3);
    let split = ModelIndex::open(&paths[0]).unwrap();
    assert_eq!(split.file.shards.len(), 3);
    assert_eq!(split.file.tensors.len(), whole.file.tensors.len());
    let mut used = [false; 3];
    for t in &split.file.tensors {
        let w = whole.file.tensor(&t.name).unwrap();
        assert_eq!((&t.dims, t.ty, t.size), (&w.dims, w.ty, w.size), "{}", t.name);
        used[t.shard] = true;
        let a = read_at(&split.file.shards[t.shard].path, t.offset, t.size);
        let b = read_at(&whole.file.shards[0].path, w.offset, w.size);
        assert!(a == b, "{}: bytes differ between shard {} and the unsplit file", t.name, t.shard);
    }
    assert_eq!(used, [true; 3], "every shard holds tensors");
    assert_eq!(split.entry_bytes(), whole.entry_bytes());
    assert_eq!(split.cycle_bytes(2), whole.cycle_bytes(2));
    // Expert ranges point into the right shard.
    let r = split.expert_ranges(3, 5).unwrap();
    let rw = whole.expert_ranges(3, 5).unwrap();
    for ((_, a), (_, b)) in r.iter().zip(&rw) {
        assert_eq!(
            read_at(&split.file.shards[a.shard].path, a.offset, a.len),
            read_at(&whole.file.shards[0].path, b.offset, b.len)
        );
    }
}

#[test]
fn missing_shard_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let paths = tiny(dir.path(), "s.gguf", Quant::Q8_0, 1, 3);
    fs::remove_file(&paths[1]).unwrap();
    match gguf::open_model(&paths[0]) {
        Err(Error::MissingShard { index: 2, count: 3, path }) => assert!(path.ends_with("s-00002-of-00003.gguf")),
        other => panic!("expected MissingShard, got {other:?}"),
    }
    // Passing a later shard is refused too.
    match gguf::open_model(&paths[2]) {
        Err(Error::BadSplit { .. }) => {}
        other => panic!("expected BadSplit, got {other:?}"),
    }
}

fn tiny_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    fs::read(&tiny(dir.path(), "t.gguf", Quant::Q8_0, 1, 1)[0]).unwrap()
}

fn parse(b: &[u8]) -> gguf::Result<gguf::GgufHeader> {
    gguf::parse(b, b.len() as u64)
}

#[test]
fn malformed_files_give_typed_errors() {
    let good = tiny_bytes();
    let h = parse(&good).unwrap();
    assert_eq!(h.version, 3);

    // Truncated header: the file ends inside the fixed header.
    assert!(
        matches!(parse(&good[..20]), Err(Error::Truncated { offset: 16, need: 8, .. })),
        "{:?}",
        parse(&good[..20])
    );
    // Wrong magic.
    let mut b = good.clone();
    b[..4].copy_from_slice(b"GGML");
    assert!(matches!(parse(&b), Err(Error::BadMagic { found }) if &found == b"GGML"));
    // Unsupported version.
    let mut b = good.clone();
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::UnsupportedVersion { version: 1 })));
    // Absurd counts: more key/values or tensors than the file could hold.
    let mut b = good.clone();
    b[16..24].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::AbsurdCount { count, .. }) if count == u64::MAX / 2));
    let mut b = good.clone();
    b[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::AbsurdCount { .. })));
    // String length past EOF: the first key's length.
    let mut b = good.clone();
    b[24..32].copy_from_slice(&(good.len() as u64).to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::StringPastEof { offset: 24, .. })), "{:?}", parse(&b));
    // Tensor data past EOF: the data section cut short.
    let cut = &good[..good.len() - 100];
    match parse(cut) {
        Err(Error::TensorPastEof { name, file_len, .. }) => {
            assert_eq!(name, "output.weight");
            assert_eq!(file_len, cut.len() as u64);
        }
        other => panic!("expected TensorPastEof, got {other:?}"),
    }
    // A header cut inside the tokenizer array: its element count no longer fits.
    let mid = &good[..(h.data_offset / 2) as usize];
    assert!(matches!(
        parse(mid),
        Err(Error::AbsurdCount { .. } | Error::Truncated { .. } | Error::StringPastEof { .. })
    ));
}

/// Locates tensor `name`'s info in the raw header: returns the offset of its n_dims field.
fn tensor_info_at(b: &[u8], name: &str) -> usize {
    let mut pat = (name.len() as u64).to_le_bytes().to_vec();
    pat.extend_from_slice(name.as_bytes());
    b.windows(pat.len()).position(|w| w == pat).unwrap() + pat.len()
}

#[test]
fn malformed_tensor_infos_give_typed_errors() {
    let good = tiny_bytes();
    let at = tensor_info_at(&good, "output_norm.weight"); // 1-D f32 [256]
    assert_eq!(u32::from_le_bytes(good[at..at + 4].try_into().unwrap()), 1);
    let (ty_at, off_at) = (at + 4 + 8, at + 4 + 8 + 4);
    // Unknown type.
    let mut b = good.clone();
    b[ty_at..ty_at + 4].copy_from_slice(&999u32.to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::UnknownType { ty: 999, .. })));
    // Too many dimensions.
    let mut b = good.clone();
    b[at..at + 4].copy_from_slice(&7u32.to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::BadShape { .. })));
    // Negative dimension / overflowing element count.
    let mut b = good.clone();
    b[at + 4..at + 12].copy_from_slice(&(-5i64).to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::BadShape { .. })));
    // Misaligned offset.
    let mut b = good.clone();
    let off = u64::from_le_bytes(b[off_at..off_at + 8].try_into().unwrap());
    b[off_at..off_at + 8].copy_from_slice(&(off + 4).to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::MisalignedTensor { .. })));
    // Offset so large that offset + size overflows: refused (not where the previous tensor's
    // data ends, as ggml requires), no panic.
    let mut b = good.clone();
    b[off_at..off_at + 8].copy_from_slice(&(u64::MAX - 31).to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::TensorLayout { .. })));
    // A type whose bytes no longer end where the next tensor starts (f32 -> f16): refused as
    // ggml refuses it.
    let mut b = good.clone();
    b[ty_at..ty_at + 4].copy_from_slice(&1u32.to_le_bytes());
    assert!(matches!(parse(&b), Err(Error::TensorLayout { .. })));
    // The last tensor's data past the end of the file (the layout itself intact).
    let b = good[..good.len() - 64].to_vec();
    assert!(matches!(parse(&b), Err(Error::TensorPastEof { .. })));
    // An expert tensor with the wrong expert count fails in the index, not the reader.
    let at = tensor_info_at(&good, "blk.0.ffn_up_exps.weight");
    let mut b = good.clone();
    // [256, 256, 8] -> [256, 512, 4]: the same bytes (so the layout holds), 4 experts.
    b[at + 4 + 8..at + 4 + 16].copy_from_slice(&512u64.to_le_bytes());
    b[at + 4 + 16..at + 4 + 24].copy_from_slice(&4u64.to_le_bytes());
    let h = parse(&b).unwrap();
    match ModelIndex::new(gguf::GgufModel::single("x".into(), h)) {
        Err(model::Error::TensorShape { name, .. }) => assert_eq!(name, "blk.0.ffn_up_exps.weight"),
        other => panic!("expected TensorShape, got {other:?}"),
    }
}

#[test]
fn missing_required_key_is_named() {
    let good = tiny_bytes();
    // Rename the key in place (same length) so it is no longer found.
    let key = b"qwen3moe.expert_count";
    let pos = good.windows(key.len()).position(|w| w == key).unwrap();
    let mut b = good.clone();
    b[pos..pos + key.len()].copy_from_slice(b"qwen3moe.expert_cOunt");
    let h = parse(&b).unwrap();
    match ModelIndex::new(gguf::GgufModel::single("x".into(), h)) {
        Err(model::Error::MissingKey { key }) => assert_eq!(key, "qwen3moe.expert_count"),
        other => panic!("expected MissingKey, got {other:?}"),
    }
}

#[test]
fn synth_is_deterministic_in_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let a = fs::read(&tiny(dir.path(), "a.gguf", Quant::Q4KM, 5, 1)[0]).unwrap();
    let b = fs::read(&tiny(dir.path(), "b.gguf", Quant::Q4KM, 5, 1)[0]).unwrap();
    let c = fs::read(&tiny(dir.path(), "c.gguf", Quant::Q4KM, 6, 1)[0]).unwrap();
    assert!(a == b);
    // Another seed: same tensors and sizes (the merges, hence the header, differ), other bytes.
    let (ha, hc) = (parse(&a).unwrap(), parse(&c).unwrap());
    let sizes = |h: &gguf::GgufHeader| h.tensors.iter().map(|t| (t.name.clone(), t.size)).collect::<Vec<_>>();
    assert_eq!(sizes(&ha), sizes(&hc));
    let ta = ha.tensor("blk.0.ffn_gate_exps.weight").unwrap();
    let tc = hc.tensor("blk.0.ffn_gate_exps.weight").unwrap();
    assert!(
        a[ta.offset as usize..(ta.offset + ta.size) as usize] != c[tc.offset as usize..(tc.offset + tc.size) as usize]
    );
}

/// A llama file without experts is a dense model: a clear "not a MoE" error that `bmoe run`
/// treats as not streamable (llama.cpp runs it), not a missing-key failure.
#[test]
fn dense_llama_is_not_streamable() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options::new("llama", "tiny", Quant::Q8_0, 1).unwrap();
    let path = synth::write_sparse(&o, &dir.path().join("l.gguf")).unwrap().remove(0);
    let good = fs::read(&path).unwrap();
    assert!(ModelIndex::new(gguf::GgufModel::single("x".into(), parse(&good).unwrap())).is_ok());
    let key = b"llama.expert_count";
    let pos = good.windows(key.len()).position(|w| w == key).unwrap();
    let mut b = good.clone();
    b[pos..pos + key.len()].copy_from_slice(b"llama.expert_cOunt");
    match ModelIndex::new(gguf::GgufModel::single("x".into(), parse(&b).unwrap())) {
        Err(e @ model::Error::NotMoe { .. }) => assert!(e.not_streamable(), "{e}"),
        other => panic!("expected NotMoe, got {other:?}"),
    }
}

/// Each real model's preset (q4_k_m, headers only) indexes as its architecture with the
/// parameter counts its model card publishes (total within 1 %, active per token within 2 %).
#[test]
fn presets_have_the_published_parameter_counts() {
    let dir = tempfile::tempdir().unwrap();
    for (shape, arch, total, active) in [
        ("qwen3-30b-a3b", "qwen3moe", 30.5e9, 3.3e9),
        ("olmoe-1b-7b", "olmoe", 6.92e9, 1.28e9),
        ("mixtral-8x7b", "llama", 46.7e9, 12.9e9),
        ("qwen1.5-moe-a2.7b", "qwen2moe", 14.3e9, 2.7e9),
    ] {
        let o = Options::new(synth::preset_arch(shape).unwrap(), shape, Quant::Q4KM, 1).unwrap();
        let path = synth::write_sparse(&o, &dir.path().join(format!("{shape}.gguf"))).unwrap().remove(0);
        let idx = ModelIndex::open(&path).unwrap();
        assert_eq!(idx.arch.name, arch);
        let k = idx.shape().n_expert_used;
        let (t, a) = (idx.n_params() as f64, idx.active_params(k) as f64);
        assert!((t / total - 1.0).abs() < 0.01, "{shape}: {t} parameters, published {total}");
        assert!((a / active - 1.0).abs() < 0.02, "{shape}: {a} active, published {active}");
        // The file is its full size, though sparse.
        assert_eq!(fs::metadata(&path).unwrap().len(), idx.file.file_bytes());
    }
}

/// gpt-oss-20b and -120b (mxfp4, as the ggml-org files): OpenAI's model card (Table 1) gives
/// 20.91 B / 3.61 B and 116.83 B / 5.13 B, its active count without the input embedding (the
/// unembedding counts). MXFP4 experts with q8_0 for everything else, biases and sinks f32.
#[test]
fn gpt_oss_presets_have_the_published_parameter_counts() {
    let dir = tempfile::tempdir().unwrap();
    for (shape, total, active, entry) in [
        ("gpt-oss-20b", 20.91e9, 3.61e9, 3 * 2880 * 2880 / 32 * 17),
        ("gpt-oss-120b", 116.83e9, 5.13e9, 3 * 2880 * 2880 / 32 * 17),
    ] {
        let o = Options::new("gpt-oss", shape, Quant::Mxfp4, 1).unwrap();
        let path = synth::write_sparse(&o, &dir.path().join(format!("{shape}.gguf"))).unwrap().remove(0);
        let idx = ModelIndex::open(&path).unwrap();
        assert_eq!(idx.arch.name, "gpt-oss");
        let k = idx.shape().n_expert_used;
        assert_eq!(k, 4);
        let (t, a) = (idx.n_params() as f64, (idx.active_params(k) - idx.embedding_params()) as f64);
        assert!((t / total - 1.0).abs() < 0.01, "{shape}: {t} parameters, published {total}");
        assert!((a / active - 1.0).abs() < 0.02, "{shape}: {a} active, published {active}");
        // An entry is gate + up + down in MXFP4 (17 bytes per 32 weights); the biases are dense.
        assert!(idx.entry_bytes().iter().all(|&e| e == entry), "{shape}: {:?}", &idx.entry_bytes()[..2]);
        let types = idx.types_by_kind();
        for (kind, ty) in [
            ("ffn_gate_exps.weight", "mxfp4"),
            ("ffn_down_exps.weight", "mxfp4"),
            ("attn_q.weight", "q8_0"),
            ("token_embd.weight", "q8_0"),
            ("output.weight", "q8_0"),
            ("attn_sinks.weight", "f32"),
            ("ffn_gate_exps.bias", "f32"),
            ("ffn_gate_inp.weight", "f32"),
        ] {
            assert_eq!(types[kind].keys().copied().collect::<Vec<_>>(), vec![ty], "{shape}: {kind}");
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), idx.file.file_bytes());
    }
}

/// Gemma-4-26B-A4B (q4_k_m, headers only) is the Q4_K_M file the routing trace
/// `gemma4-26b-a4b.route.csv` was recorded on: per layer, the bytes of one expert entry (fused
/// gate_up q4_K, down q5_0 or q8_0: rows of 704 are not whole q4_K/q6_K blocks) and of the
/// dense weights are the trace header's, exactly; and the parameters are the model card's
/// (25.2 B, 3.8 B active per token with the tied embedding). The generic index finds it: there
/// is no native recipe for gemma4.
#[test]
fn gemma4_preset_is_the_traced_file() {
    use bmoe_engine::generic::index::GenericIndex;
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(synth::preset_arch("gemma-4-26b-a4b"), Some("gemma4"));
    let o = Options::new("gemma4", "gemma-4-26b-a4b", Quant::Q4KM, 1).unwrap();
    let path = synth::write_sparse(&o, &dir.path().join("g.gguf")).unwrap().remove(0);
    let idx = GenericIndex::new(gguf::open_model(&path).unwrap()).unwrap();
    assert_eq!((idx.arch.as_str(), idx.n_layer(), idx.n_expert, idx.n_expert_used), ("gemma4", Some(30), 128, 8));
    assert_eq!(idx.layers.len(), 30);
    // The trace header's `# layer=L expert_bytes=B dense_bytes=D`.
    let q8_down = [0, 1, 2, 3, 4, 5, 6, 9, 12, 15, 18, 21, 24, 27];
    let full = [5, 11, 17, 23, 29];
    let bumped = [0, 1, 2, 8, 14, 20, 26, 27, 28];
    for l in &idx.layers {
        let want = if q8_down.contains(&l.layer) { 4_336_640 } else { 3_593_216 };
        assert_eq!(l.entry_bytes(), want, "layer {}", l.layer);
        let projections: Vec<Proj> = l.tensors.iter().map(|t| t.proj).collect();
        assert_eq!(projections, [Proj::GateUp, Proj::Down], "layer {}", l.layer);
        let prefix = format!("blk.{}.", l.layer);
        let dense: u64 = idx
            .dense
            .iter()
            .map(|&i| &idx.file.tensors[i])
            .filter(|t| t.name.starts_with(&prefix))
            .map(|t| t.size)
            .sum();
        let want = if full.contains(&l.layer) {
            52_393_476
        } else if bumped.contains(&l.layer) {
            44_191_236
        } else {
            38_987_268
        };
        assert_eq!(dense, want, "layer {} dense", l.layer);
    }
    let (t, a) = (idx.n_params() as f64, idx.active_params(8) as f64);
    assert!((t / 25.2e9 - 1.0).abs() < 0.01, "{t} parameters, published 25.2e9");
    assert!((a / 3.8e9 - 1.0).abs() < 0.02, "{a} active, published 3.8e9");
    assert_eq!(fs::metadata(&path).unwrap().len(), idx.file.file_bytes());
}

/// deepseek2's presets (the generic decoder's: found by tensor name), q4_k_m as llama-quantize
/// mixes it. DeepSeek-V3's model card: 671 B total, 37 B activated (its 685 B on the hub include
/// the 14 B MTP module, which llama.cpp's converter skips). Kimi-K2: 1.04 T total in its
/// technical report (the model card rounds to 1 T; the shapes of its config.json add up to
/// 1.026 T, 1.3 % under: the tolerance here is 1.5 %), 32 B activated on the model card. Both
/// "activated" figures match the count without the input embedding (a row lookup), as
/// gpt-oss's card counts.
#[cfg(feature = "ffi")]
#[test]
fn deepseek2_presets_have_the_published_parameter_counts() {
    use bmoe_engine::generic::index::GenericIndex;
    let dir = tempfile::tempdir().unwrap();
    // q4_K gate and up (7168 × 2048 / 256 × 144 B each), down q4_K or q6_K (× 210 B).
    let (q4, q6) = (7168 * 2048 / 256 * 144, 7168 * 2048 / 256 * 210);
    for (shape, total, tol, active, n_dense, n_expert) in
        [("deepseek-v3", 671e9, 0.01, 37e9, 3, 256), ("kimi-k2", 1.04e12, 0.015, 32e9, 1, 384)]
    {
        let o = Options::new("deepseek2", shape, Quant::Q4KM, 1).unwrap();
        let path = synth::write_sparse(&o, &dir.path().join(format!("{shape}.gguf"))).unwrap().remove(0);
        let idx = GenericIndex::new(gguf::open_model(&path).unwrap()).unwrap();
        assert_eq!((idx.arch.as_str(), idx.n_expert, idx.n_expert_used), ("deepseek2", n_expert, 8));
        // The leading dense layers have no experts: the MoE layers are the rest.
        let layers: Vec<u32> = idx.layers.iter().map(|l| l.layer).collect();
        assert_eq!(layers, (n_dense..61).collect::<Vec<u32>>(), "{shape}");
        let embd = idx.file.tensor("token_embd.weight").unwrap().dims.iter().product::<u64>();
        let (t, a) = (idx.n_params() as f64, (idx.active_params(8) - embd) as f64);
        assert!((t / total - 1.0).abs() < tol, "{shape}: {t} parameters, published {total}");
        assert!((a / active - 1.0).abs() < 0.02, "{shape}: {a} active, published {active}");
        // ffn_down (routed, shared and dense alike) is q6_K on the `use_more_bits` layers.
        for l in &idx.layers {
            let more = synth::use_more_bits(l.layer, 61);
            assert_eq!(l.entry_bytes(), 2 * q4 + if more { q6 } else { q4 }, "{shape} layer {}", l.layer);
        }
        let ty = |name: &str| idx.file.tensor(name).unwrap().ty.name();
        for (name, want) in [
            ("blk.0.ffn_down.weight", "q6_K"),
            ("blk.0.attn_k_b.weight", "q5_0"),
            ("blk.0.attn_v_b.weight", "q4_K"),
            ("blk.0.attn_kv_a_mqa.weight", "q4_K"),
            ("blk.31.ffn_down_shexp.weight", "q4_K"),
            ("blk.30.ffn_down_shexp.weight", "q6_K"),
            ("blk.30.exp_probs_b.bias", "f32"),
            ("blk.30.ffn_gate_inp.weight", "f32"),
            ("output.weight", "q6_K"),
            ("token_embd.weight", "q4_K"),
        ] {
            assert_eq!(ty(name), want, "{shape}: {name}");
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), idx.file.file_bytes());
    }
}

/// The Qwen3.5/3.6 MoE and Qwen3-Next presets (qwen35moe, qwen3next: streamed by the generic
/// decoder; q4_k_m, headers only) hold exactly the text model their config.json describes, and
/// its published counts: the model cards give "35B in total and 3B activated"
/// (Qwen3.6-35B-A3B), "397B in total and 17B activated" (Qwen3.5-397B-A17B), "80B in total and
/// 3B activated" (Qwen3-Next-80B-A3B), in whole billions and for the whole checkpoint (the
/// Qwen3.5 vision encoder, about 0.4 B, goes in a GGUF's separate mmproj file; the MTP blocks
/// the published GGUF files leave out). So: total within 1 %, the active count rounding to the
/// card's billions: with both embeddings for Qwen3.5 (as Qwen3-30B-A3B's 3.3 B counts them:
/// 3.455 B and 17.349 B), without them for Qwen3-Next (3.253 B; 3.875 B with them: its "A3B" is
/// a name, not a count).
#[test]
fn qwen35moe_presets_have_the_published_parameter_counts() {
    use bmoe_engine::generic::index::GenericIndex;
    struct Config {
        arch: &'static str,
        layers: u64,
        d: u64,
        experts: u64,
        k: u64,
        ff: u64,
        heads: u64,
        lin_v_heads: u64,
        vocab: u64,
    }
    let dir = tempfile::tempdir().unwrap();
    let q35 = |layers, d, experts, k, ff, heads, lin_v_heads| Config {
        arch: "qwen35moe",
        layers,
        d,
        experts,
        k,
        ff,
        heads,
        lin_v_heads,
        vocab: 248_320,
    };
    for (shape, c, total, active_b, with_embeddings) in [
        ("qwen3.6-35b-a3b", q35(40, 2048, 256, 8, 512, 16, 32), 35e9, 3.0, true),
        ("qwen3.5-397b-a17b", q35(60, 4096, 512, 10, 1024, 32, 64), 397e9, 17.0, true),
        (
            "qwen3-next-80b-a3b",
            Config {
                arch: "qwen3next",
                experts: 512,
                k: 10,
                layers: 48,
                vocab: 151_936,
                ..q35(0, 2048, 0, 0, 512, 16, 32)
            },
            80e9,
            3.0,
            false,
        ),
    ] {
        // Common to all: 2 KV heads of 256, 16 delta-net Q/K heads of 128 and V heads of 128,
        // conv kernel 4, full attention every fourth layer, a shared expert of `ff`, no tied
        // embeddings (qwen3next's one `ssm_ba` holds what `ssm_alpha` and `ssm_beta` do).
        let (hd, kv_heads, lin_k_heads, lhd) = (256, 2, 16, 128);
        let d = c.d;
        let (key_dim, value_dim) = (lin_k_heads * lhd, c.lin_v_heads * lhd);
        let recurrent = d * (2 * key_dim + value_dim)
            + d * value_dim
            + 4 * (2 * key_dim + value_dim)
            + 2 * c.lin_v_heads
            + 2 * d * c.lin_v_heads
            + lhd
            + value_dim * d;
        let attention = d * 2 * c.heads * hd + 2 * d * kv_heads * hd + c.heads * hd * d + 2 * hd;
        let experts = 3 * d * c.ff * c.experts;
        let moe = 2 * d + d * c.experts + experts + d + 3 * d * c.ff;
        let n_attn = c.layers / 4;
        let embeddings = 2 * d * c.vocab;
        let want = embeddings + d + (c.layers - n_attn) * recurrent + n_attn * attention + c.layers * moe;
        let want_active = want - c.layers * 3 * d * c.ff * (c.experts - c.k);

        let o = Options::new(synth::preset_arch(shape).unwrap(), shape, Quant::Q4KM, 1).unwrap();
        assert_eq!(o.arch, c.arch);
        let path = synth::write_sparse(&o, &dir.path().join(format!("{shape}.gguf"))).unwrap().remove(0);
        let idx = GenericIndex::new(gguf::open_model(&path).unwrap()).unwrap();
        assert_eq!((idx.arch.as_str(), idx.layers.len() as u64, idx.n_expert_used), (c.arch, c.layers, c.k as u32));
        let (t, a) = (idx.n_params(), idx.active_params(idx.n_expert_used));
        assert_eq!((t, a), (want, want_active), "{shape}: the tensors are not the config's");
        assert!((t as f64 / total - 1.0).abs() < 0.01, "{shape}: {t} parameters, published {total}");
        let a = if with_embeddings { a } else { a - embeddings };
        assert_eq!((a as f64 / 1e9).round(), active_b, "{shape}: {a} active, published {active_b} B");
        // An entry: gate and up q4_K (144 bytes per 256 weights), down q6_K (210) on the
        // use_more_bits layers and q4_K on the others.
        let gate = d * c.ff / 256 * 144;
        for l in &idx.layers {
            let down = if synth::use_more_bits(l.layer, c.layers as u32) { 210 } else { 144 };
            assert_eq!(l.entry_bytes(), 2 * gate + d * c.ff / 256 * down, "{shape} layer {}", l.layer);
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), idx.file.file_bytes());
    }
}

/// A real model's figures for a generic architecture's preset.
#[cfg(feature = "ffi")]
struct Card {
    shape: &'static str,
    /// The model card's total and active parameters.
    total: f64,
    /// How close the total must be: 1 %, or more where the card counts what a GGUF leaves out.
    total_tol: f64,
    active: f64,
    /// The card's active count leaves out the token embedding and the LM head.
    active_without_embeddings: bool,
    /// How close the active count must be: 2 %, or the card's rounding where it gives one
    /// significant figure.
    active_tol: f64,
    /// llama.cpp's count of the real file (`model params` at load: every tensor, the NextN/MTP
    /// blocks' included), where known.
    file_params: Option<f64>,
    /// The tensors of a real file, where known.
    n_tensors: Option<usize>,
    /// The distinct bytes of an expert entry in the q4_k_m mix, in layer order of appearance.
    entries: &'static [u64],
}

/// The generic architectures' real-model presets (q4_k_m, headers only), indexed as the generic
/// decoder indexes them: the model card's counts (total within 1 %, active within 2 %), which
/// leave out the NextN/MTP blocks the files carry (a decode never reads them); llama.cpp's count
/// of the real file within 0.1 % (so the MTP blocks are there as in the real files); the entry
/// bytes of the q4_k_m mix.
#[cfg(feature = "ffi")]
#[test]
fn generic_presets_have_the_published_parameter_counts() {
    use bmoe_engine::generic::index::GenericIndex;
    let dir = tempfile::tempdir().unwrap();
    for c in [
        // GLM-4.5 model card: 106 B / 12 B and 355 B / 32 B (GLM-4.6 is GLM-4.5's shape), active
        // without embedding and head. llama.cpp: "model params = 110.469 B" loading a GLM-4.5-Air
        // file (its MTP block with its own embedding and head); a GLM-4.6 file's "repeating
        // layers = 355.234 B parameters" plus the 2 × 151552 × 5120 of embedding and head.
        // Entries: gate and up q4_K, down q5_0 (1408 is not whole 256-blocks) or q8_0 on the
        // use_more_bits layers (q6_K's fallback) for Air; down q4_K or q6_K for 4.6. A GLM-4.5-Air
        // file has 803 tensors (its split.tensors.count).
        Card {
            shape: "glm-4.5-air",
            total: 106e9,
            total_tol: 0.01,
            active: 12e9,
            active_without_embeddings: true,
            active_tol: 0.02,
            file_params: Some(110.469e9),
            n_tensors: Some(803),
            entries: &[2 * 3_244_032 + 6_127_616, 2 * 3_244_032 + 3_964_928],
        },
        Card {
            shape: "glm-4.6",
            total: 355e9,
            total_tol: 0.01,
            active: 32e9,
            active_without_embeddings: true,
            active_tol: 0.02,
            file_params: Some(355.234e9 + 2.0 * 151_552.0 * 5120.0),
            n_tensors: None,
            entries: &[2 * 4_423_680 + 6_451_200, 2 * 4_423_680 + 4_423_680],
        },
        // MiniMax-M2 model card: 230 B total, 10 B active; ours 228.70 B and 9.80 B without
        // embedding and head (11.03 B with them), inside the card's "10" (one figure: 2.5 %).
        // A MiniMax-M2.7 file (the same shape) has 809 tensors. Entries: gate and up q4_K,
        // down q6_K or q4_K (1536 is whole 256-blocks).
        Card {
            shape: "minimax-m2",
            total: 230e9,
            total_tol: 0.01,
            active: 10e9,
            active_without_embeddings: true,
            active_tol: 0.025,
            file_params: None,
            n_tensors: Some(809),
            entries: &[2 * 2_654_208 + 3_870_720, 3 * 2_654_208],
        },
        // Llama 4 model card: Scout 109 B total (its vision encoder included, which a GGUF
        // leaves to the mmproj file: llama.cpp counts 107.77 B in a Scout GGUF), Maverick 400 B;
        // both 17 B active, the embedding and head counted. Entries: gate and up q4_K, down q6_K
        // (the first MoE layer is a use_more_bits one) or q4_K.
        Card {
            shape: "llama-4-scout",
            total: 109e9,
            total_tol: 0.015,
            active: 17e9,
            active_without_embeddings: false,
            active_tol: 0.02,
            file_params: Some(107.77e9),
            n_tensors: None,
            entries: &[2 * 23_592_960 + 34_406_400, 3 * 23_592_960],
        },
        Card {
            shape: "llama-4-maverick",
            total: 400e9,
            total_tol: 0.01,
            active: 17e9,
            active_without_embeddings: false,
            active_tol: 0.02,
            file_params: None,
            n_tensors: None,
            entries: &[2 * 23_592_960 + 34_406_400, 3 * 23_592_960],
        },
        // Ling 2.0 model cards: Ling-mini-2.0 16 B total, 1.4 B active, "non-embedding 789 M"
        // (without embedding and head: ours 789.2 M); Ling-flash-2.0 100 B total (its
        // safetensors hold 102,889,705,216, which ours equal to the parameter), 6.1 B active,
        // 4.8 B non-embedding. Entries: gate and up q4_K, down q6_K (layer 1, the first MoE
        // layer, is a use_more_bits one) or q4_K.
        Card {
            shape: "ling-mini-2.0",
            total: 16e9,
            total_tol: 0.02,
            active: 0.789e9,
            active_without_embeddings: true,
            active_tol: 0.02,
            file_params: None,
            n_tensors: None,
            entries: &[2 * 589_824 + 860_160, 3 * 589_824],
        },
        Card {
            shape: "ling-flash-2.0",
            total: 100e9,
            total_tol: 0.03,
            active: 4.8e9,
            active_without_embeddings: true,
            active_tol: 0.02,
            file_params: Some(102_889_705_216.0),
            n_tensors: None,
            entries: &[2 * 2_359_296 + 3_440_640, 3 * 2_359_296],
        },
        // LFM2-8B-A1B model card: 8.3 B total, 1.5 B active; ours 1.557 B with the tied
        // embedding counted once (1.422 B without it), inside the card's two figures (4 %).
        // Entries: gate and up q4_K, down q6_K on the use_more_bits layers (layer 2, the first
        // MoE layer, is one) or q4_K.
        Card {
            shape: "lfm2-8b-a1b",
            total: 8.3e9,
            total_tol: 0.01,
            active: 1.5e9,
            active_without_embeddings: false,
            active_tol: 0.04,
            file_params: None,
            n_tensors: None,
            entries: &[2 * 2_064_384 + 3_010_560, 3 * 2_064_384],
        },
    ] {
        let shape = c.shape;
        let arch = synth::preset_arch(shape).unwrap();
        let o = Options::new(arch, shape, Quant::Q4KM, 1).unwrap();
        let path = synth::write_sparse(&o, &dir.path().join(format!("{shape}.gguf"))).unwrap().remove(0);
        let idx = GenericIndex::new(gguf::open_model(&path).unwrap()).unwrap();
        assert_eq!(idx.arch, arch);
        let k = idx.n_expert_used;
        let params = |name: &str| idx.file.tensor(name).map_or(0, |t| t.dims.iter().product::<u64>());
        let embeddings =
            if c.active_without_embeddings { params("token_embd.weight") + params("output.weight") } else { 0 };
        let t = (idx.n_params() - idx.nextn_params()) as f64;
        let a = (idx.active_params(k) - embeddings) as f64;
        assert!((t / c.total - 1.0).abs() < c.total_tol, "{shape}: {t} parameters, published {}", c.total);
        assert!((a / c.active - 1.0).abs() < c.active_tol, "{shape}: {a} active, published {}", c.active);
        if let Some(f) = c.file_params {
            let n = idx.n_params() as f64;
            assert!((n / f - 1.0).abs() < 0.001, "{shape}: {n} parameters in the file, llama.cpp counts {f}");
        }
        if let Some(n) = c.n_tensors {
            assert_eq!(idx.file.tensors.len(), n, "{shape}: tensors");
        }
        let mut entries: Vec<u64> = Vec::new();
        for l in &idx.layers {
            if !entries.contains(&l.entry_bytes()) {
                entries.push(l.entry_bytes());
            }
        }
        assert_eq!(entries, c.entries, "{shape}: entry bytes");
        assert_eq!(fs::metadata(&path).unwrap().len(), idx.file.file_bytes());
    }
}

/// A glm4moe file's MTP block (the last `nextn_predict_layers` blocks, which llama.cpp skips)
/// and its leading dense layer are neither streamed nor dense: the tiny preset (4 blocks: one
/// dense, two MoE, the MTP block) streams layers 1 and 2 only, and every tensor of block 3 is
/// counted apart.
#[cfg(feature = "ffi")]
#[test]
fn glm4moe_streams_its_moe_layers_and_not_its_mtp_block() {
    use bmoe_engine::generic::index::GenericIndex;
    let dir = tempfile::tempdir().unwrap();
    let o = Options::new("glm4moe", "tiny", Quant::Q8_0, 1).unwrap();
    let path = synth::write_sparse(&o, &dir.path().join("glm.gguf")).unwrap().remove(0);
    let idx = GenericIndex::new(gguf::open_model(&path).unwrap()).unwrap();
    assert_eq!(idx.layers.iter().map(|l| l.layer).collect::<Vec<_>>(), vec![1, 2]);
    let names = |v: &[usize]| v.iter().map(|&i| idx.file.tensors[i].name.clone()).collect::<Vec<_>>();
    let nextn = names(&idx.nextn);
    assert!(nextn.iter().all(|n| n.starts_with("blk.3.")), "{nextn:?}");
    assert!(
        nextn.iter().any(|n| n == "blk.3.ffn_up_exps.weight")
            && nextn.iter().any(|n| n == "blk.3.nextn.eh_proj.weight")
    );
    let dense = names(&idx.dense);
    assert!(dense.iter().all(|n| !n.starts_with("blk.3.")));
    assert!(
        dense.iter().any(|n| n == "blk.0.ffn_down.weight") && dense.iter().any(|n| n == "blk.1.ffn_down_shexp.weight")
    );
    assert_eq!(idx.dense.len() + idx.nextn.len() + 2 * 3, idx.file.tensors.len());
}

/// llama-quant counts the attn_v tensors apart (`i_attention_wv` of `n_attention_wv`): in
/// LFM2-8B-A1B only 6 of 24 layers attend, so q4_k_m's use_more_bits picks the 3rd and 6th of
/// them (layers 10 and 21), not the layers use_more_bits of 24 would (2, 14, 21).
#[test]
fn q4_k_m_picks_attn_v_by_its_place_among_the_attention_layers() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options::new("lfm2moe", "lfm2-8b-a1b", Quant::Q4KM, 1).unwrap();
    let path = synth::write_sparse(&o, &dir.path().join("lfm2.gguf")).unwrap().remove(0);
    let file = gguf::open_model(&path).unwrap();
    let ty = |l: u32| file.tensor(&format!("blk.{l}.attn_v.weight")).unwrap().ty.name();
    let q6: Vec<u32> = [2, 6, 10, 14, 18, 21].into_iter().filter(|&l| ty(l) == "q6_K").collect();
    assert_eq!(q6, vec![10, 21]);
    // The tied embedding is the output: q6_K, and there is no output.weight.
    assert_eq!(file.tensor("token_embd.weight").unwrap().ty.name(), "q6_K");
    assert!(file.tensor("output.weight").is_none());
}
