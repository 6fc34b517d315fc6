//! The cgroup CPU quota of this process: v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
//! `cpu.cfs_period_us`, found through `/proc/self/cgroup` and `/proc/self/mountinfo`, read
//! without allocating.
//!
//! A quota on any ancestor limits the process too, so every cgroup from the process's own up
//! to the mount's root is read and the tightest quota wins (as Rust std's
//! `available_parallelism` does for v2).

use super::fs::{self, StackPath};
use super::{CgroupVersion, CpuQuota, SysRoot};
use crate::number;

/// One line of `/proc/self/cgroup` or `/proc/self/mountinfo`; longer lines are skipped.
const LINE_BUFFER_BYTES: usize = 4096;

/// Where one hierarchy's cgroup for this process lives.
struct Hierarchy {
    version: CgroupVersion,
    /// This process's path inside the hierarchy, from `/proc/self/cgroup`.
    cgroup_path: StackPath,
    /// The mount's root inside the hierarchy and its mount point, from mountinfo.
    mount_root: StackPath,
    mount_point: StackPath,
    mounted: bool,
}

impl Hierarchy {
    fn new(version: CgroupVersion) -> Self {
        Hierarchy {
            version,
            cgroup_path: StackPath::new(b""),
            mount_root: StackPath::new(b""),
            mount_point: StackPath::new(b""),
            mounted: false,
        }
    }
}

pub(super) fn read_quota(root: SysRoot<'_>) -> Option<CpuQuota> {
    let mut v2 = Hierarchy::new(CgroupVersion::V2);
    let mut v1 = Hierarchy::new(CgroupVersion::V1);
    let (in_v2, in_v1) = read_process_cgroups(root, &mut v2, &mut v1)?;
    find_mounts(root, in_v2.then_some(&mut v2), in_v1.then_some(&mut v1));
    CpuQuota::tightest(hierarchy_quota(root, &v2), hierarchy_quota(root, &v1))
}

/// Fills in the cgroup paths from `/proc/self/cgroup`; returns which hierarchies we are in.
fn read_process_cgroups(
    root: SysRoot<'_>,
    v2: &mut Hierarchy,
    v1: &mut Hierarchy,
) -> Option<(bool, bool)> {
    let mut path = StackPath::new(root.as_bytes());
    path.push(b"/proc/self/cgroup");
    let mut buf = [0u8; LINE_BUFFER_BYTES];
    let (mut in_v2, mut in_v1) = (false, false);
    let opened = fs::for_each_line(&mut path, &mut buf, |line| {
        // hierarchy-id:controllers:path (the path may itself contain ':')
        let mut parts = line.splitn(3, |&b| b == b':');
        let (Some(id), Some(controllers), Some(cgroup_path)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        if id == b"0" && controllers.is_empty() {
            v2.cgroup_path.push(cgroup_path);
            in_v2 = true;
        } else if controllers.split(|&b| b == b',').any(|c| c == b"cpu") {
            v1.cgroup_path.push(cgroup_path);
            in_v1 = true;
        }
    });
    opened.then_some((in_v2, in_v1))
}

/// Finds each hierarchy's mount in `/proc/self/mountinfo`: the first whose root holds this
/// process's cgroup (another tool's bind mount of a subtree, listed before it, does not).
fn find_mounts(root: SysRoot<'_>, mut v2: Option<&mut Hierarchy>, mut v1: Option<&mut Hierarchy>) {
    let mut path = StackPath::new(root.as_bytes());
    path.push(b"/proc/self/mountinfo");
    let mut buf = [0u8; LINE_BUFFER_BYTES];
    fs::for_each_line(&mut path, &mut buf, |line| {
        // id parent major:minor root mount-point options [optional...] - fstype source super-options
        let Some(dash) = line.windows(3).position(|w| w == b" - ") else {
            return;
        };
        let mut before = line[..dash].split(|&b| b == b' ');
        let mut after = line[dash + 3..].split(|&b| b == b' ');
        let (Some(mount_root), Some(mount_point)) = (before.nth(3), before.next()) else {
            return;
        };
        let (Some(fs_type), Some(super_options)) = (after.next(), after.nth(1)) else {
            return;
        };
        let hierarchy = match fs_type {
            b"cgroup2" => v2.as_deref_mut(),
            b"cgroup" if super_options.split(|&b| b == b',').any(|o| o == b"cpu") => {
                v1.as_deref_mut()
            }
            _ => None,
        };
        if let Some(h) = hierarchy.filter(|h| !h.mounted) {
            push_unescaped(&mut h.mount_root, mount_root);
            if relative_path(h.mount_root.as_bytes(), h.cgroup_path.as_bytes()).is_none() {
                h.mount_root.truncate(0);
                return;
            }
            push_unescaped(&mut h.mount_point, mount_point);
            h.mounted = true;
        }
    });
}

/// Appends a mountinfo field, decoding its octal escapes (`\040` is a space).
pub(super) fn push_unescaped(path: &mut StackPath, field: &[u8]) {
    let mut i = 0;
    while i < field.len() {
        let escaped = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match escaped {
            Some(d) => {
                let byte = (d[0] - b'0') << 6 | (d[1] - b'0') << 3 | (d[2] - b'0');
                path.push(&[byte]);
                i += 4;
            }
            None => {
                path.push(&field[i..=i]);
                i += 1;
            }
        }
    }
}

/// Where this process's cgroup `cgroup` is below a mount of the hierarchy's `mount_root`:
/// `None` if the mount does not hold it (inside a cgroup namespace or a bind mount, a mount
/// shows only a subtree), or if the path climbs with `..` (a process outside its cgroup
/// namespace's root, whose quota no directory under the mount holds).
fn relative_path<'a>(mount_root: &[u8], cgroup: &'a [u8]) -> Option<&'a [u8]> {
    if cgroup.split(|&b| b == b'/').any(|part| part == b"..") {
        return None;
    }
    if mount_root == b"/" {
        return Some(cgroup);
    }
    let rest = cgroup.strip_prefix(mount_root)?;
    (rest.is_empty() || rest.starts_with(b"/")).then_some(rest)
}

