//! `Pool`: a fixed set of helper threads; `dispatch` runs tasks `0..n` with the caller as
//! worker 0 and wakes only the helpers the tasks can use. Protocol: `README.md`.

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::caller::Caller;
use crate::crew::{Crew, HelperSetup, StartError};
use crate::current;
use crate::detached;
use crate::follow::Follow;
use crate::fork::{self, PerProcess};
use crate::in_task::{as_task, in_task};
use crate::job::{Job, Liveness};
use crate::joins;
use crate::limits::MAX_WIDTH;
use crate::offering::Idle;
use crate::panics::{self, Panics};
#[cfg(target_os = "linux")]
use crate::place::Placement;
use crate::region::{Claims, Forked, Region};
use crate::scope::{reclaim_slots, scope_in};
use crate::shared::Shared;
use crate::signal::SlotCounts;
use crate::site_rate::Site;
use crate::slot::SignalState;
use crate::spin::SpinLimits;
use crate::stats::{Counters, Stats};
use crate::sync::{self, AtomicU64, Ordering};
use crate::tasks::{self, Chunks, Each, EachWithWorker, Participant, Tasks};
use crate::unwind::AbortOnUnwind;
use crate::yielding;
use rayforce_tunables::cpu::{self, CpuCounts};
use std::ops::Range;
use std::panic::{RefUnwindSafe, UnwindSafe};

/// A data-parallel worker pool. Built with [`Pool::builder`](crate::Pool::builder).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
/// let sum = AtomicU64::new(0);
/// pool.dispatch(100, |i| { sum.fetch_add(i as u64, Ordering::Relaxed); });
/// assert_eq!(sum.into_inner(), 4950);
/// ```
pub struct Pool {
    /// The active widths ([`Widths`], packed; README "Resizing"): what a dispatch starting
    /// now uses. They change with `resize`, or with a reading that changed them.
    active: AtomicU64,
    /// How the widths follow the machine.
    follow: Follow,
    /// The signal's slots: dispatches that may be in flight at once, and joins' offers.
    slots: SlotCounts,
    limits: SpinLimits,
    helpers: HelperSetup,
    /// Where helpers are pinned, when placement is on (`place.rs`).
    #[cfg(target_os = "linux")]
    placement: Option<std::sync::Arc<Placement>>,
    /// The helpers of this process: a forked child starts a fresh crew on next use.
    crew: PerProcess<Crew>,
}

