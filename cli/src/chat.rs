//! `bmoe chat` (and `bmoe run -cnv`/`-i`): a conversation in the terminal. Each turn is the
//! model's chat template (llama.cpp's template engine) rendered over the whole conversation,
//! but only the tokens after what the context already holds are evaluated: the KV cache and
//! the expert cache stay warm between turns, so a turn's first token waits for its own words,
//! not for the history again. Ctrl-C during a reply stops that reply; Ctrl-C at the prompt or
//! Ctrl-D ends the conversation with its summary. `/save` and `/load` keep a conversation
//! (tokens, KV cache, the experts the cache held) across processes.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _};
use bmoe::engine::engine::{Engine, GenParams};
use bmoe::engine::llama;
use bmoe::engine::session::{CancelToken, Control, Generation, StopReason, Token};
use bmoe::engine::telemetry::{Meter, Summary, SummaryInputs};
use serde_json::json;

use crate::guard::{Exit, Signals};
use crate::output::TextStream;
use crate::run::Args;

/// How a harmony template (llama.cpp's `gpt-oss`, OPENAI_MOE) opens the assistant's turn.
const HARMONY_ASSISTANT: &str = "<|start|>assistant";
/// What `--no-think` appends after it: the final channel, so the model answers without first
/// writing in its analysis channel.
const HARMONY_FINAL: &str = "<|channel|>final<|message|>";

/// A chat template: the model's own, a built-in llama.cpp knows by name, or a file's text.
#[derive(Clone, Debug)]
pub struct Template {
    /// What llama.cpp's template engine is given: a name or a template's text.
    text: String,
    /// It opens the assistant's turn as harmony does (gpt-oss).
    harmony: bool,
}

impl Template {
    /// The template `spec` names (`--chat-template`), else the model's own.
    ///
    /// # Errors
    /// No template (the model has none and none was given), a name llama.cpp does not know
    /// that is no file either, an unreadable file, or a template llama.cpp cannot apply.
    pub fn new(lm: &llama::Model, spec: Option<&str>) -> anyhow::Result<Self> {
        let names = llama::builtin_templates();
        let text = match spec {
            None => lm.chat_template().with_context(|| {
                format!(
                    "the model has no chat template (tokenizer.chat_template): pass --chat-template NAME|FILE \
                     (names: {})",
                    names.join(", ")
                )
            })?,
            Some(s) if names.iter().any(|n| n == s) => s.to_string(),
            Some(s) if Path::new(s).is_file() => {
                std::fs::read_to_string(s).with_context(|| format!("--chat-template {s}: reading the file"))?
            }
            Some(s) => {
                bail!("--chat-template {s}: not a template llama.cpp knows nor a file (names: {})", names.join(", "))
            }
        };
        let probe = llama::apply_template(&text, &[("user", "x")], true)
            .with_context(|| "the chat template: llama.cpp's template engine does not recognise it")?;
        Ok(Self { harmony: probe.ends_with(HARMONY_ASSISTANT), text })
    }

    /// `messages` rendered, the assistant's turn opened (with `--no-think`'s final channel for
    /// harmony) when `open`.
    ///
    /// # Errors
    /// llama.cpp's.
    pub fn render(&self, messages: &[(String, String)], open: bool, no_think: bool) -> anyhow::Result<String> {
        let m: Vec<(&str, &str)> = messages.iter().map(|(r, c)| (r.as_str(), c.as_str())).collect();
        let mut text = llama::apply_template(&self.text, &m, open)?;
        if open && no_think && self.harmony {
            text.push_str(HARMONY_FINAL);
        }
        Ok(text)
    }

    /// A user message as the template gets it: with `--no-think`, Qwen's `/no_think` switch
    /// (harmony's is the final channel, see [`Self::render`]).
    pub fn user(&self, text: &str, no_think: bool) -> String {
        if no_think && !self.harmony {
            format!("{text} /no_think")
        } else {
            text.to_string()
        }
    }

