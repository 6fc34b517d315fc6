//! The `rayforce-rt` command line: `inspect` the CPU counts per policy, list the `tunables`.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run(std::env::args_os())
}