// The pool's state stays consistent when a task panics: the panic is caught where the
// task ran and resumed on the caller only after the dispatch is quiet (README "Panics"),
// so observing the pool after a caught panic shows no broken invariant.
impl UnwindSafe for Pool {}
impl RefUnwindSafe for Pool {}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("width", &self.width())
            .field("wide_width", &self.wide_width())
            .field("max_in_flight", &self.slots.dispatches)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// Starts the pool's `width - 1` helpers; the wide ones start on first use. `fixed`:
    /// the widths were set explicitly and do not follow readings.
    pub(crate) fn start(
        (width, wide_width, fixed): (usize, usize, bool),
        slots: SlotCounts,
        limits: SpinLimits,
        follow: Follow,
        setup: HelperSetup,
        #[cfg(target_os = "linux")] placement: Option<std::sync::Arc<Placement>>,
        best_effort: bool,
    ) -> Result<Pool, StartError> {
        fork::watch();
        let wide_width = wide_width.max(width);
        let helpers = if best_effort { 0 } else { width - 1 };
        let crew = Crew::start(
            helpers,
            slots,
            limits,
            fork::generation(),
            wide_width - 1,
            &setup,
        )?;
        if best_effort && width > 1 {
            crew.start_missing(width - 1, &setup);
        }
        crew.shared.set_width(width);
        let widths = Widths {
            narrow: width,
            wide: wide_width,
            fixed,
        };
        Ok(Pool {
            active: AtomicU64::new(widths.pack()),
            follow,
            slots,
            limits,
            helpers: setup,
            #[cfg(target_os = "linux")]
            placement,
            crew: PerProcess::new(crew),
        })
    }

    /// The active widths.
    #[inline]
    fn widths(&self) -> Widths {
        // Relaxed: a width only bounds how many permits a dispatch posts; the helpers it
        // lets in are ordered by the permits themselves.
        Widths::unpack(self.active.load(Ordering::Relaxed))
    }

    /// The active (narrow, wide) widths.
    #[inline]
    fn active(&self) -> (usize, usize) {
        let widths = self.widths();
        (widths.narrow, widths.wide)
    }

    /// Sets the active widths, clamped to `1..=MAX_WIDTH` (the wide one at least the narrow
    /// one): the next dispatches use them, missing helpers start on the next dispatch that
    /// needs them, and helpers beyond them park once they leave the dispatch they are in. A
    /// dispatch in flight is not disturbed. The widths are then fixed: readings of the
    /// machine (the periodic re-check, [`refresh`](Self::refresh)) no longer change them,
    /// until the next `resize`.
    pub fn resize(&self, width: usize, wide_width: usize) {
        let narrow = width.clamp(1, MAX_WIDTH);
        let widths = Widths {
            narrow,
            wide: wide_width.clamp(narrow, MAX_WIDTH),
            fixed: true,
        };
        let crew = self.crew();
        crew.retry();
        let signal = &crew.shared.signal;
        signal.resize(|| {
            self.active.store(widths.pack(), Ordering::Relaxed);
            crew.shared.set_width(widths.narrow);
            Some((widths.wide - 1, signal.cpus()))
        });
    }

    /// Re-reads the CPUs now (allocation-free, as the first reading) and applies what
    /// changed: the pool's reading hook (the runtime's arenas) hears it first, the widths
    /// follow the policy's count (unless they were set explicitly: in the builder, by
    /// `rayforce.pool.workers` or by [`resize`](Self::resize)), the spin budget follows it,
    /// and helpers that could not be started before (a thread limit) are tried again.
    /// Returns whether anything changed.
    pub fn refresh(&self) -> bool {
        self.refresh_from(&cpu::read())
    }

    /// [`refresh`](Self::refresh) from a reading taken elsewhere.
    pub fn refresh_from(&self, counts: &CpuCounts) -> bool {
        let follow = &self.follow;
        follow.read_now();
        // The hook first: helpers this reading lets start bind under the arenas it gives.
        let hook_changed = follow.on_reading.as_ref().is_some_and(|hook| hook(counts));
        let crew = self.crew();
        let signal = &crew.shared.signal;
        // The spin budget matters only when anything spins.
        let cpus = if self.limits.enabled() {
            follow.cpus(counts)
        } else {
            signal.cpus()
        };
        let resized = signal.resize(|| {
            let before = self.widths();
            let mut after = before;
            if !before.fixed {
                (after.narrow, after.wide) = follow.widths(counts);
            }
            if after == before && cpus == signal.cpus() {
                return None;
            }
            self.active.store(after.pack(), Ordering::Relaxed);
            crew.shared.set_width(after.narrow);
            Some((after.wide - 1, cpus))
        });
        if resized {
            crew.retry();
            follow.changes.fetch_add(1, Ordering::Relaxed);
        }
        let started = self.retry_missing(crew);
        resized || started || hook_changed || self.follow_placement()
    }

    /// With placement on, moves the helpers if the mask changed or one was moved.
    fn follow_placement(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(placement) = &self.placement {
            return placement.follow();
        }
        false
    }

    /// Where each started helper is pinned, and why any is not (`rayforce.pool.place`;
    /// empty when placement is off, or off Linux).
    ///
    /// ```
    /// use rayforce_tunables::cpu::Place;
    /// let pool = rayforce_pool::Pool::builder().workers(2).place(Place::Spread).build().unwrap();
    /// for helper in pool.placement() {
    ///     println!("helper {} on CPU {:?} (node {:?})", helper.helper, helper.cpu, helper.node);
    /// }
    /// ```
    #[must_use]
    pub fn placement(&self) -> Vec<crate::HelperPlacement> {
        #[cfg(target_os = "linux")]
        if let Some(placement) = &self.placement {
            return placement.report();
        }
        Vec::new()
    }

    /// Helpers that could not be started (a thread limit) are tried again at every reading,
    /// so at most every `recheck_ms` on their own; returns whether any started.
    fn retry_missing(&self, crew: &Crew) -> bool {
        if crew.failure().is_none() {
            return false;
        }
        crew.retry();
        let serving = crew.serving();
        crew.ensure(self.active().0 - 1, &self.helpers);
        crew.serving() > serving
    }

    /// The shared state of this process's crew.
    #[inline]
    pub(crate) fn shared(&self) -> &Shared {
        &self.crew().shared
    }

    /// The crew of this process: after a fork, the child starts a fresh one here.
    #[inline]
    fn crew(&self) -> &Crew {
        self.crew.get(|stale| self.restart(stale))
    }

    /// In a forked child: a fresh crew with as many helpers as the parent's (whose threads
    /// do not exist here). If no helper can be started, the fresh crew has none and every
    /// dispatch runs on the caller.
    #[cold]
    fn restart(&self, stale: &Crew) -> Crew {
        let generation = fork::generation();
        let (width, wide_width) = self.active();
        let helpers = stale.serving().max(width - 1);
        let (slots, limits) = (self.slots, self.limits);
        Crew::start(
            helpers,
            slots,
            limits,
            generation,
            wide_width - 1,
            &self.helpers,
        )
        .or_else(|_| {
            let plain = HelperSetup {
                panic_handler: self.helpers.panic_handler.clone(),
                ..HelperSetup::default()
            };
            Crew::start(0, slots, limits, generation, wide_width - 1, &plain)
        })
        .inspect(|crew| crew.shared.set_width(width))
        .expect("a crew without helpers starts no thread")
    }

    /// Participants in a `dispatch`, the caller included: the active width, fewer if
    /// helpers could not be started (`stats().start_error` says why).
    #[must_use]
    pub fn width(&self) -> usize {
        self.capped(self.active().0)
    }

    /// The pool's [`width`](Self::width), under rayon's name (`ThreadPool::current_num_threads`):
    /// the threads a region runs on, the caller included.
    #[must_use]
    pub fn current_num_threads(&self) -> usize {
        self.width()
    }

    /// Participants in a `dispatch_wide`, the caller included: the active wide width (its
    /// extra helpers start on first use), fewer if helpers could not be started.
    #[must_use]
    pub fn wide_width(&self) -> usize {
        self.capped(self.active().1)
    }

    /// `width`, or the caller and the helpers serving when starting more failed.
    fn capped(&self, width: usize) -> usize {
        self.crew().shared.capped(width)
    }

    /// What the pool has done so far (in this process: a forked child counts afresh), the
    /// age of its CPU reading, and helpers it could not start.
    #[must_use]
    pub fn stats(&self) -> Stats {
        let crew = self.crew();
        let mut stats = crew.shared.counters.snapshot();
        stats.resizes = self.follow.changes.load(Ordering::Relaxed);
        stats.reading_age = self.follow.age();
        stats.start_error = crew.failure();
        stats.missing_helpers = if stats.start_error.is_some() {
            (self.active().1 - 1).saturating_sub(crew.serving())
        } else {
            0
        };
        let unplaced: Vec<_> = self
            .placement()
            .into_iter()
            .filter_map(|p| p.failure)
            .collect();
        stats.unplaced_helpers = unplaced.len();
        stats.place_failure = unplaced.first().copied();
        stats
    }

    /// The signal word now: between dispatches, both counts are zero (no drift).
    // A test hook, not an API: the integration tests and the public-API loom models check
    // the no-drift invariant through it from outside the crate.
    #[doc(hidden)]
    pub fn signal_state(&self) -> SignalState {
        self.crew().shared.signal.state()
    }

    /// Runs `f(task)` once for each `task` in `0..n_tasks`, on up to [`width`](Self::width)
    /// participants (the caller is one), and returns when all have run. Wakes at most
    /// `n_tasks - 1` helpers. If tasks panic, the others still run and the first panic
    /// resumes here once no helper is inside the dispatch; the pool stays usable.
    ///
    /// Several threads may dispatch at once: each dispatch takes a slot (up to
    /// [`max_in_flight`](crate::PoolBuilder::max_in_flight) at once) and the helpers share
    /// themselves among them. **Tasks may wait for each other** (a barrier across them, one
    /// task waiting for what another sends), up to as many as the pool is wide: a dispatch
    /// from outside the pool gets its helpers, waiting for a free slot while every slot is
    /// taken, and each helper it posts for comes to it once free. That wait ends when a
    /// dispatch in flight ends, so it never ends if one waits for this thread: a task that
    /// handed work to a thread (one it started, another pool's) which then dispatches here,
    /// or that needs a lock this thread holds, deadlocks like any lock cycle while every slot
    /// is taken. **From inside a task** (of
    /// any pool), a dispatch runs every task inline on the calling thread, in order: tasks
    /// that wait for a later task of the same nested dispatch then never return. The
    /// data-parallel operations, whose items never wait for one another, run inline instead
    /// of waiting when every slot is taken.
    ///
    /// In a child process forked from inside one of its tasks, the dispatch returns once the
    /// forking thread has run the tasks left: the tasks the parent's helpers held do not
    /// complete there (README "Fork").
    pub fn dispatch<F: Fn(usize) + Sync>(&self, n_tasks: usize, f: F) {
        self.run_resuming(n_tasks, &Each(f), Region::NARROW);
    }

    /// Like [`dispatch`](Self::dispatch), for latency-bound work: up to
    /// [`wide_width`](Self::wide_width) participants, using the SMT siblings the physical
    /// policy leaves idle. The extra helpers start on first use; if they cannot be started,
    /// the dispatch runs on those that exist.
    pub fn dispatch_wide<F: Fn(usize) + Sync>(&self, n_tasks: usize, f: F) {
        self.run_resuming(n_tasks, &Each(f), Region::WIDE);
    }

    /// Like [`dispatch`](Self::dispatch), on at most `workers` participants, and passes each
    /// task the index of the worker that runs it, for scratch space kept per worker:
    /// `f(worker, task)` with `worker < workers`, always, whatever the pool's width has
    /// become since the scratch was sized (a re-check that widened the pool, a `resize`):
    /// size the scratch once and pass its length. Worker 0 is the calling thread; worker k
    /// is helper k, the same thread from one dispatch to the next, and no two threads of one
    /// dispatch share an index. Past [`width`](Self::width), `workers` takes in the SMT
    /// siblings as [`dispatch_wide`](Self::dispatch_wide) does; the pool's wide width caps
    /// it. A dispatch from inside a task runs inline, on worker 0.
    ///
    /// # Panics
    /// If `workers` is 0 (the caller is worker 0), or if a task panics (as `dispatch`).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// // One buffer per worker, sized once and reused from dispatch to dispatch.
    /// let scratch: Vec<Mutex<Vec<u64>>> = (0..pool.width()).map(|_| Mutex::default()).collect();
    /// pool.dispatch_with_worker(8, scratch.len(), |worker, task| {
    ///     scratch[worker].lock().unwrap().push(task as u64);
    /// });
    /// let all: u64 = scratch.iter().flat_map(|s| s.lock().unwrap().clone()).sum();
    /// assert_eq!(all, 28);
    /// ```
    pub fn dispatch_with_worker<F>(&self, n_tasks: usize, workers: usize, f: F)
    where
        F: Fn(usize, usize) + Sync,
    {
        assert!(
            workers > 0,
            "dispatch_with_worker: workers = 0 (expected at least 1: the caller is worker 0)"
        );
        let region = Region {
            wide: workers > self.width(),
            participants: workers,
            workers,
            ..Region::NARROW
        };
        self.run_resuming(n_tasks, &EachWithWorker(f), region);
    }

    /// The data-parallel operations' hook (`ops/pipeline.rs`, README "The operations'
    /// hook"): runs `f(participant, range)` over claimed ranges of `0..n_tasks`, narrow or
    /// `wide`, on at most `participants` participants, each participant's `rank` below
    /// that, no claim of more than `most_per_claim` tasks, claimed as `claims` says (from
    /// homes, or in order until a stop flag is set). The tasks are
    /// independent: they run inline when every slot is taken, and may wake sleeping helpers
    /// late (README "Waking late"). `Err` only in a child forked from inside a task, where
    /// the tasks the parent's helpers held never finish (README "Fork"), with the region's
    /// first panic, not resumed: what the operation's participants wrote must be leaked
    /// before anything unwinds.
    pub(crate) fn run_chunks(
        &self,
        n_tasks: usize,
        wide: bool,
        (participants, most_per_claim): (usize, usize),
        (claims, site): (Claims<'_>, Option<Site>),
        f: &(dyn Fn(Participant, Range<usize>) + Sync),
    ) -> Result<(), Forked> {
        let region = Region {
            wide,
            participants,
            workers: usize::MAX,
            claims,
            independent: true,
            most_per_claim,
            site,
        };
        self.run(n_tasks, &Chunks(f), region)
    }

    /// This pool's data-parallel operations on up to its wide width (`dispatch_wide`'s):
    /// `pool.wide().map(..)`; see [`Wide`](crate::ops::Wide).
    pub fn wide(&self) -> crate::ops::Wide<'_> {
        crate::ops::Wide(self)
    }

    /// The widest a region runs at now: its participants' ranks are below this.
    pub(crate) fn region_width(&self, wide: bool) -> usize {
        if wide {
            self.wide_width()
        } else {
            self.width()
        }
    }

    /// Runs `op` with this pool current (README "Joining"): [`join`](crate::join) and
    /// [`current_num_threads`](crate::current_num_threads) inside it, at any depth, use
    /// this pool. Runs on the calling thread, which takes part as the pool's worker 0.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let (a, b) = pool.install(|| rayforce_pool::join(|| 1 + 1, || 2 + 2));
    /// assert_eq!((a, b), (2, 4));
    /// assert_eq!(pool.install(rayforce_pool::current_num_threads), 2);
    /// ```
    pub fn install<R>(&self, op: impl FnOnce() -> R) -> R {
        current::with(&self.crew_for_joins().shared, op)
    }

    /// The crew, its helpers for the active width started: what joins offer to.
    fn crew_for_joins(&self) -> &Crew {
        let crew = self.crew();
        crew.ensure(self.active().0 - 1, &self.helpers);
        crew
    }

    /// Runs `a` and `b`, `b` possibly on another thread of this pool, and returns both
    /// results, as [`rayforce_pool::join`](crate::join) inside [`install`](Self::install).
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// fn fib(n: u64) -> u64 {
    ///     if n < 2 {
    ///         return n;
    ///     }
    ///     let (a, b) = rayforce_pool::join(|| fib(n - 1), || fib(n - 2));
    ///     a + b
    /// }
    /// assert_eq!(pool.join(|| fib(20), || fib(10)), (6765, 55));
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let shared = &self.crew_for_joins().shared;
        current::with(shared, || joins::join_in(shared, a, b))
    }

    /// Makes a scope on this pool and runs `op` in it, as [`rayforce_pool::scope`](crate::scope)
    /// inside [`install`](Self::install).
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.scope(|s| {
    ///     // The spawned task starts at once on the helper: the scope's body may wait for it.
    ///     s.spawn(move |_| tx.send(42).unwrap());
    ///     assert_eq!(rx.recv().unwrap(), 42);
    /// });
    /// ```
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::Scope<'scope>) -> R,
    {
        self.scope_here(false, op)
    }

    /// A scope of this pool, current while `op` runs in it on this thread
    /// (`body_outside_pool`: see `Scope`'s field).
    fn scope_here<'scope, OP, R>(&self, body_outside_pool: bool, op: OP) -> R
    where
        OP: FnOnce(&crate::Scope<'scope>) -> R,
    {
        let shared = &self.crew_for_joins().shared;
        current::with(shared, || scope_in(shared, body_outside_pool, op))
    }

    /// Starts `op` on this pool and returns at once, as rayon's `ThreadPool::spawn`: an
    /// idle helper runs it, else the first that becomes idle, with this pool current (see
    /// [`rayforce_pool::spawn`](crate::spawn)). With no helper, `op` runs here and now. A
    /// panic in `op` goes to the pool's panic handler, else aborts the process. Dropped
    /// with spawned tasks queued or running, the pool returns at once, and its helpers run
    /// them before they stop.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// for i in 0..8u64 {
    ///     let tx = tx.clone();
    ///     pool.spawn(move || tx.send(i).unwrap());
    /// }
    /// drop(pool); // the helper runs what is left, then stops
    /// drop(tx);
    /// assert_eq!(rx.iter().sum::<u64>(), 28);
    /// ```
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        let shared = &self.crew_for_joins().shared;
        current::with(shared, || detached::spawn_in(shared, op));
    }

    /// Runs `op` once on each of this pool's threads and returns the results by
    /// [`index`](BroadcastContext::index), as rayon's `ThreadPool::broadcast` (see
    /// [`rayforce_pool::broadcast`](crate::broadcast)): this thread runs index 0, and each
    /// of the pool's helpers below its width runs one more, on its own thread, wherever it
    /// next waits in the pool.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(3).build().unwrap();
    /// let threads = pool.broadcast(|ctx| (ctx.index(), std::thread::current().id()));
    /// assert_eq!(threads.len(), 3);
    /// assert_eq!(threads[0], (0, std::thread::current().id()));
    /// assert!(threads[1].1 != threads[0].1 && threads[2].1 != threads[1].1);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let shared = &self.crew_for_joins().shared;
        current::with(shared, || broadcast_in(shared, op))
    }

    /// Runs `op` once on each of this pool's helpers and returns, as rayon's
    /// `ThreadPool::spawn_broadcast` (see [`rayforce_pool::spawn_broadcast`](crate::spawn_broadcast)):
    /// each helper below the width runs one call on its own thread wherever it next waits
    /// in the pool; with no helper, `op` runs here and now. A panic goes to the pool's
    /// panic handler, else aborts the process.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(3).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut indices: Vec<usize> = rx.iter().take(2).collect();
    /// indices.sort();
    /// assert_eq!(indices, [0, 1]);
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        let shared = &self.crew_for_joins().shared;
        spawn_broadcast_in(shared, op);
    }

    /// rayon's `ThreadPool::yield_now`: [`yield_now`](crate::yield_now) if this thread is
    /// in this pool (in one of its tasks or helpers, or its [`install`](Self::install)),
    /// else `None`.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(pool.yield_now(), None);
    /// assert!(pool.install(|| pool.yield_now()).is_some());
    /// ```
    #[must_use = "whether anything ran tells a waiting loop whether to back off"]
    pub fn yield_now(&self) -> Option<crate::Yield> {
        self.in_this_pool().map(yielding::run_one)
    }

    /// rayon's `ThreadPool::yield_local`: [`yield_local`](crate::yield_local) if this
    /// thread is in this pool, else `None`.
    #[must_use = "whether anything ran tells a waiting loop whether to back off"]
    pub fn yield_local(&self) -> Option<crate::Yield> {
        self.in_this_pool().map(|_| yielding::run_local())
    }

    /// rayon's `ThreadPool::current_thread_index`: [`current_thread_index`](crate::current_thread_index)
    /// if this thread is in this pool (in one of its tasks or helpers, or its
    /// [`install`](Self::install)), else `None`.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert_eq!(pool.install(|| pool.current_thread_index()), Some(0));
    /// ```
    #[must_use]
    pub fn current_thread_index(&self) -> Option<usize> {
        self.in_this_pool()
            .and_then(|_| current::thread_index())
            .map(|(_, index)| index)
    }

    /// This pool's shared state, if this thread is in the pool now. In a forked child
    /// whose pool has no crew of its own yet, none (the thread can only be in the parent's),
    /// and none is started to say so.
    fn in_this_pool(&self) -> Option<&Shared> {
        let shared: &Shared = &self.crew.peek()?.shared;
        current::map(|current| current.is_some_and(|c| std::ptr::eq(c, shared))).then_some(shared)
    }

    /// rayon's `ThreadPool::spawn_fifo`: [`spawn`](Self::spawn), whose tasks are taken in
    /// the order they were spawned, as every spawned task here is.
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.spawn(op);
    }

    /// rayon's `in_place_scope`, `scope_fifo` and `in_place_scope_fifo` on this pool:
    /// [`scope`](Self::scope), whose body runs on the calling thread and whose queue is
    /// taken in the order tasks were spawned, as every scope's here. The body runs with
    /// this pool current, as `scope`'s does (rayon's `in_place_scope` leaves the caller's
    /// own pool current for it). Called from a thread outside the pool, an in-place scope's
    /// task that no helper can take (a pool of one thread) starts at once on the spawner,
    /// so the body may wait for it, as rayon's workers would run it beside the body; inside
    /// the pool, and for `scope_fifo`, it runs after the body.
    ///
    /// ```
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let mut sum = 0;
    /// pool.in_place_scope(|s| s.spawn(|_| sum += 1));
    /// pool.scope_fifo(|s| s.spawn_fifo(|_| sum += 1));
    /// pool.in_place_scope_fifo(|s| s.spawn_fifo(|_| sum += 1));
    /// assert_eq!(sum, 3);
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::Scope<'scope>) -> R,
    {
        self.scope_here(self.in_this_pool().is_none(), op)
    }

    /// As [`in_place_scope`](Self::in_place_scope): rayon's `scope_fifo`.
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::ScopeFifo<'scope>) -> R,
    {
        self.scope(op)
    }

    /// As [`in_place_scope`](Self::in_place_scope): rayon's `in_place_scope_fifo`.
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::ScopeFifo<'scope>) -> R,
    {
        self.in_place_scope(op)
    }

    /// Runs the region, resuming its first panic, also in a child forked from inside a
    /// task (which runs the tasks left and returns, README "Fork").
    fn run_resuming<T: Tasks>(&self, n_tasks: usize, closure: &T, region: Region<'_>) {
        if let Err(Forked(panic)) = self.run(n_tasks, closure, region) {
            panics::resume(panic);
        }
    }

    /// Runs the region, in README "Dispatch"'s steps; `Err` if a task forked and this is
    /// the child.
    fn run<T: Tasks>(&self, n_tasks: usize, closure: &T, region: Region<'_>) -> Result<(), Forked> {
        if n_tasks == 0 {
            return Ok(());
        }
        if self.follow.due() {
            self.refresh();
        }
        let crew = self.crew();
        let helpers = self.helpers_for(crew, region);
        run_on(&crew.shared, n_tasks, closure, region, helpers)
    }

    /// The helpers a region may use, started if missing, and the highest helper index that
    /// may take its permits (any active one, below the caller's bound on worker indices).
    #[inline]
    fn helpers_for(&self, crew: &Crew, region: Region<'_>) -> (usize, usize) {
        let (width, wide_width) = self.active();
        let max_helpers = if region.wide { wide_width } else { width } - 1;
        crew.ensure(max_helpers, &self.helpers);
        let helpers = crew
            .serving()
            .min(max_helpers)
            .min(region.participants.max(1) - 1);
        (helpers, (wide_width - 1).min(region.workers - 1))
    }
}

