//! `scope`: tasks spawned with `s.spawn(..)`, which may borrow from outside the scope, each
//! started at once; the scope returns once all of them ran (README "Scopes"). A scope's
//! first spawn owns a slot of its pool for the scope's life; each spawn queues its task and
//! posts a permit while fewer helpers hold permits or work in the scope than the pool has,
//! and a helper that takes one runs queued tasks until the queue is empty. With no helper
//! or no free slot, a spawn runs its task at once, on the spawning thread.

use crate::fork;
use crate::in_task::as_task;
use crate::job::{Job, Liveness};
use crate::joins;
use crate::panics::{self, Panics};
use crate::shared::Shared;
use crate::spin;
use crate::sync::{self, AtomicUsize, Mutex, Ordering};
use crate::tasks::{self, Participant, Tasks};
use crate::unwind::{self, AbortOnUnwind};
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

/// A spawned task, waiting in its scope's queue.
type Spawned<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + 'scope>;

/// Where tasks are spawned, as rayon's `Scope`: made by [`scope`](crate::scope) or
/// [`Pool::scope`](crate::Pool::scope), which return once every task spawned in it ran.
pub struct Scope<'scope> {
    shared: NonNull<Shared>,
    /// Helpers a scope offers its tasks to at most: the pool's width less the caller.
    helpers: usize,
    /// Tasks spawned and not taken yet.
    queue: Mutex<VecDeque<Spawned<'scope>>>,
    /// The slot the tasks are offered in (`NO_SLOT`: none yet), owned by the scope from the
    /// first spawn that found one free to its end; set under the queue's lock, read by the
    /// owner without it.
    slot: AtomicUsize,
    /// Tasks in the queue: a hint, read without the lock by the threads that drain it.
    queued: AtomicUsize,
    /// The first panic of a spawned task.
    panics: Panics,
    alive: Liveness,
    /// Invariant in `'scope`, as rayon's.
    marker: PhantomData<&'scope mut &'scope ()>,
}

const NO_SLOT: usize = usize::MAX;

// SAFETY: the pool's shared state is `Sync` and outlives the scope (`scope_in` returns only
// after every task ran); the queue holds `Send` tasks behind a lock, the rest is atomic, and
// `alive` is written once, by the owner, after every thread let go of the scope.
unsafe impl Sync for Scope<'_> {}
// SAFETY: as for `Sync`.
unsafe impl Send for Scope<'_> {}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("helpers", &self.helpers)
            .field("queued", &self.queued.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Runs `op` with a new scope of `shared`'s pool on this thread; returns once `op` and
/// every task spawned in the scope finished, resuming `op`'s panic, else the first task's.
pub(crate) fn scope_in<'scope, OP, R>(shared: &Shared, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    // Dropped only once every task ran: in a child forked from inside a task, another
    // thread of the parent may have been writing its queue (`Scope::wait_for_tasks`).
    let scope = ManuallyDrop::new(Scope {
        shared: NonNull::from(shared),
        helpers: shared.width() - 1,
        queue: Mutex::new(VecDeque::new()),
        slot: AtomicUsize::new(NO_SLOT),
        queued: AtomicUsize::new(0),
        panics: Panics::new(),
        alive: Liveness::new(),
        marker: PhantomData,
    });
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
    scope.wait_for_tasks();
    let spawned_panic = scope.panics.take();
    drop(ManuallyDrop::into_inner(scope));
    match outcome {
        Ok(result) => {
            panics::resume(spawned_panic);
            result
        }
        Err(payload) => {
            if let Some(discarded) = spawned_panic {
                unwind::discard(discarded);
            }
            panic::resume_unwind(payload)
        }
    }
}

