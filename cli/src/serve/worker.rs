//! The decode worker: one thread that owns the engine and runs the queued requests one at a
//! time, FIFO (one decode at a time is what a CPU does best: a second one would halve both and
//! thrash the expert cache), never on the async runtime's threads. Each request's tokens come
//! back through its own channel as text; a request whose client went away (its channel closed,
//! or its handler dropped) is cancelled at the next step, or skipped if it has not started.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bmoe::engine::engine::{Engine, GenParams};
use bmoe::engine::llama;
use bmoe::engine::session::{CancelToken, Control, StopReason, Token};
use tokio::sync::mpsc::UnboundedSender;

/// One generation to run.
#[derive(Debug)]
pub struct Job {
    /// The prompt as text (the rendered chat template for a chat), when it came as text: the
    /// worker then reuses the tokens of what the context already holds for its start.
    pub text: Option<String>,
    /// The prompt's tokens (of `text`, with the BOS, or as the client sent them).
    pub tokens: Vec<i32>,
    pub n_predict: usize,
    pub sampling: llama::Sampling,
    pub stop: Vec<String>,
    pub ignore_eos: bool,
    /// Cancelled when the client goes away (and at shutdown).
    pub cancel: CancelToken,
    pub events: UnboundedSender<Event>,
    pub queued_at: Instant,
}

/// What a job sends back.
#[derive(Debug)]
pub enum Event {
    /// More of the text (whole UTF-8 characters; an invalid byte is U+FFFD; never a part of
    /// a stop string).
    Text(String),
    Done(Done),
    /// The engine failed (a read error, …), or the server is shutting down.
    Failed {
        status: u16,
        message: String,
    },
}

/// How a job ended.
#[derive(Clone, Debug, Default)]
pub struct Done {
    /// `stop` (an end token or a stop string), `length` (`max_tokens` or the context), or
    /// `cancelled` (the client went away, or the server shut down).
    pub finish_reason: &'static str,
    /// Prompt tokens evaluated, and reused from the context.
    pub prompt_tokens: usize,
    pub reused_tokens: usize,
    /// The prompt's tokens in all.
    pub prompt_total: usize,
    pub completion_tokens: usize,
    pub prompt_ms: f64,
    pub predicted_ms: f64,
    pub queued_ms: f64,
}

/// The worker's side of the queue.
#[derive(Debug)]
pub struct Shared {
    /// Jobs queued and not started.
    pub queued: AtomicUsize,
    /// Set at shutdown: no job starts any more.
    pub closing: AtomicBool,
    /// The running job's cancel, for shutdown.
    pub running: std::sync::Mutex<Option<CancelToken>>,
}

/// The text the context holds and its tokens: the last prompt as rendered and the reply as
/// generated (and the end token that closed it), so that a follow-up whose text continues it
/// starts with those very tokens instead of the text tokenized again.
#[derive(Debug, Default)]
struct Seen {
    text: String,
    tokens: Vec<i32>,
}

impl Seen {
    /// `job`'s tokens, starting with the ones already seen when its text continues them.
    fn tokens_for(&self, lm: &llama::Model, job: &Job) -> Vec<i32> {
        if let Some(t) = &job.text {
            if !self.tokens.is_empty() && t.len() > self.text.len() {
                if let Some(rest) = t.strip_prefix(&self.text) {
                    if let Ok(more) = lm.tokenize(rest, false) {
                        return self.tokens.iter().copied().chain(more).collect();
                    }
                }
            }
        }
        job.tokens.clone()
    }
}

/// Run jobs from `rx` until it closes.
pub fn run(mut engine: Engine, rx: std::sync::mpsc::Receiver<Job>, shared: Arc<Shared>) {
    let lm = engine.tokenizer().clone();
    let n_ctx = engine.report().n_ctx as usize;
    let mut seen = Seen::default();
    while let Ok(job) = rx.recv() {
        shared.queued.fetch_sub(1, Ordering::SeqCst);
        metrics::gauge!("bmoe_queue_depth").set(shared.queued.load(Ordering::SeqCst) as f64);
        if shared.closing.load(Ordering::SeqCst) {
            let _ = job.events.send(Event::Failed { status: 503, message: "the server is shutting down".into() });
            continue;
        }
        if job.cancel.is_cancelled() || job.events.is_closed() {
            metrics::counter!("bmoe_generations_cancelled_total").increment(1);
            continue;
        }
        *shared.running.lock().expect("not poisoned") = Some(job.cancel.clone());
        let r = run_job(&mut engine, &lm, n_ctx, &mut seen, &job);
        *shared.running.lock().expect("not poisoned") = None;
        match r {
            Ok(done) => {
                if done.finish_reason == "cancelled" {
                    metrics::counter!("bmoe_generations_cancelled_total").increment(1);
                }
                let _ = job.events.send(Event::Done(done));
            }
            Err(e) => {
                // After an engine error the context is unknown: start the next one afresh.
                engine.reset();
                seen = Seen::default();
                metrics::counter!("bmoe_generation_errors_total").increment(1);
                let _ = job.events.send(Event::Failed { status: 500, message: format!("{e:#}") });
            }
        }
    }
}

