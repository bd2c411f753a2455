//! llama.cpp, for the three things the design gives it: the tokenizer and chat template (the
//! model loaded vocab-only), the sampler chain, and the baseline engine `--engine llama` (plain
//! llama.cpp on mmap) that is also the oracle of the decoder's tests.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Arc, Once};

use bmoe_ggml_sys as sys;

/// Errors of the llama.cpp layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("llama.cpp could not load {}", path.display())]
    Load { path: PathBuf },
    #[error("llama.cpp could not create a context (n_ctx {n_ctx})")]
    Context { n_ctx: u32 },
    #[error("llama.cpp: {0}")]
    Call(String),
    #[error("path is not valid UTF-8 or contains NUL: {}", .0.display())]
    Path(PathBuf),
    #[error("text contains a NUL byte")]
    Nul,
}

/// Result alias of the llama.cpp layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

static LOG_ONLY_ERRORS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// llama.cpp's and ggml's log, errors only unless [`set_verbose`] asked for everything.
unsafe extern "C" fn log_cb(level: sys::ggml_log_level, text: *const std::os::raw::c_char, _: *mut std::ffi::c_void) {
    let quiet = LOG_ONLY_ERRORS.load(std::sync::atomic::Ordering::Relaxed);
    if text.is_null() || (quiet && level != sys::GGML_LOG_LEVEL_ERROR) {
        return;
    }
    // SAFETY: llama.cpp passes a NUL-terminated message valid for the call.
    eprint!("{}", unsafe { CStr::from_ptr(text) }.to_string_lossy());
}

/// Show llama.cpp's whole log (loading details) instead of errors only.
pub fn set_verbose(verbose: bool) {
    LOG_ONLY_ERRORS.store(!verbose, std::sync::atomic::Ordering::Relaxed);
}

fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // SAFETY: installs a callback that only reads the message it is given; no user data.
        unsafe { sys::llama_log_set(Some(log_cb), std::ptr::null_mut()) };
        // SAFETY: backend init has no preconditions and is idempotent.
        unsafe { sys::llama_backend_init() };
    });
}

/// A model loaded by llama.cpp.
#[derive(Debug)]
pub struct Model {
    ptr: NonNull<sys::llama_model>,
}

// SAFETY: a llama_model is immutable after load and llama.cpp shares it between contexts
// on different threads.
unsafe impl Send for Model {}
// SAFETY: as above.
unsafe impl Sync for Model {}

impl Model {
    /// Load the vocabulary and metadata only (tokenizer, chat template).
    ///
    /// # Errors
    /// [`Error::Load`].
    pub fn vocab_only(path: &Path) -> Result<Self> {
        Self::load(path, true, true)
    }

    /// Load the whole model on mmap, as a user of plain llama.cpp would.
    ///
    /// # Errors
    /// [`Error::Load`].
    pub fn mmap(path: &Path) -> Result<Self> {
        Self::load(path, false, true)
    }

    /// Load the whole model on mmap with ggml's plain CPU kernels only: no "extra" buffer
    /// types, i.e. no weights repacked into interleaved layouts with their own matmul
    /// kernels. This runs the same kernels as our decoder, so on quantized models the two
    /// agree bit for bit; it is what the decoder's oracle tests load.
    ///
    /// # Errors
    /// [`Error::Load`].
    pub fn mmap_plain_kernels(path: &Path) -> Result<Self> {
        Self::load(path, false, false)
    }

    /// [`Self::mmap_plain_kernels`] with every routed-expert tensor lazy (the vendored
    /// llama.cpp's `LLAMA_LAZY_MODE_EXPERTS`, bmoe's patch): the load reads only the dense
    /// tensors, the expert tensors stay on the mapping unread (no populate, no read-ahead advice)
    /// for the generic decoder to supply. Tells `progress` llama.cpp's load progress (0 to 1),
    /// with the file's integer metadata `overrides` (`(key, value)`, e.g.
    /// `qwen3moe.expert_used_count`) in place of its own.
    ///
    /// # Errors
    /// [`Error::Load`]; [`Error::Call`] for a key longer than llama.cpp takes (127 bytes).
    pub fn mmap_lazy_experts(path: &Path, overrides: &[(String, i64)], progress: &mut dyn FnMut(f32)) -> Result<Self> {
        Self::load_with(path, false, false, overrides, Some(progress), sys::LLAMA_LAZY_MODE_EXPERTS)
    }

