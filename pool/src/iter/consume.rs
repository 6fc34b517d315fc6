//! The consumers' runs: each is one pass of the operations' pipeline over the iterator's
//! positions on the current pool, a state per participant folding the items of the ranges
//! it claims. Where rayon's result depends on the items' order (`reduce` with an operation
//! that does not commute, ties in `min` and `max`, the first match), ranges keep their
//! start and the states are combined in the iterator's order.

use super::drive::{grain, has_ended, ordered, Drive, Order};
use crate::ops::find::{find_in_blocks, MAX_BLOCK};
use crate::ops::pipeline::{self, OnFork};
use crate::ops::region::Target;
use crate::region::Claims;
use crate::sync::{AtomicBool, AtomicUsize, Ordering};
use std::iter::{Product, Sum};
use std::ops::Range;

/// What a child forked from inside an iterator's region does: aborts, as the index
/// operations that write into the caller's slice do. A chain's source may lend `&mut`
/// items (`par_iter_mut`, `par_chunks_mut`, the sorts' runs) that a helper of the parent
/// was halfway through writing when the fork happened.
pub(crate) const IN_AN_ITERATOR: OnFork = OnFork::Abort("a parallel iterator");

/// Runs `fold` over the ranges of `iter`'s positions on the current pool, claimed from
/// homes, a state made by `init` per participant, then `combine` over the states.
fn run<I, S, T>(
    iter: &I,
    init: &(dyn Fn() -> S + Sync),
    fold: impl Fn(&mut S, Range<usize>) + Sync,
    combine: impl FnOnce(&mut dyn Iterator<Item = S>) -> T,
) -> T
where
    I: Drive,
    S: Send,
{
    let positions = 0..iter.position_count();
    run_claimed(
        iter,
        positions,
        Claims::FromHomes(iter.ended()),
        init,
        fold,
        combine,
    )
}

/// As [`run`], over `positions` only, the ranges claimed as `claims` says.
fn run_claimed<I, S, T>(
    iter: &I,
    positions: Range<usize>,
    claims: Claims<'_>,
    init: &(dyn Fn() -> S + Sync),
    fold: impl Fn(&mut S, Range<usize>) + Sync,
    combine: impl FnOnce(&mut dyn Iterator<Item = S>) -> T,
) -> T
where
    I: Drive,
    S: Send,
{
    let from = positions.start;
    Target::current(grain(iter), |runs| {
        pipeline::run_any_state(
            runs,
            positions.len(),
            claims,
            init,
            |state, range| fold(state, range.start + from..range.end + from),
            IN_AN_ITERATOR,
            |mut states| combine(&mut states),
        )
    })
}

/// The most positions one search's region covers: below `usize::MAX >> 14`, where claims
/// are no longer capped (job.rs `max_chunk`: near `usize::MAX` positions, each claims one
/// task), so that the claims a match leaves to skip grow as usual.
const SEARCH_WINDOW: usize = usize::MAX >> 15;

/// The first match `search` finds in a window of `iter`'s positions: windows of at most
/// [`SEARCH_WINDOW`] positions, in order, until one has a match or the source ended (the
/// windows left then have nothing).
fn by_windows<I: Drive, T>(iter: &I, search: impl FnMut(Range<usize>) -> Option<T>) -> Option<T> {
    let n = iter.position_count();
    (0..n.div_ceil(SEARCH_WINDOW))
        .map(|k| k * SEARCH_WINDOW..((k + 1) * SEARCH_WINDOW).min(n))
        .take_while(|_| !has_ended(iter.ended()))
        .find_map(search)
}

pub(crate) fn for_each<I: Drive>(iter: &I, f: &(impl Fn(I::Item) + Sync)) {
    run(
        iter,
        &|| (),
        // SAFETY: a range the pipeline claimed: disjoint from the others, within the positions.
        |(), range| unsafe { iter.seq(range) }.for_each(f),
        |_| (),
    );
}

pub(crate) fn count<I: Drive>(iter: &I) -> usize {
    run(
        iter,
        &|| 0,
        // SAFETY: a range the pipeline claimed: disjoint from the others, within the positions.
        |n, range| *n += unsafe { iter.seq(range) }.count(),
        |states| states.sum(),
    )
}

