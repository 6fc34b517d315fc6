//! Spin windows in time, learned from each waiter's recent idle gaps (README "Spinning").

use crate::sync;

/// How many polls a spinning waiter makes between two readings of the clock: a poll and a
/// PAUSE cost about 30 ns here, a clock reading about 25 ns. Under loom, every poll.
const POLLS_PER_CLOCK: u32 = if cfg!(rayforce_loom) { 1 } else { 32 };

/// After spinning this long, a waiter also yields its CPU at each reading of the clock: one
/// that shares its CPU with the thread it waits for (a woken helper put on its caller's CPU,
/// as this project's VM does in most wake-ups) lets that thread run rather than spin its
/// window out while it cannot (README "Spinning"). Alone on its CPU, a yield returns at
/// once; the short waits that spinning is for never reach it.
const YIELD_AFTER_NS: u64 = 2_000;

/// Weight of the newest gap in a waiter's expected gap: 1/4 (glibc's adaptive mutex uses
/// 1/8; a pool's gaps change with the program's phases, so it follows faster).
const LEARNING_SHIFT: u32 = 2;

/// A gap longer than this many spin limits (`min(spin_us, block cost)`) counts as this
/// long. Every such gap says "block" as loudly as a longer one, so one idle minute is
/// forgotten after a few short gaps; and one stray long gap (a descheduled thread) moves a
/// mean below half the limit to at most the limit, so it costs no block, while three in a
/// row stop the spinning.
const GAP_CLAMP_LIMITS: u64 = 2;

/// What blocking is taken to cost until a kernel wake-up was measured: about the kernel's
/// wake-up latency (40 us on this project's 2-core VM, tens of microseconds on most
/// machines). Until then no window is longer, so a large `spin_us` cannot keep a helper
/// spinning through gaps that one kernel wake-up would serve: the ski-rental bound holds
/// from the first dispatch, and the measurement then replaces it.
const UNMEASURED_BLOCK_COST_NS: u64 = 50_000;

/// The pool's spin settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpinLimits {
    /// `rayforce.pool.spin_us` in nanoseconds: no window is longer; 0 never spins.
    pub(crate) ceiling_ns: u64,
    /// The pool's policy count: spinners, helpers at work and callers (at least one) stay
    /// within it.
    pub(crate) cpus: usize,
}

impl SpinLimits {
    pub(crate) fn new(spin_us: u32, cpus: usize) -> SpinLimits {
        SpinLimits {
            ceiling_ns: u64::from(spin_us) * 1_000,
            cpus,
        }
    }

    /// Whether anything spins at all (`spin_us` > 0).
    pub(crate) fn enabled(self) -> bool {
        self.ceiling_ns > 0
    }

    /// The longest window with blocking at `block_cost_ns`: `min(spin_us, block cost)`.
    pub(crate) fn window_limit(self, block_cost_ns: u64) -> u64 {
        self.ceiling_ns.min(block_cost_ns)
    }

    /// The cost of blocking to assume before any was measured (README "Spinning").
    pub(crate) fn unmeasured_block_cost_ns(self) -> u64 {
        self.ceiling_ns.min(UNMEASURED_BLOCK_COST_NS)
    }
}

/// One waiter's recent idle gaps: an exponentially weighted mean, in nanoseconds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Gaps {
    expected_ns: u64,
}

impl Gaps {
    /// As stored in an atomic (the caller's gaps, shared by whoever dispatches).
    pub(crate) fn from_bits(expected_ns: u64) -> Gaps {
        Gaps { expected_ns }
    }

    pub(crate) fn to_bits(self) -> u64 {
        self.expected_ns
    }

    /// How long to spin before blocking: `min(ceiling, block_cost)` when the expected gap
    /// is no longer than that (spinning should end in work), else 0 (block at once). Never
    /// longer than blocking costs: the ski-rental bound (README "Spinning").
    pub(crate) fn window(self, limits: SpinLimits, block_cost_ns: u64) -> u64 {
        let limit = limits.window_limit(block_cost_ns);
        if self.expected_ns <= limit {
            limit
        } else {
            0
        }
    }

    /// Takes one more observed gap into the mean, clamped to [`GAP_CLAMP_LIMITS`] window
    /// limits.
    pub(crate) fn learn(&mut self, gap_ns: u64, limits: SpinLimits, block_cost_ns: u64) {
        let clamp = limits
            .window_limit(block_cost_ns)
            .saturating_mul(GAP_CLAMP_LIMITS);
        let gap = gap_ns.min(clamp);
        self.expected_ns = ewma(self.expected_ns, gap);
    }
}