    /// [`Self::mmap`] (with `extra_bufts`) or [`Self::mmap_plain_kernels`] (without), with the
    /// file's integer metadata `overrides` in place of its own.
    ///
    /// # Errors
    /// As [`Self::mmap_lazy_experts`].
    pub fn mmap_overriding(path: &Path, extra_bufts: bool, overrides: &[(String, i64)]) -> Result<Self> {
        Self::load_with(path, false, extra_bufts, overrides, None, sys::LLAMA_LAZY_MODE_AUTO)
    }

    fn load(path: &Path, vocab_only: bool, extra_bufts: bool) -> Result<Self> {
        Self::load_with(path, vocab_only, extra_bufts, &[], None, sys::LLAMA_LAZY_MODE_AUTO)
    }

    fn load_with(
        path: &Path,
        vocab_only: bool,
        extra_bufts: bool,
        overrides: &[(String, i64)],
        mut progress: Option<&mut dyn FnMut(f32)>,
        lazy_mode: sys::llama_lazy_mode,
    ) -> Result<Self> {
        init();
        let c = path.to_str().and_then(|s| CString::new(s).ok()).ok_or_else(|| Error::Path(path.into()))?;
        // SAFETY: returns a plain struct by value.
        let mut params = unsafe { sys::llama_model_default_params() };
        params.vocab_only = vocab_only;
        params.load_mode = sys::LLAMA_LOAD_MODE_MMAP;
        params.use_extra_bufts = extra_bufts;
        params.lazy_mode = lazy_mode;
        /// llama.cpp's progress callback: the user data is the `&mut dyn FnMut(f32)` below.
        unsafe extern "C" fn on_progress(p: f32, ud: *mut std::ffi::c_void) -> bool {
            // SAFETY: ud is the `&mut &mut dyn FnMut(f32)` passed below, alive for the load call.
            let f = unsafe { &mut *ud.cast::<&mut dyn FnMut(f32)>() };
            f(p);
            true
        }
        if let Some(f) = progress.as_mut() {
            params.progress_callback = Some(on_progress);
            params.progress_callback_user_data = (f as *mut &mut dyn FnMut(f32)).cast();
        }
        // A list ended by an empty key, alive for the load call (llama.cpp copies it).
        let mut kv: Vec<sys::llama_model_kv_override> = Vec::with_capacity(overrides.len() + 1);
        for (key, v) in overrides {
            // SAFETY: a plain C struct of integers and arrays: all zeros is a valid value.
            let mut o: sys::llama_model_kv_override = unsafe { std::mem::zeroed() };
            if key.len() >= o.key.len() {
                return Err(Error::Call(format!("metadata key `{key}` is longer than llama.cpp takes")));
            }
            o.tag = sys::LLAMA_KV_OVERRIDE_TYPE_INT;
            for (d, &b) in o.key.iter_mut().zip(key.as_bytes()) {
                *d = b as std::ffi::c_char;
            }
            o.__bindgen_anon_1.val_i64 = *v;
            kv.push(o);
        }
        if !kv.is_empty() {
            // SAFETY: as above; the empty key ends the list.
            kv.push(unsafe { std::mem::zeroed() });
            params.kv_overrides = kv.as_ptr();
        }
        // SAFETY: c is a valid NUL-terminated path; params came from llama.cpp's defaults; the
        // progress closure outlives the call (llama.cpp calls it only during the load).
        let ptr = unsafe { sys::llama_model_load_from_file(c.as_ptr(), params) };
        Ok(Self { ptr: NonNull::new(ptr).ok_or_else(|| Error::Load { path: path.into() })? })
    }

    fn vocab(&self) -> *const sys::llama_vocab {
        // SAFETY: a live model; the vocab lives as long as the model.
        unsafe { sys::llama_model_get_vocab(self.ptr.as_ptr()) }
    }