pub(crate) fn sum<I: Drive, S: Send + Sum<I::Item> + Sum<S>>(iter: &I) -> S {
    let merge = |a: S, b: S| [a, b].into_iter().sum();
    total(iter, |items| items.sum(), merge).unwrap_or_else(|| std::iter::empty::<I::Item>().sum())
}

pub(crate) fn product<I: Drive, P: Send + Product<I::Item> + Product<P>>(iter: &I) -> P {
    let merge = |a: P, b: P| [a, b].into_iter().product();
    total(iter, |items| items.product(), merge)
        .unwrap_or_else(|| std::iter::empty::<I::Item>().product())
}

/// Each range's items totalled by `part` where it ran (one `Iterator::sum` or `product`,
/// which the compiler vectorises where it can), the parts then by `merge` in the iterator's
/// order, as rayon's (a `Sum` need only be associative: a matrix product does not commute);
/// `None` with no range.
fn total<I: Drive, S: Send>(
    iter: &I,
    part: impl Fn(I::Seq<'_>) -> S + Sync,
    merge: impl Fn(S, S) -> S + Sync,
) -> Option<S> {
    run(
        iter,
        &Totals::default,
        |totals: &mut Totals<S>, range| {
            // SAFETY: a range the pipeline claimed: disjoint from the others, within the positions.
            let part = part(unsafe { iter.seq(range.clone()) });
            totals.add(range, part, &merge);
        },
        |states| {
            let mut parts = states.flat_map(|totals| {
                let run = totals.run.map(|(range, total)| (range.start, total));
                run.into_iter().chain(totals.apart)
            });
            // One part (a region run alone) allocates nothing.
            let first = parts.next()?;
            let Some(second) = parts.next() else {
                return Some(first.1);
            };
            let mut parts: Vec<(usize, S)> = [first, second].into_iter().chain(parts).collect();
            parts.sort_unstable_by_key(|&(start, _)| start);
            parts.into_iter().map(|(_, part)| part).reduce(&merge)
        },
    )
}

/// One participant's totals: the run of adjacent ranges it claimed merged as one (its home,
/// claimed in order), and the parts of ranges apart from it, each with its start.
struct Totals<S> {
    run: Option<(Range<usize>, S)>,
    apart: Vec<(usize, S)>,
}

impl<S> Default for Totals<S> {
    fn default() -> Self {
        Totals {
            run: None,
            apart: Vec::new(),
        }
    }
}

impl<S> Totals<S> {
    /// Adds the total `part` of the items of `range`, merged into the run where it adjoins
    /// it (on either side, in order).
    fn add(&mut self, range: Range<usize>, part: S, merge: &impl Fn(S, S) -> S) {
        self.run = Some(match self.run.take() {
            None => (range, part),
            Some((run, total)) if run.end == range.start => {
                (run.start..range.end, merge(total, part))
            }
            Some((run, total)) if range.end == run.start => {
                (range.start..run.end, merge(part, total))
            }
            Some(run) => {
                self.apart.push((range.start, part));
                run
            }
        });
    }
}

/// `op` over the items in the iterator's order (`op` associative, not necessarily
/// commutative, as rayon's `reduce_with`): each range reduced where it ran, then combined
/// as `total` combines sums.
pub(crate) fn reduce_with<I, OP>(iter: &I, op: &OP) -> Option<I::Item>
where
    I: Drive,
    OP: Fn(I::Item, I::Item) -> I::Item + Sync,
{
    // An empty range reduces to nothing, which any side absorbs.
    let merge = |a: Option<I::Item>, b: Option<I::Item>| match (a, b) {
        (Some(a), Some(b)) => Some(op(a, b)),
        (a, b) => a.or(b),
    };
    total(iter, |items| items.reduce(op), merge).flatten()
}

/// The item that `better(candidate, best)` prefers over every other, comparing items at
/// once with their [`Order`]: the least (first of equals) or the greatest (last of equals).
pub(crate) fn best<I, B>(iter: &I, better: &B) -> Option<I::Item>
where
    I: Drive,
    B: Fn(&(Order, I::Item), &(Order, I::Item)) -> bool + Sync,
{
    let keep = |best: &mut Option<(Order, I::Item)>, candidate: (Order, I::Item)| {
        if best.as_ref().is_none_or(|best| better(&candidate, best)) {
            *best = Some(candidate);
        }
    };
    run(
        iter,
        &|| None,
        // SAFETY: a range the pipeline claimed: disjoint from the others, within the positions.
        |best, range| unsafe { ordered(iter, range) }.for_each(|candidate| keep(best, candidate)),
        |states| {
            let mut overall = None;
            states
                .flatten()
                .for_each(|candidate| keep(&mut overall, candidate));
            overall.map(|(_, item)| item)
        },
    )
}

/// A match of `pred` (with its [`Order`]), stopping every participant once one is found:
/// not necessarily the first. The index operations' search, over items.
pub(crate) fn find_any<I, P>(iter: &I, pred: &P) -> Option<(Order, I::Item)>
where
    I: Drive,
    P: Fn(&I::Item) -> bool + Sync,
{
    let coarse = iter.coarse();
    let search = |from: usize, to: usize, stop: &AtomicBool| {
        // SAFETY: a block of a range the pipeline claimed: disjoint from the others.
        let mut items = unsafe { ordered(iter, from..to) };
        if coarse {
            // Relaxed: a hint to stop early, as the blocks' own look (`find_in_blocks`).
            until_moot(items, || stop.load(Ordering::Relaxed)).find(|(_, x)| pred(x))
        } else {
            items.find(|(_, x)| pred(x))
        }
    };
    Target::current(grain(iter), |runs| {
        find_in_blocks(
            runs,
            iter.position_count(),
            &search,
            |&(order, _)| order,
            (iter.ended(), IN_AN_ITERATOR, coarse),
        )
    })
}

/// `items`, ending early once `moot` says another participant's match makes any here
/// moot, asked every [`MAX_BLOCK`] items: for coarse positions (`Drive::coarse`), where a
/// block of positions bounds no search's overrun.
fn until_moot<T>(
    items: impl Iterator<Item = T>,
    moot: impl Fn() -> bool,
) -> impl Iterator<Item = T> {
    (items.enumerate())
        .map_while(move |(k, item)| (k % MAX_BLOCK != MAX_BLOCK - 1 || !moot()).then_some(item))
}

/// The position of an item for which `pred` holds, stopping every participant once one is
/// found: not necessarily the first. Each block is one `Iterator::position` over the
/// block's items, the loop the index operation `position_any_slice` runs.
pub(crate) fn position_any<I, P>(iter: &I, pred: &P) -> Option<usize>
where
    I: Drive,
    P: Fn(I::Item) -> bool + Sync,
{
    let search = |from: usize, to: usize, _: &AtomicBool| {
        // SAFETY: a block of a range the pipeline claimed: disjoint from the others.
        let mut items = unsafe { iter.seq(from..to) };
        items.position(pred).map(|k| from + k)
    };
    Target::current(grain(iter), |runs| {
        find_in_blocks(
            runs,
            iter.position_count(),
            &search,
            |&at| at,
            (iter.ended(), IN_AN_ITERATOR, iter.coarse()),
        )
    })
}

/// The last match of `pred` in the iterator's order, with its [`Order`]. Ranges are
/// claimed in order from the back (claimed range `a..b` of the mirrored positions searches
/// positions `n - b..n - a`), each range in blocks from its back (`last_from_back`: items
/// come forward), and a range that ends at or before the start of the latest range with a
/// match is skipped at once. Past [`SEARCH_WINDOW`] positions, one region a window from
/// the back, until a window has a match.
pub(crate) fn find_last<I, P>(iter: &I, pred: &P) -> Option<(Order, I::Item)>
where
    I: Drive,
    P: Fn(&I::Item) -> bool + Sync,
{
    let n = iter.position_count();
    // Coarse positions (a `flat_map`'s, a range's past `usize::MAX` items) are searched
    // forward: one at a time at first.
    let coarse = iter.coarse();
    let first_back_block = if coarse { 1 } else { FIRST_BACK_BLOCK };
    // The start of the latest range with a match (0 before any: no range ends there).
    let latest = AtomicUsize::new(0);
    // Windows of the mirrored positions (position `p` is `n - 1 - p`).
    by_windows(iter, |mirrored_window| {
        run_claimed(
            iter,
            mirrored_window,
            Claims::InOrder(iter.ended()),
            &|| None,
            |found: &mut Option<(Order, I::Item)>, mirrored: Range<usize>| {
                let range = n - mirrored.end..n - mirrored.start;
                // Relaxed: a hint; a range not skipped is only searched in vain.
                if range.end <= latest.load(Ordering::Relaxed) {
                    return;
                }
                let start = range.start;
                let end = range.end;
                // Relaxed: a hint, as above.
                let moot = || end <= latest.load(Ordering::Relaxed);
                let search = |block: Range<usize>| {
                    // SAFETY: a block of the mirror of a range the pipeline claimed:
                    // disjoint from the others', within the positions, each asked once.
                    let items = unsafe { ordered(iter, block) };
                    if coarse {
                        until_moot(items, moot).filter(|(_, x)| pred(x)).last()
                    } else {
                        items.filter(|(_, x)| pred(x)).last()
                    }
                };
                // A source that may end (`while_some`) ends at its first stopping item, in
                // order: its range is searched forward, whole.
                let hit = if iter.ended().is_none() {
                    last_from_back(range, first_back_block, search)
                } else {
                    search(range)
                };
                if let Some(hit) = hit {
                    latest.fetch_max(start, Ordering::Relaxed);
                    if found.as_ref().is_none_or(|(order, _)| hit.0 > *order) {
                        *found = Some(hit);
                    }
                }
            },
            |states| states.flatten().max_by_key(|(order, _)| *order),
        )
    })
}

/// The first block searching from the back looks at, in positions: each next one, toward
/// the front, is twice the one after it.
const FIRST_BACK_BLOCK: usize = 256;

/// `search`'s hit in the last block of `range` that has one: blocks from the back, the
/// last `first` positions first ([`FIRST_BACK_BLOCK`], or 1 where positions are coarse),
/// each next one twice as long. A match near the end costs a block, not the range (a pool
/// of one thread claims a whole window as one range); none costs the range and a block's
/// set-up per doubling.
fn last_from_back<T>(
    range: Range<usize>,
    first: usize,
    search: impl Fn(Range<usize>) -> Option<T>,
) -> Option<T> {
    let mut end = range.end;
    let mut size = first;
    while end > range.start {
        let start = end.saturating_sub(size).max(range.start);
        if let Some(hit) = search(start..end) {
            return Some(hit);
        }
        end = start;
        size = size.saturating_mul(2);
    }
    None
}

/// The first match of `pred` in the iterator's order, with its [`Order`]. Ranges are
/// claimed in order, so the participants search the front first; every range is claimed
/// until the source ends (a stop flag of its own would skip untaken first tasks, which may
/// hold it), but one that starts past the earliest match found is skipped at once. Past
/// [`SEARCH_WINDOW`] positions (`repeat`), one region a window, in order, until a window
/// has a match.
pub(crate) fn find_first<I, P>(iter: &I, pred: &P) -> Option<(Order, I::Item)>
where
    I: Drive,
    P: Fn(&I::Item) -> bool + Sync,
{
    let earliest = AtomicUsize::new(usize::MAX);
    let coarse = iter.coarse();
    by_windows(iter, |window| {
        run_claimed(
            iter,
            window,
            Claims::InOrder(iter.ended()),
            &|| None,
            |found: &mut Option<(Order, I::Item)>, range| {
                // Relaxed: a hint; a range not skipped is only searched in vain.
                if range.start > earliest.load(Ordering::Relaxed) {
                    return;
                }
                let start = range.start;
                // SAFETY: a range the pipeline claimed: disjoint from the others, within
                // the positions.
                let mut items = unsafe { ordered(iter, range) };
                let hit = if coarse {
                    // Relaxed: a hint, as above; an earlier range's match makes this moot.
                    let moot = || earliest.load(Ordering::Relaxed) < start;
                    until_moot(items, moot).find(|(_, x)| pred(x))
                } else {
                    items.find(|(_, x)| pred(x))
                };
                if let Some(hit) = hit {
                    earliest.fetch_min(start, Ordering::Relaxed);
                    if found.as_ref().is_none_or(|(order, _)| hit.0 < *order) {
                        *found = Some(hit);
                    }
                }
            },
            |states| states.flatten().min_by_key(|(order, _)| *order),
        )
    })
}
