//! Session files: a conversation's context on disk ([`crate::engine::Engine::save_session`],
//! [`crate::engine::Engine::read_session`]). A session file is untrusted input, as a GGUF is:
//! [`read`] reads the whole file and checks every field against the model and the engine that
//! is to take it (the model by content, the engine, the lengths the header promises, every token
//! and cached expert, the state's size and values) before the engine changes anything, so that a
//! load that fails leaves the conversation, its KV cache and its expert cache as they were.
//!
//! The model is named by its content, [`ModelId`]: a SHA-256 over the GGUF header and tensor
//! table of every shard and a fixed sample of the tensor data, not by its file name and size (a
//! model synthesized with another seed has the same shape, size and name). The trade-off: the
//! sample reads 1 MiB per shard at each save and load, instead of hashing the whole file (tens
//! of GB, minutes past RAM); two models that differ only between the sampled windows would be
//! taken for one (fine-tunes and re-quantizations of one base differ nearly everywhere).
//!
//! The format, `bmoe-session-2`: one JSON header line (`format`, `model` {`file`, `bytes`,
//! `content`}, `engine`, `decoder` (`native` or `generic`, for `--engine bmoe`; absent in files
//! of older builds, which are then not checked for it), `n_ctx`, `tokens`, `experts` [[layer,
//! expert], …], `state_bytes`, `extra`), then `state_bytes` bytes of the engine's state (our decoder's F16 KV cache rows, or
//! llama.cpp's state), and nothing after them.

use std::io::{BufRead as _, Read as _};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result};
use crate::gguf::GgufModel;

/// The format [`write()`] writes and [`read`] reads.
pub const FORMAT: &str = "bmoe-session-2";

/// The longest header line read (its tokens and cached experts as JSON): beyond it the file is
/// not a session this engine could have written for any context it can hold.
const MAX_HEADER: u64 = 256 << 20;

/// Windows of tensor data [`ModelId`] hashes per shard, and their size.
const SAMPLES: u64 = 256;
const SAMPLE_BYTES: u64 = 4096;

/// What a session names its model by: the first file's name and the bytes of every shard (for
/// messages), and the content hash (what is compared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelId {
    pub file: String,
    pub bytes: u64,
    /// SHA-256 (hex) of each shard's length, header and tensor table (the bytes before the
    /// tensor data) and `SAMPLES` windows of `SAMPLE_BYTES` spread evenly over its data.
    pub content: String,
}

impl ModelId {
    /// The identity of `model`'s files as they are now.
    ///
    /// # Errors
    /// [`Error::File`] if a shard cannot be read.
    pub fn of(model: &GgufModel) -> Result<Self> {
        use std::io::{Seek as _, SeekFrom};
        let mut h = Sha256::new();
        h.update(FORMAT.as_bytes());
        h.update((model.shards.len() as u64).to_le_bytes());
        let mut buf = vec![0u8; SAMPLE_BYTES as usize];
        for s in &model.shards {
            let file_err = |err| Error::File { path: s.path.clone(), err };
            let mut f = std::fs::File::open(&s.path).map_err(file_err)?;
            let (data, len) = (s.header.data_offset.min(s.header.file_len), s.header.file_len);
            h.update(len.to_le_bytes());
            std::io::copy(&mut (&f).take(data), &mut HashWriter(&mut h)).map_err(file_err)?;
            let span = len - data;
            if span == 0 {
                continue;
            }
            let n = SAMPLES.min(span.div_ceil(SAMPLE_BYTES));
            for i in 0..n {
                // Evenly from the first window to the last, which ends at the file's end.
                let at = data + (span.saturating_sub(SAMPLE_BYTES)) * i / (n - 1).max(1);
                let w = SAMPLE_BYTES.min(len - at) as usize;
                // Seek and read rather than a positional read: this module builds on every target.
                f.seek(SeekFrom::Start(at)).and_then(|_| f.read_exact(&mut buf[..w])).map_err(file_err)?;
                h.update(&buf[..w]);
            }
        }
        let content = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let first = &model.shards[0].path;
        let file = first.file_name().map_or(first.display().to_string(), |f| f.to_string_lossy().into_owned());
        Ok(Self { file, bytes: model.file_bytes(), content })
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "file": self.file, "bytes": self.bytes, "content": self.content })
    }

    fn from_json(v: &serde_json::Value) -> Option<Self> {
        Some(Self {
            file: v["file"].as_str()?.to_string(),
            bytes: v["bytes"].as_u64()?,
            content: v["content"].as_str().filter(|c| c.len() == 64)?.to_string(),
        })
    }

    /// `t.gguf (7858880 bytes, content 1a2b3c4d5e6f7081)`.
    fn describe(&self) -> String {
        format!("{} ({} bytes, content {})", self.file, self.bytes, &self.content[..16.min(self.content.len())])
    }
}

struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.update(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a session must fit: the engine that is to take it.
#[derive(Clone, Debug)]
pub struct Expect<'a> {
    pub model: &'a ModelId,
    /// `--engine`'s name (`bmoe`, `llama`, …): the state's format.
    pub engine: &'a str,
    /// Which decoder runs `--engine bmoe` (`native`, `generic`): their states differ (our KV
    /// cache rows, llama.cpp's state) though the engine's name is the same. None for llama.cpp.
    pub decoder: Option<&'a str>,
    /// The context this engine holds (tokens).
    pub n_ctx: u32,
    pub n_vocab: u32,
    /// Experts of each MoE layer, in order (the cached-expert list's range); None where the
    /// engine does not know them (then the list must be empty).
    pub experts: Option<Vec<u32>>,
    /// Bytes of state per token of context, where the state is exactly that many per token
    /// (our decoder's KV cache); None for a state whose size the engine checks itself as it
    /// restores it (llama.cpp's).
    pub state_bytes_per_token: Option<u64>,
    /// The state is F16 values (our decoder's KV cache), each checked to be finite.
    pub state_f16: bool,
}

/// A session file read and checked against an [`Expect`]: everything an engine restores.
#[derive(Clone, Debug)]
pub struct Saved {
    pub path: PathBuf,
    /// The tokens the context held, in order.
    pub tokens: Vec<i32>,
    /// The (layer, expert) entries the expert cache held.
    pub experts: Vec<[u32; 2]>,
    /// The engine's state of those tokens.
    pub state: Vec<u8>,
    /// The front end's own state (a chat's messages).
    pub extra: serde_json::Value,
}

/// What [`write()`] writes besides the state.
#[derive(Clone, Debug)]
pub struct Header<'a> {
    pub model: &'a ModelId,
    pub engine: &'a str,
    /// As [`Expect::decoder`].
    pub decoder: Option<&'a str>,
    pub n_ctx: u32,
    pub tokens: &'a [i32],
    pub experts: &'a [[u32; 2]],
    pub extra: serde_json::Value,
}

/// Write a session: the header line, then `state`; under a temporary name in the same
/// directory, synced, then renamed, so that a failed write never replaces an earlier file.
///
/// # Errors
/// [`Error::File`] naming the path.
pub fn write(path: &Path, header: &Header<'_>, state: &[u8]) -> Result<()> {
    let mut h = serde_json::json!({
        "format": FORMAT,
        "model": header.model.to_json(),
        "engine": header.engine,
        "n_ctx": header.n_ctx,
        "tokens": header.tokens,
        "experts": header.experts,
        "state_bytes": state.len(),
        "extra": header.extra,
    });
    if let Some(d) = header.decoder {
        h["decoder"] = d.into();
    }
    let name = path.file_name().map_or_else(|| "session".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        use std::io::Write as _;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        writeln!(f, "{h}")?;
        f.write_all(state)?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|err| {
        let _ = std::fs::remove_file(&tmp);
        Error::File { path: path.to_path_buf(), err }
    })
}

