//! `while_some`: the values of `Some` items until a `None` is found, after which no
//! participant takes another item, as rayon's.

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

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

    positions_of_base!(exact: false);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        UntilNone {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            ended: &self.ended,
        }
    }
}

/// One range's values, until its items or the whole iterator meet a `None`.
pub struct UntilNone<'a, S> {
    items: S,
    ended: &'a AtomicBool,
}

impl<T, S: Iterator<Item = Option<T>>> Iterator for UntilNone<'_, S> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        // Relaxed: a hint to stop early; which items before the `None` are taken is not
        // promised (rayon's either).
        if self.ended.load(Ordering::Relaxed) {
            return None;
        }
        let value = self.items.next()?;
        if value.is_none() {
            // Relaxed: as above.
            self.ended.store(true, Ordering::Relaxed);
        }
        value
    }
}