/// The text as it streams: whole characters, stop strings cut, and the end of the text held
/// back while it could still become one.
#[derive(Debug, Default)]
struct StopText {
    bytes: Vec<u8>,
    held: String,
}

impl StopText {
    /// Add `piece`; the text that can go out now, and whether a stop string was reached.
    fn push(&mut self, piece: &[u8], stops: &[String]) -> (String, bool) {
        self.bytes.extend_from_slice(piece);
        // As `String::from_utf8_lossy` over the whole text: one U+FFFD per invalid sequence,
        // and an incomplete one at the end kept for the next piece.
        let mut at = 0;
        loop {
            match std::str::from_utf8(&self.bytes[at..]) {
                Ok(s) => {
                    self.held.push_str(s);
                    at = self.bytes.len();
                    break;
                }
                Err(e) => {
                    let valid = at + e.valid_up_to();
                    self.held.push_str(std::str::from_utf8(&self.bytes[at..valid]).expect("valid up to here"));
                    match e.error_len() {
                        Some(n) => {
                            self.held.push('\u{fffd}');
                            at = valid + n;
                        }
                        None => {
                            at = valid;
                            break;
                        }
                    }
                }
            }
        }
        self.bytes.drain(..at);
        if let Some(at) = stops.iter().filter(|s| !s.is_empty()).filter_map(|s| self.held.find(s.as_str())).min() {
            self.held.truncate(at);
            return (std::mem::take(&mut self.held), true);
        }
        // Hold back the longest end of the text that begins a stop string.
        let mut keep = 0;
        for s in stops {
            for (i, _) in s.char_indices().skip(1) {
                if i > keep && self.held.ends_with(&s[..i]) {
                    keep = i;
                }
            }
        }
        let cut = self.held.len() - keep;
        let out = self.held[..cut].to_string();
        self.held.drain(..cut);
        (out, false)
    }

    /// What is left at the end (the held text, an incomplete character as U+FFFD).
    fn finish(&mut self) -> String {
        let mut s = std::mem::take(&mut self.held);
        s.push_str(&String::from_utf8_lossy(&std::mem::take(&mut self.bytes)));
        s
    }
}

