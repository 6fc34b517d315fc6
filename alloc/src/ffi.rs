//! The only FFI module: mimalloc v3 through `libmimalloc-sys`, and `mi_heap_main`, which
//! that crate does not bind.
//!
//! A v3 heap can be used from any thread: each thread gets a private "theap" for each heap
//! it touches, and `mi_heap_*` calls find it through a one-entry thread-local cache, so a
//! thread that always allocates from the same heap stays on mimalloc's fast path.

pub(crate) use libmimalloc_sys::{
    mi_free, mi_heap_delete, mi_heap_malloc_aligned, mi_heap_new, mi_heap_realloc_aligned,
    mi_heap_t, mi_heap_zalloc_aligned,
};

extern "C" {
    /// The main heap, which lives as long as the process.
    pub(crate) fn mi_heap_main() -> *mut mi_heap_t;
}

/// The main heap (for allocations before binding or after the thread's teardown).
pub(crate) fn main_heap() -> *mut mi_heap_t {
    // SAFETY: mi_heap_main has no preconditions and never returns a dangling heap.
    unsafe { mi_heap_main() }
}
