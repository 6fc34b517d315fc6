//! CPU counts by policy (online, schedulable, physical), read without allocating.
//!
//! This file is the platform contract: the types every platform fills in, and [`read`] /
//! [`read_at`], which pick the implementation. `linux.rs` reads sysfs, procfs and the
//! cgroup CPU quota; `macos.rs` asks `sysctlbyname`; `fallback.rs` knows only the logical
//! count. Only this module chooses by `target_os`. On Linux, `nodes.rs` reads the NUMA
//! nodes and `plan.rs` turns the mask, cores and nodes into a placement plan.
//!
//! The reading runs inside the global allocator's first call, so no implementation may
//! allocate; `tests/no_alloc.rs` checks that with a counting allocator.

mod cpuset;
mod place;
mod policy;

#[cfg(unix)]
mod fs;

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod cpuset_limits;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod nodes;
#[cfg(target_os = "linux")]
mod plan;
#[cfg(target_os = "linux")]
use linux as platform;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as platform;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod fallback;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
use fallback as platform;

pub use cpuset::{CpuSet, ListError, ListErrorKind, MAX_CPUS};
#[cfg(target_os = "linux")]
pub use nodes::{NodeSource, Nodes, MAX_NODES};
pub use place::{Place, UnknownPlace};
#[cfg(target_os = "linux")]
pub use plan::{plan, Plan, Spot};
pub use policy::{CpuPolicy, UnknownPolicy};

use core::fmt;

/// Where a count came from.
///
/// Serialized (feature `serde`) as its variant's name in snake case (`online_list`,
/// `process_affinity`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum Source {
    /// `/sys/devices/system/cpu/online`.
    OnlineList,
    /// The `cpuN` directories, minus those whose `cpuN/online` reads 0.
    CpuDirectories,
    /// `sysconf(_SC_NPROCESSORS_ONLN)`.
    Sysconf,
    /// The process affinity mask (`sched_getaffinity` of the main thread, whichever thread
    /// reads it), intersected with online.
    ProcessAffinity,
    /// An affinity given by the caller, intersected with online.
    GivenAffinity,
    /// Every online CPU: the caller asked for no affinity (e.g. reading a sysfs dump).
    AllOnline,
    /// SMT sibling groups from `topology/core_cpus_list`.
    CoreCpusList,
    /// SMT sibling groups from `topology/thread_siblings_list` (kernels before 5.7).
    ThreadSiblingsList,
    /// Distinct (`physical_package_id`, `die_id`, `core_id`) triples.
    CoreIds,
    /// macOS `sysctlbyname` (`hw.logicalcpu` or `hw.physicalcpu`).
    Sysctl,
    /// Another count stood in for this one (see [`Count::fallback`]).
    Substitute,
}

impl Source {
    /// A short name for tables and JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Source::OnlineList => "sysfs cpu/online",
            Source::CpuDirectories => "sysfs cpuN directories",
            Source::Sysconf => "sysconf(_SC_NPROCESSORS_ONLN)",
            Source::ProcessAffinity => "sched_getaffinity",
            Source::GivenAffinity => "given affinity",
            Source::AllOnline => "all online CPUs",
            Source::CoreCpusList => "topology/core_cpus_list",
            Source::ThreadSiblingsList => "topology/thread_siblings_list",
            Source::CoreIds => "topology core ids",
            Source::Sysctl => "sysctlbyname",
            Source::Substitute => "substituted",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One count, where it came from, and whether it fell back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Count {
    /// The count, always >= 1.
    pub value: usize,
    /// Where it came from.
    pub source: Source,
    /// `true` when the proper source was unavailable and a coarser count stands in:
    /// `physical` as the schedulable count when no topology could be read, `schedulable`
    /// as the online count when the affinity could not be read, `online` from `sysconf`.
    pub fallback: bool,
}

/// Which cgroup interface a quota came from.
///
/// Serialized (feature `serde`) as `v2` or `v1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "lowercase")
)]
pub enum CgroupVersion {
    /// `cpu.max`.
    V2,
    /// `cpu.cfs_quota_us` / `cpu.cfs_period_us`.
    V1,
}

