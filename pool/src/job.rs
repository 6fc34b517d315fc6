//! `Job`: one dispatch's state, on the caller's stack: the type-erased closure, the claim
//! cursor, the count of unfinished tasks, and the first panic.

use crate::sync::{AtomicPtr, AtomicUsize, Ordering};
use crate::unwind::{self, Panic};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

/// One dispatch. Lives on the dispatching caller's stack.
///
/// # Safety
/// `data` points to the caller's closure, valid until the dispatch returns. Helpers reach
/// the job only between attaching and detaching, and the caller returns only after every
/// helper detached (README "Completion"), so no helper sees a dangling `data`.
pub(crate) struct Job {
    call: unsafe fn(*const (), usize),
    data: *const (),
    n_tasks: usize,
    /// The next task index to claim; runs past `n_tasks` by at most one per participant.
    next: AtomicUsize,
    /// Tasks not yet finished.
    pending: AtomicUsize,
    /// The first panic, boxed once more to fit a thin pointer; null if none. Lock-free, so
    /// a child forked while a helper held it cannot find it locked (README "Fork").
    panic: AtomicPtr<Panic>,
    /// Under loom: written by the caller when the dispatch returns, read by every access to
    /// the job, so a helper touching a finished dispatch is a detected data race.
    #[cfg(rayforce_loom)]
    alive: loom::cell::UnsafeCell<bool>,
}

// SAFETY: `data` points to an `F: Sync`, only ever called through `&F`; the other fields
// are thread-safe. Lifetimes are enforced by the protocol (see the struct's `# Safety`).
unsafe impl Sync for Job {}

/// Calls the closure behind `data`.
///
/// # Safety
/// `data` must point to a live `F`.
unsafe fn call<F: Fn(usize) + Sync>(data: *const (), task: usize) {
    // SAFETY: the caller guarantees `data` is a live `F`.
    let f = unsafe { &*data.cast::<F>() };
    f(task);
}

impl Job {
    pub(crate) fn new<F: Fn(usize) + Sync>(f: &F, n_tasks: usize) -> Job {
        Job {
            call: call::<F>,
            data: (f as *const F).cast(),
            n_tasks,
            next: AtomicUsize::new(0),
            pending: AtomicUsize::new(n_tasks),
            panic: AtomicPtr::new(ptr::null_mut()),
            #[cfg(rayforce_loom)]
            alive: loom::cell::UnsafeCell::new(true),
        }
    }

    /// Claims and runs tasks until none is left, or until `stop()` says to claim no more;
    /// returns how many this participant ran. A panicking task is caught: the first panic
    /// is kept for the caller, later ones are discarded (README "Panics").
    pub(crate) fn work(&self, stop: impl Fn() -> bool) -> usize {
        let mut ran = 0;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            if stop() {
                return ran;
            }
            let task = self.claim();
            if task >= self.n_tasks {
                return ran;
            }
            // SAFETY: the job is live while we work on it (struct `# Safety`).
            let outcome =
                panic::catch_unwind(AssertUnwindSafe(|| unsafe { (self.call)(self.data, task) }));
            if let Err(payload) = outcome {
                self.keep_first(payload);
            }
            ran += 1;
            // Release: pairs with the Acquire load in `finished`, so every task's effects
            // happen-before the caller sees the count reach zero.
            self.pending.fetch_sub(1, Ordering::Release);
        }
    }

    /// Keeps `payload` if it is the first panic; otherwise discards it where its `Drop`
    /// cannot unwind into the protocol.
    fn keep_first(&self, payload: Panic) {
        let boxed = Box::into_raw(Box::new(payload));
        // Release: publishes the payload to `take_panic`'s Acquire swap. A failed exchange
        // reads nothing through the pointer it sees.
        let kept = self.panic.compare_exchange(
            ptr::null_mut(),
            boxed,
            Ordering::Release,
            Ordering::Relaxed,
        );
        if kept.is_err() {
            // SAFETY: `boxed` came from `Box::into_raw` above and was not published.
            unwind::discard(*unsafe { Box::from_raw(boxed) });
        }
    }

    /// Under loom: a read of `alive` that races with `retire`'s write if this participant
    /// touches the job after its dispatch returned.
    #[cfg(rayforce_loom)]
    fn assert_alive(&self) {
        self.alive.with(|alive| {
            // SAFETY: loom checks this read against `retire`'s write; a race is the bug sought.
            let alive = unsafe { *alive };
            assert!(alive, "job touched after its dispatch returned");
        });
    }

    /// The next unclaimed task index (`>= n_tasks` when none is left).
    fn claim(&self) -> usize {
        if cfg!(rayforce_loom_broken = "racy_claim") {
            // Deliberately broken (loom must catch it): two participants can read the same
            // index and both run it.
            let task = self.next.load(Ordering::Relaxed);
            self.next.store(task + 1, Ordering::Relaxed);
            return task;
        }
        // Relaxed: the counter only hands out distinct indices; it publishes nothing.
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether every task has finished.
    pub(crate) fn finished(&self) -> bool {
        // Acquire: pairs with the Release decrement in `work`.
        self.pending.load(Ordering::Acquire) == 0
    }

    /// The first panic, if any, taken out of the job.
    fn take_panic(&self) -> Option<Panic> {
        // Acquire: pairs with the Release in `keep_first`.
        let kept = self.panic.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Box::into_raw` in `keep_first`, and the
        // swap took it out, so it is freed exactly once.
        (!kept.is_null()).then(|| *unsafe { Box::from_raw(kept) })
    }

    /// Ends the job's life (under loom, marks it dead) and resumes the first panic.
    pub(crate) fn retire(self) {
        // SAFETY: every helper has detached (README "Completion"); loom checks that.
        #[cfg(rayforce_loom)]
        self.alive.with_mut(|alive| unsafe { *alive = false });
        let panic = self.take_panic();
        drop(self);
        if let Some(payload) = panic {
            panic::resume_unwind(payload);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(payload) = self.take_panic() {
            unwind::discard(payload);
        }
    }
}
