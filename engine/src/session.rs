//! Generation: the loop shared by every engine (prefill, then pick → step until `n` tokens,
//! an end token, a stop from the caller or a cancel), and [`Session`], the open-once,
//! generate-many API over our decoder: the expert cache stays warm across generations, its
//! budget can change between them, and a generation can be cancelled from another thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::decoder::{Decoder, Logits};
use crate::error::Result;
use crate::provider::{ExpertProvider, ProviderCounters};
use crate::stream::StreamingExperts;

/// Something that turns tokens into the next token's logits.
pub trait Forward {
    /// Run `tokens` at the next positions; the last token's logits.
    ///
    /// # Errors
    /// The engine's.
    fn forward_last(&mut self, tokens: &[i32]) -> Result<Vec<f32>>;
    /// Forget the context: the next token is at position 0.
    fn reset(&mut self);
    /// Tokens in the context.
    fn n_past(&self) -> u32;
    /// The context's length in tokens.
    fn n_ctx(&self) -> u32;
    /// The widest micro-batch a forward pass runs at once.
    fn n_ubatch(&self) -> u32;
    /// [`Self::forward_last`] of a prompt, honouring `cancel` between its micro-batches:
    /// `None` when cancelled (the context then holds part of the prompt).
    ///
    /// # Errors
    /// As [`Self::forward_last`].
    fn prefill(&mut self, tokens: &[i32], cancel: &CancelToken) -> Result<Option<Vec<f32>>>;
    /// Cumulative counters, where the engine keeps them.
    fn telemetry(&self) -> Telemetry {
        Telemetry::default()
    }
}

/// Cumulative counters of an engine; `None` where it does not measure them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Telemetry {
    /// Seconds inside graph compute.
    pub compute_s: Option<f64>,
    /// The expert provider's counters (streaming only).
    pub provider: Option<ProviderCounters>,
}

impl<P: ExpertProvider> Forward for Decoder<P> {
    fn forward_last(&mut self, tokens: &[i32]) -> Result<Vec<f32>> {
        self.forward(tokens, Logits::Last)
    }
    fn reset(&mut self) {
        Decoder::reset(self);
    }
    fn n_past(&self) -> u32 {
        Decoder::n_past(self)
    }
    fn n_ctx(&self) -> u32 {
        self.options().n_ctx
    }
    fn n_ubatch(&self) -> u32 {
        self.options().n_ubatch
    }
    fn prefill(&mut self, tokens: &[i32], cancel: &CancelToken) -> Result<Option<Vec<f32>>> {
        self.forward_until(tokens, Logits::Last, &|| cancel.is_cancelled())
    }
    fn telemetry(&self) -> Telemetry {
        Telemetry { compute_s: Some(self.stats().compute_s), provider: self.provider().counters() }
    }
}

impl Forward for crate::llama::Session {
    fn forward_last(&mut self, tokens: &[i32]) -> Result<Vec<f32>> {
        Ok(self.forward(tokens, false)?)
    }
    fn reset(&mut self) {
        crate::llama::Session::reset(self);
    }
    fn n_past(&self) -> u32 {
        crate::llama::Session::n_past(self)
    }
    fn n_ctx(&self) -> u32 {
        crate::llama::Session::n_ctx(self)
    }
    fn n_ubatch(&self) -> u32 {
        crate::llama::Session::n_ubatch(self)
    }
    fn prefill(&mut self, tokens: &[i32], cancel: &CancelToken) -> Result<Option<Vec<f32>>> {
        Ok(self.forward_until(tokens, false, &|| cancel.is_cancelled())?)
    }
}

/// Stops a generation between two steps, from any thread.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// Ask the generation in progress (or the next one to start) to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// The flag itself, for a signal handler to set (`signal_hook::flag::register`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    /// Whether a cancel is pending.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    fn clear(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// What the caller says after each token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// How a generation went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generation {
    /// The tokens generated (an end token is not included).
    pub tokens: Vec<i32>,
    /// Prompt tokens and the seconds of the prefill.
    pub prompt_tokens: usize,
    pub prefill_s: f64,
    /// Seconds of each decode step (one per generated token after the first).
    pub step_s: Vec<f64>,
    /// Why it stopped.
    pub stop: StopReason,
}

impl Generation {
    /// Stopped by [`CancelToken::cancel`] (Ctrl-C, a client that went away).
    pub fn cancelled(&self) -> bool {
        self.stop == StopReason::Interrupted
    }
}

/// Why a generation stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StopReason {
    /// The model produced an end-of-generation token.
    EndOfGeneration,
    /// The requested number of tokens (`-n`) was generated.
    #[default]
    Length,
    /// The context is full: the next token has no room.
    ContextFull,
    /// Cancelled between steps ([`CancelToken::cancel`]).
    Interrupted,
    /// The caller's callback said stop (a stop string, a closed output).
    Caller,
}

