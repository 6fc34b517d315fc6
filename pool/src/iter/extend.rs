//! `collect` into collections other than `Vec`, and `par_extend`, as rayon's: maps and
//! sets take the items in the iterator's order (a later duplicate key's value wins, as
//! with `std`'s `collect`), inserted on the caller after one parallel pass gathers them;
//! a `String` is the concatenation of each range's piece, made where it ran; a
//! `Result`/`Option` is the collection of the `Ok`/`Some` values, or an `Err`/`None`.

use super::collect::{append, ordered_parts};
use super::drive::grain;
use super::{FromParallelIterator, IntoParallelIterator, ParallelIterator};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// Extends a collection with a parallel iterator's items, as rayon's trait of the same
/// name.
pub trait ParallelExtend<T: Send> {
    /// Adds the items of `iter`, in its order where the collection keeps one.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut squares = vec![0u64];
    /// squares.par_extend((1..4u64).into_par_iter().map(|x| x * x));
    /// assert_eq!(squares, [0, 1, 4, 9]);
    /// ```
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        append(self, &iter.into_par_iter());
    }
}

/// `std` collections that take a parallel iterator's items through a `Vec` in its order:
/// the `Vec` made in parallel (in place for an indexed iterator), inserted on the caller.
/// `$made` bounds only `collect` (a hasher made by `Default`), as rayon's.
macro_rules! through_vec {
    ($(<$($param:ident),*> $collection:ty, $item:ty, [$($bound:tt)*], [$($made:tt)*];)*) => {$(
        impl<$($param),*> FromParallelIterator<$item> for $collection
        where
            $($bound)* $($made)*
        {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $item>,
            {
                Vec::from_par_iter(iter).into_iter().collect()
            }
        }

        impl<$($param),*> ParallelExtend<$item> for $collection
        where
            $($bound)*
        {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = $item>,
            {
                self.extend(Vec::from_par_iter(iter));
            }
        }
    )*};
}

through_vec! {
    <K, V, S> HashMap<K, V, S>, (K, V), [K: Eq + Hash + Send, V: Send, S: BuildHasher + Send,], [S: Default];
    <T, S> HashSet<T, S>, T, [T: Eq + Hash + Send, S: BuildHasher + Send,], [S: Default];
    <K, V> BTreeMap<K, V>, (K, V), [K: Ord + Send, V: Send], [];
    <T> BTreeSet<T>, T, [T: Ord + Send], [];
    <T> BinaryHeap<T>, T, [T: Ord + Send], [];
    <T> VecDeque<T>, T, [T: Send], [];
    <T> LinkedList<T>, T, [T: Send], [];
}

/// Slices made from the items in order, through a `Vec`, as rayon's: `Box<[T]>`, `Rc<[T]>`,
/// `Arc<[T]>`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use std::sync::Arc;
/// let boxed: Box<[u32]> = (0..3u32).into_par_iter().collect();
/// let shared: Arc<[u32]> = (0..3u32).into_par_iter().collect();
/// assert_eq!((&*boxed, &*shared), (&[0, 1, 2][..], &[0, 1, 2][..]));
/// ```
macro_rules! slice_from_vec {
    ($($slice:ty),*) => {$(
        impl<T: Send> FromParallelIterator<T> for $slice {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = T>,
            {
                Vec::from_par_iter(iter).into()
            }
        }
    )*};
}

slice_from_vec!(Box<[T]>, Rc<[T]>, Arc<[T]>);

/// An owned `Cow` of what `C`'s owned form collects, as rayon's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// use std::borrow::Cow;
/// let text: Cow<'_, str> = ["a", "b"].par_iter().copied().collect();
/// assert_eq!(text, "ab");
/// ```
impl<C, T> FromParallelIterator<T> for Cow<'_, C>
where
    C: ToOwned + ?Sized,
    C::Owned: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Cow::Owned(C::Owned::from_par_iter(iter))
    }
}

/// Copies of the referenced items (of keys and values, for maps), as rayon's (and `std`'s
/// `Extend<&T>`).
///
/// ```
/// use rayforce_pool::prelude::*;
/// use std::collections::HashMap;
/// let mut all = vec![0u8];
/// all.par_extend(&[1u8, 2][..]);
/// assert_eq!(all, [0, 1, 2]);
/// let mut map: HashMap<u8, char> = HashMap::new();
/// map.par_extend(&HashMap::from([(1u8, 'a')]));
/// assert_eq!(map[&1], 'a');
/// ```
macro_rules! by_copies {
    ($(<$($param:ident),*> $collection:ty, $item:ty, $copy:expr, [$($bound:tt)*];)*) => {$(
        impl<'a, $($param),*> ParallelExtend<$item> for $collection
        where
            $($bound)*
        {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = $item>,
            {
                self.par_extend(iter.into_par_iter().map($copy));
            }
        }
    )*};
}

by_copies! {
    <T> Vec<T>, &'a T, |&x: &T| x, [T: Copy + Send + Sync + 'a];
    <T> VecDeque<T>, &'a T, |&x: &T| x, [T: Copy + Send + Sync + 'a];
    <T> LinkedList<T>, &'a T, |&x: &T| x, [T: Copy + Send + Sync + 'a];
    <T> BinaryHeap<T>, &'a T, |&x: &T| x, [T: Copy + Ord + Send + Sync + 'a];
    <T> BTreeSet<T>, &'a T, |&x: &T| x, [T: Copy + Ord + Send + Sync + 'a];
    <T, S> HashSet<T, S>, &'a T, |&x: &T| x,
        [T: Copy + Eq + Hash + Send + Sync + 'a, S: BuildHasher + Send];
    <K, V> BTreeMap<K, V>, (&'a K, &'a V), |(&k, &v): (&K, &V)| (k, v),
        [K: Copy + Ord + Send + Sync + 'a, V: Copy + Send + Sync + 'a];
    <K, V, S> HashMap<K, V, S>, (&'a K, &'a V), |(&k, &v): (&K, &V)| (k, v),
        [K: Copy + Eq + Hash + Send + Sync + 'a, V: Copy + Send + Sync + 'a, S: BuildHasher + Send];
}