/// Read the session at `path` whole and check it against `want`. Nothing is changed anywhere:
/// the caller restores what comes back.
///
/// # Errors
/// [`Error::File`] for a file that cannot be read; [`Error::Invalid`] naming the file and what
/// is wrong with it: not a session (empty, random bytes, no header), another format, engine or
/// model (naming both models), truncated or longer than its header promises (the byte counts),
/// tokens beyond this context or outside the vocabulary, cached experts out of range or
/// repeated, a state of the wrong size for its tokens or holding NaN or infinite values.
pub fn read(path: &Path, want: &Expect<'_>) -> Result<Saved> {
    let shown = path.display();
    let bad = |why: String| Error::Invalid(format!("{shown}: {why}"));
    let file_err = |err| Error::File { path: path.to_path_buf(), err };
    // Look before opening: a FIFO would block the open.
    let meta = std::fs::metadata(path).map_err(file_err)?;
    if !meta.is_file() {
        return Err(bad(format!("{}, not a session file", crate::gguf::file_kind(&meta))));
    }
    let mut r = std::io::BufReader::new(std::fs::File::open(path).map_err(file_err)?);
    let len = r.get_ref().metadata().map_err(file_err)?.len();
    if len == 0 {
        return Err(bad("an empty file (0 bytes), not a session file".into()));
    }
    let mut line = Vec::new();
    r.by_ref().take(MAX_HEADER).read_until(b'\n', &mut line).map_err(file_err)?;
    if !line.starts_with(b"{\"") {
        let head: Vec<String> = line.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return Err(bad(format!(
            "not a session file (a session begins with its JSON header line; this file begins with the bytes {})",
            head.join(" ")
        )));
    }
    if line.last() != Some(&b'\n') {
        return Err(bad(match line.len() as u64 {
            n if n == len => format!(
                "the file ends at byte {len}, inside its header line (the line has no end): the file is truncated"
            ),
            _ => format!("a header line longer than {} MiB: not a session file", MAX_HEADER >> 20),
        }));
    }
    let h: serde_json::Value = serde_json::from_slice(&line)
        .map_err(|e| bad(format!("not a session file: its header line is not JSON ({e})")))?;
    match h["format"].as_str() {
        Some(FORMAT) => {}
        Some(f @ "bmoe-session-1") => {
            return Err(bad(format!(
                "format {f}, written by an older bmoe that named the model by its file name and size only; this \
                 bmoe reads {FORMAT} (names the model by its content): save the conversation again"
            )))
        }
        Some(f) => return Err(bad(format!("format {f:?}, this bmoe reads {FORMAT}"))),
        None => return Err(bad("not a session file: its header has no format".into())),
    }
    let field = |name: &str| bad(format!("the header's {name} is missing or malformed"));
    let model = ModelId::from_json(&h["model"]).ok_or_else(|| field("model"))?;
    if model.content != want.model.content {
        return Err(bad(format!(
            "a session of another model: saved with {}, this engine runs {}",
            model.describe(),
            want.model.describe()
        )));
    }
    let engine = h["engine"].as_str().ok_or_else(|| field("engine"))?;
    if engine != want.engine {
        return Err(bad(format!(
            "saved by --engine {engine}, whose state this engine (--engine {}) cannot restore",
            want.engine
        )));
    }
    // Both decoders are `--engine bmoe`, and their states differ: refuse by name before the
    // state's size (or llama.cpp) refuses it for a reason that misleads.
    let decoder = match h.get("decoder") {
        None => None,
        Some(d) => Some(d.as_str().ok_or_else(|| field("decoder"))?),
    };
    if let (Some(saved), Some(this)) = (decoder, want.decoder) {
        if saved != this {
            return Err(bad(format!(
                "saved by the {saved} decoder; this run uses the {this} one (pass --decoder {saved})"
            )));
        }
    }
    let state_bytes = h["state_bytes"].as_u64().ok_or_else(|| field("state_bytes"))?;
    let header_bytes = line.len() as u64;
    let promised = header_bytes.checked_add(state_bytes).ok_or_else(|| field("state_bytes"))?;
    if len < promised {
        return Err(bad(format!(
            "the file ends at byte {len}, the header promises {promised} ({header_bytes} bytes of header and \
             {state_bytes} of state): the file is truncated"
        )));
    }
    if len > promised {
        return Err(bad(format!(
            "the file is {len} bytes, the header promises {promised} ({header_bytes} bytes of header and \
             {state_bytes} of state): {} bytes follow the state",
            len - promised
        )));
    }
    let tokens: Vec<i32> = serde_json::from_value(h["tokens"].clone()).map_err(|_| field("tokens"))?;
    let n = tokens.len();
    if n > want.n_ctx as usize {
        return Err(bad(format!(
            "{n} tokens of context, but this engine's context holds {} (-c): load it with -c {n} or more",
            want.n_ctx
        )));
    }
    if let Some((i, t)) = tokens.iter().enumerate().find(|(_, &t)| t < 0 || t as u32 >= want.n_vocab) {
        return Err(bad(format!("token {t} at position {i} is outside the vocabulary of {}", want.n_vocab)));
    }
    let experts: Vec<[u32; 2]> = serde_json::from_value(h["experts"].clone()).map_err(|_| field("experts"))?;
    check_experts(&experts, want.experts.as_deref()).map_err(bad)?;
    if let Some(per) = want.state_bytes_per_token {
        let need = per.saturating_mul(n as u64);
        if state_bytes != need {
            return Err(bad(format!(
                "{state_bytes} bytes of state for {n} tokens, but this model's KV cache takes {per} bytes a token \
                 ({need} for {n}): not this model's state"
            )));
        }
    }
    // The length was checked against the file's: this allocates what the file holds.
    let mut state = Vec::with_capacity(state_bytes as usize);
    r.take(state_bytes).read_to_end(&mut state).map_err(file_err)?;
    if state.len() as u64 != state_bytes {
        return Err(bad(format!(
            "the file ends at byte {}, the header promises {promised}: it shrank while it was read",
            header_bytes + state.len() as u64
        )));
    }
    if want.state_f16 {
        if let Some(at) = first_non_finite_f16(&state) {
            let per = want.state_bytes_per_token.filter(|&p| p > 0);
            return Err(bad(format!(
                "the saved KV cache holds a NaN or infinite value at byte {} of the file{}: the state is corrupt, \
                 and a reply decoded from it would be garbage",
                header_bytes + at as u64,
                per.map_or(String::new(), |p| format!(" (in the rows of token {})", at as u64 / p)),
            )));
        }
    }
    Ok(Saved { path: path.to_path_buf(), tokens, experts, state, extra: h["extra"].clone() })
}

