//! `take_any`, `skip_any` and their `_while` forms, as rayon's: a count or a test shared by
//! every participant, so which items they take or skip is not promised, only how many, or
//! that none is taken (skipped) after one participant found the test failed.

use super::drive::sealed::Drive;
use super::drive::{has_ended, positions_of_base};
use crate::sync::{AtomicBool, Ordering};
use std::ops::Range;
use std::sync::atomic::AtomicUsize;

/// The items of `base` that its rule lets through: [`TakeAny`], [`SkipAny`],
/// [`TakeAnyWhile`], [`SkipAnyWhile`].
#[must_use = "iterators do nothing until consumed"]
pub struct AnyItems<I, R> {
    base: I,
    rule: R,
}

impl<I, R> AnyItems<I, R> {
    pub(crate) fn new(base: I, rule: R) -> Self {
        AnyItems { base, rule }
    }
}

/// `iter.take_any(n)`: `n` of the items (all if fewer), not necessarily the first.
pub type TakeAny<I> = AnyItems<I, TakeCount>;
/// `iter.skip_any(n)`: the items but `n` of them (none if fewer), not necessarily the first.
pub type SkipAny<I> = AnyItems<I, SkipCount>;
/// `iter.take_any_while(pred)`: items for which `pred` holds, until a participant meets
/// one for which it does not; none after that.
pub type TakeAnyWhile<I, P> = AnyItems<I, TakeWhile<P>>;
/// `iter.skip_any_while(pred)`: every item but those for which `pred` holds met before a
/// participant met one for which it does not.
pub type SkipAnyWhile<I, P> = AnyItems<I, SkipWhile<P>>;

/// What a rule does with an item.
#[derive(Debug)]
pub enum Decision {
    /// Hand the item on.
    Yield,
    /// Drop the item and look at the next.
    Skip,
    /// Yields nothing more from this range (nor, by the rule, from any other).
    End,
}

/// Which items go through, decided with state every participant shares; a rule's clone
/// starts that state afresh. Not nameable outside the crate: this module's rules only.
pub trait Rule<T>: Sync {
    /// A flag set once no further item can go through, if the rule can end: checked
    /// before taking an item, so that a participant makes none in vain (a `filter` below
    /// may scan far for one), and by the consumers, which then claim no further range.
    fn ended(&self) -> Option<&AtomicBool> {
        None
    }

    /// What to do with `item`.
    fn decide(&self, item: &T) -> Decision;
}

/// `take_any`'s rule.
#[derive(Debug)]
pub struct TakeCount {
    n: usize,
    /// Items counted so far (passes `n` by the participants that found it reached).
    taken: AtomicUsize,
    /// Set once `n` items were counted.
    full: AtomicBool,
}

/// `skip_any`'s rule.
#[derive(Debug)]
pub struct SkipCount {
    n: usize,
    /// Items counted so far (passes `n` once skipping is over).
    skipped: AtomicUsize,
}

/// `take_any_while`'s rule.
pub struct TakeWhile<P> {
    pred: P,
    ended: AtomicBool,
}

impl<P> std::fmt::Debug for TakeWhile<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TakeWhile")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

/// `skip_any_while`'s rule.
pub struct SkipWhile<P> {
    pred: P,
    skipping: AtomicBool,
}

impl<P> std::fmt::Debug for SkipWhile<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkipWhile")
            .field("skipping", &self.skipping)
            .finish_non_exhaustive()
    }
}

impl TakeCount {
    pub(crate) fn new(n: usize) -> Self {
        TakeCount {
            n,
            taken: AtomicUsize::new(0),
            full: AtomicBool::new(n == 0),
        }
    }
}

impl SkipCount {
    pub(crate) fn new(n: usize) -> Self {
        SkipCount {
            n,
            skipped: AtomicUsize::new(0),
        }
    }
}

impl<P> TakeWhile<P> {
    pub(crate) fn new(pred: P) -> Self {
        TakeWhile {
            pred,
            ended: AtomicBool::new(false),
        }
    }
}

impl<P> SkipWhile<P> {
    pub(crate) fn new(pred: P) -> Self {
        SkipWhile {
            pred,
            skipping: AtomicBool::new(true),
        }
    }
}

