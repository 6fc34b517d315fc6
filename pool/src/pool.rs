//! `Pool`: a fixed set of helper threads; `dispatch` runs tasks `0..n` with the caller as
//! worker 0 and wakes only the helpers the tasks can use. Protocol: `README.md`.

use crate::job::Job;
use crate::signal::{Signal, SignalState};
use crate::stats::{Counters, Stats};
use crate::sync::{
    self, thread, thread_local, Arc, AtomicBool, AtomicPtr, AtomicUsize, Mutex, Ordering,
};
use crate::worker;
use std::cell::Cell;

thread_local! {
    /// Whether this thread is running a pool task (any pool's): a dispatch from inside a
    /// task runs inline, so nested and cross-pool dispatches cannot deadlock.
    #[allow(clippy::missing_const_for_thread_local)] // loom's macro takes no `const { }`
    static IN_TASK: Cell<bool> = Cell::new(false);
}

/// Called on each helper thread as it starts, with the helper's index (1-based: the caller
/// is worker 0). The runtime binds helper k to an allocator arena with it. Boxed, because
/// loom's `Arc` cannot hold a `dyn` directly.
pub(crate) type ThreadStart = Arc<Box<dyn Fn(usize) + Send + Sync>>;

/// What the caller and the helpers share.
pub(crate) struct Shared {
    pub(crate) signal: Signal,
    /// The job of the dispatch in flight; null between dispatches (README step 2).
    pub(crate) job: AtomicPtr<Job>,
    /// A caller owns the helpers (README step 1).
    busy: AtomicBool,
    pub(crate) counters: Counters,
    pub(crate) spin_count: u32,
}

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
    shared: Arc<Shared>,
    width: usize,
    wide_width: usize,
    /// Helpers running: `width - 1`, plus the wide ones once started.
    helpers: AtomicUsize,
    threads: Mutex<Vec<thread::JoinHandle<()>>>,
    wide_started: AtomicBool,
    on_start: Option<ThreadStart>,
}

impl Pool {
    /// Starts the pool's `width - 1` helpers; the wide ones start on first use.
    pub(crate) fn start(
        width: usize,
        wide_width: usize,
        spin_count: u32,
        on_start: Option<ThreadStart>,
    ) -> std::io::Result<Pool> {
        let pool = Pool {
            shared: Arc::new(Shared {
                signal: Signal::new(),
                job: AtomicPtr::new(std::ptr::null_mut()),
                busy: AtomicBool::new(false),
                counters: Counters::new(),
                spin_count,
            }),
            width,
            wide_width: wide_width.max(width),
            helpers: AtomicUsize::new(0),
            threads: Mutex::new(Vec::new()),
            wide_started: AtomicBool::new(false),
            on_start,
        };
        pool.spawn_helpers(width - 1)?;
        Ok(pool)
    }

    /// Spawns helpers until `target` run, registering each once it exists.
    fn spawn_helpers(&self, target: usize) -> std::io::Result<()> {
        let mut threads = sync::lock(&self.threads);
        while threads.len() < target {
            let index = threads.len() + 1;
            let shared = Arc::clone(&self.shared);
            let on_start = self.on_start.clone();
            let handle = thread::Builder::new()
                .name(format!("rayforce-{index}"))
                .spawn(move || worker::run(&shared, index, on_start))?;
            threads.push(handle);
            // Release: pairs with the Acquire in `dispatch_wide`; counts only helpers that exist.
            self.helpers.store(threads.len(), Ordering::Release);
        }
        Ok(())
    }

    /// Participants in a `dispatch`, the caller included.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Participants in a `dispatch_wide`, the caller included.
    pub fn wide_width(&self) -> usize {
        self.wide_width
    }

    /// What the pool has done so far.
    pub fn stats(&self) -> Stats {
        self.shared
            .counters
            .snapshot(&self.shared.signal.empty_wakes)
    }

    /// The signal word now: between dispatches, both counts are zero (no drift).
    pub fn signal_state(&self) -> SignalState {
        self.shared.signal.state()
    }

