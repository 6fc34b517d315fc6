//! `scope`: tasks spawned with `s.spawn(..)`, which may borrow from outside the scope, each
//! started at once; the scope returns once all of them ran (README "Scopes"). A scope's
//! first spawn owns a slot of its pool; each spawn queues its task and posts a permit while
//! fewer helpers hold permits or work in the scope than the pool has now, and a helper that
//! takes one runs queued tasks until the queue is empty. With no helper that can take a
//! permit, a spawn leaves its task queued for the owner, who runs the queue after the body;
//! with no free slot, it runs its task at once, on the spawning thread. A dispatch of the
//! body that waits for a slot frees the scope's once nobody works in it (`reclaim_slots`).

use crate::fork;
use crate::in_task::as_task;
use crate::job::{Job, Liveness};
use crate::joins;
use crate::limits::MAX_WIDTH;
use crate::panics::{self, Panics};
use crate::shared::{PanicHandler, Shared};
use crate::sync::{self, AtomicUsize, Mutex, Ordering};
use crate::tasks::{self, Participant, Tasks};
use crate::unwind::{self, AbortOnUnwind};
use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

/// What a spawned task is, in the message of the abort its panic causes without a handler.
const SPAWNED: &str = "a task spawned by `spawn`";

/// A spawned task, waiting in its scope's queue.
type Spawned<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + 'scope>;

/// What a scope's lock guards.
struct Queue<'scope> {
    /// Tasks spawned and not taken yet.
    tasks: VecDeque<Spawned<'scope>>,
    /// Helpers running queued tasks, counted from their first look at the queue to the one
    /// that finds it empty: each will look again before it leaves, so a spawn posts a
    /// permit only while fewer than the helpers it can reach hold permits or are counted
    /// here.
    draining: usize,
    /// The pool's spawned broadcasts' calls posted and not returned (the detached scope's
    /// only): counted here so that one locked read (`busy`) sees a call, or the task it
    /// spawned before it returned.
    calls: usize,
}

/// Where tasks are spawned, as rayon's `Scope`: made by [`scope`](crate::scope) or
/// [`Pool::scope`](crate::Pool::scope), which return once every task spawned in it ran.
pub struct Scope<'scope> {
    shared: NonNull<Shared>,
    queue: Mutex<Queue<'scope>>,
    /// The slot the tasks are offered in (`NO_SLOT`: none now), owned by the scope from a
    /// spawn that found one free until the scope's end or `free_slot`; read and written
    /// under the queue's lock (and without it in a forked child, where no other thread is).
    slot: AtomicUsize,
    /// Tasks in the queue: what the owner waits for beside its helpers' detaches, read
    /// without the lock.
    queued: AtomicUsize,
    /// The first panic of a spawned task.
    panics: Panics,
    alive: Liveness,
    /// The pool's scope for `spawn` (`detached.rs`): it offers its tasks in the slot kept for
    /// spawned tasks, and nobody waits for a task: its panic goes to `panic_handler`, else
    /// aborts the process.
    detached: bool,
    /// An in-place scope whose body runs on a thread outside the pool (rayon's
    /// `in_place_scope` from a thread not its pool's, whose workers would run a task beside
    /// the body): a task no helper can take runs at once on the spawner, so the body may
    /// wait for it.
    body_outside_pool: bool,
    panic_handler: Option<PanicHandler>,
    /// Invariant in `'scope`, as rayon's.
    marker: PhantomData<&'scope mut &'scope ()>,
}

