//! `bmoe run`: generate text. Our decoder (`--engine bmoe`, the default) or plain llama.cpp on
//! mmap (`--engine llama`, the baseline a user would otherwise run) with the same tokenizer,
//! prompt, threads and sampler, and the same timing lines.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context as _};
use bmoe::engine::decoder::{Decoder, Logits, Options};
use bmoe::engine::llama;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// bmoe's own decoder.
    Bmoe,
    /// Plain llama.cpp on mmap (the baseline).
    Llama,
    /// llama.cpp on mmap without its repacked weight layouts: the same ggml kernels bmoe runs
    /// (for measuring what the layouts are worth).
    LlamaPlain,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model (the first shard of a split model).
    #[arg(short = 'm', long)]
    model: PathBuf,
    /// The prompt.
    #[arg(short = 'p', long, default_value = "Once upon a time")]
    prompt: String,
    /// Tokens to generate (generation also stops at an end-of-generation token).
    #[arg(short = 'n', long = "n-predict", default_value_t = 64)]
    n_predict: usize,
    /// CPU threads (default: all cores).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Context length in tokens (prompt + generated).
    #[arg(short = 'c', long = "ctx-size", default_value_t = 4096)]
    ctx: u32,
    /// Widest prefill micro-batch.
    #[arg(long, default_value_t = 512)]
    ubatch: u32,
    /// Wrap the prompt in the model's chat template as a user turn.
    #[arg(long)]
    chat: bool,
    /// Sampling temperature; 0 = greedy (the default).
    #[arg(long, default_value_t = 0.0)]
    temp: f32,
    /// Top-k when sampling (0 = off).
    #[arg(long, default_value_t = 40)]
    top_k: i32,
    /// Top-p when sampling (1 = off).
    #[arg(long, default_value_t = 0.95)]
    top_p: f32,
    /// Seed of the sampler.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Which engine computes.
    #[arg(long, value_enum, default_value_t = Engine::Bmoe)]
    engine: Engine,
    /// Show llama.cpp's own log (model loading details).
    #[arg(long)]
    verbose: bool,
}

/// One engine behind a common face.
enum Runner<'m> {
    Bmoe(Box<Decoder<bmoe::engine::decoder::ResidentExperts>>),
    Llama(llama::Session<'m>),
}

impl Runner<'_> {
    fn forward(&mut self, tokens: &[i32]) -> anyhow::Result<Vec<f32>> {
        Ok(match self {
            Runner::Bmoe(d) => d.forward(tokens, Logits::Last)?,
            Runner::Llama(s) => s.forward(tokens, false)?,
        })
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if !(args.temp >= 0.0 && args.top_p > 0.0 && args.top_p <= 1.0 && args.top_k >= 0) {
        bail!("--temp must be >= 0, --top-p in (0, 1], --top-k >= 0");
    }
    llama::set_verbose(args.verbose);
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let t_load = Instant::now();
    let model_name = args.model.display().to_string();
    // The full llama.cpp model for the baseline; its vocabulary alone for our decoder.
    let lm = match args.engine {
        Engine::Llama => llama::Model::mmap(&args.model),
        Engine::LlamaPlain => llama::Model::mmap_plain_kernels(&args.model),
        Engine::Bmoe => llama::Model::vocab_only(&args.model),
    }
    .with_context(|| format!("loading {model_name} in llama.cpp"))?;
    let mut runner = match args.engine {
        Engine::Bmoe => {
            let opts = Options { n_ctx: args.ctx, n_threads: threads, n_ubatch: args.ubatch, ..Options::default() };
            let d = Decoder::open_resident(&args.model, opts).with_context(|| format!("opening {model_name}"))?;
            eprintln!("mode: resident (bmoe decoder; dense weights and experts on mmap), threads {threads}");
            Runner::Bmoe(Box::new(d))
        }
        Engine::Llama | Engine::LlamaPlain => {
            let s = llama::Session::new(&lm, args.ctx, threads, args.ubatch)?;
            let how = if args.engine == Engine::Llama { "" } else { ", no repacked weights" };
            eprintln!("mode: llama.cpp baseline (plain llama.cpp on mmap{how}), threads {threads}");
            Runner::Llama(s)
        }
    };
    let load_s = t_load.elapsed().as_secs_f64();

    let text = if args.chat { lm.chat(&args.prompt)? } else { args.prompt.clone() };
    let prompt = lm.tokenize(&text, true)?;
    if prompt.is_empty() {
        bail!("the prompt tokenizes to nothing");
    }
    if prompt.len() + args.n_predict > args.ctx as usize {
        bail!("prompt ({} tokens) + -n {} exceed the context of {} (-c)", prompt.len(), args.n_predict, args.ctx);
    }
    let mut sampler = llama::Sampler::new(llama::Sampling {
        temp: args.temp,
        top_k: args.top_k,
        top_p: args.top_p,
        seed: args.seed,
    })?;

    let t_prefill = Instant::now();
    let mut logits = runner.forward(&prompt)?;
    let prefill_s = t_prefill.elapsed().as_secs_f64();

    let mut out = std::io::stdout().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut generated = 0usize;
    let t_gen = Instant::now();
    let mut decode_s = 0.0;
    for _ in 0..args.n_predict {
        let tok = sampler.sample(&logits);
        if lm.is_eog(tok) {
            break;
        }
        generated += 1;
        pending.extend(lm.piece(tok));
        // Print whole UTF-8 characters only; a multi-byte character may span tokens.
        let valid = match std::str::from_utf8(&pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        out.write_all(&pending[..valid])?;
        out.flush()?;
        pending.drain(..valid);
        if generated == args.n_predict {
            break;
        }
        let t = Instant::now();
        logits = runner.forward(&[tok])?;
        decode_s += t.elapsed().as_secs_f64();
    }
    out.write_all(&pending)?;
    writeln!(out)?;
    let _ = t_gen;
    if let Runner::Bmoe(d) = &runner {
        let st = d.stats();
        eprintln!(
            "decoder: {} graphs, {:.3} s in graph compute, {:.3} s in the expert provider",
            st.graphs, st.compute_s, st.provider_s
        );
    }
    let steps = generated.saturating_sub(1);
    eprintln!("load: {load_s:.2} s");
    eprintln!(
        "prefill: {} tokens in {prefill_s:.3} s, {:.1} tok/s",
        prompt.len(),
        prompt.len() as f64 / prefill_s.max(1e-9)
    );
    if steps > 0 {
        eprintln!(
            "generation: {generated} tokens, {:.4} s/token, {:.2} tok/s",
            decode_s / steps as f64,
            steps as f64 / decode_s.max(1e-9)
        );
    } else {
        eprintln!("generation: {generated} tokens, unmeasured (fewer than two tokens)");
    }
    Ok(())
}
