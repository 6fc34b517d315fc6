//! The sources made of no collection, as rayon's `iter::{empty, once, repeat, repeat_n}`:
//! no item, one item, and clones of one value (endlessly, or `n` of them).

use super::drive::sealed::Drive;
use super::identity::sealed::Identity;
use super::identity::CloneOf;
use super::owned::{Drain, IntoIter};
use super::{IndexedParallelIterator, IntoParallelIterator, Zip};
use std::marker::PhantomData;
use std::ops::Range;

/// A parallel iterator of no item, as rayon's `iter::empty`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::iter::empty;
/// assert_eq!(empty::<u32>().sum::<u32>(), 0);
/// assert_eq!(empty::<u32>().len(), 0);
/// ```
pub fn empty<T: Send>() -> Empty<T> {
    Empty {
        marker: PhantomData,
    }
}

/// The parallel iterator of no item that [`empty`] makes; indexed.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let none: rayforce_pool::iter::Empty<String> = rayforce_pool::iter::empty();
/// assert_eq!(none.clone().len(), 0);
/// assert_eq!(none.collect::<Vec<String>>(), Vec::<String>::new());
/// ```
#[must_use = "iterators do nothing until consumed"]
pub struct Empty<T> {
    /// `fn() -> T`: `Send` and `Sync` whatever `T` is, as an iterator holding no `T` is.
    marker: PhantomData<fn() -> T>,
}

// By hand: derives would ask `T: Debug` and `T: Clone` of items that never exist.
impl<T> std::fmt::Debug for Empty<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Empty")
    }
}

impl<T> Clone for Empty<T> {
    fn clone(&self) -> Self {
        Empty {
            marker: PhantomData,
        }
    }
}

impl<T: Send> Drive for Empty<T> {
    type Item = T;
    type Seq<'a>
        = std::iter::Empty<T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        0
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, _: Range<usize>) -> std::iter::Empty<T> {
        std::iter::empty()
    }
}

/// A parallel iterator of the one item `item`, as rayon's `iter::once`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::iter::once;
/// let words: Vec<String> = once(String::from("only")).collect();
/// assert_eq!(words, ["only"]);
/// ```
pub fn once<T: Send>(item: T) -> Once<T> {
    Once {
        item: IntoIter::new(vec![item]),
    }
}

/// The parallel iterator of one item that [`once`] makes; indexed. The item is moved out
/// as a `Vec`'s are (an unconsumed one is dropped with the iterator).
///
/// ```
/// use rayforce_pool::prelude::*;
/// let one: rayforce_pool::iter::Once<u8> = rayforce_pool::iter::once(7);
/// assert_eq!(one.clone().len(), 1);
/// assert_eq!(one.map(|x| x * 2).collect::<Vec<u8>>(), [14]);
/// ```
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct Once<T> {
    item: IntoIter<T>,
}

/// By hand: the item is cloned through a shared `Once`, so it must be `Sync` too.
impl<T: Clone + Sync> Clone for Once<T> {
    fn clone(&self) -> Self {
        Once {
            item: self.item.clone(),
        }
    }
}

impl<T: Send> Drive for Once<T> {
    type Item = T;
    type Seq<'a>
        = Drain<'a, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.item.position_count()
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Drain<'_, T> {
        // SAFETY: the caller's contract, passed on to the one-item source.
        unsafe { self.item.seq(range) }
    }
}

/// A parallel iterator of clones of `item`, endlessly, as rayon's `iter::repeat`: bound it
/// with [`Repeat::take`] or [`Repeat::zip`], or consume it with a search that stops at a
/// match (`find_any`, `any`, `all`); unlike rayon's, `find_first` does not stop on it (it
/// claims every range, skipping each, of `usize::MAX` positions).
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::iter::repeat;
/// let labelled: Vec<(char, u32)> = repeat('x').zip(vec![1u32, 2, 3]).collect();
/// assert_eq!(labelled, [('x', 1), ('x', 2), ('x', 3)]);
/// assert_eq!(repeat(5u64).take(4).sum::<u64>(), 20);
/// assert!(repeat(1u8).any(|x| x == 1));
/// ```
pub fn repeat<T: Clone + Send>(item: T) -> Repeat<T> {
    Repeat {
        items: repeat_n(item, usize::MAX),
    }
}

