//! `collect` into a `Vec` (and `par_extend` of one), in the iterator's order. An indexed
//! iterator writes each item straight into the `Vec`'s storage at its index, as the index operation `map` does (one
//! write, no per-range `Vec`; if an item's computation panics, what was written is dropped
//! once). Any other (after a `filter`) gathers each range's items where it ran, then copies
//! the ranges into the `Vec` in order: one copy.

use super::drive::{grain, Drive};
use super::{IntoParallelIterator, ParallelIterator};
use crate::ops::map::{append_ranges, write_results};
use crate::ops::pipeline;
use crate::ops::region::{Grain, Target};
use crate::region::Claims;

/// Builds a collection from a parallel iterator: what
/// [`collect`](ParallelIterator::collect) makes, as rayon's trait of the same name.
pub trait FromParallelIterator<T: Send> {
    /// The collection of `iter`'s items.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let evens = Vec::from_par_iter((0..10u32).into_par_iter().filter(|x| x % 2 == 0));
    /// assert_eq!(evens, [0, 2, 4, 6, 8]);
    /// ```
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I>(iter: I) -> Vec<T>
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut out = Vec::new();
        append(&mut out, &iter.into_par_iter());
        out
    }
}

/// `iter`'s items appended to `out`, in order.
pub(crate) fn append<I: ParallelIterator>(out: &mut Vec<I::Item>, iter: &I) {
    if iter.exact() {
        in_place(out, iter);
    } else {
        let mut items = by_ranges(iter);
        if out.is_empty() {
            *out = items;
        } else {
            out.append(&mut items);
        }
    }
}

/// An indexed iterator's items, each written at its index past `out`'s items.
fn in_place<I: ParallelIterator>(out: &mut Vec<I::Item>, iter: &I) {
    Target::current(grain(iter), |runs| {
        append_ranges(runs, out, iter.positions(), &|range, part, caught| {
            let start = range.start;
            // SAFETY: the pipeline's ranges are disjoint, and `write_results` asks for
            // disjoint parts of this one (what follows an item that panicked).
            let items = |part: std::ops::Range<usize>| unsafe {
                iter.seq(start + part.start..start + part.end)
            };
            write_results(part, start, items, |item| item, caught);
        });
    });
}

/// Any iterator's items: each range's gathered where it ran, then copied in order.
fn by_ranges<I: ParallelIterator>(iter: &I) -> Vec<I::Item> {
    let parts = ordered_parts(iter, grain(iter), |items| items.collect::<Vec<I::Item>>());
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for items in parts {
        out.extend(items);
    }
    out
}

/// `gather` of each claimed range's items where it ran, claimed by `grain`, the parts in
/// the iterator's order (ranges without items make none).
pub(crate) fn ordered_parts<I, P, G>(iter: &I, grain: Grain, gather: G) -> Vec<P>
where
    I: Drive,
    P: Send,
    G: Fn(I::Seq<'_>) -> P + Sync,
{
    let mut parts: Vec<(usize, P)> = Target::current(grain, |runs| {
        pipeline::run_any_state(
            runs,
            iter.positions(),
            Claims::FromHomes,
            &Vec::new,
            |parts: &mut Vec<(usize, P)>, range| {
                if !range.is_empty() {
                    let start = range.start;
                    // SAFETY: the pipeline's ranges are disjoint and within the positions.
                    parts.push((start, gather(unsafe { iter.seq(range) })));
                }
            },
            |states| states.flatten().collect(),
        )
    });
    parts.sort_unstable_by_key(|&(start, _)| start);
    parts.into_iter().map(|(_, part)| part).collect()
}
