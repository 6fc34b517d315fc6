//! `partition` and `partition_map`: the items split into two collections, each in the
//! iterator's order, as rayon's; the sides are gathered by one parallel pass, split on the
//! caller, then each side extends its collection. A pair of collections extends from, or
//! is collected from, `Either` items the same way (rayon's `ParallelExtend<Either<L, R>>`
//! and `FromParallelIterator<Either<L, R>>` for pairs), so partitions nest.

use super::extend::extended;
use super::{Either, FromParallelIterator, IntoParallelIterator, ParallelExtend, ParallelIterator};

/// The items `side` sends left into `A` and right into `B`, each in the iterator's order.
pub(crate) fn partition_map<I, A, B, L, R, P>(iter: I, side: P) -> (A, B)
where
    I: ParallelIterator,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
    L: Send,
    R: Send,
    P: Fn(I::Item) -> Either<L, R> + Sync + Send,
{
    iter.map(side).collect()
}

/// `Left` items extend the first collection and `Right` ones the second, each in order.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::iter::Either;
/// let mut sides: (Vec<u32>, (Vec<u32>, Vec<u32>)) = Default::default();
/// sides.par_extend((0..10u32).into_par_iter().map(|x| match x % 3 {
///     0 => Either::Left(x),
///     1 => Either::Right((x, 0)),
///     _ => Either::Right((0, x)),
/// }));
/// assert_eq!(sides.0, [0, 3, 6, 9]);
/// assert_eq!((sides.1).0, [1, 0, 4, 0, 7, 0]);
/// ```
impl<L, R, A, B> ParallelExtend<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        let sides: Vec<Either<L, R>> = iter.into_par_iter().collect();
        let (mut lefts, mut rights) = (Vec::new(), Vec::new());
        for item in sides {
            match item {
                Either::Left(left) => lefts.push(left),
                Either::Right(right) => rights.push(right),
            }
        }
        self.0.par_extend(lefts);
        self.1.par_extend(rights);
    }
}

/// A pair of new collections, each side's items in order, as rayon's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::iter::Either;
/// let (even, odd): (Vec<u32>, Vec<u32>) = (0..7u32)
///     .into_par_iter()
///     .map(|x| if x % 2 == 0 { Either::Left(x) } else { Either::Right(x) })
///     .collect();
/// assert_eq!((even, odd), (vec![0, 2, 4, 6], vec![1, 3, 5]));
/// ```
impl<L, R, A, B> FromParallelIterator<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        extended(iter)
    }
}
