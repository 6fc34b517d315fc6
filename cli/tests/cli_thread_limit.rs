//! Under a thread limit, `rayforce-rt inspect --json` says how many helpers could not start
//! and why. The limit is a pids cgroup of this test's own; where none can be created (no
//! writable cgroup v1 `pids` hierarchy), the test says so and skips.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A cgroup of this test's under `controller`'s v1 hierarchy, removed on drop.
struct Group(PathBuf);

impl Group {
    fn create(controller: &str) -> Option<Group> {
        let dir = Path::new("/sys/fs/cgroup")
            .join(controller)
            .join(format!("rayforce-cli-test-{}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => Some(Group(dir)),
            Err(err) => {
                eprintln!(
                    "skipping: cannot create the {controller} cgroup {}: {err}",
                    dir.display()
                );
                None
            }
        }
    }

    fn write(&self, file: &str, value: &str) {
        std::fs::write(self.0.join(file), value)
            .unwrap_or_else(|err| panic!("{}/{file} <- {value}: {err}", self.0.display()));
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Move every process back to the root group, then remove ours.
        let root = self.0.parent().unwrap().join("cgroup.procs");
        if let Ok(procs) = std::fs::read_to_string(self.0.join("cgroup.procs")) {
            for pid in procs.lines() {
                let _ = std::fs::write(&root, pid);
            }
        }
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn inspect_says_which_helpers_a_thread_limit_kept_from_starting() {
    let Some(group) = Group::create("pids") else {
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
