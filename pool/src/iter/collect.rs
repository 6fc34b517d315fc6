//! `collect` into a `Vec` (and `par_extend` of one), in the iterator's order. An indexed
//! iterator writes each item straight into the `Vec`'s storage at its index, as the index
//! operation `map` does (one write, no per-range `Vec`; if an item's computation panics,
//! what was written is dropped once). Any other (after a `filter`) gathers the items of
//! the ranges each participant claims into one `Vec` of its own, then moves them into the
//! output in order, by the pool where there are many: one copy, none for the items of a
//! participant whose `Vec` becomes the output where it grows in place.

use super::consume::IN_AN_ITERATOR;
use super::drive::{grain, Drive};
use super::{IntoParallelIterator, ParallelIterator};
use crate::ops::map::{append_ranges, write_items};
use crate::ops::pipeline::{self, OnFork};
use crate::ops::region::{Disjoint, Grain, Target};
use crate::region::Claims;
use std::ops::Range;

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
        by_ranges(out, iter);
    }
}

/// An indexed iterator's items, each written at its index past `out`'s items.
fn in_place<I: ParallelIterator>(out: &mut Vec<I::Item>, iter: &I) {
    Target::current(grain(iter), |runs| {
        append_ranges(
            runs,
            out,
            iter.position_count(),
            IN_AN_ITERATOR,
            &|range, part, caught| {
                let start = range.start;
                // SAFETY: the pipeline's ranges are disjoint, and `write_items` makes this
                // one's sequence once.
                write_items(part, start, || unsafe { iter.seq(range) }, caught);
            },
        );
    });
}

/// Any iterator's items appended to `out`: each participant gathers the items of the
/// ranges it claims into one `Vec` of its own, then they are moved into `out` in the
/// iterator's order, in parallel where there are enough of them (one copy). Where `out` has
/// no storage and one participant's items all come first, in order, its `Vec` becomes
/// `out` and only the others' items move.
fn by_ranges<I: ParallelIterator>(out: &mut Vec<I::Item>, iter: &I) {
    let mut gathered: Vec<Gathered<I::Item>> = Target::current(grain(iter), |runs| {
        pipeline::run_any_state(
            runs,
            iter.position_count(),
            Claims::FromHomes(iter.ended()),
            &Gathered::default,
            |gathered: &mut Gathered<I::Item>, range| {
                let (start, before) = (range.start, gathered.items.len());
                // SAFETY: the pipeline's ranges are disjoint and within the positions.
                gathered.items.extend(unsafe { iter.seq(range) });
                if gathered.items.len() > before {
                    gathered.runs.push(Run {
                        start,
                        from: before,
                        len: gathered.items.len() - before,
                        to: 0,
                    });
                }
            },
            IN_AN_ITERATOR,
            |states| states.filter(|state| !state.items.is_empty()).collect(),
        )
    });
    if out.capacity() == 0 {
        if let Some(first) = leading(&gathered) {
            // Its items are the output's first, in order: its `Vec` is the output, grown
            // in place where the allocator can, and the others' items move in after them.
            *out = std::mem::take(&mut gathered[first].items);
            gathered[first].runs.clear();
            // Exactly what the others add: the leader's `Vec` grew by doubling.
            out.reserve_exact(gathered.iter().map(|g| g.items.len()).sum());
        }
    }
    move_in_order(out, &mut gathered);
}

/// The participant whose items, in the order it gathered them, come before every other
/// participant's in the iterator's order, if any (the only one, with its runs in order).
fn leading<T>(gathered: &[Gathered<T>]) -> Option<usize> {
    fn starts<T>(g: &Gathered<T>) -> impl Iterator<Item = usize> + '_ {
        g.runs.iter().map(|run| run.start)
    }
    let first = (0..gathered.len()).min_by_key(|&g| starts(&gathered[g]).min())?;
    let runs = &gathered[first].runs;
    let last = runs.last()?.start;
    let before_the_others = (gathered.iter().enumerate())
        .all(|(g, other)| g == first || starts(other).all(|start| start > last));
    (runs.is_sorted_by_key(|run| run.start) && before_the_others).then_some(first)
}

/// What one participant gathered: its ranges' items back to back, in the order it ran them.
struct Gathered<T> {
    items: Vec<T>,
    runs: Vec<Run>,
}

