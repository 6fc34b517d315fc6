//! `panic_fuse()`: once an item's processing panics, every participant stops taking items
//! from this iterator (each at its next item); the panic then resumes on the caller as
//! always. A range's items unwinding (a panic upstream or downstream of the fuse) drops
//! their iterator while the thread panics: that drop blows the fuse.

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// `iter.panic_fuse()`: the items until a panic, then none.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct PanicFuse<I> {
    pub(crate) base: I,
    pub(crate) blown: AtomicBool,
}

impl<I: Clone> Clone for PanicFuse<I> {
    /// A fuse of its own, intact.
    fn clone(&self) -> Self {
        PanicFuse {
            base: self.base.clone(),
            blown: AtomicBool::new(false),
        }
    }
}

impl<I: Drive> Drive for PanicFuse<I> {
    type Item = I::Item;
    type Seq<'a>
        = Fused<'a, I::Seq<'a>>
    where
        Self: 'a;

    positions_of_base!(exact: base);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        Fused {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            blown: &self.blown,
        }
    }
}

/// One range's items, until the fuse blows.
#[derive(Debug)]
pub struct Fused<'a, S> {
    items: S,
    blown: &'a AtomicBool,
}

impl<S: Iterator> Iterator for Fused<'_, S> {
    type Item = S::Item;

    fn next(&mut self) -> Option<S::Item> {
        // Relaxed: a hint to stop early; the panic itself travels by the pool's protocol.
        if self.blown.load(Ordering::Relaxed) {
            return None;
        }
        self.items.next()
    }
}

impl<S> Drop for Fused<'_, S> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Relaxed: as in `next`.
            self.blown.store(true, Ordering::Relaxed);
        }
    }
}
