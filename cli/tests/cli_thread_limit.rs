//! Under a thread limit, `rayforce-rt inspect --json` says how many helpers could not start
//! and why. The limit is a pids cgroup of this test's own; where none can be created (no
//! writable cgroup v1 `pids` hierarchy), the test says so and skips.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;

#[test]
fn inspect_says_which_helpers_a_thread_limit_kept_from_starting() {
    let Some(group) = common::cgroup::Group::create("pids") else {
        return;
    };
    group.write("pids.max", "1"); // the process itself: no thread can start
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} inspect --json",
        group.0.display(),
        env!("CARGO_BIN_EXE_rayforce-rt")
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("RAYFORCE_CORES", "2")
        .output()
        .unwrap();
    drop(group);
    let stdout = common::success_stdout(out);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["pool_width"], 1, "{report}");
    assert_eq!(report["pool"]["missing_helpers"], 1, "{report}");
    assert_eq!(
        report["pool"]["start_error"]["Os"],
        libc::EAGAIN,
        "the thread limit refused the helper: {report}"
    );
}
