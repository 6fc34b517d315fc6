//! The signal between a dispatching caller and the helpers: a counting semaphore of
//! permits, packed in one word with the number of helpers attached to the current dispatch,
//! plus the spin-then-block waits on both sides. Protocol: `README.md` beside this file.

use crate::spin::{self, Gaps, SpinLimits};
use crate::stats::Counters;
use crate::sync::{self, fence, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};
use crossbeam_utils::CachePadded;

/// `state`'s high half counts attached helpers; the low half counts permits.
const ATTACHED_ONE: u64 = 1 << 32;
const PERMITS_MASK: u64 = ATTACHED_ONE - 1;

/// What a waiting helper got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A permit: the helper is attached to the current dispatch.
    Attached,
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

/// When the last post that woke sleepers, and the last detach that woke the caller,
/// happened: read by the thread they woke, to learn the gap it slept through rather than
/// that gap plus the kernel's wake-up latency (README "Spinning").
#[derive(Default)]
struct Stamps {
    posted_ns: u64,
    detached_ns: u64,
}

pub(crate) struct Signal {
    /// `attached << 32 | permits` (README "State"). Its own cache line: spinners poll it,
    /// and nothing else should move with it.
    state: CachePadded<AtomicU64>,
    /// Helpers blocked (or about to block) in `sleep`.
    sleepers: AtomicUsize,
    /// Helpers spinning for a permit (README "Spinning").
    spinners: AtomicUsize,
    /// Whether the caller is blocked (or about to block) in `wait_until_quiet`.
    caller_sleeping: AtomicBool,
    shutdown: AtomicBool,
    /// Held while checking a sleep condition and waiting; guards the wake-up stamps.
    lock: Mutex<Stamps>,
    /// Helpers sleep here.
    helpers: Condvar,
    /// The caller sleeps here.
    caller: Condvar,
    limits: SpinLimits,
    /// What blocking costs: the mean time from a post to the helper it woke running, in
    /// ns (the ceiling until measured). No spin window is longer.
    block_cost_ns: AtomicU64,
    /// The gaps the caller waited for its last helper (`Gaps` bits; one caller at a time).
    caller_gaps: AtomicU64,
}

impl Signal {
    pub(crate) fn new(limits: SpinLimits) -> Signal {
        Signal {
            state: CachePadded::new(AtomicU64::new(0)),
            sleepers: AtomicUsize::new(0),
            spinners: AtomicUsize::new(0),
            caller_sleeping: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            lock: Mutex::new(Stamps::default()),
            helpers: Condvar::new(),
            caller: Condvar::new(),
            limits,
            block_cost_ns: AtomicU64::new(limits.ceiling_ns),
            caller_gaps: AtomicU64::new(0),
        }
    }

    pub(crate) fn state(&self) -> SignalState {
        let state = self.state.load(Ordering::Acquire);
        SignalState {
            permits: (state & PERMITS_MASK) as u32,
            attached: (state >> 32) as u32,
        }
    }

