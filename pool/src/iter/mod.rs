//! Parallel iterators with rayon's names and meanings, on the current pool (README
//! "Parallel iterators"): `use rayforce_pool::prelude::*` and a rayon program's
//! `par_iter()`, `par_iter_mut()` and `into_par_iter()` chains run here. Every iterator is
//! its source's positions, any range of which yields its items in order; a consumer is one
//! pass of the operations' pipeline, a state per participant (made once), so an iterator
//! costs what the index operation it stands on costs.
//!
//! Here: sources over slices (also in chunks), `Vec`s, arrays, `Option`, `Result` and
//! `std`'s other containers, integer and `char` ranges, strings (`crate::str`), `split`,
//! tree walks, `empty`/`once`/`repeat`/`repeat_n` and `par_bridge`; the adaptors `map`,
//! `map_init`/`map_with`, `inspect`, `update`, `filter`, `filter_map`, `flat_map_iter`,
//! `flatten_iter`, `copied`, `cloned`, `enumerate`, `zip`/`zip_eq`, `chain`,
//! `interleave` (and `_shortest`), `intersperse`, `chunks`, `skip`,
//! `take`, `take_any`/`skip_any` (and `_while`), `step_by`, `rev`, `positions`,
//! `fold`/`fold_with` (and `try_`), `fold_chunks`, `with_min_len`/`with_max_len`,
//! `panic_fuse`; the consumers `for_each` (and `_init`/`_with`, and `try_`), `count`,
//! `sum`, `product`, `reduce`, `reduce_with` (and `try_`), `min`, `max` and their `_by`
//! and `_by_key` forms, `any`, `all`, `find_any`, `find_first`, `find_last`,
//! `position_any`, `position_first`, `position_last`, `unzip`, `collect` (and
//! `collect_into_vec`) into `Vec`s and `std`'s other collections, and `par_extend`.

mod adapt;
mod bridge;
mod char_range;
pub(crate) mod chunks;
mod collect;
mod collections;
mod compare;
mod computed;
mod consume;
mod drain;
mod drive;
mod either_iter;
mod extend;
mod flat_map;
mod fold;
mod fold_chunks;
mod generate;
mod grain;
mod grouped;
mod identity;
mod interleave;
mod multizip;
mod owned;
mod panic_fuse;
mod partition;
mod ranges;
mod rayon_paths;
mod reshape;
pub(crate) mod separated;
mod source;
mod split;
mod take_any;
pub(crate) mod text;
mod tries;
mod walk;
mod while_some;
mod with_state;

pub use adapt::{
    Cloned, Copied, Enumerate, Filter, FilterMap, FlatMapIter, FlattenIter, Inspect, Map,
    Positions, Update, Zip, ZipEq,
};
pub use bridge::{IterBridge, ParallelBridge};
use chunks::{ArrayWindows, Cut, CutMut, Pieces, PiecesMut};
pub use collect::FromParallelIterator;
pub use computed::Computed;
pub use drain::{ParallelDrainFull, ParallelDrainRange};
/// Either of two values, as `partition_map` takes: the type rayon re-exports.
pub use either::Either;
pub use extend::ParallelExtend;
pub use flat_map::{FlatMap, Flatten, Inner};
pub use fold::{Fold, FoldWith, Folding, TryFold, TryFoldWith, TryFolding};
pub use fold_chunks::{FoldChunks, FoldChunksWith};
#[allow(deprecated)]
pub use generate::repeatn;
pub use generate::{empty, once, repeat, repeat_n, Empty, Once, Repeat, RepeatN};
pub use grain::{MaxLen, MinLen};
pub use grouped::{Chunks, Groups};
pub use identity::CloneOf;
pub use interleave::{Alternate, Interleave, InterleaveShortest, Intersperse};
pub use multizip::MultiZip;
pub use owned::IntoIter;
pub use panic_fuse::PanicFuse;
use ranges::{IndexedRange, IndexedRangeInclusive};
pub use ranges::{RangeInclusiveIter, RangeIter};
pub use rayon_paths::{range, range_inclusive, vec};
pub use reshape::{Chain, Rev, Skip, StepBy, Take};
pub use source::{
    IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator, Iter, IterMut,
};
pub use split::{split, Cutting, Split};
pub use take_any::{AnyItems, SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile};
pub use walk::{
    walk_tree, walk_tree_postfix, walk_tree_prefix, WalkTree, WalkTreePostfix, WalkTreePrefix,
    Walking,
};
pub use while_some::{UntilNone, WhileSome};
pub use with_state::{MapInit, MapWith};

use drive::sealed::Drive;
use std::cmp::Ordering as CmpOrdering;
use std::iter::{Product, Sum};
use std::ops::ControlFlow;
use tries::{Failed, Try};

/// A parallel iterator, as rayon's trait of the same name: adaptors make new ones, and a
/// consumer runs it on the current pool (the pool whose task, helper or
/// [`install`](crate::Pool::install) this thread is in, else the default pool). Implemented
/// by this crate's iterators only.
pub trait ParallelIterator: Drive + Sized + Send {
    /// `f` of each item.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let lengths: Vec<usize> = ["a", "bb", "ccc"].par_iter().map(|s| s.len()).collect();
    /// assert_eq!(lengths, [1, 2, 3]);
    /// ```
    fn map<R, F>(self, f: F) -> Map<Self, F>
    where
        R: Send,
        F: Fn(Self::Item) -> R + Sync + Send,
    {
        Map { base: self, f }
    }

    /// The same items, each first passed to `f` by reference (to count, log or check them).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let seen = AtomicUsize::new(0);
    /// let total: u32 = (1..=10u32).into_par_iter().inspect(|_| { seen.fetch_add(1, Ordering::Relaxed); }).sum();
    /// assert_eq!((total, seen.into_inner()), (55, 10));
    /// ```
    fn inspect<F>(self, f: F) -> Inspect<Self, F>
    where
        F: Fn(&Self::Item) + Sync + Send,
    {
        Inspect { base: self, f }
    }

    /// The items, each first changed in place by `f`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let padded: Vec<String> =
    ///     vec!["a".to_owned(), "b".to_owned()].into_par_iter().update(|s| s.push('!')).collect();
    /// assert_eq!(padded, ["a!", "b!"]);
    /// ```
    fn update<F>(self, f: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update { base: self, f }
    }

