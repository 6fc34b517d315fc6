//! Strict tunables stop the program that uses the runtime: with `Runtime` as the global
//! allocator and `rayforce.tunables.strict=1`, an invalid `RAYFORCE_TUNABLES` entry ends the
//! process at its first allocation with SIGABRT, after every diagnostic on stderr (also with
//! strict mode set by its own variable, which start-up reads); an invalid per-knob variable
//! does the same when the pool is built. This test binary is the program:
//! it runs itself as a child with each environment.
#![cfg(target_os = "linux")]

mod common;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

/// This test binary, run as a child with only `env` among the RAYFORCE_ variables.
fn child(env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "strict_mode_stops_the_program", "--nocapture"])
        .env(common::CHILD, "1");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RAYFORCE_") && key != common::CHILD {
            cmd.env_remove(key);
        }
    }
    cmd.envs(env.iter().copied()).output().unwrap()
}

/// The child's stderr, after checking that it was stopped by SIGABRT.
fn aborted(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGABRT),
        "{}: {stderr}",
        out.status
    );
    stderr
}

/// Checks that the child ran to a successful end.
fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn strict_mode_stops_the_program() {
    if common::is_child() {
        // The program: build the pool (it reads the per-knob variables), dispatch.
        RT.pool().dispatch(4, |i| {
            std::hint::black_box(i);
        });
        return;
    }
    let bogus = "rayforce.tunables.strict=1:rayforce.cpu.policy=bogus";
    let out = child(&[("RAYFORCE_TUNABLES", bogus)]);
    let stderr = aborted(&out);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].contains("RAYFORCE_TUNABLES at byte 47")
            && lines[0].contains("`rayforce.cpu.policy=bogus`")
            && lines[0].contains("not a value of rayforce.cpu.policy"),
        "the entry, its offset and what was expected: {stderr}"
    );
    assert!(lines[1].contains("strict tunables"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "it stopped at the first allocation, before running anything"
    );

    // Strict mode by its own variable acts at the first allocation too.
    let out = child(&[
        ("RAYFORCE_TUNABLES_STRICT", "1"),
        ("RAYFORCE_TUNABLES", "rayforce.cpu.policy=bogus"),
    ]);
    let stderr = aborted(&out);
    assert!(stderr.contains("`rayforce.cpu.policy=bogus`"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "it stopped at the first allocation, before running anything: {stderr}"
    );
    let out = child(&[
        ("RAYFORCE_TUNABLES_STRICT", "1"),
        ("RAYFORCE_CORES", "many"),
    ]);
    let stderr = aborted(&out);
    assert!(stderr.contains("RAYFORCE_CORES=many"), "{stderr}");

    let valid = "rayforce.tunables.strict=1:rayforce.cpu.policy=online";
    succeeded(&child(&[("RAYFORCE_TUNABLES", valid)]));

    let out = child(&[("RAYFORCE_TUNABLES", "rayforce.cpu.policy=bogus")]);
    succeeded(&out);
    assert!(
        out.stderr.is_empty(),
        "without strict mode, nothing is printed"
    );

    let out = child(&[
        ("RAYFORCE_TUNABLES", "rayforce.tunables.strict=1"),
        ("RAYFORCE_CORES", "many"),
    ]);
    let stderr = aborted(&out);
    assert!(stderr.contains("RAYFORCE_CORES=many"), "{stderr}");
}
