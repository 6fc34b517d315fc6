//! rayon's paths to the range iterators, `range::Iter` and `range_inclusive::Iter`, so that
//! a rayon program naming them (`fn evens() -> rayon::range::Iter<u32>`) builds here.

/// The parallel iterator over a range, by rayon's name: `range::Iter<T>` is
/// [`RangeIter<T>`](crate::iter::RangeIter).
///
/// ```
/// use rayforce_pool::iter::range;
/// use rayforce_pool::prelude::*;
/// fn digits() -> range::Iter<u8> {
///     (0..10u8).into_par_iter()
/// }
/// assert_eq!(digits().map(u32::from).sum::<u32>(), 45);
/// ```
pub mod range {
    pub use crate::iter::RangeIter as Iter;
}

/// The parallel iterator over an inclusive range, by rayon's name:
/// `range_inclusive::Iter<T>` is [`RangeInclusiveIter<T>`](crate::iter::RangeInclusiveIter).
///
/// ```
/// use rayforce_pool::iter::range_inclusive;
/// use rayforce_pool::prelude::*;
/// fn letters() -> range_inclusive::Iter<char> {
///     ('a'..='z').into_par_iter()
/// }
/// assert_eq!(letters().count(), 26);
/// ```
pub mod range_inclusive {
    pub use crate::iter::RangeInclusiveIter as Iter;
}
