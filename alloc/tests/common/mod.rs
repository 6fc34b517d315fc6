//! Shared by the allocator tests: re-running one test of this binary in a child process
//! (for what must hold from the process's first allocation), and resident memory.
#![allow(dead_code)] // each test binary uses a different subset

use std::process::Command;

/// Set in the child: the test body runs instead of spawning.
pub const CHILD: &str = "RAYFORCE_ALLOC_TEST_CHILD";

/// Whether this process is the child of [`run_child`].
pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs test `name` of this binary in a child with `env` set (and only those RAYFORCE_
/// variables); returns its stdout. Panics with its output if it fails.
pub fn run_child(name: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RAYFORCE_") && key != CHILD {
            cmd.env_remove(key);
        }
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child {name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The value the child printed as `key=value` (libtest may put it after its own
/// `test name ... ` on the same line).
pub fn child_value(stdout: &str, key: &str) -> String {
    let needle = format!("{key}=");
    stdout
        .lines()
        .find_map(|line| {
            let at = line.find(&needle)?;
            let value = &line[at + needle.len()..];
            Some(value.split_whitespace().next().unwrap_or("").to_owned())
        })
        .unwrap_or_else(|| panic!("no {key}= in child output:\n{stdout}"))
}

/// Resident memory of this process now, in bytes (`/proc/self/statm`).
pub fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
}
