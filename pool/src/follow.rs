//! Following the machine: the pool's widths come from a CPU reading under its policy, and
//! are re-read at most every `rayforce.cpu.recheck_ms`, checked at dispatch start, so they
//! follow the machine when
//! affinity or the cgroup quota changes while the program runs (README "Resizing").

use crate::limits::MAX_WIDTH;
use crate::sync::unmodeled::AtomicU64;
use crate::sync::{self, Ordering};
use rayforce_tunables::cpu::{CpuCounts, CpuPolicy, QuotaCap};

/// Called with every reading the pool takes (the runtime's arenas follow it too); returns
/// whether it changed anything.
pub(crate) type ReadingHook = Box<dyn Fn(&CpuCounts) -> bool + Send + Sync>;

/// How a pool's widths follow readings of the machine.
pub(crate) struct Follow {
    pub(crate) policy: CpuPolicy,
    pub(crate) cap: QuotaCap,
    /// Whether `dispatch_wide` may use the schedulable count (`rayforce.pool.wide`). Whether
    /// the widths follow readings at all is the pool's (`Widths::fixed`).
    pub(crate) wide: bool,
    /// Re-read at most this often, at dispatch start; 0 never re-reads on its own.
    recheck_ns: u64,
    /// When the next automatic re-read is due (`sync::coarse_now_ns`).
    next_check_ns: AtomicU64,
    /// When the last reading was taken (`sync::now_ns`).
    read_at_ns: AtomicU64,
    /// Readings that changed a width or the spin budget.
    pub(crate) changes: AtomicU64,
    pub(crate) on_reading: Option<ReadingHook>,
}

impl Follow {
    pub(crate) fn new(
        policy: CpuPolicy,
        cap: QuotaCap,
        wide: bool,
        recheck_ms: u32,
        on_reading: Option<ReadingHook>,
    ) -> Follow {
        let recheck_ns = u64::from(recheck_ms) * 1_000_000;
        let due = sync::coarse_now_ns().saturating_add(recheck_ns);
        Follow {
            policy,
            cap,
            wide,
            recheck_ns,
            next_check_ns: AtomicU64::new(due),
            read_at_ns: AtomicU64::new(sync::now_ns()),
            changes: AtomicU64::new(0),
            on_reading,
        }
    }

    /// Whether an automatic re-read is due now; the one caller that sees it due first takes
    /// it (the others go on with their dispatch). A read of the coarse clock, one load and
    /// one comparison when nothing is due.
    #[inline]
    pub(crate) fn due(&self) -> bool {
        if self.recheck_ns == 0 {
            return false;
        }
        let now = sync::coarse_now_ns();
        let next = self.next_check_ns.load(Ordering::Relaxed);
        // Relaxed: the check orders nothing; the CAS only makes one caller take it.
        now >= next
            && self
                .next_check_ns
                .compare_exchange(
                    next,
                    now + self.recheck_ns,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    /// Notes that a reading was taken now.
    pub(crate) fn read_now(&self) {
        self.read_at_ns.store(sync::now_ns(), Ordering::Relaxed);
    }

    /// How long ago the last reading was taken.
    pub(crate) fn age(&self) -> std::time::Duration {
        let read_at = self.read_at_ns.load(Ordering::Relaxed);
        std::time::Duration::from_nanos(sync::now_ns().saturating_sub(read_at))
    }

    /// The (narrow, wide) widths a reading gives, for widths that follow readings.
    pub(crate) fn widths(&self, counts: &CpuCounts) -> (usize, usize) {
        counted_widths(counts, self.policy, self.cap, self.wide)
    }

    /// The spin budget a reading gives: the policy's count.
    pub(crate) fn cpus(&self, counts: &CpuCounts) -> usize {
        counts.count(self.policy, self.cap).max(1)
    }
}

/// The (narrow, wide) widths a reading gives under `policy`: its count, and for wide
/// dispatches the schedulable count when `wide` allows (never below the narrow width);
/// both within `1..=MAX_WIDTH`, whatever the reading says (a caller may make one).
pub(crate) fn counted_widths(
    counts: &CpuCounts,
    policy: CpuPolicy,
    cap: QuotaCap,
    wide: bool,
) -> (usize, usize) {
    let width = counts.count(policy, cap).clamp(1, MAX_WIDTH);
    let wide_width = if wide {
        counts
            .count(CpuPolicy::Schedulable, cap)
            .clamp(width, MAX_WIDTH)
    } else {
        width
    };
    (width, wide_width)
}
