//! The chunk sources: `slice.par_chunks(n)` and `slice.par_chunks_mut(n)`, indexed by
//! chunk (position `i` is the chunk that starts at item `i * n`; the last may be shorter).

use super::drive::sealed::Drive;
use std::marker::PhantomData;
use std::ops::Range;

/// Parallel iterators over a shared slice, as rayon's trait of the same name (in the
/// prelude; `Vec`s and arrays reach it through their slice).
pub trait ParallelSlice<T: Sync> {
    /// The slice.
    fn as_parallel_slice(&self) -> &[T];

    /// The slice in chunks of `chunk_size` items, the last one shorter when `chunk_size`
    /// does not divide the length.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 4, 5];
    /// let sums: Vec<i32> = xs.par_chunks(2).map(|c| c.iter().sum()).collect();
    /// assert_eq!(sums, [3, 7, 5]);
    /// ```
    fn par_chunks(&self, chunk_size: usize) -> Chunks<'_, T> {
        assert!(chunk_size != 0, "par_chunks: chunk_size must not be zero");
        Chunks {
            items: self.as_parallel_slice(),
            size: chunk_size,
        }
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel iterators over a mutable slice, as rayon's trait of the same name (in the
/// prelude).
pub trait ParallelSliceMut<T: Send> {
    /// The slice.
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

    /// The slice in mutable chunks of `chunk_size` items, the last one shorter when
    /// `chunk_size` does not divide the length.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = vec![0u32; 7];
    /// xs.par_chunks_mut(3).enumerate().for_each(|(i, chunk)| chunk.fill(i as u32));
    /// assert_eq!(xs, [0, 0, 0, 1, 1, 1, 2]);
    /// ```
    fn par_chunks_mut(&mut self, chunk_size: usize) -> ChunksMut<'_, T> {
        assert!(
            chunk_size != 0,
            "par_chunks_mut: chunk_size must not be zero"
        );
        let items = self.as_parallel_slice_mut();
        ChunksMut {
            ptr: items.as_mut_ptr(),
            len: items.len(),
            size: chunk_size,
            marker: PhantomData,
        }
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}

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
