//! Generation: the loop shared by every engine (the new prompt tokens in micro-batches, then
//! pick → step until `n` tokens, an end token, a full context, a stop from the caller or a
//! cancel), over [`Forward`], what every engine (our decoder, resident or streaming, and
//! llama.cpp) does: run tokens at the next positions, keep or drop a prefix of the context, and
//! save or restore it. With speculative decoding ([`crate::speculative`]) a step may be a verify
//! pass of a draft, picked from row by row; the kept tokens are the plain loop's. The engine
//! (`crate::engine`) keeps the tokens the context holds and continues from them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::decoder::{Decoder, Logits};
use crate::error::Result;
use crate::provider::{ExpertProvider, ProviderCounters};
use crate::speculative::{SpecStats, Speculator};

/// Something that turns tokens into the next token's logits, and keeps a context.
pub trait Forward {
    /// Run `tokens` at the next positions; the last token's logits.
    ///
    /// # Errors
    /// The engine's.
    fn forward_last(&mut self, tokens: &[i32]) -> Result<Vec<f32>>;
    /// Forget the context: the next token is at position 0.
    fn reset(&mut self);
    /// Keep the first `n` tokens of the context, forget the rest.
    fn truncate(&mut self, n: u32);
    /// Tokens in the context.
    fn n_past(&self) -> u32;
    /// The context's length in tokens.
    fn n_ctx(&self) -> u32;
    /// The widest micro-batch a forward pass runs at once.
    fn n_ubatch(&self) -> u32;
    /// [`Self::forward_last`] of a prompt that calls `go(tokens done)` before each micro-batch:
    /// `None` when it says false (the context then holds part of the prompt).
    ///
    /// # Errors
    /// As [`Self::forward_last`].
    fn prefill(&mut self, tokens: &[i32], go: &mut dyn FnMut(usize) -> bool) -> Result<Option<Vec<f32>>>;
    /// The context's state (the KV cache of its `n_past` tokens), as bytes.
    ///
    /// # Errors
    /// The engine's.
    fn save_state(&self) -> Result<Vec<u8>>;
    /// Restore [`Self::save_state`]'s bytes of `n` tokens.
    ///
    /// # Errors
    /// When the bytes are not this model's context of `n` tokens.
    fn load_state(&mut self, state: &[u8], n: u32) -> Result<()>;
    /// Cumulative counters, where the engine keeps them.
    fn telemetry(&self) -> Telemetry {
        Telemetry::default()
    }
    /// A verify pass of speculative decoding: `tokens` at the next positions in one pass, every
    /// row's logits, each row computed as a single step computes it when `exact` (see
    /// [`Decoder::verify`]); `None` where the engine has no such pass.
    ///
    /// # Errors
    /// The engine's.
    fn verify(&mut self, _tokens: &[i32], _exact: bool) -> Result<Option<Vec<f32>>> {
        Ok(None)
    }
    /// Keep the first `n` positions after a verify pass (the rows of the draft not accepted go).
    fn rewind(&mut self, n: u32) {
        self.truncate(n);
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
    fn truncate(&mut self, n: u32) {
        Decoder::truncate(self, n);
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
    fn prefill(&mut self, tokens: &[i32], go: &mut dyn FnMut(usize) -> bool) -> Result<Option<Vec<f32>>> {
        self.forward_until(tokens, Logits::Last, go)
    }
    fn save_state(&self) -> Result<Vec<u8>> {
        self.kv_snapshot()
    }
    fn load_state(&mut self, state: &[u8], n: u32) -> Result<()> {
        self.kv_restore(state, n)
    }
    fn telemetry(&self) -> Telemetry {
        Telemetry { compute_s: Some(self.stats().compute_s), provider: self.provider().counters() }
    }
    fn verify(&mut self, tokens: &[i32], exact: bool) -> Result<Option<Vec<f32>>> {
        Decoder::verify(self, tokens, exact).map(Some)
    }
    fn rewind(&mut self, n: u32) {
        Decoder::rewind(self, n);
    }
}

impl Forward for crate::llama::Session {
    fn forward_last(&mut self, tokens: &[i32]) -> Result<Vec<f32>> {
        Ok(self.forward(tokens, false)?)
    }
    fn reset(&mut self) {
        crate::llama::Session::reset(self);
    }
    fn truncate(&mut self, n: u32) {
        crate::llama::Session::truncate(self, n);
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
    fn prefill(&mut self, tokens: &[i32], go: &mut dyn FnMut(usize) -> bool) -> Result<Option<Vec<f32>>> {
        Ok(self.forward_until(tokens, false, go)?)
    }
    fn save_state(&self) -> Result<Vec<u8>> {
        Ok(self.state())
    }
    fn load_state(&mut self, state: &[u8], n: u32) -> Result<()> {
        Ok(self.set_state(state, n)?)
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

    /// Clear a cancel (after it was handled), so that the next generation runs.
    pub fn clear(&self) {
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
    /// Prompt tokens evaluated by this generation's prefill (the new ones), and the seconds
    /// it took.
    pub prompt_tokens: usize,
    /// Prompt tokens reused from the context (its KV cache) instead of evaluated.
    pub reused_tokens: usize,
    pub prefill_s: f64,
    /// Seconds of each decode step (one per generated token after the first).
    pub step_s: Vec<f64>,
    /// Why it stopped.
    pub stop: StopReason,
    /// The end-of-generation token that stopped it, when one did (it is not among `tokens`,
    /// and the context does not hold it).
    pub end_token: Option<i32>,
    /// What speculative decoding did, when it was on.
    pub spec: Option<SpecStats>,
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

/// Prefill `prompt` after a reset, then up to `n` tokens: see [`continue_generation`].
///
/// # Errors
/// As [`continue_generation`].
pub fn generate(
    f: &mut dyn Forward,
    prompt: &[i32],
    n: usize,
    cancel: &CancelToken,
    pick: &mut dyn FnMut(&[f32]) -> i32,
    is_end: &dyn Fn(i32) -> bool,
    on_token: &mut dyn FnMut(Token) -> Control,
) -> Result<Generation> {
    f.reset();
    continue_generation(f, prompt, n, cancel, pick, is_end, on_token, &mut |_, _| {})
}

/// Run `new` at the context's next positions, then up to `n` tokens: `pick` chooses each from
/// the logits, `is_end` ends the generation (the end token is not kept), `on_token` sees each
/// kept token and may stop, `on_prefill(done, of)` sees the prompt's micro-batches go by. The
/// prompt is run in micro-batches with a cancel honoured between them, and a cancel is honoured
/// before each step; nothing is left running when this returns (the decoder waits for its reads
/// inside each step). A generation that would overflow the context stops there
/// ([`StopReason::ContextFull`]). The context then holds the prompt and every kept token but the
/// last (which was never run).
///
/// # Errors
/// The engine's, [`crate::Error::ContextFull`] for new tokens that do not fit the context; the
/// generation ends at the failing step (no token after it).
#[allow(clippy::too_many_arguments)]
pub fn continue_generation(
    f: &mut dyn Forward,
    new: &[i32],
    n: usize,
    cancel: &CancelToken,
    pick: &mut dyn FnMut(&[f32]) -> i32,
    is_end: &dyn Fn(i32) -> bool,
    on_token: &mut dyn FnMut(Token) -> Control,
    on_prefill: &mut dyn FnMut(usize, usize),
) -> Result<Generation> {
    continue_speculative(f, new, n, cancel, pick, is_end, on_token, on_prefill, None)
}

/// [`continue_generation`] with speculative decoding when `spec` is given (its
/// [`Speculator::begin`] called by the caller with the whole context): before each step the
/// speculator may draft tokens after the one about to run; the step is then one verify pass
/// of them all, `pick` is called on its rows in order (once per kept token, as plain decode
/// calls it) while the picks agree with the draft, and the rows after the last kept token
/// leave the context. Each pass's tokens are handed to `on_token` after its picks, the pass's
/// seconds shared evenly among them (a stop then keeps the tokens before it; the picks after it
/// were made and are dropped). Without `spec`, or when it drafts nothing, a step is a plain
/// single-token step.
///
/// # Errors
/// As [`continue_generation`]; [`crate::Error::Unsupported`] when the engine has no verify pass.
#[allow(clippy::too_many_arguments)]
pub fn continue_speculative(
    f: &mut dyn Forward,
    new: &[i32],
    n: usize,
    cancel: &CancelToken,
    pick: &mut dyn FnMut(&[f32]) -> i32,
    is_end: &dyn Fn(i32) -> bool,
    on_token: &mut dyn FnMut(Token) -> Control,
    on_prefill: &mut dyn FnMut(usize, usize),
    mut spec: Option<&mut Speculator>,
) -> Result<Generation> {
    cancel.clear();
    let mut g = Generation { prompt_tokens: new.len(), reused_tokens: f.n_past() as usize, ..Generation::default() };
    if new.is_empty() || f.n_past() as usize + new.len() > f.n_ctx() as usize {
        return Err(crate::Error::ContextFull { n_past: f.n_past(), n_new: new.len(), n_ctx: f.n_ctx() });
    }
    let t = Instant::now();
    let total = new.len();
    let prefilled = f.prefill(new, &mut |done| {
        on_prefill(done, total);
        !cancel.is_cancelled()
    })?;
    g.prefill_s = t.elapsed().as_secs_f64();
    let Some(logits) = prefilled else {
        g.stop = StopReason::Interrupted;
        return Ok(g);
    };
    check_logits(&logits, f.n_past())?;
    on_prefill(total, total);
    g.stop = StopReason::Length;
    let n_vocab = logits.len().max(1);
    // The pass just run: its rows' logits, the draft its rows after the first were computed on,
    // the context's length before it, its seconds, and whether it is the prefill.
    let mut rows = logits;
    let mut draft: Vec<i32> = Vec::new();
    let mut base = f.n_past() - 1;
    let mut pass_s = g.prefill_s;
    let mut first = true;
    let mut before = f.telemetry();
    loop {
        if cancel.is_cancelled() {
            g.stop = StopReason::Interrupted;
            break;
        }
        // Pick from the rows in order while the picks agree with the draft.
        let mut picked: Vec<i32> = Vec::new();
        let mut ended = None;
        for (j, row) in rows.chunks(n_vocab).enumerate() {
            if g.tokens.len() + picked.len() == n {
                break;
            }
            let id = pick(row);
            if is_end(id) {
                ended = Some(id);
                break;
            }
            picked.push(id);
            if draft.get(j) != Some(&id) {
                break;
            }
        }
        let after = f.telemetry();
        let bytes = match (after.provider, before.provider) {
            (Some(a), Some(b)) => a.bytes_read - b.bytes_read,
            _ => 0,
        };
        if let Some(s) = spec.as_deref_mut().filter(|_| !first) {
            if draft.is_empty() {
                s.plain_step(pass_s, bytes);
            } else {
                let accepted = picked.iter().zip(&draft).take_while(|(a, b)| a == b).count();
                s.verify_pass(draft.len(), accepted, picked.len(), pass_s, bytes);
            }
        }
        if !first && picked.is_empty() {
            g.step_s.push(pass_s);
        }
        let share = pass_s / picked.len().max(1) as f64;
        let mut kept = 0;
        for &id in &picked {
            let index = g.tokens.len();
            g.tokens.push(id);
            if index > 0 {
                g.step_s.push(share);
            }
            kept += 1;
            if let Some(s) = spec.as_deref_mut() {
                s.kept(id);
            }
            if on_token(Token { index, id, step_s: share, telemetry: after }) == Control::Stop {
                g.stop = StopReason::Caller;
                break;
            }
        }
        // The context holds the pass's inputs up to the row the last kept token was picked
        // from (the prefill's: all of it).
        let keep = base + kept.max(1) as u32;
        if f.n_past() > keep {
            f.rewind(keep);
        }
        if g.stop == StopReason::Caller {
            break;
        }
        if let Some(id) = ended.filter(|_| kept == picked.len()) {
            g.stop = StopReason::EndOfGeneration;
            g.end_token = Some(id);
            break;
        }
        if g.tokens.len() >= n || n == 0 {
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
        // The next pass: the last kept token, and a draft of what follows it.
        let id = *g.tokens.last().expect("a token was kept");
        let room = (n - g.tokens.len() - 1).min((f.n_ctx() - f.n_past() - 1) as usize);
        draft = match spec.as_deref_mut() {
            Some(s) => s.draft(room, n_vocab),
            None => Vec::new(),
        };
        base = f.n_past();
        before = f.telemetry();
        let t = Instant::now();
        rows = if draft.is_empty() {
            f.forward_last(&[id])?
        } else {
            let exact = spec.as_deref().is_none_or(|s| s.options().exact);
            let tokens: Vec<i32> = std::iter::once(id).chain(draft.iter().copied()).collect();
            f.verify(&tokens, exact)?
                .ok_or_else(|| crate::Error::Unsupported("speculative decoding needs bmoe's native decoder".into()))?
        };
        check_logits(&rows, f.n_past())?;
        pass_s = t.elapsed().as_secs_f64();
        first = false;
    }
    g.spec = spec.map(|s| s.stats());
    Ok(g)
}

/// Logits that hold a NaN or an infinity are refused, never sampled from: the context's state
/// is corrupt (a damaged session's KV cache, say), and every token after would be garbage.
///
/// # Errors
/// [`crate::Error::Corrupt`] naming the position.
pub fn check_logits(logits: &[f32], n_past: u32) -> Result<()> {
    // A block at a time, the inner fold vectorizes: a few microseconds for a large vocabulary.
    let bad = logits.chunks(1024).any(|c| c.iter().fold(false, |acc, x| acc | !x.is_finite()));
    if bad {
        return Err(crate::Error::Corrupt(format!(
            "the logits after {n_past} tokens of context hold a NaN or an infinity: the context's state is corrupt \
             (a damaged session file?), so nothing is sampled from it; start over (/reset) or load a good session"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn logits_that_are_not_finite_are_refused_naming_the_position() {
        let mut l = vec![0.5f32; 5000];
        assert!(super::check_logits(&l, 7).is_ok());
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            l[4321] = bad;
            let e = super::check_logits(&l, 7).unwrap_err().to_string();
            assert!(e.contains("after 7 tokens of context hold a NaN or an infinity"), "{e}");
        }
    }
}
