//! The calling thread's binding: which allocator instance and arena it allocates from, and
//! its theap for that arena, guarded against re-entry while binding and against use after
//! the thread's teardown began.
//!
//! The theap is held by reference (`_mi_theap_incref`), so the fast path never depends on
//! the order of thread-exit destructors: on glibc the exit hook (a Rust thread-local
//! destructor, run by `__call_tls_dtors`) drops the binding before mimalloc's pthread-key
//! destructor frees the thread's theaps, but a thread that first binds inside another
//! pthread-key destructor registers a hook that never runs, and on libcs without
//! `__cxa_thread_atexit_impl` Rust's destructors themselves run from a pthread key. In
//! those cases the binding outlives mimalloc's teardown, and the reference keeps the theap's
//! memory valid: mimalloc marks it uninitialized, and allocating through it falls to the
//! thread's re-initialised default theap (`alloc/tests/alloc_exit_order.rs`).
//!
//! mimalloc makes and ends a thread's state (its theaps, on its first allocation and at its
//! exit) under locks of its own that no fork handler releases: a child forked while another
//! thread held one hangs when it next starts a thread. So this module makes the state
//! under the bind lock, which a fork takes first (`bind_lock.rs`), and ends it there too,
//! from the exit hook, in place of mimalloc's own thread-exit destructor; an allocation after
//! the exit hook makes and ends it again, under the lock. mimalloc's main thread keeps its
//! state (`ffi::end_thread_state`). Not covered: a thread whose first allocation comes
//! inside a pthread-key destructor, after its exit hook could run (mimalloc's destructor
//! ends its state, unlocked).

use crate::arenas::{Arenas, Attached};
use crate::bind_lock;
use crate::ffi::{self, mi_heap_t, mi_theap_t};
use core::cell::Cell;
use core::ptr;

/// Where the thread allocates: an arena's heap, and the thread's theap for it.
#[derive(Clone, Copy)]
pub(crate) struct Target {
    /// For `mi_theap_malloc_aligned`: the calling thread's theap for `heap`.
    pub(crate) theap: *mut mi_theap_t,
    /// For the calls with no public theap form (`realloc`, zeroed with alignment).
    pub(crate) heap: *mut mi_heap_t,
}

impl Target {
    const NONE: Target = Target {
        theap: ptr::null_mut(),
        heap: ptr::null_mut(),
    };

    /// The main heap, for one allocation (unbound, re-entrant, after the exit hook, or out
    /// of memory for the thread's theap, where mimalloc's own null comes back).
    pub(crate) fn main() -> Target {
        let heap = ffi::main_heap();
        // SAFETY: the main heap lives as long as the process.
        let theap = unsafe { ffi::mi_heap_theap(heap) };
        Target { theap, heap }
    }

    /// An arena's heap and this thread's theap for it, if mimalloc could make the theap.
    ///
    /// # Safety
    /// `heap` must be live (an arena's heap: arenas delete theirs only on drop).
    unsafe fn of(heap: *mut mi_heap_t) -> Option<Target> {
        // SAFETY: `heap` is live (this function's contract).
        unsafe { ffi::heap_theap(heap) }.map(|theap| Target { theap, heap })
    }
}

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
    /// The instance (its `Arenas`) this thread is bound to, and its target there. Const, no
    /// destructor: readable at any point of the thread's life, and never allocates. The
    /// theap in it is referenced (see the module's note).
    static BOUND: Cell<(*const Arenas, Target)> = const { Cell::new((ptr::null(), Target::NONE)) };
    static PHASE: Cell<Phase> = const { Cell::new(Phase::Free) };
    /// Whether this module made mimalloc's state for the thread (under the bind lock), and
    /// has not ended it since.
    static MADE: Cell<bool> = const { Cell::new(false) };
    /// Detaches the thread when it exits.
    static EXIT_HOOK: ExitHook = const {
        ExitHook {
            arenas: Cell::new(ptr::null()),
            index: Cell::new(0),
            theap: Cell::new(ptr::null_mut()),
        }
    };
}

/// Where this thread allocates for `arenas`, if bound to it (the fast path).
#[inline(always)]
pub(crate) fn bound(arenas: &Arenas) -> Option<Target> {
    let (owner, target) = BOUND.with(Cell::get);
    ptr::eq(owner, arenas).then_some(target)
}

