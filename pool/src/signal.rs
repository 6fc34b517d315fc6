//! The signal between dispatching callers and the helpers: a fixed table of slots, one per
//! dispatch in flight (each a counting semaphore of permits packed with its attached
//! helpers, `slot.rs`), plus the spin-then-block waits on both sides. Protocol:
//! `README.md` beside this file.

use crate::slot::{SignalState, Slot};
use crate::spin::{self, Gaps, SpinLimits};
use crate::stats::Counters;
use crate::sync::{self, fence, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};

/// What a waiting helper got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A permit of the dispatch in this slot: the helper is attached to it.
    Attached(usize),
    /// The pool is shutting down.
    Shutdown,
}

pub(crate) struct Signal {
    slots: Box<[Slot]>,
    /// Helpers blocked (or about to block) in `sleep`.
    sleepers: AtomicUsize,
    /// Helpers spinning for a permit (README "Spinning").
    spinners: AtomicUsize,
    shutdown: AtomicBool,
    /// Held while checking a sleep condition and waiting; guards the time of the last post
    /// that woke sleepers, read by the helpers it woke (README "Spinning").
    lock: Mutex<u64>,
    /// Helpers sleep here.
    helpers: Condvar,
    /// Helpers with an index above this park (README "Resizing"): the active wide width,
    /// less the caller.
    active_helpers: AtomicUsize,
    /// Parked helpers wait here.
    parked: Condvar,
    /// The policy's CPU count now (it follows the machine): the spin budget.
    cpus: AtomicUsize,
    limits: SpinLimits,
    /// What blocking costs: the mean time from a post to the helper it woke running, in
    /// ns (until measured, at most 50 us: `SpinLimits::unmeasured_block_cost_ns`). No spin
    /// window is longer.
    block_cost_ns: AtomicU64,
}

impl Signal {
    /// A signal with `slots` slots (that many dispatches can be in flight at once), whose
    /// helpers up to `active_helpers` take permits.
    pub(crate) fn new(limits: SpinLimits, slots: usize, active_helpers: usize) -> Signal {
        Signal {
            slots: (0..slots.max(1)).map(|_| Slot::new()).collect(),
            sleepers: AtomicUsize::new(0),
            spinners: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            lock: Mutex::new(0),
            helpers: Condvar::new(),
            active_helpers: AtomicUsize::new(active_helpers),
            parked: Condvar::new(),
            cpus: AtomicUsize::new(limits.cpus),
            limits,
            block_cost_ns: AtomicU64::new(limits.unmeasured_block_cost_ns()),
        }
    }

    pub(crate) fn slot(&self, index: usize) -> &Slot {
        &self.slots[index]
    }

    /// Every slot's counts, summed: between dispatches, both are zero (no drift).
    pub(crate) fn state(&self) -> SignalState {
        self.slots
            .iter()
            .map(Slot::state)
            .fold(SignalState::IDLE, SignalState::plus)
    }

    /// Dispatch step 1: a free slot, now owned by the caller; `None` when every slot has a
    /// dispatch in flight (the caller then runs its tasks inline).
    pub(crate) fn own_slot(&self) -> Option<usize> {
        self.slots.iter().position(Slot::try_own)
    }

    /// Dispatch step 3: posts `permits` in `slot` and wakes the sleeping helpers needed to
    /// take them beyond those already spinning.
    pub(crate) fn post(&self, slot: usize, permits: u32) {
        if permits == 0 {
            return;
        }
        self.slots[slot].add_permits(permits);
        // SeqCst fence: pairs with the ones in `sleep` and `begin_spinning` (README
        // "Falling asleep"): either we count the sleeper or spinner, or it sees our permits.
        // And with the one in another caller's `post`, for `callers_in_flight`.
        fence(Ordering::SeqCst);
        // Spinners take permits without a kernel wake-up, but only one caller may count on
        // them: with two in flight, both could count the same spinner (README "Spinning").
        let spinners = if self.limits.enabled() && self.callers_in_flight() == 1 {
            self.spinners.load(Ordering::Relaxed)
        } else {
            0
        };
        let sleepers = self.sleepers.load(Ordering::Relaxed);
        let wake = (permits as usize).saturating_sub(spinners).min(sleepers);
        if wake > 0 {
            let mut posted_ns = sync::lock(&self.lock);
            if self.limits.enabled() {
                *posted_ns = sync::now_ns();
            }
            for _ in 0..wake {
                self.helpers.notify_one();
            }
        }
    }