    /// One user turn (after an optional system message) with the assistant's turn open: `bmoe
    /// run --chat`.
    ///
    /// # Errors
    /// llama.cpp's.
    pub fn single_turn(&self, system: Option<&str>, user: &str, no_think: bool) -> anyhow::Result<String> {
        let mut m = Vec::new();
        if let Some(s) = system {
            m.push(("system".to_string(), s.to_string()));
        }
        m.push(("user".to_string(), self.user(user, no_think)));
        self.render(&m, true, no_think)
    }
}

/// A conversation: its messages and the tokens the model has seen for them.
#[derive(Clone, Debug, Default, PartialEq)]
struct Conversation {
    /// (role, content), the system message first when there is one.
    messages: Vec<(String, String)>,
    /// Every token of the conversation as the model saw or produced it: each turn's prompt
    /// tokens, the reply's tokens and the end token that closed it. The engine's context is a
    /// prefix of this (a reply's last token and its end token were never run).
    tokens: Vec<i32>,
    /// The text `tokens` stand for: the last turn's rendered prompt and the reply.
    text: String,
    /// The end token's text when the last reply ended with one (part of `text`).
    end_text: String,
    /// Replies so far: each reply's sampler is seeded with the seed and this count, so that a
    /// loaded conversation samples as the one that never stopped.
    replies: u64,
}

impl Conversation {
    fn new(system: Option<&str>) -> Self {
        let mut c = Self::default();
        if let Some(s) = system {
            c.messages.push(("system".into(), s.into()));
        }
        c
    }

    /// The tokens of the conversation with `user`'s message added and the assistant's turn
    /// open: the tokens already seen, then the new text's. The new text is what the template
    /// renders after what the model saw (its last prompt and reply, and the end token that
    /// closed it); where the template renders the past otherwise (llama.cpp's harmony closes an
    /// assistant turn with `<|return|>` and has no channel; a template that drops earlier
    /// thinking), it is what the template adds after its own rendering of the past, as
    /// llama-cli does; failing both, the conversation is tokenized again and the engine keeps
    /// the longest prefix its context holds.
    fn turn(&self, lm: &llama::Model, tmpl: &Template, user: &str, no_think: bool) -> anyhow::Result<Vec<i32>> {
        let mut m = self.messages.clone();
        m.push(("user".into(), tmpl.user(user, no_think)));
        let full = tmpl.render(&m, true, no_think)?;
        if !self.tokens.is_empty() {
            let after = |seen: &[i32], rest: &str| -> anyhow::Result<Vec<i32>> {
                let mut t = seen.to_vec();
                t.extend(lm.tokenize(rest, false)?);
                Ok(t)
            };
            if let Some(rest) = full.strip_prefix(&self.text) {
                return after(&self.tokens, rest);
            }
            let without_end = &self.text[..self.text.len() - self.end_text.len()];
            if let (false, Some(rest)) = (self.end_text.is_empty(), full.strip_prefix(without_end)) {
                return after(&self.tokens[..self.tokens.len() - 1], rest);
            }
            if let Some(rest) = full.strip_prefix(&tmpl.render(&self.messages, false, no_think)?) {
                return after(&self.tokens, rest);
            }
        }
        Ok(lm.tokenize(&full, true)?)
    }