// Every atomic here is Relaxed: the counts and flags order no other memory; a participant
// that reads one late takes (skips) an item in vain, which the counts then refuse.

impl Clone for TakeCount {
    fn clone(&self) -> Self {
        TakeCount::new(self.n)
    }
}

impl<T> Rule<T> for TakeCount {
    fn ended(&self) -> Option<&AtomicBool> {
        Some(&self.full)
    }

    fn decide(&self, _: &T) -> Decision {
        // Past `n` by at most one a participant: each looked at `full` first.
        let taken = self.taken.fetch_add(1, Ordering::Relaxed);
        if taken + 1 >= self.n {
            self.full.store(true, Ordering::Relaxed);
        }
        if taken < self.n {
            Decision::Yield
        } else {
            Decision::End
        }
    }
}

impl Clone for SkipCount {
    fn clone(&self) -> Self {
        SkipCount::new(self.n)
    }
}

impl<T> Rule<T> for SkipCount {
    fn decide(&self, _: &T) -> Decision {
        if self.skipped.load(Ordering::Relaxed) >= self.n
            || self.skipped.fetch_add(1, Ordering::Relaxed) >= self.n
        {
            Decision::Yield
        } else {
            Decision::Skip
        }
    }
}

impl<P: Clone> Clone for TakeWhile<P> {
    fn clone(&self) -> Self {
        TakeWhile::new(self.pred.clone())
    }
}

impl<T, P: Fn(&T) -> bool + Sync> Rule<T> for TakeWhile<P> {
    fn ended(&self) -> Option<&AtomicBool> {
        Some(&self.ended)
    }

    fn decide(&self, item: &T) -> Decision {
        if self.ended.load(Ordering::Relaxed) {
            return Decision::End;
        }
        if (self.pred)(item) {
            Decision::Yield
        } else {
            self.ended.store(true, Ordering::Relaxed);
            Decision::End
        }
    }
}

impl<P: Clone> Clone for SkipWhile<P> {
    fn clone(&self) -> Self {
        SkipWhile::new(self.pred.clone())
    }
}

impl<T, P: Fn(&T) -> bool + Sync> Rule<T> for SkipWhile<P> {
    fn decide(&self, item: &T) -> Decision {
        if !self.skipping.load(Ordering::Relaxed) {
            return Decision::Yield;
        }
        if (self.pred)(item) {
            Decision::Skip
        } else {
            self.skipping.store(false, Ordering::Relaxed);
            Decision::Yield
        }
    }
}

impl<I: Clone, R: Clone> Clone for AnyItems<I, R> {
    /// The rule's shared state afresh.
    fn clone(&self) -> Self {
        AnyItems {
            base: self.base.clone(),
            rule: self.rule.clone(),
        }
    }
}

impl<I: std::fmt::Debug, R> std::fmt::Debug for AnyItems<I, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnyItems")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I: Drive, R: Rule<I::Item>> Drive for AnyItems<I, R> {
    type Item = I::Item;
    type Seq<'a>
        = Decided<'a, I::Seq<'a>, R>
    where
        Self: 'a;

    fn exact(&self) -> bool {
        false
    }

    positions_of_base!(@positions);

    /// The rule's flag where it can end (set too where a range finds the base's set),
    /// else the base's.
    fn ended(&self) -> Option<&AtomicBool> {
        self.rule.ended().or_else(|| self.base.ended())
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        Decided {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            rule: &self.rule,
            base_ended: self.base.ended(),
        }
    }
}

/// One range's items that the rule lets through.
#[derive(Debug)]
pub struct Decided<'a, S, R> {
    items: S,
    rule: &'a R,
    base_ended: Option<&'a AtomicBool>,
}

impl<S: Iterator, R: Rule<S::Item>> Iterator for Decided<'_, S, R> {
    type Item = S::Item;

    fn next(&mut self) -> Option<S::Item> {
        loop {
            if has_ended(self.rule.ended()) {
                return None;
            }
            let Some(item) = self.items.next() else {
                if let Some(ended) = self.rule.ended().filter(|_| has_ended(self.base_ended)) {
                    ended.store(true, Ordering::Relaxed);
                }
                return None;
            };
            match self.rule.decide(&item) {
                Decision::Yield => return Some(item),
                Decision::Skip => {}
                Decision::End => return None,
            }
        }
    }
}
