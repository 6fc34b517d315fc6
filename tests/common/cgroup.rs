//! A cgroup v1 group of a test's own (`/sys/fs/cgroup/<controller>/rayforce-test-<pid>`),
//! for the tests that narrow a program's CPU quota or thread limit.

use std::path::{Path, PathBuf};

/// A cgroup v1 child group a test creates, removed on drop with every process in it moved
/// back to the root group.
pub struct Group(pub PathBuf);

impl Group {
    /// A new group under `controller`'s v1 hierarchy; `None`, saying why, where the
    /// machine does not allow one.
    pub fn create(controller: &str) -> Option<Group> {
        let dir = Path::new("/sys/fs/cgroup")
            .join(controller)
            .join(format!("rayforce-test-{}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => Some(Group(dir)),
            Err(err) => {
                eprintln!(
                    "skipping the {controller} cgroup steps: cannot create {}: {err}",
                    dir.display()
                );
                None
            }
        }
    }

    /// Writes `value` to the group's `file`, panicking with both on failure.
    pub fn write(&self, file: &str, value: &str) {
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
