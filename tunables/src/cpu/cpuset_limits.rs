//! The cpuset's limits on this process: the CPUs and memory nodes it allows, from
//! `/proc/self/cpuset` and the cpuset mount in `/proc/mounts` (the legacy `cpuset`
//! filesystem, cgroup v1's `cpuset` controller, or cgroup v2's effective sets), read
//! without allocating. The affinity mask already reflects the CPUs on a live system; a dump
//! of another machine says them only here, and only here says the memory nodes.

use super::fs::{self, StackPath};
use super::{CpuSet, SysRoot};
use crate::number;

/// One line of `/proc/mounts`; longer lines are skipped.
const LINE_BUFFER_BYTES: usize = 4096;

/// A cpuset list file (the kernel collapses runs into ranges).
const LIST_BUFFER_BYTES: usize = 8192;

/// What the cpuset allows; `None` where it could not be read (no cpuset, no such file).
pub(super) struct CpusetLimits {
    pub(super) cpus: Option<CpuSet>,
    pub(super) mems: Option<CpuSet>,
}

/// How a cpuset mount names its files, in order of preference when several are mounted.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Flavour {
    /// cgroup v2: `cpuset.cpus.effective`, `cpuset.mems.effective`.
    CgroupV2,
    /// cgroup v1's controller: `cpuset.effective_cpus`, `cpuset.effective_mems`.
    CgroupV1,
    /// The legacy filesystem: `cpus`, `mems`.
    Legacy,
}

impl Flavour {
    /// The (cpus, mems) files, most precise first.
    fn files(self) -> &'static [(&'static [u8], &'static [u8])] {
        match self {
            Flavour::CgroupV2 => &[
                (b"/cpuset.cpus.effective", b"/cpuset.mems.effective"),
                (b"/cpuset.cpus", b"/cpuset.mems"),
            ],
            Flavour::CgroupV1 => &[
                (b"/cpuset.effective_cpus", b"/cpuset.effective_mems"),
                (b"/cpuset.cpus", b"/cpuset.mems"),
            ],
            Flavour::Legacy => &[(b"/cpus", b"/mems")],
        }
    }
}

pub(super) fn read(root: SysRoot<'_>) -> CpusetLimits {
    let none = CpusetLimits {
        cpus: None,
        mems: None,
    };
    let mut cpuset_path = [0u8; 1024];
    let mut path = StackPath::new(root.as_bytes());
    path.push(b"/proc/self/cpuset");
    let Some(own) = fs::read_file(&mut path, &mut cpuset_path).map(number::trim) else {
        return none;
    };
    let Some((flavour, mut dir)) = find_mount(root) else {
        return none;
    };
    dir.push(own.strip_suffix(b"/").unwrap_or(own));
    let mut list = |file: &[u8]| {
        let len = dir.len();
        dir.push(file);
        let mut buf = [0u8; LIST_BUFFER_BYTES];
        let set = fs::read_file(&mut dir, &mut buf).and_then(|b| CpuSet::parse_list(b).ok());
        dir.truncate(len);
        set.filter(|s| !s.is_empty())
    };
    let files = flavour.files();
    CpusetLimits {
        cpus: files.iter().find_map(|(cpus, _)| list(cpus)),
        mems: files.iter().find_map(|(_, mems)| list(mems)),
    }
}

/// The preferred cpuset mount in `/proc/mounts`: its flavour and its mount point under the
/// root.
fn find_mount(root: SysRoot<'_>) -> Option<(Flavour, StackPath)> {
    let mut path = StackPath::new(root.as_bytes());
    path.push(b"/proc/mounts");
    let mut buf = [0u8; LINE_BUFFER_BYTES];
    let mut best: Option<(Flavour, StackPath)> = None;
    fs::for_each_line(&mut path, &mut buf, |line| {
        // source mount-point fstype options dump pass
        let mut fields = line.split(|&b| b == b' ');
        let (Some(_), Some(mount_point), Some(fs_type), Some(options)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return;
        };
        let flavour = match fs_type {
            b"cpuset" => Flavour::Legacy,
            b"cgroup" if options.split(|&b| b == b',').any(|o| o == b"cpuset") => Flavour::CgroupV1,
            b"cgroup2" => Flavour::CgroupV2,
            _ => return,
        };
        if best.as_ref().is_none_or(|(seen, _)| flavour > *seen) {
            let mut dir = StackPath::new(root.as_bytes());
            super::cgroup::push_unescaped(&mut dir, mount_point);
            best = Some((flavour, dir));
        }
    });
    best
}