    /// The items for which `pred` holds.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let odd: Vec<u32> = (0..10u32).into_par_iter().filter(|x| x % 2 == 1).collect();
    /// assert_eq!(odd, [1, 3, 5, 7, 9]);
    /// ```
    fn filter<P>(self, pred: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter {
            base: self,
            f: pred,
        }
    }

    /// The `Some` values of `f` of each item.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["1", "x", "3"];
    /// let numbers: Vec<u32> = words.par_iter().filter_map(|w| w.parse().ok()).collect();
    /// assert_eq!(numbers, [1, 3]);
    /// ```
    fn filter_map<R, F>(self, f: F) -> FilterMap<Self, F>
    where
        R: Send,
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
    {
        FilterMap { base: self, f }
    }

    /// The items of the parallel iterator `f` makes of each item, in order, as rayon's
    /// `flat_map` (each inner iterator runs through on the thread that took its item).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let rows = vec![vec![1, 2], vec![], vec![3]];
    /// let doubled: Vec<i32> = rows.par_iter().flat_map(|row| row.par_iter().map(|x| x * 2)).collect();
    /// assert_eq!(doubled, [2, 4, 6]);
    /// ```
    fn flat_map<U, F>(self, f: F) -> FlatMap<Self, F>
    where
        U: IntoParallelIterator,
        F: Fn(Self::Item) -> U + Sync + Send,
    {
        FlatMap { base: self, f }
    }