/// A cgroup CPU bandwidth limit: `quota_us` of CPU time per `period_us` of wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpuQuota {
    /// CPU time allowed per period, in microseconds.
    pub quota_us: u64,
    /// The period, in microseconds (> 0).
    pub period_us: u64,
    /// Which interface it came from.
    pub version: CgroupVersion,
}

impl CpuQuota {
    /// The CPU cap, `ceil(quota / period)`, at least 1: 1.5 CPUs of quota cap counts at 2.
    pub fn cap(&self) -> usize {
        let cap = self.quota_us.div_ceil(self.period_us.max(1)).max(1);
        usize::try_from(cap).unwrap_or(usize::MAX)
    }

    /// Whether this quota allows fewer CPUs than `other` does.
    pub(crate) fn is_tighter_than(&self, other: &CpuQuota) -> bool {
        u128::from(self.quota_us) * u128::from(other.period_us)
            < u128::from(other.quota_us) * u128::from(self.period_us)
    }

    /// The tighter of two optional quotas (a quota on any ancestor limits the process).
    pub(crate) fn tightest(a: Option<CpuQuota>, b: Option<CpuQuota>) -> Option<CpuQuota> {
        match (a, b) {
            (Some(a), Some(b)) if b.is_tighter_than(&a) => Some(b),
            (Some(a), _) => Some(a),
            (None, b) => b,
        }
    }
}

/// Whether [`CpuCounts::count`] caps by the cgroup CPU quota (tunable `rayforce.cpu.quota`).
///
/// Serialized (feature `serde`) as `apply` or `ignore`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum QuotaCap {
    /// Cap every count at `ceil(quota)` (the default).
    #[default]
    Apply,
    /// Ignore the quota.
    Ignore,
}

/// One reading of the machine: the three counts, where each came from, and the quota.
///
/// Invariant: `1 <= physical <= schedulable <= online`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpuCounts {
    /// CPUs online in the system.
    pub online: Count,
    /// CPUs this process may run on.
    pub schedulable: Count,
    /// Physical cores among the schedulable CPUs.
    pub physical: Count,
    /// The tightest cgroup CPU quota on the path to this process's cgroup, if any.
    pub quota: Option<CpuQuota>,
}

impl CpuCounts {
    /// The count for `policy`, capped by the quota unless `cap` is [`QuotaCap::Ignore`];
    /// always >= 1.
    pub fn count(&self, policy: CpuPolicy, cap: QuotaCap) -> usize {
        let raw = self.get(policy).value;
        match (cap, self.quota) {
            (QuotaCap::Apply, Some(quota)) => raw.min(quota.cap()),
            _ => raw,
        }
        .max(1)
    }

    /// The uncapped count for `policy`, with its source.
    pub fn get(&self, policy: CpuPolicy) -> &Count {
        match policy {
            CpuPolicy::Online => &self.online,
            CpuPolicy::Schedulable => &self.schedulable,
            CpuPolicy::Physical => &self.physical,
        }
    }

    /// Whether the invariant `1 <= physical <= schedulable <= online` holds.
    pub fn is_valid(&self) -> bool {
        1 <= self.physical.value
            && self.physical.value <= self.schedulable.value
            && self.schedulable.value <= self.online.value
    }
}

/// The directory all sysfs and procfs paths are read under (`/` for the live system).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SysRoot<'a>(&'a [u8]);

impl<'a> SysRoot<'a> {
    /// The live system, `/`.
    pub const SYSTEM: SysRoot<'static> = SysRoot(b"");

