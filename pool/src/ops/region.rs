//! What the operations share: the runner they run on ([`Runs`]: a pool, narrow or wide;
//! `Regions`: that, or the current pool, for the parallel iterators), a slice participants
//! write in disjoint ranges, and state kept per participant.

use crate::region::{Claims, Forked};
use crate::shared::Shared;
use crate::site_rate::Site;
use crate::solo::Alone;
use crate::sync::AtomicBool;
use crate::sync::UnsafeCell;
use crate::tasks::Participant;
use crate::Pool;
use crossbeam_utils::CachePadded;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::Range;

/// The seal: a trait of a private module, so its method cannot be named, let alone called,
/// outside the crate.
mod sealed {
    pub trait Sealed {
        /// The pool, and whether its regions run wide.
        fn pool_and_wide(&self) -> (&crate::Pool, bool);
    }
}

/// What the data-parallel operations run on: a [`Pool`] (as
/// [`dispatch`](Pool::dispatch)) or [`Wide`] (`pool.wide()`, as
/// [`dispatch_wide`](Pool::dispatch_wide)). Sealed: the operations are the pool's.
pub trait Runs: Sync + sealed::Sealed {
    /// The most participants a region runs on now (the pool's width, or wide width).
    fn region_width(&self) -> usize {
        let (pool, wide) = self.pool_and_wide();
        pool.region_width(wide)
    }
}

/// What the pipeline runs a region on: a [`Runs`], or the current pool.
pub(crate) trait Regions: Sync {
    /// The pool, or the crew, a region runs on.
    fn target(&self) -> Target<'_>;
}

impl<R: Runs + ?Sized> Regions for R {
    fn target(&self) -> Target<'_> {
        let (pool, wide) = self.pool_and_wide();
        Target {
            on: On::Pool(pool, wide),
            grain: Grain::ANY,
        }
    }
}

/// Where a region runs, and how finely its positions are claimed.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    on: On<'a>,
    grain: Grain,
}

/// A pool, narrow or wide; or a pool known only by its crew's shared state, as in its
/// tasks and helpers, narrow.
#[derive(Clone, Copy)]
enum On<'a> {
    Pool(&'a Pool, bool),
    Crew(&'a Shared),
}

/// How finely a region's positions are claimed: in units of `min` positions (the last may
/// be shorter), at most `max` positions a claim where `max >= min` (else one unit): a
/// parallel iterator's `with_min_len` and `with_max_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grain {
    pub(crate) min: usize,
    pub(crate) max: usize,
}

impl Grain {
    /// Any range the claiming policy chooses.
    pub(crate) const ANY: Grain = Grain {
        min: 1,
        max: usize::MAX,
    };

    /// The positions a unit covers: `min`, one at least.
    #[inline]
    pub(crate) fn unit(self) -> usize {
        self.min.max(1)
    }

    /// The most units a claim takes: one at least.
    #[inline]
    pub(crate) fn most_units(self) -> usize {
        (self.max / self.unit()).max(1)
    }
}

impl<'a> Target<'a> {
    /// Runs `f` on the current pool (README "Joining"): the one whose `install`, task or
    /// helper this thread is in, else the default pool; claims by `grain`.
    pub(crate) fn current<T>(grain: Grain, f: impl FnOnce(&Target<'_>) -> T) -> T {
        crate::current::map(|shared| {
            let on = match shared {
                Some(shared) => On::Crew(shared),
                None => On::Pool(crate::default_pool::get(), false),
            };
            f(&Target { on, grain })
        })
    }

    /// The most participants a region runs on now.
    #[inline]
    pub(crate) fn width_now(self) -> usize {
        match self.on {
            On::Pool(pool, wide) => pool.region_width(wide),
            On::Crew(shared) => shared.width(),
        }
    }

    /// The call site whose closures' code is at `code`, at this target's grain (README
    /// "Regions too small to share").
    #[inline]
    pub(crate) fn site(self, code: usize) -> Site {
        Site::new(code, self.grain.unit())
    }

    /// How a region of `site` would run on its caller alone, ended early by `stop`.
    #[inline]
    pub(crate) fn alone(self, site: Site, stop: Option<&AtomicBool>) -> Alone<'_> {
        let unit = self.grain.unit();
        Alone {
            site,
            unit,
            most: self.grain.most_units().saturating_mul(unit),
            stop,
        }
    }

