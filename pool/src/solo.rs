//! Regions too small to share (operations only; README "Regions too small to share"): an
//! operation's region of many tasks starts on the caller alone, posting nothing, in blocks
//! that grow sixteenfold, and is shared with the helpers only once it has run long enough,
//! or its rate says it will.

use crate::sync::{self, AtomicBool, Ordering};
use std::ops::Range;

/// Regions of fewer tasks are shared from the start, so the solo start delays the helpers
/// by at most one task in 64 of a region's work.
pub(crate) const MIN_TASKS: usize = 64;

/// A region that takes at least this long in all is shared: about 20 round trips to a
/// spinning helper. Below it, the post, the helper's round trip and the wait for its detach
/// cost about what its share saves (BENCHMARKS.md, "Regions too small to share").
const SHARE_AT_NS: u64 = 2_000;

/// A block's time is trusted to tell its rate only from this long (about three readings of
/// the clock); shorter ones only grow the next block.
const RATE_TRUSTED_NS: u64 = 100;

/// Each block is this many times the last: cheap tasks reach a trusted rate in three
/// blocks, and a block of tasks dearer than the ones before it costs at most this many
/// times what the caller had measured.
const GROWTH: usize = 16;

/// Runs tasks `0..` of a region of `n_tasks` on the caller, `run(range)` a block at a
/// time, while the region looks too small to share. Returns how many ran: `n_tasks` once
/// every task ran or `stop` was set (the region is over), fewer when the rest is to be
/// shared.
pub(crate) fn run_alone_while_small(
    n_tasks: usize,
    stop: Option<&AtomicBool>,
    run: impl FnMut(Range<usize>),
) -> usize {
    run_alone(n_tasks, stop, run, sync::now_ns)
}

/// `run_alone_while_small` on the clock `now`.
fn run_alone(
    n_tasks: usize,
    stop: Option<&AtomicBool>,
    mut run: impl FnMut(Range<usize>),
    mut now: impl FnMut() -> u64,
) -> usize {
    let began = now();
    let (mut done, mut block_len, mut block_began) = (0usize, 1usize, began);
    loop {
        let block = done..done.saturating_add(block_len).min(n_tasks);
        let ran = block.len();
        run(block);
        done += ran;
        // Relaxed: as `Job::stopped`, the flag publishes nothing.
        if done == n_tasks || stop.is_some_and(|stop| stop.load(Ordering::Relaxed)) {
            return n_tasks;
        }
        let now = now();
        let (took, worked) = (now - block_began, now - began);
        if worked >= SHARE_AT_NS {
            return done;
        }
        if took >= RATE_TRUSTED_NS {
            let rest = u128::from(took) * (n_tasks - done) as u128 / ran as u128;
            if u128::from(worked) + rest >= u128::from(SHARE_AT_NS) {
                return done;
            }
        }
        block_began = now;
        block_len = block_len.saturating_mul(GROWTH);
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The blocks `run_alone` runs over `n` tasks of `task_ns` each on a clock that moves
    /// only as tasks run, stopping in the block that holds task `stop_at`; and what it
    /// returned.
    fn blocks(n: usize, task_ns: u64, stop_at: Option<usize>) -> (Vec<Range<usize>>, usize) {
        let (clock, stop) = (Cell::new(1_000), AtomicBool::new(false));
        let mut blocks = Vec::new();
        let run = |block: Range<usize>| {
            clock.set(clock.get() + task_ns * block.len() as u64);
            if stop_at.is_some_and(|at| block.contains(&at)) {
                stop.store(true, Ordering::Relaxed);
            }
            blocks.push(block);
        };
        let done = run_alone(n, Some(&stop), run, || clock.get());
        (blocks, done)
    }

    #[test]
    fn cheap_regions_run_alone_in_growing_blocks_to_the_end() {
        // Tasks too cheap to move the clock: no block tells a rate, and they grow to the end.
        let (ran, done) = blocks(1_000, 0, None);
        assert_eq!((ran, done), (vec![0..1, 1..17, 17..273, 273..1_000], 1_000));
    }

    #[test]
    fn a_region_whose_rate_says_it_is_long_is_shared_after_a_trusted_block() {
        // 50 ns a task: the second block (16 tasks, 800 ns) tells the rate, and 983 tasks
        // more would take 49 us.
        let (ran, done) = blocks(1_000, 50, None);
        assert_eq!((ran, done), (vec![0..1, 1..17], 17));
        // 5 ns a task: the third block (256 tasks, 1.3 us) tells it; the rest, 3.6 us.
        let (ran, done) = blocks(1_000, 5, None);
        assert_eq!((ran, done), (vec![0..1, 1..17, 17..273], 273));
        // One task of 5 us is already more than the solo start allows.
        let (ran, done) = blocks(100, 5_000, None);
        assert_eq!((ran, done), (vec![0..1], 1));
    }

    #[test]
    fn a_stop_ends_the_region() {
        let (ran, done) = blocks(100_000, 0, Some(5));
        assert_eq!((ran, done), (vec![0..1, 1..17], 100_000));
    }
}
