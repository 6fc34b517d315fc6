//! `Slot`: the state of one dispatch in flight: its permits and attached helpers packed in
//! one word, on the line waiting helpers poll with its job; its claim cursors, a line each;
//! and its caller's wait. A pool has a fixed table of them (README "State"); a dispatch that finds none free
//! waits for one, an operation runs inline.

use crate::claim::Cursors;
use crate::job::{Job, RunRange};
use crate::panics::Panics;
use crate::stream::Stream;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Condvar, Ordering};
use crossbeam_utils::CachePadded;

/// `state`'s high half counts attached helpers; the low half holds the permits (bits 0-15)
/// and the highest helper index that may take them (bits 16-31), so that a helper's check
/// of its index and its taking a permit are one compare-and-swap (README "Resizing").
const ATTACHED_ONE: u64 = 1 << 32;
const PERMITS_MASK: u64 = (1 << 16) - 1;
const HELPER_LIMIT_SHIFT: u32 = 16;
const HELPER_LIMIT_MASK: u64 = PERMITS_MASK << HELPER_LIMIT_SHIFT;
/// In a helper limit: a join's offer (README "Joining"), which a joiner waiting for its own
/// offer may take too, whatever thread it is.
pub(crate) const JOINABLE: usize = 1 << 15;
// Both fields hold up to a pool's width, and a limit leaves the joinable bit free.
const _: () = assert!((crate::limits::MAX_WIDTH as u64) < JOINABLE as u64);

/// A snapshot of a slot's signal word, for invariants and tests.
// A test hook, as `Pool::signal_state`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalState {
    /// Permits posted and not yet taken (0 whenever no dispatch is in flight).
    pub permits: u32,
    /// Helpers attached to the dispatch (0 whenever no dispatch is in flight).
    pub attached: u32,
}

impl SignalState {
    /// Between dispatches: no permit left, no helper attached (README "Invariants").
    pub const IDLE: SignalState = SignalState {
        permits: 0,
        attached: 0,
    };

    /// Both counts summed over slots (`attached` is what the spin budget counts).
    pub(crate) fn plus(self, other: SignalState) -> SignalState {
        SignalState {
            permits: self.permits + other.permits,
            attached: self.attached + other.attached,
        }
    }
}

/// What waiting helpers poll, with the job they need once attached, on one line (README
/// "State"): the caller writes it when it posts and when it withdraws, a helper that takes
/// part when it attaches (and so takes its first task) and when it detaches; polling it
/// never moves the line the caller claims further tasks on.
struct SignalLine {
    /// `attached << 32 | permits` (README "State").
    state: AtomicU64,
    /// The job, field by field (written in step 2, before the permits' Release).
    run: AtomicPtr<()>,
    data: AtomicPtr<()>,
    n_tasks: AtomicUsize,
    participants: AtomicUsize,
    max_chunk: AtomicUsize,
    stop: AtomicPtr<AtomicBool>,
    #[cfg(rayforce_loom)]
    alive: AtomicPtr<crate::job::Liveness>,
    homed: AtomicBool,
    /// Whether the owner is blocked (or about to block) waiting for quiet; read by every
    /// detaching helper, right after its detach wrote the line.
    caller_sleeping: AtomicBool,
}

pub(crate) struct Slot {
    line: CachePadded<SignalLine>,
    /// A caller owns the slot (step 1); on a line of its own, which only callers write.
    owned: CachePadded<AtomicBool>,
    /// Where the tasks beyond the participants' first ones are claimed (README "Claiming").
    cursors: Cursors,
    /// The first panic of the dispatch in flight here.
    pub(crate) panics: Panics,
    /// The owner sleeps here (under the signal's lock).
    pub(crate) caller: Condvar,
    /// The gaps the owner waited for its last helper (`Gaps` bits).
    pub(crate) caller_gaps: AtomicU64,
    /// When the detach that woke the owner happened, in ns (written under the lock).
    pub(crate) detached_ns: AtomicU64,
    /// The owner is a joiner blocked waiting for its half, whom a join's offer also wakes
    /// (written and read under the signal's lock: Relaxed).
    pub(crate) joiner_blocked: AtomicBool,
    /// The owners' recent operation regions (README "Streams of short regions").
    pub(crate) stream: Stream,
}