    /// The shared state of the pool's crew: whose the region's tasks are.
    #[inline]
    pub(crate) fn shared(self) -> &'a Shared {
        match self.on {
            On::Pool(pool, _) => pool.shared(),
            On::Crew(shared) => shared,
        }
    }

    /// The operations' hook: `Pool::run_chunks` over `positions`, by the target's grain,
    /// for `site`, whose caller's rate it learns.
    pub(crate) fn run_chunks(
        self,
        positions: Range<usize>,
        participants: usize,
        (claims, site): (Claims<'_>, Site),
        f: &(dyn Fn(Participant, Range<usize>) + Sync),
    ) -> Result<(), Forked> {
        let claims = (claims, Some(site));
        let (from, n) = (positions.start, positions.len());
        if self.grain == Grain::ANY && from == 0 {
            return self.run_units(n, (participants, usize::MAX), claims, f);
        }
        let min = self.grain.unit();
        let of_units = |units: Range<usize>| {
            let end = units.end.saturating_mul(min).min(n);
            from + units.start.saturating_mul(min).min(end)..from + end
        };
        self.run_units(
            n.div_ceil(min),
            (participants, self.grain.most_units()),
            claims,
            &|who, units| {
                f(who, of_units(units));
            },
        )
    }

    /// `run_chunks` over `n` units, at most `(participants, units per claim)`.
    fn run_units(
        self,
        n: usize,
        limits: (usize, usize),
        claims: (Claims<'_>, Option<Site>),
        f: &(dyn Fn(Participant, Range<usize>) + Sync),
    ) -> Result<(), Forked> {
        match self.on {
            On::Pool(pool, wide) => pool.run_chunks(n, wide, limits, claims, f),
            On::Crew(shared) => crate::pool::run_chunks_on(shared, n, limits, claims, f),
        }
    }
}

impl Regions for Target<'_> {
    fn target(&self) -> Target<'_> {
        *self
    }
}

/// The range of at most `len` indices from `start` that ends at `end` at the latest
/// (`start <= end`): `start..min(start + len, end)`, computed without overflow.
#[inline]
pub(crate) fn span(start: usize, len: usize, end: usize) -> Range<usize> {
    debug_assert!(start <= end, "a span from {start} past its end {end}");
    start..start + len.min(end - start)
}

impl sealed::Sealed for Pool {
    fn pool_and_wide(&self) -> (&Pool, bool) {
        (self, false)
    }
}

impl Runs for Pool {}

/// A pool's operations on up to its wide width, using the SMT siblings the physical policy
/// leaves idle, as [`dispatch_wide`](Pool::dispatch_wide) does: `pool.wide().map(..)`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let pool = rayforce_pool::Pool::builder().workers(2).wide_workers(4).build().unwrap();
/// let squares = pool.wide().map(100, |i| i * i);
/// assert_eq!(squares[9], 81);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Wide<'p>(pub(crate) &'p Pool);

impl sealed::Sealed for Wide<'_> {
    fn pool_and_wide(&self) -> (&Pool, bool) {
        (self.0, true)
    }
}

impl Runs for Wide<'_> {}

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

    /// The slice's first item, for writes at offsets its callers keep disjoint.
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        self.ptr
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

/// State kept per participant of one region: one cell per participant rank, each made on
/// its participant's first range and used only by it. Kept in the caller's frame for the
/// region and drained there after it: never moved, so its in-place cells are never copied.
///
/// # Safety
/// Cell `k` is touched only by the participant whose `rank` is `k`, which is one thread
/// within a region (`Participant::rank`), or after the region, by its caller alone.
pub(crate) struct PerParticipant<S, const INLINE: usize> {
    /// The cells of ranks below `INLINE`, in place.
    ///
    /// # Safety
    /// The first `min(participants, INLINE)` are initialised; only those are read or
    /// dropped.
    inline: [MaybeUninit<Cell<S>>; INLINE],
    /// The cells of ranks from `INLINE` on, for a region wider than that.
    spilled: Vec<Cell<S>>,
    participants: usize,
}

