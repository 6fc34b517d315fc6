//! The only FFI module: mimalloc v3 through `libmimalloc-sys`, and the v3 entry points that
//! crate does not bind (`mi_heap_main`, the theap calls, the theap reference count).
//!
//! A v3 heap can be used from any thread: each thread gets a private "theap" for each heap
//! it touches. `mi_heap_*` calls find it through a one-entry thread-local cache; a thread
//! that holds its theap calls `mi_theap_*` and skips that lookup.

pub(crate) use libmimalloc_sys::{
    mi_collect, mi_free, mi_heap_collect, mi_heap_delete, mi_heap_malloc, mi_heap_new,
    mi_heap_realloc_aligned, mi_heap_t, mi_heap_zalloc_aligned, mi_theap_t, mi_thread_init,
};
use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};

extern "C" {
    /// The main heap, which lives as long as the process.
    pub(crate) fn mi_heap_main() -> *mut mi_heap_t;
    /// The calling thread's theap for `heap`, created on first use (inside mimalloc, never
    /// through Rust's allocator); see [`heap_theap`] for telling a failure.
    pub(crate) fn mi_heap_theap(heap: *mut mi_heap_t) -> *mut mi_theap_t;
    /// `mi_heap_malloc_aligned` without the theap lookup; the theap must be the calling
    /// thread's.
    pub(crate) fn mi_theap_malloc_aligned(
        theap: *mut mi_theap_t,
        size: usize,
        alignment: usize,
    ) -> *mut core::ffi::c_void;
    /// `mi_heap_zalloc` without the theap lookup (word-aligned); the theap as above.
    pub(crate) fn mi_theap_zalloc(theap: *mut mi_theap_t, size: usize) -> *mut core::ffi::c_void;
    /// `mi_heap_realloc` without the theap lookup (word-aligned); the theap as above.
    pub(crate) fn mi_theap_realloc(
        theap: *mut mi_theap_t,
        p: *mut core::ffi::c_void,
        newsize: usize,
    ) -> *mut core::ffi::c_void;
    /// Takes a reference that keeps the theap's memory valid after its thread's teardown
    /// frees it: mimalloc then marks it uninitialized (its heap null), and an allocation
    /// through it falls to mimalloc's generic path, which re-initialises the thread and
    /// allocates from the thread's default theap. mimalloc's own theap cache holds its
    /// reference the same way (`_mi_theap_cached_set` in `init.c`). No-op on static theaps.
    pub(crate) fn _mi_theap_incref(theap: *mut mi_theap_t);
    /// Drops a reference taken with `_mi_theap_incref`; the last one frees the memory.
    pub(crate) fn _mi_theap_decref(theap: *mut mi_theap_t);
    /// What `mi_heap_theap` returns when it cannot make a first-class heap's theap (out of
    /// memory): every allocation through it returns null.
    static _mi_theap_empty_wrong: u8;
    /// A thread's theap before mimalloc initialised the thread (what the main heap's lookup
    /// returns if that failed): every allocation through it retries the initialisation.
    static _mi_theap_empty: u8;
    /// The pthread key whose destructor ends a thread's mimalloc state at its exit, holding
    /// the thread's main theap; `(pthread_key_t)-1` until mimalloc's process setup made it.
    static _mi_heap_default_key: libc::pthread_key_t;
    /// Whether the calling thread is mimalloc's main thread (the process's first), whose
    /// state is static and made once: ended, it cannot be made again.
    fn _mi_is_main_thread() -> bool;
}

/// Ends mimalloc's state for the calling thread now: its pages are abandoned to other
/// threads and its theaps freed (blocks stay valid; a later allocation makes the state
/// again). Also clears mimalloc's thread-exit key, which still names the freed main theap
/// and whose destructor would read it at the thread's exit. Not on mimalloc's main thread,
/// whose state mimalloc keeps to the end (`exit` runs the thread-local destructors before
/// the `atexit` handlers, which may allocate).
///
/// # Safety
/// The calling thread must not allocate through a theap it looked up before this call.
pub(crate) unsafe fn end_thread_state() {
    // SAFETY: reads mimalloc's record of its main thread; no precondition.
    if unsafe { _mi_is_main_thread() } {
        return;
    }
    // SAFETY: `mi_thread_done` is mimalloc's public call for this, idempotent; the caller
    // holds no theap across it.
    unsafe { libmimalloc_sys::mi_thread_done() };
    // SAFETY: a plain read of a key mimalloc wrote once, during its process setup, before
    // any thread could have state to end.
    let key = unsafe { core::ptr::addr_of!(_mi_heap_default_key).read() };
    if key != libc::pthread_key_t::MAX {
        // SAFETY: setting this thread's own value of a live key; null means no destructor.
        unsafe { libc::pthread_setspecific(key, core::ptr::null()) };
    }
}

