//! The `rayforce-rt` command line: `inspect` the CPU counts and what they size, list the
//! `tunables`, `compare` the policies on a built-in workload. It runs on its own `Runtime`.

mod cli;

use rayforce_rt::{Choices, Runtime};
use std::process::ExitCode;

/// Chooses nothing in code, so every tunable shows its default or the environment's value.
#[global_allocator]
static RT: Runtime = Runtime::with_choices(Choices::new());

fn main() -> ExitCode {
    cli::run(std::env::args_os(), &RT)
}
