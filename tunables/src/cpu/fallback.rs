//! Other targets: only the logical CPU count is known; `physical` is flagged as a fallback.

use super::{Affinity, Count, CpuCounts, Source, SysRoot};

pub(super) fn read(_root: SysRoot<'_>, _affinity: Affinity<'_>) -> CpuCounts {
    let logical = Count {
        value: logical_count(),
        source: Source::Substitute,
        fallback: true,
    };
    CpuCounts {
        online: logical,
        schedulable: logical,
        physical: logical,
        quota: None,
    }
}

#[cfg(unix)]
fn logical_count() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

#[cfg(not(unix))]
fn logical_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
