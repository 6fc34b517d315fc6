//! The chunk sources of a slice, indexed by chunk: `par_chunks(n)` and `par_chunks_mut(n)`
//! (position `i` is the chunk that starts at item `i * n`; the last may be shorter),
//! `par_chunks_exact(n)` and its `_mut` form (the whole chunks only), `par_rchunks(n)` and
//! its `_mut` form (chunk `i` ends `i * n` items before the end; the last, at the front,
//! may be shorter), `par_rchunks_exact(n)` and its `_mut` form (the whole ones only),
//! `par_windows(n)` (position `i` is the window that starts at item `i`) and
//! `par_array_windows::<N>()` (those windows as arrays). One source over shared items,
//! [`Pieces`], and one over mutable items, [`PiecesMut`], each cut as its kind says.

use super::drive::sealed::Drive;
use std::marker::PhantomData;
use std::ops::Range;

/// The items of chunks `range` of `len` items in chunks of `size`.
pub(crate) fn items_of(range: Range<usize>, size: usize, len: usize) -> Range<usize> {
    let end = range.end.saturating_mul(size).min(len);
    range.start.saturating_mul(size).min(end)..end
}

/// How a piece source cuts a slice: how many pieces, which items a range of them covers,
/// and those items' pieces. Not nameable outside the crate: the consumers that write in
/// place trust a range's items to make one piece per position.
pub trait Cut {
    /// The pieces of a range's items, in order.
    type Seq<'data, T: 'data>: Iterator<Item = &'data [T]>;

    /// How many pieces `len` items make in pieces of `size`.
    fn count(len: usize, size: usize) -> usize;

    /// The items pieces `range` (within `count`) cover, of `len`.
    fn items(range: Range<usize>, size: usize, len: usize) -> Range<usize>;

    /// The pieces of `items`, the items of a range of pieces.
    fn cut<T>(items: &[T], size: usize) -> Self::Seq<'_, T>;
}

/// A [`Cut`] whose pieces do not overlap, so that disjoint ranges of pieces cover disjoint
/// items: it can lend them mutably.
pub trait CutMut: Cut {
    /// The mutable pieces of a range's items, in order.
    type SeqMut<'data, T: 'data>: Iterator<Item = &'data mut [T]>;

    /// As [`Cut::cut`], mutably.
    fn cut_mut<T>(items: &mut [T], size: usize) -> Self::SeqMut<'_, T>;
}

/// Chunks from the front, the last maybe shorter: `par_chunks`.
#[derive(Debug)]
pub enum FromFront {}

/// Whole chunks from the front, the rest left out: `par_chunks_exact`.
#[derive(Debug)]
pub enum Exact {}

/// Chunks from the back, the shorter one at the front: `par_rchunks`.
#[derive(Debug)]
pub enum FromBack {}

/// Whole chunks from the back, the rest (at the front) left out: `par_rchunks_exact`.
#[derive(Debug)]
pub enum ExactFromBack {}

/// Every run of `size` adjacent items: `par_windows`.
#[derive(Debug)]
pub enum Overlapping {}

impl Cut for FromFront {
    type Seq<'data, T: 'data> = std::slice::Chunks<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len.div_ceil(size)
    }

    fn items(range: Range<usize>, size: usize, len: usize) -> Range<usize> {
        items_of(range, size, len)
    }

    fn cut<T>(items: &[T], size: usize) -> Self::Seq<'_, T> {
        items.chunks(size)
    }
}

impl CutMut for FromFront {
    type SeqMut<'data, T: 'data> = std::slice::ChunksMut<'data, T>;

    fn cut_mut<T>(items: &mut [T], size: usize) -> Self::SeqMut<'_, T> {
        items.chunks_mut(size)
    }
}

impl Cut for Exact {
    type Seq<'data, T: 'data> = std::slice::ChunksExact<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len / size
    }

    fn items(range: Range<usize>, size: usize, _: usize) -> Range<usize> {
        // Within `count`: no product passes the length.
        range.start * size..range.end * size
    }

    fn cut<T>(items: &[T], size: usize) -> Self::Seq<'_, T> {
        items.chunks_exact(size)
    }
}

