//! `par_sort_by_cached_key`: each item's key computed once, in parallel, into (key, index)
//! pairs; the pairs sorted (unstable, but no two are equal, so the order is stable); the
//! items then moved into that order by following the permutation's cycles, as `std`'s
//! `sort_by_cached_key` does.

use crate::iter::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};

/// Sorts `items` by `key`, stable, calling `key` once per item, on the current pool.
pub(crate) fn sort_by_cached_key<T, K, F>(items: &mut [T], key: &F)
where
    T: Send,
    K: Ord + Send,
    F: Fn(&T) -> K + Sync,
{
    if items.len() < 2 {
        return;
    }
    // Narrower indices where they fit: the pairs are smaller, so the sort moves less.
    if u32::try_from(items.len()).is_ok() {
        by_indices::<T, K, F, u32>(items, key);
    } else {
        by_indices::<T, K, F, usize>(items, key);
    }
}

/// `sort_by_cached_key` with indices of type `I`, which holds every index of `items`.
fn by_indices<T, K, F, I>(items: &mut [T], key: &F)
where
    T: Send,
    K: Ord + Send,
    F: Fn(&T) -> K + Sync,
    I: Copy + Ord + Send + TryFrom<usize>,
    usize: TryFrom<I>,
{
    let index = |i: usize| I::try_from(i).unwrap_or_else(|_| unreachable!("checked: fits"));
    let position = |i: I| usize::try_from(i).unwrap_or_else(|_| unreachable!("from a usize"));
    let mut keyed: Vec<(K, I)> = items
        .par_iter_mut()
        .enumerate()
        .map(|(i, item)| (key(item), index(i)))
        .collect();
    super::unstable::sort_unstable_by(&mut keyed, &Ord::cmp);
    for i in 0..items.len() {
        let mut from = position(keyed[i].1);
        while from < i {
            from = position(keyed[from].1);
        }
        keyed[i].1 = index(from);
        items.swap(i, from);
    }
}