    /// Record a turn: `user`'s message, the rendered prompt `tokens`, and the reply.
    fn record(
        &mut self,
        lm: &llama::Model,
        tmpl: &Template,
        user: &str,
        no_think: bool,
        tokens: Vec<i32>,
        g: &Generation,
    ) -> anyhow::Result<()> {
        self.messages.push(("user".into(), tmpl.user(user, no_think)));
        let prompt_text = tmpl.render(&self.messages, true, no_think)?;
        let reply: Vec<u8> = g.tokens.iter().flat_map(|&t| lm.piece(t)).collect();
        // The template engine takes C strings: a NUL a model produced is kept as U+FFFD in the
        // message (the tokens themselves stay as they were).
        let reply = String::from_utf8_lossy(&reply).replace('\0', "\u{fffd}");
        self.tokens = tokens;
        self.tokens.extend(&g.tokens);
        self.end_text = g.end_token.map(|t| lm.token_text(t)).unwrap_or_default();
        self.tokens.extend(g.end_token);
        self.text = format!("{prompt_text}{reply}{}", self.end_text);
        self.messages.push(("assistant".into(), reply));
        self.replies += 1;
        Ok(())
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "messages": self.messages,
            "tokens": self.tokens,
            "text": self.text,
            "end_text": self.end_text,
            "replies": self.replies,
        })
    }

    /// Forget the tokens (the context they stood for is gone); the next turn tokenizes the
    /// whole conversation again.
    fn forget_tokens(&mut self) {
        self.tokens.clear();
        self.text.clear();
        self.end_text.clear();
    }

    /// The conversation a session holds, checked against the context it was saved with
    /// (`context`: a prefix of its tokens) and the vocabulary.
    ///
    /// # Errors
    /// What is missing or inconsistent, naming the field.
    fn from_session(v: &serde_json::Value, context: &[i32], n_vocab: usize) -> anyhow::Result<Self> {
        let c = Self::from_json(v)?;
        if let Some((i, (role, _))) =
            c.messages.iter().enumerate().find(|(_, (r, _))| !matches!(r.as_str(), "system" | "user" | "assistant"))
        {
            bail!("the session's message {i} has the role {role:?} (a chat has system, user and assistant messages)");
        }
        let replies = c.messages.iter().filter(|(r, _)| r == "assistant").count() as u64;
        if c.replies != replies {
            bail!("the session's reply count is {}, but it holds {replies} replies", c.replies);
        }
        if let Some(t) = c.tokens.iter().find(|&&t| t < 0 || t as usize >= n_vocab) {
            bail!("the session's conversation holds token {t}, outside the vocabulary of {n_vocab}");
        }
        if !c.tokens.starts_with(context) {
            bail!(
                "the session's conversation ({} tokens) does not begin with the {} tokens of its context",
                c.tokens.len(),
                context.len()
            );
        }
        Ok(c)
    }

    fn from_json(v: &serde_json::Value) -> anyhow::Result<Self> {
        let c = v.get("chat").context("the session was not saved by bmoe chat (no conversation in it)")?;
        let c = Self {
            messages: serde_json::from_value(c["messages"].clone()).context("the session's messages")?,
            tokens: serde_json::from_value(c["tokens"].clone()).context("the session's tokens")?,
            text: serde_json::from_value(c["text"].clone()).context("the session's text")?,
            end_text: serde_json::from_value(c["end_text"].clone()).context("the session's end text")?,
            replies: serde_json::from_value(c["replies"].clone()).context("the session's reply count")?,
        };
        if !c.text.ends_with(&c.end_text) {
            bail!("the session's conversation is inconsistent (its end text)");
        }
        Ok(c)
    }
}

/// One line of input.
enum Input {
    Line(String),
    /// Ctrl-D on an empty line, or the end of piped input.
    Eof,
    /// Ctrl-C (or SIGTERM) while waiting.
    Interrupted,
}

/// Reads lines from stdin while watching the cancel flag (a blocking read would not see
/// Ctrl-C: the signal handler restarts it). A line ending in `\` continues on the next one.
struct Lines {
    buf: Vec<u8>,
}

impl Lines {
    fn read(&mut self, cancel: &CancelToken) -> std::io::Result<Input> {
        let mut text = String::new();
        loop {
            match self.raw(cancel)? {
                Input::Line(l) => match l.strip_suffix('\\') {
                    Some(head) => {
                        text.push_str(head);
                        text.push('\n');
                    }
                    None => {
                        text.push_str(&l);
                        return Ok(Input::Line(text));
                    }
                },
                Input::Eof if !text.is_empty() => return Ok(Input::Line(text)),
                other => return Ok(other),
            }
        }
    }