    /// Number of tokens in the vocabulary.
    pub fn n_vocab(&self) -> usize {
        // SAFETY: a live vocab.
        unsafe { sys::llama_vocab_n_tokens(self.vocab()) as usize }
    }

    /// Tokenize `text`, adding BOS and the like if the model wants them (`add_special`), and
    /// parsing special tokens written in the text (chat templates write them).
    ///
    /// # Errors
    /// [`Error::Call`] if llama.cpp refuses.
    pub fn tokenize(&self, text: &str, add_special: bool) -> Result<Vec<i32>> {
        let len = i32::try_from(text.len()).map_err(|_| Error::Call("text too long".into()))?;
        let mut toks = vec![0i32; text.len() + 8];
        for _ in 0..2 {
            // SAFETY: the text pointer/length describe `text`; toks has toks.len() slots.
            let n = unsafe {
                sys::llama_tokenize(
                    self.vocab(),
                    text.as_ptr().cast(),
                    len,
                    toks.as_mut_ptr(),
                    toks.len() as i32,
                    add_special,
                    true,
                )
            };
            if n >= 0 {
                toks.truncate(n as usize);
                return Ok(toks);
            }
            toks.resize((-n) as usize, 0);
        }
        Err(Error::Call("tokenize failed".into()))
    }

    /// The bytes of `token` (pieces of multi-byte characters may be partial).
    pub fn piece(&self, token: i32) -> Vec<u8> {
        self.piece_of(token, false)
    }

    /// `token` as text, special tokens written out (`<|start|>`), for showing a prompt.
    pub fn token_text(&self, token: i32) -> String {
        String::from_utf8_lossy(&self.piece_of(token, true)).into_owned()
    }

    fn piece_of(&self, token: i32, special: bool) -> Vec<u8> {
        let mut buf = vec![0u8; 64];
        for _ in 0..2 {
            // SAFETY: buf has buf.len() writable bytes; the vocab is live.
            let n = unsafe {
                sys::llama_token_to_piece(self.vocab(), token, buf.as_mut_ptr().cast(), buf.len() as i32, 0, special)
            };
            if n >= 0 {
                buf.truncate(n as usize);
                return buf;
            }
            buf.resize((-n) as usize, 0);
        }
        Vec::new()
    }

    /// Whether `token` ends a generation (EOS, EOT, …).
    pub fn is_eog(&self, token: i32) -> bool {
        // SAFETY: a live vocab.
        unsafe { sys::llama_vocab_is_eog(self.vocab(), token) }
    }

    /// `user` wrapped in the model's chat template as one user turn, with the assistant's
    /// turn opened.
    ///
    /// # Errors
    /// [`Error::Call`] if the model has no chat template or llama.cpp cannot apply it.
    pub fn chat(&self, user: &str) -> Result<String> {
        self.apply_chat(None, &[("user", user)], true)
    }

    /// The model's own chat template (`tokenizer.chat_template`), if it has one.
    pub fn chat_template(&self) -> Option<String> {
        // SAFETY: a live model; a null name asks for the default template.
        let tmpl = unsafe { sys::llama_model_chat_template(self.ptr.as_ptr(), std::ptr::null()) };
        // SAFETY: a NUL-terminated string owned by the model, copied here.
        (!tmpl.is_null()).then(|| unsafe { CStr::from_ptr(tmpl) }.to_string_lossy().into_owned())
    }

    /// `messages` (role, content) rendered with llama.cpp's template engine: the template
    /// `tmpl` (a built-in name such as `chatml`, or a template's text, which llama.cpp
    /// recognises by its markers), else the model's own; with `add_assistant`, the assistant's
    /// turn opened at the end.
    ///
    /// # Errors
    /// [`Error::Call`] if there is no template or llama.cpp does not know it.
    pub fn apply_chat(&self, tmpl: Option<&str>, messages: &[(&str, &str)], add_assistant: bool) -> Result<String> {
        let tmpl = match tmpl {
            Some(t) => t.to_string(),
            None => self
                .chat_template()
                .ok_or_else(|| Error::Call("the model has no chat template (tokenizer.chat_template)".into()))?,
        };
        apply_template(&tmpl, messages, add_assistant)
    }
}

