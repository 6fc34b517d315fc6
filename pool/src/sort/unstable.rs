//! The unstable comparison sort (`par_sort_unstable` and its `_by`/`_by_key` forms): a
//! quicksort by `join`. A part is cut around a pivot (the median of a sample, by `std`'s
//! `select_nth_unstable_by`; one pass without a branch on the comparison), and the two
//! sides are sorted by `join`, so a thread that runs out of work takes the largest side
//! another has not started; a part of at most a leaf's length (a
//! [`LEAVES_PER_THREAD`]th of a thread's share, and near the end a
//! [`LEAVES_PER_THREAD_LEFT`]th of its share of what is left) is sorted by `std`'s
//! `sort_unstable_by`.
//! Where a pivot is a frequent key, its copies (which need no sorting) are gathered beside
//! it. Items move by swaps, or around one gap whose item a guard writes back, so a
//! panicking comparator leaves a permutation of the input.

use std::cmp::Ordering;
use std::mem::{self, size_of, ManuallyDrop};
use std::ops::Range;
use std::ptr;
use std::sync::atomic::{self, AtomicUsize};

/// Below this many items the sort runs on the calling thread: `std`'s sort of them takes
/// a few tens of microseconds, about what sharing a part with another thread costs.
pub(crate) const PARALLEL_FROM: usize = 1 << 12;
/// Leaves per thread: parts of this fraction of a thread's share are sorted by `std`'s
/// sort. Parts of one length can differ several times in cost (a part of equal keys
/// sorts fast), so a thread's share is many leaves: one left to the end holds back the
/// others at most a sixteenth of the sort.
const LEAVES_PER_THREAD: usize = 16;
/// Near the end, leaves are at most this fraction of a thread's share of the items not
/// yet in place, so the last leaves are short: the other threads run out of work only a
/// short leaf before the last one ends. In a probe (1e7 skewed keys, `u64`, `f64` and
/// records) that took the sort 4-7% less time, the uniform ones the same.
const LEAVES_PER_THREAD_LEFT: usize = 4;

/// Sorts `items` by `compare`, unstable, on the current pool.
pub(crate) fn sort_unstable_by<T, F>(items: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let width = if items.len() < PARALLEL_FROM {
        1
    } else {
        crate::current_num_threads()
    };
    if width == 1 {
        items.sort_unstable_by(compare);
        return;
    }
    // Input longer than a leaf and in order already is found before the first cut.
    let leaves = Leaves {
        most: (items.len() / (width * LEAVES_PER_THREAD)).max(PARALLEL_FROM),
        width,
        unplaced: AtomicUsize::new(items.len()),
    };
    let bad_cuts = items.len().ilog2();
    sort_by_cuts(items, compare, &leaves, bad_cuts);
}

/// Which parts a sort sorts whole, by `std`'s sort: those of at most `most` items that are
/// too short to cut in two parts worth sharing, or at most a [`LEAVES_PER_THREAD_LEFT`]th
/// of a thread's share of the `unplaced` ones (not yet in a sorted leaf, a pivot's place,
/// or a part found in order).
struct Leaves {
    most: usize,
    width: usize,
    /// Relaxed: a count that only sizes leaves, read and lowered by every thread.
    unplaced: AtomicUsize,
}

impl Leaves {
    /// Whether a part of `len` items is a leaf.
    fn holds(&self, len: usize) -> bool {
        let unplaced = self.unplaced.load(atomic::Ordering::Relaxed);
        len <= self.most
            && (len < 2 * PARALLEL_FROM || len <= unplaced / (self.width * LEAVES_PER_THREAD_LEFT))
    }

    /// Counts `count` items put in their places.
    fn placed(&self, count: usize) {
        self.unplaced.fetch_sub(count, atomic::Ordering::Relaxed);
    }
}

/// Sorts `part`: `std`'s sort if it is a leaf or `bad_cuts` cuts left less than an
/// eighth on one side (as pdqsort falls back to heapsort, so a pivot sample that keeps
/// misleading costs `std`'s `O(n log n)`, and the recursion is at most logarithmically
/// deep); nothing if it is in order already (or reversed: then reversed here); else cut
/// at a pivot and its sides sorted by `join`.
fn sort_by_cuts<T, F>(part: &mut [T], compare: &F, leaves: &Leaves, bad_cuts: u32)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = part.len();
    if leaves.holds(len) || bad_cuts == 0 {
        part.sort_unstable_by(compare);
        leaves.placed(len);
        return;
    }
    if in_order(part, compare) {
        leaves.placed(len);
        return; // sorted already, or reversed and so sorted now: no join
    }
    let (below, above) = cut_at_pivot(part, compare);
    leaves.placed(len - below.len() - above.len());
    let bad_cuts = bad_cuts - u32::from(below.len().min(above.len()) < len / 8);
    // A part's joins are a cut or a leaf apart: each looks for an idle thread to offer to,
    // else a thread that took a part of a few cuts could keep the other idle through it.
    crate::joins::look_at_next_join();
    crate::join(
        || sort_by_cuts(below, compare, leaves, bad_cuts),
        || sort_by_cuts(above, compare, leaves, bad_cuts),
    );
}

