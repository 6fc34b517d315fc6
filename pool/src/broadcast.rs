//! `broadcast` and `spawn_broadcast`: rayon's, one call on each of a pool's threads (README
//! "Broadcasts"). A broadcast's calling thread runs participant 0, and a letter in each
//! other helper's mailbox (`mail.rs`) runs the others, on their threads; a spawned one
//! leaves a call in each helper's mailbox and returns.

use crate::current;
use crate::detached;
use crate::fork;
use crate::mail::{self, Letter, Mailbox};
use crate::shared::Shared;
use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell};
use crate::unwind::{self, Panic};
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};

/// Where a broadcast's call runs: its participant's index and how many there are, as
/// rayon's `BroadcastContext`. Not `Send`: it describes the thread it was given on.
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    _on_this_thread: PhantomData<&'a mut dyn Fn()>,
}

impl BroadcastContext<'_> {
    /// This call's index among the broadcast's, from 0 to
    /// [`num_threads`](Self::num_threads) less one: for [`broadcast`](crate::broadcast),
    /// 0 is the calling thread; for [`spawn_broadcast`](crate::spawn_broadcast), the
    /// lowest helper.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many threads the broadcast runs on: for [`broadcast`](crate::broadcast), the
    /// calling thread and the pool's other helpers that serve, up to its width; for
    /// [`spawn_broadcast`](crate::spawn_broadcast), those helpers (with none, the spawner).
    #[must_use]
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index)
            .field("num_threads", &self.num_threads)
            .finish()
    }
}

/// One broadcast, on its caller's stack while the letters for it wait.
struct Broadcast<'op, OP, R> {
    op: &'op OP,
    /// The pool it runs on: current for each call, on whichever thread.
    shared: &'op Shared,
    num_threads: usize,
    /// Participant i's outcome, written once by the thread that ran it.
    outcomes: Vec<UnsafeCell<Option<std::thread::Result<R>>>>,
    /// Letters posted and not yet opened.
    unopened: AtomicUsize,
    /// Where the caller waits, notified by the last letter opened: its own mailbox if it
    /// is a helper (it opens the letters other broadcasts leave there meanwhile), else
    /// one made for this broadcast, which receives none.
    caller: Arc<Mailbox>,
}

// SAFETY: `op` is `Sync`; each outcome is written by the one thread that opens its letter
// (`Letter::open` runs once per index) and read by the caller after every letter was
// opened (the Acquire in `broadcast_in`), so the outcomes are shared as `R: Send` allows.
unsafe impl<OP: Sync, R: Send> Sync for Broadcast<'_, OP, R> {}

impl<OP, R> Broadcast<'_, OP, R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
{
    /// Runs participant `index`'s call, keeping its outcome.
    fn run(&self, index: usize) {
        let outcome = current::with(self.shared, || {
            panic::catch_unwind(AssertUnwindSafe(|| {
                (self.op)(context(index, self.num_threads))
            }))
        });
        if self.num_threads > 1 && fork::generation() != self.shared.generation {
            // The call forked, and this is the child: the broadcast's other threads exist
            // only in the parent, and what they were writing is in an unknown state.
            fork::abort_child("broadcast");
        }
        // SAFETY: participant `index` runs once, and its outcome is read only after every
        // letter was opened (`Sync` above).
        self.outcomes[index].with_mut(|slot| unsafe { *slot = Some(outcome) });
    }
}

impl<OP, R> Letter for Broadcast<'_, OP, R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    // `self` may be freed once the count below reaches 0, while this call still holds
    // `&self`: sound as for `Arc`'s drop, since a `Broadcast` holds atomics and cells
    // (a shared reference to interior-mutable data is not assumed live for the whole call).
    unsafe fn open(&self, index: usize) {
        self.run(index);
        // Cloned first: once the count reaches 0, the caller may return and free `self`.
        let caller = Arc::clone(&self.caller);
        // AcqRel: releases this outcome to the caller's Acquire load, and orders the
        // other letters' outcomes before the last decrement.
        if self.unopened.fetch_sub(1, Ordering::AcqRel) == 1 {
            caller.notify();
        }
    }
}

