//! What the operations share: the runner they run on ([`Runs`]: a pool, narrow or wide),
//! a slice participants write in disjoint ranges, and state kept per participant.

use crate::pool::Region;
use crate::sync::{AtomicBool, UnsafeCell};
use crate::{Participant, Pool};
use std::marker::PhantomData;
use std::ops::Range;

mod sealed {
    pub trait Sealed {}
}

/// What the data-parallel operations run on: a [`Pool`] (as
/// [`dispatch`](Pool::dispatch)) or [`Wide`] (`pool.wide()`, as
/// [`dispatch_wide`](Pool::dispatch_wide)). Sealed: the operations are the pool's.
pub trait Runs: Sync + sealed::Sealed {
    /// The pool, and whether its regions run wide.
    #[doc(hidden)]
    fn pool_and_wide(&self) -> (&Pool, bool);

    /// The most participants a region runs on now (the pool's width, or wide width).
    fn region_width(&self) -> usize {
        let (pool, wide) = self.pool_and_wide();
        pool.region_width(wide)
    }

    /// The hook: `f(participant, range)` over claimed ranges of `0..n`, on at most
    /// `participants` participants; none claims another range once `stop` is set. Returns
    /// as [`complete`] wants it.
    #[doc(hidden)]
    fn run_region(
        &self,
        n: usize,
        participants: usize,
        stop: Option<&AtomicBool>,
        f: &(dyn Fn(Participant, Range<usize>) + Sync),
    ) -> bool {
        let (pool, wide) = self.pool_and_wide();
        let region = Region {
            wide,
            participants,
            stop,
            wake_late: true,
        };
        pool.run_chunks(n, region, f)
    }
}

/// After a region: panics if it was cut short by a fork from inside one of its tasks (this
/// process is the child, and what the parent's helpers were computing never arrives here),
/// rather than return a result with parts missing.
pub(crate) fn complete(ran_every_task: bool) {
    assert!(
        ran_every_task,
        "a task forked inside a data-parallel operation: in the child, the results of the \
         parent's helpers are missing"
    );
}

impl sealed::Sealed for Pool {}

impl Runs for Pool {
    fn pool_and_wide(&self) -> (&Pool, bool) {
        (self, false)
    }
}

/// A pool's operations on up to its wide width, using the SMT siblings the physical policy
/// leaves idle, as [`dispatch_wide`](Pool::dispatch_wide) does: `pool.wide().map(..)`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let pool = rayforce_pool::Pool::builder().workers(2).wide_workers(4).build().unwrap();
/// let squares = pool.wide().map(100, |i| i * i);
/// assert_eq!(squares[9], 81);
/// ```
#[derive(Clone, Copy)]
pub struct Wide<'p>(pub(crate) &'p Pool);

impl sealed::Sealed for Wide<'_> {}

impl Runs for Wide<'_> {
    fn pool_and_wide(&self) -> (&Pool, bool) {
        (self.0, true)
    }
}

/// A mutable slice that the participants of one region write, each in the ranges it
/// claimed.
///
/// # Safety
/// `ptr` and `len` are a slice borrowed mutably for `'a`; [`range`](Self::range) hands out
/// parts of it, and its callers keep them disjoint.
pub(crate) struct Disjoint<'a, T> {
    ptr: *mut T,
    len: usize,
    _slice: PhantomData<&'a mut [T]>,
}

// SAFETY: participants only ever hold disjoint parts (struct `# Safety`), each from one
// thread, which `T: Send` allows.
unsafe impl<T: Send> Sync for Disjoint<'_, T> {}

impl<'a, T> Disjoint<'a, T> {
    pub(crate) fn new(slice: &'a mut [T]) -> Disjoint<'a, T> {
        Disjoint {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _slice: PhantomData,
        }
    }

    /// Items `range` of the slice.
    ///
    /// # Safety
    /// No other part alive at the same time overlaps `range` (claimed ranges never do).
    #[allow(clippy::mut_from_ref)] // the point: disjoint parts of one borrowed slice
    pub(crate) unsafe fn range(&self, range: Range<usize>) -> &mut [T] {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "range {range:?} of a slice of {}",
            self.len
        );
        // SAFETY: inside the borrowed slice (checked), and no other live part overlaps it
        // (this function's contract).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) }
    }
}

/// State kept per participant of one region: one cell per participant slot, each made on
/// its participant's first range and used only by it.
///
/// # Safety
/// Cell `k` is touched only by the participant whose `slot` is `k`, which is one thread
/// within a region (`Participant::slot`), or after the region, by its caller alone.
pub(crate) struct PerParticipant<S> {
    cells: Vec<UnsafeCell<Option<S>>>,
}

// SAFETY: each cell is used by one participant at a time (struct `# Safety`), and moved
// between threads at most once, which `S: Send` allows.
unsafe impl<S: Send> Sync for PerParticipant<S> {}

impl<S> PerParticipant<S> {
    /// Cells for a region of up to `participants` participants.
    pub(crate) fn new(participants: usize) -> PerParticipant<S> {
        PerParticipant {
            cells: (0..participants).map(|_| UnsafeCell::new(None)).collect(),
        }
    }

    /// How many participants it has room for: the region's `participants`.
    pub(crate) fn participants(&self) -> usize {
        self.cells.len()
    }

    /// Runs `f` on `who`'s state, made with `init` on its first call in the region.
    pub(crate) fn with<R>(
        &self,
        who: Participant,
        init: impl FnOnce() -> S,
        f: impl FnOnce(&mut S) -> R,
    ) -> R {
        let slot = if const { crate::sync::broken("shared_state") } {
            0 // deliberately broken: every participant on the caller's state
        } else {
            who.slot
        };
        self.cells[slot].with_mut(|cell| {
            // SAFETY: only `who` touches its cell during the region (struct `# Safety`).
            let state = unsafe { &mut *cell };
            f(state.get_or_insert_with(init))
        })
    }

    /// The states made, in participant order (after the region).
    pub(crate) fn into_states(self) -> impl Iterator<Item = S> {
        self.cells.into_iter().filter_map(|cell| cell.into_inner())
    }
}
