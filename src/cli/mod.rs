//! Argument parsing and dispatch; every error is one line on stderr and exit code 2.

mod compare;
mod inspect;
mod tunables;
mod workloads;

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
    /// Run a built-in data-parallel workload under each policy, side by side.
    Compare(compare::Args),
}

/// A failure to report: one line, exit code 2.
pub(crate) struct Failure(pub String);

/// Parses `args` and runs the command.
pub(crate) fn run(args: impl IntoIterator<Item = OsString>, runtime: &'static Runtime) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version
            let _ = err.print();
            return ExitCode::SUCCESS;
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("rayforce-rt: {message}");
            ExitCode::from(2)
        }
    }
}