/// One participant's state: none until its first range. On lines of its own (128 bytes on
/// x86-64, the pair of lines the adjacent-line prefetcher fetches together): a state a
/// participant writes at each item (a histogram, a `Vec` it pushes to) would otherwise
/// share a line with its neighbour's, and each write would take the line from the other
/// core (a 2-wide fold of a 10-count histogram ran 2.3x serial's time so).
type Cell<S> = CachePadded<UnsafeCell<Option<S>>>;

// SAFETY: each cell is used by one participant at a time (struct `# Safety`), and moved
// between threads at most once, which `S: Send` allows.
unsafe impl<S: Send, const INLINE: usize> Sync for PerParticipant<S, INLINE> {}

impl<S, const INLINE: usize> PerParticipant<S, INLINE> {
    /// Cells for a region of up to `participants` participants: as many in place as fit,
    /// the rest on the heap.
    #[inline]
    pub(crate) fn new(participants: usize) -> PerParticipant<S, INLINE> {
        let mut inline = [const { MaybeUninit::uninit() }; INLINE];
        for cell in &mut inline[..participants.min(INLINE)] {
            cell.write(CachePadded::new(UnsafeCell::new(None)));
        }
        let spilled = participants.saturating_sub(INLINE);
        PerParticipant {
            inline,
            spilled: (0..spilled)
                .map(|_| CachePadded::new(UnsafeCell::new(None)))
                .collect(),
            participants,
        }
    }

    /// How many participants it has room for: the region's `participants`.
    pub(crate) fn participants(&self) -> usize {
        self.participants
    }

    /// The cells kept in place.
    #[inline]
    fn in_place(&self) -> &[Cell<S>] {
        let initialised = &self.inline[..self.participants.min(INLINE)];
        // SAFETY: those are initialised (field `# Safety`), and `MaybeUninit<T>` has `T`'s
        // layout.
        unsafe { &*(initialised as *const [MaybeUninit<Cell<S>>] as *const [Cell<S>]) }
    }

    /// The cells kept in place, mutably, and those spilled.
    #[inline]
    fn cells_mut(&mut self) -> (&mut [Cell<S>], &mut [Cell<S>]) {
        let initialised = &mut self.inline[..self.participants.min(INLINE)];
        // SAFETY: as in `in_place`.
        let in_place =
            unsafe { &mut *(initialised as *mut [MaybeUninit<Cell<S>>] as *mut [Cell<S>]) };
        (in_place, &mut self.spilled)
    }

    /// Runs `f` on `who`'s state, made with `init` on its first call in the region.
    #[inline]
    pub(crate) fn with<R>(
        &self,
        who: Participant,
        init: impl FnOnce() -> S,
        f: impl FnOnce(&mut S) -> R,
    ) -> R {
        let rank = if crate::broken::variant!("shared_state") {
            0 // deliberately broken: every participant on the caller's state
        } else {
            who.rank
        };
        let cell = match self.in_place().get(rank) {
            Some(cell) => cell,
            None => &self.spilled[rank - INLINE],
        };
        cell.with_mut(|cell| {
            // SAFETY: only `who` touches its cell during the region (struct `# Safety`).
            let state = unsafe { &mut *cell };
            f(state.get_or_insert_with(init))
        })
    }

    /// Takes the states made, in participant order (after the region).
    #[inline]
    pub(crate) fn drain(&mut self) -> Drain<'_, S> {
        let (in_place, spilled) = self.cells_mut();
        Drain {
            alone: None,
            cells: in_place.iter_mut().chain(spilled.iter_mut()),
        }
    }
}

impl<S, const INLINE: usize> Drop for PerParticipant<S, INLINE> {
    fn drop(&mut self) {
        // SAFETY: the cells in place are initialised and dropped only here, once.
        unsafe { std::ptr::drop_in_place(self.cells_mut().0) }
    }
}

/// The states of a region, taken out in participant order: a [`PerParticipant`]'s, those
/// not taken staying in it (dropped with it), or the one state of a region run on its
/// caller alone untimed ([`Drain::of_one`], dropped with the drain if not taken).
pub(crate) struct Drain<'a, S> {
    /// The one state of a region run on its caller alone, taken first.
    alone: Option<S>,
    cells: std::iter::Chain<Cells<'a, S>, Cells<'a, S>>,
}

