//! The chunk sources of a slice, indexed by chunk: `par_chunks(n)` and `par_chunks_mut(n)`
//! (position `i` is the chunk that starts at item `i * n`; the last may be shorter),
//! `par_chunks_exact(n)` (the whole chunks only), `par_rchunks(n)` (chunk `i` ends `i * n`
//! items before the end; the last, at the front, may be shorter) and `par_windows(n)`
//! (position `i` is the window that starts at item `i`).

use super::drive::sealed::Drive;
use std::marker::PhantomData;
use std::ops::Range;

/// The items of chunks `range` of `len` items in chunks of `size`.
pub(crate) fn items_of(range: Range<usize>, size: usize, len: usize) -> Range<usize> {
    let end = range.end.saturating_mul(size).min(len);
    range.start.saturating_mul(size).min(end)..end
}

/// A parallel iterator over a slice in chunks: `slice.par_chunks(n)`.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Chunks<'data, T> {
    items: &'data [T],
    size: usize,
}

impl<'data, T> Chunks<'data, T> {
    /// `items` in chunks of `size` (not 0).
    pub(crate) fn new(items: &'data [T], size: usize) -> Chunks<'data, T> {
        Chunks { items, size }
    }
}

impl<'data, T: Sync + 'data> Drive for Chunks<'data, T> {
    type Item = &'data [T];
    type Seq<'a>
        = std::slice::Chunks<'data, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.items.len().div_ceil(self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        self.items[items_of(range, self.size, self.items.len())].chunks(self.size)
    }
}

/// A shared slice's pieces, indexed as the kind `K` cuts them.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct Pieces<'data, T, K> {
    items: &'data [T],
    size: usize,
    kind: PhantomData<K>,
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

/// How a piece source cuts a slice: how many pieces, and the pieces of a range of them.
/// Not nameable outside the crate: the consumers that write in place trust `seq` to yield
/// one piece per position.
pub trait Cut {
    /// The pieces of a range, in order.
    type Seq<'data, T: 'data>: Iterator<Item = &'data [T]>;

    /// How many pieces `len` items make.
    fn count(len: usize, size: usize) -> usize;

    /// Pieces `range` (within `count`) of `items`.
    fn seq<T>(items: &[T], size: usize, range: Range<usize>) -> Self::Seq<'_, T>;
}

impl<'data, T: Sync + 'data, K: Cut + Sync> Drive for Pieces<'data, T, K> {
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
        K::seq(self.items, self.size, range)
    }
}

/// Whole chunks from the front, the rest left out: `par_chunks_exact`.
#[derive(Debug)]
pub enum Exact {}

impl Cut for Exact {
    type Seq<'data, T: 'data> = std::slice::ChunksExact<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len / size
    }

    fn seq<T>(items: &[T], size: usize, range: Range<usize>) -> Self::Seq<'_, T> {
        items[range.start * size..range.end * size].chunks_exact(size)
    }
}

/// Chunks from the back, the shorter one at the front: `par_rchunks`.
#[derive(Debug)]
pub enum FromBack {}

impl Cut for FromBack {
    type Seq<'data, T: 'data> = std::slice::RChunks<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len.div_ceil(size)
    }

    fn seq<T>(items: &[T], size: usize, range: Range<usize>) -> Self::Seq<'_, T> {
        let len = items.len();
        // Chunk `i` ends `i * size` items before the end; the last starts at 0.
        let end = len - range.start.saturating_mul(size).min(len);
        let start = len - range.end.saturating_mul(size).min(len);
        items[start..end].rchunks(size)
    }
}

/// Every run of `size` adjacent items: `par_windows`.
#[derive(Debug)]
pub enum Overlapping {}

impl Cut for Overlapping {
    type Seq<'data, T: 'data> = std::slice::Windows<'data, T>;

    fn count(len: usize, size: usize) -> usize {
        len.saturating_sub(size - 1)
    }

    fn seq<T>(items: &[T], size: usize, range: Range<usize>) -> Self::Seq<'_, T> {
        let end = if range.is_empty() {
            range.start
        } else {
            range.end + size - 1
        };
        items[range.start..end].windows(size)
    }
}

/// `slice.par_chunks_exact(n)`: the whole chunks of `n` items, in order; the rest, fewer
/// than `n` at the end, is [`remainder`](Pieces::remainder).
pub type ChunksExact<'data, T> = Pieces<'data, T, Exact>;
/// `slice.par_rchunks(n)`: chunks of `n` items from the back; the front one may be shorter.
pub type RChunks<'data, T> = Pieces<'data, T, FromBack>;
/// `slice.par_windows(n)`: every run of `n` adjacent items, in order.
pub type Windows<'data, T> = Pieces<'data, T, Overlapping>;

impl<'data, T> ChunksExact<'data, T> {
    /// The items after the last whole chunk: fewer than the chunk size.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 4, 5];
    /// assert_eq!(xs.par_chunks_exact(2).remainder(), [5]);
    /// ```
    #[must_use]
    pub fn remainder(&self) -> &'data [T] {
        &self.items[self.items.len() / self.size * self.size..]
    }
}

/// A parallel iterator over a mutable slice in chunks: `slice.par_chunks_mut(n)`.
///
/// # Safety
/// `ptr` and `len` are a slice borrowed mutably for `'data`; `seq`'s callers ask for
/// disjoint ranges of chunks, which are disjoint ranges of items: each is lent once.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct ChunksMut<'data, T> {
    ptr: *mut T,
    len: usize,
    size: usize,
    marker: PhantomData<&'data mut [T]>,
}

// SAFETY: the items are lent to other threads, each once (struct `# Safety`): `T: Send`
// suffices, as for `&mut [T]`'s parts moved across threads.
unsafe impl<T: Send> Send for ChunksMut<'_, T> {}
// SAFETY: as above; shared `&ChunksMut`s hand out disjoint parts only.
unsafe impl<T: Send> Sync for ChunksMut<'_, T> {}

impl<'data, T> ChunksMut<'data, T> {
    /// `items` in mutable chunks of `size` (not 0).
    pub(crate) fn new(items: &'data mut [T], size: usize) -> ChunksMut<'data, T> {
        ChunksMut {
            ptr: items.as_mut_ptr(),
            len: items.len(),
            size,
            marker: PhantomData,
        }
    }
}

impl<'data, T: Send + 'data> Drive for ChunksMut<'data, T> {
    type Item = &'data mut [T];
    type Seq<'a>
        = std::slice::ChunksMut<'data, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.len.div_ceil(self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let items = items_of(range, self.size, self.len);
        // SAFETY: within the slice borrowed for 'data (`items_of` stays below `len`), and
        // disjoint from every other range lent (struct `# Safety`).
        let part =
            unsafe { std::slice::from_raw_parts_mut(self.ptr.add(items.start), items.len()) };
        part.chunks_mut(self.size)
    }
}
