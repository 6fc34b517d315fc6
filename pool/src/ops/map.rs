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

/// A participant's state in `map`: the slots its parts left unwritten (a call panicked
/// there, or a part's items stopped early), and its first panic, boxed at the first such
/// event. Empty, it is a null pointer: it allocates nothing and moves in a register, as
/// does the region's combined `Caught`.
#[derive(Default)]
pub(crate) struct Caught(Option<Box<Holes>>);

/// What a participant's parts left: the indices with no result (disjoint ranges, each
/// within one part), and the first panic's payload.
struct Holes {
    unwritten: Vec<Range<usize>>,
    first: Option<Panic>,
}

impl Caught {
    /// Indices `unwritten` have no result, and `payload` (if any) is what stopped them:
    /// kept if it is the first, else discarded.
    #[cold]
    fn keep(&mut self, unwritten: Range<usize>, payload: Option<Panic>) {
        let holes = self.0.get_or_insert_with(|| {
            Box::new(Holes {
                unwritten: Vec::new(),
                first: None,
            })
        });
        if !unwritten.is_empty() {
            holes.unwritten.push(unwritten);
        }
        holes.keep_first(payload);
    }

    /// Both participants' holes, `self`'s first panic kept (the earlier participant's).
    fn merge(mut self, mut later: Caught) -> Caught {
        match (self.0.take(), later.0.take()) {
            (Some(mut holes), Some(more)) => {
                let Holes { unwritten, first } = *more;
                holes.unwritten.extend(unwritten);
                holes.keep_first(first);
                Caught(Some(holes))
            }
            (holes, more) => Caught(holes.or(more)),
        }
    }
}

impl Holes {
    /// `payload` becomes the first panic if none is kept yet; else it is discarded.
    fn keep_first(&mut self, payload: Option<Panic>) {
        match (&self.first, payload) {
            (None, payload) => self.first = payload,
            (Some(_), Some(later)) => unwind::discard(later),
            (Some(_), None) => {}
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
    if let Some(first) = holes.first {
        unwind::discard(first);
    }
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
    append_ranges(runs, &mut out, n, OnFork::Panic, write);
    out
}

/// As [`map_ranges`], the `n` results appended to `out`'s items, in its storage (grown
/// once); if a call panicked, `out` keeps the items it had. Generic in `write` only to
/// tell call sites apart (README "Regions too small to share"): the pass itself is one
/// code for every `write` of a `U`.
pub(crate) fn append_ranges<R, U, W>(
    runs: &R,
    out: &mut Vec<U>,
    n: usize,
    on_fork: OnFork,
    write: &W,
) where
    R: Regions + ?Sized,
    U: Send,
    W: Fn(Range<usize>, &mut [MaybeUninit<U>], &mut Caught) + Sync,
{
    let site = write_code::<U, W> as fn(&W, Range<usize>, &mut [MaybeUninit<U>], &mut Caught);
    append_erased(runs, out, n, on_fork, (site as usize, write));
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
    on_fork: OnFork,
    (site, write): (usize, &WriteRange<'_, U>),
) where
    R: Regions + ?Sized,
    U: Send,
{
    out.reserve(n);
    let had = out.len();
    let slots = Disjoint::new(&mut out.spare_capacity_mut()[..n]);
    // Forked from inside a call: which results the parent's helpers wrote is unknown here,
    // so none is dropped (the storage is freed, its items leaked); the child then does as
    // `on_fork` says.
    let mut caught = pipeline::run(
        runs,
        n,
        (Claims::FromHomes(None), Some(site)),
        &Caught::default,
        |caught, range| {
            // SAFETY: claimed ranges are disjoint.
            let part = unsafe { slots.range(range.clone()) };
            write(range, part, caught);
        },
        on_fork,
        |caught| caught.fold(Caught::default(), Caught::merge),
    );
    let Some(holes) = caught.0.take() else {
        // SAFETY: every index ran (a region runs every task it is given) and wrote its
        // result; none panicked. The first `had` were initialised already.
        unsafe { out.set_len(had + n) };
        return;
    };
    let Holes { unwritten, first } = *holes;
    drop_written(&mut out.spare_capacity_mut()[..n], unwritten);
    match first {
        Some(first) => panic::resume_unwind(first),
        // Items stop early only after a panic (`panic_fuse`), whose payload another part
        // keeps: this is a fault of an adaptor, reported rather than hidden.
        None => panic!("a parallel iterator yielded fewer items than its length"),
    }
}

/// Writes `f(x)` into `part[k]` for every `k`, `x` being item `k` of the part's inputs
/// (`inputs(range)` iterates over those of `range` of the part, as often as asked: plain
/// indices or a slice's items); the index (`start + k`) of a call that panicked goes to
/// `caught`, and the rest of the part still runs.
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
        let (wrote, panicked) = write_from(&mut part[from..], || inputs(from..len), &f);
        let at = from + wrote;
        if at == len && panicked.is_none() {
            return;
        }
        // The call at `at` panicked (a call past the last slot: none); inputs that stopped
        // early have nothing more to give.
        let end = if panicked.is_some() {
            len.min(at + 1)
        } else {
            len
        };
        caught.keep(start + at..start + end, panicked);
        from = end;
    }
}

/// Writes the items of `items()` into `part[k]` in order: an iterator's items, made once
/// (its source may be owned, so a range is never made again). If it panics or stops short,
/// its slots from there on go to `caught` unwritten: the items it made and did not yield
/// are its to drop, as unwinding drops them.
pub(crate) fn write_items<U, X>(
    part: &mut [MaybeUninit<U>],
    start: usize,
    items: impl FnOnce() -> X,
    caught: &mut Caught,
) where
    X: Iterator<Item = U>,
{
    let len = part.len();
    let (wrote, panicked) = write_from(part, items, &|item| item);
    if wrote < len || panicked.is_some() {
        caught.keep(start + wrote..start + len, panicked);
    }
}

/// Writes `f(x)` for the items `x` of `inputs()` into `part` from its start, until either
/// runs out or a call unwinds: how many slots it wrote, and the payload if a call (or
/// making or dropping the inputs) unwound. One zipped loop with no bounds check and no
/// store inside but the result's, so it vectorises where `f` allows; the part arrives as
/// a parameter, so the compiler knows that nothing `f` reads is written through it.
fn write_from<U, X, F>(
    part: &mut [MaybeUninit<U>],
    inputs: impl FnOnce() -> X,
    f: &F,
) -> (usize, Option<Panic>)
where
    X: Iterator,
    F: Fn(X::Item) -> U,
{
    let mut wrote = 0;
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        for (slot, x) in part.iter_mut().zip(inputs()) {
            slot.write(f(x));
            wrote += 1;
        }
    }));
    (wrote, outcome.err())
}

