//! `Stats`: counters of what the pool did, for tests and tuning (all Relaxed: no counter
//! orders anything, so loom does not explore them: `sync::unmodeled`). The callers share
//! one block of counters and each helper has its own, each on a line of its own, so that
//! counting never moves a cache line between the caller and a helper.

use crate::sync::unmodeled::AtomicU64;
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the pool has done since it was built: dispatches, and the trade its spinning makes
/// between latency (dispatches caught by a spinning helper) and CPU (time spent spinning,
/// kernel wake-ups).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Stats {
    /// Calls to `dispatch` or `dispatch_wide` with at least one task.
    pub dispatches: u64,
    /// Of those, how many ran on the caller alone: one task, a one-wide pool, a dispatch
    /// from inside a task, one that found every slot taken by other callers, or an
    /// operation's region too small to share (pool/src/README.md, "Regions too small to
    /// share").
    pub inline_dispatches: u64,
    /// Helpers that took a dispatch's permit (at most `min(n_tasks - 1, helpers)` each).
    pub wakeups: u64,
    /// Helpers woken that found no task: a kernel wake-up that found no permit (a permit
    /// always carries a task).
    pub wasted_wakeups: u64,
    /// Waits (a helper's for a permit, a caller's for its last helper) that ended while
    /// spinning: a dispatch caught without a kernel wake-up.
    pub caught_spinning: u64,
    /// Spin windows that ran out and ended in blocking.
    pub spins_then_blocked: u64,
    /// Time spent spinning, helpers and callers together, as far as the clock saw it: a
    /// spin reads the clock only every few dozen polls, so one that ends within the first
    /// of them (about a microsecond) counts nothing.
    pub spin_time: Duration,
    /// Returns from blocking in the kernel (helpers and callers).
    pub kernel_wakeups: u64,
    /// Wake-ups callers posted for a stream of operation regions, each too short to wake a
    /// helper for (pool/src/README.md, "Streams of short regions").
    pub stream_wakeups: u64,
    /// Readings of the machine that changed the pool's widths or spin budget.
    pub resizes: u64,
    /// How long ago the CPUs were last read (at build, by `refresh`, or by the periodic
    /// re-check).
    pub reading_age: Duration,
    /// Helpers the active widths call for that could not be started.
    pub missing_helpers: usize,
    /// Why helpers could not be started.
    pub start_error: Option<StartFailure>,
    /// Helpers that placement (`rayforce.pool.place`) could not pin: they run unpinned.
    /// [`Pool::placement`](crate::Pool::placement) says which and why.
    pub unplaced_helpers: usize,
    /// Why the first of them is not placed.
    pub place_failure: Option<crate::PlaceFailure>,
}

/// Why a helper thread could not be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum StartFailure {
    /// The system refused the thread (this `errno`: `EAGAIN` at a thread or process limit).
    Os(i32),
    /// The system refused it without an error code.
    Unknown,
    /// The thread-start hook panicked.
    HookPanicked,
}

impl std::fmt::Display for StartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartFailure::Os(code) => std::io::Error::from_raw_os_error(*code).fmt(f),
            StartFailure::Unknown => f.write_str("the thread could not be spawned"),
            StartFailure::HookPanicked => f.write_str("the thread-start hook panicked"),
        }
    }
}

pub(crate) struct Counters {
    pub(crate) dispatches: AtomicU64,
    pub(crate) inline_dispatches: AtomicU64,
    /// Operations' regions too small to share, which ran on their caller alone (README
    /// "Regions too small to share"): dispatches and inline dispatches both, counted once.
    pub(crate) regions_alone: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    pub(crate) empty_wakes: AtomicU64,
    pub(crate) kernel_wakeups: AtomicU64,
    pub(crate) stream_wakeups: AtomicU64,
    caught_spinning: AtomicU64,
    spins_then_blocked: AtomicU64,
    spin_ns: AtomicU64,
}

impl Counters {
    pub(crate) fn new() -> Counters {
        Counters {
            dispatches: AtomicU64::new(0),
            inline_dispatches: AtomicU64::new(0),
            regions_alone: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            empty_wakes: AtomicU64::new(0),
            kernel_wakeups: AtomicU64::new(0),
            stream_wakeups: AtomicU64::new(0),
            caught_spinning: AtomicU64::new(0),
            spins_then_blocked: AtomicU64::new(0),
            spin_ns: AtomicU64::new(0),
        }
    }

    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// One spin of `spun_ns` that caught what it waited for, or ran out.
    pub(crate) fn spun(&self, spun_ns: u64, caught: bool) {
        self.spin_ns.fetch_add(spun_ns, Ordering::Relaxed);
        Counters::bump(if caught {
            &self.caught_spinning
        } else {
            &self.spins_then_blocked
        });
    }

    /// Adds these counts to `stats`.
    fn add_to(&self, stats: &mut Stats) {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let alone = get(&self.regions_alone);
        stats.dispatches += get(&self.dispatches) + alone;
        stats.inline_dispatches += get(&self.inline_dispatches) + alone;
        stats.wakeups += get(&self.wakeups);
        stats.wasted_wakeups += get(&self.empty_wakes);
        stats.caught_spinning += get(&self.caught_spinning);
        stats.spins_then_blocked += get(&self.spins_then_blocked);
        stats.spin_time += Duration::from_nanos(get(&self.spin_ns));
        stats.kernel_wakeups += get(&self.kernel_wakeups);
        stats.stream_wakeups += get(&self.stream_wakeups);
    }
}

/// A pool's counters: the callers' block, and one per helper (std types on purpose, as the
/// counters themselves: they order nothing, and loom need not explore them).
pub(crate) struct CounterSet {
    callers: CachePadded<Counters>,
    helpers: Mutex<Vec<Arc<CachePadded<Counters>>>>,
}

impl CounterSet {
    pub(crate) fn new() -> CounterSet {
        CounterSet {
            callers: CachePadded::new(Counters::new()),
            helpers: Mutex::new(Vec::new()),
        }
    }

    /// The block every caller counts in.
    pub(crate) fn callers(&self) -> &Counters {
        &self.callers
    }

    /// A new helper's own block.
    pub(crate) fn for_new_helper(&self) -> Arc<CachePadded<Counters>> {
        let counters = Arc::new(CachePadded::new(Counters::new()));
        let mut helpers = self.helpers.lock().unwrap_or_else(|p| p.into_inner());
        helpers.push(Arc::clone(&counters));
        counters
    }

    /// Every block, summed.
    pub(crate) fn snapshot(&self) -> Stats {
        let mut stats = Stats::default();
        self.callers.add_to(&mut stats);
        let helpers = self.helpers.lock().unwrap_or_else(|p| p.into_inner());
        for counters in helpers.iter() {
            counters.add_to(&mut stats);
        }
        stats
    }
}
