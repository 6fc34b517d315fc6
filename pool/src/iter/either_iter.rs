//! `Either` of two parallel iterators with one item type is a parallel iterator, indexed
//! where both are, and `Either` of two collections extends the one it holds: rayon's
//! impls for its re-exported `either::Either`.

use super::drive::sealed::Drive;
use super::{Either, IndexedParallelIterator, IntoParallelIterator, ParallelExtend};
use std::ops::Range;

/// The same call on whichever side `$either` holds.
macro_rules! on_either_side {
    ($either:expr, $side:pat => $call:expr) => {
        match $either {
            Either::Left($side) => $call,
            Either::Right($side) => $call,
        }
    };
}

impl<L, R> Drive for Either<L, R>
where
    L: Drive,
    R: Drive<Item = L::Item>,
{
    type Item = L::Item;
    type Seq<'a>
        = Either<L::Seq<'a>, R::Seq<'a>>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        on_either_side!(self, side => side.position_count())
    }

    fn exact(&self) -> bool {
        on_either_side!(self, side => side.exact())
    }

    fn coarse(&self) -> bool {
        on_either_side!(self, side => side.coarse())
    }

    fn min_len(&self) -> usize {
        on_either_side!(self, side => side.min_len())
    }

    fn max_len(&self) -> usize {
        on_either_side!(self, side => side.max_len())
    }

    fn ended(&self) -> Option<&crate::sync::AtomicBool> {
        on_either_side!(self, side => side.ended())
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        match self {
            // SAFETY: the caller's contract, passed on to the side held.
            Either::Left(left) => Either::Left(unsafe { left.seq(range) }),
            // SAFETY: as above.
            Either::Right(right) => Either::Right(unsafe { right.seq(range) }),
        }
    }
}

impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
    Either<L, R>: Drive,
{
}

/// Extends whichever collection the `Either` holds.
///
/// ```
/// use rayforce_pool::iter::Either;
/// use rayforce_pool::prelude::*;
/// let mut either: Either<Vec<u32>, Vec<u32>> = Either::Right(vec![1]);
/// either.par_extend((2..4u32).into_par_iter());
/// assert_eq!(either, Either::Right(vec![1, 2, 3]));
/// ```
impl<L, R, T> ParallelExtend<T> for Either<L, R>
where
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
    T: Send,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        on_either_side!(self, side => side.par_extend(iter))
    }
}
