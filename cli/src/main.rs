//! The `rayforce-rt` command line: `inspect` the CPU counts and what they size, list the
//! `tunables`, `compare` rayforce-rt with rayon on the system allocator and on mimalloc. It
//! runs on its own `Runtime`.

mod baseline;
mod command;
mod compare;
mod engine;
mod failure;
mod inspect;
mod plot;
mod report;
mod spread;
#[cfg(target_os = "linux")]
mod topology_report;
mod tunables;
mod workloads;

use rayforce_rt::{Choices, Runtime};
use std::process::ExitCode;

/// Chooses nothing in code, so every tunable shows its default or the environment's value;
/// in strict mode the CLI reports invalid tunables itself (`tunables` exits with code 2)
/// rather than aborting at its first allocation.
static RT: Runtime = Runtime::with_choices(Choices::new().strict_aborts(false));

/// The runtime, except in `compare`'s baseline processes (`engine.rs`).
#[global_allocator]
static ENGINE: engine::Engine = engine::Engine::new(&RT);

fn main() -> ExitCode {
    // As other command-line tools: a reader that closed the pipe (`| head`) ends the
    // process quietly, rather than make `println!` panic on the write.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    command::run(std::env::args_os(), &RT, ENGINE.kind())
}
