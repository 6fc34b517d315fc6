//! Sources whose items are made whole before any is consumed: `fold`'s accumulators (one
//! region), `split`'s pieces (recursive joins), a tree walk's nodes and the items of an
//! unindexed iterator that `intersperse` alternates with its separators. A [`Computed`]
//! makes them the first time a consumer asks for their count, on the consumer's caller
//! (so on the pool it runs on), then hands them out as an owned source.

use super::drive::sealed::Drive;
use super::owned::{Drain, IntoIter};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Set where making the items unwound: the maker may have moved items out of its own
    /// source by then (a `fold` over an owned `Vec`), so it never runs again.
    unwound: AtomicBool,
}

impl<M: Make> Computed<M> {
    pub(crate) fn new(maker: M) -> Computed<M> {
        Computed {
            maker,
            items: OnceLock::new(),
            unwound: AtomicBool::new(false),
        }
    }

    /// The items, made on the first call. Panics if an earlier making unwound (a thread
    /// waiting for it then makes them itself, as `OnceLock` does, and would also panic).
    fn items(&self) -> &IntoIter<M::Item> {
        self.items.get_or_init(|| {
            // Acquire: pairs with the Release store of a making that unwound.
            let unwound = self.unwound.load(Ordering::Acquire);
            assert!(
                !unwound,
                "a parallel iterator's items cannot be made again after making them panicked"
            );
            let guard = MarkUnwound(&self.unwound);
            let items = self.maker.make();
            std::mem::forget(guard);
            IntoIter::new(items)
        })
    }
}

impl<M: Make> std::fmt::Debug for Computed<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let made = self.items.get().map(Drive::position_count);
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

    fn position_count(&self) -> usize {
        self.items().position_count()
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.items().seq(range) }
    }
}

/// Sets its flag when dropped: dropped only where making the items unwound.
struct MarkUnwound<'a>(&'a AtomicBool);

impl Drop for MarkUnwound<'_> {
    fn drop(&mut self) {
        // Release: pairs with the Acquire load of the next making, which then panics.
        self.0.store(true, Ordering::Release);
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