/// The cached-expert list against the model's layers: each (layer, expert) in range, none
/// twice (and so no more than the model has).
fn check_experts(experts: &[[u32; 2]], layers: Option<&[u32]>) -> std::result::Result<(), String> {
    let Some(layers) = layers else {
        return match experts.first() {
            None => Ok(()),
            Some(_) => Err(format!(
                "the session names {} cached experts, but this engine keeps no expert cache of this model",
                experts.len()
            )),
        };
    };
    let total: u64 = layers.iter().map(|&n| u64::from(n)).sum();
    if experts.len() as u64 > total {
        return Err(format!("the session names {} cached experts; the model has {total}", experts.len()));
    }
    let mut seen = std::collections::HashSet::with_capacity(experts.len());
    for &[layer, expert] in experts {
        match layers.get(layer as usize) {
            None => {
                return Err(format!(
                    "cached expert ({layer}, {expert}): layer {layer} is out of range (the model has {} MoE layers)",
                    layers.len()
                ))
            }
            Some(&n) if expert >= n => {
                return Err(format!(
                    "cached expert ({layer}, {expert}): expert {expert} is out of range (layer {layer} has {n})"
                ))
            }
            Some(_) => {}
        }
        if !seen.insert((layer, expert)) {
            return Err(format!("cached expert ({layer}, {expert}) is named twice"));
        }
    }
    Ok(())
}

