//! `Slot`: the state of one dispatch in flight: its job, its permits and attached helpers
//! packed in one word, and its caller's wait. A pool has a fixed table of them (README
//! "State"); a dispatch that finds none free runs inline.

use crate::job::Job;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Condvar, Ordering};
use crossbeam_utils::CachePadded;

/// `state`'s high half counts attached helpers; the low half counts permits.
const ATTACHED_ONE: u64 = 1 << 32;
const PERMITS_MASK: u64 = ATTACHED_ONE - 1;

/// A snapshot of a slot's signal word, for invariants and tests.
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

pub(crate) struct Slot {
    /// `attached << 32 | permits` (README "State"). Its own cache line: spinners poll it,
    /// and nothing else should move with it.
    state: CachePadded<AtomicU64>,
    /// The job of the dispatch in flight here; null while the slot is free (step 2).
    job: AtomicPtr<Job>,
    /// A caller owns the slot (step 1).
    owned: AtomicBool,
    /// Whether the owner is blocked (or about to block) waiting for quiet.
    pub(crate) caller_sleeping: AtomicBool,
    /// The owner sleeps here (under the signal's lock).
    pub(crate) caller: Condvar,
    /// The gaps the owner waited for its last helper (`Gaps` bits).
    pub(crate) caller_gaps: AtomicU64,
    /// When the detach that woke the owner happened, in ns (written under the lock).
    pub(crate) detached_ns: AtomicU64,
}

impl Slot {
    pub(crate) fn new() -> Slot {
        Slot {
            state: CachePadded::new(AtomicU64::new(0)),
            job: AtomicPtr::new(std::ptr::null_mut()),
            owned: AtomicBool::new(false),
            caller_sleeping: AtomicBool::new(false),
            caller: Condvar::new(),
            caller_gaps: AtomicU64::new(0),
            detached_ns: AtomicU64::new(0),
        }
    }

    pub(crate) fn state(&self) -> SignalState {
        let state = self.state.load(Ordering::Acquire);
        SignalState {
            permits: (state & PERMITS_MASK) as u32,
            attached: (state >> 32) as u32,
        }
    }

    /// Step 1: takes the slot for one dispatch, or `false` if another caller has it.
    pub(crate) fn try_own(&self) -> bool {
        // Acquire: pairs with `release`'s Release, so the previous dispatch's clean-up
        // (step 7) happens-before this one's start.
        self.owned
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether a caller owns the slot now.
    pub(crate) fn is_owned(&self) -> bool {
        self.owned.load(Ordering::Relaxed)
    }

    /// Step 2: publishes the job (ordered by the permits' Release in `add_permits`).
    pub(crate) fn publish(&self, job: &Job) {
        self.job
            .store(job as *const Job as *mut Job, Ordering::Relaxed);
    }

    /// The job of the dispatch a helper is attached to.
    pub(crate) fn job(&self) -> *const Job {
        // Relaxed: the Acquire CAS that attached the helper ordered the caller's store.
        self.job.load(Ordering::Relaxed)
    }

    /// Step 3's first half: `permits` more helpers may attach.
    pub(crate) fn add_permits(&self, permits: u32) {
        // Release: pairs with the Acquire CAS in `try_attach`, so an attached helper sees
        // the job published before this post (step 2).
        self.state.fetch_add(u64::from(permits), Ordering::Release);
    }

    /// Helper step 2: takes one permit and attaches, or returns `false` if none is left.
    pub(crate) fn try_attach(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        while state & PERMITS_MASK != 0 {
            let taken = state - 1 + ATTACHED_ONE;
            // Acquire: pairs with `add_permits`'s Release (see there).
            match self.state.compare_exchange_weak(
                state,
                taken,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
        false
    }

    /// Step 5: takes back the permits no helper took; returns how many.
    pub(crate) fn withdraw(&self) -> u32 {
        if cfg!(rayforce_loom_broken = "no_withdraw") {
            return 0; // deliberately broken: leftover permits drift into the next dispatch
        }
        // Relaxed: withdrawing publishes nothing; it only stops further attachments. The
        // caller's Acquire loads in `wait_until_quiet` order what follows.
        let before = self.state.fetch_and(!PERMITS_MASK, Ordering::Relaxed);
        (before & PERMITS_MASK) as u32
    }

    /// Helper step 4's first half: detaches; after this the helper must not touch the job.
    pub(crate) fn detach(&self) {
        // Release: pairs with the Acquire load in `is_quiet`, so everything the helper did
        // in the dispatch (its tasks' effects) happens-before the caller returns.
        self.state.fetch_sub(ATTACHED_ONE, Ordering::Release);
    }

    /// Whether no helper is attached (after `withdraw`, this can only become true).
    pub(crate) fn is_quiet(&self) -> bool {
        // Acquire: pairs with `detach`'s Release.
        self.state.load(Ordering::Acquire) >> 32 == 0
    }

    /// Step 7: frees the slot for the next dispatch.
    pub(crate) fn release(&self) {
        debug_assert_eq!(self.state(), SignalState::IDLE, "drift");
        self.job.store(std::ptr::null_mut(), Ordering::Relaxed);
        // Release: pairs with `try_own`'s Acquire.
        self.owned.store(false, Ordering::Release);
    }
}
