//! `Crew`: the helper threads of one process (their state shared with callers:
//! `shared.rs`). A pool
//! has one crew; a child forked from the process gets a fresh one on next use, because the
//! parent's helpers do not exist there (README "Fork").

use crate::current;
use crate::detached;
use crate::fork_gate::{self, Passage};
use crate::mail::Mailbox;
use crate::shared::{PanicHandler, Shared, ThreadStart};
use crate::signal::{Signal, SlotCounts};
use crate::spin::SpinLimits;
use crate::stats::StartFailure;
use crate::sync::{self, thread, Arc, AtomicBool, Mutex, Ordering};
use crate::worker;

/// How a pool's helper threads start: what each runs first, its name, its stack size.
#[derive(Clone, Default)]
pub(crate) struct HelperSetup {
    /// Runs on helper k as it starts.
    pub(crate) on_start: Option<ThreadStart>,
    /// Runs on helper k as it stops (not in a forked child, nor after a start that failed).
    pub(crate) on_exit: Option<ThreadStart>,
    /// Takes a spawned task's panic (`detached.rs`).
    pub(crate) panic_handler: Option<PanicHandler>,
    /// Helper k's name is `names[k - 1]`; past the list (a pool that widened since it was
    /// built), `rayforce-{k}`.
    pub(crate) names: Vec<String>,
    /// The helpers' stack size in bytes; `std`'s default where `None`.
    pub(crate) stack_size: Option<usize>,
}

impl HelperSetup {
    /// Helper `index`'s thread, not started yet.
    fn thread(&self, index: usize) -> thread::Builder {
        let name =
            (self.names.get(index - 1).cloned()).unwrap_or_else(|| format!("rayforce-{index}"));
        let builder = thread::Builder::new().name(name);
        match self.stack_size {
            Some(bytes) => builder.stack_size(bytes),
            None => builder,
        }
    }
}

/// Why helpers could not be started.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The thread could not be spawned.
    Spawn(std::io::Error),
    /// The start hook panicked on helper `helper`; that helper never served.
    Hook { helper: usize, message: String },
}

/// The helpers of one process.
pub(crate) struct Crew {
    pub(crate) shared: Arc<Shared>,
    threads: Mutex<Vec<thread::JoinHandle<()>>>,
    /// Why helpers last failed to start: they stay missing (no retry on every dispatch)
    /// until the widths change. Shown by `stats()` and `inspect`. Whether it holds one is
    /// `Shared::start_failed`.
    failure: Mutex<Option<StartFailure>>,
    failed: AtomicBool,
    /// Whether dropping the crew may wait for its helpers to end: not with an exit hook,
    /// which may wait for the dropping thread.
    joins_on_drop: bool,
}

impl Crew {
    /// A crew of `helpers` helpers for the current fork generation, sharing `slots` (for
    /// dispatches in flight at once and joins' offers) with the callers.
    pub(crate) fn start(
        helpers: usize,
        slots: SlotCounts,
        limits: SpinLimits,
        generation: u64,
        active_helpers: usize,
        setup: &HelperSetup,
    ) -> Result<Crew, StartError> {
        let crew = Crew {
            shared: Arc::new(Shared::new(
                Signal::new(limits, slots, active_helpers),
                generation,
            )),
            threads: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            joins_on_drop: setup.on_exit.is_none(),
        };
        detached::keep_in(&crew.shared, setup.panic_handler.clone());
        crew.grow(helpers, setup)?;
        Ok(crew)
    }

    /// Spawns helpers until `target` exist; with a start hook, waits until each ran it.
    /// Only helpers that got past the hook are counted as serving.
    fn grow(&self, target: usize, setup: &HelperSetup) -> Result<(), StartError> {
        let mut threads = sync::lock(&self.threads);
        let mut spawned = Ok(());
        let mut mailboxes = Vec::new();
        while threads.len() < target {
            let index = threads.len() + 1;
            let shared = Arc::clone(&self.shared);
            let hooks = (setup.on_start.clone(), setup.on_exit.clone());
            let counters = self.shared.counters.for_new_helper();
            let builder = setup.thread(index);
            let mailbox = Arc::new(Mailbox::new(index));
            let own = Arc::clone(&mailbox);
            // Begun after this thread's allocations above, as `Passage::begin` requires.
            let starting = Passage::begin();
            match builder.spawn(move || {
                starting.end(); // std has recorded the thread: forks may go on
                worker::run(&shared, index, hooks, &counters, own);
                // `shared` may be the last handle, freed as this closure returns, before
                // the thread's other thread-locals drop (a pool dropped while spawned
                // tasks ran does not join its helpers): none may find it current then.
                current::leave_for_thread();
                fork_gate::hold_until_exit();
            }) {
                Ok(handle) => {
                    mailboxes.push(mailbox);
                    threads.push(handle);
                }
                Err(err) => {
                    spawned = Err(StartError::Spawn(err));
                    break;
                }
            }
        }
        // Only helpers that serve are counted; without a hook, every one started does, from
        // helper 1 on.
        let (serving, lowest) = if setup.on_start.is_some() {
            let (serving, lowest, failure) = self.shared.wait_for_starts(threads.len());
            if let Some((helper, message)) = failure {
                spawned = spawned.and(Err(StartError::Hook { helper, message }));
            }
            (serving, lowest)
        } else {
            let lowest = if threads.is_empty() { usize::MAX } else { 1 };
            (threads.len(), lowest)
        };
        // Registered once spawned (its thread known), unless its helper stopped already.
        for mailbox in mailboxes {
            self.shared.mail.register(mailbox);
        }
        self.shared.set_serving(serving, lowest);
        spawned
    }

