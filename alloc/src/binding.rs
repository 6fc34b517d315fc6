//! The calling thread's binding: which allocator instance and arena heap it allocates from,
//! guarded against re-entry while binding and against use after the thread's teardown began.

use crate::arenas::Arenas;
use crate::ffi::{self, mi_heap_t};
use core::cell::Cell;
use core::ptr;

/// Where the thread is in its life with an allocator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not bound (or bound to another instance).
    Free,
    /// Inside `bind`: a re-entrant allocation (e.g. glibc registering our exit hook with
    /// `calloc`) must not bind again; it uses the main heap.
    Binding,
    /// The exit hook ran: every later allocation uses the main heap.
    Exited,
}

thread_local! {
    /// The instance (its `Arenas`) this thread is bound to, and the arena's heap. Const, no
    /// destructor: readable at any point of the thread's life, and never allocates.
    static BOUND: Cell<(*const Arenas, *mut mi_heap_t)> = const { Cell::new((ptr::null(), ptr::null_mut())) };
    static PHASE: Cell<Phase> = const { Cell::new(Phase::Free) };
    /// Detaches the thread when it exits.
    static EXIT_HOOK: ExitHook = const {
        ExitHook { arenas: Cell::new(ptr::null()), index: Cell::new(0) }
    };
}

/// The heap this thread allocates from for `arenas`, if bound to it (the fast path).
#[inline(always)]
pub(crate) fn bound_heap(arenas: &Arenas) -> Option<*mut mi_heap_t> {
    let (owner, heap) = BOUND.with(Cell::get);
    ptr::eq(owner, arenas).then_some(heap)
}

/// Binds this thread to an arena of `arenas`, chosen by `choose`, and returns the heap to
/// allocate from: the arena's, or the main heap while binding (re-entry), after exit, or if
/// no arena could be had.
pub(crate) fn bind(arenas: &Arenas, choose: impl FnOnce() -> Option<usize>) -> *mut mi_heap_t {
    if PHASE.with(Cell::get) != Phase::Free {
        return ffi::main_heap();
    }
    PHASE.with(|p| p.set(Phase::Binding));
    // The hook must be registered (first touch) before we attach, or an exit could leave
    // us counted; if it is already destroyed, the thread is exiting.
    let hook_alive = EXIT_HOOK.try_with(|_| ()).is_ok();
    let mut heap = ffi::main_heap();
    if hook_alive {
        if let Some(index) = choose() {
            EXIT_HOOK.with(|hook| hook.rebind(arenas, index));
            heap = arenas.heap(index);
            BOUND.with(|b| b.set((arenas, heap)));
        }
    }
    PHASE.with(|p| {
        p.set(if hook_alive {
            Phase::Free
        } else {
            Phase::Exited
        })
    });
    heap
}

/// Detaches this thread from whatever it is bound to.
struct ExitHook {
    arenas: Cell<*const Arenas>,
    index: Cell<usize>,
}

impl ExitHook {
    /// Moves the thread's binding to arena `index` of `arenas`.
    fn rebind(&self, arenas: &Arenas, index: usize) {
        self.release();
        self.arenas.set(arenas);
        self.index.set(index);
    }

    fn release(&self) {
        let previous = self.arenas.replace(ptr::null());
        if !previous.is_null() {
            // SAFETY: an instance outlives every thread bound to it (`RayAlloc`'s drop
            // aborts otherwise), and this thread is bound to `previous`.
            unsafe { (*previous).detach(self.index.get()) };
        }
    }
}

impl Drop for ExitHook {
    fn drop(&mut self) {
        PHASE.with(|p| p.set(Phase::Exited));
        BOUND.with(|b| b.set((ptr::null(), ptr::null_mut())));
        self.release();
    }
}
