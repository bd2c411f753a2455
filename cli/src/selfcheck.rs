//! `bmoe selfcheck`: a one-line check that the linked ggml computes correctly here.

use anyhow::{bail, Context as _};
use bmoe::engine::ggml::{self, GgmlType, ThreadPool};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Threads of the ggml CPU pool.
    #[arg(short = 't', long, default_value_t = 2)]
    threads: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut pool = ThreadPool::new(args.threads).context("creating the ggml thread pool")?;
    let mut parts = Vec::new();
    for ty in [GgmlType::Q8_0, GgmlType::Q4_K] {
        let check = ggml::self_check(&mut pool, ty, 64, 1024, 42).with_context(|| format!("{ty} self-check"))?;
        if !check.passed() {
            bail!("ggml self-check FAILED: {ty} matmul off by {:.3e} (over tolerance)", check.max_abs_err());
        }
        parts.push(format!("{ty} {}x{} max|err| {:.2e}", check.rows, check.cols, check.max_abs_err()));
    }
    eprintln!("ggml self-check: ok ({}; matmul+add on {} threads vs plain Rust)", parts.join(", "), pool.n_threads());
    Ok(())
}