impl CutMut for Exact {
    type SeqMut<'data, T: 'data> = std::slice::ChunksExactMut<'data, T>;

    fn cut_mut<T>(items: &mut [T], size: usize) -> Self::SeqMut<'_, T> {
        items.chunks_exact_mut(size)
    }
}

impl Cut for FromBack {
    type Seq<'data, T: 'data> = std::slice::RChunks<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len.div_ceil(size)
    }

    fn items(range: Range<usize>, size: usize, len: usize) -> Range<usize> {
        // Chunk `i` ends `i * size` items before the end; the last starts at 0.
        let end = len - range.start.saturating_mul(size).min(len);
        let start = len - range.end.saturating_mul(size).min(len);
        start..end
    }

    fn cut<T>(items: &[T], size: usize) -> Self::Seq<'_, T> {
        items.rchunks(size)
    }
}

impl CutMut for FromBack {
    type SeqMut<'data, T: 'data> = std::slice::RChunksMut<'data, T>;

    fn cut_mut<T>(items: &mut [T], size: usize) -> Self::SeqMut<'_, T> {
        items.rchunks_mut(size)
    }
}

impl Cut for ExactFromBack {
    type Seq<'data, T: 'data> = std::slice::RChunksExact<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len / size
    }

    fn items(range: Range<usize>, size: usize, len: usize) -> Range<usize> {
        // Within `count`: no product passes the length.
        len - range.end * size..len - range.start * size
    }

    fn cut<T>(items: &[T], size: usize) -> Self::Seq<'_, T> {
        items.rchunks_exact(size)
    }
}

impl CutMut for ExactFromBack {
    type SeqMut<'data, T: 'data> = std::slice::RChunksExactMut<'data, T>;

    fn cut_mut<T>(items: &mut [T], size: usize) -> Self::SeqMut<'_, T> {
        items.rchunks_exact_mut(size)
    }
}

/// A [`CutMut`] of whole chunks only, which leaves fewer items than a chunk at one end.
pub trait ExactCut: CutMut {
    /// Whether the items left out are at the front (else at the back).
    const REST_AT_FRONT: bool;
}

impl ExactCut for Exact {
    const REST_AT_FRONT: bool = false;
}

impl ExactCut for ExactFromBack {
    const REST_AT_FRONT: bool = true;
}

/// The items of `len` that whole chunks of `size` leave out, at the front or the back.
fn rest_of<K: ExactCut>(len: usize, size: usize) -> Range<usize> {
    let rest = len % size;
    if K::REST_AT_FRONT {
        0..rest
    } else {
        len - rest..len
    }
}

impl Cut for Overlapping {
    type Seq<'data, T: 'data> = std::slice::Windows<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len.saturating_sub(size - 1)
    }

    fn items(range: Range<usize>, size: usize, _: usize) -> Range<usize> {
        if range.is_empty() {
            range.start..range.start
        } else {
            range.start..range.end + size - 1
        }
    }

    fn cut<T>(items: &[T], size: usize) -> Self::Seq<'_, T> {
        items.windows(size)
    }
}

/// A shared slice's pieces, indexed as the kind `K` cuts them.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct Pieces<'data, T, K> {
    items: &'data [T],
    size: usize,
    kind: PhantomData<fn() -> K>,
}

impl<T, K> Clone for Pieces<'_, T, K> {
    fn clone(&self) -> Self {
        Pieces { ..*self }
    }
}

impl<'data, T, K> Pieces<'data, T, K> {
    /// `items` in pieces of `size` (not 0).
    pub(crate) fn new(items: &'data [T], size: usize) -> Pieces<'data, T, K> {
        Pieces {
            items,
            size,
            kind: PhantomData,
        }
    }
}

impl<'data, T: Sync + 'data, K: Cut> Drive for Pieces<'data, T, K> {
    type Item = &'data [T];
    type Seq<'a>
        = K::Seq<'data, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        K::count(self.items.len(), self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        K::cut(
            &self.items[K::items(range, self.size, self.items.len())],
            self.size,
        )
    }
}