/// Binds this thread to an arena of `arenas`, chosen by `choose`, and returns where to
/// allocate there; `None` while binding (re-entry), after exit, or if no arena could be
/// had: the caller then allocates [`on_main_heap`].
pub(crate) fn bind<'a>(
    arenas: &'a Arenas,
    choose: impl FnOnce() -> Option<Attached<'a>>,
) -> Option<Target> {
    if PHASE.with(Cell::get) != Phase::Free {
        return None;
    }
    PHASE.with(|p| p.set(Phase::Binding));
    make_thread_state();
    // The hook must be registered (first touch) before we attach, or an exit could leave
    // us counted; if it is already destroyed, the thread is exiting.
    let hook_alive = EXIT_HOOK.try_with(|_| ()).is_ok();
    let mut target = None;
    if hook_alive {
        if let Some(attached) = choose() {
            let index = attached.index;
            // SAFETY: a created arena's heap, deleted only when the instance drops, which
            // cannot happen while this thread is attached to it (`choose` attached it).
            match unsafe { Target::of(arenas.heap(index)) } {
                Some(bound) => {
                    // SAFETY: the calling thread's theap, just looked up; the hook drops
                    // this reference when the binding ends.
                    unsafe { ffi::_mi_theap_incref(bound.theap) };
                    // The theap is made: the bind lock goes, before the hook releases the
                    // thread's old binding, which takes it again.
                    drop(attached);
                    BOUND.with(|b| b.set((arenas, bound)));
                    EXIT_HOOK.with(|hook| hook.rebind(arenas, index, bound.theap));
                    target = Some(bound);
                }
                // Out of memory for the theap: stay unbound, so the next allocation tries
                // again, rather than keep a sentinel that returns null (or takes mimalloc's
                // slow path) for good.
                None => attached.cancel(),
            }
        }
    }
    PHASE.with(|p| {
        p.set(if hook_alive {
            Phase::Free
        } else {
            Phase::Exited
        })
    });
    target
}

/// Runs `op` on the main heap, for a thread that is not bound: one re-entered while binding,
/// racing the sizing decision, out of memory for its theap, or exiting. After the exit hook,
/// under the bind lock, with mimalloc's thread state ended again after `op` (see the
/// module's note).
pub(crate) fn on_main_heap<R>(op: impl FnOnce(Target) -> R) -> R {
    match PHASE.with(Cell::get) {
        // `bind` made the thread state before it could re-enter.
        Phase::Binding => op(Target::main()),
        Phase::Free => {
            make_thread_state();
            op(Target::main())
        }
        Phase::Exited => bind_lock::with_lock(|| {
            let result = op(Target::main());
            // SAFETY: the thread is exiting, and the theap `op` used is not kept.
            unsafe { ffi::end_thread_state() };
            result
        }),
    }
}

/// Makes mimalloc's state for this thread under the bind lock, if this module has not.
/// Touches the exit hook first, so that the hook ends the state as the thread exits.
pub(crate) fn make_thread_state() {
    if MADE.with(Cell::get) {
        return;
    }
    // Registering the hook's destructor allocates through the C library on glibc, not
    // through Rust's allocator; a thread already past its destructors skips it.
    let _ = EXIT_HOOK.try_with(|_| ());
    // SAFETY: idempotent; allocates inside mimalloc, never through Rust's allocator.
    bind_lock::with_lock(|| unsafe { ffi::mi_thread_init() });
    MADE.with(|made| made.set(true));
}

/// Detaches this thread from whatever it is bound to.
struct ExitHook {
    arenas: Cell<*const Arenas>,
    index: Cell<usize>,
    /// The referenced theap of the binding.
    theap: Cell<*mut mi_theap_t>,
}

impl ExitHook {
    /// Moves the thread's binding to arena `index` of `arenas`, whose theap `theap` the
    /// caller referenced.
    fn rebind(&self, arenas: &Arenas, index: usize, theap: *mut mi_theap_t) {
        self.release();
        self.arenas.set(arenas);
        self.index.set(index);
        self.theap.set(theap);
    }

    fn release(&self) {
        let previous = self.arenas.replace(ptr::null());
        if !previous.is_null() {
            // SAFETY: `bind` took this reference, and `BOUND` no longer names the theap:
            // `bind` replaced it, or the exit hook cleared it, before this call. Before the
            // detach: the theap is of the instance's heap, which may be deleted after it.
            unsafe { ffi::_mi_theap_decref(self.theap.replace(ptr::null_mut())) };
            // Under the bind lock, released (by this call or the caller) once `detach`
            // returned: the instance may drop as soon as its drop takes the lock, so no
            // reference to it may be live then.
            // SAFETY: an instance outlives every thread bound to it (`RayAlloc`'s drop
            // waits for them, or aborts), and this thread is bound to `previous`.
            bind_lock::with_lock(|| unsafe { (*previous).detach(self.index.get()) });
        }
    }
}

impl Drop for ExitHook {
    fn drop(&mut self) {
        PHASE.with(|p| p.set(Phase::Exited));
        BOUND.with(|b| b.set((ptr::null(), Target::NONE)));
        // One locked section for the detach and the end of mimalloc's state, whose theaps
        // are of the instance's heaps: its drop deletes them once every thread detached.
        bind_lock::with_lock(|| {
            self.release();
            if MADE.with(|made| made.replace(false)) {
                // SAFETY: the thread is exiting, and unbound: `BOUND` no longer names a
                // theap.
                unsafe { ffi::end_thread_state() };
            }
        });
    }
}