    /// README "Resizing": runs `apply` under the lock; when it returns `(active_helpers,
    /// cpus)`, from now on helpers up to `active_helpers` take permits and the others park
    /// once they leave the dispatch they are in, and `cpus` is the spin budget. Returns
    /// whether `apply` changed anything. Resizes and readings apply one at a time, so the
    /// widths a pool stores and the helpers taking permits always agree.
    pub(crate) fn resize(&self, apply: impl FnOnce() -> Option<(usize, usize)>) -> bool {
        // Under the lock, so that no helper is between its check and its wait.
        let _guard = if cfg!(rayforce_loom_broken = "resize_unlocked") {
            None // deliberately broken: a helper between its check and its wait misses this
        } else {
            Some(sync::lock(&self.lock))
        };
        let Some((active_helpers, cpus)) = apply() else {
            return false;
        };
        self.cpus.store(cpus, Ordering::Relaxed);
        self.active_helpers.store(active_helpers, Ordering::Relaxed);
        self.parked.notify_all();
        // Sleepers beyond the new width move to the park when they wake.
        self.helpers.notify_all();
        true
    }

    /// The spin budget now.
    pub(crate) fn cpus(&self) -> usize {
        self.cpus.load(Ordering::Relaxed)
    }

    /// Whether helper `index` (1-based) may take permits.
    fn is_active(&self, index: usize) -> bool {
        index <= self.active_helpers.load(Ordering::Relaxed)
    }

    /// Parks helper `index` until it is active again; `true` if the pool shut down.
    fn park(&self, index: usize) -> bool {
        let mut guard = sync::lock(&self.lock);
        loop {
            // Acquire: pairs with `shut_down`'s Release.
            if self.shutdown.load(Ordering::Acquire) {
                return true;
            }
            if self.is_active(index) {
                return false;
            }
            guard = self.parked.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Whether any slot has a permit waiting.
    fn any_permits(&self) -> bool {
        self.slots.iter().any(|s| s.state().permits > 0)
    }

    /// Dispatches in flight: slots owned by a caller.
    fn callers_in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.is_owned()).count()
    }

    /// Dispatch step 5, for `slot` only: takes back the permits no helper took.
    pub(crate) fn withdraw(&self, slot: usize) -> u32 {
        if cfg!(rayforce_loom_broken = "withdraw_all") {
            // Deliberately broken: clears every slot's permits, other dispatches' too.
            return self.slots.iter().map(Slot::withdraw).sum();
        }
        self.slots[slot].withdraw()
    }

    /// Helper step 4: detaches from the dispatch in `slot`; after this the helper must not
    /// touch it. Wakes that slot's caller if it sleeps.
    pub(crate) fn detach(&self, slot: usize) {
        let slot = &self.slots[slot];
        slot.detach();
        // SeqCst fence: pairs with the one in `block_until_quiet` (README "Completion").
        fence(Ordering::SeqCst);
        if slot.caller_sleeping.load(Ordering::Relaxed) {
            let _guard = sync::lock(&self.lock);
            if self.limits.enabled() {
                slot.detached_ns.store(sync::now_ns(), Ordering::Relaxed);
            }
            slot.caller.notify_one();
        }
    }

    /// Helper step 1: spins for a window learned from `gaps`, then blocks, until a permit of
    /// any slot is taken or the pool shuts down (README "Spinning", "Falling asleep").
    /// `cursor` is the slot the helper looks at first: the one after the slot it served
    /// last, so helpers take turns among the dispatches in flight (README "Sharing").
    pub(crate) fn wait_for_permit(
        &self,
        index: usize,
        gaps: &mut Gaps,
        cursor: &mut usize,
        counters: &Counters,
    ) -> Wait {
        loop {
            if !self.is_active(index) {
                if self.park(index) {
                    return Wait::Shutdown;
                }
                continue;
            }
            let started = self.now_if_spinning();
            let window = gaps.window(self.limits, self.block_cost());
            if window > 0 && self.begin_spinning() {
                let caught = spin::spin_until(started + window, || self.poll(index, cursor));
                self.spinners.fetch_sub(1, Ordering::Relaxed);
                let spun = sync::now_ns().saturating_sub(started);
                counters.spun(spun, caught.is_some());
                if let Some(wait) = caught {
                    gaps.learn(spun, self.limits);
                    return wait;
                }
            }
            if let Some(wait) = self.sleep(index, started, gaps, cursor, counters) {
                return wait;
            }
        }
    }

