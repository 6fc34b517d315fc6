//! The `rayforce-rt` command line: `inspect` the CPU counts and what they size, list the
//! `tunables`, `compare` the policies on a built-in workload. It runs on its own `Runtime`.

mod cli;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::process::ExitCode;

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

fn main() -> ExitCode {
    cli::run(std::env::args_os(), &RT)
}