    /// A directory laid out like `/`, such as a sysfs dump.
    #[cfg(unix)]
    pub fn new(dir: &'a std::path::Path) -> SysRoot<'a> {
        use std::os::unix::ffi::OsStrExt;
        SysRoot(dir.as_os_str().as_bytes())
    }

    /// The root as bytes (`b""` for `/`).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// Which CPUs count as schedulable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affinity<'a> {
    /// This process's affinity mask: its main thread's, as `taskset -p PID` sets it and as
    /// every thread inherits it, whichever thread reads it (a thread that narrowed its own
    /// mask does not narrow the count); the calling thread's if the main thread exited.
    Process,
    /// Every online CPU of the root (for reading a dump of another machine).
    AllOnline,
    /// The given CPUs (intersected with online).
    Given(&'a CpuSet),
}

/// Reads this machine, as this process sees it. Allocation-free.
pub fn read() -> CpuCounts {
    read_at(SysRoot::SYSTEM, Affinity::Process)
}

/// Reads the machine whose files lie under `root`, with the given affinity.
/// Allocation-free. Platforms without sysfs ignore `root` and `affinity`.
pub fn read_at(root: SysRoot<'_>, affinity: Affinity<'_>) -> CpuCounts {
    let counts = platform::read(root, affinity);
    debug_assert!(counts.is_valid(), "{counts:?}");
    counts
}

/// The NUMA nodes among `cpus` on the machine whose files lie under `root`, and the memory
/// nodes its cpuset allows. Allocation-free.
#[cfg(target_os = "linux")]
pub fn read_nodes(root: SysRoot<'_>, cpus: &CpuSet) -> Nodes {
    nodes::read(root, cpus)
}

/// The schedulable CPUs themselves (what [`read_at`] counts as `schedulable`): the
/// affinity intersected with the online CPUs. Allocation-free.
#[cfg(target_os = "linux")]
pub fn schedulable_cpus(root: SysRoot<'_>, affinity: Affinity<'_>) -> CpuSet {
    linux::schedulable_cpus(root, affinity)
}

/// Thread `tid`'s affinity mask (0: the calling thread's); `None` if the kernel refused it.
#[cfg(target_os = "linux")]
pub fn thread_affinity(tid: i32) -> Option<CpuSet> {
    linux::thread_affinity(tid)
}

/// This process's affinity mask (its main thread's, as [`Affinity::Process`] reads it),
/// intersected with nothing; `None` if the kernel refused it.
#[cfg(target_os = "linux")]
pub fn process_affinity() -> Option<CpuSet> {
    linux::process_affinity()
}

impl Count {
    /// A count from its proper source.
    pub(crate) const fn exact(value: usize, source: Source) -> Count {
        Count {
            value,
            source,
            fallback: false,
        }
    }

    /// `other`'s value standing in for this count.
    pub(crate) const fn substitute(other: &Count) -> Count {
        Count {
            value: other.value,
            source: Source::Substitute,
            fallback: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(online: usize, schedulable: usize, physical: usize) -> CpuCounts {
        CpuCounts {
            online: Count::exact(online, Source::OnlineList),
            schedulable: Count::exact(schedulable, Source::ProcessAffinity),
            physical: Count::exact(physical, Source::CoreCpusList),
            quota: None,
        }
    }

    #[test]
    fn quota_caps_every_policy_unless_ignored() {
        let mut reading = counts(16, 8, 4);
        reading.quota = Some(CpuQuota {
            quota_us: 150_000,
            period_us: 100_000,
            version: CgroupVersion::V2,
        });
        assert_eq!(reading.count(CpuPolicy::Online, QuotaCap::Apply), 2);
        assert_eq!(reading.count(CpuPolicy::Physical, QuotaCap::Apply), 2);
        assert_eq!(reading.count(CpuPolicy::Online, QuotaCap::Ignore), 16);
        assert_eq!(reading.count(CpuPolicy::Schedulable, QuotaCap::Ignore), 8);
    }

    #[test]
    fn quota_cap_rounds_up_and_is_at_least_one() {
        let quota = |quota_us, period_us| CpuQuota {
            quota_us,
            period_us,
            version: CgroupVersion::V1,
        };
        assert_eq!(quota(100_000, 100_000).cap(), 1);
        assert_eq!(quota(100_001, 100_000).cap(), 2);
        assert_eq!(quota(1_000, 100_000).cap(), 1);
        assert!(quota(50, 100).is_tighter_than(&quota(200, 100)));
        assert!(!quota(200, 100).is_tighter_than(&quota(100, 50)));
        let (loose, tight) = (Some(quota(300, 100)), Some(quota(100, 100)));
        assert_eq!(CpuQuota::tightest(loose, tight), tight);
        assert_eq!(CpuQuota::tightest(tight, loose), tight);
        assert_eq!(CpuQuota::tightest(None, loose), loose);
        assert_eq!(CpuQuota::tightest(None, None), None);
    }

    #[test]
    fn validity_is_the_ordering_invariant() {
        assert!(counts(4, 4, 2).is_valid());
        assert!(!counts(4, 2, 3).is_valid());
        assert!(!counts(2, 4, 1).is_valid());
    }
}
