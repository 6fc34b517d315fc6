//! `std`'s other containers as sources, each onto a source the crate has: arrays, `Option`,
//! `Result` and `BinaryHeap` (by reference) lend their slice; by value, each container
//! becomes a `Vec` whose items the owned source moves out; maps, sets and linked lists,
//! which have no slice, collect their references into a `Vec` first, as rayon does; a
//! `VecDeque` by reference is its two slices, chained.

use super::owned::IntoIter;
use super::reshape::Chain;
use super::source::{IntoParallelIterator, Iter, IterMut};
use super::ParallelIterator;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

/// `impl IntoParallelIterator` for each `[generics] Container => Iter = |this| source`.
macro_rules! sources {
    ($(
        $(#[$doc:meta])*
        [$($generics:tt)*] $container:ty => $iter:ty = |$this:ident| $make:expr;
    )*) => {$(
        $(#[$doc])*
        impl<$($generics)*> IntoParallelIterator for $container {
            type Iter = $iter;
            type Item = <$iter as super::drive::sealed::Drive>::Item;

            fn into_par_iter(self) -> $iter {
                let $this = self;
                $make
            }
        }
    )*};
}

/// The owned source over `items` in the order they come.
fn collected<T: Send>(items: impl IntoIterator<Item = T>) -> IntoIter<T> {
    IntoIter::new(items.into_iter().collect())
}

sources! {
    /// An array's items by reference, as its slice's: `array.par_iter()`.
    ['data, T: Sync + 'data, const N: usize] &'data [T; N] => Iter<'data, T> =
        |this| this.as_slice().into_par_iter();
    /// An array's items mutably, as its slice's: `array.par_iter_mut()`.
    ['data, T: Send + 'data, const N: usize] &'data mut [T; N] => IterMut<'data, T> =
        |this| this.as_mut_slice().into_par_iter();
    /// An array's items by value, moved out as a `Vec`'s are (rayon's `array::IntoIter`;
    /// here the items are first moved into a `Vec`); indexed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let names = [String::from("a"), String::from("bc")];
    /// let lengths: Vec<usize> = names.par_iter().map(|s| s.len()).collect();
    /// assert_eq!(lengths, [1, 2]);
    /// let mut counts = [1u32, 2, 3];
    /// counts.par_iter_mut().for_each(|c| *c += 1);
    /// assert_eq!(counts, [2, 3, 4]);
    /// let owned: Vec<String> = names.into_par_iter().map(|s| s + "!").collect();
    /// assert_eq!(owned, ["a!", "bc!"]);
    /// ```
    [T: Send, const N: usize] [T; N] => IntoIter<T> = |this| IntoIter::new(Vec::from(this));

    /// An `Option`'s item, if any, by reference: `option.par_iter()`.
    ['data, T: Sync + 'data] &'data Option<T> => Iter<'data, T> =
        |this| this.as_slice().into_par_iter();
    /// An `Option`'s item, if any, mutably: `option.par_iter_mut()`.
    ['data, T: Send + 'data] &'data mut Option<T> => IterMut<'data, T> =
        |this| this.as_mut_slice().into_par_iter();
    /// An `Option`'s item, if any, by value: 0 or 1 item, indexed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut some = Some(String::from("x"));
    /// assert_eq!(some.par_iter().count(), 1);
    /// some.par_iter_mut().for_each(|s| s.push('y'));
    /// assert_eq!(some.clone().into_par_iter().collect::<Vec<_>>(), ["xy"]);
    /// assert_eq!(None::<String>.into_par_iter().len(), 0);
    /// ```
    [T: Send] Option<T> => IntoIter<T> = |this| collected(this);

    /// A `Result`'s `Ok` value, if any, by reference: `result.par_iter()`.
    ['data, T: Sync + 'data, E] &'data Result<T, E> => Iter<'data, T> = |this| match this {
        Ok(item) => std::slice::from_ref(item).into_par_iter(),
        Err(_) => (&[] as &[T]).into_par_iter(),
    };
    /// A `Result`'s `Ok` value, if any, mutably: `result.par_iter_mut()`.
    ['data, T: Send + 'data, E] &'data mut Result<T, E> => IterMut<'data, T> = |this| match this {
        Ok(item) => std::slice::from_mut(item).into_par_iter(),
        Err(_) => (&mut [] as &mut [T]).into_par_iter(),
    };
    /// A `Result`'s `Ok` value, if any, by value: 0 or 1 item, indexed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut good: Result<u32, String> = Ok(4);
    /// good.par_iter_mut().for_each(|x| *x += 1);
    /// assert_eq!(good.par_iter().copied().sum::<u32>(), 5);
    /// assert_eq!(good.into_par_iter().collect::<Vec<u32>>(), [5]);
    /// let bad: Result<u32, String> = Err(String::from("no"));
    /// assert_eq!(bad.into_par_iter().count(), 0);
    /// ```
    [T: Send, E] Result<T, E> => IntoIter<T> = |this| collected(this);

    /// A `VecDeque`'s items by reference, in order: its two slices, chained (as rayon's
    /// `vec_deque::Iter`); indexed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::VecDeque;
    /// let mut deque: VecDeque<u32> = (1..=3).collect();
    /// deque.push_front(0); // the front now in a slice of its own
    /// deque.par_iter_mut().for_each(|x| *x *= 10);
    /// assert_eq!(deque.par_iter().copied().collect::<Vec<u32>>(), [0, 10, 20, 30]);
    /// assert_eq!(deque.par_iter().len(), 4);
    /// assert_eq!(deque.into_par_iter().collect::<Vec<u32>>(), [0, 10, 20, 30]);
    /// ```
    ['data, T: Sync + 'data] &'data VecDeque<T> => Chain<Iter<'data, T>, Iter<'data, T>> =
        |this| {
            let (front, back) = this.as_slices();
            front.into_par_iter().chain(back)
        };
    /// A `VecDeque`'s items mutably, in order: its two slices, chained (as rayon's
    /// `vec_deque::IterMut`); indexed.
    ['data, T: Send + 'data] &'data mut VecDeque<T>
        => Chain<IterMut<'data, T>, IterMut<'data, T>> = |this| {
            let (front, back) = this.as_mut_slices();
            front.into_par_iter().chain(back)
        };
    /// A `VecDeque`'s items by value, in order, moved into a `Vec` first (as rayon does);
    /// indexed.
    [T: Send] VecDeque<T> => IntoIter<T> = |this| IntoIter::new(Vec::from(this));

    /// A `BinaryHeap`'s items by reference, in its storage's (arbitrary) order, as its
    /// slice's: `heap.par_iter()`.
    ['data, T: Sync + 'data] &'data BinaryHeap<T> => Iter<'data, T> =
        |this| this.as_slice().into_par_iter();
    /// A `BinaryHeap`'s items by value, in its storage's (arbitrary) order, as its `Vec`'s;
    /// indexed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::BinaryHeap;
    /// let heap: BinaryHeap<u32> = (1..=100).collect();
    /// assert_eq!(heap.par_iter().max(), Some(&100));
    /// assert_eq!(heap.into_par_iter().sum::<u32>(), 5050);
    /// ```
    [T: Send] BinaryHeap<T> => IntoIter<T> = |this| IntoIter::new(this.into_vec());

    /// A `HashMap`'s entries by reference, `(&K, &V)`, in its iteration order, collected
    /// into a `Vec` first (as rayon does).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::HashMap;
    /// let mut stock: HashMap<&str, u32> = HashMap::from([("pears", 3), ("plums", 4)]);
    /// assert_eq!(stock.par_iter().map(|(_, &n)| n).sum::<u32>(), 7);
    /// stock.par_iter_mut().for_each(|(_, n)| *n *= 2);
    /// let mut owned: Vec<(&str, u32)> = stock.into_par_iter().collect();
    /// owned.sort();
    /// assert_eq!(owned, [("pears", 6), ("plums", 8)]);
    /// ```
    ['data, K: Sync + 'data, V: Sync + 'data, S] &'data HashMap<K, V, S>
        => IntoIter<(&'data K, &'data V)> = |this| collected(this);
    /// A `HashMap`'s entries with their values mutably, `(&K, &mut V)`, collected into a
    /// `Vec` first (as rayon does).
    ['data, K: Sync + 'data, V: Send + 'data, S] &'data mut HashMap<K, V, S>
        => IntoIter<(&'data K, &'data mut V)> = |this| collected(this);
    /// A `HashMap`'s entries by value, `(K, V)`, moved into a `Vec` first (as rayon does).
    [K: Send, V: Send, S] HashMap<K, V, S> => IntoIter<(K, V)> = |this| collected(this);

    /// A `HashSet`'s items by reference, collected into a `Vec` first (as rayon does).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::HashSet;
    /// let seen: HashSet<u64> = (1..=10).collect();
    /// assert_eq!(seen.par_iter().sum::<u64>(), 55);
    /// assert_eq!(seen.into_par_iter().filter(|x| x % 2 == 0).count(), 5);
    /// ```
    ['data, T: Sync + 'data, S] &'data HashSet<T, S> => IntoIter<&'data T> =
        |this| collected(this);
    /// A `HashSet`'s items by value, moved into a `Vec` first (as rayon does).
    [T: Send, S] HashSet<T, S> => IntoIter<T> = |this| collected(this);

    /// A `BTreeMap`'s entries by reference, `(&K, &V)`, in key order, collected into a `Vec`
    /// first (as rayon does).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::BTreeMap;
    /// let mut squares: BTreeMap<u32, u32> = (0..5).map(|k| (k, k * k)).collect();
    /// assert_eq!(squares.par_iter().map(|(_, &v)| v).collect::<Vec<_>>(), [0, 1, 4, 9, 16]);
    /// squares.par_iter_mut().for_each(|(_, v)| *v += 1);
    /// let owned: Vec<(u32, u32)> = squares.into_par_iter().collect();
    /// assert_eq!(owned, [(0, 1), (1, 2), (2, 5), (3, 10), (4, 17)]);
    /// ```
    ['data, K: Sync + 'data, V: Sync + 'data] &'data BTreeMap<K, V>
        => IntoIter<(&'data K, &'data V)> = |this| collected(this);
    /// A `BTreeMap`'s entries with their values mutably, `(&K, &mut V)`, in key order,
    /// collected into a `Vec` first (as rayon does).
    ['data, K: Sync + 'data, V: Send + 'data] &'data mut BTreeMap<K, V>
        => IntoIter<(&'data K, &'data mut V)> = |this| collected(this);
    /// A `BTreeMap`'s entries by value, `(K, V)`, in key order, moved into a `Vec` first
    /// (as rayon does).
    [K: Send, V: Send] BTreeMap<K, V> => IntoIter<(K, V)> = |this| collected(this);

    /// A `BTreeSet`'s items by reference, in order, collected into a `Vec` first (as rayon
    /// does).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::BTreeSet;
    /// let set: BTreeSet<char> = "hello".chars().collect();
    /// assert_eq!(set.par_iter().collect::<Vec<_>>(), [&'e', &'h', &'l', &'o']);
    /// assert_eq!(set.into_par_iter().collect::<String>(), "ehlo");
    /// ```
    ['data, T: Sync + 'data] &'data BTreeSet<T> => IntoIter<&'data T> = |this| collected(this);
    /// A `BTreeSet`'s items by value, in order, moved into a `Vec` first (as rayon does).
    [T: Send] BTreeSet<T> => IntoIter<T> = |this| collected(this);

    /// A `LinkedList`'s items by reference, in order, collected into a `Vec` first (as
    /// rayon does).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::LinkedList;
    /// let mut list: LinkedList<u32> = (1..=4).collect();
    /// assert_eq!(list.par_iter().copied().collect::<Vec<_>>(), [1, 2, 3, 4]);
    /// list.par_iter_mut().for_each(|x| *x *= 3);
    /// assert_eq!(list.into_par_iter().collect::<Vec<_>>(), [3, 6, 9, 12]);
    /// ```
    ['data, T: Sync + 'data] &'data LinkedList<T> => IntoIter<&'data T> = |this| collected(this);
    /// A `LinkedList`'s items mutably, in order, collected into a `Vec` first (as rayon
    /// does).
    ['data, T: Send + 'data] &'data mut LinkedList<T> => IntoIter<&'data mut T> =
        |this| collected(this);
    /// A `LinkedList`'s items by value, in order, moved into a `Vec` first (as rayon does).
    [T: Send] LinkedList<T> => IntoIter<T> = |this| collected(this);
}
