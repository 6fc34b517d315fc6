//! `map_init(init, f)` and `map_with(value, f)`: `f(&mut state, item)` for each item, a
//! state made by `init()` (or a clone of `value`) once per claimed range, as rayon makes
//! one per split; `for_each_init` and `for_each_with` run them for their effects.

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use super::identity::sealed::Identity;
use super::identity::CloneOf;
use std::ops::Range;

/// `iter.map_init(init, f)`: `f(&mut state, item)` for each item.
#[derive(Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct MapInit<I, INIT, F> {
    pub(crate) base: I,
    pub(crate) init: INIT,
    pub(crate) f: F,
}

/// `iter.map_with(value, f)`: [`MapInit`] with clones of `value` for state.
pub type MapWith<I, T, F> = MapInit<I, CloneOf<T>, F>;

impl<I: std::fmt::Debug, INIT, F> std::fmt::Debug for MapInit<I, INIT, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapInit")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, INIT, F, R> Drive for MapInit<I, INIT, F>
where
    I: Drive,
    INIT: Identity,
    F: Fn(&mut INIT::Accumulator, I::Item) -> R + Sync,
    R: Send,
{
    type Item = R;
    type Seq<'a>
        = WithState<'a, I::Seq<'a>, INIT::Accumulator, F>
    where
        Self: 'a;

    positions_of_base!(exact: base);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        WithState {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            state: self.init.make(),
            f: &self.f,
        }
    }
}

/// One range's items through `f`, with the range's state.
pub struct WithState<'a, S, T, F> {
    items: S,
    state: T,
    f: &'a F,
}

impl<S: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for WithState<'_, S, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithState")
            .field("items", &self.items)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<S, T, F, R> Iterator for WithState<'_, S, T, F>
where
    S: Iterator,
    F: Fn(&mut T, S::Item) -> R,
{
    type Item = R;

    fn next(&mut self) -> Option<R> {
        let item = self.items.next()?;
        Some((self.f)(&mut self.state, item))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}