/// The tightest quota from this process's cgroup up to the mount's root.
fn hierarchy_quota(root: SysRoot<'_>, h: &Hierarchy) -> Option<CpuQuota> {
    if !h.mounted {
        return None;
    }
    let relative = relative_path(h.mount_root.as_bytes(), h.cgroup_path.as_bytes())?;
    let mut dir = StackPath::new(root.as_bytes());
    dir.push(h.mount_point.as_bytes());
    let top = dir.len();
    dir.push(relative.strip_suffix(b"/").unwrap_or(relative));
    let mut tightest: Option<CpuQuota> = None;
    loop {
        tightest = CpuQuota::tightest(tightest, read_quota_files(&mut dir, h.version));
        if dir.len() <= top {
            return tightest;
        }
        let parent = dir.as_bytes()[top..]
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(top, |i| top + i);
        dir.truncate(parent);
    }
}

/// The quota set on the cgroup directory `dir`, if any.
fn read_quota_files(dir: &mut StackPath, version: CgroupVersion) -> Option<CpuQuota> {
    let len = dir.len();
    // Leaves `dir` as it found it, whatever the outcome.
    let mut read_u64s = |file: &[u8]| -> Option<(Option<u64>, Option<u64>)> {
        dir.push(file);
        let mut buf = [0u8; 64];
        let contents = fs::read_file(dir, &mut buf).map(number::trim);
        dir.truncate(len);
        let mut words = contents?.split(|&b| b == b' ');
        let first = words.next().and_then(|w| number::parse_u64(w).ok());
        let second = words.next().and_then(|w| number::parse_u64(w).ok());
        Some((first, second))
    };
    let (quota_us, period_us) = match version {
        // "max 100000" (no limit) or "150000 100000"
        CgroupVersion::V2 => read_u64s(b"/cpu.max")?,
        // "-1" (no limit) or "150000"; the period in its own file
        CgroupVersion::V1 => (
            read_u64s(b"/cpu.cfs_quota_us")?.0,
            read_u64s(b"/cpu.cfs_period_us")?.0,
        ),
    };
    let (quota_us, period_us) = (quota_us?, period_us.unwrap_or(100_000));
    (quota_us > 0 && period_us > 0).then_some(CpuQuota {
        quota_us,
        period_us,
        version,
    })
}
