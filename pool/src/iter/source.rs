//! The sources: slices by reference (`par_iter`), slices mutably (`par_iter_mut`) and
//! integer ranges (`into_par_iter`), each indexed: position `i` is item `i`. (`char`
//! ranges are in `char_range.rs`.)

use super::drive::sealed::Drive;
use super::ParallelIterator;
use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};

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

/// A parallel iterator over a range of integers or `char`s: `(a..b).into_par_iter()`;
/// also named `range::Iter`, as in rayon.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let big = u128::MAX - 10..u128::MAX;
/// assert_eq!(big.clone().into_par_iter().len(), 10);
/// assert_eq!(big.clone().into_par_iter().min(), Some(u128::MAX - 10));
/// let letters: String = ('a'..'f').into_par_iter().collect::<Vec<char>>().into_iter().collect();
/// assert_eq!(letters, "abcde");
/// ```
///
/// # Panics
/// Measured or consumed, a range of more than `usize::MAX` items (`0..u128::MAX`) panics,
/// saying so: rayon runs those of `u64`, `i64`, `u128` and `i128` unindexed instead.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct RangeIter<T> {
    pub(super) range: Range<T>,
}

/// The panic of a range of more than `usize::MAX` items (`0..=u64::MAX`, `0..u128::MAX`):
/// its positions are `usize`s.
#[cold]
fn too_long(items_less_one: u128) -> ! {
    match items_less_one.checked_add(1) {
        Some(items) => panic!("a parallel range of {items} items: at most usize::MAX"),
        None => panic!("a parallel range of 2^128 items: at most usize::MAX"),
    }
}

/// The integer types whose ranges are sources, as rayon's: every primitive one. Sealed:
/// not nameable outside the crate. One generic source over them (not one per type), so an
/// unsuffixed literal range (`(0..100).into_par_iter()`) falls back to `i32`, as in rayon.
pub trait RangeInteger: Copy + Send + Sync + PartialOrd + sealed::Sealed + 'static {
    /// `start..end`, iterated (`Range<Self>`).
    type Seq: Iterator<Item = Self>;
    /// `start..=end`, iterated (`RangeInclusive<Self>`).
    type SeqInclusive: Iterator<Item = Self>;

    /// `start..end`.
    fn range(start: Self, end: Self) -> Self::Seq;

    /// `start..=end`, or none where `empty`.
    fn range_inclusive(start: Self, end: Self, empty: bool) -> Self::SeqInclusive;

    /// The distance from `start` to `end` (`end >= start`), in the unsigned type of the
    /// same width, where it is exact, widened to `u128`.
    fn distance(start: Self, end: Self) -> u128;

    /// `start` moved `by` values up (within the range: wrapping lands on the right value,
    /// also for an offset past the type's positive half, as an `i8` range of 200).
    fn offset(start: Self, by: usize) -> Self;
}

pub(crate) mod sealed {
    /// The seal of [`RangeInteger`](super::RangeInteger).
    pub trait Sealed {}
}

/// `RangeInteger` for each `$int`, its distances in `$uint`.
macro_rules! range_integers {
    ($($int:ty => $uint:ty),*) => {$(
        impl sealed::Sealed for $int {}

        impl RangeInteger for $int {
            type Seq = Range<$int>;
            type SeqInclusive = RangeInclusive<$int>;

            #[inline]
            fn range(start: $int, end: $int) -> Range<$int> {
                start..end
            }

            #[inline]
            fn range_inclusive(start: $int, end: $int, empty: bool) -> RangeInclusive<$int> {
                let mut range = start..=end;
                if empty {
                    range.nth(usize::MAX); // spent: every item taken
                }
                range
            }

            #[inline]
            fn distance(start: $int, end: $int) -> u128 {
                end.wrapping_sub(start) as $uint as u128
            }

            #[inline]
            fn offset(start: $int, by: usize) -> $int {
                start.wrapping_add(by as $int)
            }
        }
    )*};
}

range_integers!(
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128, usize => usize,
    i8 => u8, i16 => u16, i32 => u32, i64 => u64, i128 => u128, isize => usize
);

/// Ranges of every primitive integer type are sources, as in rayon. One of more than
/// `usize::MAX` items (`0..u128::MAX`) panics, saying so.
impl<T: RangeInteger> Drive for RangeIter<T> {
    type Item = T;
    type Seq<'a> = T::Seq;

    fn position_count(&self) -> usize {
        let Range { start, end } = self.range;
        if start >= end {
            return 0;
        }
        let items = T::distance(start, end);
        usize::try_from(items).unwrap_or_else(|_| too_long(items - 1))
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> T::Seq {
        // Offsets below the length: the values stay in the range.
        let start = self.range.start;
        T::range(T::offset(start, range.start), T::offset(start, range.end))
    }
}

impl<T: RangeInteger> IntoParallelIterator for Range<T> {
    type Iter = RangeIter<T>;
    type Item = T;

    fn into_par_iter(self) -> RangeIter<T> {
        RangeIter { range: self }
    }
}

/// A parallel iterator over an inclusive range of integers or `char`s:
/// `(a..=b).into_par_iter()`; also named `range_inclusive::Iter`, as in rayon.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let low = (i128::MIN..=i128::MIN + 2).into_par_iter();
/// assert_eq!(low.map(|x| x - i128::MIN).collect::<Vec<i128>>(), [0, 1, 2]);
/// assert_eq!(('x'..='z').into_par_iter().count(), 3);
/// ```
///
/// # Panics
/// Measured or consumed, a range of more than `usize::MAX` items (`0..=u64::MAX`, and the
/// whole of `usize` or `isize`: `0..=usize::MAX`) panics, saying so: rayon runs those of
/// `u64`, `i64`, `u128` and `i128` unindexed instead, and an inclusive `usize` or `isize`
/// range as the exclusive one chained with its end.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct RangeInclusiveIter<T> {
    pub(super) range: RangeInclusive<T>,
}

/// Inclusive ranges of every primitive integer type are sources, as in rayon; one of more
/// than `usize::MAX` items (`0..=u64::MAX`) panics, saying so.
impl<T: RangeInteger> Drive for RangeInclusiveIter<T> {
    type Item = T;
    type Seq<'a> = T::SeqInclusive;

    fn position_count(&self) -> usize {
        if self.range.is_empty() {
            return 0;
        }
        let last = T::distance(*self.range.start(), *self.range.end());
        usize::try_from(last)
            .ok()
            .and_then(|last| last.checked_add(1))
            .unwrap_or_else(|| too_long(last))
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> T::SeqInclusive {
        // As `RangeIter`'s: offsets below the length stay in the range.
        let start = *self.range.start();
        match range.end.checked_sub(1).filter(|_| !range.is_empty()) {
            Some(last) => {
                T::range_inclusive(T::offset(start, range.start), T::offset(start, last), false)
            }
            None => T::range_inclusive(start, start, true),
        }
    }
}

impl<T: RangeInteger> IntoParallelIterator for RangeInclusive<T> {
    type Iter = RangeInclusiveIter<T>;
    type Item = T;

    fn into_par_iter(self) -> RangeInclusiveIter<T> {
        RangeInclusiveIter { range: self }
    }
}
