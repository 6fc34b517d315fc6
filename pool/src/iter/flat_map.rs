//! `flat_map` and `flatten` over parallel inner iterators, as rayon's: the items of each
//! item's inner iterator, in order. An inner iterator runs through on the thread whose
//! range holds its item (its items gathered a block at a time, then yielded), not shared
//! further.

use super::drive::sealed::Drive;
use super::drive::{has_ended, positions_of_base};
use super::IntoParallelIterator;
use std::ops::Range;

/// `iter.flat_map(f)`: the items of the parallel iterator `f` makes of each item, in order.
#[derive(Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct FlatMap<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

impl<I: std::fmt::Debug, F> std::fmt::Debug for FlatMap<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatMap")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// `iter.flatten()`: the items of each item, itself a parallel iterator (or a source of
/// one), in order.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Flatten<I> {
    pub(crate) base: I,
}

impl<I, F, U> Drive for FlatMap<I, F>
where
    I: Drive,
    F: Fn(I::Item) -> U + Sync + Send,
    U: IntoParallelIterator,
{
    type Item = U::Item;
    type Seq<'a>
        = Inner<I::Seq<'a>, &'a F, U>
    where
        Self: 'a;

    positions_of_base!(flat);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's contract, passed on.
        Inner::new(unsafe { self.base.seq(range) }, &self.f)
    }
}

impl<I> Drive for Flatten<I>
where
    I: Drive,
    I::Item: IntoParallelIterator,
{
    type Item = <I::Item as IntoParallelIterator>::Item;
    type Seq<'a>
        = Inner<I::Seq<'a>, fn(I::Item) -> I::Item, I::Item>
    where
        Self: 'a;

    positions_of_base!(flat);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let itself: fn(I::Item) -> I::Item = |item| item;
        // SAFETY: the caller's contract, passed on.
        Inner::new(unsafe { self.base.seq(range) }, itself)
    }
}

/// One range's items: each outer item made into its inner iterator by `make`, whose items
/// are gathered a block at a time (so that a consumer that stops early, or an endless
/// inner iterator, takes no more), then yielded: 1,024 positions at a time, one of a
/// coarse inner iterator (`Drive::coarse`), whose items it gathers whole: a range of more
/// than `usize::MAX` items has a run of up to 2^64 + 1 of them a position (5.4e7 for
/// 10^27 items).
pub struct Inner<S, M, U: IntoParallelIterator> {
    outer: S,
    make: M,
    /// The inner iterator being gathered, and its next position.
    inner: Option<(U::Iter, usize)>,
    /// The current block's items not yet yielded, last first.
    block: Vec<U::Item>,
}

impl<S, M, U> std::fmt::Debug for Inner<S, M, U>
where
    S: std::fmt::Debug,
    U: IntoParallelIterator,
    U::Iter: std::fmt::Debug,
    U::Item: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("outer", &self.outer)
            .field("inner", &self.inner)
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

/// How many positions of an inner iterator that is not coarse are gathered at once.
const BLOCK: usize = 1024;

impl<S, M, U: IntoParallelIterator> Inner<S, M, U> {
    fn new(outer: S, make: M) -> Self {
        Inner {
            outer,
            make,
            inner: None,
            block: Vec::new(),
        }
    }
}

impl<S, M, U> Iterator for Inner<S, M, U>
where
    S: Iterator,
    M: Fn(S::Item) -> U,
    U: IntoParallelIterator,
{
    type Item = U::Item;

    fn next(&mut self) -> Option<U::Item> {
        loop {
            if let Some(item) = self.block.pop() {
                return Some(item);
            }
            match &mut self.inner {
                // An inner source that ended (`while_some` past a `None`) has no more.
                Some((inner, next))
                    if *next < inner.position_count() && !has_ended(inner.ended()) =>
                {
                    // Positions of many items each (another `flat_map`'s, a range's past
                    // `usize::MAX` items) one at a time.
                    let step = if inner.coarse() { 1 } else { BLOCK };
                    let end = inner.position_count().min(next.saturating_add(step));
                    // SAFETY: the inner iterator's positions from `next` on are asked for
                    // once each, in blocks that do not overlap.
                    self.block.extend(unsafe { inner.seq(*next..end) });
                    self.block.reverse();
                    *next = end;
                }
                _ => {
                    let inner = (self.make)(self.outer.next()?).into_par_iter();
                    self.inner = Some((inner, 0));
                }
            }
        }
    }
}