/// The calling thread's theap for `heap`, or `None` if mimalloc could not make it.
///
/// # Safety
/// `heap` must be live: the main heap, or one from `mi_heap_new` not yet deleted.
pub(crate) unsafe fn heap_theap(heap: *mut mi_heap_t) -> Option<*mut mi_theap_t> {
    // SAFETY: `heap` is live (this function's contract); mi_heap_theap creates the thread's
    // theap inside mimalloc if needed.
    let theap = unsafe { mi_heap_theap(heap) };
    let sentinels = [
        core::ptr::addr_of!(_mi_theap_empty_wrong),
        core::ptr::addr_of!(_mi_theap_empty),
    ];
    let made = !sentinels.contains(&theap.cast_const().cast::<u8>());
    made.then_some(theap)
}

/// The main heap (for allocations before binding or after the thread's teardown).
pub(crate) fn main_heap() -> *mut mi_heap_t {
    // SAFETY: mi_heap_main has no preconditions and never returns a dangling heap.
    unsafe { mi_heap_main() }
}

/// mimalloc v3's option numbers (`mi_option_e` in its `mimalloc.h`; libmimalloc-sys names
/// only those that kept v2's numbers). A test reads each back through its `MIMALLOC_`
/// environment variable, which mimalloc matches by name.
const OPTION_PURGE_DELAY: mi_option_t = 15;
const OPTION_ALLOW_THP: mi_option_t = 43;
const OPTION_ARENA_IS_NUMA_LOCAL: mi_option_t = 46;

extern "C" {
    /// Sets the NUMA node `heap` prefers (`-1`: none); mimalloc keeps `node % its node
    /// count`.
    fn mi_heap_set_numa_affinity(heap: *mut mi_heap_t, numa_node: core::ffi::c_int);
}

/// Makes `heap` prefer arenas of NUMA node `node` when it needs fresh pages (`None`: any).
/// What the bundled mimalloc (3.3) does with it: `mi_heap_set_numa_affinity` stores
/// `node % node count` in the heap, and the arena search takes arenas tagged with that node
/// first, then the others; arenas are tagged only when created with a node or, with
/// `arena_is_numa_local`, by the node of the thread that creates them. The memory itself
/// goes where the kernel's first-touch policy puts it: on the node of the (pinned) thread
/// that first writes it. Node ids are mimalloc's `getcpu` node modulo its count, so on a
/// machine with sparse node ids (0-2, 33, ...) two nodes can share a tag.
///
/// # Safety
/// `heap` must be a live mimalloc heap.
pub(crate) unsafe fn set_heap_node(heap: *mut mi_heap_t, node: Option<usize>) {
    let node = node.map_or(-1, |n| core::ffi::c_int::try_from(n).unwrap_or(-1));
    if node >= 0 {
        // SAFETY: setting an option has no preconditions; it is read when an arena is made.
        unsafe { mi_option_set(OPTION_ARENA_IS_NUMA_LOCAL, 1) };
    }
    // SAFETY: the caller guarantees a live heap; the call only stores the node in it.
    unsafe { mi_heap_set_numa_affinity(heap, node) };
}

/// Whether arenas mimalloc creates are tagged with their creating thread's node.
pub(crate) fn arenas_numa_local() -> bool {
    // SAFETY: reading an option has no preconditions.
    unsafe { mi_option_get(OPTION_ARENA_IS_NUMA_LOCAL) != 0 }
}

/// mimalloc's purge delay, in ms (how long freed memory stays resident).
#[allow(clippy::useless_conversion)] // `c_long` is 32 bits on some targets
pub(crate) fn purge_delay_ms() -> i64 {
    // SAFETY: reading an option has no preconditions.
    i64::from(unsafe { mi_option_get(OPTION_PURGE_DELAY) })
}

/// Whether mimalloc may back memory with transparent huge pages.
pub(crate) fn thp() -> bool {
    // SAFETY: reading an option has no preconditions.
    unsafe { mi_option_get(OPTION_ALLOW_THP) != 0 }
}

/// Sets the purge delay (allocation-free; takes effect on the next purge).
pub(crate) fn set_purge_delay_ms(ms: u64) {
    let ms = core::ffi::c_long::try_from(ms).unwrap_or(core::ffi::c_long::MAX);
    // SAFETY: setting an option has no preconditions; mimalloc reads it on every purge.
    unsafe { mi_option_set(OPTION_PURGE_DELAY, ms) };
}

/// Allows or forbids transparent huge pages for memory mimalloc maps from now on: mimalloc
/// then asks for them (`MADV_HUGEPAGE`) or not. Nothing process-wide: mimalloc's only other
/// means, `PR_SET_THP_DISABLE` (what it sets when `MIMALLOC_ALLOW_THP=0` is in its
/// environment at start), holds for the whole process and every program it starts, even
/// across `exec`, so an allocator setting must not use it. Under the kernel's `madvise`
/// mode that is all it takes; under `always`, the kernel backs large aligned regions with
/// huge pages unasked, and the bundled mimalloc has no per-mapping way to refuse them.
pub(crate) fn set_thp(allowed: bool) {
    // SAFETY: setting an option has no preconditions; mimalloc reads it on every mapping.
    unsafe { mi_option_set(OPTION_ALLOW_THP, core::ffi::c_long::from(allowed)) };
}