    /// A permit taken (the first slot with one, from `cursor` on) while helper `index` is
    /// active, or shutdown seen.
    fn poll(&self, index: usize, cursor: &mut usize) -> Option<Wait> {
        let n = if self.is_active(index) {
            self.slots.len()
        } else {
            0 // resized away: it takes no permit, and parks at its next wait
        };
        for step in 0..n {
            let index = (*cursor + step) % n;
            if self.slots[index].try_attach() {
                *cursor = (index + 1) % n;
                return Some(Wait::Attached(index));
            }
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

    /// Becomes one of the spinners, unless spinners, helpers at work and callers in flight
    /// (at least one: the program's own thread) already fill the policy's CPUs (README
    /// "Spinning": spinners never take a core from work).
    fn begin_spinning(&self) -> bool {
        let (working, callers) = self.slots.iter().fold((0, 0), |(working, callers), s| {
            (
                working + s.state().attached as usize,
                callers + usize::from(s.is_owned()),
            )
        });
        let busy = working + callers.max(1);
        let cpus = self.cpus.load(Ordering::Relaxed);
        let mut spinning = self.spinners.load(Ordering::Relaxed);
        loop {
            if spinning + busy >= cpus {
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
    fn sleep(
        &self,
        index: usize,
        started: u64,
        gaps: &mut Gaps,
        cursor: &mut usize,
        counters: &Counters,
    ) -> Option<Wait> {
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `post`
        let mut guard = sync::lock(&self.lock);
        let outcome = if cfg!(rayforce_loom_broken = "spin_without_recheck") && started > 0 {
            None // deliberately broken: after a spin, blocks without looking for a permit
        } else {
            self.poll(index, cursor)
        };
        let outcome = match outcome {
            Some(wait) => {
                if self.limits.enabled() {
                    gaps.learn(sync::now_ns().saturating_sub(started), self.limits);
                }
                Some(wait)
            }
            // Resized away: park instead (a post that counted it wakes a waiting one).
            None if !self.is_active(index) => None,
            None => {
                guard = self.helpers.wait(guard).unwrap_or_else(|p| p.into_inner());
                Counters::bump(&counters.kernel_wakeups);
                let woke = self.poll(index, cursor);
                if woke.is_none() {
                    Counters::bump(&counters.empty_wakes);
                    if !self.is_active(index) && self.any_permits() {
                        // A post counted this resized-away helper as a sleeper: pass the
                        // wake-up on to one that may take the permit (README "Resizing").
                        self.helpers.notify_one();
                    }
                }
                let posted = *guard;
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
    /// no helper is attached to `slot`. Call after `withdraw`, so `attached` can only fall.
    #[inline]
    pub(crate) fn wait_until_quiet(
        &self,
        slot: usize,
        counters: &Counters,
        finished: impl Fn() -> bool,
    ) {
        let slot = &self.slots[slot];
        let quiet = || slot.is_quiet() && finished();
        if !quiet() {
            self.wait_for_quiet(slot, counters, quiet);
        }
    }

    /// `wait_until_quiet`'s slow path: a helper is still inside the dispatch.
    fn wait_for_quiet(&self, slot: &Slot, counters: &Counters, quiet: impl Fn() -> bool) {
        let started = self.now_if_spinning();
        let mut gaps = Gaps::from_bits(slot.caller_gaps.load(Ordering::Relaxed));
        let window = gaps.window(self.limits, self.block_cost());
        let caught = window > 0 && {
            let caught = spin::spin_until(started + window, || quiet().then_some(())).is_some();
            counters.spun(sync::now_ns().saturating_sub(started), caught);
            caught
        };
        let waited_until = if caught {
            sync::now_ns()
        } else {
            self.block_until_quiet(slot, &quiet, counters)
                .unwrap_or_else(|| self.now_if_spinning())
        };
        if self.limits.enabled() {
            gaps.learn(waited_until.saturating_sub(started), self.limits);
            slot.caller_gaps.store(gaps.to_bits(), Ordering::Relaxed);
        }
    }

    /// README "Completion": blocks until `quiet()`; returns when the helper that woke the
    /// caller detached, if it blocked at all.
    fn block_until_quiet(
        &self,
        slot: &Slot,
        quiet: &dyn Fn() -> bool,
        counters: &Counters,
    ) -> Option<u64> {
        slot.caller_sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `detach`
        let mut guard = sync::lock(&self.lock);
        let mut blocked = false;
        while !quiet() {
            guard = slot.caller.wait(guard).unwrap_or_else(|p| p.into_inner());
            Counters::bump(&counters.kernel_wakeups);
            blocked = true;
        }
        drop(guard);
        slot.caller_sleeping.store(false, Ordering::Relaxed);
        blocked.then(|| slot.detached_ns.load(Ordering::Relaxed))
    }

    /// Tells every helper to exit and wakes the sleeping ones.
    pub(crate) fn shut_down(&self) {
        // Release: pairs with the Acquire load in `poll`.
        self.shutdown.store(true, Ordering::Release);
        let _guard = sync::lock(&self.lock);
        self.helpers.notify_all();
        self.parked.notify_all();
    }
}
