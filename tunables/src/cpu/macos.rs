//! macOS: logical and physical counts from `sysctlbyname`; no affinity, no quota.

use super::{Affinity, Count, CpuCounts, Source, SysRoot};

pub(super) fn read(_root: SysRoot<'_>, _affinity: Affinity<'_>) -> CpuCounts {
    let logical = sysctl_count(c"hw.logicalcpu");
    let online = match logical {
        Some(n) => Count::exact(n, Source::Sysctl),
        None => Count {
            value: 1,
            source: Source::Substitute,
            fallback: true,
        },
    };
    let physical = match sysctl_count(c"hw.physicalcpu") {
        Some(n) => Count::exact(n.min(online.value), Source::Sysctl),
        None => Count::substitute(&online),
    };
    CpuCounts {
        online,
        schedulable: online,
        physical,
        quota: None,
    }
}

/// A positive integer sysctl, or `None`.
fn sysctl_count(name: &core::ffi::CStr) -> Option<usize> {
    let mut value: libc::c_int = 0;
    let mut size = core::mem::size_of::<libc::c_int>();
    // SAFETY: `name` is NUL-terminated; `value` and `size` are valid for writes and `size`
    // holds the size of `value`; no new value is set (null, 0).
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            (&mut value as *mut libc::c_int).cast(),
            &mut size,
            core::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && value > 0).then(|| value as usize)
}
