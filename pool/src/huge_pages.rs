//! Advice that a large buffer the pool fills (a `map`'s or `collect`'s output, the radix
//! sort's scratch) be backed by huge pages: fresh memory otherwise takes a page fault per
//! 4 KiB written, and a scatter's writes to hundreds of places at once miss the TLB.

use std::mem::MaybeUninit;

/// The size of a transparent huge page on x86-64 (and on arm64 with 4 KiB pages).
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// Advises the kernel to back the huge pages that lie wholly inside `buffer` by huge pages
/// (Linux's `MADV_HUGEPAGE`, for memory not yet written); a buffer that holds none (one
/// under 2 MiB always) is left alone, with no system call. Advice only: where transparent
/// huge pages are off or missing, or off Linux, nothing changes.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge<T>(buffer: &mut [MaybeUninit<T>]) {
    let start = buffer.as_mut_ptr() as usize;
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + size_of_val(buffer)) / HUGE_PAGE * HUGE_PAGE;
    if first < end {
        // SAFETY: `first..end` lies inside `buffer`, which the caller holds; the advice
        // changes how its pages are backed, never what they hold. It fails (ignored: the
        // pages stay as they were) only where the kernel does not know it.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    }
}

/// Off Linux there is no such advice: nothing changes.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge<T>(_buffer: &mut [MaybeUninit<T>]) {}

#[cfg(all(test, target_os = "linux", not(rayforce_loom)))]
mod tests {
    use crate::prelude::*;
    use crate::{ParallelMap, Pool};
    use std::path::Path;

    /// The `VmFlags` of the mapping that holds `address` (`/proc/self/smaps`).
    fn flags_at(address: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
        let mut holds = false;
        for line in smaps.lines() {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                if holds {
                    return flags.to_string();
                }
            } else if let Some((range, _)) = line.split_once(' ') {
                if let Some((start, end)) = range.split_once('-') {
                    if let (Ok(start), Ok(end)) = (
                        usize::from_str_radix(start, 16),
                        usize::from_str_radix(end, 16),
                    ) {
                        holds = (start..end).contains(&address);
                    }
                }
            }
        }
        panic!("no mapping holds {address:#x}");
    }

    /// Whether the kernel has transparent huge pages (the advice's `hg` flag); a test
    /// without them says so and passes.
    fn kernel_has_huge_pages(test: &str) -> bool {
        let known = Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists();
        if !known {
            eprintln!("{test}: skipped, this kernel has no transparent huge pages");
        }
        known
    }

    /// A buffer's middle, where a whole huge page of a buffer of several lies.
    fn middle<T>(items: &[T]) -> usize {
        items.as_ptr() as usize + size_of_val(items) / 2
    }

    #[test]
    fn a_map_of_tens_of_megabytes_writes_storage_advised_huge() {
        if !kernel_has_huge_pages("a_map_of_tens_of_megabytes_writes_storage_advised_huge") {
            return;
        }
        let pool = Pool::builder().workers(2).build().unwrap();
        let input: Vec<u64> = (0..5_000_000).collect();
        let tripled = pool.map_slice(&input, |&x| 3 * x);
        assert!(tripled.iter().zip(0..).all(|(&y, x)| y == 3 * x));
        let flags = flags_at(middle(&tripled));
        assert!(flags.split_whitespace().any(|f| f == "hg"), "flags {flags}");
    }

    #[test]
    fn a_collect_after_filter_moves_items_into_storage_advised_huge() {
        if !kernel_has_huge_pages("a_collect_after_filter_moves_items_into_storage_advised_huge") {
            return;
        }
        let pool = Pool::builder().workers(2).build().unwrap();
        let evens: Vec<u64> = pool.install(|| {
            (0..10_000_000u64)
                .into_par_iter()
                .filter(|x| x % 2 == 0)
                .collect()
        });
        assert!(evens.iter().zip(0..).all(|(&y, x)| y == 2 * x));
        // The last quarter is moved in from a participant other than the leading one.
        let last_quarter = &evens[evens.len() * 3 / 4..];
        let flags = flags_at(middle(last_quarter));
        assert!(flags.split_whitespace().any(|f| f == "hg"), "flags {flags}");
    }

    #[test]
    fn a_buffer_holding_no_whole_huge_page_is_left_alone() {
        if !kernel_has_huge_pages("a_buffer_holding_no_whole_huge_page_is_left_alone") {
            return;
        }
        // A fresh mapping of its own: 64 MiB, so that the small buffer's flags are its own.
        let mut buffer: Vec<std::mem::MaybeUninit<u8>> = Vec::with_capacity(64 << 20);
        let spare = buffer.spare_capacity_mut();
        let start =
            (spare.as_ptr() as usize).next_multiple_of(super::HUGE_PAGE) - spare.as_ptr() as usize;
        let almost_huge = &mut spare[start + 1..start + super::HUGE_PAGE + 4096];
        super::advise_huge(almost_huge);
        let flags = flags_at(middle(almost_huge));
        assert!(
            !flags.split_whitespace().any(|f| f == "hg"),
            "flags {flags}"
        );
        super::advise_huge(&mut spare[start..start + super::HUGE_PAGE]);
        let flags = flags_at(middle(&spare[start..start + super::HUGE_PAGE]));
        assert!(flags.split_whitespace().any(|f| f == "hg"), "flags {flags}");
    }
}