    /// The items of each item, itself a parallel iterator or a source of one, in order, as
    /// rayon's `flatten`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let rows = vec![vec![1, 2], vec![], vec![3]];
    /// let flat: Vec<i32> = rows.into_par_iter().flatten().collect();
    /// assert_eq!(flat, [1, 2, 3]);
    /// ```
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        Flatten { base: self }
    }

    /// The items of the serial iterator `f` makes of each item, in order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let runs = [1usize, 3, 2];
    /// let flat: Vec<usize> = runs.par_iter().flat_map_iter(|&n| 0..n).collect();
    /// assert_eq!(flat, [0, 0, 1, 2, 0, 1]);
    /// ```
    fn flat_map_iter<U, F>(self, f: F) -> FlatMapIter<Self, F>
    where
        U: IntoIterator,
        U::Item: Send,
        F: Fn(Self::Item) -> U + Sync + Send,
    {
        FlatMapIter { base: self, f }
    }

    /// Copies of the items of an iterator of references.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [1u8, 2, 3];
    /// assert_eq!(xs.par_iter().copied().map(u32::from).sum::<u32>(), 6);
    /// ```
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied { base: self }
    }

    /// Clones of the items of an iterator of references.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let names = [String::from("a"), String::from("b")];
    /// let copies: Vec<String> = names.par_iter().cloned().collect();
    /// assert_eq!(copies, names);
    /// ```
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned { base: self }
    }

    /// `f(&mut state, item)` of each item, `state` made by `init()` once per claimed range
    /// (rayon: once per split), as rayon's `map_init`: for a scratch buffer or a random
    /// number generator a map needs.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let lengths: Vec<usize> = (0..1000u32)
    ///     .into_par_iter()
    ///     .map_init(String::new, |buffer, x| {
    ///         buffer.clear();
    ///         buffer.push_str(&x.to_string());
    ///         buffer.len()
    ///     })
    ///     .collect();
    /// assert_eq!(lengths[999], 3);
    /// ```
    fn map_init<T, INIT, F, R>(self, init: INIT, f: F) -> MapInit<Self, INIT, F>
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapInit {
            base: self,
            init,
            f,
        }
    }

    /// As [`map_init`](Self::map_init), each range's state a clone of `value`, as rayon's
    /// `map_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let shifted: Vec<u32> = (0..4u32).into_par_iter().map_with(10u32, |ten, x| x + *ten).collect();
    /// assert_eq!(shifted, [10, 11, 12, 13]);
    /// ```
    fn map_with<T, F, R>(self, value: T, f: F) -> MapWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapInit {
            base: self,
            init: CloneOf::new(value),
            f,
        }
    }

    /// `f(&mut state, item)` for each item, `state` made by `init()` once per claimed
    /// range, as rayon's `for_each_init`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let total = AtomicUsize::new(0);
    /// (0..100usize).into_par_iter().for_each_init(Vec::new, |seen, x| {
    ///     seen.push(x);
    ///     total.fetch_add(x, Ordering::Relaxed);
    /// });
    /// assert_eq!(total.into_inner(), 4950);
    /// ```
    fn for_each_init<T, INIT, F>(self, init: INIT, f: F)
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_init(init, f).for_each(drop);
    }

    /// `f(&mut state, item)` for each item, each range's state a clone of `value`, as
    /// rayon's `for_each_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::sync::mpsc::channel;
    /// let (sender, receiver) = channel();
    /// (0..5u32).into_par_iter().for_each_with(sender, |s, x| s.send(x).unwrap());
    /// let mut got: Vec<u32> = receiver.iter().collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// ```
    fn for_each_with<T, F>(self, value: T, f: F)
    where
        T: Send + Clone,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_with(value, f).for_each(drop);
    }

    /// The items of this iterator, then those of `other`.
    ///
    /// # Panics
    /// When consumed, if the two have more positions together than a `usize` counts
    /// (ranges of `usize::MAX` items, say).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let both: Vec<u8> = (0..3u8).into_par_iter().chain(7..9u8).collect();
    /// assert_eq!(both, [0, 1, 2, 7, 8]);
    /// ```
    fn chain<C>(self, other: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain::new(self, other.into_par_iter(), "chain")
    }

    /// The items of each item's serial iterator, in order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let rows = vec![vec![1, 2], vec![], vec![3]];
    /// let flat: Vec<i32> = rows.into_par_iter().flatten_iter().collect();
    /// assert_eq!(flat, [1, 2, 3]);
    /// ```
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlattenIter { base: self }
    }

    /// The same items, but once one's processing panicked, no participant takes another
    /// (the panic resumes on the caller as always), as rayon's `panic_fuse`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let outcome = std::panic::catch_unwind(|| {
    ///     (0..1_000_000u32).into_par_iter().panic_fuse().for_each(|x| assert!(x != 10));
    /// });
    /// assert!(outcome.is_err());
    /// ```
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse {
            base: self,
            blown: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The values of the `Some` items until one is `None`; once a participant meets a
    /// `None`, no participant takes another item, as rayon's `while_some`. Which of the
    /// items before it are yielded is not promised: those other participants took.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let all: Vec<u32> = (0..100u32).into_par_iter().map(Some).while_some().collect();
    /// assert_eq!(all.len(), 100);
    /// let some: Vec<u32> = (0..100u32)
    ///     .into_par_iter()
    ///     .map(|x| (x != 50).then_some(x))
    ///     .while_some()
    ///     .collect();
    /// assert!(!some.contains(&50) && some.len() < 100);
    /// ```
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome {
            base: self,
            ended: crate::sync::AtomicBool::new(false),
        }
    }

    /// `n` of the items (all if there are fewer), not necessarily the first: the
    /// participants share one count, as rayon's `take_any`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let some: Vec<u32> = (0..1000u32).into_par_iter().filter(|x| x % 2 == 0).take_any(10).collect();
    /// assert_eq!(some.len(), 10);
    /// assert!(some.iter().all(|x| x % 2 == 0));
    /// ```
    fn take_any(self, n: usize) -> TakeAny<Self> {
        AnyItems::new(self, take_any::TakeCount::new(n))
    }

    /// The items but `n` of them (none if there are fewer), not necessarily the first,
    /// as rayon's `skip_any`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let rest: Vec<u32> = (0..1000u32).into_par_iter().skip_any(990).collect();
    /// assert_eq!(rest.len(), 10);
    /// ```
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        AnyItems::new(self, take_any::SkipCount::new(n))
    }

    /// Items for which `pred` holds, until a participant meets one for which it does not;
    /// none after that, as rayon's `take_any_while`. Which items before it are taken is
    /// not promised.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let small: Vec<u32> = (0..1000u32).into_par_iter().take_any_while(|&x| x < 500).collect();
    /// assert!(small.iter().all(|&x| x < 500));
    /// ```
    fn take_any_while<P>(self, pred: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        AnyItems::new(self, take_any::TakeWhile::new(pred))
    }

    /// Every item but those for which `pred` holds met before a participant met one for
    /// which it does not, as rayon's `skip_any_while`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let large: Vec<u32> = (0..1000u32).into_par_iter().skip_any_while(|&x| x < 500).collect();
    /// assert!((500..1000).all(|x| large.contains(&x)));
    /// ```
    fn skip_any_while<P>(self, pred: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        AnyItems::new(self, take_any::SkipWhile::new(pred))
    }

    /// Calls `op` on each item until one returns a failure (`None`, `Err`,
    /// `ControlFlow::Break`), then no participant takes another item; returns a failure
    /// one met (not necessarily the first in order), else success, as rayon's.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let checked: Result<(), String> = (0..100u32)
    ///     .into_par_iter()
    ///     .try_for_each(|x| if x == 42 { Err(format!("{x} is bad")) } else { Ok(()) });
    /// assert_eq!(checked, Err("42 is bad".to_owned()));
    /// ```
    fn try_for_each<OP, R>(self, op: OP) -> R
    where
        OP: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        tries::until_failure(|failure| {
            self.map(|item| failure.output_of(|| op(item)))
                .while_some()
                .for_each(drop);
        })
    }

    /// As [`try_for_each`](Self::try_for_each), with a clone of `value` as state per
    /// claimed range, as rayon's `try_for_each_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::sync::mpsc::channel;
    /// let (sender, receiver) = channel();
    /// let sent = (0..5u32).into_par_iter().try_for_each_with(sender, |s, x| s.send(x));
    /// assert!(sent.is_ok());
    /// assert_eq!(receiver.iter().count(), 5);
    /// ```
    fn try_for_each_with<OP, T, R>(self, value: T, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Try<Output = ()> + Send,
    {
        tries::until_failure(|failure| {
            self.map_with(value, |state, item| failure.output_of(|| op(state, item)))
                .while_some()
                .for_each(drop);
        })
    }

    /// As [`try_for_each`](Self::try_for_each), with a state made by `init()` per claimed
    /// range, as rayon's `try_for_each_init`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let parsed: Option<()> = ["1", "22", "x"]
    ///     .par_iter()
    ///     .try_for_each_init(String::new, |buffer, s| {
    ///         buffer.clear();
    ///         buffer.push_str(s);
    ///         buffer.parse::<u32>().ok().map(drop)
    ///     });
    /// assert_eq!(parsed, None);
    /// ```
    fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        tries::until_failure(|failure| {
            self.map_init(init, |state, item| failure.output_of(|| op(state, item)))
                .while_some()
                .for_each(drop);
        })
    }

    /// The items' outputs combined by `op` in the items' order (`identity()` when there
    /// are none), until an item or a combination is a failure, as rayon's `try_reduce`:
    /// then a failure met (not necessarily the first in order).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let sum = (1..=100u32).into_par_iter().map(Some).try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(sum, Some(5050));
    /// let overflow = (1..=100u8).into_par_iter().map(Some).try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(overflow, None);
    /// ```
    fn try_reduce<T, OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        self.try_reduce_with(op)
            .unwrap_or_else(|| Self::Item::from_output(identity()))
    }

    /// As [`try_reduce`](Self::try_reduce) with no identity: `None` when there are no
    /// items, as rayon's `try_reduce_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let max: Option<Result<u32, String>> =
    ///     (1..=10u32).into_par_iter().map(Ok).try_reduce_with(|a, b| Ok(a.max(b)));
    /// assert_eq!(max, Some(Ok(10)));
    /// ```
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        // A failure, of an item or of `op`, is carried to the result (the reduction keeps
        // it, in order) and stops the participants taking further items.
        let failed = Failed::default();
        self.map(|item| failed.pass(item))
            .while_some()
            .reduce_with(|a, b| match (a.branch(), b.branch()) {
                (ControlFlow::Continue(a), ControlFlow::Continue(b)) => failed.note(op(a, b)),
                (ControlFlow::Break(failure), _) | (_, ControlFlow::Break(failure)) => {
                    Self::Item::from_residual(failure)
                }
            })
    }

    /// Calls `f` on each item.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let total = AtomicU64::new(0);
    /// (1..=100u64).collect::<Vec<_>>().par_iter().for_each(|&x| {
    ///     total.fetch_add(x, Ordering::Relaxed);
    /// });
    /// assert_eq!(total.into_inner(), 5050);
    /// ```
    fn for_each<F>(self, f: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        consume::for_each(&self, &f);
    }

    /// The accumulators of `op` over the items, each made by `identity()`: a parallel
    /// iterator of them, in the items' order (each folds a run of adjacent items), to
    /// `reduce`, `sum` or `collect`, as rayon's. Unlike rayon's, `identity` runs at most
    /// once per thread of the pool whatever the number of items (rayon's runs once per
    /// split, as often as it splits): an expensive accumulator (a buffer, a map) is made
    /// once per thread, not thousands of times; one `identity()` when there are no items.
    /// Its ranges are a thread's share whatever `with_max_len` asks before it.
    ///
    /// A group-by, a map per accumulator:
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::HashMap;
    /// let keys: Vec<u32> = (0..10_000).map(|i| i % 7).collect();
    /// let counts = keys
    ///     .par_iter()
    ///     .fold(HashMap::<u32, u64>::new, |mut map, &k| {
    ///         *map.entry(k).or_default() += 1;
    ///         map
    ///     })
    ///     .reduce(HashMap::new, |mut a, b| {
    ///         b.into_iter().for_each(|(k, n)| *a.entry(k).or_default() += n);
    ///         a
    ///     });
    /// assert_eq!(counts[&0], 1429);
    /// ```
    fn fold<T, ID, F>(self, identity: ID, op: F) -> Fold<Self, ID, F>
    where
        T: Send,
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        Computed::new(Folding::new(self, identity, op))
    }

    /// As [`fold`](Self::fold), while `op` succeeds (`Some`, `Ok`,
    /// `ControlFlow::Continue`), as rayon's `try_fold`: each accumulator that met a
    /// failure ends as that failure, and folds no more items.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let sums: Option<u32> = (1..=100u32)
    ///     .into_par_iter()
    ///     .try_fold(|| 0u32, |a, x| a.checked_add(x))
    ///     .try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(sums, Some(5050));
    /// ```
    fn try_fold<T, R, ID, F>(self, identity: ID, op: F) -> TryFold<Self, R, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        Computed::new(TryFolding::new(self, identity, op))
    }

    /// As [`try_fold`](Self::try_fold), each accumulator from a clone of `init`, as
    /// rayon's `try_fold_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let lengths: Result<usize, String> = ["a", "bb", "ccc"]
    ///     .par_iter()
    ///     .try_fold_with(0usize, |n, s| Ok(n + s.len()))
    ///     .try_reduce(|| 0, |a, b| Ok(a + b));
    /// assert_eq!(lengths, Ok(6));
    /// ```
    fn try_fold_with<F, T, R>(self, init: T, op: F) -> TryFoldWith<Self, R, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        T: Clone + Send,
        R: Try<Output = T> + Send,
    {
        Computed::new(TryFolding::new(self, CloneOf::new(init), op))
    }

    /// As [`fold`](Self::fold), each accumulator a clone of `init`, as rayon's `fold_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let total: u64 = (1..=100u64).into_par_iter().fold_with(0, |a, b| a + b).sum();
    /// assert_eq!(total, 5050);
    /// ```
    fn fold_with<T, F>(self, init: T, op: F) -> FoldWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        Computed::new(Folding::new(self, CloneOf::new(init), op))
    }

    /// How many items there are.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().filter(|x| x % 3 == 0).count(), 334);
    /// ```
    fn count(self) -> usize {
        consume::count(&self)
    }

    /// The sum of the items (`S::sum` of nothing when there are none). Each range is one
    /// `Iterator::sum`, which the compiler vectorises where it can.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<f64> = (0..1000).map(f64::from).collect();
    /// assert_eq!(xs.par_iter().map(|x| x * 2.0).sum::<f64>(), 999_000.0);
    /// ```
    fn sum<S>(self) -> S
    where
        S: Send + Sum<Self::Item> + Sum<S>,
    {
        consume::sum(&self)
    }

    /// The product of the items (`P::product` of nothing when there are none).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((1..=10u64).into_par_iter().product::<u64>(), 3_628_800);
    /// ```
    fn product<P>(self) -> P
    where
        P: Send + Product<Self::Item> + Product<P>,
    {
        consume::product(&self)
    }

    /// `op` over the items in their order, `identity()` when there are none. `op` must be
    /// associative (it need not commute: the ranges are combined in order), and
    /// `identity()` its identity, as rayon's `reduce`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["par", "al", "lel"];
    /// let joined = words
    ///     .par_iter()
    ///     .map(|w| w.to_string())
    ///     .reduce(String::new, |a, b| a + &b);
    /// assert_eq!(joined, "parallel");
    /// ```
    fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        consume::reduce_with(&self, &op).unwrap_or_else(identity)
    }

    /// `op` over the items in their order, `None` when there are none; `op` associative,
    /// as rayon's `reduce_with`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((1..5u32).into_par_iter().reduce_with(|a, b| a * 10 + b), Some(1234));
    /// ```
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        consume::reduce_with(&self, &op)
    }

    /// The least item (the first of equal ones), `None` when there are none.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!([5, 3, 9].par_iter().min(), Some(&3));
    /// ```
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        consume::best(&self, &|(order, x), (best_order, best)| {
            (x, order) < (best, best_order)
        })
    }

    /// The greatest item (the last of equal ones), `None` when there are none.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!([5, 3, 9].par_iter().max(), Some(&9));
    /// ```
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        consume::best(&self, &|(order, x), (best_order, best)| {
            (x, order) > (best, best_order)
        })
    }

    /// The least item by `compare` (the first of equal ones), `None` when there are none.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [2.5f64, -1.0, 7.0];
    /// assert_eq!(xs.par_iter().copied().min_by(f64::total_cmp), Some(-1.0));
    /// ```
    fn min_by<F>(self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> CmpOrdering + Sync + Send,
    {
        consume::best(&self, &|(order, x), (best_order, best)| {
            compare(x, best).then(order.cmp(best_order)) == CmpOrdering::Less
        })
    }

    /// The greatest item by `compare` (the last of equal ones), `None` when there are none.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [2.5f64, -1.0, 7.0];
    /// assert_eq!(xs.par_iter().copied().max_by(f64::total_cmp), Some(7.0));
    /// ```
    fn max_by<F>(self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> CmpOrdering + Sync + Send,
    {
        consume::best(&self, &|(order, x), (best_order, best)| {
            compare(x, best).then(order.cmp(best_order)) == CmpOrdering::Greater
        })
    }

    /// The item whose `key` is least (the first of equal ones), `None` when there are
    /// none; `key` runs once per item.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["ccc", "a", "bb", "d"];
    /// assert_eq!(words.par_iter().min_by_key(|w| w.len()), Some(&"a"));
    /// ```
    fn min_by_key<K, F>(self, key: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        let keyed = self.map(|item| (key(&item), item));
        let least = consume::best(&keyed, &|(order, (k, _)), (best_order, (best, _))| {
            (k, order) < (best, best_order)
        });
        least.map(|(_, item)| item)
    }

    /// The item whose `key` is greatest (the last of equal ones), `None` when there are
    /// none; `key` runs once per item.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["ccc", "a", "bbb", "d"];
    /// assert_eq!(words.par_iter().max_by_key(|w| w.len()), Some(&"bbb"));
    /// ```
    fn max_by_key<K, F>(self, key: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        let keyed = self.map(|item| (key(&item), item));
        let greatest = consume::best(&keyed, &|(order, (k, _)), (best_order, (best, _))| {
            (k, order) > (best, best_order)
        });
        greatest.map(|(_, item)| item)
    }

    /// Whether `pred` holds for some item; stops looking once one is found.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!((0..1000u32).into_par_iter().any(|x| x * x == 400));
    /// ```
    fn any<P>(self, pred: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(pred).find_any(|&holds| holds).is_some()
    }

    /// Whether `pred` holds for every item (true when there are none); stops looking once
    /// one fails.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!((0..1000u32).into_par_iter().all(|x| x < 1000));
    /// ```
    fn all<P>(self, pred: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(pred).find_any(|&holds| !holds).is_none()
    }

    /// A value `f` maps an item to, not necessarily the first item's; once one is found, no
    /// participant looks further, as rayon's `find_map_any`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["a", "7", "b", "9"];
    /// let number = words.par_iter().find_map_any(|w| w.parse::<u32>().ok());
    /// assert!(matches!(number, Some(7 | 9)));
    /// ```
    fn find_map_any<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(f).find_any(|_| true)
    }

    /// The value `f` maps the first item it maps at all to, in the iterator's order, as
    /// rayon's `find_map_first`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["a", "7", "b", "9"];
    /// assert_eq!(words.par_iter().find_map_first(|w| w.parse::<u32>().ok()), Some(7));
    /// ```
    fn find_map_first<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(f).find_first(|_| true)
    }

    /// The items split by `pred` into two collections, those for which it holds first,
    /// each in the iterator's order, as rayon's `partition`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let (even, odd): (Vec<u32>, Vec<u32>) = (0..7u32).into_par_iter().partition(|x| x % 2 == 0);
    /// assert_eq!((even, odd), (vec![0, 2, 4, 6], vec![1, 3, 5]));
    /// ```
    fn partition<A, B, P>(self, pred: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        partition::partition_map(self, |item| {
            if pred(&item) {
                Either::Left(item)
            } else {
                Either::Right(item)
            }
        })
    }

    /// The items mapped by `f` to either side, each side gathered into its collection in
    /// the iterator's order, as rayon's `partition_map`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use rayforce_pool::iter::Either;
    /// let (numbers, words): (Vec<u32>, Vec<&str>) = ["1", "a", "2"]
    ///     .par_iter()
    ///     .partition_map(|w| w.parse::<u32>().map_or(Either::Right(*w), Either::Left));
    /// assert_eq!((numbers, words), (vec![1, 2], vec!["a"]));
    /// ```
    fn partition_map<A, B, P, L, R>(self, f: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        partition::partition_map(self, f)
    }

    /// The items with a clone of `separator` between each two, as rayon's `intersperse`.
    /// An indexed iterator's positions alternate with the separators'; any other's items
    /// are gathered into a `Vec` first, in order, when the result is first consumed (all
    /// of them, also for a search that stops early), and the result is not indexed.
    /// `Intersperse` is `Clone` for an indexed iterator only.
    ///
    /// # Panics
    /// If an indexed iterator's items and their separators are more than a `usize` counts.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let listed: String = ["a", "b", "c"].par_iter().copied().intersperse(", ").collect();
    /// assert_eq!(listed, "a, b, c");
    /// let csv = "1,2,,3";
    /// let fields: String = csv.par_split(',').filter(|f| !f.is_empty()).intersperse(";").collect();
    /// assert_eq!(fields, "1;2;3");
    /// ```
    fn intersperse(self, separator: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, separator)
    }

    /// How many items there are, if known without running the iterator (an indexed one's
    /// length), as rayon's `opt_len`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..10u32).into_par_iter().opt_len(), Some(10));
    /// assert_eq!((0..10u32).into_par_iter().filter(|x| x % 2 == 0).opt_len(), None);
    /// ```
    fn opt_len(&self) -> Option<usize> {
        self.exact().then(|| self.position_count())
    }

    /// The items gathered into a list of `Vec`s, as rayon's `collect_vec_list`: here one
    /// `Vec`, in the iterator's order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let list = (0..4u32).into_par_iter().collect_vec_list();
    /// assert_eq!(list.into_iter().flatten().collect::<Vec<_>>(), [0, 1, 2, 3]);
    /// ```
    fn collect_vec_list(self) -> std::collections::LinkedList<Vec<Self::Item>> {
        std::collections::LinkedList::from([self.collect()])
    }

    /// An item for which `pred` holds, not necessarily the first; once one is found, no
    /// participant looks further.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).collect();
    /// assert_eq!(xs.par_iter().find_any(|&&x| x == 77_777), Some(&77_777));
    /// ```
    fn find_any<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        consume::find_any(&self, &pred).map(|(_, item)| item)
    }

    /// The first item, in the iterator's order, for which `pred` holds.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).map(|i| i % 1000).collect();
    /// let first = xs.par_iter().enumerate().find_first(|&(_, &x)| x == 999);
    /// assert_eq!(first, Some((999, &999)));
    /// ```
    fn find_first<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        consume::find_first(&self, &pred).map(|(_, item)| item)
    }

    /// The last item, in the iterator's order, for which `pred` holds. Ranges are searched
    /// from the back; one before the latest match found is skipped.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).map(|i| i % 1000).collect();
    /// let last = xs.par_iter().enumerate().find_last(|&(_, &x)| x == 0);
    /// assert_eq!(last, Some((99_000, &0)));
    /// ```
    fn find_last<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        consume::find_last(&self, &pred).map(|(_, item)| item)
    }

    /// The `Some` value of `f` of the last item, in the iterator's order, that has one.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = ["1", "x", "3", "y"];
    /// assert_eq!(words.par_iter().find_map_last(|w| w.parse::<u32>().ok()), Some(3));
    /// ```
    fn find_map_last<F, R>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
    {
        self.filter_map(f).find_last(|_| true)
    }

    /// The items, gathered into `C` (a `Vec` keeps their order).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let squares: Vec<u64> = (0..5u64).into_par_iter().map(|x| x * x).collect();
    /// assert_eq!(squares, [0, 1, 4, 9, 16]);
    /// ```
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }

    /// The pairs' first and second items, each gathered into its collection in order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let (small, squares): (Vec<u32>, Vec<u32>) =
    ///     (0..4u32).into_par_iter().map(|x| (x, x * x)).unzip();
    /// assert_eq!((small, squares), (vec![0, 1, 2, 3], vec![0, 1, 4, 9]));
    /// ```
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
    {
        <(FromA, FromB)>::from_par_iter(self)
    }
}

