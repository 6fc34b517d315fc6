//! The adaptors: each wraps an iterator and changes what a range of positions yields
//! (`map`, `inspect`, `update`, `filter`, `filter_map`, `copied`, `cloned`,
//! `flat_map_iter`, `flatten_iter`), or pairs
//! positions with their index or another indexed iterator's items (`enumerate`, `zip`).

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use std::ops::Range;

/// An adaptor that runs each range's items through a closure, by the `std` adaptor of the
/// same name: `Map`, `Inspect`, `Filter` and `FilterMap`. `exact`: `base` where it keeps one
/// item per position (as its base does), else `false`.
macro_rules! with_closure {
    (
        $(#[$doc:meta])* $name:ident<$base:ident, $f:ident $(, $out:ident)?>,
        [$($bound:tt)*], $item:ty, $method:ident, exact: $exact:tt
    ) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[must_use = "iterators do nothing until consumed"]
        pub struct $name<$base, $f> {
            pub(crate) base: $base,
            pub(crate) f: $f,
        }

        impl<$base: std::fmt::Debug, $f> std::fmt::Debug for $name<$base, $f> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("base", &self.base).finish_non_exhaustive()
            }
        }

        impl<$base, $f $(, $out)?> Drive for $name<$base, $f>
        where
            $base: Drive,
            $f: $($bound)* + Sync,
            $($out: Send,)?
        {
            type Item = $item;
            type Seq<'a>
                = std::iter::$name<$base::Seq<'a>, &'a $f>
            where
                Self: 'a;

            positions_of_base!(exact: $exact);

            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's contract, passed on.
                unsafe { self.base.seq(range) }.$method(&self.f)
            }
        }
    };
}

with_closure!(
    /// `iter.map(f)`: `f` of each item.
    Map<I, F, R>, [Fn(I::Item) -> R], R, map, exact: base
);
with_closure!(
    /// `iter.inspect(f)`: the items, each first passed to `f` by reference.
    Inspect<I, F>, [Fn(&I::Item)], I::Item, inspect, exact: base
);
with_closure!(
    /// `iter.filter(pred)`: the items for which `pred` holds.
    Filter<I, P>, [Fn(&I::Item) -> bool], I::Item, filter, exact: false
);
with_closure!(
    /// `iter.filter_map(f)`: the `Some` values of `f` of each item.
    FilterMap<I, F, R>, [Fn(I::Item) -> Option<R>], R, filter_map, exact: false
);

/// `iter.update(f)`: the items, each first changed in place by `f`.
#[derive(Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Update<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

impl<I: std::fmt::Debug, F> std::fmt::Debug for Update<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Update")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, F> Drive for Update<I, F>
where
    I: Drive,
    F: Fn(&mut I::Item) + Sync,
{
    type Item = I::Item;
    type Seq<'a>
        = Updated<I::Seq<'a>, &'a F>
    where
        Self: 'a;

    positions_of_base!(exact: base);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        Updated {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            f: &self.f,
        }
    }
}

/// The items of a range of an [`Update`], each changed as it passes.
pub struct Updated<S, F> {
    items: S,
    f: F,
}

impl<S: std::fmt::Debug, F> std::fmt::Debug for Updated<S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Updated")
            .field("items", &self.items)
            .finish_non_exhaustive()
    }
}

impl<S: Iterator, F: Fn(&mut S::Item)> Iterator for Updated<S, F> {
    type Item = S::Item;

    fn next(&mut self) -> Option<S::Item> {
        let mut item = self.items.next()?;
        (self.f)(&mut item);
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

/// An adaptor that turns an iterator of references into one of values, by the `std`
/// adaptor of the same name: `Copied` and `Cloned`.
macro_rules! by_value {
    ($(#[$doc:meta])* $name:ident, $bound:path, $method:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        #[must_use = "iterators do nothing until consumed"]
        pub struct $name<I> {
            pub(crate) base: I,
        }

        impl<'t, I, T> Drive for $name<I>
        where
            I: Drive<Item = &'t T>,
            T: $bound + Send + Sync + 't,
        {
            type Item = T;
            type Seq<'a>
                = std::iter::$name<I::Seq<'a>>
            where
                Self: 'a;

            positions_of_base!(exact: base);

            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's contract, passed on.
                unsafe { self.base.seq(range) }.$method()
            }
        }
    };
}

by_value!(
    /// `iter.copied()`: copies of the items an iterator of references yields.
    Copied, Copy, copied
);
by_value!(
    /// `iter.cloned()`: clones of the items an iterator of references yields.
    Cloned, Clone, cloned
);

/// `iter.enumerate()`: each item with its index (an indexed iterator's position).
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Enumerate<I> {
    pub(crate) base: I,
}

impl<I: Drive> Drive for Enumerate<I> {
    type Item = (usize, I::Item);
    type Seq<'a>
        = std::iter::Zip<Range<usize>, I::Seq<'a>>
    where
        Self: 'a;

    positions_of_base!(exact: true);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        range.clone().zip(unsafe { self.base.seq(range) })
    }
}

/// `a.zip(b)`: pairs of the items at the same index, as many as the shorter has.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Zip<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

impl<A: Drive, B: Drive> Drive for Zip<A, B> {
    type Item = (A::Item, B::Item);
    type Seq<'a>
        = std::iter::Zip<A::Seq<'a>, B::Seq<'a>>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.a.position_count().min(self.b.position_count())
    }

    fn exact(&self) -> bool {
        true
    }

    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }

    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on to both: a range below the shorter's
        // length is within each.
        unsafe { self.a.seq(range.clone()).zip(self.b.seq(range)) }
    }
}

/// `a.zip_eq(b)`: a [`Zip`] of two iterators that were as long as each other.
pub type ZipEq<A, B> = Zip<A, B>;

/// `iter.positions(pred)`: the indices of the items for which `pred` holds.
pub type Positions<I, P> = FilterMap<Enumerate<Map<I, P>>, fn((usize, bool)) -> Option<usize>>;

/// `iter.flat_map_iter(f)`: the items of the serial iterator `f` makes of each item, in
/// order.
#[derive(Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct FlatMapIter<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

impl<I: std::fmt::Debug, F> std::fmt::Debug for FlatMapIter<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatMapIter")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, F, U> Drive for FlatMapIter<I, F>
where
    I: Drive,
    F: Fn(I::Item) -> U + Sync,
    U: IntoIterator,
    U::Item: Send,
{
    type Item = U::Item;
    type Seq<'a>
        = std::iter::FlatMap<I::Seq<'a>, U, &'a F>
    where
        Self: 'a;

    positions_of_base!(flat);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.seq(range) }.flat_map(&self.f)
    }
}

/// `iter.flatten_iter()`: the items of each item's serial iterator, in order.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct FlattenIter<I> {
    pub(crate) base: I,
}

impl<I> Drive for FlattenIter<I>
where
    I: Drive,
    I::Item: IntoIterator,
    <I::Item as IntoIterator>::Item: Send,
{
    type Item = <I::Item as IntoIterator>::Item;
    type Seq<'a>
        = std::iter::Flatten<I::Seq<'a>>
    where
        Self: 'a;

    positions_of_base!(flat);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.seq(range) }.flatten()
    }
}
