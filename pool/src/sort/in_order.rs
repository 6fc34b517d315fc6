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
        return items.is_sorted_by(in_order);
    }
    let chunk = n.div_ceil(crate::current_num_threads()).max(1);
    ChunksMut::new(&mut *items, chunk)
        .with_max_len(1)
        .all(|chunk| chunk.is_sorted_by(in_order))
        && (chunk..n)
            .step_by(chunk)
            .all(|i| in_order(&items[i - 1], &items[i]))
}
