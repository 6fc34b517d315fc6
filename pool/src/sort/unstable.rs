//! The unstable comparison sort (`par_sort_unstable` and its `_by`/`_by_key` forms): the
//! slice is cut around pivots (each the median of a sample, by `std`'s
//! `select_nth_unstable_by`; one pass of swaps without a branch on the comparison) into
//! two parts per thread, a region per round of cuts, then the parts are sorted by `std`'s
//! `sort_unstable_by` in one region, claimed one at a time, the costliest first (by
//! length and the distinct keys of a sample: a part of many equal keys sorts fast), and
//! a thread that finishes its part takes another's. Where a pivot is a frequent key, its
//! copies (which need no sorting) are gathered beside it. Every step moves items by
//! swaps, so a panicking comparator leaves a permutation of the input.

use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use std::cmp::{Ordering, Reverse};

/// Below this many items the sort runs on the calling thread: `std`'s sort of them takes
/// a few tens of microseconds, about what sharing a part with another thread costs.
pub(crate) const PARALLEL_FROM: usize = 1 << 12;
/// Parts the slice is cut into per thread.
const PARTS_PER_THREAD: usize = 2;

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
    if in_order(items, compare) {
        return;
    }
    let mut parts: Vec<&mut [T]> = vec![items];
    while parts.len() < PARTS_PER_THREAD * width {
        let before = parts.len();
        parts = parts
            .into_par_iter()
            .with_max_len(1)
            .flat_map_iter(|part| cut_at_pivot(part, compare))
            .collect();
        if parts.len() <= before {
            break; // nothing left worth cutting
        }
    }
    parts.sort_by_cached_key(|part| Reverse(estimated_cost(part, compare)));
    parts
        .into_par_iter()
        .with_max_len(1)
        .for_each(|part| part.sort_unstable_by(compare));
}

/// The items of `part` below a pivot (the median of a sample of [`PIVOT_SAMPLE`] items)
/// and those above, the pivot (with its copies, if frequent) put in place between them;
/// `part` whole if too short to be worth cutting. Empty sides left out.
fn cut_at_pivot<'a, T, F>(part: &'a mut [T], compare: &F) -> Vec<&'a mut [T]>
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if part.len() < PARALLEL_FROM {
        return vec![part];
    }
    if in_order(part, compare) {
        return Vec::new(); // sorted already
    }
    for (k, i) in spread(part.len(), PIVOT_SAMPLE).enumerate() {
        part.swap(k, i);
    }
    part[..PIVOT_SAMPLE].select_nth_unstable_by(PIVOT_SAMPLE / 2, compare);
    part.swap(0, PIVOT_SAMPLE / 2);
    let (pivot, rest) = part.split_first_mut().expect("a part has items");
    let below = partition(rest, |item| compare(item, pivot) == Ordering::Less);
    part.swap(0, below);
    let frequent = is_frequent(part, below, compare);
    let (below, rest) = part.split_at_mut(below);
    let (pivot, above) = rest.split_first_mut().expect("the pivot is an item");
    let above = if frequent {
        let copies = gather(above, 0..above.len(), |item| {
            compare(item, pivot) == Ordering::Equal
        });
        &mut above[copies..]
    } else {
        above
    };
    [below, above]
        .into_iter()
        .filter(|side| !side.is_empty())
        .collect()
}

/// Items sampled to estimate a part's cost.
const COST_SAMPLE: usize = 32;

/// What sorting `part` costs, roughly: its length times the log of how many distinct keys
/// a sample of [`COST_SAMPLE`] items holds (parts of one length cost less the more equal
/// keys they hold). Comparisons only: no item moves.
fn estimated_cost<T, F>(part: &[T], compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    let mut sample: Vec<&T> = spread(part.len(), COST_SAMPLE).map(|i| &part[i]).collect();
    sample.sort_unstable_by(|a, b| compare(a, b));
    let distinct = 1 + sample
        .windows(2)
        .filter(|pair| compare(pair[0], pair[1]) != Ordering::Equal)
        .count();
    part.len() * (distinct.ilog2() as usize + 1)
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

/// Swaps the items `is_below` holds for to the front of `items`, and returns how many: a
/// Lomuto partition without a branch on the comparison (every item is swapped once,
/// with itself or with the first item not below), so unpredictable comparisons cost no
/// mispredicted branches.
fn partition<T>(items: &mut [T], is_below: impl Fn(&T) -> bool) -> usize {
    let mut below = 0;
    for i in 0..items.len() {
        let goes_below = is_below(&items[i]);
        items.swap(below, i);
        below += usize::from(goes_below);
    }
    below
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