    fn raw(&mut self, cancel: &CancelToken) -> std::io::Result<Input> {
        loop {
            if cancel.is_cancelled() {
                self.buf.clear();
                return Ok(Input::Interrupted);
            }
            if let Some(at) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=at).collect();
                let line = String::from_utf8_lossy(&line[..at]).trim_end_matches('\r').to_string();
                return Ok(Input::Line(line));
            }
            let mut pfd = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
            // SAFETY: one live pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, 100) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                continue;
            }
            let mut chunk = [0u8; 4096];
            // SAFETY: chunk has chunk.len() writable bytes.
            let n = unsafe { libc::read(0, chunk.as_mut_ptr().cast(), chunk.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                if self.buf.is_empty() {
                    return Ok(Input::Eof);
                }
                let line = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
                return Ok(Input::Line(line));
            }
            self.buf.extend_from_slice(&chunk[..n as usize]);
        }
    }
}

const HELP: &str = "commands: /reset (start over; the expert cache stays warm), /stats (the last reply's \
                    telemetry), /save FILE, /load FILE (a conversation with its KV cache and cached experts), \
                    /help, /quit (or Ctrl-D); Ctrl-C stops a reply; a line ending in \\ continues";

/// The conversation's totals, for the summary at the end.
#[derive(Default)]
struct Totals {
    replies: usize,
    generated: usize,
    evaluated: usize,
    reused: usize,
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    args.conversation = true;
    args.warn_cpu_irrelevant();
    let model_path = args.model.clone().context("-m MODEL is required")?;
    llama::set_verbose(args.verbose);
    let signals = Signals::install(CancelToken::default()).context("installing the signal handlers")?;
    let model_files = bmoe::engine::gguf::model_files(&model_path);
    let mut engine = crate::run::open(&args, &model_path, &signals)?;
    let lm = engine.tokenizer().clone();
    let tmpl = Template::new(&lm, args.chat_template.as_deref())?;
    let n_predict = args.n_tokens(usize::MAX);
    let params = GenParams { n_predict, ignore_eos: args.ignore_eos };
    let tty_in = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let tty_out = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let color = args.color && tty_out;
    let n_ctx = engine.report().n_ctx as usize;
    eprintln!("{}", engine.report().load_line());
    if tty_in {
        eprintln!("chat: {HELP}");
    }
    let mut conv = Conversation::new(args.system_prompt.as_deref());
    let mut lines = Lines { buf: Vec::new() };
    let mut last: Option<Vec<String>> = None;
    let mut totals = Totals::default();
    let started = Instant::now();
    let mut out = std::io::stdout();
    let code = loop {
        if tty_in {
            write!(out, "\n> ")?;
            out.flush()?;
        }
        let line = match lines.read(&signals.cancel)? {
            Input::Line(l) => l,
            Input::Eof => {
                if tty_in {
                    writeln!(out)?;
                }
                break 0;
            }
            Input::Interrupted => {
                if tty_in {
                    writeln!(out)?;
                }
                break signals.exit_code();
            }
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(cmd) = trimmed.strip_prefix('/') {
            let (name, arg) = cmd.split_once(char::is_whitespace).map_or((cmd, ""), |(a, b)| (a, b.trim()));
            match name {
                "quit" | "exit" | "bye" => break 0,
                "help" | "?" => eprintln!("{HELP}"),
                "reset" => {
                    engine.reset();
                    conv = Conversation::new(args.system_prompt.as_deref());
                    last = None;
                    eprintln!("reset: the conversation is empty (the expert cache stays warm)");
                }
                "stats" => match &last {
                    Some(lines) => lines.iter().for_each(|l| eprintln!("{l}")),
                    None => eprintln!("stats: no reply yet"),
                },
                "save" if !arg.is_empty() => {
                    let path = PathBuf::from(arg);
                    match save(&mut engine, &conv, &path, &model_files) {
                        Ok(()) => eprintln!(
                            "saved: {} messages, {} tokens of context, to {}",
                            conv.messages.len(),
                            engine.context().len(),
                            path.display()
                        ),
                        Err(e) => eprintln!("save: {e:#}"),
                    }
                }
                "load" if !arg.is_empty() => {
                    let t = Instant::now();
                    // Everything is checked before anything changes: a load that fails leaves
                    // the conversation, its KV cache and its expert cache as they were.
                    match load(&mut engine, Path::new(arg), args.no_kv_reuse) {
                        Ok((c, warm)) => {
                            conv = c;
                            last = None;
                            if let Err(e) = warm {
                                eprintln!("warning: warming the expert cache failed: {e} (the conversation is loaded)");
                            }
                            let warmed = engine.streamer().map(|s| s.cache().resident_ids().count());
                            eprintln!(
                                "loaded: {} messages, {} tokens of context{} in {:.2} s",
                                conv.messages.len(),
                                engine.context().len(),
                                warmed.map_or(String::new(), |n| format!(", {n} experts cached")),
                                t.elapsed().as_secs_f64()
                            );
                        }
                        Err(e) => eprintln!("load: {e:#} (nothing was loaded; the conversation is as it was)"),
                    }
                }
                "save" | "load" => eprintln!("/{name} needs a FILE"),
                _ => eprintln!("unknown command /{name}; {HELP}"),
            }
            continue;
        }
        let tokens = conv.turn(&lm, &tmpl, &line, args.no_think)?;
        if tokens.len() >= n_ctx {
            eprintln!(
                "context full: the conversation with this message is {} tokens, the context holds {n_ctx} (-c); \
                 the message was not sent: /reset to start over, or restart with a larger -c",
                tokens.len()
            );
            continue;
        }
        if args.verbose_prompt {
            // The turn's tokens past what the context holds: what this turn evaluates.
            let held = engine.context().iter().zip(&tokens).take_while(|(a, b)| a == b).count();
            let shown: Vec<(i32, String)> = tokens[held..].iter().map(|&t| (t, lm.token_text(t))).collect();
            eprintln!("prompt: {} tokens: {}", shown.len(), json!(shown));
        }
        let mut sampling = args.sampling();
        sampling.seed = sampling.seed.wrapping_add(conv.replies as u32);
        let mut sampler = llama::Sampler::new(sampling, lm.n_vocab())?;
        if sampling.penalizes() {
            tokens.iter().for_each(|&t| sampler.accept(t));
        }
        if args.no_kv_reuse {
            engine.reset();
        }
        let mut meter = Meter::start(engine.telemetry());
        let lossy_start = engine.lossy_counters();
        let mut text = TextStream::default();
        let mut io_error = None;
        let vocab = lm.clone();
        let bar = crate::progress::Bar::tokens("prefill");
        if color {
            out.write_all(b"\x1b[32m")?;
        }
        let g = engine.generate_from(
            &tokens,
            &params,
            &mut |l| sampler.sample(l),
            &mut |t: Token| {
                meter.token(&t);
                if let Err(e) = text.push(&mut out, &vocab.piece(t.id)) {
                    io_error = Some(e);
                    return Control::Stop;
                }
                Control::Continue
            },
            &mut |done, total| bar.set(done as u64, total as u64),
        );
        drop(bar);
        let g = match g {
            Err(e @ bmoe::engine::Error::Corrupt(_)) => {
                // The context's state is garbage (a damaged session): drop it, keep the
                // messages; the next turn evaluates the conversation again from its text.
                if color {
                    out.write_all(b"\x1b[0m")?;
                }
                engine.reset();
                conv.forget_tokens();
                eprintln!(
                    "reply: error: {e}; the context was dropped and the message not sent (the next message evaluates \
                     the conversation again)"
                );
                continue;
            }
            g => g?,
        };
        text.finish(&mut out)?;
        if color {
            out.write_all(b"\x1b[0m")?;
        }
        writeln!(out)?;
        out.flush()?;
        if let Some(e) = io_error {
            return Err(e.into());
        }
        let interrupted = g.stop == StopReason::Interrupted;
        if interrupted {
            signals.cancel.clear();
        }
        totals.evaluated += g.prompt_tokens;
        totals.reused += g.reused_tokens;
        if interrupted && g.tokens.is_empty() {
            eprintln!("stopped before the reply began; the message was not sent");
            continue;
        }
        totals.replies += 1;
        totals.generated += g.tokens.len();
        conv.record(&lm, &tmpl, &line, args.no_think, tokens, &g)?;
        let summary = Summary::new(SummaryInputs {
            generation: &g,
            meter: &meter,
            end: &engine.telemetry(),
            threads: engine.report().threads,
            graph_bytes: engine.graph_buffer_bytes(),
            stream: engine.stream_figures().as_ref(),
            load_s: None,
            lossy: crate::run::lossy_figures(engine.report(), lossy_start, engine.lossy_counters()),
        });
        let steps = g.step_s.len();
        let decode_s: f64 = g.step_s.iter().sum();
        eprintln!(
            "reply: {} tokens, first after {:.2} s (prefill {} new tokens, {} reused), {}; stop: {}; context {} of {n_ctx}",
            g.tokens.len(),
            g.prefill_s,
            g.prompt_tokens,
            g.reused_tokens,
            if steps > 0 { format!("{:.2} tok/s", steps as f64 / decode_s.max(1e-9)) } else { "tok/s unmeasured".into() },
            g.stop.describe(),
            engine.context().len(),
        );
        last = Some(summary.lines);
    };
    eprintln!(
        "session: {} replies, {} tokens generated, {} prompt tokens evaluated and {} reused, context {} of {n_ctx}, \
         {:.1} s",
        totals.replies,
        totals.generated,
        totals.evaluated,
        totals.reused,
        engine.context().len(),
        started.elapsed().as_secs_f64()
    );
    if let (Some(p), Some(f)) = (engine.telemetry().provider, engine.stream_figures()) {
        let all = (p.hits + p.misses).max(1) as f64;
        eprintln!(
            "session: moe-cache hit {:.1} % overall, read {:.1} MiB, resident {:.0} MiB of {:.0} MiB, evictions {}",
            p.hits as f64 / all * 100.0,
            p.bytes_read as f64 / (1 << 20) as f64,
            p.resident_bytes as f64 / (1 << 20) as f64,
            f.budget_mib,
            p.evictions
        );
    }
    if code != 0 {
        return Err(Exit(code).into());
    }
    Ok(())
}

/// `/load FILE`: the session read and checked whole (the engine's part and the conversation),
/// then restored (with `--no-kv-reuse`, its history only); the conversation and the warm's
/// result. Nothing changes unless every check passed.
fn load(
    engine: &mut Engine,
    path: &Path,
    history_only: bool,
) -> anyhow::Result<(Conversation, Result<usize, bmoe::engine::Error>)> {
    let saved = engine.read_session(path)?;
    let conv = Conversation::from_session(&saved.extra, &saved.tokens, engine.tokenizer().n_vocab())
        .with_context(|| path.display().to_string())?;
    if history_only {
        return Ok((conv, Ok(0)));
    }
    let warm = engine.restore_session(saved)?;
    Ok((conv, warm))
}

/// `/save FILE`: the engine's session with the conversation in it; never one of the model's
/// files.
fn save(engine: &mut Engine, conv: &Conversation, path: &Path, model_files: &[PathBuf]) -> anyhow::Result<()> {
    crate::output::check_target("/save", path, model_files)?;
    engine.save_session(path, json!({ "chat": conv.to_json() }))?;
    Ok(())
}
