//! The slice methods, as rayon's `rayon::slice`: [`ParallelSlice`] (`par_split`,
//! `par_split_inclusive`, `par_chunk_by`, `par_chunks`, `par_chunks_exact`, `par_rchunks`,
//! `par_rchunks_exact`, `par_windows`, `par_array_windows`) and [`ParallelSliceMut`]
//! (their `_mut` forms, rayon's sorts and a radix sort), in the prelude; `Vec`s and arrays
//! reach them through their slice.

pub use crate::iter::chunks::{
    ArrayWindows, Chunks, ChunksExact, ChunksExactMut, ChunksMut, Pieces, PiecesMut, RChunks,
    RChunksExact, RChunksExactMut, RChunksMut, Windows,
};
pub use crate::iter::separated::{
    ChunkBy, ChunkByMut, Separated, SeparatedMut, Split, SplitInclusive, SplitInclusiveMut,
    SplitMut,
};
pub use crate::sort::radix_key::RadixKey;

use crate::iter::separated::{Between, EndedBy, Runs};
use crate::sort::{cached_key, counting, radix, stable, unstable};
use std::cmp::Ordering;

/// Parallel iterators over a shared slice, as rayon's trait of the same name.
pub trait ParallelSlice<T: Sync> {
    /// The slice.
    fn as_parallel_slice(&self) -> &[T];

