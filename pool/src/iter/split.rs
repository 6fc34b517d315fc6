//! `iter::split(data, splitter)`: a parallel iterator over the pieces a splitter cuts data
//! into, as rayon's. The splitting recurses by [`join`](crate::join), both halves of each
//! cut in parallel where a thread is idle, down to 8 pieces per thread of the current pool
//! (rayon splits adaptively, more where work is stolen); a piece the splitter does not cut
//! further, or one at that depth, is an item. The pieces, in order, are a computed
//! source.

use super::computed::{sealed::Make, Computed};

/// Pieces per thread of the current pool the splitting aims for: enough that the
/// pipeline balances uneven pieces (a quicksort's partitions) across the threads.
const PIECES_PER_THREAD: usize = 8;

/// The pieces `splitter` cuts `data` into: `splitter(data)` returns a part and, if it cut,
/// the rest, each split further in turn.
///
/// ```
/// use rayforce_pool::prelude::*;
/// // The Fibonacci number of 20, each cut `n` into `n - 2` and `n - 1`.
/// fn fib(n: u64) -> u64 {
///     if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
/// }
/// let total: u64 = rayforce_pool::iter::split(20u64, |n| if n < 2 { (n, None) } else { (n - 2, Some(n - 1)) })
///     .map(fib)
///     .sum();
/// assert_eq!(total, 6765);
/// ```
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    Computed::new(Cutting { data, splitter })
}

/// `iter::split(data, splitter)`: the pieces, in order.
pub type Split<D, S> = Computed<Cutting<D, S>>;

/// How the pieces of [`split`](super::split()) are made.
#[derive(Clone)]
pub struct Cutting<D, S> {
    data: D,
    splitter: S,
}

impl<D: std::fmt::Debug, S> std::fmt::Debug for Cutting<D, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cutting")
            .field("data", &self.data)
            .finish_non_exhaustive()
    }
}

/// `data` cut by `splitter` into at most `most` pieces (at least one), in order.
fn cut<D, S>(splitter: &S, data: D, most: usize) -> Vec<D>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    if most < 2 {
        return vec![data];
    }
    match splitter(data) {
        (whole, None) => vec![whole],
        (left, Some(right)) => {
            let half = most / 2;
            let (mut left, right) = crate::join(
                || cut(splitter, left, half),
                || cut(splitter, right, most - half),
            );
            left.extend(right);
            left
        }
    }
}

impl<D, S> Make for Cutting<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    type Item = D;

    fn make(self) -> Vec<D> {
        let most = crate::current_num_threads() * PIECES_PER_THREAD;
        cut(&self.splitter, self.data, most)
    }
}