impl StopReason {
    /// How telemetry names it (`stop:` line, JSON `stop_reason`).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::EndOfGeneration => "eog",
            StopReason::Length => "length",
            StopReason::ContextFull => "context-full",
            StopReason::Interrupted => "interrupted",
            StopReason::Caller => "caller",
        }
    }

    /// In words, for the `stop:` line.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::EndOfGeneration => "end-of-generation token",
            StopReason::Length => "-n tokens generated",
            StopReason::ContextFull => "context full (-c)",
            StopReason::Interrupted => "interrupted",
            StopReason::Caller => "stopped by the caller",
        }
    }
}

/// One generated token, as the callback sees it.
#[derive(Clone, Copy, Debug)]
pub struct Token {
    /// 0-based index among the generated tokens.
    pub index: usize,
    pub id: i32,
    /// Seconds of the step that produced its logits (the prefill for index 0).
    pub step_s: f64,
    /// The engine's counters after that step.
    pub telemetry: Telemetry,
}

/// Prefill `prompt` after a reset, then up to `n` tokens: `pick` chooses each from the logits,
/// `is_end` ends the generation (the end token is not kept), `on_token` sees each kept token
/// and may stop. The prompt is run in micro-batches with a cancel honoured between them, and a
/// cancel is honoured before each step; nothing is left running when this returns (the decoder
/// waits for its reads inside each step). A generation that would overflow the context stops
/// there ([`StopReason::ContextFull`]); a prompt that does not fit is an error.
///
/// # Errors
/// The engine's, [`crate::Error::ContextFull`] for a prompt longer than the context; the
/// generation ends at the failing step (no token after it).
pub fn generate(
    f: &mut dyn Forward,
    prompt: &[i32],
    n: usize,
    cancel: &CancelToken,
    pick: &mut dyn FnMut(&[f32]) -> i32,
    is_end: &dyn Fn(i32) -> bool,
    on_token: &mut dyn FnMut(Token) -> Control,
) -> Result<Generation> {
    cancel.clear();
    f.reset();
    let mut g = Generation { prompt_tokens: prompt.len(), ..Generation::default() };
    if prompt.len() > f.n_ctx() as usize {
        return Err(crate::Error::ContextFull { n_past: 0, n_new: prompt.len(), n_ctx: f.n_ctx() });
    }
    let t = Instant::now();
    let Some(mut logits) = f.prefill(prompt, cancel)? else {
        g.stop = StopReason::Interrupted;
        g.prefill_s = t.elapsed().as_secs_f64();
        return Ok(g);
    };
    g.prefill_s = t.elapsed().as_secs_f64();
    let mut step_s = g.prefill_s;
    g.stop = StopReason::Length;
    for index in 0..n {
        if cancel.is_cancelled() {
            g.stop = StopReason::Interrupted;
            break;
        }
        let id = pick(&logits);
        if is_end(id) {
            g.stop = StopReason::EndOfGeneration;
            break;
        }
        g.tokens.push(id);
        if on_token(Token { index, id, step_s, telemetry: f.telemetry() }) == Control::Stop {
            g.stop = StopReason::Caller;
            break;
        }
        if index + 1 == n {
            break;
        }
        if cancel.is_cancelled() {
            g.stop = StopReason::Interrupted;
            break;
        }
        if f.n_past() >= f.n_ctx() {
            g.stop = StopReason::ContextFull;
            break;
        }
        let t = Instant::now();
        logits = f.forward_last(&[id])?;
        step_s = t.elapsed().as_secs_f64();
        g.step_s.push(step_s);
    }
    Ok(g)
}

/// Our decoder opened once for many generations.
#[derive(Debug)]
pub struct Session<P: ExpertProvider> {
    decoder: Decoder<P>,
    cancel: CancelToken,
}

impl<P: ExpertProvider> Session<P> {
    /// A session over `decoder`.
    pub fn new(decoder: Decoder<P>) -> Self {
        Self { decoder, cancel: CancelToken::default() }
    }

    /// The decoder (stats, provider).
    pub fn decoder(&self) -> &Decoder<P> {
        &self.decoder
    }

    /// The decoder, mutably.
    pub fn decoder_mut(&mut self) -> &mut Decoder<P> {
        &mut self.decoder
    }

    /// A handle that cancels this session's generations from any thread.
    pub fn cancel_handle(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// See [`generate`]; the context starts empty, the expert cache as the last one left it.
    ///
    /// # Errors
    /// See [`generate`].
    pub fn generate(
        &mut self,
        prompt: &[i32],
        n: usize,
        pick: &mut dyn FnMut(&[f32]) -> i32,
        is_end: &dyn Fn(i32) -> bool,
        on_token: &mut dyn FnMut(Token) -> Control,
    ) -> Result<Generation> {
        generate(&mut self.decoder, prompt, n, &self.cancel, pick, is_end, on_token)
    }
}

impl Session<StreamingExperts> {
    /// Resize the expert cache between generations: entries past the new budget are evicted
    /// now. Returns the budget in effect, in bytes (clamped to the pool, raised to one
    /// layer's top-k).
    pub fn set_cache_budget_mb(&mut self, mb: u64) -> u64 {
        self.decoder.provider_mut().set_budget_bytes(mb << 20)
    }
}
