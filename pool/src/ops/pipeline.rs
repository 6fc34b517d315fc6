//! The one pipeline under every operation: each participant's state, made at most once by
//! `init` on its first range, folds the ranges it claims, from its home first or in order
//! until the optional stop flag is set; the caller combines the states once, after the
//! region. `map`, `fold` and its conveniences, the searches, the loops over mutable
//! slices and the scan are instances of it, and it is the operations' one door into the
//! pool (`Pool::run_chunks`, README "The operations' hook").

use super::region::{Drain, PerParticipant, Regions};
use crate::region::{Claims, Forked};
use crate::solo::{self, Verdict};
use crate::tasks::Participant;
use std::ops::Range;

/// Participants whose states of a few words (the operations' own) are kept in place,
/// without allocating: as wide as most machines' pools.
const SMALL: usize = 8;

/// A caller's state of at most this many bytes is kept in place, as the operations' own:
/// `SMALL` of them, each on lines of its own, take a kilobyte of the caller's stack on
/// x86-64.
const SMALL_STATE: usize = 64;

/// What a child forked from inside one of the region's tasks does, where a helper of the
/// parent may have been halfway through writing any state (README "Fork"). Either way the
/// states are leaked, never dropped.
#[derive(Clone, Copy)]
pub(crate) enum OnFork {
    /// Panic, rather than return a result with parts missing.
    Panic,
    /// Abort, saying why (`fork::abort_child`), for an operation whose participants may
    /// write into what the caller owns (named here): the index operations that write into
    /// the caller's slice, and every iterator consumer (its source may lend `&mut` items).
    Abort(&'static str),
}

/// Runs `fold(state, range)` over ranges of `0..n` on `runs` claimed as `claims.0` says,
/// each participant on its own state, made by `init` on its first range. Then `combine`
/// takes the states made, in participant order. For the operations' own states of a few
/// words: up to [`SMALL`] participants' are kept in place. `claims.1`, if any, is the
/// address of code made for the call site's own closure, for a fold that is one code for
/// many call sites (an erased closure inside it); else `fold`'s code is the site's (README
/// "Regions too small to share").
#[inline]
pub(crate) fn run<R, S, F, T>(
    runs: &R,
    n: usize,
    claims: (Claims<'_>, Option<usize>),
    init: &(dyn Fn() -> S + Sync),
    fold: F,
    on_fork: OnFork,
    combine: impl FnOnce(Drain<'_, S>) -> T,
) -> T
where
    R: Regions + ?Sized,
    S: Send,
    F: Fn(&mut S, Range<usize>) + Sync,
{
    run_in::<R, S, F, T, SMALL>(runs, n, claims, init, fold, on_fork, combine)
}

/// As [`run`], for a caller's states, which may be of any size: in place up to
/// [`SMALL_STATE`] bytes each, else all on the heap (`SMALL` of a large one in place would
/// take that much of the caller's stack).
#[inline]
pub(crate) fn run_any_state<R, S, F, T>(
    runs: &R,
    n: usize,
    claims: Claims<'_>,
    init: &(dyn Fn() -> S + Sync),
    fold: F,
    on_fork: OnFork,
    combine: impl FnOnce(Drain<'_, S>) -> T,
) -> T
where
    R: Regions + ?Sized,
    S: Send,
    F: Fn(&mut S, Range<usize>) + Sync,
{
    if size_of::<S>() <= SMALL_STATE {
        run_in::<R, S, F, T, SMALL>(runs, n, (claims, None), init, fold, on_fork, combine)
    } else {
        run_in::<R, S, F, T, 0>(runs, n, (claims, None), init, fold, on_fork, combine)
    }
}

/// The pipeline, with the states of the first `INLINE` participants in place, for the
/// call site whose code is at `site`, else `fold`'s.
#[inline(always)]
fn run_in<R, S, F, T, const INLINE: usize>(
    runs: &R,
    n: usize,
    (claims, site): (Claims<'_>, Option<usize>),
    init: &(dyn Fn() -> S + Sync),
    fold: F,
    on_fork: OnFork,
    combine: impl FnOnce(Drain<'_, S>) -> T,
) -> T
where
    R: Regions + ?Sized,
    S: Send,
    F: Fn(&mut S, Range<usize>) + Sync,
{
    let target = runs.target();
    let fold_site = fold_code::<S, F> as fn(&F, &mut S, Range<usize>);
    let site = target.site(site.unwrap_or(fold_site as usize));
    let alone = target.alone(site, claims.stop());
    let verdict = alone.verdict(n);
    if verdict == Verdict::Untimed {
        // The caller's one state: no width read, no cells per participant.
        let mut state = None;
        let on_caller = |range| fold(state.get_or_insert_with(init), range);
        let rest = solo::run(target.shared(), n, (alone, verdict), 1, on_caller);
        debug_assert_eq!(rest, None, "an untimed region alone runs every position");
        return combine(Drain::of_one(state));
    }
    let width = target.width_now();
    let mut states = PerParticipant::<S, INLINE>::new(width);
    let on_caller = |range| states.with(Participant::CALLER, init, |state| fold(state, range));
    let Some(from) = solo::run(target.shared(), n, (alone, verdict), width, on_caller) else {
        return combine(states.drain());
    };
    let participants = states.participants();
    let outcome = target.run_chunks(from..n, participants, (claims, site), &|who, range| {
        states.with(who, init, |state| fold(state, range));
    });
    if let Err(forked) = outcome {
        std::mem::forget(states);
        leave_forked_child(forked, on_fork);
    }
    combine(states.drain())
}

/// Code made for one `fold` alone: its address tells an operation's call site from
/// another's, for the rate remembered per site (README "Regions too small to share").
/// Folds whose code is identical may share an address, and so their rate.
fn fold_code<S, F: Fn(&mut S, Range<usize>)>(fold: &F, state: &mut S, range: Range<usize>) {
    fold(state, range);
}

/// A region cut short by a fork from inside one of its tasks, in the child: `on_fork`.
#[cold]
fn leave_forked_child(forked: Forked, on_fork: OnFork) -> ! {
    match on_fork {
        OnFork::Panic => forked.panic_in_child(),
        OnFork::Abort(operation) => crate::fork::abort_child(operation),
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use crate::site_rate::Site;
    use crate::Pool;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The site `run` prices a region of `fold` by, as `run_in` makes it.
    fn site_of<S, F: Fn(&mut S, Range<usize>)>(_: &F) -> Site {
        let code = fold_code::<S, F> as fn(&F, &mut S, Range<usize>);
        Site::new(code as usize, 1)
    }

    #[test]
    fn a_region_alone_untimed_folds_its_ranges_into_one_state_of_the_callers() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let caller = std::thread::current().id();
        type Ran = Vec<(std::thread::ThreadId, Range<usize>)>;
        let fold = |ran: &mut Ran, range| ran.push((std::thread::current().id(), range));
        let site = site_of(&fold);
        let mut untimed = 0;
        for _ in 0..64 {
            // A picosecond a task: 1,000 of them run alone (learnt again each time: another
            // test's site may push this one out of its entry).
            site.learn(1, 1000);
            let states: Vec<Ran> = run(
                &pool,
                1000,
                (Claims::FromHomes(None), None),
                &Vec::new,
                fold,
                OnFork::Panic,
                |states| states.collect(),
            );
            // Untimed: one state, the caller's, of one range. Timed, its first part apart,
            // the rest alone or shared (its first parts' rates decide).
            if let [state] = states.as_slice() {
                if let [(thread, range)] = state.as_slice() {
                    assert_eq!((*thread, range), (caller, &(0..1000)));
                    untimed += 1;
                    continue;
                }
            }
            let mut ranges: Vec<_> = states.into_iter().flatten().map(|(_, r)| r).collect();
            ranges.sort_by_key(|range| range.start);
            assert_eq!(ranges[0].start, 0);
            assert!(
                ranges.windows(2).all(|w| w[0].end == w[1].start),
                "{ranges:?}"
            );
            assert_eq!(ranges.last().unwrap().end, 1000);
        }
        // Timed with chance one in sixteen, a thread's first always.
        assert!(untimed >= 16, "{untimed} of 64 untimed");
    }

    #[test]
    fn a_panic_in_a_region_alone_resumes_and_its_state_is_dropped_once() {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        struct Counted;
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPPED.fetch_add(1, Ordering::Relaxed);
            }
        }
        let caller = std::thread::current().id();
        let elsewhere = AtomicUsize::new(0);
        let made = || {
            MADE.fetch_add(1, Ordering::Relaxed);
            if std::thread::current().id() != caller {
                elsewhere.fetch_add(1, Ordering::Relaxed);
            }
            Counted
        };
        let pool = Pool::builder().workers(2).build().unwrap();
        let fold = |_: &mut Counted, range: Range<usize>| assert!(range.end < 1000, "the last");
        let site = site_of(&fold);
        let mut alone = 0;
        for _ in 0..32 {
            site.learn(1, 1000);
            let (made_before, elsewhere_before) = (
                MADE.load(Ordering::Relaxed),
                elsewhere.load(Ordering::Relaxed),
            );
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                run(
                    &pool,
                    1000,
                    (Claims::FromHomes(None), None),
                    &made,
                    fold,
                    OnFork::Panic,
                    |states| states.count(),
                )
            }));
            assert!(outcome.is_err(), "the panic resumed");
            // Alone: one state, made on the caller.
            if MADE.load(Ordering::Relaxed) - made_before == 1
                && elsewhere.load(Ordering::Relaxed) == elsewhere_before
            {
                alone += 1;
            }
        }
        assert!(alone >= 16, "{alone} of 32 regions ran alone");
        let made = MADE.load(Ordering::Relaxed);
        assert_eq!(DROPPED.load(Ordering::Relaxed), made);
    }
}