/// The byte offset of the first F16 value (little-endian) that is a NaN or an infinity.
fn first_non_finite_f16(bytes: &[u8]) -> Option<usize> {
    // An F16 is not finite when its five exponent bits are all set. Checked a block at a time
    // (the inner fold vectorizes), then located within the block.
    const BLOCK: usize = 4096;
    let bad = |c: &[u8]| (u16::from_le_bytes([c[0], c[1]]) & 0x7c00) == 0x7c00;
    bytes.chunks(BLOCK).enumerate().find_map(|(b, block)| {
        let any = block.chunks_exact(2).fold(false, |acc, c| acc | bad(c));
        any.then(|| b * BLOCK + 2 * block.chunks_exact(2).position(bad).expect("found above"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(dir: &Path, name: &str, seed: u64, split: u32) -> GgufModel {
        let mut o = crate::synth::Options::new("qwen3moe", "tiny", crate::synth::Quant::Q8_0, seed).unwrap();
        o.split = split;
        let paths = crate::synth::write(&o, &dir.join(name), &mut |_, _| {}).unwrap();
        crate::gguf::open_model(&paths[0]).unwrap()
    }

    #[test]
    fn a_model_is_named_by_its_content_not_its_name_or_size() {
        let dir = tempfile::tempdir().unwrap();
        let a = ModelId::of(&model(dir.path(), "a.gguf", 3, 1)).unwrap();
        assert_eq!(a.file, "a.gguf");
        assert_eq!(a.content.len(), 64);
        // The same bytes under another name: the same model.
        std::fs::copy(dir.path().join("a.gguf"), dir.path().join("copy.gguf")).unwrap();
        let copy = ModelId::of(&crate::gguf::open_model(&dir.path().join("copy.gguf")).unwrap()).unwrap();
        assert_eq!(copy.content, a.content);
        // Another seed: another model, whatever its size.
        let b = ModelId::of(&model(dir.path(), "b.gguf", 4, 1)).unwrap();
        assert_ne!(b.content, a.content);
        // A change in the data that a window samples: the last bytes of the file always are.
        let mut bytes = std::fs::read(dir.path().join("a.gguf")).unwrap();
        let n = bytes.len();
        bytes[n - 1] ^= 1;
        std::fs::write(dir.path().join("copy.gguf"), &bytes).unwrap();
        let changed = ModelId::of(&crate::gguf::open_model(&dir.path().join("copy.gguf")).unwrap()).unwrap();
        assert_ne!(changed.content, a.content);
        // Every shard of a split model counts.
        let split = ModelId::of(&model(dir.path(), "s.gguf", 3, 2)).unwrap();
        assert_eq!(
            split.bytes,
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| {
                    let e = e.unwrap();
                    e.file_name().to_string_lossy().starts_with("s-").then(|| e.metadata().unwrap().len())
                })
                .sum::<u64>()
        );
    }

    #[test]
    fn a_session_is_read_whole_and_every_field_checked() {
        let dir = tempfile::tempdir().unwrap();
        let id = ModelId::of(&model(dir.path(), "a.gguf", 3, 1)).unwrap();
        let want = Expect {
            model: &id,
            engine: "bmoe",
            decoder: Some("native"),
            n_ctx: 16,
            n_vocab: 100,
            experts: Some(vec![4, 4]),
            state_bytes_per_token: Some(8),
            state_f16: true,
        };
        let p = dir.path().join("s.session");
        let header = |tokens: &'static [i32]| Header {
            model: &id,
            engine: "bmoe",
            decoder: Some("native"),
            n_ctx: 16,
            tokens,
            experts: &[[1, 3]],
            extra: serde_json::json!({"x": 1}),
        };
        write(&p, &header(&[1, 2, 3]), &[0u8; 24]).unwrap();
        let s = read(&p, &want).unwrap();
        assert_eq!(
            (s.tokens, s.experts, s.state.len(), s.extra),
            (vec![1, 2, 3], vec![[1, 3]], 24, serde_json::json!({"x": 1}))
        );
        let refused = |why: &str| {
            let e = read(&p, &want).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("s.session"), "{e}");
        };
        write(&p, &header(&[1, 2, 3]), &[0u8; 16]).unwrap();
        refused("16 bytes of state for 3 tokens, but this model's KV cache takes 8 bytes a token (24 for 3)");
        write(&p, &header(&[1, 2, 300]), &[0u8; 24]).unwrap();
        refused("token 300 at position 2 is outside the vocabulary of 100");
        write(&p, &header(&[1; 17]), &[0u8; 136]).unwrap();
        refused("17 tokens of context, but this engine's context holds 16 (-c)");
        let mut nan = [0u8; 24];
        nan[20..22].copy_from_slice(&0x7e00u16.to_le_bytes());
        write(&p, &header(&[1, 2, 3]), &nan).unwrap();
        refused("holds a NaN or infinite value at byte");
        refused("(in the rows of token 2)");
        let other = ModelId { content: "0".repeat(64), ..id.clone() };
        write(&p, &Header { model: &other, ..header(&[1, 2, 3]) }, &[0u8; 24]).unwrap();
        refused("a session of another model: saved with a.gguf");
        write(&p, &Header { engine: "llama", ..header(&[1, 2, 3]) }, &[0u8; 24]).unwrap();
        refused("saved by --engine llama");
        // Issue 44, defect 8: the decoder is recorded and named both ways; a file without it
        // (older builds) is read as before.
        write(&p, &Header { decoder: Some("generic"), ..header(&[1, 2, 3]) }, &[0u8; 24]).unwrap();
        refused("saved by the generic decoder; this run uses the native one (pass --decoder generic)");
        write(&p, &header(&[1, 2, 3]), &[0u8; 24]).unwrap();
        let e = read(&p, &Expect { decoder: Some("generic"), ..want.clone() }).unwrap_err().to_string();
        assert!(
            e.contains("saved by the native decoder; this run uses the generic one (pass --decoder native)"),
            "{e}"
        );
        write(&p, &Header { decoder: None, ..header(&[1, 2, 3]) }, &[0u8; 24]).unwrap();
        assert!(!std::fs::read_to_string(&p).unwrap_or_default().contains("decoder"));
        assert!(read(&p, &want).is_ok());
        // A FIFO is refused, not waited on.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path in our temporary directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo, &want).unwrap_err().to_string().contains("a FIFO, not a session file"));
    }

    #[test]
    fn non_finite_f16_values_are_found_where_they_are() {
        let mut v = vec![0u8; 10_000];
        // 1.0, -2.0, the largest finite (0x7bff) and a subnormal are finite.
        for (i, x) in [0x3c00u16, 0xc000, 0x7bff, 0x0001].iter().enumerate() {
            v[2 * i..2 * i + 2].copy_from_slice(&x.to_le_bytes());
        }
        assert_eq!(first_non_finite_f16(&v), None);
        for x in [0x7c00u16, 0xfc00, 0x7e00, 0xffff] {
            let mut w = v.clone();
            w[8194..8196].copy_from_slice(&x.to_le_bytes());
            assert_eq!(first_non_finite_f16(&w), Some(8194), "{x:#x}");
        }
    }

    #[test]
    fn cached_experts_are_checked_against_the_layers() {
        let layers = [4u32, 4];
        assert_eq!(check_experts(&[[0, 3], [1, 0]], Some(&layers)), Ok(()));
        assert!(check_experts(&[[2, 0]], Some(&layers)).unwrap_err().contains("layer 2 is out of range"));
        assert!(check_experts(&[[1, 4]], Some(&layers)).unwrap_err().contains("expert 4 is out of range"));
        assert!(check_experts(&[[1, 1], [1, 1]], Some(&layers)).unwrap_err().contains("named twice"));
        assert!(check_experts(&[[0, 0]; 9], Some(&layers)).unwrap_err().contains("names 9 cached experts"));
        assert_eq!(check_experts(&[], None), Ok(()));
        assert!(check_experts(&[[0, 0]], None).is_err());
    }
}
