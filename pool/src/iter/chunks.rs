//! The chunk sources of `slice.par_chunks(n)` and `slice.par_chunks_mut(n)`, indexed by
//! chunk (position `i` is the chunk that starts at item `i * n`; the last may be shorter).

use super::drive::sealed::Drive;
use std::marker::PhantomData;
use std::ops::Range;

/// The items of chunks `range` of `len` items in chunks of `size`.
fn items_of(range: Range<usize>, size: usize, len: usize) -> Range<usize> {
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

    fn positions(&self) -> usize {
        self.items.len().div_ceil(self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        self.items[items_of(range, self.size, self.items.len())].chunks(self.size)
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

    fn positions(&self) -> usize {
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
