//! Draining `std`'s collections into parallel iterators, as rayon's `ParallelDrainRange`
//! and `ParallelDrainFull`: the items are removed from the collection at once (into a
//! `Vec`, by `std`'s own drain), then iterated by value.

use super::IntoIter;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::ops::RangeBounds;

/// Moves a range of a collection's items out into a parallel iterator, as rayon's trait of
/// the same name (in the prelude).
pub trait ParallelDrainRange<Idx = usize> {
    /// The parallel iterator made.
    type Iter: super::ParallelIterator<Item = Self::Item>;
    /// The type of its items.
    type Item: Send;

    /// The items at `range`, removed from the collection at once (the items after them
    /// move down, as `Vec::drain` moves them); the ones no consumer takes are dropped with
    /// the iterator.
    ///
    /// # Panics
    /// If the range starts after it ends or ends past the length, as `Vec::drain`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut xs: Vec<u32> = (0..10).collect();
    /// let middle: u32 = xs.par_drain(3..7).sum();
    /// assert_eq!((middle, xs), (18, vec![0, 1, 2, 7, 8, 9]));
    /// ```
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

impl<T: Send> ParallelDrainRange<usize> for &mut Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;

    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<T> {
        IntoIter::new(self.drain(range).collect())
    }
}

impl<T: Send> ParallelDrainRange<usize> for &mut VecDeque<T> {
    type Iter = IntoIter<T>;
    type Item = T;

    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::VecDeque;
    /// let mut queue: VecDeque<u32> = (0..6).collect();
    /// let taken: Vec<u32> = queue.par_drain(1..3).collect();
    /// assert_eq!((taken, queue), (vec![1, 2], VecDeque::from([0, 3, 4, 5])));
    /// ```
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<T> {
        IntoIter::new(self.drain(range).collect())
    }
}

impl ParallelDrainRange<usize> for &mut String {
    type Iter = IntoIter<char>;
    type Item = char;

    /// The `char`s of the byte range `range`, as rayon's.
    ///
    /// # Panics
    /// If the range does not lie on `char` boundaries, as `String::drain`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut text = String::from("héllo");
    /// let taken: String = text.par_drain(1..3).collect();
    /// assert_eq!((taken.as_str(), text.as_str()), ("é", "hllo"));
    /// ```
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<char> {
        IntoIter::new(self.drain(range).collect())
    }
}

/// Moves every item of a collection out into a parallel iterator, leaving it empty (its
/// capacity kept), as rayon's trait of the same name (in the prelude).
pub trait ParallelDrainFull {
    /// The parallel iterator made.
    type Iter: super::ParallelIterator<Item = Self::Item>;
    /// The type of its items.
    type Item: Send;

    /// Every item, removed from the collection at once.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::HashSet;
    /// let mut set: HashSet<u32> = (0..5).collect();
    /// let total: u32 = set.par_drain().sum();
    /// assert_eq!((total, set.len()), (10, 0));
    /// ```
    fn par_drain(self) -> Self::Iter;
}

impl<K: Send, V: Send, S> ParallelDrainFull for &mut HashMap<K, V, S>
where
    K: Eq + Hash,
    S: BuildHasher,
{
    type Iter = IntoIter<(K, V)>;
    type Item = (K, V);

    fn par_drain(self) -> IntoIter<(K, V)> {
        IntoIter::new(self.drain().collect())
    }
}

impl<T: Send + Eq + Hash, S: BuildHasher> ParallelDrainFull for &mut HashSet<T, S> {
    type Iter = IntoIter<T>;
    type Item = T;

    fn par_drain(self) -> IntoIter<T> {
        IntoIter::new(self.drain().collect())
    }
}

impl<T: Send + Ord> ParallelDrainFull for &mut BinaryHeap<T> {
    type Iter = IntoIter<T>;
    type Item = T;

    fn par_drain(self) -> IntoIter<T> {
        IntoIter::new(self.drain().collect())
    }
}
