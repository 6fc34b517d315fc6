//! Argument parsing and dispatch; every error is one line on stderr and exit code 2.

use crate::failure::Failure;
use crate::{baseline, compare, engine, inspect, tunables};
use clap::error::ErrorKind;
use clap::{Parser, Subcommand};
use rayforce_rt::Runtime;
use std::ffi::OsString;
use std::process::ExitCode;

/// rayforce-rt: one CPU-count policy sizes the allocator's arenas and the worker pool.
#[derive(Parser)]
#[command(name = "rayforce-rt", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the CPU count under each policy, where it came from, and the cgroup quota.
    Inspect(inspect::Args),
    /// List every tunable (value, default, range, source) and every diagnostic about them.
    Tunables(tunables::Args),
    /// Run built-in data-parallel workloads on rayforce-rt and on rayon (with the system
    /// allocator, with mimalloc, and on rayforce-rt), side by side, with a verdict.
    Compare(compare::Args),
    /// A baseline process of `compare` (started by it, not by hand).
    #[command(name = "compare-baseline", hide = true)]
    CompareBaseline(baseline::Args),
}

/// Parses `args` and runs the command; `engine` is this process's allocator.
pub(crate) fn run(
    args: impl IntoIterator<Item = OsString>,
    runtime: &'static Runtime,
    engine: engine::Kind,
) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // No subcommand: the whole help, as a usage error.
            let _ = err.print();
            return ExitCode::from(2);
        }
        Err(err) => {
            let rendered = err.render().to_string();
            let first_line = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("rayforce-rt: {}", first_line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args, runtime),
        Command::Tunables(args) => tunables::run(&args, runtime),
        Command::Compare(args) => compare::run(&args, runtime),
        Command::CompareBaseline(args) => baseline::serve(&args, engine, runtime),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("rayforce-rt: {message}");
            ExitCode::from(2)
        }
    }
}