/// rayon's `ScopeFifo`: a [`Scope`], whose queue is taken in the order tasks were spawned
/// (`scope_fifo`, `spawn_fifo`).
pub type ScopeFifo<'scope> = Scope<'scope>;

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
            .field("queued", &self.queued.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// A scope whose body this thread runs, linked to the one its body is nested in: what a
/// dispatch of the body waiting for a slot may free (`reclaim_slots`).
struct Owner {
    /// The `Scope`, its lifetime erased.
    scope: NonNull<()>,
    outer: Option<NonNull<Owner>>,
}

sync::const_thread_local! {
    /// The innermost scope whose body this thread runs.
    static OWNED: Cell<Option<NonNull<Owner>>> = Cell::new(None);
}

/// Runs `op` with a new scope of `shared`'s pool on this thread; returns once `op` and
/// every task spawned in the scope finished, resuming `op`'s panic, else the first task's.
pub(crate) fn scope_in<'scope, OP, R>(shared: &Shared, body_outside_pool: bool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    // Dropped only once every task ran: in a child forked from inside a task, another
    // thread of the parent may have been writing its queue (`Scope::wait_for_tasks`).
    let scope = ManuallyDrop::new(Scope {
        body_outside_pool,
        ..Scope::new(shared)
    });
    let owner = Owner {
        scope: NonNull::from(&*scope).cast(),
        outer: OWNED.with(Cell::get),
    };
    OWNED.with(|owned| owned.set(Some(NonNull::from(&owner))));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
    OWNED.with(|owned| owned.set(owner.outer));
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

/// Frees the slots of `shared`'s pool held by the scopes whose bodies this thread runs,
/// where nobody works in them now (`Scope::free_slot`). A dispatch of a body waiting for a
/// slot calls it: the scope cannot end while its body waits, so only this frees its slot.
pub(crate) fn reclaim_slots(shared: &Shared) {
    let mut next = OWNED.with(Cell::get);
    while let Some(owner) = next {
        // SAFETY: an `Owner` is linked only while `scope_in`'s frame holding it and its
        // scope is live, and this thread is inside that frame (running the body).
        let owner = unsafe { owner.as_ref() };
        // SAFETY: as above; the lifetime erased is the scope's, which outlives its body.
        let scope = unsafe { owner.scope.cast::<Scope<'_>>().as_ref() };
        if std::ptr::eq(scope.shared(), shared) {
            scope.free_slot();
        }
        next = owner.outer;
    }
}

impl<'scope> Scope<'scope> {
    /// A scope of `shared`'s pool, with no task yet.
    fn new(shared: &Shared) -> Scope<'scope> {
        Scope {
            shared: NonNull::from(shared),
            queue: Mutex::new(Queue {
                tasks: VecDeque::new(),
                draining: 0,
                calls: 0,
            }),
            slot: AtomicUsize::new(NO_SLOT),
            queued: AtomicUsize::new(0),
            panics: Panics::new(),
            alive: Liveness::new(),
            detached: false,
            body_outside_pool: false,
            panic_handler: None,
            marker: PhantomData,
        }
    }

    /// The detached scope of `shared`'s pool, for `spawn`: a task's panic goes to
    /// `panic_handler`, else aborts the process.
    pub(crate) fn detached(shared: &Shared, panic_handler: Option<PanicHandler>) -> Scope<'scope> {
        Scope {
            detached: true,
            panic_handler,
            ..Scope::new(shared)
        }
    }

    /// Spawns `task` in this scope: it starts at once on an idle thread of the pool, or on
    /// this one if every slot is taken. If the pool has no other thread now, it waits in the
    /// scope's queue for the scope's body to end, and the scope's thread runs it then, as
    /// rayon's does on a pool of one thread (a body that waits for it there waits forever,
    /// as in rayon). The scope returns only after it ran. It may spawn more tasks through the
    /// scope it is passed. A panic in it resumes where the scope was made, once every task
    /// finished.
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
        // In a forked child the crew's helpers do not exist, and one of the parent's may have
        // held the queue's lock at the fork: every spawn runs inline.
        if self.forked() {
            return as_task(|| self.run_spawned(SPAWNED, task));
        }
        let shared = self.shared();
        let signal = &shared.signal;
        // Read before the lock: a pool resized meanwhile is seen after the post.
        let (helpers, limit) = shared.reachable_helpers();
        let mut queue = sync::lock(&self.queue);
        // Relaxed, as every access to `slot` but a forked child's: under the lock.
        let owned = self.slot.load(Ordering::Relaxed);
        let slot = match owned {
            _ if helpers == 0 => None,
            NO_SLOT => self.own_slot().inspect(|&slot| {
                self.slot.store(slot, Ordering::Relaxed);
            }),
            slot => Some(slot),
        };
        if slot.is_none() && (self.detached || helpers > 0 || self.body_outside_pool) {
            // The pool's detached scope has no owner to run what no helper takes; with every
            // slot taken the pool has helpers, and with the body outside the pool rayon's
            // has workers beside it: rayon's would lend one to the task, so it starts at once
            // here and the body may wait for it.
            drop(queue);
            return as_task(|| self.run_spawned(SPAWNED, task));
        }
        queue.tasks.push_back(Box::new(task));
        // Relaxed: the lock, or `wake_owner`'s fence and lock, order it for the owner.
        self.queued.fetch_add(1, Ordering::Relaxed);
        // Under the lock: a helper counted as draining looks at the queue again, and a slot
        // `free_slot` released takes no late permit. Any helper active at the read may take
        // it.
        // The detached scope has no owner to run what no permit offers: a helper draining it
        // may be one the width no longer counts (a wide one, or one resized away since), so
        // its cap leaves the draining out.
        let cap = if self.detached {
            helpers
        } else {
            helpers.saturating_sub(queue.draining)
        };
        // With no slot there is no helper the pool could offer the task to (one thread, or
        // narrowed to one): the owner runs it after the body, as rayon's one thread runs it
        // once free, or a helper already draining the queue does. The spawner may hold a
        // lock the task takes.
        let posted = slot.is_some_and(|slot| signal.slot(slot).add_permit_below(cap, limit));
        drop(queue);
        // After the lock, the slot may have been freed (by the owner's `free_slot`, once
        // this task ran) and owned by another dispatch: a wake-up there is spurious, and
        // harmless.
        if posted {
            // Its SeqCst fence pairs with the one in `Signal::park`: if no helper that the
            // posted limit admits is active now (the pool was resized since the read, even
            // narrowed and widened again), this thread sees it and runs the queue itself;
            // else such a helper, parking later, scans and takes the permit.
            signal.after_post(1, limit, !crate::broken::variant!("spawn_no_wake"));
            if shared.reachable_below(limit) == 0 && !crate::broken::variant!("spawn_unchecked") {
                self.run_unreachable();
            }
        }
        // The owner may wait for its helpers, and one of them for this task, with no
        // permit left for it (or none posted): the owner runs it.
        let held = slot.or(Some(owned).filter(|&held| held != NO_SLOT));
        if let Some(slot) = held.filter(|_| !crate::broken::variant!("scope_no_owner_wake")) {
            signal.wake_owner(slot);
        }
    }

    /// rayon's `ScopeFifo::spawn_fifo`: [`spawn`](Self::spawn), whose queue is taken in
    /// the order tasks were spawned.
    ///
    /// ```
    /// let total = std::sync::atomic::AtomicUsize::new(0);
    /// rayforce_pool::scope_fifo(|s| {
    ///     for i in 1..=4 {
    ///         let total = &total;
    ///         s.spawn_fifo(move |_| {
    ///             total.fetch_add(i, std::sync::atomic::Ordering::Relaxed);
    ///         });
    ///     }
    /// });
    /// assert_eq!(total.into_inner(), 10);
    /// ```
    pub fn spawn_fifo<F>(&self, task: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn(task);
    }

    /// Whether the scope holds a slot now: a spawn found a helper to offer its task to
    /// (a model's look, on the owner's thread).
    #[cfg(all(test, rayforce_loom))]
    pub(crate) fn holds_slot(&self) -> bool {
        // Relaxed: read on the thread that spawned, after its spawn wrote it.
        self.slot.load(Ordering::Relaxed) != NO_SLOT
    }

    /// Whether a spawned task's panic goes to a handler (the pool's detached scope only).
    pub(crate) fn has_panic_handler(&self) -> bool {
        self.panic_handler.is_some()
    }

    fn shared(&self) -> &Shared {
        // SAFETY: the pool's shared state outlives the scope (`scope_in`).
        unsafe { self.shared.as_ref() }
    }

    /// A free slot, now the scope's, with the scope's job published in it; `None` if no
    /// slot is free (after freeing this thread's finished offers). The pool's detached
    /// scope takes the slot kept for spawned tasks, which nobody else owns.
    fn own_slot(&self) -> Option<usize> {
        let shared = self.shared();
        let signal = &shared.signal;
        let slot = if self.detached {
            signal.spawn_slot()
        } else {
            signal.own_slot().or_else(|| {
                joins::reclaim_offers(shared);
                signal.own_slot()
            })
        }?;
        // Every permit carries a first task below `participants` (`Slot::try_attach`), all
        // of them the same: run the queue. None beyond those, so a helper claims no more. At
        // most a permit per helper at once, whatever the pool's width becomes.
        let participants = MAX_WIDTH;
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

    /// After a post that no helper can take (the pool was resized meanwhile): takes back the
    /// scope's permits and runs the queue on this thread.
    #[cold]
    fn run_unreachable(&self) {
        let queue = sync::lock(&self.queue);
        // Under the lock, the slot is still the scope's if it is set.
        let slot = self.slot.load(Ordering::Relaxed);
        if slot != NO_SLOT {
            self.shared().signal.withdraw(slot);
        }
        drop(queue);
        as_task(|| self.drain(false));
    }

    /// Counts a spawned broadcast's call posted (`true`) or returned (`false`).
    pub(crate) fn count_call(&self, posted: bool) {
        let mut queue = sync::lock(&self.queue);
        if posted {
            queue.calls += 1;
        } else {
            queue.calls -= 1;
        }
    }

    /// Whether a task is queued here, a helper is running one, or a spawned broadcast's
    /// call is posted and has not returned.
    pub(crate) fn busy(&self) -> bool {
        let queue = sync::lock(&self.queue);
        !queue.tasks.is_empty() || queue.draining > 0 || queue.calls > 0
    }

    /// Runs the first queued task on this thread, if there is one (a thread yielding to
    /// the pool): whether it ran one. Not in a forked child, where another of the parent's
    /// threads may have held the queue's lock.
    pub(crate) fn run_one(&self) -> bool {
        if self.forked() {
            return false;
        }
        let task = self.take(&mut sync::lock(&self.queue));
        task.map(|task| as_task(|| self.run_spawned(SPAWNED, task)))
            .is_some()
    }

    /// The first queued task, taken out of `queue`.
    fn take(&self, queue: &mut Queue<'scope>) -> Option<Spawned<'scope>> {
        let task = queue.tasks.pop_front()?;
        // Relaxed: as in `spawn`.
        self.queued.fetch_sub(1, Ordering::Relaxed);
        Some(task)
    }

    /// Runs queued tasks until the queue is empty; a helper counted as draining meanwhile.
    fn drain(&self, helper: bool) {
        let mut queue = sync::lock(&self.queue);
        queue.draining += usize::from(helper);
        while let Some(task) = self.take(&mut queue) {
            drop(queue);
            self.run_spawned(SPAWNED, task);
            if helper && self.forked() {
                // The task forked, and this helper is the child's only thread: another of
                // the parent's may have held the lock at the fork. The helper exits.
                return;
            }
            queue = sync::lock(&self.queue);
        }
        queue.draining -= usize::from(helper);
    }

    /// Runs a spawned task (`what`, named in the abort's message), keeping its panic for the
    /// scope's owner; in the pool's detached scope, handing it to the pool's panic handler,
    /// else aborting the process (rayon's `spawn`).
    pub(crate) fn run_spawned(&self, what: &'static str, task: impl FnOnce(&Scope<'scope>)) {
        if self.detached && self.panic_handler.is_none() {
            let guard = AbortOnUnwind(what);
            task(self);
            return guard.disarm();
        }
        let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| task(self))) else {
            return;
        };
        if let Some(handler) = &self.panic_handler {
            let guard = AbortOnUnwind("a pool's panic handler");
            handler(payload);
            guard.disarm();
        } else {
            self.panics.keep_first(payload);
        }
    }

    /// The owner, after `op`: runs queued tasks, and waits for the helpers running others
    /// (or for tasks they queue), until no task is queued and the slot's word is clear (no
    /// permit, no limit, no helper attached). A task is spawned only while the body or a
    /// task runs (on its thread, or one it lent the scope to and outlives), and a task
    /// runs on an attached helper or this thread, so that state is final; then the slot is
    /// released.
    fn wait_for_tasks(&self) {
        // Nothing from here to the release may unwind: helpers hold pointers to the scope.
        let guard = AbortOnUnwind("a scope between its first post and its tasks' end");
        let shared = self.shared();
        let signal = &shared.signal;
        while !self.forked() {
            as_task(|| self.drain(false));
            if self.forked() {
                break; // a task forked, and this is the child
            }
            let queue = sync::lock(&self.queue);
            let slot = self.slot.load(Ordering::Relaxed);
            if slot == NO_SLOT {
                guard.disarm();
                return; // every task ran: inline, or in a slot freed once nobody worked there
            }
            signal.withdraw(slot);
            let owned = signal.slot(slot);
            let settled = if crate::broken::variant!("scope_skip_wait") {
                owned.state().permits == 0
            } else {
                owned.is_clear()
            };
            if settled && queue.tasks.is_empty() {
                drop(queue);
                guard.disarm();
                self.alive.end();
                owned.release();
                return;
            }
            drop(queue);
            // Helpers run tasks, which may spawn more: wait until they detach or queue one.
            signal.wait_until(slot, shared.counters.callers(), || {
                owned.is_quiet() || self.queued.load(Ordering::Relaxed) > 0
            });
        }
        self.finish_in_forked_child(guard);
    }

    /// Frees the scope's slot if nobody works in it: withdraws its permits and, with no
    /// task queued and no helper attached, releases it; the next spawn owns one again. Runs
    /// the queued tasks (on this thread, the owner's) if there are any: a later call frees
    /// it. Called by the owner while its body waits for a slot.
    fn free_slot(&self) {
        if self.forked() {
            return;
        }
        let queue = sync::lock(&self.queue);
        let slot = self.slot.load(Ordering::Relaxed);
        if slot == NO_SLOT {
            return;
        }
        let signal = &self.shared().signal;
        signal.withdraw(slot);
        if !queue.tasks.is_empty() {
            drop(queue);
            return as_task(|| self.drain(false));
        }
        let owned = signal.slot(slot);
        if owned.is_clear() {
            self.slot.store(NO_SLOT, Ordering::Relaxed);
            owned.release();
        }
    }

    /// Whether this is a child forked since the scope's pool started its crew.
    fn forked(&self) -> bool {
        self.shared().generation != fork::generation()
    }

    /// In a child forked from inside a task, where the crew's helpers do not exist: runs the
    /// tasks nobody took, unless a helper was inside the scope at the fork (its tasks are
    /// missing here, the queue may be half-written, and a task may have been halfway
    /// through writing what the scope's caller owns: aborts). The slot is abandoned with
    /// the crew (README "Fork").
    fn finish_in_forked_child(&self, guard: AbortOnUnwind) {
        guard.disarm();
        // The only thread here: no lock needed. With no helper attached at the fork, none
        // held the lock `drain` takes (a thread the body lent the scope to aside).
        let slot = self.slot.load(Ordering::Relaxed);
        if slot != NO_SLOT && self.shared().signal.slot(slot).state().attached > 0 {
            fork::abort_child("scope");
        }
        as_task(|| self.drain(false));
    }
}

impl Tasks for Scope<'_> {
    fn run(&self, _who: Participant, _tasks: Range<usize>, _panics: &Panics) {
        self.drain(true);
    }
}
