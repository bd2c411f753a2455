//! `bmoe synth`: write a synthetic MoE GGUF model (random weights, real format and shape).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use bmoe::engine::synth::{self, Options, Quant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Architecture (`general.architecture`): qwen3moe, olmoe, llama (Mixtral), qwen2moe, gpt-oss;
    /// for the generic decoder only: gemma4, deepseek2, qwen35moe, qwen3next and the others
    /// `bmoe run --list-archs` names as gated. Default: the preset's own (a real model's
    /// shape), else qwen3moe.
    #[arg(long)]
    arch: Option<String>,
    /// Shape preset: tiny, small (any architecture), or a real model's: qwen3-30b-a3b,
    /// olmoe-1b-7b, mixtral-8x7b, qwen1.5-moe-a2.7b, gpt-oss-20b, gpt-oss-120b, gemma-4-26b-a4b,
    /// deepseek-v3, kimi-k2, qwen3.6-35b-a3b, qwen3.5-397b-a17b, qwen3-next-80b-a3b (and the
    /// others `bmoe run --list-archs` lists).
    #[arg(long, default_value = "tiny")]
    shape: String,
    /// Quantisation: f32, f16, q8_0, q4_k_m (llama-quantize's Q4_K_M mix), mxfp4 (its MXFP4_MOE mix:
    /// MXFP4 experts, q8_0 for the rest, as the gpt-oss files).
    #[arg(long, default_value = "q4_k_m")]
    quant: String,
    /// Seed of every weight and of the tokenizer's merges.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (with --split N: PREFIX.gguf becomes PREFIX-0000i-of-0000N.gguf).
    #[arg(short = 'o', long)]
    output: PathBuf,
    /// Split the model into N shard files, as llama.cpp's gguf-split does.
    #[arg(long, default_value_t = 1)]
    split: u32,
    /// Plant Zipf-like expert popularity with this exponent (0 = uniform routing).
    #[arg(long, default_value_t = 0.0)]
    route_skew: f32,
    /// Write only the headers, the tensor data left as a hole: a file of the model's full size
    /// that takes no disk space, for `bmoe inspect` of a real model's shape (its weights read
    /// as zeros: not for running).
    #[arg(long)]
    sparse: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let quant: Quant = args.quant.parse()?;
    let arch = args.arch.clone().unwrap_or_else(|| synth::preset_arch(&args.shape).unwrap_or("qwen3moe").to_string());
    let mut o = Options::new(&arch, &args.shape, quant, args.seed)?;
    o.split = args.split;
    o.route_skew = args.route_skew;
    let start = Instant::now();
    let bar = (!args.quiet).then(|| crate::progress::Bar::bytes("synth"));
    let mut progress = |done: u64, total: u64| {
        if let Some(b) = &bar {
            b.set(done, total);
        }
    };
    let paths =
        if args.sparse { synth::write_sparse(&o, &args.output) } else { synth::write(&o, &args.output, &mut progress) }
            .with_context(|| format!("writing {}", args.output.display()))?;
    drop(bar);
    let bytes: u64 = paths.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    eprintln!(
        "synth: {} {} {} seed {}: {} file(s), {} bytes ({:.2} GB){} in {:.1}s",
        o.arch,
        o.shape_name,
        args.quant,
        o.seed,
        paths.len(),
        bytes,
        bytes as f64 / 1e9,
        if args.sparse { " sparse (headers only)" } else { "" },
        start.elapsed().as_secs_f64()
    );
    if o.route_skew > 0.0 {
        let p = synth::skew::measure(&o.shape, o.seed, o.route_skew, 0, 2000);
        let curve: Vec<String> = [0.05, 0.1, 0.2, 0.3, 0.5]
            .iter()
            .map(|&f| format!("{:.0}%:{:.1}%", f * 100.0, p.hit_rate(f) * 100.0))
            .collect();
        eprintln!(
            "synth: route-skew {}: measured on layer 0's router with {} random hidden vectors at top-{}: ideal static-cache hit rate by cached share of experts {}",
            o.route_skew,
            p.samples,
            p.k,
            curve.join(" ")
        );
    }
    for p in &paths {
        println!("{}", p.display());
    }
    Ok(())
}