    /// The pieces between the items `separator` holds for, as `slice::split`: the empty
    /// slice gives one empty piece, and adjacent, leading or trailing separators give
    /// empty pieces.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 0, 2, 4, 8, 0, 3, 6, 9];
    /// let products: Vec<i32> = xs.par_split(|&x| x == 0).map(|p| p.iter().product()).collect();
    /// assert_eq!(products, [6, 64, 162]);
    /// let pieces: Vec<&[i32]> = [0, 1, 0, 0].par_split(|&x| x == 0).collect();
    /// assert_eq!(pieces, [&[][..], &[1], &[], &[]]);
    /// ```
    fn par_split<P>(&self, separator: P) -> Split<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        Separated::new(self.as_parallel_slice(), Between(separator))
    }

    /// The pieces each ended by an item `separator` holds for, which it keeps, as
    /// `slice::split_inclusive`: no empty last piece after a final separator (none at all
    /// in the empty slice).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 0, 2, 4, 8, 0, 3, 6, 9];
    /// let lengths: Vec<usize> = xs.par_split_inclusive(|&x| x == 0).map(<[_]>::len).collect();
    /// assert_eq!(lengths, [4, 4, 3]);
    /// ```
    fn par_split_inclusive<P>(&self, separator: P) -> SplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        Separated::new(self.as_parallel_slice(), EndedBy(separator))
    }

    /// The runs in which `same` holds for each item and the one before it, as
    /// `slice::chunk_by`: none in the empty slice.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 1, 2, 3, 3, 3, 1];
    /// let runs: Vec<&[i32]> = xs.par_chunk_by(|a, b| a == b).collect();
    /// assert_eq!(runs, [&[1, 1][..], &[2], &[3, 3, 3], &[1]]);
    /// ```
    fn par_chunk_by<F>(&self, same: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        Separated::new(self.as_parallel_slice(), Runs(same))
    }

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
        Pieces::new(self.as_parallel_slice(), chunk_size)
    }

    /// The slice's whole chunks of `chunk_size` items; the rest, fewer at the end, is left
    /// out ([`remainder`](Pieces::remainder) has it).
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 4, 5];
    /// let sums: Vec<i32> = xs.par_chunks_exact(2).map(|c| c.iter().sum()).collect();
    /// assert_eq!(sums, [3, 7]);
    /// ```
    fn par_chunks_exact(&self, chunk_size: usize) -> ChunksExact<'_, T> {
        assert!(
            chunk_size != 0,
            "par_chunks_exact: chunk_size must not be zero"
        );
        Pieces::new(self.as_parallel_slice(), chunk_size)
    }

    /// The slice in chunks of `chunk_size` items from the back, the front one shorter when
    /// `chunk_size` does not divide the length.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 4, 5];
    /// let chunks: Vec<&[i32]> = xs.par_rchunks(2).collect();
    /// assert_eq!(chunks, [&[4, 5][..], &[2, 3], &[1]]);
    /// ```
    fn par_rchunks(&self, chunk_size: usize) -> RChunks<'_, T> {
        assert!(chunk_size != 0, "par_rchunks: chunk_size must not be zero");
        Pieces::new(self.as_parallel_slice(), chunk_size)
    }

    /// The slice's whole chunks of `chunk_size` items from the back; the rest, fewer at
    /// the front, is left out ([`remainder`](Pieces::remainder) has it).
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 3, 4, 5];
    /// let chunks: Vec<&[i32]> = xs.par_rchunks_exact(2).collect();
    /// assert_eq!(chunks, [&[4, 5][..], &[2, 3]]);
    /// ```
    fn par_rchunks_exact(&self, chunk_size: usize) -> RChunksExact<'_, T> {
        assert!(
            chunk_size != 0,
            "par_rchunks_exact: chunk_size must not be zero"
        );
        Pieces::new(self.as_parallel_slice(), chunk_size)
    }

    /// Every run of `window_size` adjacent items, in order: none if the slice is shorter.
    ///
    /// # Panics
    /// If `window_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 4, 7];
    /// let steps: Vec<i32> = xs.par_windows(2).map(|w| w[1] - w[0]).collect();
    /// assert_eq!(steps, [1, 2, 3]);
    /// ```
    fn par_windows(&self, window_size: usize) -> Windows<'_, T> {
        assert!(
            window_size != 0,
            "par_windows: window_size must not be zero"
        );
        Pieces::new(self.as_parallel_slice(), window_size)
    }

    /// Every run of `N` adjacent items as an array, in order: none if the slice is
    /// shorter. `N` of 0 does not compile.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1, 2, 4, 7];
    /// let steps: Vec<i32> = xs.par_array_windows().map(|&[a, b]| b - a).collect();
    /// assert_eq!(steps, [1, 2, 3]);
    /// ```
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        const { assert!(N != 0, "par_array_windows: N must not be zero") };
        ArrayWindows::new(self.as_parallel_slice())
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel iterators over a mutable slice, and parallel sorts, as rayon's trait of the
/// same name; plus [`par_radix_sort`](Self::par_radix_sort). Every sort runs on the
/// current pool (see [`join`](crate::join)); the comparison sorts of fewer than a few
/// thousand items run on the calling thread alone, as `std`'s sort of the same name (but
/// for `par_sort_by_cached_key`, whose keys are made in parallel). A comparator or key
/// function that
/// panics leaves the slice a permutation of its items: none lost, none duplicated, each
/// dropped once when the slice is.
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
        PiecesMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// The slice's whole mutable chunks of `chunk_size` items; the rest, fewer at the end,
    /// is left out.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [1, 2, 3, 4, 5];
    /// xs.par_chunks_exact_mut(2).for_each(|pair| pair.swap(0, 1));
    /// assert_eq!(xs, [2, 1, 4, 3, 5]);
    /// ```
    fn par_chunks_exact_mut(&mut self, chunk_size: usize) -> ChunksExactMut<'_, T> {
        assert!(
            chunk_size != 0,
            "par_chunks_exact_mut: chunk_size must not be zero"
        );
        PiecesMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// The slice in mutable chunks of `chunk_size` items from the back, the front one
    /// shorter when `chunk_size` does not divide the length.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [0u32; 5];
    /// xs.par_rchunks_mut(2).enumerate().for_each(|(i, chunk)| chunk.fill(i as u32));
    /// assert_eq!(xs, [2, 1, 1, 0, 0]);
    /// ```
    fn par_rchunks_mut(&mut self, chunk_size: usize) -> RChunksMut<'_, T> {
        assert!(
            chunk_size != 0,
            "par_rchunks_mut: chunk_size must not be zero"
        );
        PiecesMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// The slice's whole mutable chunks of `chunk_size` items from the back; the rest,
    /// fewer at the front, is left out.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [1, 2, 3, 4, 5];
    /// xs.par_rchunks_exact_mut(2).for_each(|pair| pair.swap(0, 1));
    /// assert_eq!(xs, [1, 3, 2, 5, 4]);
    /// ```
    fn par_rchunks_exact_mut(&mut self, chunk_size: usize) -> RChunksExactMut<'_, T> {
        assert!(
            chunk_size != 0,
            "par_rchunks_exact_mut: chunk_size must not be zero"
        );
        PiecesMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// The mutable pieces between the items `separator` holds for, as
    /// `slice::split_mut`. The separators are found first, in parallel (each thread
    /// reading only the items it was lent), then the pieces are handed out.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [1, 2, 3, 0, 2, 4, 8, 0, 3, 6, 9];
    /// xs.par_split_mut(|&x| x == 0).for_each(|piece| piece.reverse());
    /// assert_eq!(xs, [3, 2, 1, 0, 8, 4, 2, 0, 9, 6, 3]);
    /// ```
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SeparatedMut::new(self.as_parallel_slice_mut(), Between(separator))
    }

    /// The mutable pieces each ended by an item `separator` holds for, which it keeps, as
    /// `slice::split_inclusive_mut` (the separators found first, as in
    /// [`par_split_mut`](Self::par_split_mut)).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [1, 2, 3, 0, 2, 4, 8, 0, 3, 6, 9];
    /// xs.par_split_inclusive_mut(|&x| x == 0).for_each(|piece| piece.reverse());
    /// assert_eq!(xs, [0, 3, 2, 1, 0, 8, 4, 2, 9, 6, 3]);
    /// ```
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SeparatedMut::new(self.as_parallel_slice_mut(), EndedBy(separator))
    }

    /// The mutable runs in which `same` holds for each item and the one before it, as
    /// `slice::chunk_by_mut` (the runs' starts found first, as in
    /// [`par_split_mut`](Self::par_split_mut)).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = [1, 1, 2, 3, 3, 3, 1];
    /// xs.par_chunk_by_mut(|a, b| a == b).for_each(|run| {
    ///     let len = run.len() as i32;
    ///     run.iter_mut().for_each(|x| *x *= len);
    /// });
    /// assert_eq!(xs, [2, 2, 2, 9, 9, 9, 1]);
    /// ```
    fn par_chunk_by_mut<F>(&mut self, same: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        SeparatedMut::new(self.as_parallel_slice_mut(), Runs(same))
    }

    /// Sorts the slice, stable (equal items keep their order), as `slice::sort`: one run
    /// per thread sorted by `std`'s stable sort, then merged in parallel through a scratch
    /// buffer as long as the slice.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs: Vec<u32> = (0..100_000).map(|i| i * 7919 % 100_000).collect();
    /// xs.par_sort();
    /// assert!(xs.windows(2).all(|w| w[0] <= w[1]));
    /// ```
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        stable::sort_by(self.as_parallel_slice_mut(), &T::cmp);
    }

    /// Sorts the slice by `compare`, stable, as `slice::sort_by`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = vec![3, 1, 2];
    /// xs.par_sort_by(|a, b| b.cmp(a));
    /// assert_eq!(xs, [3, 2, 1]);
    /// ```
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        stable::sort_by(self.as_parallel_slice_mut(), &compare);
    }

    /// Sorts the slice by the key `f` gives each item, stable, as `slice::sort_by_key`
    /// (`f` runs at every comparison; see
    /// [`par_sort_by_cached_key`](Self::par_sort_by_cached_key)).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut pairs = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')];
    /// pairs.par_sort_by_key(|p| p.0);
    /// assert_eq!(pairs, [(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
    /// ```
    fn par_sort_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        stable::sort_by(self.as_parallel_slice_mut(), &|a: &T, b: &T| {
            f(a).cmp(&f(b))
        });
    }

    /// Sorts the slice by the key `f` gives each item, stable, calling `f` once per item
    /// (in parallel), as `slice::sort_by_cached_key`: for keys that cost more than
    /// moving an index.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut words = vec!["delta", "alpha", "charlie", "bravo"];
    /// words.par_sort_by_cached_key(|w| w.to_uppercase());
    /// assert_eq!(words, ["alpha", "bravo", "charlie", "delta"]);
    /// ```
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        K: Ord + Send,
        F: Fn(&T) -> K + Sync,
    {
        cached_key::sort_by_cached_key(self.as_parallel_slice_mut(), &f);
    }

    /// Sorts the slice, unstable (equal items may be reordered), in place, as
    /// `slice::sort_unstable`: a quicksort by [`join`](crate::join), each part cut around
    /// the median of a sample until its leaves are about a sixteenth of a thread's share
    /// (shorter near the end), each leaf sorted by `std`'s unstable sort.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs: Vec<i64> = (0..100_000).map(|i| (i * 7919) % 1000 - 500).collect();
    /// xs.par_sort_unstable();
    /// assert!(xs.windows(2).all(|w| w[0] <= w[1]));
    /// ```
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        unstable::sort_unstable_by(self.as_parallel_slice_mut(), &T::cmp);
    }

    /// Sorts the slice by `compare`, unstable, in place, as `slice::sort_unstable_by`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = vec![1.5, -2.0, 0.25];
    /// xs.par_sort_unstable_by(f64::total_cmp);
    /// assert_eq!(xs, [-2.0, 0.25, 1.5]);
    /// ```
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        unstable::sort_unstable_by(self.as_parallel_slice_mut(), &compare);
    }

    /// Sorts the slice by the key `f` gives each item, unstable, in place, as
    /// `slice::sort_unstable_by_key`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = vec![-3i32, 1, -2];
    /// xs.par_sort_unstable_by_key(|x| x.abs());
    /// assert_eq!(xs, [1, -2, -3]);
    /// ```
    fn par_sort_unstable_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        unstable::sort_unstable_by(self.as_parallel_slice_mut(), &|a: &T, b: &T| {
            f(a).cmp(&f(b))
        });
    }

    /// Sorts the slice of integers, floats (in [`f64::total_cmp`]'s order) or `char`s by
    /// their bits, stable, in passes over 8 bits at a time (those that vary), with a
    /// scratch buffer as long as the slice; see [`RadixKey`]. Over 1 MiB of keys that
    /// span no more values than there are keys (up to 2^22, going by 256 sampled keys
    /// whose span is widened by an eighth on each side; a byte of counts a value a thread,
    /// and four a value in all) are counted instead, and each value written back as often
    /// as it was counted: a read and a write, no scratch. No rayon name: rayon has no
    /// radix sort.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs: Vec<u64> = (0..100_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    /// let mut expected = xs.clone();
    /// expected.sort_unstable();
    /// xs.par_radix_sort();
    /// assert_eq!(xs, expected);
    /// ```
    fn par_radix_sort(&mut self)
    where
        T: RadixKey,
    {
        let keys = self.as_parallel_slice_mut();
        if keys.len() > 1 {
            counting::sort(keys);
        }
    }

    /// Sorts the slice by the [`RadixKey`] `f` gives each item, stable, as
    /// [`par_radix_sort`](Self::par_radix_sort) does (`f` runs once per item a pass). `f`
    /// must give an item the same key at every call: else the order is unspecified, or
    /// the sort panics, as `std`'s sorts do with a comparator that is not a total order;
    /// every item is in the slice once either way.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut records = vec![(3u64, "c"), (1, "a"), (3, "d"), (2, "b")];
    /// records.par_radix_sort_by_key(|r| r.0);
    /// assert_eq!(records, [(1, "a"), (2, "b"), (3, "c"), (3, "d")]);
    /// ```
    fn par_radix_sort_by_key<K, F>(&mut self, f: F)
    where
        K: RadixKey,
        F: Fn(&T) -> K + Sync,
    {
        radix::sort_by_bits(self.as_parallel_slice_mut(), &|x: &T| f(x).order_bits());
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}
