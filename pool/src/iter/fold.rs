//! `fold(identity, op)` and `fold_with(init, op)`: an accumulator per run of adjacent ranges
//! a participant claims, the ranges at least 1/`RANGES_PER_THREAD` of a thread's share, so
//! `identity` runs at most that often per thread of the pool whatever the number of items
//! (rayon: once per split, as often as it splits); the accumulators, in the items' order
//! as rayon's, are a computed source, made by one region over the base. `try_fold` and
//! `try_fold_with` the same, each accumulator folding no further item once it failed.

use super::collect::ordered_parts;
use super::computed::{sealed::Make, Computed};
use super::drive::{grain, sealed::Drive};
use super::identity::sealed::Identity;
use super::identity::CloneOf;
use super::tries::Try;
use std::marker::PhantomData;
use std::ops::ControlFlow;

/// Claimed ranges per thread a fold's ranges are sized for, at least: one. An accumulator
/// continues only a range that starts where its participant's last one ended; a region of
/// one range a thread has a first task per participant and nothing to claim (the caller
/// runs those no helper took, after its own), so it makes at most one accumulator a
/// thread. At two a thread, the claimed second ranges seldom continued a first: a 1e5-item
/// group-by into 1,000 groups made 3.9 accumulators a fold on 2 threads, against 2.0 at
/// one, and took 1.1x the time.
const RANGES_PER_THREAD: usize = 1;

/// `iter.fold(identity, op)`: the accumulators, one per run of adjacent claimed ranges, in
/// order (one `identity()` when there are no items).
pub type Fold<I, ID, F> = Computed<Folding<I, ID, F>>;

/// `iter.fold_with(init, op)`: [`Fold`] with clones of `init` for identity.
pub type FoldWith<I, T, F> = Fold<I, CloneOf<T>, F>;

/// How a [`Fold`]'s accumulators are made.
#[derive(Clone)]
pub struct Folding<I, ID, F> {
    base: I,
    identity: ID,
    op: F,
}

impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for Folding<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folding")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, ID, F> Folding<I, ID, F> {
    pub(crate) fn new(base: I, identity: ID, op: F) -> Self {
        Folding { base, identity, op }
    }
}

impl<I, ID, F> Make for Folding<I, ID, F>
where
    I: Drive + Send,
    ID: Identity + Send,
    ID::Accumulator: Send,
    F: Fn(ID::Accumulator, I::Item) -> ID::Accumulator + Sync + Send,
{
    type Item = ID::Accumulator;

    fn make(self) -> Vec<ID::Accumulator> {
        accumulate(
            &self.base,
            || self.identity.make(),
            |accumulator, items| items.fold(accumulator, &self.op),
        )
    }
}

/// The accumulators of `base`, one per run of adjacent claimed ranges in order, each
/// begun by `identity` and carried through a range's items by `fold`.
fn accumulate<I: Drive, A: Send>(
    base: &I,
    identity: impl Fn() -> A + Sync,
    fold: impl Fn(A, I::Seq<'_>) -> A + Sync,
) -> Vec<A> {
    let ranges = crate::current_num_threads() * RANGES_PER_THREAD;
    let mut coarse = grain(base);
    coarse.min = coarse.min.max(base.position_count().div_ceil(ranges));
    let mut accumulators = ordered_parts(base, coarse, |accumulator, items| {
        fold(accumulator.unwrap_or_else(&identity), items)
    });
    if accumulators.is_empty() {
        accumulators.push(identity());
    }
    accumulators
}

/// `iter.try_fold(identity, op)`: the accumulators as [`Fold`]'s, each a failure once
/// `op` returned one, after which it takes no further item.
pub type TryFold<I, R, ID, F> = Computed<TryFolding<I, R, ID, F>>;

/// `iter.try_fold_with(init, op)`: [`TryFold`] with clones of `init` for identity.
pub type TryFoldWith<I, R, F> = TryFold<I, R, CloneOf<<R as Try>::Output>, F>;

/// How a [`TryFold`]'s accumulators are made.
pub struct TryFolding<I, R, ID, F> {
    base: I,
    identity: ID,
    op: F,
    result: PhantomData<fn() -> R>,
}

impl<I: std::fmt::Debug, R, ID, F> std::fmt::Debug for TryFolding<I, R, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFolding")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I: Clone, R, ID: Clone, F: Clone> Clone for TryFolding<I, R, ID, F> {
    fn clone(&self) -> Self {
        TryFolding::new(self.base.clone(), self.identity.clone(), self.op.clone())
    }
}

impl<I, R, ID, F> TryFolding<I, R, ID, F> {
    pub(crate) fn new(base: I, identity: ID, op: F) -> Self {
        TryFolding {
            base,
            identity,
            op,
            result: PhantomData,
        }
    }
}

impl<I, R, ID, F> Make for TryFolding<I, R, ID, F>
where
    I: Drive + Send,
    ID: Identity + Send,
    R: Try<Output = ID::Accumulator> + Send,
    F: Fn(ID::Accumulator, I::Item) -> R + Sync + Send,
{
    type Item = R;

    fn make(self) -> Vec<R> {
        accumulate(
            &self.base,
            || R::from_output(self.identity.make()),
            |accumulator: R, mut items| {
                let folded = match accumulator.branch() {
                    // `Iterator::try_fold` takes no item after a failure.
                    ControlFlow::Continue(output) => {
                        items.try_fold(output, |output, item| (self.op)(output, item).branch())
                    }
                    // Failed in an earlier range: this one's items are not taken.
                    ControlFlow::Break(failure) => ControlFlow::Break(failure),
                };
                match folded {
                    ControlFlow::Continue(output) => R::from_output(output),
                    ControlFlow::Break(failure) => R::from_residual(failure),
                }
            },
        )
    }
}