    /// Makes sure `target` helpers serve, starting the missing ones (the wide ones on the
    /// first wide dispatch, more after the pool grew). Best effort: a helper that cannot be
    /// started only narrows dispatches; the failure is kept, and not retried until
    /// [`retry`](Self::retry). Not from a thread in a task (a helper, its start hook
    /// included): its regions run inline, and a start hook would wait here for `threads`,
    /// which the thread starting its helper holds until the hook returns.
    #[inline]
    pub(crate) fn ensure(&self, target: usize, setup: &HelperSetup) {
        if self.serving() < target
            && !self.failed.load(Ordering::Relaxed)
            && !crate::in_task::in_task()
        {
            self.start_missing(target, setup);
        }
    }

    /// `ensure`'s slow path, and a best-effort pool's first start (from any thread: a pool
    /// built in a task starts its own crew, whose lock no hook of its holds): starts helpers
    /// up to `target`, keeping the failure if any, and forgetting an earlier one once every
    /// helper up to `target` serves.
    #[cold]
    pub(crate) fn start_missing(&self, target: usize, setup: &HelperSetup) {
        match self.grow(target, setup) {
            // A helper whose start hook panicked stays, not serving: the failure stays too.
            Ok(()) if self.serving() >= target => self.keep_failure(None),
            Ok(()) => {}
            Err(err) => {
                let failure = match err {
                    StartError::Spawn(err) => err
                        .raw_os_error()
                        .map_or(StartFailure::Unknown, StartFailure::Os),
                    StartError::Hook { .. } => StartFailure::HookPanicked,
                };
                self.keep_failure(Some(failure));
                self.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The widths changed: the next `ensure` tries to start missing helpers again.
    pub(crate) fn retry(&self) {
        self.failed.store(false, Ordering::Relaxed);
    }

    /// Why helpers last failed to start, if they did.
    pub(crate) fn failure(&self) -> Option<StartFailure> {
        if !self.shared.start_failed() {
            return None;
        }
        *sync::lock(&self.failure)
    }

    /// Keeps `failure` as why helpers last failed to start (`None`: they all serve).
    fn keep_failure(&self, failure: Option<StartFailure>) {
        let mut kept = sync::lock(&self.failure);
        *kept = failure;
        // Under the lock, read by `failure` before it takes it.
        self.shared.set_start_failed(failure.is_some());
    }

    /// Helpers that serve now.
    #[inline]
    pub(crate) fn serving(&self) -> usize {
        self.shared.serving()
    }
}

impl Drop for Crew {
    /// Stops every helper, and joins them unless spawned tasks (or spawned broadcasts'
    /// calls) run, or the helpers run an exit hook. A helper stops only once no permit or
    /// letter is left for it (README "Spawns", "Broadcasts"), so spawned tasks still queued
    /// run first: while any is queued or running, the helpers are left to run them and
    /// stop on their own, as rayon's pool does (a task, or an exit hook, may be waiting for
    /// the thread that drops the pool). So too where it is dropped on one of its helpers (a
    /// spawned task held the last handle): another helper may be waiting for this one.
    fn drop(&mut self) {
        self.shared.signal.shut_down();
        let this = thread::current().id();
        let handles = std::mem::take(&mut *sync::lock(&self.threads));
        let on_a_helper = handles.iter().any(|handle| handle.thread().id() == this);
        if self.joins_on_drop && !on_a_helper && !detached::busy(&self.shared) {
            for handle in handles {
                let _ = handle.join();
            }
        }
    }
}
