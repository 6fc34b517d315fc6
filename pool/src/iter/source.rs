//! The sources: slices by reference (`par_iter`) and mutably (`par_iter_mut`), and
//! `Vec`s by either reference, each indexed: position `i` is item `i`. (Ranges are in
//! `ranges.rs` and `char_range.rs`.)

use super::drive::sealed::Drive;
use super::ParallelIterator;
use std::marker::PhantomData;
use std::ops::Range;

/// Converts a value into a parallel iterator, as rayon's trait of the same name: ranges of
/// integers, slices and `Vec`s by reference or mutable reference, and every parallel
/// iterator itself.
pub trait IntoParallelIterator {
    /// The parallel iterator made.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The type of its items.
    type Item: Send;

    /// The parallel iterator.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let squares: Vec<u64> = (0..1000u64).into_par_iter().map(|i| i * i).collect();
    /// assert_eq!(squares[999], 998_001);
    /// ```
    fn into_par_iter(self) -> Self::Iter;
}

impl<I: ParallelIterator> IntoParallelIterator for I {
    type Iter = I;
    type Item = I::Item;

    fn into_par_iter(self) -> I {
        self
    }
}

/// `par_iter()` on anything whose reference converts into a parallel iterator (slices,
/// `Vec`s), as rayon's trait of the same name.
pub trait IntoParallelRefIterator<'data> {
    /// The parallel iterator made.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The type of its items: references.
    type Item: Send + 'data;

    /// A parallel iterator over references to the items.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = vec![1u32, 2, 3, 4];
    /// assert_eq!(xs.par_iter().map(|&x| x * 10).sum::<u32>(), 100);
    /// ```
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefIterator<'data> for I
where
    &'data I: IntoParallelIterator,
{
    type Iter = <&'data I as IntoParallelIterator>::Iter;
    type Item = <&'data I as IntoParallelIterator>::Item;

    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `par_iter_mut()` on anything whose mutable reference converts into a parallel iterator
/// (slices, `Vec`s), as rayon's trait of the same name.
pub trait IntoParallelRefMutIterator<'data> {
    /// The parallel iterator made.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The type of its items: mutable references.
    type Item: Send + 'data;

    /// A parallel iterator over mutable references to the items.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs = vec![1u32, 2, 3, 4];
    /// xs.par_iter_mut().for_each(|x| *x *= 2);
    /// assert_eq!(xs, [2, 4, 6, 8]);
    /// ```
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefMutIterator<'data> for I
where
    &'data mut I: IntoParallelIterator,
{
    type Iter = <&'data mut I as IntoParallelIterator>::Iter;
    type Item = <&'data mut I as IntoParallelIterator>::Item;

    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// A parallel iterator over references to a slice's items: `slice.par_iter()`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let xs = [3u32, 1, 2];
/// let iter = xs.par_iter();
/// assert_eq!(iter.clone().max(), Some(&3));
/// assert_eq!(iter.copied().collect::<Vec<u32>>(), xs);
/// ```
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct Iter<'data, T> {
    items: &'data [T],
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { items: self.items }
    }
}

impl<'data, T: Sync + 'data> Drive for Iter<'data, T> {
    type Item = &'data T;
    type Seq<'a>
        = std::slice::Iter<'data, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.items.len()
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        self.items[range].iter()
    }
}

impl<'data, T: Sync + 'data> IntoParallelIterator for &'data [T] {
    type Iter = Iter<'data, T>;
    type Item = &'data T;

    fn into_par_iter(self) -> Iter<'data, T> {
        Iter { items: self }
    }
}

impl<'data, T: Sync + 'data> IntoParallelIterator for &'data Vec<T> {
    type Iter = Iter<'data, T>;
    type Item = &'data T;

    fn into_par_iter(self) -> Iter<'data, T> {
        Iter { items: self }
    }
}

/// A parallel iterator over mutable references to a slice's items:
/// `slice.par_iter_mut()`.
///
/// # Safety
/// `ptr` and `len` are a slice borrowed mutably for `'data`; `seq`'s callers ask for
/// disjoint ranges, so each item is lent once.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct IterMut<'data, T> {
    ptr: *mut T,
    len: usize,
    marker: PhantomData<&'data mut [T]>,
}

// SAFETY: the items are lent to other threads, each once (struct `# Safety`): `T: Send`
// suffices, as for `&mut [T]`'s parts moved across threads.
unsafe impl<T: Send> Send for IterMut<'_, T> {}
// SAFETY: as above; shared `&IterMut`s hand out disjoint parts only.
unsafe impl<T: Send> Sync for IterMut<'_, T> {}

impl<'data, T: Send + 'data> Drive for IterMut<'data, T> {
    type Item = &'data mut T;
    type Seq<'a>
        = std::slice::IterMut<'data, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.len
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds (checked), of the slice borrowed for 'data, and disjoint from
        // every other range lent (the caller's contract): no item is lent twice.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) }.iter_mut()
    }
}

impl<'data, T: Send + 'data> IntoParallelIterator for &'data mut [T] {
    type Iter = IterMut<'data, T>;
    type Item = &'data mut T;

    fn into_par_iter(self) -> IterMut<'data, T> {
        IterMut {
            ptr: self.as_mut_ptr(),
            len: self.len(),
            marker: PhantomData,
        }
    }
}

impl<'data, T: Send + 'data> IntoParallelIterator for &'data mut Vec<T> {
    type Iter = IterMut<'data, T>;
    type Item = &'data mut T;

    fn into_par_iter(self) -> IterMut<'data, T> {
        self.as_mut_slice().into_par_iter()
    }
}