/// Text made of the items' pieces in order, in the type `$text` (pushed by `$push`): a
/// piece per range, made where it ran, kept together for a run of adjacent ranges.
macro_rules! text_from_pieces {
    ($($(#[$attr:meta])* $text:ty, $push:ident;)*) => {$(
        $(#[$attr])*
        impl<T: Send> FromParallelIterator<T> for $text
        where
            $text: FromIterator<T>,
        {
            fn from_par_iter<I>(iter: I) -> $text
            where
                I: IntoParallelIterator<Item = T>,
            {
                let mut text = <$text>::new();
                text.par_extend(iter);
                text
            }
        }

        impl<T: Send> ParallelExtend<T> for $text
        where
            $text: FromIterator<T>,
        {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = T>,
            {
                let iter = iter.into_par_iter();
                // `$text: FromIterator<T>` alone says how to make a piece.
                let runs = ordered_parts(&iter, grain(&iter), |run: Option<Vec<$text>>, items| {
                    let mut run = run.unwrap_or_default();
                    run.push(items.collect());
                    run
                });
                let pieces = || runs.iter().flatten();
                self.reserve(pieces().map(|piece| piece.len()).sum());
                pieces().for_each(|piece| self.$push(piece));
            }
        }
    )*};
}

text_from_pieces! {
    /// A `String` of the items' pieces in order: `char`s, `&str`s, `String`s (anything a
    /// `String` collects).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let letters = ['q', 'u', 'i', 'e', 't'];
    /// let shout: String = letters.par_iter().map(|c| c.to_ascii_uppercase()).collect();
    /// assert_eq!(shout, "QUIET");
    /// let words: String = ["par", "allel"].par_iter().copied().collect();
    /// assert_eq!(words, "parallel");
    /// ```
    String, push_str;
    /// An `OsString` of the items' pieces in order: `&OsStr`s, `OsString`s, `Cow<OsStr>`s,
    /// as rayon's.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::ffi::{OsStr, OsString};
    /// let parts = [OsStr::new("par"), OsStr::new("allel")];
    /// let joined: OsString = parts.par_iter().copied().collect();
    /// assert_eq!(joined, "parallel");
    /// ```
    std::ffi::OsString, push;
}

/// Pairs split into two collections, each in order: what `unzip` makes, at any depth
/// (`(Vec<_>, (Vec<_>, Vec<_>))`), as rayon's.
impl<A, B, FromA, FromB> ParallelExtend<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + ParallelExtend<A>,
    FromB: Send + ParallelExtend<B>,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        let (firsts, seconds): (Vec<A>, Vec<B>) = Vec::from_par_iter(iter).into_iter().unzip();
        self.0.par_extend(firsts);
        self.1.par_extend(seconds);
    }
}

/// A pair of new collections, split from pairs (`unzip`), as rayon's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let (xs, squares): (Vec<u32>, Vec<u32>) = (0..4u32).into_par_iter().map(|x| (x, x * x)).collect();
/// assert_eq!(squares, [0, 1, 4, 9]);
/// ```
impl<A, B, FromA, FromB> FromParallelIterator<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Default + Send + ParallelExtend<A>,
    FromB: Default + Send + ParallelExtend<B>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        extended(iter)
    }
}

/// A new collection (of those made empty by `Default`), extended from `iter`'s items.
pub(super) fn extended<T: Send, C: Default + ParallelExtend<T>>(
    iter: impl IntoParallelIterator<Item = T>,
) -> C {
    let mut collection = C::default();
    collection.par_extend(iter);
    collection
}

/// Nothing, from items of `()`: runs the iterator for its effects, as rayon's.
impl FromParallelIterator<()> for () {
    fn from_par_iter<I>(iter: I)
    where
        I: IntoParallelIterator<Item = ()>,
    {
        iter.into_par_iter().for_each(drop);
    }
}

/// The `Ok` values collected into `C`, or an `Err` the iterator held (one of them, not
/// necessarily the first), as rayon's: once one is met, no participant takes another item.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let parsed: Result<Vec<u8>, _> = ["1", "2", "x"].par_iter().map(|s| s.parse::<u8>()).collect();
/// assert!(parsed.is_err());
/// ```
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I>(iter: I) -> Result<C, E>
    where
        I: IntoParallelIterator<Item = Result<T, E>>,
    {
        let error = Mutex::new(None);
        let keep_ok = |item: Result<T, E>| match item {
            Ok(value) => Some(value),
            Err(e) => {
                let mut error = error
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                error.get_or_insert(e);
                None
            }
        };
        // After an `Err`, no participant takes another item: the values are thrown away.
        let collection = C::from_par_iter(iter.into_par_iter().map(keep_ok).while_some());
        match error
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
        {
            Some(e) => Err(e),
            None => Ok(collection),
        }
    }
}

/// The `Some` values collected into `C`, or `None` if the iterator held one, as rayon's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let all: Option<Vec<u32>> = (1..4u32).into_par_iter().map(|x| x.checked_sub(1)).collect();
/// assert_eq!(all, Some(vec![0, 1, 2]));
/// ```
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Option<C>
    where
        I: IntoParallelIterator<Item = Option<T>>,
    {
        let with_error = iter.into_par_iter().map(|item| item.ok_or(()));
        Result::<C, ()>::from_par_iter(with_error).ok()
    }
}