/// `slice.par_chunks(n)`: chunks of `n` items, in order; the last may be shorter.
pub type Chunks<'data, T> = Pieces<'data, T, FromFront>;
/// `slice.par_chunks_exact(n)`: the whole chunks of `n` items, in order; the rest, fewer
/// than `n` at the end, is [`remainder`](Pieces::remainder).
pub type ChunksExact<'data, T> = Pieces<'data, T, Exact>;
/// `slice.par_rchunks(n)`: chunks of `n` items from the back; the front one may be shorter.
pub type RChunks<'data, T> = Pieces<'data, T, FromBack>;
/// `slice.par_rchunks_exact(n)`: the whole chunks of `n` items from the back; the rest,
/// fewer than `n` at the front, is [`remainder`](Pieces::remainder).
pub type RChunksExact<'data, T> = Pieces<'data, T, ExactFromBack>;
/// `slice.par_windows(n)`: every run of `n` adjacent items, in order.
pub type Windows<'data, T> = Pieces<'data, T, Overlapping>;

/// `slice.par_array_windows::<N>()`: every run of `N` adjacent items as an array, in
/// order.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct ArrayWindows<'data, T, const N: usize> {
    windows: Windows<'data, T>,
}

impl<T, const N: usize> Clone for ArrayWindows<'_, T, N> {
    fn clone(&self) -> Self {
        ArrayWindows {
            windows: self.windows.clone(),
        }
    }
}

impl<'data, T, const N: usize> ArrayWindows<'data, T, N> {
    /// The windows of `N` (not 0) items of `items`.
    pub(crate) fn new(items: &'data [T]) -> ArrayWindows<'data, T, N> {
        ArrayWindows {
            windows: Pieces::new(items, N),
        }
    }
}

/// A window of `N` items as the array it is.
fn as_array<T, const N: usize>(window: &[T]) -> &[T; N] {
    window.try_into().expect("a window of N items")
}

impl<'data, T: Sync + 'data, const N: usize> Drive for ArrayWindows<'data, T, N> {
    type Item = &'data [T; N];
    type Seq<'a>
        = std::iter::Map<std::slice::Windows<'data, T>, fn(&'data [T]) -> &'data [T; N]>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.windows.position_count()
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.windows.seq(range) }.map(as_array::<T, N>)
    }
}

impl<'data, T, K: ExactCut> Pieces<'data, T, K> {
    /// The items no whole chunk covers, fewer than the chunk size: after the last chunk
    /// (`par_chunks_exact`) or before it (`par_rchunks_exact`).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 4, 5];
    /// assert_eq!(xs.par_chunks_exact(2).remainder(), [5]);
    /// assert_eq!(xs.par_rchunks_exact(2).remainder(), [1]);
    /// ```
    #[must_use]
    pub fn remainder(&self) -> &'data [T] {
        &self.items[rest_of::<K>(self.items.len(), self.size)]
    }
}

/// A mutable slice's pieces, indexed as the kind `K` cuts them.
///
/// # Safety
/// `ptr` and `len` are a slice borrowed mutably for `'data`; `seq`'s callers ask for
/// disjoint ranges of pieces, which are disjoint ranges of items (`CutMut`): each is lent
/// once.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct PiecesMut<'data, T, K> {
    ptr: *mut T,
    len: usize,
    size: usize,
    lent: PhantomData<&'data mut [T]>,
    kind: PhantomData<fn() -> K>,
}

// SAFETY: the items are lent to other threads, each once (struct `# Safety`): `T: Send`
// suffices, as for `&mut [T]`'s parts moved across threads.
unsafe impl<T: Send, K> Send for PiecesMut<'_, T, K> {}
// SAFETY: as above; shared `&PiecesMut`s hand out disjoint parts only.
unsafe impl<T: Send, K> Sync for PiecesMut<'_, T, K> {}