/// The endless parallel iterator that [`repeat`] makes: `usize::MAX` positions, so that a
/// search stops within it, but not indexed (it has no length), as rayon's. A consumer that
/// visits every item (`for_each`, `sum`) never ends, as with rayon; `collect` panics at
/// once (it reserves a `Vec` of `usize::MAX` items), where rayon's runs out of memory.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let ones: rayforce_pool::iter::Repeat<u32> = rayforce_pool::iter::repeat(1);
/// assert_eq!(ones.clone().take(3).collect::<Vec<u32>>(), [1, 1, 1]);
/// assert_eq!(ones.find_any(|&x| x == 1), Some(1));
/// ```
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct Repeat<T> {
    /// `usize::MAX` of them.
    items: RepeatN<T>,
}

// By hand, as `RepeatN`'s.
impl<T: Clone + Send> Clone for Repeat<T> {
    fn clone(&self) -> Self {
        Repeat {
            items: self.items.clone(),
        }
    }
}

impl<T: Clone + Send> Repeat<T> {
    /// The first `n` items only: an indexed iterator, as rayon's `Repeat::take`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let dashes: Vec<char> = rayforce_pool::iter::repeat('-').take(3).collect();
    /// assert_eq!(dashes, ['-', '-', '-']);
    /// ```
    pub fn take(self, n: usize) -> RepeatN<T> {
        RepeatN {
            item: self.items.item,
            count: n,
        }
    }

    /// Pairs of a clone of the item and each of `other`'s items, as many as `other` has:
    /// an indexed iterator, as rayon's `Repeat::zip`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let scaled: Vec<u32> =
    ///     rayforce_pool::iter::repeat(10u32).zip(0..3u32).map(|(k, x)| k * x).collect();
    /// assert_eq!(scaled, [0, 10, 20]);
    /// ```
    pub fn zip<Z>(self, other: Z) -> Zip<RepeatN<T>, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let n = other.len();
        self.take(n).zip(other)
    }
}

impl<T: Clone + Send> Drive for Repeat<T> {
    type Item = T;
    type Seq<'a>
        = std::iter::RepeatN<T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.items.position_count()
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> std::iter::RepeatN<T> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.items.seq(range) }
    }
}

/// A parallel iterator of `n` clones of `item`, as rayon's `iter::repeat_n`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use rayforce_pool::iter::repeat_n;
/// let rows: Vec<Vec<u8>> = repeat_n(vec![0u8; 4], 3).collect();
/// assert_eq!(rows, vec![vec![0u8; 4]; 3]);
/// ```
pub fn repeat_n<T: Clone + Send>(item: T, n: usize) -> RepeatN<T> {
    RepeatN {
        item: CloneOf::new(item),
        count: n,
    }
}

/// rayon 1.10's name for [`repeat_n`], deprecated there since, as here.
///
/// ```
/// #![allow(deprecated)]
/// use rayforce_pool::prelude::*;
/// assert_eq!(rayforce_pool::iter::repeatn(7u8, 2).collect::<Vec<_>>(), [7, 7]);
/// ```
#[deprecated(note = "use `repeat_n`, as rayon's")]
pub fn repeatn<T: Clone + Send>(item: T, n: usize) -> RepeatN<T> {
    repeat_n(item, n)
}

/// The parallel iterator of `n` clones that [`repeat_n`] makes; indexed. The item is kept
/// behind a lock (so that it need only be `Send`, as rayon asks), taken once per claimed
/// range to make that range's clones.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let three: rayforce_pool::iter::RepeatN<&str> = rayforce_pool::iter::repeat_n("ab", 3);
/// assert_eq!(three.clone().len(), 3);
/// assert_eq!(three.collect::<String>(), "ababab");
/// ```
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct RepeatN<T> {
    item: CloneOf<T>,
    count: usize,
}

// By hand: the lock the item is kept behind is not `Clone`.
impl<T: Clone + Send> Clone for RepeatN<T> {
    fn clone(&self) -> Self {
        RepeatN {
            item: CloneOf::new(self.item.make()),
            count: self.count,
        }
    }
}

impl<T: Clone + Send> Drive for RepeatN<T> {
    type Item = T;
    type Seq<'a>
        = std::iter::RepeatN<T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.count
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> std::iter::RepeatN<T> {
        // One clone of the kept item, moved into the range's last position and cloned for
        // the others.
        std::iter::repeat_n(self.item.make(), range.len())
    }
}
