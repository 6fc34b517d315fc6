//! The adaptors that move an indexed iterator's positions: `skip`, `take`, `step_by`,
//! `rev` and `chain`. Each maps a range of its positions to ranges of its base's.

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use std::ops::Range;

/// `iter.skip(n)`: the items after the first `n`.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Skip<I> {
    pub(crate) base: I,
    pub(crate) n: usize,
}

/// `iter.take(n)`: the first `n` items.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Take<I> {
    pub(crate) base: I,
    pub(crate) n: usize,
}

impl<I: Drive> Skip<I> {
    /// Where its positions start among the base's, and how many there are (none, at the
    /// base's end, when `n` is past it: an empty range asked of it stays within the base).
    fn window(&self) -> (usize, usize) {
        let base = self.base.position_count();
        (self.n.min(base), base.saturating_sub(self.n))
    }
}

impl<I: Drive> Take<I> {
    /// Where its positions start among the base's, and how many there are.
    fn window(&self) -> (usize, usize) {
        (0, self.base.position_count().min(self.n))
    }
}

/// `Skip` and `Take`: a window of the base's positions (`window()`).
macro_rules! window {
    ($($name:ident),*) => {$(
        impl<I: Drive> Drive for $name<I> {
            type Item = I::Item;
            type Seq<'a>
                = I::Seq<'a>
            where
                Self: 'a;

            fn position_count(&self) -> usize {
                self.window().1
            }

            fn exact(&self) -> bool {
                true
            }

            positions_of_base!(@grain);

            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                let start = self.window().0;
                // SAFETY: shifted into the window, disjoint ranges stay disjoint and
                // within the base's positions.
                unsafe { self.base.seq(range.start + start..range.end + start) }
            }
        }
    )*};
}

window!(Skip, Take);

/// `iter.step_by(k)`: every `k`th item, from the first.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct StepBy<I> {
    pub(crate) base: I,
    pub(crate) step: usize,
}

impl<I: Drive> Drive for StepBy<I> {
    type Item = I::Item;
    type Seq<'a>
        = std::iter::StepBy<I::Seq<'a>>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.base.position_count().div_ceil(self.step)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // The base's items `start * k` to `(end - 1) * k`, the ones between steps skipped
        // (an owned base's are moved out and dropped; those between ranges are never
        // asked for, and its source drops them).
        // An empty range at the end (`chain` asks for one) starts at the base's end: a step
        // past it would be beyond the base's positions.
        let start = range
            .start
            .saturating_mul(self.step)
            .min(self.base.position_count());
        let end = if range.is_empty() {
            start
        } else {
            (range.end - 1) * self.step + 1
        };
        // SAFETY: within the base's positions; each range's span ends before the next's
        // starts, so spans of disjoint ranges are disjoint.
        unsafe { self.base.seq(start..end) }.step_by(self.step)
    }
}

/// `iter.rev()`: the items in reverse order. A range's items are gathered, then yielded
/// backwards (the base's ranges are iterators forwards only).
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Rev<I> {
    pub(crate) base: I,
}

impl<I: Drive> Drive for Rev<I> {
    type Item = I::Item;
    type Seq<'a>
        = std::iter::Rev<std::vec::IntoIter<I::Item>>
    where
        Self: 'a;

    positions_of_base!(exact: true);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let n = self.base.position_count();
        // SAFETY: mirrored, disjoint ranges stay disjoint and within the positions.
        let items: Vec<I::Item> =
            unsafe { self.base.seq(n - range.end..n - range.start) }.collect();
        items.into_iter().rev()
    }
}

/// `a.chain(b)`: the items of `a`, then those of `b`.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Chain<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
    /// The adaptor it stands for (`chain`, `interleave`), named in its panic.
    adaptor: &'static str,
}

impl<A, B> Chain<A, B> {
    /// Both sides. Their positions are not counted yet: a computed side (`fold`) makes its
    /// items when they are, which is the consumer's to start, on its pool.
    pub(crate) fn new(a: A, b: B, adaptor: &'static str) -> Self {
        Chain { a, b, adaptor }
    }
}

impl<A, B> Drive for Chain<A, B>
where
    A: Drive,
    B: Drive<Item = A::Item>,
{
    type Item = A::Item;
    type Seq<'a>
        = std::iter::Chain<A::Seq<'a>, B::Seq<'a>>
    where
        Self: 'a;

    /// # Panics
    /// If the two sides have more positions together than a `usize` counts: past it, the
    /// tail of `b` would be out of reach.
    fn position_count(&self) -> usize {
        let (na, nb) = (self.a.position_count(), self.b.position_count());
        na.checked_add(nb).unwrap_or_else(|| {
            panic!(
                "{}: {na} and {nb} positions are more than a usize counts",
                self.adaptor
            )
        })
    }

    fn exact(&self) -> bool {
        self.a.exact() && self.b.exact()
    }

    fn coarse(&self) -> bool {
        self.a.coarse() || self.b.coarse()
    }

    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }

    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let split = self.a.position_count();
        let in_a = range.start.min(split)..range.end.min(split);
        let in_b = range.start.max(split) - split..range.end.max(split) - split;
        // SAFETY: the parts of disjoint ranges on each side of `split` are disjoint ranges
        // of `a` and of `b`, within their positions.
        unsafe { self.a.seq(in_a).chain(self.b.seq(in_b)) }
    }
}