fn run_job(
    engine: &mut Engine,
    lm: &Arc<llama::Model>,
    n_ctx: usize,
    seen: &mut Seen,
    job: &Job,
) -> anyhow::Result<Done> {
    let tokens = seen.tokens_for(lm, job);
    let n_predict = job.n_predict.min(n_ctx.saturating_sub(tokens.len()));
    let mut sampler = llama::Sampler::new(job.sampling, lm.n_vocab())?;
    if job.sampling.penalizes() {
        tokens.iter().for_each(|&t| sampler.accept(t));
    }
    engine.set_cancel(job.cancel.clone());
    let params = GenParams { n_predict, ignore_eos: job.ignore_eos };
    let mut text = StopText::default();
    let (mut stopped, mut gone) = (false, false);
    let t0 = Instant::now();
    let mut first: Option<f64> = None;
    let cancel = job.cancel.clone();
    let g = engine.generate_from(
        &tokens,
        &params,
        &mut |l| sampler.sample(l),
        &mut |t: Token| {
            first.get_or_insert(t0.elapsed().as_secs_f64());
            let (chunk, stop) = text.push(&lm.piece(t.id), &job.stop);
            if !chunk.is_empty() && job.events.send(Event::Text(chunk)).is_err() {
                gone = true;
                return Control::Stop;
            }
            if stop {
                stopped = true;
                return Control::Stop;
            }
            if cancel.is_cancelled() {
                return Control::Stop;
            }
            Control::Continue
        },
        &mut |_, _| {},
    )?;
    if !stopped {
        let rest = text.finish();
        if !rest.is_empty() {
            gone |= job.events.send(Event::Text(rest)).is_err();
        }
    }
    // What the context holds now, as text and tokens (the reply as generated).
    let reply_tokens: Vec<i32> = tokens.iter().chain(&g.tokens).chain(g.end_token.as_ref()).copied().collect();
    let end_text = g.end_token.map(|t| lm.token_text(t)).unwrap_or_default();
    // The reply's text is what the client got (invalid UTF-8 as U+FFFD), with a NUL as the
    // chat endpoint reads it back (U+FFFD: the template engine takes C strings).
    *seen = match (&job.text, stopped) {
        (Some(t), false) => {
            let reply: Vec<u8> = g.tokens.iter().flat_map(|&t| lm.piece(t)).collect();
            let r = String::from_utf8_lossy(&reply).replace('\0', "\u{fffd}");
            Seen { text: format!("{t}{r}{end_text}"), tokens: reply_tokens }
        }
        _ => Seen::default(),
    };
    let predicted_ms = g.step_s.iter().sum::<f64>() * 1e3;
    let finish_reason = match g.stop {
        _ if stopped => "stop",
        StopReason::EndOfGeneration => "stop",
        StopReason::Length | StopReason::ContextFull => "length",
        StopReason::Interrupted | StopReason::Caller => "cancelled",
    };
    let finish_reason =
        if gone || job.cancel.is_cancelled() && finish_reason != "stop" { "cancelled" } else { finish_reason };
    metrics::counter!("bmoe_prompt_tokens_total").increment(g.prompt_tokens as u64);
    metrics::counter!("bmoe_prompt_tokens_reused_total").increment(g.reused_tokens as u64);
    metrics::counter!("bmoe_tokens_generated_total").increment(g.tokens.len() as u64);
    metrics::histogram!("bmoe_prefill_seconds").record(g.prefill_s);
    // Wall time of the decode steps: compute plus the stall that bmoe_io_wait_microseconds_total counts.
    metrics::counter!("bmoe_decode_microseconds_total").increment((predicted_ms * 1e3) as u64);
    if let Some(f) = first {
        // From the request's arrival: its wait in the queue, then its prefill.
        metrics::histogram!("bmoe_time_to_first_token_seconds").record((t0 - job.queued_at).as_secs_f64() + f);
    }
    if g.step_s.len() > 1 {
        metrics::gauge!("bmoe_decode_tokens_per_second").set(g.step_s.len() as f64 / (predicted_ms / 1e3).max(1e-9));
    }
    Ok(Done {
        finish_reason,
        prompt_tokens: g.prompt_tokens,
        reused_tokens: g.reused_tokens,
        prompt_total: tokens.len(),
        completion_tokens: g.tokens.len(),
        prompt_ms: g.prefill_s * 1e3,
        predicted_ms,
        queued_ms: (t0 - job.queued_at).as_secs_f64() * 1e3,
    })
}

#[cfg(test)]
mod tests {
    use super::StopText;

    #[test]
    fn stop_strings_are_cut_and_their_beginnings_held_back() {
        let stops = vec!["END".to_string(), "\n\n".to_string()];
        let mut t = StopText::default();
        assert_eq!(t.push(b"hello E", &stops), ("hello ".into(), false));
        assert_eq!(t.push(b"N", &stops), (String::new(), false));
        assert_eq!(t.push(b"X more", &stops), ("ENX more".into(), false));
        assert_eq!(t.push(b" and\n", &stops), (" and".into(), false));
        assert_eq!(t.push(b"\nafter", &stops), (String::new(), true));
        // A character split over two pieces goes out whole; an invalid byte as U+FFFD.
        let mut t = StopText::default();
        assert_eq!(t.push(&[0xc3], &[]), (String::new(), false));
        assert_eq!(t.push(&[0xa9, 0xff, b'a'], &[]), ("é\u{fffd}a".into(), false));
        assert_eq!(t.push(&[0xe2, 0x82], &[]), (String::new(), false));
        assert_eq!(t.finish(), "\u{fffd}");
        // Piece by piece as the whole: an invalid byte before an incomplete character.
        let bytes = [b'x', 0xff, 0xe2, 0x82, 0xac, 0xf0, 0x9f, b'y', 0x80];
        let mut t = StopText::default();
        let mut got: String = bytes.iter().map(|b| t.push(&[*b], &[]).0).collect();
        got.push_str(&t.finish());
        assert_eq!(got, String::from_utf8_lossy(&bytes));
    }
}
