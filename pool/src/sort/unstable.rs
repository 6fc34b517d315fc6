//! The unstable comparison sort (`par_sort_unstable` and its `_by`/`_by_key` forms):
//! `std`'s `select_nth_unstable_by` splits the slice at its median, `join` sorts the two
//! halves, and at the depth where every thread has a part, `std`'s `sort_unstable_by`
//! sorts each. Halves of equal length keep the threads equally loaded; where the median
//! is a frequent key, its copies (which need no sorting) are first gathered beside it, and
//! the threads shared out by what is left on each side. Every step moves items by swaps,
//! so a panicking comparator leaves a permutation of the input.

use std::cmp::Ordering;

/// Below this many items the sort runs on the calling thread: `std`'s sort of them takes
/// a few tens of microseconds, about what sharing a half with another thread costs.
pub(crate) const PARALLEL_FROM: usize = 1 << 12;

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
    split_at_medians(items, compare, width);
}

/// Sorts `items`, on up to `parts` threads: split at the median while there are more parts
/// than one.
fn split_at_medians<T, F>(items: &mut [T], compare: &F, parts: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if parts <= 1 || items.len() < PARALLEL_FROM {
        items.sort_unstable_by(compare);
        return;
    }
    let middle = items.len() / 2;
    items.select_nth_unstable_by(middle, compare);
    let frequent = is_frequent(items, middle, compare);
    let (below, rest) = items.split_at_mut(middle);
    let (median, above) = rest.split_first_mut().expect("the median is an item");
    let (below, above) = if frequent {
        let is_median = |item: &T| compare(item, median) == Ordering::Equal;
        let below_end = below.len() - gather(below, (0..below.len()).rev(), is_median);
        let above_start = gather(above, 0..above.len(), is_median);
        (&mut below[..below_end], &mut above[above_start..])
    } else {
        (below, above)
    };
    let below_parts = share(parts, below.len(), above.len());
    crate::join(
        || split_at_medians(below, compare, below_parts),
        || split_at_medians(above, compare, parts - below_parts),
    );
}

/// How many items of a sample this many long the median's key must fill for its copies
/// to be gathered: 2 of 64, about 3% of the slice.
const SAMPLE: usize = 64;

/// Whether the key of `items[middle]` looks frequent: at least 2 of [`SAMPLE`] items
/// spread over the slice equal it.
fn is_frequent<T, F>(items: &[T], middle: usize, compare: &F) -> bool
where
    F: Fn(&T, &T) -> Ordering,
{
    let step = items.len() / SAMPLE;
    let equal = (0..SAMPLE)
        .map(|k| k * step)
        .filter(|&i| i != middle && compare(&items[i], &items[middle]) == Ordering::Equal)
        .count();
    equal >= 2
}

/// Swaps the items of `items` that `is_median` holds for to the first positions of
/// `order` (the positions to visit, each once), and returns how many.
fn gather<T>(
    items: &mut [T],
    order: impl Iterator<Item = usize> + Clone,
    is_median: impl Fn(&T) -> bool,
) -> usize {
    let mut slots = order.clone();
    let mut gathered = 0;
    for i in order {
        if is_median(&items[i]) {
            let slot = slots.next().expect("a slot at or before `i`");
            items.swap(slot, i);
            gathered += 1;
        }
    }
    gathered
}

/// How many of `parts` threads the side of `below` items gets, beside one of `above`:
/// by their lengths, each non-empty side at least one.
fn share(parts: usize, below: usize, above: usize) -> usize {
    match (below, above) {
        (_, 0) => parts,
        (0, _) => 0,
        _ => ((parts * below + (below + above) / 2) / (below + above)).clamp(1, parts - 1),
    }
}
