//! README "Waking late": an operation's region leaves sleeping helpers asleep at first, and
//! the caller wakes them once the region proves long enough to pay for a wake-up.

/// Work the caller does before it trusts its rate to predict the rest of a region: about 20
/// clock readings, so their cost inflates the estimate by a few percent at most.
const RATE_TRUSTED_AFTER_NS: u64 = 1_000;

/// README "Waking late": whether the caller wakes the helpers it left asleep, having worked
/// `worked_ns` with `left_ns` of the region still unclaimed at its rate: once it has worked
/// a wake-up's time `block_ns` (the region was long enough anyway), or as soon as its rate
/// says what is left is at least two wake-ups' time (a helper woken now arrives with at
/// least half of it left to share).
#[inline]
pub(crate) fn worth_waking(worked_ns: u64, left_ns: u64, block_ns: u64) -> bool {
    worked_ns >= block_ns
        || (worked_ns >= RATE_TRUSTED_AFTER_NS && left_ns >= block_ns.saturating_mul(2))
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::worth_waking;

    #[test]
    fn a_sleeping_helper_is_woken_once_the_region_promises_two_wake_ups_of_work() {
        let block = 20_000;
        // Once the caller has worked a wake-up's time, whatever is left.
        assert!(worth_waking(block, 0, block));
        // Sooner when its rate says two wake-ups' work is left, once the rate is trusted.
        assert!(worth_waking(1_000, 2 * block, block));
        assert!(
            !worth_waking(999, 10 * block, block),
            "a rate from under 1 us"
        );
        assert!(
            !worth_waking(5_000, 2 * block - 1, block),
            "less than two wake-ups left"
        );
        // Before the block cost is measured (0), the first trusted look wakes.
        assert!(worth_waking(1_000, 0, 0));
    }
}