impl<'data, T, K> PiecesMut<'data, T, K> {
    /// `items` in mutable pieces of `size` (not 0).
    pub(crate) fn new(items: &'data mut [T], size: usize) -> PiecesMut<'data, T, K> {
        PiecesMut {
            ptr: items.as_mut_ptr(),
            len: items.len(),
            size,
            lent: PhantomData,
            kind: PhantomData,
        }
    }
}

impl<'data, T: Send + 'data, K: CutMut> Drive for PiecesMut<'data, T, K> {
    type Item = &'data mut [T];
    type Seq<'a>
        = K::SeqMut<'data, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        K::count(self.len, self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let items = K::items(range, self.size, self.len);
        // SAFETY: within the slice borrowed for 'data (`items` stays below `len`), and
        // disjoint from every other range lent (struct `# Safety`).
        let part =
            unsafe { std::slice::from_raw_parts_mut(self.ptr.add(items.start), items.len()) };
        K::cut_mut(part, self.size)
    }
}

impl<'data, T, K: ExactCut> PiecesMut<'data, T, K> {
    /// The items no whole chunk covers (fewer than the chunk size), which no chunk lends:
    /// after the last chunk (`par_chunks_exact_mut`) or before it
    /// (`par_rchunks_exact_mut`).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [1, 2, 3, 4, 5];
    /// let mut chunks = xs.par_chunks_exact_mut(2);
    /// chunks.remainder()[0] = 50;
    /// chunks.for_each(|pair| pair.swap(0, 1));
    /// assert_eq!(xs, [2, 1, 4, 3, 50]);
    /// let mut chunks = xs.par_rchunks_exact_mut(2);
    /// chunks.remainder()[0] = 20;
    /// chunks.for_each(|pair| pair.swap(0, 1));
    /// assert_eq!(xs, [20, 4, 1, 50, 3]);
    /// ```
    pub fn remainder(&mut self) -> &mut [T] {
        self.take_rest(false)
    }

    /// The items no whole chunk covers, for the rest of `'data`; the iterator has no
    /// remainder after (its chunks stay).
    pub fn take_remainder(&mut self) -> &'data mut [T] {
        self.take_rest(true)
    }

    /// The items no whole chunk covers, for the rest of `'data`.
    pub fn into_remainder(mut self) -> &'data mut [T] {
        self.take_rest(true)
    }

    /// The items beside the whole chunks; `take`: cut off the source for good.
    fn take_rest(&mut self, take: bool) -> &'data mut [T] {
        let rest = rest_of::<K>(self.len, self.size);
        // SAFETY: within the slice borrowed for 'data (`rest` is within `len`).
        let rest_ptr = unsafe { self.ptr.add(rest.start) };
        if take {
            self.len -= rest.len();
            if K::REST_AT_FRONT {
                // SAFETY: still within the slice: the whole chunks start past the rest.
                self.ptr = unsafe { self.ptr.add(rest.len()) };
            }
        }
        // SAFETY: within the slice borrowed for 'data; no chunk covers these items (the
        // `ExactCut` kinds cut whole chunks only, away from the rest), and a taken rest
        // leaves the source, so it is lent once. An untaken rest is borrowed from
        // `&mut self` by `remainder`.
        unsafe { std::slice::from_raw_parts_mut(rest_ptr, rest.len()) }
    }
}

/// `slice.par_chunks_mut(n)`: mutable chunks of `n` items; the last may be shorter.
pub type ChunksMut<'data, T> = PiecesMut<'data, T, FromFront>;
/// `slice.par_chunks_exact_mut(n)`: the whole mutable chunks of `n` items; the rest is
/// left out.
pub type ChunksExactMut<'data, T> = PiecesMut<'data, T, Exact>;
/// `slice.par_rchunks_mut(n)`: mutable chunks of `n` items from the back; the front one may
/// be shorter.
pub type RChunksMut<'data, T> = PiecesMut<'data, T, FromBack>;
/// `slice.par_rchunks_exact_mut(n)`: the whole mutable chunks of `n` items from the back;
/// the rest, at the front, is left out.
pub type RChunksExactMut<'data, T> = PiecesMut<'data, T, ExactFromBack>;
