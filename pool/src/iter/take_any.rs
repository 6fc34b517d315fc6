//! `take_any`, `skip_any` and their `_while` forms, as rayon's: a count or a test shared by
//! every participant, so which items they take or skip is not promised, only how many, or
//! that none is taken (skipped) after one participant found the test failed.

use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
    /// Whether no further item can go through: checked before taking one, so that a
    /// participant makes no item in vain (a `filter` below may scan far for one).
    fn done(&self) -> bool {
        false
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

/// `skip_any_while`'s rule.
pub struct SkipWhile<P> {
    pred: P,
    skipping: AtomicBool,
}

impl TakeCount {
    pub(crate) fn new(n: usize) -> Self {
        TakeCount {
            n,
            taken: AtomicUsize::new(0),
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
    fn done(&self) -> bool {
        self.taken.load(Ordering::Relaxed) >= self.n
    }

    fn decide(&self, _: &T) -> Decision {
        // Past `n` by at most one a participant: each looked at `done` first.
        if self.taken.fetch_add(1, Ordering::Relaxed) < self.n {
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
    fn done(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
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

    positions_of_base!(exact: false);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        Decided {
            // SAFETY: the caller's contract, passed on.
            items: unsafe { self.base.seq(range) },
            rule: &self.rule,
        }
    }
}

/// One range's items that the rule lets through.
pub struct Decided<'a, S, R> {
    items: S,
    rule: &'a R,
}

impl<S: Iterator, R: Rule<S::Item>> Iterator for Decided<'_, S, R> {
    type Item = S::Item;

    fn next(&mut self) -> Option<S::Item> {
        loop {
            if self.rule.done() {
                return None;
            }
            let item = self.items.next()?;
            match self.rule.decide(&item) {
                Decision::Yield => return Some(item),
                Decision::Skip => {}
                Decision::End => return None,
            }
        }
    }
}
