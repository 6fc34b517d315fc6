//! The slice sources cut at marked items, as rayon's: `par_split(separator)` (the pieces
//! between separators), `par_split_inclusive(separator)` (each piece with the separator
//! that ends it) and `par_chunk_by(same)` (runs in which `same` holds for each item and the
//! one before it), and their `_mut` forms, each giving what `std`'s method of the same name
//! without `par_` gives, in the same order.
//!
//! A shared slice is a source of positions (its items; one more for `par_split`, whose last
//! piece may start at the end): a range yields, in order, the pieces that start in it, each
//! whole (a piece may reach past the range: the items are shared), so every piece comes
//! once. A mutable slice cannot be read past a range while another thread holds the piece
//! there, so its marks are found first, each participant reading only the blocks it
//! claimed (the marks that pair the last item of one block with the first of the next are
//! read after, on the caller), and its pieces are handed out whole: a computed source.

use super::chunks::ChunksMut;
use super::computed::{sealed::Make, Computed, Once};
use super::drive::sealed::Drive;
use super::{IndexedParallelIterator, ParallelIterator};
use std::ops::Range;

/// Items a participant reads marks in at a time in a mutable slice.
const MARK_BLOCK: usize = 4096;

/// Where a kind of cut marks a slice, and what a mark does. Not nameable outside the crate.
pub trait Mark<T>: Sync {
    /// How far after its mark the next piece starts: 1 past a separator, 0 where the mark
    /// is the first item of a piece.
    const STARTS_AFTER: usize;
    /// How many items before the next piece's start a piece ends: 1 where the separator
    /// is left out.
    const LEAVES_OUT: usize;
    /// Whether a piece starts at the end (after a final separator, and the empty slice's
    /// one piece): the source has a position more than items.
    const AT_END: bool;
    /// Whether a mark reads the item before it as well as its own (never item 0's).
    const LOOKS_BACK: bool;

    /// Whether item `i` of `items` is marked.
    fn marked(&self, items: &[T], i: usize) -> bool;
}

/// Pieces between the items `P` holds for, which are left out: `par_split`.
#[derive(Clone)]
pub struct Between<P>(P);

/// Pieces each ended by an item `P` holds for, which it keeps: `par_split_inclusive`.
#[derive(Clone)]
pub struct EndedBy<P>(P);

/// Runs in which `P` holds for each item and the one before it: `par_chunk_by`.
#[derive(Clone)]
pub struct Runs<P>(P);

impl<T, P: Fn(&T) -> bool + Sync> Mark<T> for Between<P> {
    const STARTS_AFTER: usize = 1;
    const LEAVES_OUT: usize = 1;
    const AT_END: bool = true;
    const LOOKS_BACK: bool = false;

    fn marked(&self, items: &[T], i: usize) -> bool {
        (self.0)(&items[i])
    }
}

impl<T, P: Fn(&T) -> bool + Sync> Mark<T> for EndedBy<P> {
    const STARTS_AFTER: usize = 1;
    const LEAVES_OUT: usize = 0;
    const AT_END: bool = false;
    const LOOKS_BACK: bool = false;

    fn marked(&self, items: &[T], i: usize) -> bool {
        (self.0)(&items[i])
    }
}

impl<T, P: Fn(&T, &T) -> bool + Sync> Mark<T> for Runs<P> {
    const STARTS_AFTER: usize = 0;
    const LEAVES_OUT: usize = 0;
    const AT_END: bool = false;
    const LOOKS_BACK: bool = true;

    fn marked(&self, items: &[T], i: usize) -> bool {
        !(self.0)(&items[i - 1], &items[i])
    }
}

/// How many positions `len` items cut by `M` have.
fn positions<T, M: Mark<T>>(len: usize) -> usize {
    len + usize::from(M::AT_END)
}

/// Whether a piece of `items` cut by `mark` starts at position `at`.
fn starts<T, M: Mark<T>>(items: &[T], mark: &M, at: usize) -> bool {
    at == 0 || mark.marked(items, at - M::STARTS_AFTER)
}

/// A shared slice's pieces, cut where the kind `M` marks it.
#[must_use = "iterators do nothing until consumed"]
pub struct Separated<'data, T, M> {
    items: &'data [T],
    mark: M,
}

