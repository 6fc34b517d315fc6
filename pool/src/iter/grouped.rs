//! `chunks(n)` on indexed iterators, as rayon's: the items gathered `n` to a `Vec`, the last
//! `Vec` shorter when `n` does not divide the length; position `i` is the group of the
//! base's items from `i * n`.

use super::chunks::items_of;
use super::drive::sealed::Drive;
use std::ops::Range;

/// `iter.chunks(n)`: `Vec`s of `n` consecutive items, the last maybe shorter.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Chunks<I> {
    base: I,
    size: usize,
}

impl<I> Chunks<I> {
    /// `base` in groups of `size` (not 0).
    pub(crate) fn new(base: I, size: usize) -> Self {
        Chunks { base, size }
    }
}

impl<I: Drive> Drive for Chunks<I> {
    type Item = Vec<I::Item>;
    type Seq<'a>
        = Groups<I::Seq<'a>>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.base.position_count().div_ceil(self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let items = items_of(range.clone(), self.size, self.base.position_count());
        Groups {
            // SAFETY: disjoint ranges of groups are disjoint ranges of the base's
            // positions, within them (clamped to its length).
            items: unsafe { self.base.seq(items) },
            size: self.size,
            left: range.len(),
        }
    }
}

/// One range's groups: `left` `Vec`s of up to `size` items each.
#[derive(Debug)]
pub struct Groups<S> {
    items: S,
    size: usize,
    left: usize,
}

impl<S: Iterator> Iterator for Groups<S> {
    type Item = Vec<S::Item>;

    fn next(&mut self) -> Option<Vec<S::Item>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.items.by_ref().take(self.size).collect())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}
