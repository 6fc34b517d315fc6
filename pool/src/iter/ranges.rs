//! Integer ranges as sources (`(a..b).into_par_iter()`), and the two range iterators that
//! `char` ranges (`char_range.rs`) share. Indexed where rayon's are: a range of at most
//! `usize::MAX` items has a position per item; a longer one (`0..u128::MAX`,
//! `0..=u64::MAX`), of a type rayon leaves unindexed, has `usize::MAX` positions or fewer,
//! each of an equal run of items, the last of the rest.

use super::drive::sealed::Drive;
use super::source::IntoParallelIterator;
use std::ops::{Range, RangeInclusive};

/// A parallel iterator over a range of integers or `char`s: `(a..b).into_par_iter()`;
/// also named `range::Iter`, as in rayon. Indexed ([`IndexedParallelIterator`]) for the
/// types rayon indexes (every integer type up to 32 bits, `usize`, `isize` and `char`); for `u64`, `i64`, `u128` and `i128` a parallel iterator whose
/// [`opt_len`] is its length where that fits a `usize`, as rayon's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let big = u128::MAX - 10..u128::MAX;
/// assert_eq!(big.clone().into_par_iter().opt_len(), Some(10));
/// assert_eq!(big.clone().into_par_iter().min(), Some(u128::MAX - 10));
/// let letters: String = ('a'..'f').into_par_iter().collect::<Vec<char>>().into_iter().collect();
/// assert_eq!(letters, "abcde");
/// // More items than a `usize` counts: searched all the same.
/// const OCTILLION: u128 = 1_000_000_000_000_000_000_000_000_000;
/// assert_eq!((0..OCTILLION).into_par_iter().find_first(|_| true), Some(0));
/// assert_eq!((0..OCTILLION).into_par_iter().opt_len(), None);
/// ```
///
/// [`IndexedParallelIterator`]: super::IndexedParallelIterator
/// [`opt_len`]: super::ParallelIterator::opt_len
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct RangeIter<T> {
    pub(super) range: Range<T>,
}

/// A parallel iterator over an inclusive range of integers or `char`s:
/// `(a..=b).into_par_iter()`; also named `range_inclusive::Iter`, as in rayon. Indexed
/// ([`IndexedParallelIterator`]) for the types rayon indexes (`u8`, `u16`, `i8`, `i16`
/// and `char`); for the others a parallel iterator whose
/// [`opt_len`] is its length where that fits a `usize`, as rayon's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let low = (i128::MIN..=i128::MIN + 2).into_par_iter();
/// assert_eq!(low.map(|x| x - i128::MIN).collect::<Vec<i128>>(), [0, 1, 2]);
/// assert_eq!(('x'..='z').into_par_iter().count(), 3);
/// // Every `u64`: 2^64 items, one more than a `usize` counts.
/// assert_eq!((0..=u64::MAX).into_par_iter().find_last(|_| true), Some(u64::MAX));
/// ```
///
/// [`IndexedParallelIterator`]: super::IndexedParallelIterator
/// [`opt_len`]: super::ParallelIterator::opt_len
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct RangeInclusiveIter<T> {
    pub(super) range: RangeInclusive<T>,
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
    fn offset(start: Self, by: u128) -> Self;
}

/// The types whose ranges are indexed (`IndexedParallelIterator`), as rayon's: those whose
/// every range's length fits a `usize` on 32- and 64-bit targets (`u8`, `u16`, `u32`, `i8`, `i16`,
/// `i32`, `char`), and `usize` and `isize`. Sealed.
pub trait IndexedRange: sealed::Sealed {}

/// The types whose inclusive ranges are indexed (`IndexedParallelIterator`), as rayon's:
/// `u8`, `u16`, `i8`, `i16` and `char` (`0..=u32::MAX` is one item more than a 32-bit
/// `usize` counts). Sealed.
pub trait IndexedRangeInclusive: sealed::Sealed {}

pub(crate) mod sealed {
    /// The seal of [`RangeInteger`](super::RangeInteger), [`IndexedRange`](super::IndexedRange)
    /// and [`IndexedRangeInclusive`](super::IndexedRangeInclusive).
    pub trait Sealed {}

    impl Sealed for char {}
}

impl IndexedRange for char {}
impl IndexedRangeInclusive for char {}

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
            fn offset(start: $int, by: u128) -> $int {
                start.wrapping_add(by as $int)
            }
        }
    )*};
}

range_integers!(
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128, usize => usize,
    i8 => u8, i16 => u16, i32 => u32, i64 => u64, i128 => u128, isize => usize
);

macro_rules! indexed {
    ($marker:ident: $($int:ty),*) => {$(
        impl $marker for $int {}
    )*};
}

indexed!(IndexedRange: u8, u16, u32, usize, i8, i16, i32, isize);
indexed!(IndexedRangeInclusive: u8, u16, i8, i16);

/// How a range's items stand on positions: `per` items to a position (1 wherever the
/// items fit a `usize`, so that position `i` is item `i`), the last position holding the
/// rest.
#[derive(Clone, Copy)]
struct Positions {
    /// How many positions: at most `usize::MAX`.
    count: usize,
    /// How many items each position but the last holds.
    per: u128,
    /// The offset of the last item.
    last: u128,
}

