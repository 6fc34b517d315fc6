//! The stable comparison sort (`par_sort` and its `_by`/`_by_key` forms): input in order
//! already is found by one pass shared among the threads and left as it is; else one run per
//! thread (rounded up to a power of two) sorted by `std`'s stable sort in parallel, then
//! rounds of pairwise merges. Each merge is cut into pieces of about equal output, the
//! cuts found by binary search on this thread before the region (so no item is read by
//! two threads at once, and `T: Send` is enough); a piece merges from the slice into a
//! scratch buffer, and only when every piece of the round is done is the scratch copied
//! back. A comparator that panics mid-round leaves the slice as the round found it.

use super::unstable::PARALLEL_FROM;
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use crate::ops::region::Disjoint;
use crate::slice::ChunksMut;
use std::cmp::Ordering;
use std::mem::{size_of, MaybeUninit};
use std::ops::Range;
use std::ptr;

/// Pieces a merge round is cut into per thread: a thread slowed down holds back a
/// quarter of its share.
const PIECES_PER_THREAD: usize = 4;
/// The fewest items of output a piece has.
const MIN_PIECE: usize = 1 << 12;

/// Sorts `items` by `compare`, stable, on the current pool.
pub(crate) fn sort_by<T, F>(items: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let n = items.len();
    let width = if n < PARALLEL_FROM || size_of::<T>() == 0 {
        1
    } else {
        crate::current_num_threads()
    };
    if width == 1 {
        items.sort_by(compare);
        return;
    }
    if super::in_order::holds(items, &|a, b| compare(a, b) != Ordering::Greater) {
        return;
    }
    let runs = width.next_power_of_two();
    let mut run_len = n.div_ceil(runs);
    ChunksMut::new(items, run_len)
        .with_max_len(1)
        .for_each(|run| run.sort_by(compare));
    let mut scratch: Vec<T> = Vec::with_capacity(n);
    let scratch = &mut scratch.spare_capacity_mut()[..n];
    while run_len < n {
        merge_round(items, scratch, run_len, compare, width);
        run_len = run_len.saturating_mul(2);
    }
}

/// One piece of a merge: `left` and `right` ranges of the slice merge into `out`, the
/// same range of the scratch as the two together cover.
struct Piece {
    left: Range<usize>,
    right: Range<usize>,
    out: Range<usize>,
}

/// Merges each pair of neighbouring sorted runs of `run_len` items into one, in parallel
/// pieces.
fn merge_round<T, F>(
    items: &mut [T],
    scratch: &mut [MaybeUninit<T>],
    run_len: usize,
    compare: &F,
    width: usize,
) where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let n = items.len();
    let piece_len = (n / (width * PIECES_PER_THREAD)).max(MIN_PIECE);
    let mut pieces = Vec::new();
    let mut merged = Vec::new();
    for start in (0..n).step_by(run_len.saturating_mul(2)) {
        let middle = start.saturating_add(run_len).min(n);
        let end = middle.saturating_add(run_len).min(n);
        if middle == end || compare(&items[middle], &items[middle - 1]) != Ordering::Less {
            continue; // no right run, or the two already in order
        }
        merged.push(start..end);
        let (left, right) = (&items[start..middle], &items[middle..end]);
        let mut from = (0, 0);
        let mut cut = piece_len;
        while from.0 + from.1 < end - start {
            let to = if cut >= end - start {
                (left.len(), right.len())
            } else {
                let i = left_taken(left, right, cut, from, compare);
                (i, cut - i)
            };
            pieces.push(Piece {
                left: start + from.0..start + to.0,
                right: middle + from.1..middle + to.1,
                out: start + from.0 + from.1..start + to.0 + to.1,
            });
            from = to;
            cut = cut.saturating_add(piece_len);
        }
    }
    if pieces.is_empty() {
        return;
    }
    let slice = Disjoint::new(items);
    let out = Disjoint::new(scratch);
    pieces.into_par_iter().with_max_len(1).for_each(|piece| {
        // SAFETY: the pieces' ranges are disjoint: a pair's cuts never go back
        // (`left_taken` searches from the previous one), and pairs do not overlap.
        let (left, right, out) = unsafe {
            (
                slice.range(piece.left),
                slice.range(piece.right),
                out.range(piece.out),
            )
        };
        merge(left, right, out, compare);
    });
    // Every piece merged: the scratch holds each merged pair, moved back over its items
    // (whose bits it copied).
    merged.into_par_iter().with_max_len(1).for_each(|range| {
        // SAFETY: the pairs are disjoint; the merge round has ended.
        let (items, merged) = unsafe { (slice.range(range.clone()), out.range(range)) };
        // SAFETY: `merged` holds bitwise copies of exactly `items`' items, in order.
        unsafe {
            ptr::copy_nonoverlapping(merged.as_ptr().cast::<T>(), items.as_mut_ptr(), items.len())
        };
    });
}

/// How many of `left`'s items are among the first `cut` of the stable merge of `left`
/// and `right` (`left`'s first on ties), searched no lower than the previous cut `from`
/// (items taken from each), so the pieces stay disjoint whatever `compare` answers (a
/// comparator that is no total order gets an unspecified order, as from `std`).
fn left_taken<T, F>(left: &[T], right: &[T], cut: usize, from: (usize, usize), compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    let mut low = cut.saturating_sub(right.len()).max(from.0);
    let mut high = cut.min(left.len()).min(cut - from.1);
    while low < high {
        let i = low + (high - low) / 2;
        // `left[i]` is among the first `cut` unless `right[cut - i - 1]` precedes it.
        if compare(&right[cut - i - 1], &left[i]) == Ordering::Less {
            high = i;
        } else {
            low = i + 1;
        }
    }
    low
}

/// Merges sorted `left` and `right` into `out` (as long as both), `left`'s first on ties,
/// by bitwise copies: `left` and `right` keep their items.
fn merge<T, F>(left: &[T], right: &[T], out: &mut [MaybeUninit<T>], compare: &F)
where
    F: Fn(&T, &T) -> Ordering,
{
    debug_assert_eq!(left.len() + right.len(), out.len());
    let (mut i, mut j) = (0, 0);
    for slot in out.iter_mut() {
        let take_right =
            i == left.len() || (j < right.len() && compare(&right[j], &left[i]) == Ordering::Less);
        let item = if take_right { &right[j] } else { &left[i] };
        // SAFETY: a bitwise copy into the scratch, which never drops it.
        unsafe { ptr::copy_nonoverlapping(item, slot.as_mut_ptr(), 1) };
        i += usize::from(!take_right);
        j += usize::from(take_right);
    }
}