/// The names of llama.cpp's built-in chat templates (`--chat-template NAME`).
pub fn builtin_templates() -> Vec<String> {
    let mut ptrs = vec![std::ptr::null::<std::os::raw::c_char>(); 128];
    // SAFETY: ptrs has room for ptrs.len() pointers; llama.cpp fills at most that many.
    let n = unsafe { sys::llama_chat_builtin_templates(ptrs.as_mut_ptr(), ptrs.len()) };
    ptrs.iter()
        .take(usize::try_from(n).unwrap_or(0).min(ptrs.len()))
        // SAFETY: llama.cpp returns static NUL-terminated names.
        .map(|&p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        .collect()
}

/// `messages` rendered with the template `tmpl` (see [`Model::apply_chat`]).
///
/// # Errors
/// [`Error::Call`] if llama.cpp does not know the template; [`Error::Nul`] for a NUL in a message.
pub fn apply_template(tmpl: &str, messages: &[(&str, &str)], add_assistant: bool) -> Result<String> {
    let tmpl_c = CString::new(tmpl).map_err(|_| Error::Nul)?;
    let owned: Vec<(CString, CString)> = messages
        .iter()
        .map(|(r, c)| Ok((CString::new(*r).map_err(|_| Error::Nul)?, CString::new(*c).map_err(|_| Error::Nul)?)))
        .collect::<Result<_>>()?;
    let msgs: Vec<sys::llama_chat_message> =
        owned.iter().map(|(r, c)| sys::llama_chat_message { role: r.as_ptr(), content: c.as_ptr() }).collect();
    let total: usize = messages.iter().map(|(r, c)| r.len() + c.len()).sum();
    let mut buf = vec![0u8; total * 2 + 256];
    for _ in 0..2 {
        let len = i32::try_from(buf.len()).map_err(|_| Error::Call("conversation too long".into()))?;
        // SAFETY: tmpl_c is NUL-terminated; msgs point at live C strings; buf has len bytes.
        let n = unsafe {
            sys::llama_chat_apply_template(
                tmpl_c.as_ptr(),
                msgs.as_ptr(),
                msgs.len(),
                add_assistant,
                buf.as_mut_ptr().cast(),
                len,
            )
        };
        if n < 0 {
            return Err(Error::Call(format!(
                "llama.cpp does not know this chat template (built in: {})",
                builtin_templates().join(", ")
            )));
        }
        if (n as usize) <= buf.len() {
            buf.truncate(n as usize);
            return String::from_utf8(buf).map_err(|_| Error::Call("template output is not UTF-8".into()));
        }
        buf.resize(n as usize, 0);
    }
    Err(Error::Call("chat template output kept growing".into()))
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: we own the model; every context holds an Arc to it, so none is alive.
        unsafe { sys::llama_model_free(self.ptr.as_ptr()) };
    }
}

/// How the next token is picked: llama.cpp's sampler chain in `llama-cli`'s order (penalties,
/// top-k, typical, top-p, min-p, temperature, then a seeded draw) with `llama-cli`'s defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// 0 = greedy.
    pub temp: f32,
    /// 0 = off.
    pub top_k: i32,
    /// 1 = off.
    pub top_p: f32,
    /// 0 = off.
    pub min_p: f32,
    /// Locally typical sampling; 1 = off.
    pub typ_p: f32,
    /// Penalties over the last `repeat_last_n` tokens (0 = none, -1 = the context).
    pub repeat_last_n: i32,
    /// 1 = off.
    pub repeat_penalty: f32,
    /// 0 = off.
    pub frequency_penalty: f32,
    /// 0 = off.
    pub presence_penalty: f32,
    pub seed: u32,
}

/// llama.cpp's "pick a random seed" (`LLAMA_DEFAULT_SEED`).
pub const RANDOM_SEED: u32 = u32::MAX;