impl<'data, T, M> Separated<'data, T, M> {
    fn new(items: &'data [T], mark: M) -> Separated<'data, T, M> {
        Separated { items, mark }
    }
}

impl<T, M: Clone> Clone for Separated<'_, T, M> {
    fn clone(&self) -> Self {
        Separated::new(self.items, self.mark.clone())
    }
}

impl<T: std::fmt::Debug, M> std::fmt::Debug for Separated<'_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Separated")
            .field("items", &self.items)
            .finish_non_exhaustive()
    }
}

impl<'data, T: Sync + 'data, M: Mark<T>> Drive for Separated<'data, T, M> {
    type Item = &'data [T];
    type Seq<'a>
        = PiecesFrom<'data, 'a, T, M>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        positions::<T, M>(self.items.len())
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let until = range.end;
        let at = range
            .into_iter()
            .find(|&at| starts(self.items, &self.mark, at))
            .unwrap_or(until);
        PiecesFrom {
            items: self.items,
            mark: &self.mark,
            at,
            until,
        }
    }
}

/// The pieces that start in a range of a [`Separated`] source, in order.
#[derive(Debug)]
pub struct PiecesFrom<'data, 'm, T, M> {
    items: &'data [T],
    mark: &'m M,
    /// Where the next piece starts (at or past `until`: none is left).
    at: usize,
    /// The range's end.
    until: usize,
}

impl<'data, T, M: Mark<T>> Iterator for PiecesFrom<'data, '_, T, M> {
    type Item = &'data [T];

    fn next(&mut self) -> Option<&'data [T]> {
        if self.at >= self.until {
            return None;
        }
        let count = positions::<T, M>(self.items.len());
        let next = (self.at + 1..count).find(|&at| starts(self.items, self.mark, at));
        let end = next.map_or(self.items.len(), |next| next - M::LEAVES_OUT);
        let piece = &self.items[self.at..end];
        self.at = next.unwrap_or(count);
        Some(piece)
    }
}

/// How a mutable slice's pieces are made: its marks found in parallel, then the slice cut
/// at them.
pub struct MarkingMut<'data, T, M> {
    items: Once<&'data mut [T]>,
    mark: M,
}

impl<'data, T: Send, M: Mark<T>> Make for MarkingMut<'data, T, M> {
    type Item = &'data mut [T];

    fn make(&self) -> Vec<&'data mut [T]> {
        let Some(items) = self.items.take() else {
            return Vec::new();
        };
        let marks = marks_of(items, &self.mark);
        cut_at::<T, M>(items, marks)
    }
}

/// Where `mark` marks `items`, in order: each block read by the participant that claimed
/// it, then the marks that read two blocks' items, on the caller.
fn marks_of<T: Send, M: Mark<T>>(items: &mut [T], mark: &M) -> Vec<usize> {
    let first = usize::from(M::LOOKS_BACK);
    let mut marks: Vec<usize> = ChunksMut::new(items, MARK_BLOCK)
        .enumerate()
        .flat_map_iter(|(block, own)| {
            let base = block * MARK_BLOCK;
            (first..own.len())
                .filter(move |&i| mark.marked(own, i))
                .map(move |i| base + i)
        })
        .collect();
    if M::LOOKS_BACK {
        let edges = (MARK_BLOCK..items.len()).step_by(MARK_BLOCK);
        marks.extend(edges.filter(|&i| mark.marked(items, i)));
        // Two sorted runs: the stable sort merges them in one pass.
        marks.sort();
    }
    marks
}

/// `items` cut as `M` says at `marks` (in order).
fn cut_at<T, M: Mark<T>>(items: &mut [T], marks: Vec<usize>) -> Vec<&mut [T]> {
    let len = items.len();
    let mut pieces = Vec::with_capacity(marks.len() + 1);
    let (mut rest, mut at) = (items, 0);
    for mark in marks {
        let next = mark + M::STARTS_AFTER;
        let (piece, tail) = rest.split_at_mut(next - M::LEAVES_OUT - at);
        pieces.push(piece);
        rest = &mut tail[M::LEAVES_OUT..];
        at = next;
    }
    if M::AT_END || at < len {
        pieces.push(rest);
    }
    pieces
}

/// A mutable slice's pieces, cut where the kind `M` marks it (found when first consumed).
pub type SeparatedMut<'data, T, M> = Computed<MarkingMut<'data, T, M>>;

/// `items` cut at `mark`'s marks, mutably.
fn separated_mut<T: Send, M: Mark<T>>(items: &mut [T], mark: M) -> SeparatedMut<'_, T, M> {
    Computed::new(MarkingMut {
        items: Once::new(items),
        mark,
    })
}

