//! Ordered results: `map` writes each result straight into the returned `Vec`'s storage, at
//! its index (no per-task `Vec`, no second copy), as rayon's `collect` does. If a call
//! panics, every result already written is dropped exactly once, nothing else is, and the
//! panic resumes on the caller.

use super::pipeline::{self, OnFork};
use super::region::{Disjoint, Regions, Runs};
use crate::region::Claims;
use crate::unwind::{self, Panic};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};

/// Ordered results: `map` and `map_slice`. Run on a [`Pool`](crate::Pool) or on
/// [`pool.wide()`](crate::Pool::wide).
pub trait ParallelMap: Runs {
    /// `[f(0), f(1), ..., f(n - 1)]`, computed in parallel and written in place.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let squares = pool.map(1000, |i| (i * i) as u64);
    /// assert_eq!(squares.len(), 1000);
    /// assert_eq!(squares[999], 998_001);
    /// ```
    fn map<U, F>(&self, n: usize, f: F) -> Vec<U>
    where
        U: Send,
        F: Fn(usize) -> U + Sync,
    {
        map_ranges(self, n, &|range, part, caught| {
            let start = range.start;
            let indices = |part: Range<usize>| start + part.start..start + part.end;
            write_results(part, start, indices, &f, caught);
        })
    }

    /// `[f(&items[0]), f(&items[1]), ...]`, computed in parallel and written in place.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let words = ["a", "bb", "ccc"];
    /// assert_eq!(pool.map_slice(&words, |w| w.len()), [1, 2, 3]);
    /// ```
    fn map_slice<T, U, F>(&self, items: &[T], f: F) -> Vec<U>
    where
        T: Sync,
        U: Send,
        F: Fn(&T) -> U + Sync,
    {
        map_ranges(self, items.len(), &|range, part, caught| {
            let start = range.start;
            let inputs = &items[range];
            write_results(part, start, |part| inputs[part].iter(), &f, caught);
        })
    }
}

impl<R: Runs + ?Sized> ParallelMap for R {}

/// Where `map` and `map_slice` write a claimed range: its part of the result's storage,
/// and the participant's panics.
pub(crate) type WriteRange<'a, U> =
    dyn Fn(Range<usize>, &mut [MaybeUninit<U>], &mut Caught) + Sync + 'a;

/// A participant's state in `map`: the indices whose call panicked (no result there), and
/// its first panic, boxed at its first panic. Empty, it is a null pointer: it allocates
/// nothing and moves in a register, as does the region's combined `Caught`.
#[derive(Default)]
pub(crate) struct Caught(Option<Box<Holes>>);

/// What a participant's panicking calls left: their indices, and the first one's payload.
struct Holes {
    indices: Vec<usize>,
    first: Panic,
}

impl Caught {
    /// The call at `index` panicked with `payload`: kept if it is the first, else discarded.
    #[cold]
    fn keep(&mut self, index: usize, payload: Panic) {
        match &mut self.0 {
            Some(holes) => {
                holes.indices.push(index);
                unwind::discard(payload);
            }
            None => {
                self.0 = Some(Box::new(Holes {
                    indices: vec![index],
                    first: payload,
                }))
            }
        }
    }

    /// Both participants' holes, `self`'s first panic kept (the earlier participant's).
    fn merge(mut self, mut later: Caught) -> Caught {
        match (self.0.take(), later.0.take()) {
            (Some(mut holes), Some(more)) => {
                let Holes { indices, first } = *more;
                holes.indices.extend(indices);
                unwind::discard(first);
                Caught(Some(holes))
            }
            (holes, more) => Caught(holes.or(more)),
        }
    }
}

impl Drop for Caught {
    /// A panic never resumed (its region cut short) is discarded where its `Drop` cannot
    /// unwind into the pool. Inlined: an empty one is a test of a pointer.
    #[inline]
    fn drop(&mut self) {
        if let Some(holes) = self.0.take() {
            discard_unresumed(*holes);
        }
    }
}

#[cold]
fn discard_unresumed(holes: Holes) {
    unwind::discard(holes.first);
}

/// `map`'s and `map_slice`'s pass through the pipeline: a `Vec` of `n` results, each
/// claimed range's part of its storage filled in place by `write`.
pub(crate) fn map_ranges<R, U, W>(runs: &R, n: usize, write: &W) -> Vec<U>
where
    R: Regions + ?Sized,
    U: Send,
    W: Fn(Range<usize>, &mut [MaybeUninit<U>], &mut Caught) + Sync,
{
    let mut out = Vec::with_capacity(n);
    append_ranges(runs, &mut out, n, write);
    out
}

/// As [`map_ranges`], the `n` results appended to `out`'s items, in its storage (grown
/// once); if a call panicked, `out` keeps the items it had. Generic in `write` only to
/// tell call sites apart (README "Regions too small to share"): the pass itself is one
/// code for every `write` of a `U`.
pub(crate) fn append_ranges<R, U, W>(runs: &R, out: &mut Vec<U>, n: usize, write: &W)
where
    R: Regions + ?Sized,
    U: Send,
    W: Fn(Range<usize>, &mut [MaybeUninit<U>], &mut Caught) + Sync,
{
    let site = write_code::<U, W> as fn(&W, Range<usize>, &mut [MaybeUninit<U>], &mut Caught);
    append_erased(runs, out, n, (site as usize, write));
}

/// Code made for one `write` alone: its address is the call site's.
fn write_code<U, W>(
    write: &W,
    range: Range<usize>,
    part: &mut [MaybeUninit<U>],
    caught: &mut Caught,
) where
    W: Fn(Range<usize>, &mut [MaybeUninit<U>], &mut Caught),
{
    write(range, part, caught);
}