/// The mean moved a quarter of the way from `mean` to `sample`.
pub(crate) fn ewma(mean: u64, sample: u64) -> u64 {
    if sample >= mean {
        mean + ((sample - mean) >> LEARNING_SHIFT)
    } else {
        mean - ((mean - sample) >> LEARNING_SHIFT)
    }
}

/// What a spin saw of the clock: when it first read it, and the time it spun by its last
/// reading. The clock is read every [`POLLS_PER_CLOCK`] polls, the first time after that
/// many, so a wait that ends within them reads it not at all (both are then 0) and the
/// time of the polls before the first reading is never counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spun {
    pub(crate) started_ns: u64,
    pub(crate) spun_ns: u64,
}

/// Polls until `poll` gives a result or `window_ns` has passed since the first reading of
/// the clock (see [`Spun`]); after [`YIELD_AFTER_NS`], yielding the CPU between readings.
pub(crate) fn spin_for<T>(
    window_ns: u64,
    mut poll: impl FnMut() -> Option<T>,
) -> (Option<T>, Spun) {
    let mut spun = Spun::default();
    loop {
        for _ in 0..POLLS_PER_CLOCK {
            if let Some(result) = poll() {
                return (Some(result), spun);
            }
            sync::spin_hint();
        }
        let now = sync::now_ns();
        if spun.started_ns == 0 {
            spun.started_ns = now;
        }
        spun.spun_ns = now - spun.started_ns;
        if spun.spun_ns >= window_ns {
            return (None, spun);
        }
        if spun.spun_ns >= YIELD_AFTER_NS {
            sync::yield_cpu();
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    const LIMITS: SpinLimits = SpinLimits {
        ceiling_ns: 50_000,
        cpus: 2,
    };

    #[test]
    fn short_gaps_spin_up_to_the_smaller_of_ceiling_and_block_cost() {
        let gaps = Gaps::from_bits(2_000);
        assert_eq!(gaps.window(LIMITS, 40_000), 40_000);
        assert_eq!(gaps.window(LIMITS, 90_000), 50_000);
        assert_eq!(Gaps::from_bits(45_000).window(LIMITS, 40_000), 0);
        let never = SpinLimits::new(0, 8);
        assert_eq!(Gaps::default().window(never, 40_000), 0);
        assert!(!never.enabled());
    }

    #[test]
    fn one_stray_long_gap_keeps_the_spinning() {
        let mut gaps = Gaps::from_bits(1_000);
        gaps.learn(u64::MAX, LIMITS, 40_000);
        assert_eq!(
            gaps.to_bits(),
            20_750,
            "clamped to twice the limit: 1/4 of 80 us"
        );
        assert_eq!(
            gaps.window(LIMITS, 40_000),
            40_000,
            "no block for one stray gap"
        );
    }

    #[test]
    fn long_gaps_stop_the_spinning_and_short_ones_bring_it_back() {
        let mut gaps = Gaps::default();
        let long_gaps = (1..=10)
            .find(|_| {
                gaps.learn(1_000_000, LIMITS, 40_000);
                gaps.window(LIMITS, 40_000) == 0
            })
            .expect("long gaps stop the spinning");
        assert_eq!(long_gaps, 3, "bursty: block at once from the fourth wait");
        for _ in 0..100 {
            gaps.learn(1_000_000, LIMITS, 40_000);
        }
        let idle = gaps.to_bits();
        assert!(
            (79_000..=80_000).contains(&idle),
            "a long idle spell counts as 80 us a gap: {idle}"
        );
        let short_gaps = (1..=10)
            .find(|_| {
                gaps.learn(1_000, LIMITS, 40_000);
                gaps.window(LIMITS, 40_000) > 0
            })
            .expect("short gaps bring the spinning back");
        assert_eq!(short_gaps, 3, "back to back again after {short_gaps}");
    }

    #[test]
    fn the_mean_moves_a_quarter_of_the_way() {
        assert_eq!(ewma(100, 200), 125);
        assert_eq!(ewma(200, 100), 175);
        assert_eq!(ewma(7, 7), 7);
        assert_eq!(ewma(0, u64::MAX), u64::MAX / 4);
    }
}
