//! The `rayforce-rt` command line: `inspect` the CPU counts and what they size, list the
//! `tunables`, `compare` the policies on a built-in workload. It runs on its own `Runtime`.

mod cli;

use rayforce_rt::{Choices, Runtime};
use std::process::ExitCode;

/// Chooses nothing in code, so every tunable shows its default or the environment's value;
/// in strict mode the CLI reports invalid tunables itself (`tunables` exits with code 2)
/// rather than aborting at its first allocation.
#[global_allocator]
static RT: Runtime = Runtime::with_choices(Choices::new().strict_aborts(false));

fn main() -> ExitCode {
    cli::run(std::env::args_os(), &RT)
}
