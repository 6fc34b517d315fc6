//! Process CPU time: what `compare` and the benches report beside wall time. It is shared
//! by the command line (package `rayforce-cli`) and the benches, and is not part of the API
//! (hidden from the docs).

use std::time::Duration;

/// CPU time consumed so far by the whole process, every thread together
/// (`CLOCK_PROCESS_CPUTIME_ID`): spinning helpers count, sleeping ones do not.
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid place for the kernel to write a timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
