//! `bmoe`: the command line. Flags, subcommands and output formats live here,
//! and this is the only place environment variables are read.
//!
//! Generated text goes to stdout; everything else (mode line, progress,
//! telemetry, warnings) goes to stderr.

mod replay;
mod selfcheck;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "bmoe", about = "Run MoE GGUF models larger than RAM, streaming experts from flash")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compute a small quantised graph with the linked ggml and check it against plain Rust.
    Selfcheck(selfcheck::Args),
    /// Replay a routing trace (route_trace v1) against expert-cache policies and budgets.
    Replay(replay::Args),
}

/// The long `--version` text: version, git revision, ggml version, CPU features.
fn version_text() -> String {
    let info = bmoe::build_info();
    format!(
        "{} (git {})\nggml {}\ntarget {} [{}]\nggml cpu: {}",
        info.version,
        info.git_rev,
        info.ggml_version,
        info.target,
        info.simd_features().join(","),
        bmoe::ggml::cpu_features(),
    )
}

fn run() -> anyhow::Result<()> {
    let version: &'static str = Box::leak(version_text().into_boxed_str());
    let matches = Cli::command().version(version).get_matches();
    let cli = Cli::from_arg_matches(&matches)?;
    match cli.command {
        Command::Selfcheck(args) => selfcheck::run(args),
        Command::Replay(args) => replay::run(args),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`bmoe ... | head`) is not a failure.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "bmoe: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
