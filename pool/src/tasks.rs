//! What a job runs: the caller's closure, as the pool calls it on a range of task indices,
//! one task at a time (`dispatch`), one task at a time with the worker's index
//! (`dispatch_with_worker`), or one chunk at a time (the data-parallel operations' hook,
//! `pool/src/README.md` "The operations' hook"). Panics are caught where the tasks run
//! (README "Panics").

use crate::panics::Panics;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};

/// Who runs a range of a dispatch's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Participant {
    /// Its rank in this dispatch, below the dispatch's participants: 0 for the caller, then
    /// 1, 2, ... for the helpers in the order they joined. Dense, so per-participant state
    /// fits an array as long as the dispatch is wide.
    pub(crate) rank: usize,
    /// Its worker: 0 for the caller, k for helper k. The same thread from one dispatch to
    /// the next (below the pool's wide width), for scratch space kept per thread.
    pub(crate) worker: usize,
}

impl Participant {
    /// The caller of a dispatch.
    pub(crate) const CALLER: Participant = Participant { rank: 0, worker: 0 };
}

/// A closure the pool can run on ranges of task indices.
pub(crate) trait Tasks: Sync {
    /// Runs `tasks` as `who`; a panic is caught and handed to `panics`.
    fn run(&self, who: Participant, tasks: Range<usize>, panics: &Panics);
}

/// `dispatch`'s closure: `f(task)` for each task.
pub(crate) struct Each<F>(pub(crate) F);

/// `dispatch_with_worker`'s closure: `f(worker, task)` for each task.
pub(crate) struct EachWithWorker<F>(pub(crate) F);

/// The operations' closure: `f(participant, range)` once per claimed range.
pub(crate) struct Chunks<F>(pub(crate) F);

impl<F: Fn(usize) + Sync> Tasks for Each<F> {
    fn run(&self, _who: Participant, tasks: Range<usize>, panics: &Panics) {
        each(tasks, panics, |task| (self.0)(task));
    }
}

impl<F: Fn(usize, usize) + Sync> Tasks for EachWithWorker<F> {
    fn run(&self, who: Participant, tasks: Range<usize>, panics: &Panics) {
        each(tasks, panics, |task| (self.0)(who.worker, task));
    }
}

impl<F: Fn(Participant, Range<usize>) + Sync> Tasks for Chunks<F> {
    fn run(&self, who: Participant, tasks: Range<usize>, panics: &Panics) {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| (self.0)(who, tasks))) {
            panics.keep_first(payload);
        }
    }
}

/// `run(range)` over `positions` on one thread, in ranges of at most `most` (one at
/// least), as claims would hand them out, so that, when `run` catches its panics, a range
/// that panics stops no other: the first range always, each next one unless `stopped()`.
#[inline]
pub(crate) fn in_ranges(
    positions: Range<usize>,
    most: usize,
    stopped: impl Fn() -> bool,
    mut run: impl FnMut(Range<usize>),
) {
    let mut start = positions.start;
    while start < positions.end && (start == positions.start || !stopped()) {
        let end = start + most.max(1).min(positions.end - start);
        run(start..end);
        start = end;
    }
}

/// `f(task)` for each task of `tasks`, in one loop; a panicking task is caught and handed to
/// `panics` (the first is kept), and the rest of the range still runs.
pub(crate) fn each(tasks: Range<usize>, panics: &Panics, mut f: impl FnMut(usize)) {
    let mut next = tasks.start;
    while next < tasks.end {
        let from = next;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            for task in from..tasks.end {
                // Where to go on if `f` unwinds, written only then: a store to `next` on
                // every task would keep the loop from holding what `f` reads in registers
                // (the store may alias it), several times the cost of a cheap task.
                let resume = ResumeAfter(&mut next, task + 1);
                f(task);
                std::mem::forget(resume);
            }
            next = tasks.end;
        }));
        if let Err(payload) = outcome {
            panics.keep_first(payload);
        }
    }
}

/// Sets the place to resume a loop at when dropped, which only unwinding does.
struct ResumeAfter<'a>(&'a mut usize, usize);

impl Drop for ResumeAfter<'_> {
    fn drop(&mut self) {
        *self.0 = self.1;
    }
}

/// The type-erased entry a job stores: runs `tasks` of the `T` behind `data`.
///
/// # Safety
/// `data` must point to a live `T`.
pub(crate) unsafe fn run_erased<T: Tasks>(
    data: *const (),
    who: Participant,
    tasks: Range<usize>,
    panics: &Panics,
) {
    // SAFETY: the caller guarantees `data` is a live `T`.
    let closure = unsafe { &*data.cast::<T>() };
    closure.run(who, tasks, panics);
}