    /// Dispatch step 3: posts `permits` and wakes the sleeping helpers needed to take them
    /// beyond those already spinning.
    pub(crate) fn post(&self, permits: u32) {
        if permits == 0 {
            return;
        }
        // Release: pairs with the Acquire CAS in `try_attach`, so an attached helper sees
        // the job published before this post (dispatch step 2).
        self.state.fetch_add(u64::from(permits), Ordering::Release);
        // SeqCst fence: pairs with the ones in `sleep` and `begin_spinning` (README
        // "Falling asleep"): either we count the sleeper or spinner, or it sees our permits.
        fence(Ordering::SeqCst);
        let spinners = if self.limits.enabled() {
            self.spinners.load(Ordering::Relaxed)
        } else {
            0 // nothing ever spins
        };
        let sleepers = self.sleepers.load(Ordering::Relaxed);
        let wake = (permits as usize).saturating_sub(spinners).min(sleepers);
        if wake > 0 {
            let mut stamps = sync::lock(&self.lock);
            if self.limits.enabled() {
                stamps.posted_ns = sync::now_ns();
            }
            for _ in 0..wake {
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
    /// Wakes the caller if it sleeps.
    pub(crate) fn detach(&self) {
        // Release: pairs with the Acquire load in `wait_until_quiet`, so everything the
        // helper did in the dispatch (its tasks' effects) happens-before the caller returns.
        self.state.fetch_sub(ATTACHED_ONE, Ordering::Release);
        // SeqCst fence: pairs with the one in `wait_until_quiet` (README "Completion").
        fence(Ordering::SeqCst);
        if self.caller_sleeping.load(Ordering::Relaxed) {
            let mut stamps = sync::lock(&self.lock);
            if self.limits.enabled() {
                stamps.detached_ns = sync::now_ns();
            }
            self.caller.notify_one();
        }
    }

    /// Helper step 1: spins for a window learned from `gaps`, then blocks, until a permit is
    /// taken or the pool shuts down (README "Spinning", "Falling asleep").
    pub(crate) fn wait_for_permit(&self, gaps: &mut Gaps, counters: &Counters) -> Wait {
        loop {
            let started = self.now_if_spinning();
            let window = gaps.window(self.limits, self.block_cost());
            if window > 0 && self.begin_spinning() {
                let caught = spin::spin_until(started + window, || self.poll());
                self.spinners.fetch_sub(1, Ordering::Relaxed);
                let spun = sync::now_ns().saturating_sub(started);
                counters.spun(spun, caught.is_some());
                if let Some(wait) = caught {
                    gaps.learn(spun, self.limits);
                    return wait;
                }
            }
            if let Some(wait) = self.sleep(started, gaps, counters) {
                return wait;
            }
        }
    }

    /// A permit taken, or shutdown seen.
    fn poll(&self) -> Option<Wait> {
        if self.try_attach() {
            return Some(Wait::Attached);
        }
        // Acquire: pairs with `shut_down`'s Release.
        self.shutdown
            .load(Ordering::Acquire)
            .then_some(Wait::Shutdown)
    }

    /// The clock, when anything spins (it is only read to learn spin windows).
    fn now_if_spinning(&self) -> u64 {
        if self.limits.enabled() {
            sync::now_ns()
        } else {
            0
        }
    }

    fn block_cost(&self) -> u64 {
        self.block_cost_ns.load(Ordering::Relaxed)
    }

    /// Becomes one of the spinners, unless spinners and helpers at work already fill the
    /// spin budget (README "Spinning": spinners never take a core from work).
    fn begin_spinning(&self) -> bool {
        let working = (self.state.load(Ordering::Relaxed) >> 32) as usize;
        let mut spinning = self.spinners.load(Ordering::Relaxed);
        loop {
            if spinning + working >= self.limits.budget {
                return false;
            }
            match self.spinners.compare_exchange_weak(
                spinning,
                spinning + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => spinning = now,
            }
        }
        // SeqCst fence: pairs with the one in `post`: a caller that counted us as spinning
        // (and woke one sleeper fewer) posted before our first poll, which sees its permits.
        fence(Ordering::SeqCst);
        true
    }

    /// README "Falling asleep": announces the sleeper, re-checks under the lock, and blocks
    /// until one kernel wake-up. `None` when that wake-up found no permit: the helper then
    /// decides afresh whether to spin, having learned the gap it slept through.
    fn sleep(&self, started: u64, gaps: &mut Gaps, counters: &Counters) -> Option<Wait> {
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `post`
        let mut guard = sync::lock(&self.lock);
        let outcome = if cfg!(rayforce_loom_broken = "spin_without_recheck") && started > 0 {
            None // deliberately broken: after a spin, blocks without looking for a permit
        } else {
            self.poll()
        };
        let outcome = match outcome {
            Some(wait) => {
                if self.limits.enabled() {
                    gaps.learn(sync::now_ns().saturating_sub(started), self.limits);
                }
                Some(wait)
            }
            None => {
                guard = self.helpers.wait(guard).unwrap_or_else(|p| p.into_inner());
                Counters::bump(&counters.kernel_wakeups);
                let woke = self.poll();
                if woke.is_none() {
                    Counters::bump(&counters.empty_wakes);
                }
                let posted = guard.posted_ns;
                if self.limits.enabled() && posted >= started {
                    self.learn_block_cost(sync::now_ns().saturating_sub(posted));
                    gaps.learn(posted - started, self.limits);
                }
                woke
            }
        };
        drop(guard);
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        outcome
    }

    /// Takes one measured wake-up latency into the block cost.
    fn learn_block_cost(&self, latency_ns: u64) {
        let latency = latency_ns.min(self.limits.ceiling_ns.saturating_mul(4));
        let cost = spin::ewma(self.block_cost(), latency);
        self.block_cost_ns.store(cost, Ordering::Relaxed);
    }

    /// Dispatch step 6: spins for a learned window, then blocks, until `finished()` holds and
    /// no helper is attached. Call after `withdraw`, so `attached` can only fall.
    pub(crate) fn wait_until_quiet(&self, counters: &Counters, finished: impl Fn() -> bool) {
        // Acquire: pairs with `detach`'s Release.
        let quiet = || self.state.load(Ordering::Acquire) >> 32 == 0 && finished();
        if quiet() {
            return;
        }
        let started = self.now_if_spinning();
        let mut gaps = Gaps::from_bits(self.caller_gaps.load(Ordering::Relaxed));
        let window = gaps.window(self.limits, self.block_cost());
        let caught = window > 0 && {
            let caught = spin::spin_until(started + window, || quiet().then_some(())).is_some();
            counters.spun(sync::now_ns().saturating_sub(started), caught);
            caught
        };
        let waited_until = if caught {
            sync::now_ns()
        } else {
            self.block_until_quiet(&quiet, counters)
                .unwrap_or_else(|| self.now_if_spinning())
        };
        if self.limits.enabled() {
            gaps.learn(waited_until.saturating_sub(started), self.limits);
            self.caller_gaps.store(gaps.to_bits(), Ordering::Relaxed);
        }
    }

    /// README "Completion": blocks until `quiet()`; returns when the helper that woke the
    /// caller detached, if it blocked at all.
    fn block_until_quiet(&self, quiet: &dyn Fn() -> bool, counters: &Counters) -> Option<u64> {
        self.caller_sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `detach`
        let mut guard = sync::lock(&self.lock);
        let mut blocked = false;
        while !quiet() {
            guard = self.caller.wait(guard).unwrap_or_else(|p| p.into_inner());
            Counters::bump(&counters.kernel_wakeups);
            blocked = true;
        }
        let detached = guard.detached_ns;
        drop(guard);
        self.caller_sleeping.store(false, Ordering::Relaxed);
        blocked.then_some(detached)
    }

    /// Tells every helper to exit and wakes the sleeping ones.
    pub(crate) fn shut_down(&self) {
        // Release: pairs with the Acquire load in `poll`.
        self.shutdown.store(true, Ordering::Release);
        let _guard = sync::lock(&self.lock);
        self.helpers.notify_all();
    }
}