impl Positions {
    /// The positions of `last + 1` items.
    fn of(last: u128) -> Positions {
        match usize::try_from(last)
            .ok()
            .and_then(|last| last.checked_add(1))
        {
            Some(count) => Positions {
                count,
                per: 1,
                last,
            },
            None => {
                // `last < per * usize::MAX`, so `last / per + 1 <= usize::MAX`.
                let per = last / usize::MAX as u128 + 1;
                Positions {
                    count: (last / per) as usize + 1,
                    per,
                    last,
                }
            }
        }
    }

    /// The offset of the first item of position `at` (below `count`).
    fn first_of(self, at: usize) -> u128 {
        at as u128 * self.per
    }

    /// The offset of the last item of the positions below `end` (`0 < end <= count`),
    /// the range's `last` at the last position.
    fn last_before(self, end: usize) -> u128 {
        if end == self.count {
            self.last
        } else {
            end as u128 * self.per - 1
        }
    }
}

/// The `Drive` methods both range iterators derive from their `positions()`: how many,
/// whether each is one item, and whether each may be many.
macro_rules! drive_by_positions {
    () => {
        fn position_count(&self) -> usize {
            self.positions().map_or(0, |positions| positions.count)
        }

        fn exact(&self) -> bool {
            self.positions().is_none_or(|positions| positions.per == 1)
        }

        fn coarse(&self) -> bool {
            !self.exact()
        }
    };
}

impl<T: RangeInteger> RangeIter<T> {
    /// The positions of a non-empty range.
    fn positions(&self) -> Option<Positions> {
        let Range { start, end } = self.range;
        (start < end).then(|| Positions::of(T::distance(start, end) - 1))
    }
}

/// Ranges of every primitive integer type are sources, as in rayon.
impl<T: RangeInteger> Drive for RangeIter<T> {
    type Item = T;
    type Seq<'a> = T::Seq;

    drive_by_positions!();

    unsafe fn seq(&self, range: Range<usize>) -> T::Seq {
        let start = self.range.start;
        let Some(positions) = self.positions().filter(|_| !range.is_empty()) else {
            return T::range(start, start);
        };
        // Offsets within the range (the caller's): the values stay in it.
        let first = T::offset(start, positions.first_of(range.start));
        let beyond = positions.last_before(range.end) + 1;
        T::range(first, T::offset(start, beyond))
    }
}

impl<T: RangeInteger> IntoParallelIterator for Range<T> {
    type Iter = RangeIter<T>;
    type Item = T;

    fn into_par_iter(self) -> RangeIter<T> {
        RangeIter { range: self }
    }
}

impl<T: RangeInteger> RangeInclusiveIter<T> {
    /// The positions of a non-empty range.
    fn positions(&self) -> Option<Positions> {
        let range = &self.range;
        (!range.is_empty()).then(|| Positions::of(T::distance(*range.start(), *range.end())))
    }
}

/// Inclusive ranges of every primitive integer type are sources, as in rayon.
impl<T: RangeInteger> Drive for RangeInclusiveIter<T> {
    type Item = T;
    type Seq<'a> = T::SeqInclusive;

    drive_by_positions!();

    unsafe fn seq(&self, range: Range<usize>) -> T::SeqInclusive {
        let start = *self.range.start();
        let Some(positions) = self.positions().filter(|_| !range.is_empty()) else {
            return T::range_inclusive(start, start, true);
        };
        // As `RangeIter`'s: offsets within the range stay in it.
        let first = positions.first_of(range.start);
        let last = positions.last_before(range.end);
        T::range_inclusive(T::offset(start, first), T::offset(start, last), false)
    }
}

impl<T: RangeInteger> IntoParallelIterator for RangeInclusive<T> {
    type Iter = RangeInclusiveIter<T>;
    type Item = T;

