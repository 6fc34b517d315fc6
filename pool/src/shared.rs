//! `Shared`: what a crew's helpers share with the pool's callers (the signal, the
//! statistics, the fork generation they run in, and where they report their start).

use crate::signal::Signal;
use crate::stats::CounterSet;
use crate::sync::{self, Arc, AtomicUsize, Condvar, Mutex, Ordering};

/// Called on each helper thread as it starts, with the helper's index (1-based: the caller
/// is worker 0). The runtime binds helper k to an allocator arena with it. Boxed, because
/// loom's `Arc` cannot hold a `dyn` directly.
pub(crate) type ThreadStart = Arc<Box<dyn Fn(usize) + Send + Sync>>;

/// What the caller and the helpers share.
pub(crate) struct Shared {
    pub(crate) signal: Signal,
    pub(crate) counters: CounterSet,
    /// The fork generation (`fork.rs`) this crew's helpers run in.
    pub(crate) generation: u64,
    /// The pool's active (narrow) width, for joins and `current_num_threads` on threads
    /// that know the pool only by its crew (its helpers).
    width: AtomicUsize,
    /// Where helpers with a start hook report that it returned.
    startup: Startup,
}

/// Helpers that ran their start hook: how many reported, how many serve, the first failure.
#[derive(Default)]
struct StartState {
    reported: usize,
    serving: usize,
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
            startup: Startup {
                state: Mutex::new(StartState::default()),
                changed: Condvar::new(),
            },
        }
    }

    /// The pool's active width, as its pool last set it.
    pub(crate) fn width(&self) -> usize {
        // Relaxed: a width bounds how many threads joins offer to; nothing it publishes.
        self.width.load(Ordering::Relaxed)
    }

    /// Sets the pool's active width (at start, resize, and readings).
    pub(crate) fn set_width(&self, width: usize) {
        self.width.store(width, Ordering::Relaxed);
    }

    /// Helper `index` ran its start hook: `failure` is its panic message, if it panicked.
    pub(crate) fn report_start(&self, index: usize, failure: Option<String>) {
        let mut state = sync::lock(&self.startup.state);
        state.reported += 1;
        match failure {
            None => state.serving += 1,
            Some(message) => {
                state.failure.get_or_insert((index, message));
            }
        }
        self.startup.changed.notify_all();
    }

    /// Waits until `started` helpers reported their start hook; returns how many serve and
    /// the first failure, taken.
    pub(crate) fn wait_for_starts(&self, started: usize) -> (usize, Option<(usize, String)>) {
        let mut state = sync::lock(&self.startup.state);
        while state.reported < started {
            state = self
                .startup
                .changed
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        (state.serving, state.failure.take())
    }
}
