//! Sources whose items are made whole before any is consumed: `fold`'s accumulators (one
//! region), `split`'s pieces (recursive joins) and a tree walk's nodes. A [`Computed`]
//! makes them the first time a consumer asks for their count, on the consumer's caller
//! (so on the pool it runs on), then hands them out as an owned source.

use super::drive::sealed::Drive;
use super::owned::{Drain, IntoIter};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

/// The seal: what a [`Computed`] source makes its items with.
pub(crate) mod sealed {
    /// Makes a source's items, in order, once.
    pub trait Make: Sync {
        /// The items' type.
        type Item: Send;

        /// The items.
        fn make(&self) -> Vec<Self::Item>;
    }
}

use sealed::Make;

/// A parallel iterator over items made whole on first use: [`Fold`](super::Fold),
/// [`split`](super::split())'s pieces, [`WalkTreePrefix`](super::WalkTreePrefix) and
/// [`WalkTreePostfix`](super::WalkTreePostfix). Not indexed.
#[must_use = "iterators do nothing until consumed"]
pub struct Computed<M: Make> {
    maker: M,
    items: OnceLock<IntoIter<M::Item>>,
}

impl<M: Make> Computed<M> {
    pub(crate) fn new(maker: M) -> Computed<M> {
        Computed {
            maker,
            items: OnceLock::new(),
        }
    }

    fn items(&self) -> &IntoIter<M::Item> {
        self.items.get_or_init(|| IntoIter::new(self.maker.make()))
    }
}

impl<M: Make> std::fmt::Debug for Computed<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let made = self.items.get().map(Drive::positions);
        f.debug_struct("Computed")
            .field("made", &made)
            .finish_non_exhaustive()
    }
}

impl<M: Make> Drive for Computed<M> {
    type Item = M::Item;
    type Seq<'a>
        = Drain<'a, M::Item>
    where
        Self: 'a;

    fn positions(&self) -> usize {
        self.items().positions()
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.items().seq(range) }
    }
}

/// A value a maker consumes once, behind a lock so that the maker is `Sync` for any
/// `Send` value.
pub(crate) struct Once<T>(Mutex<Option<T>>);

impl<T> Once<T> {
    pub(crate) fn new(value: T) -> Once<T> {
        Once(Mutex::new(Some(value)))
    }

    /// The value; `None` after the first call (a maker runs once).
    pub(crate) fn take(&self) -> Option<T> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}
