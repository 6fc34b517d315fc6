//! `partition` and `partition_map`: the items split into two collections, each in the
//! iterator's order, as rayon's; the sides are gathered by one parallel pass, split on the
//! caller, then each side extends its collection.

use super::{Either, ParallelExtend, ParallelIterator};

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
    let sides: Vec<Either<L, R>> = iter.map(side).collect();
    let (mut lefts, mut rights) = (Vec::new(), Vec::new());
    for item in sides {
        match item {
            Either::Left(left) => lefts.push(left),
            Either::Right(right) => rights.push(right),
        }
    }
    let (mut a, mut b) = (A::default(), B::default());
    a.par_extend(lefts);
    b.par_extend(rights);
    (a, b)
}
