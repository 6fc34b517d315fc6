//! `par_bridge()`: a sequential iterator's items handed to the current pool's threads, as
//! rayon's. Every participant pulls items one at a time from the shared iterator, under a
//! lock, until it runs dry: the items' order is not kept (rayon does not keep it either).

use super::drive::sealed::Drive;
use std::ops::Range;
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
            iter: Mutex::new(Some(self)),
        }
    }
}

/// `iter.par_bridge()`.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct IterBridge<T> {
    /// `None` once dry (or once a call of `next` panicked).
    iter: Mutex<Option<T>>,
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
        Pull { from: &self.iter }
    }
}

/// The items one participant pulls from a bridge, until it is dry.
pub struct Pull<'a, T> {
    from: &'a Mutex<Option<T>>,
}

impl<T: Iterator> Iterator for Pull<'_, T> {
    type Item = T::Item;

    fn next(&mut self) -> Option<T::Item> {
        // A lock poisoned by a panicking `next` holds an iterator in an unknown state:
        // dry from then on (the panic resumes on the consumer's caller).
        let mut iter = self.from.lock().ok()?;
        let item = iter.as_mut()?.next();
        if item.is_none() {
            *iter = None;
        }
        item
    }
}