/// README "Dispatch"'s steps 1-7 on the crew whose shared state is `shared`, with as many
/// helpers as `helpers.0` and none above index `helpers.1` (`Pool::helpers_for`); `Err` if
/// a task forked and this is the child. `n_tasks > 0`.
#[inline]
fn run_on<T: Tasks>(
    shared: &Shared,
    n_tasks: usize,
    closure: &T,
    region: Region<'_>,
    (helpers, helper_limit): (usize, usize),
) -> Result<(), Forked> {
    let counters = shared.counters.callers();
    Counters::bump(&counters.dispatches);
    let alive = Liveness::new();
    // Step 1: a slot, or the region runs on the caller alone.
    let Some(slot) = take_slot(shared, n_tasks, helpers, region) else {
        Counters::bump(&counters.inline_dispatches);
        let job = Job::new(closure, n_tasks, 1, region.claims, &alive);
        current::with(shared, || run_inline(&job, region.most_per_claim));
        return Ok(());
    };
    let permits = permits(n_tasks, helpers);
    let mut job = Job::new(closure, n_tasks, permits + 1, region.claims, &alive);
    job.max_chunk = job.max_chunk.min(region.most_per_claim.max(1));
    // Nothing from here to the end of step 6 may unwind: helpers hold pointers into the
    // caller's closure (README "Panics").
    let guard = AbortOnUnwind("a dispatch between posting and quiet");
    let owned = shared.signal.slot(slot);
    owned.publish(&job); // step 2
    let caller = Caller::post(
        shared,
        slot,
        &job,
        (permits, helper_limit),
        (region.independent, region.site),
        counters,
    );
    current::with(shared, || as_task(|| caller.work())); // steps 3-5
    if shared.generation != fork::generation() {
        // A task forked and this is the child: the helpers counted as attached exist
        // only in the parent, and this crew is abandoned (README "Fork").
        guard.disarm();
        alive.end();
        return Err(Forked(owned.panics.take()));
    }
    wait_until_quiet(shared, slot, counters); // step 6
    guard.disarm();
    alive.end();
    let panic = owned.panics.take();
    owned.release(); // step 7
    panics::resume(panic);
    Ok(())
}