impl<I: Drive + Send> ParallelIterator for I {}

/// A parallel iterator that knows its length and each item's index, as rayon's trait of
/// the same name: sources, and `map`, `copied`, `cloned`, `enumerate` and `zip` over them.
// As rayon's trait: `len` and no `is_empty`.
#[allow(clippy::len_without_is_empty)]
pub trait IndexedParallelIterator: ParallelIterator {
    /// How many items there are.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..10u8).into_par_iter().len(), 10);
    /// ```
    fn len(&self) -> usize {
        self.position_count()
    }

    /// The items after the first `n`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..10u32).into_par_iter().skip(7).collect::<Vec<_>>(), [7, 8, 9]);
    /// ```
    fn skip(self, n: usize) -> Skip<Self> {
        Skip { base: self, n }
    }

    /// The first `n` items.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..10u32).into_par_iter().take(3).collect::<Vec<_>>(), [0, 1, 2]);
    /// ```
    fn take(self, n: usize) -> Take<Self> {
        Take { base: self, n }
    }

    /// Every `step`th item, from the first.
    ///
    /// # Panics
    /// If `step` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..10u32).into_par_iter().step_by(4).collect::<Vec<_>>(), [0, 4, 8]);
    /// ```
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by: step must not be zero");
        StepBy { base: self, step }
    }

    /// The items in reverse order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!((0..4u32).into_par_iter().rev().collect::<Vec<_>>(), [3, 2, 1, 0]);
    /// ```
    fn rev(self) -> Rev<Self> {
        Rev { base: self }
    }

    /// Each item with its index.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pairs: Vec<(usize, char)> = ['a', 'b'].par_iter().copied().enumerate().collect();
    /// assert_eq!(pairs, [(0, 'a'), (1, 'b')]);
    /// ```
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate { base: self }
    }

    /// Pairs of the items at the same index of this and `other`, as many as the shorter
    /// has.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let (a, b) = (vec![1, 2, 3], vec![10, 20, 30]);
    /// let sums: Vec<i32> = a.par_iter().zip(&b).map(|(x, y)| x + y).collect();
    /// assert_eq!(sums, [11, 22, 33]);
    /// ```
    fn zip<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// The items, in order, into `target`, whose items are dropped first and whose storage
    /// is reused (grown once if too small), as rayon's `collect_into_vec`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut squares = Vec::with_capacity(100);
    /// (0..100u32).into_par_iter().map(|x| x * x).collect_into_vec(&mut squares);
    /// assert_eq!((squares[9], squares.len()), (81, 100));
    /// ```
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        target.clear();
        target.par_extend(self);
    }

    /// The pairs' first and second items into `left` and `right`, each cleared first and
    /// its buffer reused, as rayon's `unzip_into_vecs`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let (mut small, mut squares) = (vec![9], Vec::new());
    /// (0..3u32).into_par_iter().map(|x| (x, x * x)).unzip_into_vecs(&mut small, &mut squares);
    /// assert_eq!((small, squares), (vec![0, 1, 2], vec![0, 1, 4]));
    /// ```
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        left.clear();
        right.clear();
        let mut pair = (std::mem::take(left), std::mem::take(right));
        pair.par_extend(self);
        (*left, *right) = pair;
    }

    /// This iterator's items against `other`'s, lexicographically (the first pair that
    /// differs decides, else the shorter is less), as rayon's and `std`'s `cmp`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::cmp::Ordering;
    /// let (a, b) = (vec![1, 2, 3], vec![1, 2, 4]);
    /// assert_eq!(a.par_iter().cmp(&b), Ordering::Less);
    /// assert_eq!(a.par_iter().cmp(&a[..2]), Ordering::Greater);
    /// ```
    fn cmp<I>(self, other: I) -> CmpOrdering
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
        Self::Item: Ord,
    {
        let order = compare::lexicographic(self, other, |a, b| Some(Ord::cmp(&a, &b)));
        order.expect("a total order compares every pair")
    }

    /// As [`cmp`](Self::cmp), by `PartialOrd`: `None` where the first pair that is not
    /// equal does not compare, as rayon's and `std`'s `partial_cmp`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::cmp::Ordering;
    /// let (a, b) = (vec![1.0, f64::NAN], vec![2.0, 0.0]);
    /// assert_eq!(a.par_iter().partial_cmp(&b), Some(Ordering::Less));
    /// assert_eq!(b.par_iter().partial_cmp(&a), Some(Ordering::Greater));
    /// assert_eq!(a[1..].par_iter().partial_cmp(&b[1..]), None);
    /// ```
    fn partial_cmp<I>(self, other: I) -> Option<CmpOrdering>
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        compare::lexicographic(self, other, |a, b| PartialOrd::partial_cmp(&a, &b))
    }

    /// Whether both have equal items at every index and the same length, as rayon's `eq`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let a = vec![1, 2, 3];
    /// assert!(a.par_iter().eq(&vec![1, 2, 3]));
    /// assert!(!a.par_iter().eq(&a[..2]));
    /// ```
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(a, b)| a == b)
    }

    /// Whether they differ, as rayon's `ne`: `!eq`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!(vec![1, 2].par_iter().ne(&vec![2, 1]));
    /// ```
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        !self.eq(other)
    }

    /// Whether this is lexicographically less than `other`, as rayon's `lt`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!(vec![1, 2].par_iter().lt(&vec![1, 3]));
    /// ```
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(CmpOrdering::Less)
    }

    /// Whether this is lexicographically less than or equal to `other`, as rayon's `le`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!(vec![1, 2].par_iter().le(&vec![1, 2]));
    /// ```
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(CmpOrdering::Less | CmpOrdering::Equal)
        )
    }

    /// Whether this is lexicographically greater than `other`, as rayon's `gt`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!(vec![2].par_iter().gt(&vec![1, 9]));
    /// ```
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(CmpOrdering::Greater)
    }

    /// Whether this is lexicographically greater than or equal to `other`, as rayon's
    /// `ge`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert!(vec![1, 2].par_iter().ge(&vec![1]));
    /// ```
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(CmpOrdering::Greater | CmpOrdering::Equal)
        )
    }

    /// The same iterator. Rayon's `by_exponential_blocks` consumes blocks of growing size one
    /// after another, so that `find_first` can stop after the first block with a match; the
    /// pipeline's `find_first` already skips every range that starts past the earliest match
    /// found, so here no blocks are needed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).collect();
    /// assert_eq!(xs.par_iter().by_exponential_blocks().find_first(|&&x| x > 10), Some(&11));
    /// ```
    fn by_exponential_blocks(self) -> Self {
        self
    }

    /// The same iterator, as [`by_exponential_blocks`](Self::by_exponential_blocks) says why.
    ///
    /// # Panics
    /// If `block_size` is 0, as rayon's.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).collect();
    /// assert_eq!(xs.par_iter().by_uniform_blocks(1000).find_first(|&&x| x > 10), Some(&11));
    /// ```
    fn by_uniform_blocks(self, block_size: usize) -> Self {
        assert!(
            block_size != 0,
            "by_uniform_blocks: block_size must not be zero"
        );
        self
    }

    /// The same items, claimed in ranges of at least `min` positions (the last excepted):
    /// for items so cheap that the pool's clock-sized claims would cut them too finely, or
    /// to keep a per-range cost (a buffer, a connection) rare. Rayon's hint, kept exactly.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::sync::Mutex;
    /// let sizes = Mutex::new(Vec::new());
    /// (0..10_000u32).into_par_iter().with_min_len(1000).fold(|| 0, |n, _| n + 1).for_each(|n| {
    ///     sizes.lock().unwrap().push(n);
    /// });
    /// assert_eq!(sizes.into_inner().unwrap().iter().sum::<usize>(), 10_000);
    /// ```
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        MinLen {
            base: self,
            len: min.max(1),
        }
    }

    /// The same items, claimed in ranges of at most `max` positions: for items whose cost
    /// varies so much that one claim of many could hold the region up, or (at 1) to run each
    /// item as a task of its own, so that a panicking item stops no other. A `fold` after it
    /// claims ranges of a thread's share all the same (`fold`).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let total: u32 = (0..100u32).into_par_iter().with_max_len(1).map(|x| x * x).sum();
    /// assert_eq!(total, 328_350);
    /// ```
    fn with_max_len(self, max: usize) -> MaxLen<Self> {
        MaxLen {
            base: self,
            len: max.max(1),
        }
    }

    /// Each run of `chunk_size` items (the last may be shorter) folded into one value, from
    /// `identity()`, in order: an indexed iterator of them, as rayon's `fold_chunks`.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let sums: Vec<u32> = (1..8u32).into_par_iter().fold_chunks(3, || 0, |a, b| a + b).collect();
    /// assert_eq!(sums, [6, 15, 7]);
    /// ```
    fn fold_chunks<T, ID, F>(
        self,
        chunk_size: usize,
        identity: ID,
        op: F,
    ) -> FoldChunks<Self, ID, F>
    where
        T: Send,
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        FoldChunks::new(self, chunk_size, identity, op)
    }

    /// As [`fold_chunks`](Self::fold_chunks), each chunk's fold from a clone of `init`.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let products: Vec<u64> = (1..7u16).into_par_iter().map(u64::from)
    ///     .fold_chunks_with(2, 1, |a, b| a * b).collect();
    /// assert_eq!(products, [2, 12, 30]);
    /// ```
    fn fold_chunks_with<T, F>(self, chunk_size: usize, init: T, op: F) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        FoldChunks::new(self, chunk_size, CloneOf::new(init), op)
    }

    /// The index of an item for which `pred` holds, not necessarily the first; once one is
    /// found, no participant looks further.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).collect();
    /// assert_eq!(xs.par_iter().position_any(|&x| x == 4242), Some(4242));
    /// ```
    fn position_any<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        consume::position_any(&self, &pred)
    }

    /// The index of the last item for which `pred` holds. Ranges are searched from the
    /// back; one before the latest match found is skipped.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).map(|i| i % 1000).collect();
    /// assert_eq!(xs.par_iter().position_last(|&x| x == 0), Some(99_000));
    /// ```
    fn position_last<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let found = consume::find_last(&self.map(pred), &|&holds| holds);
        found.map(|((start, k), _)| start + k)
    }

    /// The indices of the items for which `pred` holds, in order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs = [3, 0, 5, 0];
    /// assert_eq!(xs.par_iter().positions(|&x| x == 0).collect::<Vec<_>>(), [1, 3]);
    /// ```
    fn positions<P>(self, pred: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let index_if_held: fn((usize, bool)) -> Option<usize> =
            |(index, holds)| holds.then_some(index);
        self.map(pred).enumerate().filter_map(index_if_held)
    }

    /// Pairs of the items at the same index of this and `other`, which must be as long,
    /// as rayon's `zip_eq`.
    ///
    /// # Panics
    /// If the lengths differ.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let (a, b) = (vec![1, 2, 3], vec![10, 20, 30]);
    /// let sums: Vec<i32> = a.par_iter().zip_eq(&b).map(|(x, y)| x + y).collect();
    /// assert_eq!(sums, [11, 22, 33]);
    /// ```
    fn zip_eq<Z>(self, other: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let (len, other_len) = (self.len(), other.len());
        assert!(
            len == other_len,
            "zip_eq: the iterators' lengths differ ({len} and {other_len})"
        );
        Zip { a: self, b: other }
    }

    /// The items gathered `chunk_size` to a `Vec`, in order, the last `Vec` shorter when
    /// `chunk_size` does not divide the length, as rayon's `chunks`.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let groups: Vec<Vec<u32>> = (0..7u32).into_par_iter().chunks(3).collect();
    /// assert_eq!(groups, [vec![0, 1, 2], vec![3, 4, 5], vec![6]]);
    /// ```
    fn chunks(self, chunk_size: usize) -> Chunks<Self> {
        assert!(chunk_size != 0, "chunks: chunk_size must not be zero");
        Chunks::new(self, chunk_size)
    }

    /// This iterator's first item, `other`'s first, this one's second, ..., then the rest
    /// of the longer one, as rayon's `interleave`.
    ///
    /// # Panics
    /// When consumed, if the two lengths add up to more than a `usize` counts.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mixed: Vec<u32> = (0..3u32).into_par_iter().interleave(10..15u32).collect();
    /// assert_eq!(mixed, [0, 10, 1, 11, 2, 12, 13, 14]);
    /// ```
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
    {
        Interleave::new(self, other.into_par_iter())
    }

    /// As [`interleave`](Self::interleave), until either runs out, as rayon's
    /// `interleave_shortest` (one more item of this one when it is the longer).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mixed: Vec<u32> = (0..3u32).into_par_iter().interleave_shortest(10..15u32).collect();
    /// assert_eq!(mixed, [0, 10, 1, 11, 2, 12]);
    /// let longer: Vec<u32> = (0..5u32).into_par_iter().interleave_shortest(10..12u32).collect();
    /// assert_eq!(longer, [0, 10, 1, 11, 2]);
    /// ```
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let (len, other_len) = (self.len(), other.len());
        let (take, other_take) = if len <= other_len {
            (len, len)
        } else {
            (other_len + 1, other_len)
        };
        Interleave::new(self.take(take), other.take(other_take))
    }

    /// The index of the first item for which `pred` holds.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let xs: Vec<u32> = (0..100_000).map(|i| i % 1000).collect();
    /// assert_eq!(xs.par_iter().position_first(|&x| x == 999), Some(999));
    /// ```
    fn position_first<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let found = consume::find_first(&self.map(pred), &|&holds| holds);
        found.map(|((start, k), _)| start + k)
    }
}

