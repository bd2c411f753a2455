//! `bmoe`: the command line. Flags, subcommands and output formats live here,
//! and this is the only place environment variables are read.
//!
//! Generated text goes to stdout; everything else (mode line, progress,
//! telemetry, warnings) goes to stderr.

mod bench;
mod chat;
mod guard;
mod inspect;
mod iobench;
mod output;
mod progress;
mod replay;
mod rpc;
mod rpc_server;
mod run;
mod selfcheck;
mod serve;
mod synth;

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
    /// Generate text from a model (our decoder, or `--engine llama` for plain llama.cpp).
    Run(run::Args),
    /// Talk to a model: a conversation in its chat template that keeps the KV cache and the
    /// expert cache between turns (`bmoe run -cnv` is the same).
    Chat(run::Args),
    /// An OpenAI-compatible HTTP server (completions, chat completions, streamed or not,
    /// tokenize, Prometheus metrics) over one engine kept warm between requests.
    Serve(serve::ServeArgs),
    /// Benchmark prompt processing and text generation over lists of knobs, as llama-bench
    /// does for llama.cpp (repetitions interleaved; mean ± sd and median per row).
    Bench(bench::Args),
    /// Compute a small quantised graph with the linked ggml and check it against plain Rust.
    Selfcheck(selfcheck::Args),
    /// Measure the read engine (or mmap) on a file: MiB/s, IOPS, latency p50/p99.
    Iobench(iobench::Args),
    /// Write a synthetic MoE GGUF model (random weights, a real model's format and shape).
    Synth(synth::Args),
    /// Show a model's shape, dense and expert bytes, entry size per layer and token cycle.
    Inspect(inspect::Args),
    /// Replay a routing trace (route_trace v1) against expert-cache policies and budgets.
    Replay(replay::Args),
    /// Serve this machine's CPU and RAM to a coordinator's routed experts (`bmoe run --rpc
    /// HOST:PORT`): ggml's own RPC server, loopback by default (no authentication, no encryption).
    RpcServer(rpc_server::Args),
    /// Drive one expert host for a coordinator (started by `--rpc`, never by hand).
    #[command(hide = true)]
    RpcWorker,
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
        bmoe::engine::ggml::cpu_features(),
    )
}

/// llama.cpp's multi-letter short flags, which a parser of single-letter short flags would read
/// as a letter and a value (`-ngl 99` as `-n gl`), spelled as the long flags they stand for.
const LLAMA_FLAGS: &[(&str, &str)] = &[
    ("-cnv", "--conversation"),
    ("-ngl", "--n-gpu-layers"),
    ("-sys", "--system-prompt"),
    ("-ub", "--ubatch"),
    ("-fa", "--flash-attn"),
];

/// `argv` with [`LLAMA_FLAGS`] rewritten (for `run`, `chat` and `serve`, before a `--`).
fn llama_flags(argv: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut argv: Vec<std::ffi::OsString> = argv.collect();
    if !argv.get(1).is_some_and(|c| c == "run" || c == "chat" || c == "serve") {
        return argv;
    }
    for a in argv.iter_mut().skip(2) {
        if a == "--" {
            break;
        }
        let Some(s) = a.to_str() else { continue };
        let (flag, value) = s.split_once('=').map_or((s, None), |(f, v)| (f, Some(v)));
        if let Some((_, long)) = LLAMA_FLAGS.iter().find(|(short, _)| *short == flag) {
            *a = value.map_or_else(|| (*long).into(), |v| format!("{long}={v}").into());
        }
    }
    argv
}

fn run() -> anyhow::Result<()> {
    let version: &'static str = Box::leak(version_text().into_boxed_str());
    let matches = Cli::command().version(version).get_matches_from(llama_flags(std::env::args_os()));
    let cli = Cli::from_arg_matches(&matches)?;
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Selfcheck(args) => selfcheck::run(args),
        Command::Iobench(args) => iobench::run(args),
        Command::Synth(args) => synth::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Replay(args) => replay::run(args),
        Command::RpcServer(args) => rpc_server::run(args),
        Command::RpcWorker => rpc_server::worker(),
    }
}

fn main() -> ExitCode {
    // `bmoe … | head`: a closed pipe ends the process quietly, as for any Unix filter, instead
    // of a panic in the middle of a print.
    // SAFETY: resetting SIGPIPE to its default disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    guard::install_fault_guards();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Interrupted: the summary and the outputs are written; only the code is left.
            if let Some(guard::Exit(code)) = e.downcast_ref::<guard::Exit>() {
                return ExitCode::from(*code);
            }
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

#[cfg(test)]
mod tests {
    /// clap's own consistency checks of every subcommand (unique names, groups, …).
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory as _;
        super::Cli::command().debug_assert();
    }

    #[test]
    fn llama_cpp_multi_letter_flags_become_long_ones() {
        let argv = |v: &[&str]| super::llama_flags(v.iter().map(std::ffi::OsString::from)).into_iter();
        let got: Vec<_> = argv(&["bmoe", "run", "-ngl", "99", "-fa", "-cnv", "-ub=64", "--", "-ngl"]).collect();
        assert_eq!(
            got,
            ["bmoe", "run", "--n-gpu-layers", "99", "--flash-attn", "--conversation", "--ubatch=64", "--", "-ngl"]
        );
        let got: Vec<_> = argv(&["bmoe", "synth", "-ngl"]).collect();
        assert_eq!(got, ["bmoe", "synth", "-ngl"]);
    }
}