/// Drops every result of `slots` but those in `unwritten` (disjoint ranges of indices). A
/// `Drop` that panics does not stop the others, as a slice's drop glue goes on: its payload
/// is discarded, so the call's panic is the one that resumes.
fn drop_written<U>(slots: &mut [MaybeUninit<U>], mut unwritten: Vec<Range<usize>>) {
    unwritten.sort_unstable_by_key(|hole| hole.start);
    let mut holes = unwritten.iter().peekable();
    for (i, slot) in slots.iter_mut().enumerate() {
        while holes.next_if(|hole| hole.end <= i).is_some() {}
        if holes.peek().is_some_and(|hole| hole.start <= i) {
            continue;
        }
        // SAFETY: every index outside the holes was written, and nothing else drops it:
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
            caught.keep(i..i + 1, Some(Box::new(Dropped(&DROPS, i))));
        }
        caught
    }

    /// What `caught` holds: its unwritten ranges, and which payload is its first.
    fn held(mut caught: Caught) -> Option<(Vec<Range<usize>>, Option<usize>)> {
        (caught.0.take()).map(|holes| (holes.unwritten, holes.first.map(which)))
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
            let kept = held(caught_at(earlier).merge(caught_at(later)));
            let indices: Vec<usize> = earlier.iter().chain(later).copied().collect();
            let expected = (indices.first()).map(|&first| {
                let ranges = indices.iter().map(|&i| i..i + 1).collect();
                (ranges, Some(first))
            });
            assert_eq!(kept, expected, "{earlier:?} then {later:?}");
            payloads += indices.len();
        }
        // Items that stopped short leave their slots with no payload of their own: the
        // merge takes the other participant's, in either order.
        let mut short = Caught::default();
        short.keep(40..50, None);
        let (unwritten, first) = held(short).expect("held");
        assert_eq!(
            (unwritten.len(), unwritten.first(), first),
            (1, Some(&(40..50)), None)
        );
        for short_first in [true, false] {
            let mut short = Caught::default();
            short.keep(40..50, None);
            let (earlier, later) = match short_first {
                true => (short, caught_at(&[7])),
                false => (caught_at(&[7]), short),
            };
            let (mut unwritten, first) = held(earlier.merge(later)).unwrap();
            unwritten.sort_unstable_by_key(|hole| hole.start);
            assert_eq!((unwritten, first), (vec![7..8, 40..50], Some(7)));
            payloads += 1;
        }
        // A panic after every slot was written (a state's `Drop`) keeps its payload, no slot.
        let mut late = Caught::default();
        late.keep(60..60, Some(Box::new(Dropped(&DROPS, 60))));
        assert_eq!(held(late), Some((vec![], Some(60))));
        payloads += 1;
        // A participant's holes dropped unmerged (a region cut short) discard its panic.
        drop(caught_at(&[5, 6]));
        payloads += 2;
        // Every payload dropped once: the kept ones by `which`, the rest where discarded.
        assert_eq!(DROPS.load(Ordering::Relaxed) - before, payloads);
    }
}
