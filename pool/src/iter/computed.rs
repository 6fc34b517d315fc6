//! Sources whose items are made whole before any is consumed: `fold`'s accumulators (one
//! region), `split`'s pieces (recursive joins), a tree walk's nodes and the items of an
//! unindexed iterator that `intersperse` alternates with its separators. A [`Computed`]
//! makes them the first time a consumer asks for their count, on the consumer's caller
//! (so on the pool it runs on), then hands them out as an owned source.

use super::drive::sealed::Drive;
use super::owned::{Drain, IntoIter};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// The seal: what a [`Computed`] source makes its items with.
pub(crate) mod sealed {
    /// Makes a source's items, in order, once: making consumes the maker.
    pub trait Make: Send {
        /// The items' type.
        type Item: Send;

        /// The items.
        fn make(self) -> Vec<Self::Item>;
    }
}

use sealed::Make;

/// A parallel iterator over items made whole on first use: [`Fold`](super::Fold),
/// [`split`](super::split())'s pieces, [`WalkTreePrefix`](super::WalkTreePrefix) and
/// [`WalkTreePostfix`](super::WalkTreePostfix). Not indexed.
#[must_use = "iterators do nothing until consumed"]
pub struct Computed<M: Make> {
    /// The maker until it runs; taken (and consumed) by the making, so `None` with
    /// `items` unset means the making is under way or unwound.
    maker: Mutex<Option<M>>,
    items: OnceLock<IntoIter<M::Item>>,
}

impl<M: Make> Computed<M> {
    pub(crate) fn new(maker: M) -> Computed<M> {
        Computed {
            maker: Mutex::new(Some(maker)),
            items: OnceLock::new(),
        }
    }

    /// A source whose items are made already.
    fn made(items: IntoIter<M::Item>) -> Computed<M> {
        Computed {
            maker: Mutex::new(None),
            items: OnceLock::from(items),
        }
    }

    /// The items, made on the first call. Panics if an earlier making unwound (a thread
    /// waiting for it then makes them itself, as `OnceLock` does, and finds no maker).
    fn items(&self) -> &IntoIter<M::Item> {
        self.items.get_or_init(|| {
            let Some(maker) = self.maker().take() else {
                panic!(
                    "a parallel iterator's items cannot be made again after making them panicked"
                )
            };
            IntoIter::new(maker.make())
        })
    }

    /// The maker's place, `None` once a making took it. A panic while the lock is held (a
    /// maker's `clone`) leaves the maker as it was: the lock's poison is ignored.
    fn maker(&self) -> MutexGuard<'_, Option<M>> {
        self.maker.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A copy that makes its own items where these are not made yet (from a clone of the
/// maker), else a copy of the items made: the maker of those may have moved items out of
/// its own source (a `fold` over an owned `Vec`), so it is not cloned once it ran.
impl<M> Clone for Computed<M>
where
    M: Make + Clone,
    M::Item: Clone + Sync,
{
    fn clone(&self) -> Self {
        if let Some(items) = self.items.get() {
            return Computed::made(items.clone());
        }
        let maker = self.maker().clone();
        match maker {
            Some(maker) => Computed::new(maker),
            // Taken: being made on another thread (this waits for it) or unwound (this
            // panics, as a consumer would).
            None => Computed::made(self.items().clone()),
        }
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
