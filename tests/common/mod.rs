//! Helpers shared by the library's tests: a test run again in a child process of its own.
#![allow(dead_code)] // each test binary uses a different subset

#[cfg(target_os = "linux")]
pub mod cgroup;

/// Set in a child started by [`run_test_in_child`].
pub const CHILD: &str = "RAYFORCE_TEST_CHILD";

/// Whether this process is such a child.
pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs test `name` of this test binary in a child process whose only RAYFORCE_ variables
/// are `env` (what must hold from the first allocation needs a fresh process); returns its
/// stdout, after checking it succeeded.
pub fn run_test_in_child(name: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--nocapture"]).env(CHILD, "1");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RAYFORCE_") && key != CHILD {
            cmd.env_remove(key);
        }
    }
    success_stdout(cmd.envs(env.iter().copied()).output().unwrap())
}

/// The stdout of a command that must have succeeded (else its stderr in the panic).
pub fn success_stdout(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