/// Runs `op` once on each of `shared`'s pool's threads: this one as participant 0, and
/// each helper below the pool's width that serves (this one left out, if it is one). Returns
/// the results by index; a panic resumes here once every call returned (the lowest
/// index's; the others are dropped).
pub(crate) fn broadcast_in<OP, R>(shared: &Shared, op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    // In a forked child, the parent's helpers do not exist: this thread is the only one.
    let delivery = (fork::generation() == shared.generation)
        .then(|| shared.mail.deliver(shared.width(), false));
    let posted = delivery
        .as_ref()
        .map_or(0, |delivery| delivery.targets.len());
    let num_threads = 1 + posted;
    let caller = mail::own().unwrap_or_else(|| Arc::new(Mailbox::new(0)));
    let broadcast = Broadcast {
        op: &op,
        shared,
        num_threads,
        outcomes: (0..num_threads).map(|_| UnsafeCell::new(None)).collect(),
        unopened: AtomicUsize::new(posted),
        caller: Arc::clone(&caller),
    };
    if let Some(delivery) = delivery {
        for (index, target) in (1..).zip(&delivery.targets) {
            // SAFETY: `broadcast` outlives every letter: this function returns (or
            // unwinds, which nothing below does before the wait) only after each was
            // opened.
            unsafe { mail::post(target, &broadcast, index) };
        }
    }
    if posted > 0 {
        // A helper asleep, parked, or blocked in a wait of its own reads its mailbox.
        shared.signal.wake_all();
    }
    broadcast.run(0);
    if posted > 0 {
        // Acquire: pairs with the AcqRel of the last letter opened: every outcome is
        // written.
        caller.wait_until(|| broadcast.unopened.load(Ordering::Acquire) == 0);
    }
    let mut panic: Option<Panic> = None;
    let results = broadcast
        .outcomes
        .into_iter()
        .filter_map(
            |outcome| match outcome.into_inner().expect("every participant ran") {
                Ok(result) => Some(result),
                Err(payload) => {
                    match panic {
                        None => panic = Some(payload),
                        Some(_) => unwind::discard(payload),
                    }
                    None
                }
            },
        )
        .collect();
    if let Some(payload) = panic {
        drop(results);
        panic::resume_unwind(payload);
    }
    results
}

/// A spawned broadcast's call, in the message of the abort its panic causes without a
/// handler.
const CALL: &str = "a call of `spawn_broadcast`";

/// A pointer to the shared state of the crew whose helper opens a spawned broadcast's call.
struct CrewOf(*const Shared);

// SAFETY: the call is opened by its target helper, which holds its crew's `Arc<Shared>`
// while it runs (it closes its mailbox, and opens what was left, before it stops).
unsafe impl Send for CrewOf {}

/// Leaves a call of `op` in the mailbox of each of `shared`'s pool's helpers below its width
/// that serve (this one included, if it is one) and returns: each runs it on its own
/// thread, as participant 0, 1, ... by helper index, wherever it next waits in the pool.
/// With none (a pool of one thread), runs it here, now. A panic in a call goes to the
/// pool's panic handler, else aborts the process.
pub(crate) fn spawn_broadcast_in<OP>(shared: &Shared, op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let delivery = (fork::generation() == shared.generation)
        .then(|| shared.mail.deliver(shared.width(), true))
        .filter(|delivery| !delivery.targets.is_empty());
    let Some(delivery) = delivery else {
        let call = move || op(context(0, 1));
        current::with(shared, || detached::run_as_spawned(shared, CALL, call));
        return;
    };
    let num_threads = delivery.targets.len();
    // The last call takes the spawner's handle: only calls drop `op`.
    let mut shared_op = Some(std::sync::Arc::new(op));
    for (index, target) in delivery.targets.iter().enumerate() {
        let op = if index + 1 == num_threads {
            shared_op.take()
        } else {
            shared_op.clone()
        }
        .expect("the spawner's handle is taken by the last call");
        let crew = CrewOf(shared);
        let call = Box::new(move || {
            let crew = crew;
            // SAFETY: as `CrewOf`'s `Send`: the crew's shared state outlives this call.
            let shared = unsafe { &*crew.0 };
            // `op`'s handle moves into the call, so its drop runs under the panic route too.
            let call = move || op(context(index, num_threads));
            current::with(shared, || detached::run_as_spawned(shared, CALL, call));
            if fork::generation() != shared.generation {
                // The call forked, and this is the child: whatever wait this thread opened
                // it in belongs to the parent.
                fork::abort_child("spawn_broadcast");
            }
            detached::count_call(shared, false);
        });
        detached::count_call(shared, true);
        mail::post_spawned(target, call);
    }
    drop(delivery);
    shared.signal.wake_all();
}

/// Participant `index` of `num_threads`' context.
fn context<'a>(index: usize, num_threads: usize) -> BroadcastContext<'a> {
    BroadcastContext {
        index,
        num_threads,
        _on_this_thread: PhantomData,
    }
}