impl Default for Sampling {
    /// `llama-cli`'s defaults (`common_params_sampling`): temperature 0.8, top-k 40, top-p 0.95,
    /// min-p 0.05, no penalty over the last 64 tokens, a random seed.
    fn default() -> Self {
        Self {
            temp: 0.8,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            typ_p: 1.0,
            repeat_last_n: 64,
            repeat_penalty: 1.0,
            frequency_penalty: 0.0,
            presence_penalty: 0.0,
            seed: RANDOM_SEED,
        }
    }
}

impl Sampling {
    /// Greedy: the most likely token every step.
    pub fn greedy() -> Self {
        Self { temp: 0.0, ..Self::default() }
    }

    /// Check the values, naming each bad one as its `bmoe run` flag (the server's field
    /// names are in parentheses).
    ///
    /// # Errors
    /// A message per bad value.
    pub fn check(&self) -> std::result::Result<(), String> {
        let mut bad = Vec::new();
        if !(self.temp >= 0.0 && self.temp.is_finite()) {
            bad.push("--temp (temperature) must be >= 0");
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            bad.push("--top-p (top_p) must be in (0, 1]");
        }
        if self.top_k < 0 {
            bad.push("--top-k (top_k) must be >= 0");
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            bad.push("--min-p (min_p) must be in [0, 1]");
        }
        if !(self.typ_p > 0.0 && self.typ_p <= 1.0) {
            bad.push("--typical (typical_p) must be in (0, 1]");
        }
        if !(self.repeat_penalty > 0.0 && self.repeat_penalty.is_finite()) {
            bad.push("--repeat-penalty (repeat_penalty) must be > 0");
        }
        if !(self.presence_penalty.is_finite() && self.frequency_penalty.is_finite()) {
            bad.push("the presence and frequency penalties must be finite");
        }
        if self.repeat_last_n < 0 {
            bad.push("--repeat-last-n (repeat_last_n) must be >= -1");
        }
        match bad.is_empty() {
            true => Ok(()),
            false => Err(bad.join("; ")),
        }
    }

    /// Whether any penalty is on (the sampler then needs the recent tokens, see
    /// [`Sampler::accept`]).
    pub fn penalizes(&self) -> bool {
        self.repeat_last_n != 0
            && (self.repeat_penalty != 1.0 || self.frequency_penalty != 0.0 || self.presence_penalty != 0.0)
    }
}

/// llama.cpp's sampler chain, used by every engine so that the same seed picks the same tokens
/// from the same logits.
#[derive(Debug)]
pub struct Sampler {
    ptr: NonNull<sys::llama_sampler>,
    cand: Vec<sys::llama_token_data>,
}

// SAFETY: a sampler chain is owned state used through &mut self only.
unsafe impl Send for Sampler {}

impl Sampler {
    /// A sampler for `s` over a vocabulary of `n_vocab` tokens (the penalties' table).
    ///
    /// # Errors
    /// [`Error::Call`] if llama.cpp cannot make it.
    pub fn new(s: Sampling, n_vocab: usize) -> Result<Self> {
        init();
        // SAFETY: plain constructors; the chain takes ownership of each added sampler.
        let ptr = unsafe {
            let chain = sys::llama_sampler_chain_init(sys::llama_sampler_chain_default_params());
            let add = |x| sys::llama_sampler_chain_add(chain, x);
            if s.penalizes() {
                add(sys::llama_sampler_init_penalties(
                    i32::try_from(n_vocab).unwrap_or(i32::MAX),
                    s.repeat_last_n,
                    s.repeat_penalty,
                    s.frequency_penalty,
                    s.presence_penalty,
                ));
            }
            if s.temp <= 0.0 {
                add(sys::llama_sampler_init_greedy());
            } else {
                if s.top_k > 0 {
                    add(sys::llama_sampler_init_top_k(s.top_k));
                }
                if s.typ_p < 1.0 {
                    add(sys::llama_sampler_init_typical(s.typ_p, 1));
                }
                if s.top_p < 1.0 {
                    add(sys::llama_sampler_init_top_p(s.top_p, 1));
                }
                if s.min_p > 0.0 {
                    add(sys::llama_sampler_init_min_p(s.min_p, 1));
                }
                add(sys::llama_sampler_init_temp(s.temp));
                add(sys::llama_sampler_init_dist(s.seed));
            }
            chain
        };
        Ok(Self { ptr: NonNull::new(ptr).ok_or_else(|| Error::Call("sampler".into()))?, cand: Vec::new() })
    }

