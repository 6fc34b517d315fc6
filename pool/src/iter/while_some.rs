//! `while_some`: the values of `Some` items until a `None` is found, after which no
//! participant takes another item, as rayon's.

use super::drive::sealed::Drive;
use super::drive::{has_ended, positions_of_base};
use crate::sync::{AtomicBool, Ordering};
use std::ops::Range;

/// `iter.while_some()`: the values of the `Some` items, until an item is `None`.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct WhileSome<I> {
    pub(crate) base: I,
    pub(crate) ended: AtomicBool,
}

impl<I: Clone> Clone for WhileSome<I> {
    /// A flag of its own, not ended.
    fn clone(&self) -> Self {
        WhileSome {
            base: self.base.clone(),
            ended: AtomicBool::new(false),
        }
    }
}

impl<I, T> Drive for WhileSome<I>
where
    I: Drive<Item = Option<T>>,
    T: Send,
{
    type Item = T;
    type Seq<'a>
        = UntilNone<'a, I::Seq<'a>>
    where
        Self: 'a;

    fn exact(&self) -> bool {
        false
    }

    positions_of_base!(@positions);

    /// Its own flag: past a `None`, no further range is claimed; set too where a range
    /// finds the base's set (a base that ended yields no `None` to stop at).
    fn ended(&self) -> Option<&AtomicBool> {
        Some(&self.ended)
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        UntilNone {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            ended: &self.ended,
            base_ended: self.base.ended(),
        }
    }
}

/// One range's values, until its items or the whole iterator meet a `None`.
#[derive(Debug)]
pub struct UntilNone<'a, S> {
    items: S,
    ended: &'a AtomicBool,
    base_ended: Option<&'a AtomicBool>,
}

impl<T, S: Iterator<Item = Option<T>>> Iterator for UntilNone<'_, S> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        // Relaxed: a hint to stop early; which items before the `None` are taken is not
        // promised (rayon's either).
        if self.ended.load(Ordering::Relaxed) {
            return None;
        }
        let Some(value) = self.items.next() else {
            if has_ended(self.base_ended) {
                // Relaxed: as above.
                self.ended.store(true, Ordering::Relaxed);
            }
            return None;
        };
        if value.is_none() {
            // Relaxed: as above.
            self.ended.store(true, Ordering::Relaxed);
        }
        value
    }
}