/// The items of `part` (at least [`PIVOT_SAMPLE`]) below a pivot (the median of a sample
/// of [`PIVOT_SAMPLE`] items) and those above, the pivot (with its copies, if frequent)
/// put in place between them.
fn cut_at_pivot<'a, T, F>(part: &'a mut [T], compare: &F) -> (&'a mut [T], &'a mut [T])
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    for (k, i) in spread(part.len(), PIVOT_SAMPLE).enumerate() {
        part.swap(k, i);
    }
    part[..PIVOT_SAMPLE].select_nth_unstable_by(PIVOT_SAMPLE / 2, compare);
    part.swap(0, PIVOT_SAMPLE / 2);
    let (pivot, rest) = part.split_first_mut().expect("a part has items");
    let is_below = |item: &T| compare(item, pivot) == Ordering::Less;
    let below = if size_of::<T>() > BLOCKS_ABOVE_BYTES {
        partition_in_blocks(rest, is_below)
    } else {
        partition(rest, is_below)
    };
    part.swap(0, below);
    let frequent = is_frequent(part, below, compare);
    let (below, rest) = part.split_at_mut(below);
    let (pivot, above) = rest.split_first_mut().expect("the pivot is an item");
    if frequent {
        let copies = gather(above, 0..above.len(), |item| {
            compare(item, pivot) == Ordering::Equal
        });
        (below, &mut above[copies..])
    } else {
        (below, above)
    }
}

/// Whether `items` are sorted already, or in reverse (then reversed here: unstable, so
/// equal items may swap). One pass shared among the threads (`in_order::holds`) for each
/// order, stopped at the first pair out of it; a cut would scatter the ordered runs that
/// `std`'s sort finishes in one pass.
fn in_order<T, F>(items: &mut [T], compare: &F) -> bool
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if super::in_order::holds(items, &|a, b| compare(a, b) != Ordering::Greater) {
        return true;
    }
    if super::in_order::holds(items, &|a, b| compare(a, b) != Ordering::Less) {
        items.reverse();
        return true;
    }
    false
}

/// Items sampled for a pivot: its rank is within a few percent of the median.
const PIVOT_SAMPLE: usize = 255;

/// Moves the items `is_below` holds for to the front of `items`, and returns how many: a
/// Lomuto partition without a branch on the comparison, so unpredictable comparisons
/// cost no mispredicted branches. It moves items around one gap rather than swapping
/// pairs (two moves an item where a swap takes three): the first item is held out, and
/// each item in turn takes the place of the first item not below, which moves into the
/// gap it left; the held item goes last.
fn partition<T>(items: &mut [T], is_below: impl Fn(&T) -> bool) -> usize {
    let len = items.len();
    if len == 0 {
        return 0;
    }
    let base = items.as_mut_ptr();
    // SAFETY: every pointer is `base` plus an index below `len`. The held item's place is
    // the gap: it holds a stale copy of an item that is also elsewhere, and `Gap` writes
    // the held item there if `is_below` unwinds (the only call that can), so the slice
    // is a permutation of what it was then. `is_below` sees an item in the slice (not in
    // the gap) or the held one, never a stale copy. The first item not below may be the
    // gap itself (when every item so far was below): hence `copy`; the next item is past
    // it (`below < i`), so it moves without overlap.
    unsafe {
        let mut gap = Gap {
            held: ManuallyDrop::new(ptr::read(base)),
            at: base,
        };
        let mut below = 0;
        // Items `..below` are below, `below..i` not, but for the gap at `i - 1`.
        for i in 1..len {
            let next = base.add(i);
            let goes_below = is_below(&*next);
            let first_not_below = base.add(below);
            ptr::copy(first_not_below, gap.at, 1);
            ptr::copy_nonoverlapping(next, first_not_below, 1);
            gap.at = next;
            below += usize::from(goes_below);
        }
        let goes_below = is_below(&gap.held);
        let first_not_below = base.add(below);
        ptr::copy(first_not_below, gap.at, 1);
        ptr::copy_nonoverlapping(&*gap.held, first_not_below, 1);
        mem::forget(gap);
        below + usize::from(goes_below)
    }
}

/// Items of more bytes than this are cut by [`partition_in_blocks`], which moves fewer of
/// them; smaller ones by [`partition`], whose loop costs less an item. 1e7 items in a
/// probe: `(u64, u64)` records 4% faster by blocks, `u64` and `f64` 3-13% slower.
const BLOCKS_ABOVE_BYTES: usize = 8;

/// Items a block of [`partition_in_blocks`] holds: offsets within it fit in a byte.
const BLOCK: usize = 128;