impl<T> Default for Gathered<T> {
    fn default() -> Self {
        Gathered {
            items: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// The items of one claimed range: `len` of them from `from` in its participant's `items`,
/// bound for `to` past the output's items before them; `start` is the range's first
/// position, which orders the runs as the iterator does.
#[derive(Clone, Copy)]
struct Run {
    start: usize,
    from: usize,
    len: usize,
    to: usize,
}

/// From this many bytes the items are moved into the output by the pool, below it by the
/// caller alone. Measured on 2 cores (a `filter` of `u64`s then `collect`): at 32 KiB
/// either way took as long, at 64 KiB the pool's move a quarter less.
const PARALLEL_MOVE_BYTES: usize = 64 * 1024;

/// Moves every gathered item to the end of `out`, run after run in the iterator's order,
/// leaving the participants' `Vec`s empty (their storage is freed with them).
fn move_in_order<T: Send>(out: &mut Vec<T>, gathered: &mut [Gathered<T>]) {
    let mut order: Vec<(usize, Run)> = (gathered.iter().enumerate())
        .flat_map(|(owner, g)| g.runs.iter().map(move |&run| (owner, run)))
        .collect();
    order.sort_unstable_by_key(|(_, run)| run.start);
    let mut total = 0;
    for (_, run) in &mut order {
        run.to = total;
        total += run.len;
    }
    out.reserve(total);
    let had = out.len();
    let sources: Vec<Disjoint<'_, T>> = (gathered.iter_mut())
        .map(|g| Disjoint::new(&mut g.items[..]))
        .collect();
    let destination = Disjoint::new(&mut out.spare_capacity_mut()[..total]);
    // Moves output positions `wanted` of the runs that cover them.
    let move_part = |wanted: std::ops::Range<usize>| {
        let first = order.partition_point(|(_, run)| run.to + run.len <= wanted.start);
        for &(owner, run) in order[first..]
            .iter()
            .take_while(|(_, run)| run.to < wanted.end)
        {
            let to = run.to.max(wanted.start)..(run.to + run.len).min(wanted.end);
            let from = run.from + (to.start - run.to);
            // SAFETY: each output position is in one claimed part, and each lies in one
            // run, so no two live parts of a source or of the destination overlap.
            let (source, target) = unsafe {
                (
                    sources[owner].range(from..from + to.len()),
                    destination.range(to),
                )
            };
            // SAFETY: `target` is spare capacity, `source` initialised items of a
            // different allocation, of the same length.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    source.as_ptr(),
                    target.as_mut_ptr().cast::<T>(),
                    source.len(),
                )
            };
        }
    };
    if total * size_of::<T>() >= PARALLEL_MOVE_BYTES {
        Target::current(Grain::ANY, |runs| {
            pipeline::run(
                runs,
                total,
                (Claims::FromHomes(None), None),
                &|| (),
                |(), wanted| move_part(wanted),
                OnFork::Panic,
                |_| (),
            )
        });
    } else {
        move_part(0..total);
    }
    // SAFETY: every one of the `total` positions past `had` was written above (the runs'
    // lengths sum to `total`): by this thread, or in the second region by participants
    // that all detached before it returned (its wait for quiet orders their writes before
    // this). Each item in the participants' `Vec`s moved exactly once, so they forget
    // theirs (copying cannot panic, so none is dropped twice); a leader's, taken as `out`,
    // is empty here and had its runs cleared.
    unsafe {
        out.set_len(had + total);
        for g in gathered {
            g.items.set_len(0);
        }
    }
}

/// `gather(None, items)` of each claimed range's items where it ran, claimed by `grain`,
/// the parts in the iterator's order (ranges without items make none). A range that
/// continues the last one its participant claimed continues that range's part instead
/// (`gather(Some(part), items)`): a participant that claims its home range by range makes
/// one part of it.
pub(crate) fn ordered_parts<I, P, G>(iter: &I, grain: Grain, gather: G) -> Vec<P>
where
    I: Drive,
    P: Send,
    G: Fn(Option<P>, I::Seq<'_>) -> P + Sync,
{
    let mut parts: Vec<(Range<usize>, P)> = Target::current(grain, |runs| {
        pipeline::run_any_state(
            runs,
            iter.position_count(),
            Claims::FromHomes(iter.ended()),
            &Vec::new,
            |parts: &mut Vec<(Range<usize>, P)>, range| {
                if range.is_empty() {
                    return;
                }
                let (start, continued) = match parts.last() {
                    Some((last, _)) if last.end == range.start => {
                        let (last, part) = parts.pop().expect("a last part");
                        (last.start, Some(part))
                    }
                    _ => (range.start, None),
                };
                let end = range.end;
                // SAFETY: the pipeline's ranges are disjoint and within the positions.
                let part = gather(continued, unsafe { iter.seq(range) });
                parts.push((start..end, part));
            },
            IN_AN_ITERATOR,
            |states| states.flatten().collect(),
        )
    });
    parts.sort_unstable_by_key(|(range, _)| range.start);
    parts.into_iter().map(|(_, part)| part).collect()
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::{leading, Gathered, Run};

    /// A participant that gathered ranges starting at `starts`, in that order, ten items
    /// each.
    fn gathered(starts: &[usize]) -> Gathered<u8> {
        let runs = (starts.iter().enumerate())
            .map(|(k, &start)| Run {
                start,
                from: 10 * k,
                len: 10,
                to: 0,
            })
            .collect();
        Gathered {
            items: vec![0; 10 * starts.len()],
            runs,
        }
    }

    #[test]
    fn a_participant_leads_only_with_its_items_all_first_and_in_order() {
        let cases: [(&[&[usize]], Option<usize>); 6] = [
            (&[], None),
            (&[&[0, 10]], Some(0)),
            (&[&[40, 50], &[0, 10, 20]], Some(1)),
            // Its ranges out of order, or another's between two of its own.
            (&[&[10, 0], &[20]], None),
            (&[&[0, 30], &[10, 20]], None),
            (&[&[30], &[0, 10], &[20]], Some(1)),
        ];
        for (participants, leader) in cases {
            let all: Vec<Gathered<u8>> = participants.iter().map(|s| gathered(s)).collect();
            assert_eq!(leading(&all), leader, "{participants:?}");
        }
    }
}
