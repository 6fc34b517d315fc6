//! Lexicographic comparisons of two indexed iterators (`cmp`, `partial_cmp`, `eq` and the
//! rest), as rayon's and `std`'s: the first pair of items that differ decides, else the
//! lengths; the pairs are compared in parallel and the first difference found in order.

use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use std::cmp::Ordering;

/// `a` against `b`, by `compare` on their items' pairs, then by their lengths.
pub(crate) fn lexicographic<A, B, C>(a: A, b: B, compare: C) -> Option<Ordering>
where
    A: IndexedParallelIterator,
    B: IntoParallelIterator,
    B::Iter: IndexedParallelIterator,
    C: Fn(A::Item, B::Item) -> Option<Ordering> + Sync + Send,
{
    let b = b.into_par_iter();
    let lengths = a.len().cmp(&b.len());
    let first_difference = a
        .zip(b)
        .map(|(x, y)| compare(x, y))
        .find_first(|&order| order != Some(Ordering::Equal));
    match first_difference {
        Some(order) => order,
        None => Some(lengths),
    }
}