impl<'scope> Scope<'scope> {
    /// Spawns `task` in this scope: it starts at once on an idle thread of the pool, or on
    /// this one if the pool has no other (or every slot is taken), and the scope returns only
    /// after it ran. It may spawn more tasks through the scope it is passed. A panic in it
    /// resumes where the scope was made, once every task finished.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let visited = AtomicUsize::new(0);
    /// rayforce_pool::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|s| {
    ///             visited.fetch_add(1, Ordering::Relaxed);
    ///             s.spawn(|_| {
    ///                 visited.fetch_add(10, Ordering::Relaxed);
    ///             });
    ///         });
    ///     }
    /// });
    /// assert_eq!(visited.into_inner(), 44);
    /// ```
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let mut queue = sync::lock(&self.queue);
        // In a forked child the crew's helpers do not exist: every spawn runs inline.
        // Relaxed: only stored under the lock held here.
        let slot = match self.slot.load(Ordering::Relaxed) {
            _ if self.forked() => None,
            NO_SLOT => self.own_slot().inspect(|&slot| {
                // Release: pairs with the Acquire load in `wait_for_tasks`.
                self.slot.store(slot, Ordering::Release);
            }),
            slot => Some(slot),
        };
        let Some(slot) = slot else {
            drop(queue);
            return as_task(|| self.run_spawned(task));
        };
        queue.push_back(Box::new(task));
        // Relaxed: a hint; the permit's Release (or the lock) orders the task itself.
        self.queued.fetch_add(1, Ordering::Relaxed);
        drop(queue);
        self.shared()
            .signal
            .post_below(slot, self.helpers, self.helpers);
    }

    fn shared(&self) -> &Shared {
        // SAFETY: the pool's shared state outlives the scope (`scope_in`).
        unsafe { self.shared.as_ref() }
    }

    /// A free slot, now the scope's, with the scope's job published in it; `None` if the
    /// pool has no helper or no slot is free (after freeing this thread's finished offers).
    fn own_slot(&self) -> Option<usize> {
        if self.helpers == 0 {
            return None;
        }
        let shared = self.shared();
        let signal = &shared.signal;
        let slot = signal.own_slot().or_else(|| {
            joins::reclaim_offers(shared);
            signal.own_slot()
        })?;
        // Every permit carries a first task below `participants` (`Slot::try_attach`), all
        // of them the same: run the queue. None beyond those, so a helper claims no more.
        let participants = self.helpers + 1;
        let data = (self as *const Scope<'scope>).cast();
        let job = Job::erased(
            tasks::run_erased::<Scope<'scope>>,
            data,
            participants,
            participants,
            &self.alive,
        );
        signal.slot(slot).publish(&job);
        Some(slot)
    }

    /// Runs queued tasks until the queue is empty.
    fn drain(&self) {
        while let Some(task) = self.pop() {
            self.run_spawned(task);
        }
    }

    fn pop(&self) -> Option<Spawned<'scope>> {
        if self.queued.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut queue = sync::lock(&self.queue);
        let task = queue.pop_front()?;
        // Relaxed: as in `spawn`; under the lock, so the count never exceeds the queue's
        // length once the lock is free.
        self.queued.fetch_sub(1, Ordering::Relaxed);
        Some(task)
    }

    /// Runs a spawned task, keeping its panic for the scope's owner.
    fn run_spawned(&self, task: impl FnOnce(&Scope<'scope>)) {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| task(self))) {
            self.panics.keep_first(payload);
        }
    }

    /// The owner, after `op`: runs queued tasks, and waits for the helpers running others,
    /// until no task is queued, no permit posted and no helper attached. Tasks are spawned
    /// only by `op` and by running tasks (whose threads are attached, or this one), and a
    /// helper detaches only once the queue is empty, so that state is final; then the slot
    /// is released.
    fn wait_for_tasks(&self) {
        // Not under the queue's lock: in a forked child a helper of the parent may hold it.
        // Acquire: pairs with the Release store in `spawn`.
        let slot = self.slot.load(Ordering::Acquire);
        if slot == NO_SLOT {
            return; // nothing was posted: every task ran inline
        }
        let shared = self.shared();
        let signal = &shared.signal;
        let owned = signal.slot(slot);
        // Nothing from here to the release may unwind: helpers hold pointers to the scope.
        let guard = AbortOnUnwind("a scope between its first post and its tasks' end");
        while !self.forked() {
            as_task(|| self.drain());
            if self.forked() {
                break; // a task forked, and this is the child
            }
            signal.withdraw(slot);
            let state = owned.state();
            let left = state.attached > 0 && !const { crate::broken::variant("scope_skip_wait") };
            if !left && state.permits == 0 && sync::lock(&self.queue).is_empty() {
                guard.disarm();
                self.alive.end();
                owned.release();
                return;
            }
            // A helper runs tasks, which may spawn more: run those that come while a
            // helper would spin, then block until the helpers detach.
            let window = signal.spin_ceiling_ns();
            let more = window > 0
                && spin::spin_for(window, || {
                    (self.queued.load(Ordering::Relaxed) > 0 || owned.is_quiet()).then_some(())
                })
                .0
                .is_some();
            if !more {
                signal.wait_until_quiet(slot, shared.counters.callers());
            }
        }
        self.finish_in_forked_child(guard, slot);
    }

    /// Whether this is a child forked since the scope's pool started its crew.
    fn forked(&self) -> bool {
        self.shared().generation != fork::generation()
    }

    /// In a child forked from inside a task, where the crew's helpers do not exist: runs the
    /// tasks nobody took, unless a helper was inside the scope at the fork (its tasks are
    /// missing here, and the queue may be half-written: panics, leaking the scope). The
    /// slot is abandoned with the crew (README "Fork").
    fn finish_in_forked_child(&self, guard: AbortOnUnwind, slot: usize) {
        guard.disarm();
        if self.shared().signal.slot(slot).state().attached > 0 {
            panic!(
                "a task forked inside `scope`: in the child, the tasks the parent's helpers \
                 were running are missing"
            );
        }
        as_task(|| self.drain());
    }
}

impl Tasks for Scope<'_> {
    fn run(&self, _who: Participant, _tasks: Range<usize>, _panics: &Panics) {
        self.drain();
    }
}
