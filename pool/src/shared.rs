//! `Shared`: what a crew's helpers share with the pool's callers (the signal, the
//! statistics, the fork generation they run in, where they report their start, their
//! spawned tasks and their mailboxes).

use crate::mail::Mailboxes;
use crate::signal::Signal;
use crate::stats::CounterSet;
use crate::sync::{self, unmodeled, Arc, AtomicUsize, Condvar, Mutex, Ordering};
use std::any::Any;
use std::sync::OnceLock;

/// Called on each helper thread as it starts, with the helper's index (1-based: the caller
/// is worker 0). The runtime binds helper k to an allocator arena with it. Boxed, because
/// loom's `Arc` cannot hold a `dyn` directly.
pub(crate) type ThreadStart = Arc<Box<dyn Fn(usize) + Send + Sync>>;

/// Called with the payload of a spawned task's panic (rayon's panic handler). Boxed, as
/// [`ThreadStart`].
pub(crate) type PanicHandler = Arc<Box<dyn Fn(Box<dyn Any + Send>) + Send + Sync>>;

/// What the caller and the helpers share.
pub(crate) struct Shared {
    pub(crate) signal: Signal,
    pub(crate) counters: CounterSet,
    /// The fork generation (`fork.rs`) this crew's helpers run in.
    pub(crate) generation: u64,
    /// The pool's active (narrow) width, for joins and `current_num_threads` on threads
    /// that know the pool only by its crew (its helpers).
    width: AtomicUsize,
    /// Helpers that serve (spawned and past their start hook), as the crew last counted
    /// them.
    serving: AtomicUsize,
    /// The lowest index among them (`usize::MAX`: none), published with `serving`.
    lowest_serving: AtomicUsize,
    /// Whether starting helpers last failed: every region reads it (`Pool::width`), without
    /// the crew's lock.
    start_failed: unmodeled::AtomicBool,
    /// Where helpers with a start hook report that it returned.
    startup: Startup,
    /// The pool's spawned tasks (`detached.rs`), set as the crew starts; untyped, so that
    /// this file names nothing built on it.
    pub(crate) spawns: OnceLock<Box<dyn Any + Send + Sync>>,
    /// The helpers' mailboxes, for broadcasts (`mail.rs`).
    pub(crate) mail: Mailboxes,
}

/// Helpers that ran their start hook: how many reported, how many serve, the first failure.
struct StartState {
    reported: usize,
    serving: usize,
    /// The lowest index of a helper that serves (`usize::MAX`: none).
    lowest_serving: usize,
    failure: Option<(usize, String)>,
}

struct Startup {
    state: Mutex<StartState>,
    changed: Condvar,
}

impl Shared {
    /// The state of a crew of the fork generation `generation`, signalling through `signal`.
    pub(crate) fn new(signal: Signal, generation: u64) -> Shared {
        Shared {
            signal,
            counters: CounterSet::new(),
            generation,
            width: AtomicUsize::new(1),
            serving: AtomicUsize::new(0),
            lowest_serving: AtomicUsize::new(usize::MAX),
            start_failed: unmodeled::AtomicBool::new(false),
            startup: Startup {
                state: Mutex::new(StartState {
                    reported: 0,
                    serving: 0,
                    lowest_serving: usize::MAX,
                    failure: None,
                }),
                changed: Condvar::new(),
            },
            spawns: OnceLock::new(),
            mail: Mailboxes::default(),
        }
    }

    /// The pool's active width, as its pool last set it: less one, the highest index of a
    /// helper that may take a permit posted now.
    pub(crate) fn width(&self) -> usize {
        // Relaxed: a width bounds which threads permits admit; nothing it publishes.
        self.width.load(Ordering::Relaxed)
    }

    /// The threads a region may run on now: the active width, capped as
    /// [`capped`](Self::capped) says.
    pub(crate) fn serving_width(&self) -> usize {
        self.capped(self.width())
    }

    /// `width`, or, where starting helpers failed, the caller and the helpers that serve
    /// if fewer (`Pool::width` and `wide_width`).
    pub(crate) fn capped(&self, width: usize) -> usize {
        if self.start_failed() {
            width.min(1 + self.serving())
        } else {
            width
        }
    }

    /// Whether starting helpers last failed (the crew keeps why).
    pub(crate) fn start_failed(&self) -> bool {
        // Relaxed: the crew's lock orders the failure itself; a failure kept a moment ago
        // and not yet seen reads as none, as it would have a moment earlier.
        self.start_failed.load(Ordering::Relaxed)
    }

    /// Sets whether starting helpers last failed.
    pub(crate) fn set_start_failed(&self, failed: bool) {
        self.start_failed.store(failed, Ordering::Relaxed);
    }

    /// Sets the pool's active width (at start, resize, and readings).
    pub(crate) fn set_width(&self, width: usize) {
        self.width.store(width, Ordering::Relaxed);
    }

    /// Publishes the helpers that serve: `serving` of them, the lowest index `lowest`
    /// (`usize::MAX`: none).
    pub(crate) fn set_serving(&self, serving: usize, lowest: usize) {
        // Relaxed: read with `serving`, which orders it.
        self.lowest_serving.store(lowest, Ordering::Relaxed);
        // Release: pairs with the Acquire in `serving`.
        self.serving.store(serving, Ordering::Release);
    }

    /// Helpers that serve now.
    #[inline]
    pub(crate) fn serving(&self) -> usize {
        // Acquire: pairs with the Release in `set_serving`.
        self.serving.load(Ordering::Acquire)
    }

    /// The limit a permit posted now carries (`Signal::active_helpers`), and how many
    /// helpers may take one posted with it (README "Scopes").
    pub(crate) fn reachable_helpers(&self) -> (usize, usize) {
        let limit = self.signal.active_helpers();
        (self.reachable_below(limit), limit)
    }

    /// Helpers that may take a permit posted with the limit `limit` now: as many as serve,
    /// at most the active (narrow) width's, or none if no helper that serves is both below
    /// `limit` and active (resized away since, or never started).
    pub(crate) fn reachable_below(&self, limit: usize) -> usize {
        let serving = self.serving();
        let reach = limit.min(self.signal.active_helpers());
        // Relaxed: ordered by `serving`'s Acquire; a resize's store is fenced by the caller
        // where it matters (`Scope::spawn`).
        if self.lowest_serving.load(Ordering::Relaxed) > reach {
            return 0;
        }
        (self.width() - 1).min(serving)
    }

    /// Helper `index` ran its start hook: `failure` is its panic message, if it panicked.
    pub(crate) fn report_start(&self, index: usize, failure: Option<String>) {
        let mut state = sync::lock(&self.startup.state);
        state.reported += 1;
        match failure {
            None => {
                state.serving += 1;
                state.lowest_serving = state.lowest_serving.min(index);
            }
            Some(message) => {
                state.failure.get_or_insert((index, message));
            }
        }
        self.startup.changed.notify_all();
    }

    /// Waits until `started` helpers reported their start hook; returns how many serve, the
    /// lowest index among them, and the first failure, taken.
    pub(crate) fn wait_for_starts(
        &self,
        started: usize,
    ) -> (usize, usize, Option<(usize, String)>) {
        let mut state = sync::lock(&self.startup.state);
        while state.reported < started {
            state = self
                .startup
                .changed
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        (state.serving, state.lowest_serving, state.failure.take())
    }
}