/// The cells of a [`PerParticipant`] in place or spilled, borrowed mutably.
type Cells<'a, S> = std::slice::IterMut<'a, Cell<S>>;

impl<'a, S> Drain<'a, S> {
    /// The state of a region that ran on its caller alone, if it made one.
    #[inline]
    pub(crate) fn of_one(state: Option<S>) -> Drain<'a, S> {
        Drain {
            alone: state,
            cells: Cells::default().chain(Cells::default()),
        }
    }
}

impl<S> Iterator for Drain<'_, S> {
    type Item = S;

    #[inline]
    fn next(&mut self) -> Option<S> {
        if let Some(state) = self.alone.take() {
            return Some(state);
        }
        self.cells.find_map(|cell| {
            // SAFETY: the drain borrows the cells mutably: nothing else touches them.
            cell.with_mut(|state| unsafe { (*state).take() })
        })
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::{span, PerParticipant};
    use crate::tasks::Participant;
    use crossbeam_utils::CachePadded;
    use std::rc::Rc;

    #[test]
    fn states_in_place_and_spilled_are_drained_in_rank_order_and_the_rest_dropped_once() {
        let alive = Rc::new(());
        for participants in [0, 1, 2, 3, 5] {
            let mut states = PerParticipant::<(usize, Rc<()>), 2>::new(participants);
            assert_eq!(states.participants(), participants);
            // Every other rank makes its state, twice (made once, then reused).
            for rank in (0..participants)
                .step_by(2)
                .chain((0..participants).step_by(2))
            {
                let who = Participant { rank, worker: rank };
                states.with(
                    who,
                    || (rank, alive.clone()),
                    |state| assert_eq!(state.0, rank),
                );
            }
            let made = participants.div_ceil(2);
            assert_eq!(Rc::strong_count(&alive), 1 + made);
            if made > 0 {
                assert_eq!(states.drain().next().map(|state| state.0), Some(0));
            }
            assert_eq!(Rc::strong_count(&alive), 1 + made.saturating_sub(1));
            drop(states);
            assert_eq!(Rc::strong_count(&alive), 1, "{participants} participants");
        }
    }

    #[test]
    fn no_two_participants_states_share_a_cache_line_pair() {
        /// Where each of `participants` ranks' state is, for states kept `INLINE` in place.
        fn addresses<const INLINE: usize>(participants: usize) -> Vec<usize> {
            let states = PerParticipant::<u8, INLINE>::new(participants);
            (0..participants)
                .map(|rank| {
                    let who = Participant { rank, worker: rank };
                    states.with(who, || 0, |state| state as *mut u8 as usize)
                })
                .collect()
        }
        // In place, spilled, and across the two; a cell's alignment is the target's line
        // pair (128 bytes on x86-64).
        let pair = align_of::<CachePadded<u8>>();
        assert!(
            pair >= 64 || !cfg!(target_arch = "x86_64"),
            "{pair}-byte cells"
        );
        for states in [addresses::<4>(6), addresses::<0>(3)] {
            for (a, b) in states.iter().zip(&states[1..]) {
                assert_ne!(a / pair, b / pair, "states at {a:#x} and {b:#x}");
            }
        }
    }

    #[test]
    fn a_span_never_overflows_and_never_passes_its_end() {
        let near_max = |k: usize| usize::MAX - k;
        for start_back in 0..64 {
            for end_back in 0..=start_back {
                let (start, end) = (near_max(start_back), near_max(end_back));
                for len in [0, 1, 2, 63, usize::MAX / 2, usize::MAX - 1, usize::MAX] {
                    let range = span(start, len, end);
                    assert_eq!(range.start, start);
                    assert_eq!(
                        range.end,
                        end.min(start.saturating_add(len)),
                        "{start} {len} {end}"
                    );
                }
            }
        }
        assert_eq!(span(0, 4, 10), 0..4);
        assert_eq!(span(8, 4, 10), 8..10);
        assert_eq!(span(10, 4, 10), 10..10);
    }
}