/// [`append_ranges`] for the call site whose code is at `site`.
fn append_erased<R, U>(
    runs: &R,
    out: &mut Vec<U>,
    n: usize,
    (site, write): (usize, &WriteRange<'_, U>),
) where
    R: Regions + ?Sized,
    U: Send,
{
    out.reserve(n);
    let had = out.len();
    let slots = Disjoint::new(&mut out.spare_capacity_mut()[..n]);
    // Forked from inside a call: which results the parent's helpers wrote is unknown here,
    // so none is dropped (the storage is freed, its items leaked) and the child panics.
    let mut caught = pipeline::run(
        runs,
        n,
        (Claims::FromHomes, Some(site)),
        &Caught::default,
        |caught, range| {
            // SAFETY: claimed ranges are disjoint.
            let part = unsafe { slots.range(range.clone()) };
            write(range, part, caught);
        },
        OnFork::Panic,
        |caught| caught.fold(Caught::default(), Caught::merge),
    );
    let Some(holes) = caught.0.take() else {
        // SAFETY: every index ran (a region runs every task it is given) and wrote its
        // result; none panicked. The first `had` were initialised already.
        unsafe { out.set_len(had + n) };
        return;
    };
    let Holes { indices, first } = *holes;
    drop_written(&mut out.spare_capacity_mut()[..n], indices);
    panic::resume_unwind(first)
}

/// Writes `f(x)` into `part[k]` for every `k`, `x` being item `k` of the part's inputs
/// (`inputs(range)` iterates over those of `range` of the part); the index (`start + k`)
/// of a call that panicked goes to `caught`, and the rest of the part still runs. One
/// zipped loop with no bounds check and no store inside but the result's, so it
/// vectorises where `f` allows; the part arrives as a parameter, so the compiler knows
/// that nothing `f` reads is written through it.
pub(crate) fn write_results<U, X, F>(
    part: &mut [MaybeUninit<U>],
    start: usize,
    inputs: impl Fn(Range<usize>) -> X,
    f: F,
    caught: &mut Caught,
) where
    X: Iterator,
    F: Fn(X::Item) -> U,
{
    let len = part.len();
    let mut from = 0;
    while from < len {
        // How far the loop got: read only after a call unwound, so the compiler keeps it
        // in a register through a loop of calls that cannot unwind.
        let mut at = from;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            for (slot, x) in part[from..].iter_mut().zip(inputs(from..len)) {
                slot.write(f(x));
                at += 1;
            }
        }));
        let Err(payload) = outcome else {
            return;
        };
        caught.keep(start + at, payload);
        from = at + 1;
    }
}

/// Drops every result of `slots` but those at `holes`, the indices whose call panicked. A
/// `Drop` that panics does not stop the others, as a slice's drop glue goes on: its payload
/// is discarded, so the call's panic is the one that resumes.
fn drop_written<U>(slots: &mut [MaybeUninit<U>], mut holes: Vec<usize>) {
    holes.sort_unstable();
    let mut holes = holes.into_iter().peekable();
    for (i, slot) in slots.iter_mut().enumerate() {
        if holes.peek() == Some(&i) {
            holes.next();
            continue;
        }
        // SAFETY: every index but the holes wrote its result, and nothing else drops it:
        // the `Vec` never took it (its length stays 0), and each is dropped once here.
        let dropped = panic::catch_unwind(AssertUnwindSafe(|| unsafe { slot.assume_init_drop() }));
        if let Err(payload) = dropped {
            unwind::discard(payload);
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A payload that counts its drops.
    struct Dropped<'a>(&'a AtomicUsize, usize);

    impl Drop for Dropped<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Which `Dropped` a kept payload is.
    fn which(first: Panic) -> usize {
        let first = first
            .downcast::<Dropped<'static>>()
            .expect("a `Dropped` payload");
        first.1
    }

    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// A participant's panics at `indices`, payloads tagged by index.
    fn caught_at(indices: &[usize]) -> Caught {
        let mut caught = Caught::default();
        for &i in indices {
            caught.keep(i, Box::new(Dropped(&DROPS, i)));
        }
        caught
    }

    #[test]
    fn holes_keep_every_index_in_order_and_only_the_earliest_panic() {
        let before = DROPS.load(Ordering::Relaxed);
        assert!(Caught::default().0.is_none(), "empty until a panic");
        // (earlier participant's holes, later's): merged, every index in order and the
        // earlier's first panic, else the later's.
        let cases: [(&[usize], &[usize]); 4] = [
            (&[], &[]),
            (&[3, 9], &[]),
            (&[], &[20, 25]),
            (&[3, 9], &[20, 25, 30]),
        ];
        let mut payloads = 0;
        for (earlier, later) in cases {
            let mut merged = caught_at(earlier).merge(caught_at(later));
            let kept = merged
                .0
                .take()
                .map(|holes| (holes.indices, which(holes.first)));
            let indices: Vec<usize> = earlier.iter().chain(later).copied().collect();
            let expected = indices.first().map(|&first| (indices.clone(), first));
            assert_eq!(kept, expected, "{earlier:?} then {later:?}");
            payloads += indices.len();
        }
        // A participant's holes dropped unmerged (a region cut short) discard its panic.
        drop(caught_at(&[5, 6]));
        payloads += 2;
        // Every payload dropped once: the kept ones by `which`, the rest where discarded.
        assert_eq!(DROPS.load(Ordering::Relaxed) - before, payloads);
    }
}
