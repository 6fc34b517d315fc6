//! Early exit: once a participant finds what it looks for, it sets the region's stop flag
//! and no participant claims another range (ranges in flight end at their next check, at
//! most `MAX_BLOCK` positions later); the caller returns the least index found. Ranges are
//! claimed from homes (each participant its own share first), as rayon's halves: a match
//! anywhere is found as soon as a participant's share reaches it, also in a source too long
//! to walk from its start (`0..u128::MAX`). Regions of more than `MAX_HOMES` (8)
//! participants claim in order.

use super::pipeline::{self, OnFork};
use super::region::{span, Regions, Runs};
use crate::region::Claims;
use crate::sync::{AtomicBool, Ordering};

/// How many items a participant tests between looks at the stop flag inside one range: the
/// first block of a range is `FIRST_BLOCK` items, and each next one twice the last, up to
/// `MAX_BLOCK`. A look is a load of a line that stays in every cache until the flag is set,
/// but a block's end is a mispredicted branch and a call: at 64 items that cost a cheap
/// search 1.6x a plain loop's time, at 1,024 a few percent. Doubling keeps a short range's
/// overrun short, and `MAX_BLOCK` bounds any range's: at most 1,024 items after the match.
const FIRST_BLOCK: usize = 64;
pub(crate) const MAX_BLOCK: usize = 1024;

/// Early exit: `position_any`, `position_any_slice`, `any`, `all`. Run on a
/// [`Pool`](crate::Pool) or on [`pool.wide()`](crate::Pool::wide).
pub trait ParallelFind: Runs {
    /// An index `i` for which `pred(i)` holds, if any; once one is found, no participant
    /// claims more (it is the least of those found before every participant stopped, not
    /// necessarily the least of all).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let xs: Vec<u32> = (0..100_000).collect();
    /// assert_eq!(pool.position_any(xs.len(), |i| xs[i] == 77_777), Some(77_777));
    /// assert_eq!(pool.position_any(xs.len(), |i| xs[i] > 1_000_000), None);
    /// ```
    fn position_any<F>(&self, n: usize, pred: F) -> Option<usize>
    where
        F: Fn(usize) -> bool + Sync,
    {
        find_in_blocks(
            self,
            n,
            &|from, to, _| (from..to).find(|&i| pred(i)),
            |&i| i,
            (None, OnFork::Panic, false),
        )
    }

    /// The index of an item of `items` for which `pred` holds, if any, as
    /// [`position_any`](Self::position_any) finds one: once one is found, no participant claims
    /// more. Each block of items is one `Iterator::position` over the slice, with no bounds
    /// check per item.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let xs: Vec<u64> = (0..100_000).map(|i| i * 3).collect();
    /// assert_eq!(pool.position_any_slice(&xs, |&x| x == 3 * 77_777), Some(77_777));
    /// assert_eq!(pool.position_any_slice(&xs, |&x| x == 1), None);
    /// ```
    fn position_any_slice<T, F>(&self, items: &[T], pred: F) -> Option<usize>
    where
        T: Sync,
        F: Fn(&T) -> bool + Sync,
    {
        let search = |from: usize, to: usize, _: &AtomicBool| {
            items[from..to].iter().position(&pred).map(|k| from + k)
        };
        find_in_blocks(
            self,
            items.len(),
            &search,
            |&i| i,
            (None, OnFork::Panic, false),
        )
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
        self.position_any(n, pred).is_some()
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
        self.position_any(n, |i| !pred(i)).is_none()
    }
}

impl<R: Runs + ?Sized> ParallelFind for R {}

/// The searches' pass through the pipeline: `search(from, to, stop)` over blocks of at
/// most `MAX_BLOCK` positions of `0..n` returns the first match in the block, if any (or
/// none once `stop` is set, where a position holds many items); each participant keeps the
/// match of least `key` it found, and once one is found, no participant claims another
/// range, and ranges in flight end after their current block. Ranges are claimed from
/// homes; where the positions are `coarse` (`Drive::coarse`), sleeping helpers are woken
/// at the post: the caller's first task may never end on its own.
/// The match of least `key` found (the index operations' matches are their indices; the
/// iterators', items with their order). An iterator's source that can end (`while_some`)
/// lends its flag, `ended`: it stops the search as a match does (and a match sets it: the
/// source is this search's). Cut short by a fork, the child does as `on_fork` says (the
/// parent's helpers may have found one here).
/// Generic in `search`, so that each search's fold is code of its own: its call site's
/// (README "Regions too small to share").
pub(crate) fn find_in_blocks<R, T, K, S>(
    runs: &R,
    n: usize,
    search: &S,
    key: impl Fn(&T) -> K + Sync,
    (ended, on_fork, coarse): (Option<&AtomicBool>, OnFork, bool),
) -> Option<T>
where
    R: Regions + ?Sized,
    T: Send,
    K: Ord,
    S: Fn(usize, usize, &AtomicBool) -> Option<T> + Sync,
{
    let own = AtomicBool::new(false);
    let stop = ended.unwrap_or(&own);
    pipeline::run(
        runs,
        n,
        (
            if coarse {
                Claims::FromHomesWakingAtPost(Some(stop))
            } else {
                Claims::FromHomes(Some(stop))
            },
            None,
        ),
        &|| None,
        |found: &mut Option<T>, range| {
            let (mut from, mut block) = (range.start, FIRST_BLOCK);
            while from < range.end {
                // Blocks with no atomic inside, so the compiler keeps what the search reads in
                // registers through a block (a load of the flag in the loop made it reload
                // every capture on every item: 3x slower than a plain loop).
                let to = span(from, block, range.end).end;
                if let Some(hit) = search(from, to, stop) {
                    if found
                        .as_ref()
                        .is_none_or(|earlier| key(&hit) < key(earlier))
                    {
                        *found = Some(hit);
                    }
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                (from, block) = (to, (2 * block).min(MAX_BLOCK));
                // Relaxed: a hint to stop early; what was found reaches the caller when the
                // region ends (the dispatch's detach and quiet check order it).
                if stop.load(Ordering::Relaxed) {
                    return;
                }
            }
        },
        on_fork,
        |found| found.flatten().min_by_key(&key),
    )
}