    /// Tell the sampler about a token of the context it did not pick (the prompt's, for the
    /// penalties), as `llama-cli` does.
    pub fn accept(&mut self, token: i32) {
        // SAFETY: a live chain.
        unsafe { sys::llama_sampler_accept(self.ptr.as_ptr(), token) };
    }

    /// Pick a token from `logits` (one per vocabulary entry).
    pub fn sample(&mut self, logits: &[f32]) -> i32 {
        self.cand.clear();
        self.cand.extend(logits.iter().enumerate().map(|(i, &l)| sys::llama_token_data {
            id: i as i32,
            logit: l,
            p: 0.0,
        }));
        let mut arr = sys::llama_token_data_array {
            data: self.cand.as_mut_ptr(),
            size: self.cand.len(),
            selected: -1,
            sorted: false,
        };
        // SAFETY: arr points at self.cand, live and unaliased for the call.
        unsafe { sys::llama_sampler_apply(self.ptr.as_ptr(), &mut arr) };
        let sel = usize::try_from(arr.selected).unwrap_or(0).min(arr.size.saturating_sub(1));
        // SAFETY: sel < arr.size; arr.data may have been re-pointed by a sampler, still live.
        let tok = unsafe { (*arr.data.add(sel)).id };
        // SAFETY: a live chain.
        unsafe { sys::llama_sampler_accept(self.ptr.as_ptr(), tok) };
        tok
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: we own the chain (and through it every sampler added).
        unsafe { sys::llama_sampler_free(self.ptr.as_ptr()) };
    }
}

/// A llama.cpp context on a loaded model: the baseline engine. It holds its model, so it can
/// be moved to another thread with it.
#[derive(Debug)]
pub struct Session {
    model: Arc<Model>,
    ctx: NonNull<sys::llama_context>,
    n_ctx: u32,
    n_ubatch: u32,
    n_past: i32,
    /// The thread pool attached by [`Session::with_hooks`]; freed after the context.
    pool: Option<crate::ggml::ThreadPool>,
}

/// What a context built by [`Session::with_hooks`] calls back into: ggml's scheduler evaluation
/// callback (asked before each node is computed, told after each node it asked for) and the
/// abort callback (checked after every node; true stops `llama_decode`, which then returns 2
/// and removes the micro-batch from the KV cache).
#[derive(Debug)]
pub struct Hooks {
    pub eval: sys::ggml_backend_sched_eval_callback,
    pub eval_data: *mut std::ffi::c_void,
    pub abort: sys::ggml_abort_callback,
    pub abort_data: *mut std::ffi::c_void,
}

// SAFETY: the context is used through &mut self only (llama.cpp contexts are not shared
// between threads, but may move between them), and its model is Send + Sync.
unsafe impl Send for Session {}

impl Session {
    /// A context of `n_ctx` tokens computing with `n_threads`, prefill in micro-batches of
    /// `n_ubatch`.
    ///
    /// # Errors
    /// [`Error::Context`].
    pub fn new(model: Arc<Model>, n_ctx: u32, n_threads: usize, n_ubatch: u32) -> Result<Self> {
        // SAFETY: no hooks: nothing to keep alive.
        unsafe { Self::build(model, n_ctx, n_threads, n_ubatch, None) }
    }

    /// [`Self::new`] with `hooks` installed and a persistent thread pool of `n_threads`
    /// attached (otherwise ggml makes and joins one per graph segment the hooks split).
    ///
    /// # Safety
    /// `hooks`' callbacks must be sound for any tensor of llama.cpp's graphs, and their data
    /// pointers must stay valid for as long as the session lives (they are called from the
    /// thread that runs [`Self::forward`]).
    ///
    /// # Errors
    /// [`Error::Context`]; [`Error::Call`] if the thread pool cannot be made.
    pub unsafe fn with_hooks(
        model: Arc<Model>,
        n_ctx: u32,
        n_threads: usize,
        n_ubatch: u32,
        hooks: Hooks,
    ) -> Result<Self> {
        // SAFETY: the caller's contract.
        unsafe { Self::build(model, n_ctx, n_threads, n_ubatch, Some(hooks)) }
    }

