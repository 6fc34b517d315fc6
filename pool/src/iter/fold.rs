//! `fold(identity, op)`: an accumulator per participant, made by `identity` once however
//! many ranges it claims (rayon makes one per split); the accumulators are the items of a
//! parallel iterator, computed in one region when a consumer first asks for them.

use super::consume;
use super::drive::sealed::Drive;
use super::owned::{Drain, IntoIter};
use std::ops::Range;
use std::sync::OnceLock;

/// The seal: names the type an identity closure makes, so that [`Fold`] has rayon's
/// three type parameters.
pub(crate) mod sealed {
    /// A closure that makes accumulators: `Fn() -> Output`.
    pub trait Identity: Fn() -> <Self as Identity>::Accumulator {
        /// The accumulator.
        type Accumulator;
    }

    impl<T, F: Fn() -> T> Identity for F {
        type Accumulator = T;
    }
}

use sealed::Identity;

/// `iter.fold(identity, op)`: the accumulators, one per participant that took items (one
/// `identity()` when there are none).
#[must_use = "iterators do nothing until consumed"]
pub struct Fold<I, ID: Identity, F> {
    base: I,
    identity: ID,
    op: F,
    /// Made on first use, from a consumer's caller: a region over `base`.
    accumulators: OnceLock<IntoIter<ID::Accumulator>>,
}

impl<I, ID: Identity, F> Fold<I, ID, F> {
    pub(crate) fn new(base: I, identity: ID, op: F) -> Self {
        Fold {
            base,
            identity,
            op,
            accumulators: OnceLock::new(),
        }
    }
}

impl<I: std::fmt::Debug, ID: Identity, F> std::fmt::Debug for Fold<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fold")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, ID, F> Fold<I, ID, F>
where
    I: Drive,
    ID: Identity + Sync,
    ID::Accumulator: Send,
    F: Fn(ID::Accumulator, I::Item) -> ID::Accumulator + Sync,
{
    /// The accumulators, folded in one region over the base on the current pool the first
    /// time they are asked for.
    fn accumulators(&self) -> &IntoIter<ID::Accumulator> {
        self.accumulators.get_or_init(|| {
            let mut accumulators = consume::per_participant(&self.base, |acc, items| {
                let start = acc.take().unwrap_or_else(&self.identity);
                *acc = Some(items.fold(start, &self.op));
            });
            if accumulators.is_empty() {
                accumulators.push((self.identity)());
            }
            IntoIter::new(accumulators)
        })
    }
}

impl<I, ID, F> Drive for Fold<I, ID, F>
where
    I: Drive,
    ID: Identity + Sync,
    ID::Accumulator: Send,
    F: Fn(ID::Accumulator, I::Item) -> ID::Accumulator + Sync,
{
    type Item = ID::Accumulator;
    type Seq<'a>
        = Drain<'a, ID::Accumulator>
    where
        Self: 'a;

    fn positions(&self) -> usize {
        self.accumulators().positions()
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.accumulators().seq(range) }
    }
}