impl<'data, T: Sync + 'data> IndexedParallelIterator for Iter<'data, T> {}
impl<'data, T: Send + 'data> IndexedParallelIterator for IterMut<'data, T> {}
impl<T: Send> IndexedParallelIterator for IntoIter<T> {}
impl IndexedParallelIterator for text::Bytes<'_> {}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Chunks<I> {}
impl<'data, T: Sync + 'data, K: Cut> IndexedParallelIterator for Pieces<'data, T, K> {}
impl<'data, T: Sync + 'data, const N: usize> IndexedParallelIterator for ArrayWindows<'data, T, N> {}
impl<'data, T: Send + 'data, K: CutMut> IndexedParallelIterator for PiecesMut<'data, T, K> {}
impl<T: IndexedRange> IndexedParallelIterator for RangeIter<T> where RangeIter<T>: ParallelIterator {}
impl<T: IndexedRangeInclusive> IndexedParallelIterator for RangeInclusiveIter<T> where
    RangeInclusiveIter<T>: ParallelIterator
{
}
impl<I, F> IndexedParallelIterator for Inspect<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(&I::Item) + Sync + Send,
{
}
impl<I, F, R> IndexedParallelIterator for Map<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
}
impl<'t, I, T> IndexedParallelIterator for Copied<I>
where
    I: IndexedParallelIterator<Item = &'t T>,
    T: Copy + Send + Sync + 't,
{
}
impl<'t, I, T> IndexedParallelIterator for Cloned<I>
where
    I: IndexedParallelIterator<Item = &'t T>,
    T: Clone + Send + Sync + 't,
{
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {}
impl<A, B> IndexedParallelIterator for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
}
impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone,
{
}
impl<I, F> IndexedParallelIterator for Update<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(&mut I::Item) + Sync + Send,
{
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for MinLen<I> {}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Skip<I> {}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Take<I> {}
impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Rev<I> {}
impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {}
impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
}
impl<I, INIT, F, R> IndexedParallelIterator for MapInit<I, INIT, F>
where
    I: IndexedParallelIterator,
    INIT: identity::sealed::Identity + Send,
    F: Fn(&mut INIT::Accumulator, I::Item) -> R + Sync + Send,
    R: Send,
{
}
impl<I, ID, F> IndexedParallelIterator for FoldChunks<I, ID, F>
where
    I: IndexedParallelIterator,
    ID: identity::sealed::Identity + Send,
    ID::Accumulator: Send,
    F: Fn(ID::Accumulator, I::Item) -> ID::Accumulator + Sync + Send,
{
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for MaxLen<I> {}
impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator for Zip<A, B> {}
impl<T: Send> IndexedParallelIterator for Empty<T> {}
impl<T: Send> IndexedParallelIterator for Once<T> {}
impl<T: Clone + Send> IndexedParallelIterator for RepeatN<T> {}
