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
}

/// Stops a generation between two steps, from any thread.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// Ask the generation in progress (or the next one to start) to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
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
    /// Stopped by [`CancelToken::cancel`].
    pub cancelled: bool,
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
/// and may stop. A cancel is honoured before each step; nothing is left running when this
/// returns (the decoder waits for its reads inside each step).
///
/// # Errors
/// The engine's; the generation ends at the failing step (no token after it).
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
    let t = Instant::now();
    let mut logits = f.forward_last(prompt)?;
    g.prefill_s = t.elapsed().as_secs_f64();
    let mut step_s = g.prefill_s;
    for index in 0..n {
        if cancel.is_cancelled() {
            g.cancelled = true;
            break;
        }
        let id = pick(&logits);
        if is_end(id) {
            break;
        }
        g.tokens.push(id);
        if on_token(Token { index, id, step_s, telemetry: f.telemetry() }) == Control::Stop || index + 1 == n {
            break;
        }
        if cancel.is_cancelled() {
            g.cancelled = true;
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
