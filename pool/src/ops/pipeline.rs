//! The one pipeline under every operation: each participant's state, made at most once by
//! `init` on its first range, folds the ranges it claims; no participant claims another
//! range once the optional stop flag is set; the caller combines the states once, after
//! the region. `map`, `fold` and its conveniences, the searches, the loops over mutable
//! slices and the scan are instances of it, and it is the operations' one door into the
//! pool (`Pool::run_chunks`, README "The operations' hook").

use super::region::{self, PerParticipant, Runs};
use crate::region::Forked;
use crate::sync::AtomicBool;
use std::ops::Range;

/// Participants whose states of a few words (the operations' own) are kept in place,
/// without allocating: as wide as most machines' pools.
pub(crate) const SMALL: usize = 8;

/// None in place: a caller's state may be any size, and `SMALL` of a large one in place
/// would take that much of the caller's stack.
pub(crate) const ANY_SIZE: usize = 0;

/// A region run through the pipeline: how it ended, and the states its participants made
/// (the first `INLINE` in place).
#[must_use = "the states are what the region produced"]
pub(crate) struct Folded<S, const INLINE: usize> {
    outcome: Result<(), Forked>,
    states: PerParticipant<S, INLINE>,
}

/// Runs `fold(state, range)` over claimed ranges of `0..n` on `runs`, each participant on
/// its own state, made by `init` on its first range; once `stop` is set, no participant
/// claims another range. `INLINE`: [`SMALL`] or [`ANY_SIZE`].
#[inline]
pub(crate) fn run<R, S, F, const INLINE: usize>(
    runs: &R,
    n: usize,
    stop: Option<&AtomicBool>,
    init: &(dyn Fn() -> S + Sync),
    fold: F,
) -> Folded<S, INLINE>
where
    R: Runs + ?Sized,
    S: Send,
    F: Fn(&mut S, Range<usize>) + Sync,
{
    let states = PerParticipant::new(runs.region_width());
    let (pool, wide) = region::pool_and_wide(runs);
    let outcome = pool.run_chunks(n, wide, states.participants(), stop, &|who, range| {
        states.with(who, init, |state| fold(state, range));
    });
    Folded { outcome, states }
}

impl<S, const INLINE: usize> Folded<S, INLINE> {
    /// The states made, in participant order, once every range ran (or the stop flag cut
    /// the region short). In a child forked from inside one of the region's tasks, a helper
    /// of the parent may have been halfway through writing any state: they are leaked,
    /// never dropped, and the child panics rather than return a result with parts missing.
    #[inline]
    pub(crate) fn states(self) -> impl Iterator<Item = S> {
        if let Err(forked) = self.outcome {
            std::mem::forget(self.states);
            forked.panic_in_child();
        }
        self.states.into_states()
    }

    /// As [`states`](Self::states), for an operation whose participants wrote into the
    /// caller's slice (`operation`): in a forked child, items of the slice may be halfway
    /// written by a helper of the parent, and unwinding would hand them to the caller's
    /// code to read and drop (a double free, for an item whose old value was dropped and
    /// new one not yet written). The child aborts instead, saying why; a child that forks
    /// to `exec` or to `_exit` never gets here.
    #[inline]
    pub(crate) fn states_in_place(self, operation: &str) -> impl Iterator<Item = S> {
        if self.outcome.is_err() {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "rayforce-pool: a task forked inside `{operation}`: in the child, items the \
                 parent's helpers were writing are in an unknown state; aborting the child"
            );
            std::process::abort();
        }
        self.states.into_states()
    }
}
