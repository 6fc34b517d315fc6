//! `Stats`: counters of what the pool did, for tests and tuning (all Relaxed: no counter
//! orders anything).

use crate::sync::{AtomicU64, Ordering};

/// What the pool has done since it was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls to `dispatch` or `dispatch_wide` with at least one task.
    pub dispatches: u64,
    /// Of those, how many ran on the caller alone: one task, a one-wide pool, a dispatch
    /// from inside a task, or one that found another caller's dispatch in flight.
    pub inline_dispatches: u64,
    /// Helpers that took a dispatch's permit (at most `min(n_tasks - 1, helpers)` each).
    pub wakeups: u64,
    /// Helpers woken that found no task: a permit taken after the tasks ran out, or a
    /// kernel wake-up that found no permit.
    pub wasted_wakeups: u64,
}

pub(crate) struct Counters {
    pub(crate) dispatches: AtomicU64,
    pub(crate) inline_dispatches: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    pub(crate) empty_attachments: AtomicU64,
}

impl Counters {
    pub(crate) fn new() -> Counters {
        Counters {
            dispatches: AtomicU64::new(0),
            inline_dispatches: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            empty_attachments: AtomicU64::new(0),
        }
    }

    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, empty_wakes: &AtomicU64) -> Stats {
        Stats {
            dispatches: self.dispatches.load(Ordering::Relaxed),
            inline_dispatches: self.inline_dispatches.load(Ordering::Relaxed),
            wakeups: self.wakeups.load(Ordering::Relaxed),
            wasted_wakeups: self.empty_attachments.load(Ordering::Relaxed)
                + empty_wakes.load(Ordering::Relaxed),
        }
    }
}
