//! `par_bridge()`: a sequential iterator's items handed to the current pool's threads, as
//! rayon's. Every participant pulls items one at a time from the shared iterator, under a
//! lock, until it runs dry: the items' order is not kept (rayon does not keep it either).
//! In a child forked while a thread it lacks was inside the iterator's `next` (holding the
//! bridge's lock), the iterator is neither pulled nor dropped: the operation ends there, and
//! the pool's fork rule applies (README "Fork").

use super::drive::sealed::Drive;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

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
            adopted: AtomicU64::new(0),
        }
    }
}

/// `iter.par_bridge()`.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct IterBridge<T> {
    /// `None` once dry (or once a call of `next` panicked). Locked across each call of the
    /// iterator's `next`; dropped with the bridge unless a thread a fork left behind holds
    /// it.
    iter: ManuallyDrop<Mutex<Option<T>>>,
    /// One more than the fork generation of the process that pulls from it (the first to
    /// find its lock free); 0 before the first pull.
    adopted: AtomicU64,
}

impl<T> IterBridge<T> {
    /// The iterator's lock, or `None` where this process may not pull: a child forked
    /// while a thread it lacks held the lock (inside the iterator's `next`, which it never
    /// leaves there).
    fn lock_here(&self) -> Option<MutexGuard<'_, Option<T>>> {
        let here = crate::fork::generation() + 1;
        // Relaxed: a process stores its own generation, and the lock orders what the
        // iterator's state needs.
        if self.adopted.load(Ordering::Relaxed) == here {
            // A poisoned lock: a panicking `next` left the iterator in an unknown state,
            // dry from then on (the panic resumes on the consumer's caller).
            return self.iter.lock().ok();
        }
        // This process's first pull. The lock is held only by another of its threads
        // pulling now, whose own range pulls on until the iterator is dry, or by a thread
        // a fork left behind, which never lets go: either way this range ends here.
        let guard = self.iter.try_lock().ok()?;
        self.adopted.store(here, Ordering::Relaxed);
        Some(guard)
    }
}

impl<T> Drop for IterBridge<T> {
    fn drop(&mut self) {
        // Held while the bridge is dropped (no live thread can hold it then): by a thread a
        // fork left behind, inside the iterator's `next`; leaked.
        if matches!(self.iter.try_lock(), Err(TryLockError::WouldBlock)) {
            return;
        }
        // SAFETY: dropped here only, once, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.iter) }
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

    fn position_count(&self) -> usize {
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
#[derive(Debug)]
pub struct Pull<'a, T> {
    from: &'a IterBridge<T>,
}

impl<T: Iterator> Iterator for Pull<'_, T> {
    type Item = T::Item;

    fn next(&mut self) -> Option<T::Item> {
        let mut iter = self.from.lock_here()?;
        let item = iter.as_mut()?.next();
        if item.is_none() {
            *iter = None;
        }
        item
    }
}
