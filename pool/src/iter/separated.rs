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
//! read after, on the caller); then position `k` is piece `k`, cut at the marks.

use super::chunks::ChunksMut;
use super::drive::sealed::Drive;
use super::{IndexedParallelIterator, ParallelIterator};
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::OnceLock;

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
pub struct Between<P>(pub(crate) P);

impl<P> std::fmt::Debug for Between<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Between").finish_non_exhaustive()
    }
}

/// Pieces each ended by an item `P` holds for, which it keeps: `par_split_inclusive`.
#[derive(Clone)]
pub struct EndedBy<P>(pub(crate) P);

impl<P> std::fmt::Debug for EndedBy<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EndedBy").finish_non_exhaustive()
    }
}

/// Runs in which `P` holds for each item and the one before it: `par_chunk_by`.
#[derive(Clone)]
pub struct Runs<P>(pub(crate) P);

impl<P> std::fmt::Debug for Runs<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Runs").finish_non_exhaustive()
    }
}

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
///
/// # Panics
/// Where a piece may start at the end of `usize::MAX` (zero-sized) items: one position
/// more than a `usize` counts.
fn positions<T, M: Mark<T>>(len: usize) -> usize {
    len.checked_add(usize::from(M::AT_END)).unwrap_or_else(|| {
        panic!("par_split of {len} items: its pieces may start at {len} + 1 positions, more than a usize counts")
    })
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
    pub(crate) fn new(items: &'data [T], mark: M) -> Separated<'data, T, M> {
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
pub struct PiecesFrom<'data, 'm, T, M> {
    items: &'data [T],
    mark: &'m M,
    /// Where the next piece starts (at or past `until`: none is left).
    at: usize,
    /// The range's end.
    until: usize,
}

impl<T: std::fmt::Debug, M> std::fmt::Debug for PiecesFrom<'_, '_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiecesFrom")
            .field("items", &self.items)
            .field("at", &self.at)
            .field("until", &self.until)
            .finish_non_exhaustive()
    }
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

/// A mutable slice's pieces, cut where the kind `M` marks it; position `k` is piece `k`,
/// the marks found when a consumer first asks for their count.
///
/// # Safety
/// `ptr` and `len` are a slice borrowed mutably for `'data`. The items are read through
/// it only while the marks are found, before any piece is lent (`seq` asks for the marks
/// first); `seq`'s callers ask for disjoint ranges of pieces, which are disjoint items.
#[must_use = "iterators do nothing until consumed"]
pub struct SeparatedMut<'data, T, M> {
    ptr: *mut T,
    len: usize,
    mark: M,
    /// Where `mark` marks the items, in order: made once.
    marks: OnceLock<Vec<usize>>,
    lent: PhantomData<&'data mut [T]>,
}

// SAFETY: the items are lent to other threads, each once, and marked by the threads they
// were lent to (struct `# Safety`): `T: Send` suffices, as for `&mut [T]`'s parts.
unsafe impl<T: Send, M: Send> Send for SeparatedMut<'_, T, M> {}
// SAFETY: as above; shared `&SeparatedMut`s hand out disjoint pieces only.
unsafe impl<T: Send, M: Sync> Sync for SeparatedMut<'_, T, M> {}

impl<'data, T, M> SeparatedMut<'data, T, M> {
    pub(crate) fn new(items: &'data mut [T], mark: M) -> SeparatedMut<'data, T, M> {
        SeparatedMut {
            ptr: items.as_mut_ptr(),
            len: items.len(),
            mark,
            marks: OnceLock::new(),
            lent: PhantomData,
        }
    }
}

impl<T, M> std::fmt::Debug for SeparatedMut<'_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeparatedMut")
            .field("len", &self.len)
            .field("marks", &self.marks.get().map(Vec::len))
            .finish_non_exhaustive()
    }
}

