//! Helpers shared by the CPU-reading tests: the fixture directory and synthetic trees.
#![allow(dead_code)] // each test binary uses a different subset

use rayforce_tunables::cpu::{self, Affinity, CpuCounts, CpuSet, SysRoot};
use std::path::{Path, PathBuf};

/// The real sysfs dumps, in the repository's `fixtures/topology/` (beside this crate).
pub fn fixtures() -> PathBuf {
    fixtures_if_present().expect("fixtures missing beside a packaged crate")
}

/// The rows of a fixtures table (`EXPECTED.tsv`, `EXPECTED-numa.tsv`): its columns, the
/// header and blank lines left out; at least `min` rows.
pub fn table_rows(file: &str, min: usize) -> Vec<Vec<String>> {
    let table = std::fs::read_to_string(fixtures().join(file)).unwrap();
    let rows: Vec<Vec<String>> = table
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| line.split('\t').map(str::to_owned).collect())
        .collect();
    assert!(rows.len() >= min, "{file} has {} rows", rows.len());
    rows
}

/// The fixtures; `None` (with a message) only when this test runs from a packaged crate,
/// which leaves them out. In the repository their absence is a failure.
pub fn fixtures_if_present() -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../fixtures/topology");
    if dir.join("EXPECTED.tsv").is_file() {
        return Some(dir);
    }
    assert!(
        manifest.join("Cargo.toml.orig").is_file(),
        "fixtures missing at {}: the repository keeps them in fixtures/topology/",
        dir.display()
    );
    eprintln!(
        "no fixtures beside a packaged crate ({}): only live readings",
        dir.display()
    );
    None
}

/// A synthetic root directory laid out like `/`.
pub struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` at `rel` (relative to the root), creating directories.
    pub fn file(&self, rel: &str, contents: &str) -> &Tree {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    /// Makes `rel` a directory, so reading it as a file fails.
    pub fn unreadable(&self, rel: &str) -> &Tree {
        let path = self.dir.path().join(rel);
        if path.is_file() {
            std::fs::remove_file(&path).unwrap();
        }
        std::fs::create_dir_all(path).unwrap();
        self
    }

    /// Writes `cpuN/topology/<file>` for CPU `cpu` with the sibling list `siblings`.
    pub fn siblings(&self, cpu: usize, file: &str, siblings: &CpuSet) -> &Tree {
        self.file(
            &format!("sys/devices/system/cpu/cpu{cpu}/topology/{file}"),
            &format!("{siblings}\n"),
        )
    }

    /// A machine of `groups` SMT sibling groups: the global online list and both sibling
    /// files for every CPU in a group.
    pub fn smt(&self, groups: &[CpuSet]) -> &Tree {
        let mut online = CpuSet::new();
        for group in groups {
            online.union_with(group);
            for cpu in group.iter() {
                self.siblings(cpu, "core_cpus_list", group);
                self.siblings(cpu, "thread_siblings_list", group);
            }
        }
        self.file("sys/devices/system/cpu/online", &format!("{online}\n"))
    }

    /// Reads the tree, with `affinity` as a CPU list or every online CPU.
    pub fn read(&self, affinity: Option<&str>) -> CpuCounts {
        match affinity {
            Some(list) => {
                let set = CpuSet::parse_list(list.as_bytes()).unwrap();
                cpu::read_at(SysRoot::new(self.path()), Affinity::Given(&set))
            }
            None => cpu::read_at(SysRoot::new(self.path()), Affinity::AllOnline),
        }
    }
}

/// `cores` groups of `threads` siblings, numbered like x86: thread t of core c is CPU
/// `c + t * cores`.
pub fn strided(cores: usize, threads: usize) -> Vec<CpuSet> {
    (0..cores)
        .map(|c| set((0..threads).map(|t| c + t * cores)))
        .collect()
}

/// `cores` groups of `threads` siblings, numbered like POWER: core c is CPUs
/// `c * threads .. (c + 1) * threads`.
pub fn adjacent(cores: usize, threads: usize) -> Vec<CpuSet> {
    (0..cores)
        .map(|c| set(c * threads..(c + 1) * threads))
        .collect()
}

pub fn set(cpus: impl IntoIterator<Item = usize>) -> CpuSet {
    let mut set = CpuSet::new();
    for cpu in cpus {
        set.insert(cpu);
    }
    set
}

/// A cgroup v2 process in `/app.slice/job` with the given `cpu.max` per directory.
pub fn cgroup_v2(tree: &Tree, cpu_max: &[(&str, &str)]) {
    tree.file("proc/self/cgroup", "0::/app.slice/job\n").file(
        "proc/self/mountinfo",
        "22 1 0:21 / / rw - ext4 /dev/root rw\n\
         30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
    );
    for (dir, contents) in cpu_max {
        tree.file(&format!("sys/fs/cgroup/{dir}/cpu.max"), contents);
    }
}
