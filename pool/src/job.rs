//! `Job`: one dispatch's state, on the caller's stack: the type-erased closure, the claim
//! cursor, the count of unfinished tasks, and the first panic.

use crate::sync::{self, AtomicUsize, Mutex, Ordering};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

type Panic = Box<dyn Any + Send + 'static>;

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
    panic: Mutex<Option<Panic>>,
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
            panic: Mutex::new(None),
            #[cfg(rayforce_loom)]
            alive: loom::cell::UnsafeCell::new(true),
        }
    }

    /// Claims and runs tasks until none is left; returns how many this participant ran.
    /// A panicking task is caught; the first panic is kept for the caller.
    pub(crate) fn work(&self) -> usize {
        let mut ran = 0;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            let task = self.claim();
            if task >= self.n_tasks {
                return ran;
            }
            // SAFETY: the job is live while we work on it (struct `# Safety`).
            let outcome =
                panic::catch_unwind(AssertUnwindSafe(|| unsafe { (self.call)(self.data, task) }));
            if let Err(payload) = outcome {
                sync::lock(&self.panic).get_or_insert(payload);
            }
            ran += 1;
            // Release: pairs with the Acquire load in `finished`, so every task's effects
            // happen-before the caller sees the count reach zero.
            self.pending.fetch_sub(1, Ordering::Release);
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

    /// Ends the job's life (under loom, marks it dead) and resumes the first panic.
    pub(crate) fn retire(self) {
        // SAFETY: every helper has detached (README "Completion"); loom checks that.
        #[cfg(rayforce_loom)]
        self.alive.with_mut(|alive| unsafe { *alive = false });
        let panic = sync::lock(&self.panic).take();
        if let Some(payload) = panic {
            panic::resume_unwind(payload);
        }
    }
}
