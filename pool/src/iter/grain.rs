//! `with_min_len(n)` and `with_max_len(n)`: how finely a consumer claims an iterator's
//! positions. The pool's claims are sized by the clock (about 20 us of work each, smaller
//! near the end); these bound them: ranges of at least `n` positions (the last excepted),
//! or of at most `n` (where a `max` is below a `min`, the `min` wins).

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use std::ops::Range;

/// An iterator whose consumers claim positions within bounds, by rayon's adaptors of the
/// same name: `MinLen` (`$method` min: raises the base's least) and `MaxLen` (max: lowers
/// the base's most).
macro_rules! with_len {
    ($(#[$doc:meta])* $name:ident, $method:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        #[must_use = "iterators do nothing until consumed"]
        pub struct $name<I> {
            pub(crate) base: I,
            pub(crate) len: usize,
        }

        impl<I: Drive> Drive for $name<I> {
            type Item = I::Item;
            type Seq<'a>
                = I::Seq<'a>
            where
                Self: 'a;

            fn position_count(&self) -> usize {
                self.base.position_count()
            }

            fn exact(&self) -> bool {
                self.base.exact()
            }

            fn min_len(&self) -> usize {
                with_len!(@min $method, self)
            }

            positions_of_base!(@ended);

            fn max_len(&self) -> usize {
                with_len!(@max $method, self)
            }

            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's contract, passed on.
                unsafe { self.base.seq(range) }
            }
        }
    };
    (@min min, $self:ident) => { $self.base.min_len().max($self.len) };
    (@min max, $self:ident) => { $self.base.min_len() };
    (@max min, $self:ident) => { $self.base.max_len() };
    (@max max, $self:ident) => { $self.base.max_len().min($self.len) };
}

with_len!(
    /// `iter.with_min_len(n)`: claimed ranges of at least `n` positions, the last excepted.
    MinLen, min
);
with_len!(
    /// `iter.with_max_len(n)`: claimed ranges of at most `n` positions.
    MaxLen, max
);