impl<T: Send, M: Mark<T>> SeparatedMut<'_, T, M> {
    /// The marks, found on the first call (a call that unwinds leaves none: the next
    /// looks again).
    fn marks(&self) -> &[usize] {
        self.marks.get_or_init(|| {
            // SAFETY: no piece is lent before the marks exist (struct `# Safety`), and
            // `OnceLock` runs one making at a time.
            let items = unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) };
            marks_of(items, &self.mark)
        })
    }
}

impl<'data, T: Send + 'data, M: Mark<T>> Drive for SeparatedMut<'data, T, M> {
    type Item = &'data mut [T];
    type Seq<'a>
        = PiecesMutAt<'data, 'a, T, M>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        let marks = self.marks();
        let last_start = marks.last().map_or(0, |&mark| mark + M::STARTS_AFTER);
        marks.len() + usize::from(M::AT_END || last_start < self.len)
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        PiecesMutAt {
            ptr: self.ptr,
            len: self.len,
            marks: self.marks(),
            pieces: range,
            lent: PhantomData,
            kind: PhantomData,
        }
    }
}

/// The pieces of a range of a [`SeparatedMut`] source, in order.
pub struct PiecesMutAt<'data, 'm, T, M> {
    ptr: *mut T,
    len: usize,
    marks: &'m [usize],
    /// The pieces not yielded yet.
    pieces: Range<usize>,
    lent: PhantomData<&'data mut [T]>,
    kind: PhantomData<fn() -> M>,
}

impl<T, M> std::fmt::Debug for PiecesMutAt<'_, '_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiecesMutAt")
            .field("len", &self.len)
            .field("marks", &self.marks.len())
            .field("pieces", &self.pieces)
            .finish_non_exhaustive()
    }
}

impl<'data, T, M: Mark<T>> Iterator for PiecesMutAt<'data, '_, T, M> {
    type Item = &'data mut [T];

    fn next(&mut self) -> Option<&'data mut [T]> {
        let k = self.pieces.next()?;
        let start = k
            .checked_sub(1)
            .map_or(0, |k| self.marks[k] + M::STARTS_AFTER);
        let end = self
            .marks
            .get(k)
            .map_or(self.len, |&mark| mark + M::STARTS_AFTER - M::LEAVES_OUT);
        // SAFETY: `start..end` lies within the slice borrowed for 'data, and is piece `k`
        // alone: pieces do not overlap, and each range of pieces is lent once (the source's
        // `# Safety`).
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), end - start) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.pieces.size_hint()
    }
}

/// Where `mark` marks `items`, in order: each block read by the participant that claimed
/// it, then the marks that read two blocks' items, on the caller.
fn marks_of<T: Send, M: Mark<T>>(items: &mut [T], mark: &M) -> Vec<usize> {
    let first = usize::from(M::LOOKS_BACK);
    let within: Vec<usize> = ChunksMut::new(items, MARK_BLOCK)
        .enumerate()
        .flat_map_iter(|(block, own)| {
            let base = block * MARK_BLOCK;
            (first..own.len())
                .filter(move |&i| mark.marked(own, i))
                .map(move |i| base + i)
        })
        .collect();
    if !M::LOOKS_BACK {
        return within;
    }
    let mut edges = (MARK_BLOCK..items.len())
        .step_by(MARK_BLOCK)
        .filter(|&i| mark.marked(items, i))
        .peekable();
    let mut marks = Vec::with_capacity(within.len());
    for mark in within {
        while let Some(edge) = edges.next_if(|&edge| edge < mark) {
            marks.push(edge);
        }
        marks.push(mark);
    }
    marks.extend(edges);
    marks
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
            each_range_yields_its_pieces(&Separated::new(xs, Between(separator)), &pieces);
            let inclusive = placed(xs, xs.split_inclusive(separator));
            each_range_yields_its_pieces(&Separated::new(xs, EndedBy(separator)), &inclusive);
            let runs = placed(xs, xs.chunk_by(same));
            each_range_yields_its_pieces(&Separated::new(xs, Runs(same)), &runs);
        }
    }
}