    /// Runs `f(task)` once for each `task` in `0..n_tasks`, on up to [`width`](Self::width)
    /// participants (the caller is one), and returns when all have run. Wakes at most
    /// `n_tasks - 1` helpers. If tasks panic, the others still run and the first panic
    /// resumes here; the pool stays usable. From inside a task, or while another thread's
    /// dispatch is in flight, the tasks run inline on the caller.
    pub fn dispatch<F: Fn(usize) + Sync>(&self, n_tasks: usize, f: F) {
        self.run(n_tasks, &f, self.width - 1);
    }

    /// Like [`dispatch`](Self::dispatch), for latency-bound work: up to
    /// [`wide_width`](Self::wide_width) participants, using the SMT siblings the physical
    /// policy leaves idle. The extra helpers start on first use; if they cannot be started,
    /// the dispatch runs on those that exist.
    pub fn dispatch_wide<F: Fn(usize) + Sync>(&self, n_tasks: usize, f: F) {
        if self.wide_width > self.width && !self.wide_started.swap(true, Ordering::Relaxed) {
            // Best effort: a helper that cannot be spawned only narrows the dispatch.
            let _ = self.spawn_helpers(self.wide_width - 1);
        }
        // Acquire: pairs with the Release in `spawn_helpers`.
        let helpers = self.helpers.load(Ordering::Acquire);
        self.run(n_tasks, &f, helpers);
    }

    fn run<F: Fn(usize) + Sync>(&self, n_tasks: usize, f: &F, helpers: usize) {
        if n_tasks == 0 {
            return;
        }
        Counters::bump(&self.shared.counters.dispatches);
        let job = Job::new(f, n_tasks);
        let parallel =
            n_tasks > 1 && helpers > 0 && !IN_TASK.with(Cell::get) && self.shared.try_begin();
        if !parallel {
            Counters::bump(&self.shared.counters.inline_dispatches);
            as_task(|| job.work());
            job.retire();
            return;
        }
        // README "Dispatch", steps 2-7.
        self.shared
            .job
            .store(&job as *const Job as *mut Job, Ordering::Relaxed);
        let permits = if cfg!(rayforce_loom_broken = "signal_all") {
            helpers // deliberately broken: wakes helpers that can find no task
        } else {
            (n_tasks - 1).min(helpers)
        };
        self.shared.signal.post(permits as u32);
        as_task(|| job.work());
        self.shared.signal.withdraw();
        if cfg!(rayforce_loom_broken = "complete_on_signal") {
            // Deliberately broken: returns once no permit is left, not when work is done.
            while self.shared.signal.state().permits > 0 {
                sync::spin_hint();
            }
        } else {
            self.shared
                .signal
                .wait_until_quiet(self.shared.spin_count, || job.finished());
        }
        self.shared
            .job
            .store(std::ptr::null_mut(), Ordering::Relaxed);
        self.shared.end();
        job.retire();
    }
}

/// Runs `f` marked as a pool task, restoring the mark after.
fn as_task<R>(f: impl FnOnce() -> R) -> R {
    let was = IN_TASK.with(|t| t.replace(true));
    let result = f();
    IN_TASK.with(|t| t.set(was));
    result
}

/// Marks the current (helper) thread as running pool tasks for its whole life.
pub(crate) fn mark_helper_thread() {
    IN_TASK.with(|t| t.set(true));
}

impl Shared {
    /// README step 1: takes the helpers for one dispatch, or `false` if another has them.
    fn try_begin(&self) -> bool {
        // Acquire: pairs with `end`'s Release, so the previous dispatch's clean-up
        // (step 7) happens-before this one's start.
        self.busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// README step 7: gives the helpers back.
    fn end(&self) {
        debug_assert_eq!(self.signal.state(), SignalState::IDLE, "drift");
        // Release: pairs with `try_begin`'s Acquire.
        self.busy.store(false, Ordering::Release);
    }
}

impl Drop for Pool {
    /// Stops and joins every helper.
    fn drop(&mut self) {
        self.shared.signal.shut_down();
        for handle in sync::lock(&self.threads).drain(..) {
            let _ = handle.join();
        }
    }
}