impl Slot {
    pub(crate) fn new() -> Slot {
        Slot {
            line: CachePadded::new(SignalLine {
                state: AtomicU64::new(0),
                run: AtomicPtr::new(std::ptr::null_mut()),
                data: AtomicPtr::new(std::ptr::null_mut()),
                n_tasks: AtomicUsize::new(0),
                participants: AtomicUsize::new(1),
                max_chunk: AtomicUsize::new(0),
                stop: AtomicPtr::new(std::ptr::null_mut()),
                #[cfg(rayforce_loom)]
                alive: AtomicPtr::new(std::ptr::null_mut()),
                homed: AtomicBool::new(false),
                caller_sleeping: AtomicBool::new(false),
            }),
            owned: CachePadded::new(AtomicBool::new(false)),
            cursors: Cursors::new(),
            panics: Panics::new(),
            caller: Condvar::new(),
            caller_gaps: AtomicU64::new(0),
            detached_ns: AtomicU64::new(0),
            joiner_blocked: AtomicBool::new(false),
            stream: Stream::new(),
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> SignalState {
        // Acquire: pairs with `detach`'s Release, as in `is_quiet`.
        let state = self.line.state.load(Ordering::Acquire);
        SignalState {
            permits: (state & PERMITS_MASK) as u32,
            attached: (state >> 32) as u32,
        }
    }

    /// Step 1: takes the slot for one dispatch, or `false` if another caller has it.
    #[inline]
    pub(crate) fn try_own(&self) -> bool {
        // Acquire: pairs with `release`'s Release, so the previous dispatch's clean-up
        // (step 7) happens-before this one's start.
        self.owned
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether a caller owns the slot now.
    #[inline]
    pub(crate) fn is_owned(&self) -> bool {
        self.owned.load(Ordering::Relaxed)
    }

    /// Step 2: publishes the job and sets the cursors past the participants' first tasks
    /// (ordered by the permits' Release in `add_permits`).
    #[inline]
    pub(crate) fn publish(&self, job: &Job) {
        let line = &*self.line;
        line.run.store(job.run as *mut (), Ordering::Relaxed);
        line.data.store(job.data.cast_mut(), Ordering::Relaxed);
        line.n_tasks.store(job.n_tasks, Ordering::Relaxed);
        line.participants.store(job.participants, Ordering::Relaxed);
        line.max_chunk.store(job.max_chunk, Ordering::Relaxed);
        line.stop.store(job.stop.cast_mut(), Ordering::Relaxed);
        #[cfg(rayforce_loom)]
        line.alive.store(job.alive.cast_mut(), Ordering::Relaxed);
        line.homed.store(job.homed, Ordering::Relaxed);
        self.cursors.reset(job);
    }

    /// The job of the dispatch a helper is attached to.
    #[inline]
    pub(crate) fn job(&self) -> Job {
        // Relaxed: the Acquire CAS that attached the helper ordered the caller's stores.
        let line = &*self.line;
        let run = line.run.load(Ordering::Relaxed);
        assert!(
            !run.is_null(),
            "attached to no dispatch: a permit outlived its dispatch"
        );
        Job {
            // SAFETY: `run` was stored from a `RunRange` in `publish`, and a function
            // pointer survives the round trip through a data pointer on every target Rust
            // supports for this crate.
            run: unsafe { std::mem::transmute::<*mut (), RunRange>(run) },
            data: line.data.load(Ordering::Relaxed),
            n_tasks: line.n_tasks.load(Ordering::Relaxed),
            participants: line.participants.load(Ordering::Relaxed),
            max_chunk: line.max_chunk.load(Ordering::Relaxed),
            stop: line.stop.load(Ordering::Relaxed),
            homed: line.homed.load(Ordering::Relaxed),
            // How the caller wakes helpers: not published, no helper reads it.
            wakes_at_post: false,
            #[cfg(rayforce_loom)]
            alive: line.alive.load(Ordering::Relaxed),
        }
    }

    /// The claim cursors of the dispatch in flight.
    #[inline]
    pub(crate) fn cursors(&self) -> &Cursors {
        &self.cursors
    }

    /// Step 3's first half: `permits` more helpers, of indices up to `helper_limit`, may
    /// attach (the slot holds no permits, so no limit, before this).
    #[inline]
    pub(crate) fn add_permits(&self, permits: u32, helper_limit: usize) {
        debug_assert!(permits as u64 <= PERMITS_MASK && helper_limit as u64 <= PERMITS_MASK);
        let posted = u64::from(permits) | (helper_limit as u64) << HELPER_LIMIT_SHIFT;
        // Release: pairs with the Acquire CAS in `try_attach`, so an attached helper sees
        // the job published before this post (step 2).
        self.line.state.fetch_add(posted, Ordering::Release);
    }

    /// A scope's post (README "Scopes"): one more permit, for helpers up to `helper_limit`,
    /// unless `cap` permits are posted already; whether it was posted.
    #[inline]
    pub(crate) fn add_permit_below(&self, cap: usize, helper_limit: usize) -> bool {
        let state = &self.line.state;
        let mut seen = state.load(Ordering::Relaxed);
        loop {
            if seen & PERMITS_MASK >= cap as u64 {
                return false;
            }
            // The limit is set afresh: a withdraw clears it.
            let posted =
                ((seen & !HELPER_LIMIT_MASK) + 1) | ((helper_limit as u64) << HELPER_LIMIT_SHIFT);
            // Release: pairs with the Acquire CAS in `try_attach`, as in `add_permits`.
            match state.compare_exchange_weak(seen, posted, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    /// Helper step 2: helper `index` takes one permit and attaches, or returns `None` if
    /// none is left or its index is above the limit they were posted with. A permit carries
    /// a first task (README "Claiming"): with `k` permits posted, the helpers that take them
    /// get tasks 1 to `k`, in the order they attach; returns it, and whether the permit is
    /// a join's offer (README "Joining").
    #[inline]
    pub(crate) fn try_attach(&self, index: usize) -> Option<(usize, bool)> {
        let state = &self.line.state;
        let mut seen = state.load(Ordering::Relaxed);
        while seen & PERMITS_MASK != 0 {
            let limit = (seen & HELPER_LIMIT_MASK) >> HELPER_LIMIT_SHIFT & !(JOINABLE as u64);
            if index as u64 > limit && !crate::broken::variant!("attach_above_limit") {
                return None; // resized away before this dispatch was posted
            }
            let taken = seen - 1 + ATTACHED_ONE;
            // Acquire: pairs with `add_permits`'s Release (see there).
            match state.compare_exchange_weak(seen, taken, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => {
                    // Relaxed: ordered by the Acquire above, as the rest of the job.
                    let participants = self.line.participants.load(Ordering::Relaxed);
                    let joinable = seen & (JOINABLE as u64) << HELPER_LIMIT_SHIFT != 0;
                    return Some((participants - (seen & PERMITS_MASK) as usize, joinable));
                }
                Err(now) => seen = now,
            }
        }
        None
    }

    /// A joiner waiting for its own offer takes the permit of another joiner's offer
    /// (README "Joining"), as [`try_attach`](Self::try_attach) does; `None` if this slot
    /// holds no joinable permit.
    #[inline]
    pub(crate) fn try_attach_joinable(&self) -> Option<usize> {
        let seen = self.line.state.load(Ordering::Relaxed);
        let joinable = (JOINABLE as u64) << HELPER_LIMIT_SHIFT;
        if seen & PERMITS_MASK == 0 || seen & joinable == 0 {
            return None;
        }
        let taken = seen - 1 + ATTACHED_ONE;
        // Acquire: pairs with `add_permits`'s Release, as in `try_attach`. A failed CAS
        // (another taker, or a withdraw) gives up: the offer is one permit.
        self.line
            .state
            .compare_exchange(seen, taken, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // Relaxed: ordered by the Acquire above.
        let participants = self.line.participants.load(Ordering::Relaxed);
        Some(participants - (seen & PERMITS_MASK) as usize)
    }

    /// Whether the one permit of a join's offer here was taken and its taker detached: the
    /// half ran (README "Joining"). Acquire: pairs with `detach`'s Release, so what the
    /// half wrote is seen.
    #[inline]
    pub(crate) fn offer_done(&self) -> bool {
        let state = self.line.state.load(Ordering::Acquire);
        state & PERMITS_MASK == 0 && state >> 32 == 0
    }

    /// Step 5: takes back the permits no helper took; returns how many (their first tasks,
    /// the last ones of the participants', are the caller's to run).
    #[inline]
    pub(crate) fn withdraw(&self) -> u32 {
        if crate::broken::variant!("no_withdraw") {
            return 0; // deliberately broken: leftover permits drift into the next dispatch
        }
        // Relaxed: withdrawing publishes nothing; it only stops further attachments. The
        // caller's Acquire loads in `is_quiet` order what follows.
        let before = self
            .line
            .state
            .fetch_and(!(PERMITS_MASK | HELPER_LIMIT_MASK), Ordering::Relaxed);
        (before & PERMITS_MASK) as u32
    }

    /// Helper step 4's first half: detaches; after this the helper must not touch the job.
    #[inline]
    pub(crate) fn detach(&self) {
        // Release: pairs with the Acquire load in `is_quiet`, so everything the helper did
        // in the dispatch (its tasks' effects) happens-before the caller returns.
        self.line.state.fetch_sub(ATTACHED_ONE, Ordering::Release);
    }

    /// Whether no helper is attached (after `withdraw`, this can only become true).
    #[inline]
    pub(crate) fn is_quiet(&self) -> bool {
        // Acquire: pairs with `detach`'s Release.
        self.line.state.load(Ordering::Acquire) >> 32 == 0
    }

    /// Whether the slot's whole word is clear: no permit, no helper limit, no helper
    /// attached. A scope's owner releases only then: a permit posted after its withdraw and
    /// taken since leaves its limit behind, which only a withdraw clears.
    #[inline]
    pub(crate) fn is_clear(&self) -> bool {
        // Acquire: pairs with `detach`'s Release, as in `is_quiet`.
        self.line.state.load(Ordering::Acquire) == 0
    }

    /// The caller's flag for "blocked or about to block waiting for quiet".
    #[inline]
    pub(crate) fn caller_sleeping(&self) -> &AtomicBool {
        &self.line.caller_sleeping
    }

    /// Step 7: frees the slot for the next dispatch.
    #[inline]
    pub(crate) fn release(&self) {
        // The whole word: a stale helper limit would add to the next post's.
        debug_assert!(self.is_clear(), "drift: {:?}", self.state());
        if cfg!(debug_assertions) {
            // So that `job` can tell a permit that outlived its dispatch (not in release
            // builds: the store would take back the line helpers poll, once per dispatch).
            self.line.run.store(std::ptr::null_mut(), Ordering::Relaxed);
        }
        // Release: pairs with `try_own`'s Acquire.
        self.owned.store(false, Ordering::Release);
    }
}