    /// # Safety
    /// As [`Self::with_hooks`] when `hooks` is given.
    unsafe fn build(
        model: Arc<Model>,
        n_ctx: u32,
        n_threads: usize,
        n_ubatch: u32,
        hooks: Option<Hooks>,
    ) -> Result<Self> {
        // SAFETY: returns a plain struct by value.
        let mut p = unsafe { sys::llama_context_default_params() };
        p.n_ctx = n_ctx;
        p.n_batch = n_ubatch;
        p.n_ubatch = n_ubatch;
        p.n_threads = n_threads as i32;
        p.n_threads_batch = n_threads as i32;
        p.no_perf = true;
        let hooked = hooks.is_some();
        if let Some(h) = hooks {
            p.cb_eval = h.eval;
            p.cb_eval_user_data = h.eval_data;
            p.abort_callback = h.abort;
            p.abort_callback_data = h.abort_data;
        }
        // SAFETY: a live model and params from llama.cpp's defaults (the hooks under the
        // caller's contract).
        let ctx = unsafe { sys::llama_init_from_model(model.ptr.as_ptr(), p) };
        let ctx = NonNull::new(ctx).ok_or(Error::Context { n_ctx })?;
        let mut s = Self { model, ctx, n_ctx, n_ubatch, n_past: 0, pool: None };
        if hooked {
            let pool =
                crate::ggml::ThreadPool::new(n_threads).map_err(|e| Error::Call(format!("a thread pool: {e}")))?;
            // SAFETY: a live context and pool; the session owns the pool and frees the context
            // (which detaches it) first.
            unsafe { sys::llama_attach_threadpool(ctx.as_ptr(), pool.as_ptr(), pool.as_ptr()) };
            s.pool = Some(pool);
        }
        Ok(s)
    }

    /// The model this session runs.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// Run `tokens` at the next positions; returns the logits of the last token, or of every
    /// token when `all`.
    ///
    /// # Errors
    /// [`Error::Call`] if `llama_decode` fails (context full, …).
    pub fn forward(&mut self, tokens: &[i32], all: bool) -> Result<Vec<f32>> {
        Ok(self.forward_until(tokens, all, &mut |_| true)?.expect("never stopped"))
    }

    /// [`Self::forward`] that calls `go(tokens done)` before each micro-batch and returns
    /// `None` when it says false.
    ///
    /// # Errors
    /// As [`Self::forward`].
    pub fn forward_until(
        &mut self,
        tokens: &[i32],
        all: bool,
        go: &mut dyn FnMut(usize) -> bool,
    ) -> Result<Option<Vec<f32>>> {
        let n_vocab = self.model.n_vocab();
        let mut out = Vec::new();
        let chunks: Vec<&[i32]> = tokens.chunks(self.n_ubatch as usize).collect();
        for (ci, chunk) in chunks.iter().enumerate() {
            if !go(ci * self.n_ubatch as usize) {
                return Ok(None);
            }
            let last_chunk = ci + 1 == chunks.len();
            // SAFETY: allocates a batch for chunk.len() tokens of one sequence.
            let batch = unsafe { sys::llama_batch_init(chunk.len() as i32, 0, 1) };
            for (i, &t) in chunk.iter().enumerate() {
                // SAFETY: batch arrays have chunk.len() entries; seq_id[i] has room for 1.
                unsafe {
                    *batch.token.add(i) = t;
                    *batch.pos.add(i) = self.n_past + i as i32;
                    *batch.n_seq_id.add(i) = 1;
                    **batch.seq_id.add(i) = 0;
                    *batch.logits.add(i) = i8::from(all || (last_chunk && i + 1 == chunk.len()));
                }
            }
            let mut b = batch;
            b.n_tokens = chunk.len() as i32;
            // SAFETY: a live context and a filled batch.
            let rc = unsafe { sys::llama_decode(self.ctx.as_ptr(), b) };
            if rc != 0 {
                // SAFETY: the batch came from llama_batch_init.
                unsafe { sys::llama_batch_free(batch) };
                return Err(Error::Call(format!("llama_decode returned {rc}")));
            }
            for i in 0..chunk.len() {
                if all || (last_chunk && i + 1 == chunk.len()) {
                    // SAFETY: row i requested logits; llama.cpp returns n_vocab floats.
                    let l = unsafe { sys::llama_get_logits_ith(self.ctx.as_ptr(), i as i32) };
                    if l.is_null() {
                        // SAFETY: the batch came from llama_batch_init.
                        unsafe { sys::llama_batch_free(batch) };
                        return Err(Error::Call(format!("no logits for row {i}")));
                    }
                    // SAFETY: as above.
                    out.extend_from_slice(unsafe { std::slice::from_raw_parts(l, n_vocab) });
                }
            }
            // SAFETY: the batch came from llama_batch_init.
            unsafe { sys::llama_batch_free(batch) };
            self.n_past += chunk.len() as i32;
        }
        Ok(Some(out))
    }

