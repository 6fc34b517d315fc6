//! How a parallel iterator runs (README "Parallel iterators"): every one is a number of
//! positions (its source's indices), any range of which yields that range's items in order,
//! and its consumer folds the ranges the pipeline hands each participant.

use crate::ops::region::Grain;
use std::ops::Range;

/// The seal: [`Drive`] is a trait of a private module, so only the crate's iterators
/// implement [`ParallelIterator`](super::ParallelIterator).
pub(crate) mod sealed {
    use crate::sync::AtomicBool;
    use std::ops::Range;

    /// What every parallel iterator is underneath: positions and their items.
    pub trait Drive: Sync {
        /// The type of the items.
        type Item: Send;
        /// The items of one range of positions, in order.
        type Seq<'a>: Iterator<Item = Self::Item>
        where
            Self: 'a;

        /// How many positions: the source's length.
        fn position_count(&self) -> usize;

        /// Whether each position yields exactly one item (an indexed iterator: a source,
        /// and `map`, `enumerate`, `zip`, `copied`, `cloned` over indexed ones; a range of
        /// up to `usize::MAX` items, indexed or not).
        fn exact(&self) -> bool;

        /// Whether a position may hold many items, without a bound (a `flat_map`'s, a
        /// range's past `usize::MAX` items): a search then looks at its stop flag between
        /// items, and gathers or searches such positions one at a time. Adaptors pass
        /// their base's on.
        fn coarse(&self) -> bool {
            false
        }

        /// The fewest positions a claimed range should hold, the last excepted
        /// (`with_min_len`); adaptors pass their base's on.
        fn min_len(&self) -> usize {
            1
        }

        /// The most positions a claimed range may hold (`with_max_len`); adaptors pass
        /// their base's on.
        fn max_len(&self) -> usize {
            usize::MAX
        }

        /// A flag the source sets once it yields no further item (`while_some` past a
        /// `None`, `take_any_while` past a failing item): once it is set, the consumers
        /// claim no further range, so that an endless source ends. Adaptors pass their
        /// base's on.
        fn ended(&self) -> Option<&AtomicBool> {
            None
        }

        /// The items of the positions in `range`, in order.
        ///
        /// # Safety
        /// Within `0..position_count()`, and disjoint from every other range asked for by the
        /// same consumer: a mutable source hands out each item once.
        unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_>;
    }
}

pub(crate) use sealed::Drive;

/// Whether a source's [`ended`](Drive::ended) flag, if any, is set. Relaxed: a hint to
/// claim or take no further item; no item's memory depends on it.
pub(crate) fn has_ended(flag: Option<&crate::sync::AtomicBool>) -> bool {
    flag.is_some_and(|flag| flag.load(crate::sync::Ordering::Relaxed))
}

/// The `Drive` methods of an adaptor over `self.base` whose positions are its base's:
/// `position_count`, `coarse`, the grain (`min_len`, `max_len`), `ended`, and `exact` as
/// the base's (`base`), or always `true` or `false`; or (`flat`) each position's items
/// those of many inner iterators: not exact, coarse.
macro_rules! positions_of_base {
    (exact: base) => {
        fn exact(&self) -> bool {
            self.base.exact()
        }
        positions_of_base!(@positions);
        positions_of_base!(@ended);
    };
    (exact: $exact:literal) => {
        fn exact(&self) -> bool {
            $exact
        }
        positions_of_base!(@positions);
        positions_of_base!(@ended);
    };
    (flat) => {
        fn exact(&self) -> bool {
            false
        }
        fn coarse(&self) -> bool {
            true
        }
        fn position_count(&self) -> usize {
            self.base.position_count()
        }
        positions_of_base!(@grain);
        positions_of_base!(@ended);
    };
    (@positions) => {
        fn position_count(&self) -> usize {
            self.base.position_count()
        }
        fn coarse(&self) -> bool {
            self.base.coarse()
        }
        positions_of_base!(@grain);
    };
    (@grain) => {
        fn min_len(&self) -> usize {
            self.base.min_len()
        }

        fn max_len(&self) -> usize {
            self.base.max_len()
        }
    };
    (@ended) => {
        fn ended(&self) -> Option<&crate::sync::AtomicBool> {
            self.base.ended()
        }
    };
}

pub(crate) use positions_of_base;

/// How finely a consumer claims `iter`'s positions.
pub(crate) fn grain<I: Drive>(iter: &I) -> Grain {
    Grain {
        min: iter.min_len(),
        max: iter.max_len(),
    }
}

/// Items with where they stand: `(range start, index in the range)` orders them as the
/// iterator does, also after a `filter`.
pub(crate) type Order = (usize, usize);

/// The items of `range` of `iter`, each with its [`Order`].
///
/// # Safety
/// As [`Drive::seq`].
pub(crate) unsafe fn ordered<I: Drive>(
    iter: &I,
    range: Range<usize>,
) -> impl Iterator<Item = (Order, I::Item)> + '_ {
    let start = range.start;
    // SAFETY: the caller's.
    let items = unsafe { iter.seq(range) };
    items.enumerate().map(move |(k, item)| ((start, k), item))
}
