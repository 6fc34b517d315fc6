//! rayon's paths to the iterator types, `range::Iter`, `range_inclusive::Iter` and
//! `vec::IntoIter`, so that a rayon program naming them (`fn evens() ->
//! rayon::range::Iter<u32>`) builds here.

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

/// The parallel iterators over a `Vec`'s items, by rayon's names: `vec::IntoIter<T>` is
/// [`IntoIter<T>`](crate::iter::IntoIter), and so is `vec::Drain<'data, T>`, what
/// `par_drain` makes (its items are moved out of the `Vec` at once).
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::vec;
/// fn owned(items: Vec<u32>) -> vec::IntoIter<u32> {
///     items.into_par_iter()
/// }
/// fn drained(items: &mut Vec<u32>) -> vec::Drain<'_, u32> {
///     items.par_drain(1..)
/// }
/// let mut items = vec![1, 2, 3];
/// assert_eq!(drained(&mut items).sum::<u32>(), 5);
/// assert_eq!(owned(items).sum::<u32>(), 1);
/// ```
pub mod vec {
    pub use crate::iter::IntoIter;

    /// What `Vec::par_drain` makes (see the module).
    pub type Drain<'data, T> = IntoIter<T>;
}
