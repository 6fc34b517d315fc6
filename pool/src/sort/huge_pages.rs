//! Advice that a large scratch buffer be backed by huge pages: a fresh buffer of tens of
//! megabytes otherwise takes a page fault per 4 KiB written, and a scatter's writes to
//! hundreds of places at once miss the TLB.

use std::mem::{size_of_val, MaybeUninit};

/// The size of a transparent huge page on x86-64 (and on arm64 with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// Advises the kernel to back the huge pages that lie wholly inside `buffer` by huge pages
/// (Linux's `MADV_HUGEPAGE`, for memory not yet written); a buffer that holds none is
/// left alone. Advice only: where transparent huge pages are off or missing, nothing
/// changes.
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
