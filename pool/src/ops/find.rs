//! Early exit: once a participant finds what it looks for, it sets the region's stop flag
//! and no participant claims another range (ranges in flight end at their next check,
//! every `CHECK_EVERY` items); the caller returns the least index found.

use super::region::{complete, Runs};
use crate::sync::{AtomicBool, AtomicUsize, Ordering};

/// How many items a participant tests between looks at the stop flag inside one range: a
/// load of a line that stays in every cache until the flag is set, amortised so that a
/// range of cheap tests still vectorises between looks.
const CHECK_EVERY: usize = 64;

/// Early exit: `find_any`, `any`, `all`. Run on a [`Pool`](crate::Pool) or on
/// [`pool.wide()`](crate::Pool::wide).
pub trait ParallelFind: Runs {
    /// An index `i` for which `pred(i)` holds, if any; once one is found, no participant
    /// claims more (it is the least of those found before every participant stopped, not
    /// necessarily the least of all).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let xs: Vec<u32> = (0..100_000).collect();
    /// assert_eq!(pool.find_any(xs.len(), |i| xs[i] == 77_777), Some(77_777));
    /// assert_eq!(pool.find_any(xs.len(), |i| xs[i] > 1_000_000), None);
    /// ```
    fn find_any<F>(&self, n: usize, pred: F) -> Option<usize>
    where
        F: Fn(usize) -> bool + Sync,
    {
        let stop = AtomicBool::new(false);
        let found = AtomicUsize::new(usize::MAX);
        let ran = self.run_region(n, usize::MAX, Some(&stop), &|_, range| {
            let mut from = range.start;
            while from < range.end {
                // Blocks with no atomic inside, so the compiler keeps what `pred` reads in
                // registers through a block (a load of the flag in the loop made it reload
                // every capture on every item: 3x slower than a plain loop).
                let to = range.end.min(from + CHECK_EVERY);
                if let Some(i) = (from..to).find(|&i| pred(i)) {
                    found.fetch_min(i, Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                from = to;
                // Relaxed: a hint to stop early; what was found reaches the caller when
                // the region ends (the dispatch's detach and quiet check order it).
                if stop.load(Ordering::Relaxed) {
                    return;
                }
            }
        });
        let found = found.load(Ordering::Relaxed);
        if found == usize::MAX {
            // Nothing found here; cut short by a fork, the parent's helpers may have.
            complete(ran);
        }
        (found != usize::MAX).then_some(found)
    }

    /// Whether `pred(i)` holds for some index (stopping at the first found).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// assert!(pool.any(1000, |i| i * i == 400));
    /// ```
    fn any<F>(&self, n: usize, pred: F) -> bool
    where
        F: Fn(usize) -> bool + Sync,
    {
        self.find_any(n, pred).is_some()
    }

    /// Whether `pred(i)` holds for every index (stopping at the first that fails); true
    /// when `n == 0`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// assert!(pool.all(1000, |i| i < 1000));
    /// ```
    fn all<F>(&self, n: usize, pred: F) -> bool
    where
        F: Fn(usize) -> bool + Sync,
    {
        self.find_any(n, |i| !pred(i)).is_none()
    }
}

impl<R: Runs + ?Sized> ParallelFind for R {}