/// The operations' hook (`Pool::run_chunks`) on a pool known only by its crew's shared
/// state, as inside its tasks and helpers: narrow, on its active width.
pub(crate) fn run_chunks_on(
    shared: &Shared,
    n_tasks: usize,
    (participants, most_per_claim): (usize, usize),
    (claims, site): (Claims<'_>, Option<Site>),
    f: &(dyn Fn(Participant, Range<usize>) + Sync),
) -> Result<(), Forked> {
    if n_tasks == 0 {
        return Ok(());
    }
    let region = Region {
        wide: false,
        participants,
        workers: usize::MAX,
        claims,
        independent: true,
        most_per_claim,
        site,
    };
    // As many helpers as serve, any active one admitted (the indices of those that serve
    // need not be the lowest).
    let helpers = (shared.serving_width() - 1).min(participants.max(1) - 1);
    run_on(
        shared,
        n_tasks,
        &Chunks(f),
        region,
        (helpers, shared.width() - 1),
    )
}

/// Step 1: the slot the region posts in, or `None` when it runs on the caller alone (one
/// task, no helper, or from inside a task: tasks that may wait for each other, or an
/// operation while no thread of the pool is idle). Tasks that may wait for each other wait
/// for a slot; an operation's items never do, so they run inline rather than wait, and
/// inside a task they post only while a thread is idle to share them (README "Dispatch").
#[inline]
fn take_slot(shared: &Shared, n_tasks: usize, helpers: usize, region: Region<'_>) -> Option<usize> {
    let signal = &shared.signal;
    let nested = || in_task() && (!region.independent || signal.idle() == Idle::Nobody);
    if n_tasks < 2 || helpers == 0 || nested() {
        None
    } else if region.independent || crate::broken::variant!("inline_when_full") {
        signal.own_slot()
    } else {
        let reclaim = || {
            joins::reclaim_offers(shared);
            reclaim_slots(shared);
            joins::run_an_offer(shared);
        };
        Some(
            signal
                .own_slot()
                .unwrap_or_else(|| signal.wait_for_slot(reclaim)),
        )
    }
}

/// The permits a region of `n_tasks` posts with `helpers` available: no more helpers than
/// can find a task.
#[inline]
fn permits(n_tasks: usize, helpers: usize) -> usize {
    if crate::broken::variant!("signal_all") {
        helpers // deliberately broken: wakes helpers that can find no task
    } else {
        (n_tasks - 1).min(helpers)
    }
}

/// Runs every task of `job` on the caller, as a task; resumes the first panic.
fn run_inline(job: &Job, most_per_claim: usize) {
    let panics = Panics::new();
    // One range unless an iterator bounded them.
    as_task(|| {
        tasks::in_ranges(
            0..job.n_tasks,
            most_per_claim,
            || job.stopped(),
            |range| job.run(Participant::CALLER, range, &panics),
        );
    });
    panics.resume();
}

/// Step 6: waits until every helper that took part detached.
#[inline]
fn wait_until_quiet(shared: &Shared, slot: usize, counters: &Counters) {
    let signal = &shared.signal;
    if crate::broken::variant!("complete_on_signal") {
        // Deliberately broken: returns once no permit is left, not when work is done.
        while signal.slot(slot).state().permits > 0 {
            sync::spin_hint();
        }
    } else {
        signal.wait_until_quiet(slot, counters);
    }
}

/// The active widths of a pool, and whether they were set explicitly (in the builder, by
/// `rayforce.pool.workers`, or by `resize`): fixed widths do not follow readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Widths {
    narrow: usize,
    wide: usize,
    fixed: bool,
}

impl Widths {
    const FIXED: u64 = 1 << 63;

    /// One word, `fixed << 63 | narrow << 32 | wide` (each width at most `MAX_WIDTH`).
    fn pack(self) -> u64 {
        debug_assert!(
            self.narrow <= MAX_WIDTH && self.wide <= MAX_WIDTH,
            "{self:?}"
        );
        let fixed = if self.fixed { Self::FIXED } else { 0 };
        fixed | (self.narrow as u64) << 32 | self.wide as u64
    }

    fn unpack(word: u64) -> Widths {
        Widths {
            narrow: ((word & !Self::FIXED) >> 32) as usize,
            wide: (word & u64::from(u32::MAX)) as usize,
            fixed: word & Self::FIXED != 0,
        }
    }
}