    fn into_par_iter(self) -> RangeInclusiveIter<T> {
        RangeInclusiveIter { range: self }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::{Drive, IntoParallelIterator, Positions};
    use std::fmt::Debug;
    use std::ops::Range;

    /// The first and last items of `items`, read from its two ends (a run of up to 2^64
    /// items is not walked).
    fn ends<T: Copy>(mut items: impl DoubleEndedIterator<Item = T>) -> Option<(T, T)> {
        let first = items.next()?;
        Some((first, items.next_back().unwrap_or(first)))
    }

    #[test]
    fn positions_hold_every_item_once_in_at_most_usize_max() {
        let lasts = [
            0,
            1000,
            usize::MAX as u128 - 1,
            usize::MAX as u128,
            usize::MAX as u128 + 1,
            1 << 90,
            u128::MAX - 1,
            u128::MAX,
        ];
        for last in lasts {
            let positions = Positions::of(last);
            let (count, per) = (positions.count as u128, positions.per);
            if last < usize::MAX as u128 {
                assert_eq!((count, per), (last + 1, 1), "{last}");
            }
            // Every position but the last holds `per` items, the last one to `per`.
            assert!(
                (count - 1) * per <= last,
                "{last}: the last position holds an item"
            );
            assert!(
                last - (count - 1) * per < per,
                "{last}: the last position holds the rest"
            );
            assert_eq!(positions.first_of(0), 0);
            assert_eq!(positions.last_before(positions.count), last);
        }
    }

    /// `iter`, of `start..=last`, has coarse positions that hand out its items in order,
    /// each once: the first position starts at `start`, the last ends at `last`, and the
    /// two sides of any cut meet.
    fn coarse<I, T>(iter: I, start: T, last: T, next: impl Fn(T) -> T)
    where
        I: Drive<Item = T>,
        for<'a> I::Seq<'a>: DoubleEndedIterator,
        T: Copy + PartialEq + Debug,
    {
        assert!(
            !iter.exact(),
            "{start:?}..={last:?} is not one item a position"
        );
        let count = iter.position_count();
        let ends_of = |positions: Range<usize>| {
            assert!(positions.start <= positions.end && positions.end <= count);
            // SAFETY: within `0..position_count()`; a range hands out values, so asking for
            // positions twice lends nothing twice.
            ends(unsafe { iter.seq(positions) })
        };
        assert_eq!(ends_of(0..count), Some((start, last)));
        for cut in [1, count / 3, count / 2, count - 1] {
            let (_, before) = ends_of(0..cut).unwrap();
            let (after, _) = ends_of(cut..count).unwrap();
            assert_eq!(
                next(before),
                after,
                "the two sides of the cut at {cut} meet"
            );
            assert_eq!(ends_of(cut..cut), None);
        }
    }

    #[test]
    fn ranges_past_usize_max_items_have_coarse_positions_in_order() {
        const OCTILLION: u128 = 1_000_000_000_000_000_000_000_000_000;
        coarse((0..=u64::MAX).into_par_iter(), 0, u64::MAX, |x| x + 1);
        coarse((0..=usize::MAX).into_par_iter(), 0, usize::MAX, |x| x + 1);
        coarse(
            (isize::MIN..=isize::MAX).into_par_iter(),
            isize::MIN,
            isize::MAX,
            |x| x + 1,
        );
        coarse((0..OCTILLION).into_par_iter(), 0, OCTILLION - 1, |x| x + 1);
        coarse((0..=OCTILLION).into_par_iter(), 0, OCTILLION, |x| x + 1);
        coarse((1..u128::MAX).into_par_iter(), 1, u128::MAX - 1, |x| x + 1);
        coarse((0..=u128::MAX).into_par_iter(), 0, u128::MAX, |x| x + 1);
        coarse(
            (i128::MIN..=i128::MAX).into_par_iter(),
            i128::MIN,
            i128::MAX,
            |x| x + 1,
        );
        coarse(
            (i128::MIN..i128::MAX).into_par_iter(),
            i128::MIN,
            i128::MAX - 1,
            |x| x + 1,
        );
    }

    /// Every cut `a..b` of `iter`'s positions yields `serial`'s items `a..b`, in order.
    fn every_cut<I>(iter: I, serial: Vec<I::Item>)
    where
        I: Drive,
        I::Item: PartialEq + Debug,
    {
        assert!(iter.exact());
        assert_eq!(iter.position_count(), serial.len());
        for a in 0..=serial.len() {
            for b in a..=serial.len() {
                // SAFETY: within `0..position_count()`; a range hands out values, so
                // asking for positions twice lends nothing twice.
                let items: Vec<I::Item> = unsafe { iter.seq(a..b) }.collect();
                assert_eq!(items, serial[a..b], "positions {a}..{b}");
            }
        }
    }

    #[test]
    fn every_cut_of_a_short_wide_range_yields_its_items() {
        for n in 0..5u8 {
            let n128 = u128::from(n);
            for start in [0, 1 << 100, u128::MAX - n128] {
                every_cut(
                    (start..start + n128).into_par_iter(),
                    (start..start + n128).collect(),
                );
            }
            for start in [i128::MIN, -2, i128::MAX - i128::from(n)] {
                let end = start + i128::from(n);
                every_cut((start..end).into_par_iter(), (start..end).collect());
                every_cut((start..=end).into_par_iter(), (start..=end).collect());
            }
            for start in [0, u64::MAX - u64::from(n)] {
                let end = start + u64::from(n);
                every_cut((start..=end).into_par_iter(), (start..=end).collect());
            }
        }
    }

    #[test]
    fn ranges_of_up_to_usize_max_items_have_a_position_an_item() {
        let (u64s, usizes) = (
            (1..u64::MAX).into_par_iter(),
            (0..=usize::MAX - 1).into_par_iter(),
        );
        assert!(u64s.exact() && usizes.exact());
        assert_eq!(u64s.position_count(), usize::MAX - 1);
        assert_eq!(usizes.position_count(), usize::MAX);
        let i128s = (-5..=5i128).into_par_iter();
        assert!(i128s.exact());
        assert_eq!(i128s.position_count(), 11);
        // SAFETY: within `0..position_count()`.
        assert_eq!(unsafe { i128s.seq(3..6) }.collect::<Vec<_>>(), [-2, -1, 0]);
    }
}