    /// The context's length in tokens.
    pub fn n_ctx(&self) -> u32 {
        self.n_ctx
    }

    /// The widest micro-batch of a forward pass.
    pub fn n_ubatch(&self) -> u32 {
        self.n_ubatch
    }

    /// The host bytes this context allocated as llama.cpp accounts them (the vendored
    /// llama.cpp's `llama_context_memory_bytes`, bmoe's patch): `(memory, compute)`, its memory
    /// (KV cache, recurrent state) and its compute buffers.
    pub fn memory_bytes(&self) -> (u64, u64) {
        let (mut memory, mut compute) = (0usize, 0usize);
        // SAFETY: a live context; both pointers are to locals alive for the call.
        unsafe { sys::llama_context_memory_bytes(self.ctx.as_ptr(), &mut memory, &mut compute) };
        (memory as u64, compute as u64)
    }

    /// Tokens in the KV cache.
    pub fn n_past(&self) -> u32 {
        self.n_past as u32
    }

    /// Keep the first `n` tokens of the context and forget the rest.
    pub fn truncate(&mut self, n: u32) {
        let n = n.min(self.n_past as u32);
        // SAFETY: a live context; removing positions [n, ∞) of sequence 0.
        unsafe { sys::llama_memory_seq_rm(sys::llama_get_memory(self.ctx.as_ptr()), 0, n as i32, -1) };
        self.n_past = n as i32;
    }

    /// The context's state (its KV cache), as llama.cpp serialises it.
    pub fn state(&self) -> Vec<u8> {
        // SAFETY: a live context; the buffer has the size llama.cpp asked for.
        unsafe {
            let n = sys::llama_state_get_size(self.ctx.as_ptr());
            let mut buf = vec![0u8; n];
            let got = sys::llama_state_get_data(self.ctx.as_ptr(), buf.as_mut_ptr(), n);
            buf.truncate(got);
            buf
        }
    }

    /// Restore a state from [`Self::state`] holding `n_past` tokens.
    ///
    /// # Errors
    /// [`Error::Call`] if llama.cpp refuses it (another model or context size).
    pub fn set_state(&mut self, state: &[u8], n_past: u32) -> Result<()> {
        // SAFETY: a live context; src points at state.len() readable bytes.
        let read = unsafe { sys::llama_state_set_data(self.ctx.as_ptr(), state.as_ptr(), state.len()) };
        if read == 0 {
            return Err(Error::Call("llama.cpp refused the saved state".into()));
        }
        self.n_past = n_past as i32;
        Ok(())
    }

    /// Forget the KV cache.
    pub fn reset(&mut self) {
        // SAFETY: a live context.
        unsafe { sys::llama_memory_clear(sys::llama_get_memory(self.ctx.as_ptr()), true) };
        self.n_past = 0;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: we own the context.
        unsafe { sys::llama_free(self.ctx.as_ptr()) };
    }
}
