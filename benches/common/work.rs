//! Calibrated arithmetic for the benches: a task of about N microseconds on this machine,
//! and the tiny task that fine-grained dispatches run once per index.

use std::cell::Cell;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A fixed amount of arithmetic; `iters` xorshift rounds.
pub fn spin_work(seed: u64, iters: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x)
}

/// How many `spin_work` rounds take a microsecond here: the median of 9 timed runs of 2 ms.
pub fn rounds_per_us() -> f64 {
    let probe = 200_000;
    let mut rates: Vec<f64> = (0..9)
        .map(|_| {
            let start = Instant::now();
            spin_work(7, probe);
            probe as f64 / (start.elapsed().as_secs_f64() * 1e6)
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// A task of about `duration` of arithmetic, calibrated once per process.
#[derive(Clone, Copy)]
pub struct Task {
    rounds: u64,
}

impl Task {
    pub fn lasting(duration: Duration, rounds_per_us: f64) -> Task {
        Task {
            rounds: (duration.as_secs_f64() * 1e6 * rounds_per_us) as u64,
        }
    }

    pub fn run(self, seed: usize) -> u64 {
        spin_work(seed as u64, self.rounds)
    }
}

thread_local! {
    static SUM: Cell<u64> = const { Cell::new(0) };
}

/// The fine-grained task: add the index to a per-thread sum (as a user would write a
/// data-parallel reduction one index at a time).
#[inline]
pub fn tiny(i: usize) {
    SUM.with(|s| s.set(s.get().wrapping_add(black_box(i) as u64)));
}

/// This thread's sum so far, taken (for checking a run adds up).
pub fn take_tiny_sum() -> u64 {
    SUM.with(|s| s.replace(0))
}
