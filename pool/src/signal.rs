//! The signal between a dispatching caller and the helpers: a counting semaphore of
//! permits, packed in one word with the number of helpers attached to the current dispatch,
//! plus the sleep and wake-up paths on both sides. Protocol: `README.md` beside this file.

use crate::sync::{self, fence, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};

/// `state`'s high half counts attached helpers; the low half counts permits.
const ATTACHED_ONE: u64 = 1 << 32;
const PERMITS_MASK: u64 = ATTACHED_ONE - 1;

/// What a waiting helper got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A permit: the helper is attached to the current dispatch. `woken` says whether it
    /// had blocked in the kernel first.
    Attached { woken: bool },
    /// The pool is shutting down.
    Shutdown,
}

/// A snapshot of the signal word, for invariants and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalState {
    /// Permits posted and not yet taken (0 whenever no dispatch is in flight).
    pub permits: u32,
    /// Helpers attached to the current dispatch (0 whenever no dispatch is in flight).
    pub attached: u32,
}

impl SignalState {
    /// Between dispatches: no permit left, no helper attached (README "Invariants").
    pub const IDLE: SignalState = SignalState {
        permits: 0,
        attached: 0,
    };
}

pub(crate) struct Signal {
    /// `attached << 32 | permits` (README "State").
    state: AtomicU64,
    /// Helpers blocked (or about to block) in `wait_for_permit`.
    sleepers: AtomicUsize,
    /// Whether the caller is blocked (or about to block) in `wait_until_quiet`.
    caller_sleeping: AtomicBool,
    shutdown: AtomicBool,
    /// Held while checking a sleep condition and waiting; guards no data.
    lock: Mutex<()>,
    /// Helpers sleep here.
    helpers: Condvar,
    /// The caller sleeps here.
    caller: Condvar,
    /// Woken from the kernel but found no permit (stats).
    pub(crate) empty_wakes: AtomicU64,
}

impl Signal {
    pub(crate) fn new() -> Signal {
        Signal {
            state: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            caller_sleeping: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            lock: Mutex::new(()),
            helpers: Condvar::new(),
            caller: Condvar::new(),
            empty_wakes: AtomicU64::new(0),
        }
    }

    pub(crate) fn state(&self) -> SignalState {
        let state = self.state.load(Ordering::Acquire);
        SignalState {
            permits: (state & PERMITS_MASK) as u32,
            attached: (state >> 32) as u32,
        }
    }

    /// Dispatch step 3: posts `permits` and wakes up to that many sleeping helpers.
    pub(crate) fn post(&self, permits: u32) {
        if permits == 0 {
            return;
        }
        // Release: pairs with the Acquire CAS in `try_attach`, so an attached helper sees
        // the job published before this post (dispatch step 2).
        self.state.fetch_add(u64::from(permits), Ordering::Release);
        // SeqCst fence: pairs with the one in `wait_for_permit` (README "Falling asleep"):
        // either we see the sleeper, or it sees our permits.
        fence(Ordering::SeqCst);
        let sleepers = self.sleepers.load(Ordering::Relaxed);
        if sleepers > 0 {
            let _guard = sync::lock(&self.lock);
            for _ in 0..sleepers.min(permits as usize) {
                self.helpers.notify_one();
            }
        }
    }

    /// Helper step 2: takes one permit and attaches, or returns `false` if none is left.
    pub(crate) fn try_attach(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        while state & PERMITS_MASK != 0 {
            let taken = state - 1 + ATTACHED_ONE;
            // Acquire: pairs with `post`'s Release (see there).
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

    /// Dispatch step 5: takes back the permits no helper took; returns how many.
    pub(crate) fn withdraw(&self) -> u32 {
        if cfg!(rayforce_loom_broken = "no_withdraw") {
            return 0; // deliberately broken: leftover permits drift into the next dispatch
        }
        // Relaxed: withdrawing publishes nothing; it only stops further attachments. The
        // caller's Acquire loads in `wait_until_quiet` order what follows.
        let before = self.state.fetch_and(!PERMITS_MASK, Ordering::Relaxed);
        (before & PERMITS_MASK) as u32
    }

    /// Helper step 4: detaches from the dispatch; after this the helper must not touch it.
    /// Wakes the caller if it sleeps and this was the last attached helper.
    pub(crate) fn detach(&self) {
        // Release: pairs with the Acquire load in `wait_until_quiet`, so everything the
        // helper did in the dispatch (its tasks' effects) happens-before the caller returns.
        self.state.fetch_sub(ATTACHED_ONE, Ordering::Release);
        // SeqCst fence: pairs with the one in `wait_until_quiet` (README "Completion").
        fence(Ordering::SeqCst);
        if self.caller_sleeping.load(Ordering::Relaxed) {
            let _guard = sync::lock(&self.lock);
            self.caller.notify_one();
        }
    }

    /// Helper step 1: spins `spin_count` times, then blocks, until a permit is taken or the
    /// pool shuts down.
    pub(crate) fn wait_for_permit(&self, spin_count: u32) -> Wait {
        for _ in 0..spin_count {
            if self.try_attach() {
                return Wait::Attached { woken: false };
            }
            if self.shutdown.load(Ordering::Relaxed) {
                return Wait::Shutdown;
            }
            sync::spin_hint();
        }
        // README "Falling asleep": announce, fence, then re-check under the lock.
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `post`
        let mut guard = sync::lock(&self.lock);
        let mut woken = false;
        let outcome = loop {
            if self.try_attach() {
                break Wait::Attached { woken };
            }
            // Acquire: pairs with `shut_down`'s Release.
            if self.shutdown.load(Ordering::Acquire) {
                break Wait::Shutdown;
            }
            if woken {
                self.empty_wakes.fetch_add(1, Ordering::Relaxed);
            }
            guard = self.helpers.wait(guard).unwrap_or_else(|p| p.into_inner());
            woken = true;
        };
        drop(guard);
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        outcome
    }

    /// Dispatch step 6: spins, then blocks, until `finished()` holds and no helper is
    /// attached. Call after `withdraw`, so `attached` can only fall.
    pub(crate) fn wait_until_quiet(&self, spin_count: u32, finished: impl Fn() -> bool) {
        // Acquire: pairs with `detach`'s Release.
        let quiet = || self.state.load(Ordering::Acquire) >> 32 == 0 && finished();
        for _ in 0..spin_count {
            if quiet() {
                return;
            }
            sync::spin_hint();
        }
        self.caller_sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `detach`
        let mut guard = sync::lock(&self.lock);
        while !quiet() {
            guard = self.caller.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
        drop(guard);
        self.caller_sleeping.store(false, Ordering::Relaxed);
    }

    /// Tells every helper to exit and wakes the sleeping ones.
    pub(crate) fn shut_down(&self) {
        // Release: pairs with the Acquire load in `wait_for_permit`.
        self.shutdown.store(true, Ordering::Release);
        let _guard = sync::lock(&self.lock);
        self.helpers.notify_all();
    }
}