/// `slice.par_split(separator)`: the pieces between the items `separator` holds for.
pub type Split<'data, T, P> = Separated<'data, T, Between<P>>;
/// `slice.par_split_inclusive(separator)`: the pieces each ended by an item `separator`
/// holds for, which it keeps.
pub type SplitInclusive<'data, T, P> = Separated<'data, T, EndedBy<P>>;
/// `slice.par_chunk_by(same)`: the runs in which `same` holds for each item and the one
/// before it.
pub type ChunkBy<'data, T, P> = Separated<'data, T, Runs<P>>;
/// `slice.par_split_mut(separator)`: as [`Split`], mutably.
pub type SplitMut<'data, T, P> = SeparatedMut<'data, T, Between<P>>;
/// `slice.par_split_inclusive_mut(separator)`: as [`SplitInclusive`], mutably.
pub type SplitInclusiveMut<'data, T, P> = SeparatedMut<'data, T, EndedBy<P>>;
/// `slice.par_chunk_by_mut(same)`: as [`ChunkBy`], mutably.
pub type ChunkByMut<'data, T, P> = SeparatedMut<'data, T, Runs<P>>;

pub(crate) fn split<T, P>(items: &[T], separator: P) -> Split<'_, T, P> {
    Separated::new(items, Between(separator))
}

pub(crate) fn split_inclusive<T, P>(items: &[T], separator: P) -> SplitInclusive<'_, T, P> {
    Separated::new(items, EndedBy(separator))
}

pub(crate) fn chunk_by<T, P>(items: &[T], same: P) -> ChunkBy<'_, T, P> {
    Separated::new(items, Runs(same))
}

pub(crate) fn split_mut<T, P>(items: &mut [T], separator: P) -> SplitMut<'_, T, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    separated_mut(items, Between(separator))
}

pub(crate) fn split_inclusive_mut<T, P>(
    items: &mut [T],
    separator: P,
) -> SplitInclusiveMut<'_, T, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    separated_mut(items, EndedBy(separator))
}

pub(crate) fn chunk_by_mut<T, P>(items: &mut [T], same: P) -> ChunkByMut<'_, T, P>
where
    T: Send,
    P: Fn(&T, &T) -> bool + Sync,
{
    separated_mut(items, Runs(same))
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    /// Where each piece of `pieces` starts in `items`, and its length.
    fn placed<'a>(items: &[u8], pieces: impl Iterator<Item = &'a [u8]>) -> Vec<(usize, usize)> {
        let base = items.as_ptr() as usize;
        (pieces.map(|p| (p.as_ptr() as usize - base, p.len()))).collect()
    }

    /// Asserts that each range of `source`'s positions yields the pieces of `expected` that
    /// start in it, each whole.
    fn each_range_yields_its_pieces<M: Mark<u8>>(
        source: &Separated<'_, u8, M>,
        expected: &[(usize, usize)],
    ) {
        let n = source.position_count();
        for a in 0..=n {
            for b in a..=n {
                let own: Vec<(usize, usize)> = (expected.iter().copied())
                    .filter(|(at, _)| (a..b).contains(at))
                    .collect();
                // SAFETY: one range within the positions.
                let got = placed(source.items, unsafe { source.seq(a..b) });
                assert_eq!(got, own, "range {a}..{b} of {:?}", source.items);
            }
        }
    }

    #[test]
    fn each_range_of_every_short_slice_yields_the_std_pieces_that_start_in_it() {
        let mut slices: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = slices.clone();
        for _ in 0..5 {
            last = (last.iter())
                .flat_map(|xs| (0..3).map(move |x| [&xs[..], &[x]].concat()))
                .collect();
            slices.extend(last.iter().cloned());
        }
        let separator = |x: &u8| *x == 0;
        let same = |a: &u8, b: &u8| a <= b;
        for xs in &slices {
            let pieces = placed(xs, xs.split(separator));
            each_range_yields_its_pieces(&split(xs, separator), &pieces);
            let inclusive = placed(xs, xs.split_inclusive(separator));
            each_range_yields_its_pieces(&split_inclusive(xs, separator), &inclusive);
            let runs = placed(xs, xs.chunk_by(same));
            each_range_yields_its_pieces(&chunk_by(xs, same), &runs);
        }
    }
}
