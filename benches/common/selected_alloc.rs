//! A global allocator a bench picks at run time: the system's, or the runtime's (what a
//! program that sets `rayforce_rt::Runtime` as its `#[global_allocator]` gets) where the
//! environment says `RAYFORCE_BENCH_ALLOC=runtime`. Read once, at the process's first
//! allocation, before any other thread exists, and kept, so a block always goes back to
//! the allocator that made it. Every implementation in the process runs on the one chosen.

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering};

/// The runtime, sized as the pool benches are (by physical cores).
static RUNTIME: Runtime = Runtime::new(CpuPolicy::Physical);

/// Not read yet, the system's, or the runtime's.
static CHOICE: AtomicU8 = AtomicU8::new(UNREAD);
const UNREAD: u8 = 0;
const SYSTEM: u8 = 1;
const RUNTIME_ALLOC: u8 = 2;

/// The allocator `RAYFORCE_BENCH_ALLOC` picks (`system`, the default, or `runtime`).
pub struct SelectedAlloc;

impl SelectedAlloc {
    /// Whether this process allocates through the runtime.
    pub fn is_runtime() -> bool {
        // Relaxed: the choice is made on the first allocation, before a second thread
        // exists, and never changes; threads started later see it through their start.
        match CHOICE.load(Ordering::Relaxed) {
            UNREAD => {
                // SAFETY: a NUL-terminated name; getenv allocates nothing.
                let value = unsafe { libc::getenv(c"RAYFORCE_BENCH_ALLOC".as_ptr()) };
                // SAFETY: getenv returned null or a NUL-terminated string.
                let runtime = !value.is_null()
                    && unsafe { std::ffi::CStr::from_ptr(value) }.to_bytes() == b"runtime";
                let choice = if runtime { RUNTIME_ALLOC } else { SYSTEM };
                CHOICE.store(choice, Ordering::Relaxed);
                runtime
            }
            choice => choice == RUNTIME_ALLOC,
        }
    }
}

impl SelectedAlloc {
    /// The allocator chosen.
    fn chosen() -> &'static dyn GlobalAlloc {
        if Self::is_runtime() {
            &RUNTIME
        } else {
            &System
        }
    }
}

// SAFETY: each call goes to one of two sound allocators, the same one for every block of
// the process (the choice never changes once made).
unsafe impl GlobalAlloc for SelectedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::chosen().alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { Self::chosen().alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the same allocator (the choice never changes).
        unsafe { Self::chosen().dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`.
        unsafe { Self::chosen().realloc(ptr, layout, new_size) }
    }
}
