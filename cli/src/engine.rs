//! The command line's global allocator: the runtime, or, in a `compare` baseline process, the
//! system allocator or raw mimalloc, chosen once from `RAYFORCE_COMPARE_ENGINE` at the first
//! allocation. Every engine pays the same one well-predicted branch per call, so the
//! baselines and the runtime are measured alike.

use rayforce_rt::Runtime;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// The variable a baseline process is started with (`system`, `mimalloc`, or `rayforce-rt`
/// for rayon on the runtime).
pub(crate) const ENGINE_VARIABLE: &CStr = c"RAYFORCE_COMPARE_ENGINE";

/// Which allocator serves this process.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Runtime = 1,
    System = 2,
    Mimalloc = 3,
}

impl Kind {
    /// The label of rayon's configurations on this allocator in `compare`.
    pub(crate) fn rayon_label(self) -> String {
        match self {
            Kind::Runtime => "rayon on rayforce-rt".to_owned(),
            other => format!("rayon + {}", other.as_str()),
        }
    }

    /// The name baselines are started with and reported by.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Runtime => "rayforce-rt",
            Kind::System => "system",
            Kind::Mimalloc => "mimalloc",
        }
    }
}

/// A global allocator that forwards to one engine, chosen at the first allocation.
pub struct Engine {
    runtime: &'static Runtime,
    /// 0 until chosen, then a `Kind`.
    chosen: AtomicU8,
}

impl Engine {
    /// Forwards to `runtime` unless the environment names a baseline engine.
    pub const fn new(runtime: &'static Runtime) -> Engine {
        Engine {
            runtime,
            chosen: AtomicU8::new(0),
        }
    }

    /// The engine of this process.
    pub(crate) fn kind(&self) -> Kind {
        // Relaxed: every thread derives the same value from the same environment.
        match self.chosen.load(Ordering::Relaxed) {
            2 => Kind::System,
            3 => Kind::Mimalloc,
            1 => Kind::Runtime,
            _ => {
                let kind = from_environment();
                self.chosen.store(kind as u8, Ordering::Relaxed);
                kind
            }
        }
    }
}

/// Reads `RAYFORCE_COMPARE_ENGINE` without allocating (this runs inside the first
/// allocation); anything but `system` or `mimalloc` (`rayforce-rt` included) is the runtime.
fn from_environment() -> Kind {
    // SAFETY: the name is a NUL-terminated literal; getenv does not allocate, and the value
    // it returns is only read here, before any thread of this program sets the environment.
    let value = unsafe { libc::getenv(ENGINE_VARIABLE.as_ptr()) };
    if value.is_null() {
        return Kind::Runtime;
    }
    // SAFETY: getenv returned a NUL-terminated string that lives as long as the environment.
    match unsafe { CStr::from_ptr(value) }.to_bytes() {
        b"system" => Kind::System,
        b"mimalloc" => Kind::Mimalloc,
        _ => Kind::Runtime,
    }
}

// SAFETY: every call is forwarded to the same engine for the whole process (chosen once, and
// the same on every thread), so each block is freed by the allocator that made it; each
// engine upholds `GlobalAlloc`'s contract itself.
unsafe impl GlobalAlloc for Engine {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on unchanged to this process's one engine.
        unsafe {
            match self.kind() {
                Kind::Runtime => self.runtime.alloc(layout),
                Kind::System => System.alloc(layout),
                Kind::Mimalloc => mimalloc::MiMalloc.alloc(layout),
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            match self.kind() {
                Kind::Runtime => self.runtime.alloc_zeroed(layout),
                Kind::System => System.alloc_zeroed(layout),
                Kind::Mimalloc => mimalloc::MiMalloc.alloc_zeroed(layout),
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in `alloc`; `ptr` came from the same engine, the only one this process
        // uses.
        unsafe {
            match self.kind() {
                Kind::Runtime => self.runtime.dealloc(ptr, layout),
                Kind::System => System.dealloc(ptr, layout),
                Kind::Mimalloc => mimalloc::MiMalloc.dealloc(ptr, layout),
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`.
        unsafe {
            match self.kind() {
                Kind::Runtime => self.runtime.realloc(ptr, layout, new_size),
                Kind::System => System.realloc(ptr, layout, new_size),
                Kind::Mimalloc => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
            }
        }
    }
}
