//! Whether a slice is in order already: one pass shared among the threads, so a sort
//! handed sorted input returns at a fraction of a serial pass's cost.

use crate::iter::{ChunksMut, IndexedParallelIterator, ParallelIterator};

/// Items the first look checks on the caller, before any region: input out of order
/// almost always shows it there, at no region's cost.
const FIRST_LOOK: usize = 64;
/// Below this many items the whole check runs on the caller: a pass over them takes
/// tens of microseconds, about what waiting for a helper to wake up can cost.
const PARALLEL_FROM: usize = 1 << 17;

/// Whether `in_order(a, b)` holds for every two neighbouring items of `items`: the first
/// [`FIRST_LOOK`] on the caller, then, from [`PARALLEL_FROM`] items, one chunk per thread
/// in parallel (each stops at its first pair out of order) and the pairs across chunks;
/// below, the whole slice on the caller.
pub(crate) fn holds<T: Send>(items: &mut [T], in_order: &(impl Fn(&T, &T) -> bool + Sync)) -> bool {
    let n = items.len();
    if !items[..n.min(FIRST_LOOK)].is_sorted_by(in_order) {
        return false;
    }
    if n < PARALLEL_FROM {
        return each_in_order(items, in_order);
    }
    let chunk = n.div_ceil(crate::current_num_threads()).max(1);
    ChunksMut::new(&mut *items, chunk)
        .with_max_len(1)
        .all(|chunk| each_in_order(chunk, in_order))
        && (chunk..n)
            .step_by(chunk)
            .all(|i| in_order(&items[i - 1], &items[i]))
}

/// Pairs [`each_in_order`] checks between two looks at the answer.
const RUN: usize = 64;

/// Whether `in_order` holds for every two neighbouring items of `items`: the pairs in
/// order counted by runs of [`RUN`], without a branch on each pair, so that a check of
/// plain keys vectorizes, ending after the first run with a pair out of order. On 1e5
/// sorted items by `Ord::cmp`, against `slice::is_sorted_by` (which stops at each pair):
/// `u32` 15.7 us against 29, `u64` 24 against 42, `(u64, u64)` by key 27 against 33 (a
/// `bool` folded by `&` instead: `u64` 31 us; counted in `usize`: `u32` 31 us).
fn each_in_order<T>(items: &[T], in_order: &impl Fn(&T, &T) -> bool) -> bool {
    let pairs = items.len().saturating_sub(1);
    (0..pairs).step_by(RUN).all(|start| {
        let end = (start + RUN).min(pairs);
        let in_order = items[start..=end]
            .windows(2)
            .map(|pair| u32::from(in_order(&pair[0], &pair[1])))
            .sum::<u32>();
        in_order as usize == end - start
    })
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn each_in_order_finds_the_one_pair_out_of_order_anywhere() {
        let in_order = |a: &u32, b: &u32| a <= b;
        for len in [0, 1, 2, RUN, RUN + 1, RUN + 2, 3 * RUN + 5] {
            let sorted: Vec<u32> = (0..len as u32).collect();
            assert!(each_in_order(&sorted, &in_order), "{len} in order");
            for i in 1..len {
                let mut items = sorted.clone();
                items.swap(i - 1, i);
                assert!(!each_in_order(&items, &in_order), "{len}, pair {i} swapped");
            }
        }
    }
}
