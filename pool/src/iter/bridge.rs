//! `par_bridge()`: a sequential iterator's items handed to the current pool's threads, as
//! rayon's. Every participant pulls items one at a time from the shared iterator, under a
//! lock, until it runs dry: the items' order is not kept (rayon does not keep it either).
//! In a child forked while the bridge was being pulled, the iterator is neither pulled
//! (its lock may be held by a thread the child lacks) nor dropped (that thread may have been
//! inside its `next`): the operation ends there, and the pool's fork rule applies (README
//! "Fork").

use super::drive::sealed::Drive;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Positions of a bridge: each claimed range pulls until the iterator is dry, so more
/// positions than participants only cost a claim each once it is.
const BRIDGE_POSITIONS: usize = 64;

/// Turns a sequential iterator into a parallel one, as rayon's trait of the same name.
pub trait ParallelBridge: Sized {
    /// The items of `self`, pulled by the current pool's threads in no particular order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let mut squares: Vec<u64> = (0..1000u64).par_bridge().map(|x| x * x).collect();
    /// squares.sort_unstable();
    /// assert_eq!(squares, (0..1000u64).map(|x| x * x).collect::<Vec<_>>());
    /// ```
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<T> ParallelBridge for T
where
    T: Iterator + Send,
    T::Item: Send,
{
    fn par_bridge(self) -> IterBridge<T> {
        IterBridge {
            iter: ManuallyDrop::new(Mutex::new(Some(self))),
            pulled_in: AtomicU64::new(0),
        }
    }
}

/// `iter.par_bridge()`.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct IterBridge<T> {
    /// `None` once dry (or once a call of `next` panicked). Dropped with the bridge, unless
    /// a fork happened while it was being pulled.
    iter: ManuallyDrop<Mutex<Option<T>>>,
    /// One more than the fork generation of the process that first pulled an item; 0 before
    /// the first pull.
    pulled_in: AtomicU64,
}

impl<T> IterBridge<T> {
    /// Whether this process may pull from the iterator: the first to, or the one that
    /// did. A child forked after its parent started pulling may not.
    fn pulls_here(&self) -> bool {
        let here = crate::fork::generation() + 1;
        // Relaxed: each process stores its own generation, at most once; what the value
        // says holds for every thread of the process that reads it, and orders nothing.
        match self.pulled_in.load(Ordering::Relaxed) {
            0 => match (self.pulled_in).compare_exchange(
                0,
                here,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => true,
                Err(first) => first == here,
            },
            first => first == here,
        }
    }
}

impl<T> Drop for IterBridge<T> {
    fn drop(&mut self) {
        let pulled_in = *self.pulled_in.get_mut();
        if pulled_in == 0 || pulled_in == crate::fork::generation() + 1 {
            // SAFETY: dropped here only, once, and not used after.
            unsafe { ManuallyDrop::drop(&mut self.iter) }
        }
        // Else leaked: forked while a thread this process lacks may have been inside the
        // iterator's `next`.
    }
}

impl<T> Drive for IterBridge<T>
where
    T: Iterator + Send,
    T::Item: Send,
{
    type Item = T::Item;
    type Seq<'a>
        = Pull<'a, T>
    where
        Self: 'a;

    fn positions(&self) -> usize {
        BRIDGE_POSITIONS
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, _range: Range<usize>) -> Pull<'_, T> {
        Pull { from: self }
    }
}

/// The items one participant pulls from a bridge, until it is dry.
pub struct Pull<'a, T> {
    from: &'a IterBridge<T>,
}

impl<T: Iterator> Iterator for Pull<'_, T> {
    type Item = T::Item;

    fn next(&mut self) -> Option<T::Item> {
        if !self.from.pulls_here() {
            return None;
        }
        // A lock poisoned by a panicking `next` holds an iterator in an unknown state:
        // dry from then on (the panic resumes on the consumer's caller).
        let mut iter = self.from.iter.lock().ok()?;
        let item = iter.as_mut()?.next();
        if item.is_none() {
            *iter = None;
        }
        item
    }
}