/// As [`partition`], but from both ends by blocks of [`BLOCK`] items, as Hoare's
/// partition and BlockQuicksort: the places of the items on the wrong side are noted
/// without a branch on the comparison, a block from each end, and the pairs swapped, so
/// only misplaced items move (about half of a random slice's items around its median,
/// where the gap moves every item). What is left between the ends, fewer than two blocks
/// and a block's items not yet swapped, is partitioned by [`partition`].
fn partition_in_blocks<T>(items: &mut [T], is_below: impl Fn(&T) -> bool) -> usize {
    // Items `..lo` are below and `hi..` are not; those of the blocks at `lo` and below
    // `hi` whose offsets are noted still wait for a swap.
    let (mut lo, mut hi) = (0, items.len());
    let (mut not_below, mut below) = ([0u8; BLOCK], [0u8; BLOCK]);
    let (mut left, mut right) = (0..0, 0..0);
    while hi - lo >= 2 * BLOCK {
        if left.is_empty() {
            left = note(items[lo..lo + BLOCK].iter(), &mut not_below, |item| {
                !is_below(item)
            });
        }
        if right.is_empty() {
            right = note(items[hi - BLOCK..hi].iter().rev(), &mut below, &is_below);
        }
        let pairs = left.len().min(right.len());
        for (&l, &r) in not_below[left.clone()].iter().zip(&below[right.clone()]) {
            items.swap(lo + usize::from(l), hi - 1 - usize::from(r));
        }
        left.start += pairs;
        right.start += pairs;
        if left.is_empty() {
            lo += BLOCK;
        }
        if right.is_empty() {
            hi -= BLOCK;
        }
    }
    lo + partition(&mut items[lo..hi], is_below)
}

/// Notes in `offsets` the offsets, in `block`'s order, of its items that `wanted` holds
/// for, without a branch on it; the range of `offsets` noted.
fn note<'a, T: 'a>(
    block: impl Iterator<Item = &'a T>,
    offsets: &mut [u8; BLOCK],
    wanted: impl Fn(&T) -> bool,
) -> Range<usize> {
    let mut noted = 0;
    for (offset, item) in block.enumerate() {
        offsets[noted] = offset as u8;
        noted += usize::from(wanted(item));
    }
    0..noted
}

/// An item held out of a slice while its place, `at`, holds a stale copy of another:
/// dropped (when a comparison unwinds), it writes the item there.
struct Gap<T> {
    held: ManuallyDrop<T>,
    at: *mut T,
}

impl<T> Drop for Gap<T> {
    fn drop(&mut self) {
        // SAFETY: `at` is the gap in the slice (`partition`), which the held item fills.
        unsafe { ptr::copy_nonoverlapping(&*self.held, self.at, 1) };
    }
}

/// How many items of a sample this many long the pivot's key must fill for its copies
/// to be gathered: 2 of 64, about 3% of the slice.
const SAMPLE: usize = 64;

/// `count` positions spread evenly over `len` items from the first (all of them if fewer).
fn spread(len: usize, count: usize) -> impl Iterator<Item = usize> {
    let step = (len / count).max(1);
    (0..count.min(len)).map(move |k| k * step)
}

/// Whether the key of `items[middle]` looks frequent: at least 2 of [`SAMPLE`] other
/// items spread over the slice equal it.
fn is_frequent<T, F>(items: &[T], middle: usize, compare: &F) -> bool
where
    F: Fn(&T, &T) -> Ordering,
{
    let equal = spread(items.len(), SAMPLE)
        .filter(|&i| i != middle && compare(&items[i], &items[middle]) == Ordering::Equal)
        .count();
    equal >= 2
}

/// Swaps the items of `items` that `is_copy` holds for to the first positions of `order`
/// (the positions to visit, each once), and returns how many.
fn gather<T>(
    items: &mut [T],
    order: impl Iterator<Item = usize> + Clone,
    is_copy: impl Fn(&T) -> bool,
) -> usize {
    let mut slots = order.clone();
    let mut gathered = 0;
    for i in order {
        if is_copy(&items[i]) {
            let slot = slots.next().expect("a slot at or before `i`");
            items.swap(slot, i);
            gathered += 1;
        }
    }
    gathered
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn leaves_shrink_as_the_items_left_to_place_run_out() {
        let most = 1 << 16;
        let leaves = Leaves {
            most,
            width: 2,
            unplaced: AtomicUsize::new(1 << 22),
        };
        assert!(leaves.holds(most));
        assert!(!leaves.holds(most + 1));
        // A thread's share of what is left, 2^17, holds four leaves of 2^15 at most.
        leaves.placed((1 << 22) - (1 << 18));
        assert!(!leaves.holds(most));
        assert!(leaves.holds(1 << 15));
        assert!(!leaves.holds((1 << 15) + 1));
        // A part too short to cut in two parts worth sharing (and at most `most`) is a
        // leaf whatever is left.
        leaves.placed((1 << 18) - 1);
        assert!(leaves.holds(2 * PARALLEL_FROM - 1));
        assert!(!leaves.holds(2 * PARALLEL_FROM));
    }
}
