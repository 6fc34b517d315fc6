//! The signal between dispatching callers and the helpers: a fixed table of slots, one per
//! dispatch in flight and those kept for joins' offers (each a counting semaphore of
//! permits packed with its attached helpers, `slot.rs`), plus the spin-then-block waits on
//! both sides. Protocol: `README.md` beside this file.

use crate::mail::{self, Mailbox, Waiters};
use crate::offering::Idle;
use crate::slot::{SignalState, Slot};
use crate::spin::{self, Gaps, SpinLimits, Spun};
use crate::stats::Counters;
use crate::sync::{self, fence, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};
use crossbeam_utils::CachePadded;

/// What a helper waiting for a permit just detached from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Left {
    /// Nothing: it just started.
    Nothing,
    /// A dispatch (or a scope).
    Dispatch,
    /// A join's offer.
    JoinOffer,
}

/// What a waiting helper got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A permit of the dispatch in `slot`, and the first task it carries: the helper is
    /// attached to the dispatch. `joinable`: a join's offer. `spun`: caught while
    /// spinning, and still counted among the spinners until [`Signal::end_spin`].
    Attached {
        slot: usize,
        task: usize,
        joinable: bool,
        spun: Option<Spun>,
    },
    /// A letter waits in the helper's mailbox (README "Broadcasts").
    Mail,
    /// The pool is shutting down.
    Shutdown,
}

/// Slots kept for joins' offers per thread of the pool, beyond the dispatches'. A taken
/// offer holds its slot until its half ends, and its taker's own offers (taken back by
/// the joiner while it waits) hold more: with only the dispatches' (one per thread),
/// two threads that took each other's halves had no slot left to offer a third, and a
/// quicksort's last 60% ran on one thread. None under loom: its models keep the slots
/// they name.
pub(crate) const JOIN_SLOTS_PER_THREAD: usize = if cfg!(rayforce_loom) { 0 } else { 4 };

/// A spinning helper polls the slots kept for joins' offers once in this many polls (the
/// dispatches' at every one): a dispatch's round trip waits on the poll, a join's offer
/// (at most one per 5 us to a spinner) hardly. Before sleeping it polls them all.
const POLLS_PER_JOIN_SLOTS_POLL: u32 = 4;

/// Whether a signal keeps a slot for the pool's spawned tasks (README "Spawns"). None
/// under loom unless a model asks for it (`PoolBuilder::spawn_slot`): every helper's scan
/// reads each slot, and the other models need none.
pub(crate) const SPAWN_SLOT: bool = !cfg!(rayforce_loom);

/// How many slots a signal has: one per dispatch that may be in flight, those kept for
/// joins' offers, and whether one is kept for spawned tasks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotCounts {
    pub(crate) dispatches: usize,
    pub(crate) joins: usize,
    pub(crate) spawn: bool,
}

pub(crate) struct Signal {
    /// The dispatches' slots first, then those kept for joins' offers, then the one kept
    /// for spawned tasks if any.
    slots: Box<[Slot]>,
    /// How many of `slots` dispatches own: the rest only joins' offers do.
    dispatch_slots: usize,
    /// The end of the slots kept for joins' offers: the slot kept for spawned tasks, if
    /// there is one, else `slots.len()`.
    join_slots_end: usize,
    /// Helpers blocked (or about to block) in `sleep`. Its own line: every post reads it,
    /// and it changes only when a helper falls asleep or wakes.
    sleepers: CachePadded<AtomicUsize>,
    /// Helpers spinning for a permit (README "Spinning"); changes with every spin.
    spinners: CachePadded<AtomicUsize>,
    /// Joiners waiting for their offer, taking other offers meanwhile (README "Joining").
    join_waiters: CachePadded<AtomicUsize>,
    /// Joiners blocked (or about to block) waiting for their taken half, whom the next
    /// join's offer wakes (README "Joining").
    blocked_joiners: CachePadded<AtomicUsize>,
    shutdown: AtomicBool,
    /// Held while checking a sleep condition and waiting; guards when the last wake-up of
    /// sleepers happened and when the permits it woke them for were posted, read by the
    /// helpers it woke (README "Spinning", "Waking late").
    lock: Mutex<WakeTimes>,
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

/// The last wake-up of sleepers: when it happened, and when the permits it woke them for
/// were posted (earlier, for a late wake-up; README "Waking late").
#[derive(Clone, Copy, Default)]
struct WakeTimes {
    posted_ns: u64,
    woken_ns: u64,
    /// Woken for a stream of regions (README "Streams of short regions"): the helpers it
    /// woke expect short gaps from now on, whatever they slept through.
    stream: bool,
}

impl Signal {
    /// A signal with `slots` (as many dispatches can be in flight at once, at least one),
    /// whose helpers up to `active_helpers` take permits.
    pub(crate) fn new(limits: SpinLimits, slots: SlotCounts, active_helpers: usize) -> Signal {
        let dispatch_slots = slots.dispatches.max(1);
        let join_slots_end = dispatch_slots + slots.joins;
        Signal {
            slots: (0..join_slots_end + usize::from(slots.spawn))
                .map(|_| Slot::new())
                .collect(),
            dispatch_slots,
            join_slots_end,
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            spinners: CachePadded::new(AtomicUsize::new(0)),
            join_waiters: CachePadded::new(AtomicUsize::new(0)),
            blocked_joiners: CachePadded::new(AtomicUsize::new(0)),
            shutdown: AtomicBool::new(false),
            lock: Mutex::new(WakeTimes::default()),
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

    /// The counts of every slot but the one kept for spawned tasks, summed: between
    /// dispatches, both are zero (no drift).
    pub(crate) fn state(&self) -> SignalState {
        self.slots[..self.join_slots_end]
            .iter()
            .map(Slot::state)
            .fold(SignalState::IDLE, SignalState::plus)
    }

    /// Dispatch step 1: a free slot of the dispatches', now owned by the caller; `None`
    /// when each has a dispatch (or a join's offer) in flight (an operation then runs its
    /// items inline).
    #[inline]
    pub(crate) fn own_slot(&self) -> Option<usize> {
        Self::own_among(&self.slots[..self.dispatch_slots])
    }

    /// A free slot for a join's offer, now owned by the joiner: one kept for joins if any
    /// is free, else a dispatches' one; `None` when every slot is owned.
    #[inline]
    pub(crate) fn own_join_slot(&self) -> Option<usize> {
        let dispatch_slots = self.dispatch_slots;
        Self::own_among(&self.slots[dispatch_slots..self.join_slots_end])
            .map(|slot| dispatch_slots + slot)
            .or_else(|| self.own_slot())
    }

    /// The slot kept for the pool's spawned tasks, if the signal has one (README
    /// "Spawns"): nobody owns it; the pool's spawns publish their job there once.
    pub(crate) fn spawn_slot(&self) -> Option<usize> {
        (self.join_slots_end < self.slots.len()).then_some(self.join_slots_end)
    }

    /// The index in `slots` of a free one, now owned.
    #[inline]
    fn own_among(slots: &[Slot]) -> Option<usize> {
        // Looks before it takes: a CAS on an owned slot would take its line for nothing.
        slots.iter().position(|s| !s.is_owned() && s.try_own())
    }

    /// Who is idle, for an operation inside a task: a helper spinning or a joiner waiting
    /// (either takes it without the kernel), else a helper asleep. A helper that caught a
    /// dispatch's permit spinning counts until its first task ends (`end_spin`; a join's
    /// offer, until it starts). Relaxed: a hint; a stale one posts in vain (withdrawn
    /// after) or not at all (run inline).
    #[inline]
    pub(crate) fn idle(&self) -> Idle {
        self.idle_counting(0)
    }

    /// Who is idle for a join's offer: as [`idle`](Self::idle), and a joiner blocked for
    /// its taken half counts as asleep (an offer wakes it; a dispatch's permits do not).
    #[inline]
    pub(crate) fn idle_for_offers(&self) -> Idle {
        self.idle_counting(self.blocked_joiners.load(Ordering::Relaxed))
    }

    #[inline]
    fn idle_counting(&self, blocked_joiners: usize) -> Idle {
        if self.spinners.load(Ordering::Relaxed) + self.join_waiters.load(Ordering::Relaxed) > 0 {
            Idle::Spinning
        } else if self.sleepers.load(Ordering::Relaxed) + blocked_joiners > 0 {
            Idle::Sleeping
        } else {
            Idle::Nobody
        }
    }

    /// Counts a joiner that waits for its offer and takes others meanwhile (`true`), or
    /// stops (`false`). Relaxed: only `someone_idle`'s hint reads it.
    pub(crate) fn join_waiting(&self, waiting: bool) {
        if waiting {
            self.join_waiters.fetch_add(1, Ordering::Relaxed);
        } else {
            self.join_waiters.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A joinable permit taken (the first slot with one, from `cursor` on), and its task.
    pub(crate) fn take_joinable(&self, cursor: &mut usize) -> Option<(usize, usize)> {
        let n = self.slots.len();
        (0..n).find_map(|step| {
            let slot = (*cursor + step) % n;
            let task = self.slots[slot].try_attach_joinable()?;
            *cursor = (slot + 1) % n;
            Some((slot, task))
        })
    }

    /// Dispatch step 1 for tasks that may wait for each other: a free slot, waiting while
    /// every slot has a dispatch in flight (README "Sharing"). Each of those ends without
    /// this caller (their callers run their own tasks, and the caller here is in none of
    /// them: a caller inside a task never waits), so one comes free; the wait backs off
    /// from spinning to sleeps of 100 us, which a dispatch that found every slot taken
    /// may add to its start. The slow path of a dispatch whose `own_slot` found none.
    /// `reclaim` runs before each look: it may free slots this thread holds for its joins'
    /// offers (README "Joining"), which only this thread can free.
    #[cold]
    pub(crate) fn wait_for_slot(&self, reclaim: impl Fn()) -> usize {
        let mut round = 0;
        loop {
            reclaim();
            if let Some(slot) = self.own_slot() {
                return slot;
            }
            sync::back_off(round);
            round = round.saturating_add(1);
        }
    }

    /// Dispatch step 3: posts `permits` in `slot` for helpers up to `helper_limit` (the
    /// active ones when the dispatch read the widths, or fewer: `dispatch_with_worker`'s
    /// bound) and, if `wake`, wakes the sleeping helpers needed to take them beyond those
    /// already spinning. Returns whether helpers were asleep and left so (`wake` false):
    /// the caller may wake them later (`wake_late`).
    #[inline]
    pub(crate) fn post(&self, slot: usize, permits: u32, helper_limit: usize, wake: bool) -> bool {
        if permits == 0 {
            return false;
        }
        self.slots[slot].add_permits(permits, helper_limit);
        self.after_post(permits, helper_limit, wake)
    }

    /// `post`'s second half, once `permits` were added for helpers up to `helper_limit`
    /// (by `post`, or a scope's `Slot::add_permit_below`). A join's offer wakes a blocked
    /// joiner if there is one, standing or not (a blocked joiner is idle), and no helper.
    #[inline]
    pub(crate) fn after_post(&self, permits: u32, helper_limit: usize, wake: bool) -> bool {
        // SeqCst fence: pairs with the one in `sleep` (README "Falling asleep"): either we
        // count the sleeper, or its re-check sees our permits; and with the one in
        // `block_for_half`, for blocked joiners. With nobody asleep there is nobody to wake:
        // loads of lines that only falling asleep writes, so a post to spinning helpers stays
        // on the slot's line.
        fence(Ordering::SeqCst);
        if helper_limit & crate::slot::JOINABLE != 0
            && self.blocked_joiners.load(Ordering::Relaxed) > 0
        {
            self.wake_a_joiner();
            return false;
        }
        let sleepers = self.sleepers.load(Ordering::Relaxed);
        if sleepers > 0 && wake {
            // Below the active helpers, a spinner or a woken helper may be one the limit
            // refuses, and an active helper does not pass a wake-up on: wake every sleeper.
            let limit = helper_limit & !crate::slot::JOINABLE;
            let below_active = limit < self.active_helpers();
            let needed = if below_active { u32::MAX } else { permits };
            self.wake_sleepers(needed, sleepers, None, false);
        }
        sleepers > 0 && !wake
    }

    /// README "Waking late": wakes sleepers for the permits still posted in `slot`, after a
    /// `post` that left them asleep. Nothing waits on this wake-up (the caller runs every
    /// task nobody took), so a sleeper this misses costs only its share of the work.
    #[cold]
    #[inline(never)]
    /// `posted_ns` is when the permits were posted: a woken helper learns its idle gap up
    /// to then (not up to this wake-up, which would teach it to sleep through back-to-back
    /// regions), and the wake-up's latency from now. `stream`: woken for a stream of
    /// regions, the helpers forget the gap they slept through (README "Streams of short
    /// regions").
    pub(crate) fn wake_late(&self, slot: usize, posted_ns: u64, stream: bool) {
        let permits = self.slots[slot].state().permits;
        // Relaxed: a stale count wakes one helper too few or too many, never loses a task.
        let sleepers = self.sleepers.load(Ordering::Relaxed);
        if permits > 0 && sleepers > 0 {
            self.wake_sleepers(permits, sleepers, Some(posted_ns), stream);
        }
    }

    /// `post`'s slow path: wakes up to `sleepers` of the helpers asleep, as many as
    /// `permits` need beyond the spinners; `posted_ns` is when the permits were posted, if
    /// not now (a late wake-up); `stream`: for a stream of regions.
    #[cold]
    fn wake_sleepers(&self, permits: u32, sleepers: usize, posted_ns: Option<u64>, stream: bool) {
        // The fence in `post` pairs with the one in `begin_spinning` too: either we count the
        // spinner, or it sees our permits. And with the one in another caller's `post`, for
        // `callers_in_flight`.
        // Spinners take permits without a kernel wake-up, but only one caller may count on
        // them: with two in flight, both could count the same spinner (README "Sharing").
        let spinners = if self.limits.enabled() && self.callers_in_flight() == 1 {
            self.spinners.load(Ordering::Relaxed)
        } else {
            0
        };
        let wake = (permits as usize).saturating_sub(spinners).min(sleepers);
        if wake > 0 {
            let mut times = sync::lock(&self.lock);
            if self.limits.enabled() {
                let now = sync::now_ns();
                *times = WakeTimes {
                    posted_ns: posted_ns.unwrap_or(now),
                    woken_ns: now,
                    stream,
                };
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
        let _guard = if crate::broken::variant!("resize_unlocked") {
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

    /// The highest index of a helper that may take permits (1-based: 0, none).
    pub(crate) fn active_helpers(&self) -> usize {
        // Relaxed: a permit carries the limit its poster read (`Slot::try_attach`); where a
        // resize must be seen, a SeqCst fence orders it (`Scope::spawn`, `park`).
        self.active_helpers.load(Ordering::Relaxed)
    }

    /// Whether helper `index` (1-based) may take permits.
    fn is_active(&self, index: usize) -> bool {
        index <= self.active_helpers()
    }

    /// Parks helper `index` until it is active again (`None`), a letter waits in its
    /// mailbox `own`, or the pool shut down. A permit posted before the resize with a limit
    /// that admits the helper is taken first: a scope's task may wait for nobody else
    /// (README "Resizing").
    fn park(&self, index: usize, own: &Mailbox, cursor: &mut usize) -> Option<Wait> {
        let mut guard = sync::lock(&self.lock);
        loop {
            // Under the lock, which a broadcast takes to wake parked helpers after posting:
            // a letter posted before the pool narrowed is opened (README "Broadcasts").
            if own.has_mail() && !crate::broken::variant!("park_ignores_mail") {
                return Some(Wait::Mail);
            }
            if crate::broken::variant!("park_stops_unscanned") {
                // Deliberately broken: a parked helper stops before its scan.
                if let Some(stop) = self.shutdown_seen() {
                    return Some(stop);
                }
            }
            if self.is_active(index) {
                return None;
            }
            // SeqCst fence: pairs with the one after a scope's post (`Scope::spawn`): either
            // this scan sees its permit, or its spawn sees the resize and runs the task.
            fence(Ordering::SeqCst);
            if crate::broken::variant!("park_unscanned") {
                // Deliberately broken: a permit posted before the resize waits for ever.
            } else if let Some(wait) = self.scan(index, cursor, self.slots.len()) {
                return Some(wait);
            }
            // After the scan: a spawned task's permit posted before the resize, which only
            // this helper may take, runs before the pool stops (README "Spawns").
            if let Some(stop) = self.shutdown_seen() {
                return Some(stop);
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
    #[inline]
    pub(crate) fn withdraw(&self, slot: usize) -> u32 {
        if crate::broken::variant!("withdraw_all") {
            // Deliberately broken: clears every slot's permits, other dispatches' too.
            return self.slots.iter().map(Slot::withdraw).sum();
        }
        self.slots[slot].withdraw()
    }

    /// Helper step 4: detaches from the dispatch in `slot`; after this the helper must not
    /// touch it. Wakes that slot's caller if it sleeps.
    pub(crate) fn detach(&self, slot: usize) {
        self.slots[slot].detach();
        self.wake_owner(slot);
    }

    /// Wakes `slot`'s owner if it blocks in `wait_until` (README "Completion"), after a
    /// change it may wait for: a detach, or a task queued in its scope.
    pub(crate) fn wake_owner(&self, slot: usize) {
        let slot = &self.slots[slot];
        // SeqCst fence: pairs with the one in `block_until` (README "Completion").
        fence(Ordering::SeqCst);
        if slot.caller_sleeping().load(Ordering::Relaxed) {
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
    /// `left`: what the helper just detached from, if anything (see `begin_spinning`); after
    /// a join's offer it spins the whole window, whatever its gaps: a recursion offers its
    /// next halves within microseconds while a thread spins (README "Joining"), and an
    /// offer to a sleeper waits for the sleepers' pace and a kernel wake-up.
    pub(crate) fn wait_for_permit(
        &self,
        index: usize,
        own: &Mailbox,
        gaps: &mut Gaps,
        cursor: &mut usize,
        counters: &Counters,
        left: Left,
    ) -> Wait {
        let mut from_work = left != Left::Nothing;
        let mut whole_window = left == Left::JoinOffer;
        loop {
            if !self.is_active(index) {
                if let Some(wait) = self.park(index, own, cursor) {
                    return wait;
                }
                continue;
            }
            let window = if whole_window {
                self.spin_ceiling_ns()
            } else {
                gaps.window(self.limits, self.block_cost())
            };
            let mut spun = Spun::default();
            if window > 0 && self.begin_spinning(from_work) {
                let caught;
                let mut polls = 0u32;
                (caught, spun) = spin::spin_for(window, || {
                    polls = polls.wrapping_add(1);
                    self.poll(index, own, cursor, polls % POLLS_PER_JOIN_SLOTS_POLL == 0)
                });
                if let Some(Wait::Attached {
                    slot,
                    task,
                    joinable,
                    ..
                }) = caught
                {
                    // Its first task starts now; the spin's accounting waits for it.
                    let spun = Some(spun);
                    return Wait::Attached {
                        slot,
                        task,
                        joinable,
                        spun,
                    };
                }
                self.spinners.fetch_sub(1, Ordering::Relaxed);
                counters.spun(spun.spun_ns, false);
                if let Some(wait) = caught {
                    return wait;
                }
            }
            // The wait's start, for learning its gap: the spin's first reading, if any.
            let started = match spun.started_ns {
                0 => self.now_if_spinning(),
                started => started,
            };
            if let Some(wait) = self.sleep(index, own, started, gaps, cursor, counters) {
                return wait;
            }
            from_work = false;
            whole_window = false;
        }
    }

    /// After a permit caught while spinning (`Wait::Attached`'s `spun`), once the helper ran
    /// its first task: leaves the spinners, counts the spin, and learns its gap.
    pub(crate) fn end_spin(&self, spun: Spun, gaps: &mut Gaps, counters: &Counters) {
        self.spinners.fetch_sub(1, Ordering::Relaxed);
        counters.spun(spun.spun_ns, true);
        gaps.learn(spun.spun_ns, self.limits, self.block_cost());
    }

    /// A letter in helper `index`'s mailbox `own`; else a permit taken (the first slot with
    /// one, from `cursor` on; the slots kept for joins' offers only if `joins_too`) while
    /// the helper is active, or shutdown seen. The
    /// check here only saves a resized-away helper the scan: a stale reading of
    /// `active_helpers` cannot let it attach, since each slot's permits carry the limit
    /// their dispatch read (README "Resizing").
    fn poll(
        &self,
        index: usize,
        own: &Mailbox,
        cursor: &mut usize,
        joins_too: bool,
    ) -> Option<Wait> {
        if own.has_mail() {
            return Some(Wait::Mail);
        }
        let n = if !self.is_active(index) {
            0 // resized away: it parks at its next wait
        } else if joins_too {
            self.slots.len()
        } else {
            self.dispatch_slots
        };
        // A helper stops only after a scan of every slot found no permit: the spawned tasks
        // still queued, whose permits wait in the last slot, run first (README "Spawns").
        // One resized away scans nothing here, and stops in `park`, after its scan.
        let scanned_all = joins_too && n > 0;
        // Deliberately broken: a spin's poll of the dispatches' slots alone stops it.
        let scanned_all = scanned_all || crate::broken::variant!("stop_before_scan");
        self.scan(index, cursor, n)
            .or_else(|| scanned_all.then(|| self.shutdown_seen()).flatten())
    }

    /// A permit of the first `n` slots taken by helper `index`, from `cursor` on.
    fn scan(&self, index: usize, cursor: &mut usize, n: usize) -> Option<Wait> {
        for step in 0..n {
            let slot = (*cursor + step) % n;
            if let Some((task, joinable)) = self.slots[slot].try_attach(index) {
                *cursor = (slot + 1) % n;
                let spun = None;
                return Some(Wait::Attached {
                    slot,
                    task,
                    joinable,
                    spun,
                });
            }
        }
        None
    }

    /// `Wait::Shutdown` if the pool is shutting down.
    fn shutdown_seen(&self) -> Option<Wait> {
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

    /// The longest any waiter spins now: `spin_us`, at most a kernel wake-up's cost; 0 when
    /// nothing spins (README "Spinning").
    pub(crate) fn spin_ceiling_ns(&self) -> u64 {
        self.limits.window_limit(self.block_cost())
    }

    /// What a kernel wake-up costs here, as measured (before any: the unmeasured bound).
    pub(crate) fn block_cost(&self) -> u64 {
        self.block_cost_ns.load(Ordering::Relaxed)
    }

    /// Becomes one of the spinners, unless spinners, helpers at work and callers in flight
    /// (at least one: the program's own thread) already fill the policy's CPUs (README
    /// "Spinning": spinners never take a core from work). A helper `from_work` (it just
    /// detached) only moves its own core from work to waiting, and skips the count, which
    /// would read every slot's lines.
    fn begin_spinning(&self, from_work: bool) -> bool {
        if from_work {
            self.spinners.fetch_add(1, Ordering::Relaxed);
        } else if !self.spin_budget_allows() {
            return false;
        }
        // SeqCst fence: pairs with the one in `post`: a caller that counted us as spinning
        // (and woke one sleeper fewer) posted before our first poll, which sees its permits.
        fence(Ordering::SeqCst);
        true
    }

    /// `begin_spinning`'s count: joins the spinners if the budget has room.
    fn spin_budget_allows(&self) -> bool {
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
                Ok(_) => return true,
                Err(now) => spinning = now,
            }
        }
    }

    /// README "Falling asleep": announces the sleeper, re-checks under the lock, and blocks
    /// until one kernel wake-up. `None` when that wake-up found no permit: the helper then
    /// decides afresh whether to spin, having learned the gap it slept through.
    fn sleep(
        &self,
        index: usize,
        own: &Mailbox,
        started: u64,
        gaps: &mut Gaps,
        cursor: &mut usize,
        counters: &Counters,
    ) -> Option<Wait> {
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `post`
        let mut guard = sync::lock(&self.lock);
        let outcome = if crate::broken::variant!("spin_without_recheck") && started > 0 {
            None // deliberately broken: after a spin, blocks without looking for a permit
        } else {
            self.poll(index, own, cursor, true)
        };
        let outcome = match outcome {
            Some(wait) => {
                if self.limits.enabled() {
                    let waited = sync::now_ns().saturating_sub(started);
                    gaps.learn(waited, self.limits, self.block_cost());
                }
                Some(wait)
            }
            // Resized away: park instead (a post that counted it wakes a waiting one).
            None if !self.is_active(index) => None,
            None => {
                guard = self.helpers.wait(guard).unwrap_or_else(|p| p.into_inner());
                Counters::bump(&counters.kernel_wakeups);
                let woke = self.poll(index, own, cursor, true);
                if woke.is_none() {
                    Counters::bump(&counters.empty_wakes);
                    if !self.is_active(index) && self.any_permits() {
                        // A post counted this resized-away helper as a sleeper: pass the
                        // wake-up on to one that may take the permit (README "Resizing").
                        self.helpers.notify_one();
                    }
                }
                let WakeTimes {
                    posted_ns,
                    woken_ns,
                    stream,
                } = *guard;
                if self.limits.enabled() && woken_ns >= started {
                    self.learn_block_cost(sync::now_ns().saturating_sub(woken_ns));
                    if stream {
                        *gaps = Gaps::default(); // regions come back to back now
                    } else {
                        let slept = posted_ns.saturating_sub(started);
                        gaps.learn(slept, self.limits, self.block_cost());
                    }
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

    /// Dispatch step 6: spins for a learned window, then blocks, until no helper is attached
    /// to `slot`. Call after `withdraw`, so `attached` can only fall.
    #[inline(always)]
    pub(crate) fn wait_until_quiet(&self, slot: usize, counters: &Counters) {
        let owned = &self.slots[slot];
        self.wait_until(slot, counters, || owned.is_quiet());
    }

    /// As `wait_until_quiet`, until `done()`, which only detaches from `slot` and what
    /// `wake_owner` follows make true (a scope's owner: quiet, or a task queued).
    #[inline]
    pub(crate) fn wait_until(&self, slot: usize, counters: &Counters, done: impl Fn() -> bool) {
        if !done() {
            self.wait_for_quiet(&self.slots[slot], counters, done);
        }
    }

    /// `wait_until`'s slow path: a helper is still inside the dispatch.
    #[cold]
    #[inline(never)]
    fn wait_for_quiet(&self, slot: &Slot, counters: &Counters, quiet: impl Fn() -> bool) {
        let mut gaps = Gaps::from_bits(slot.caller_gaps.load(Ordering::Relaxed));
        let window = gaps.window(self.limits, self.block_cost());
        let (caught, spun) = if window > 0 {
            let (caught, spun) = spin::spin_for(window, || quiet().then_some(()));
            counters.spun(spun.spun_ns, caught.is_some());
            (caught.is_some(), spun)
        } else {
            (false, Spun::default())
        };
        let waited = if caught {
            spun.spun_ns
        } else {
            // From the spin's first reading of the clock, if it read it.
            let started = match spun.started_ns {
                0 => self.now_if_spinning(),
                started => started,
            };
            let woken = self.block_until(slot, &quiet, counters);
            woken
                .unwrap_or_else(|| self.now_if_spinning())
                .saturating_sub(started)
        };
        if self.limits.enabled() {
            gaps.learn(waited, self.limits, self.block_cost());
            slot.caller_gaps.store(gaps.to_bits(), Ordering::Relaxed);
        }
    }

    /// README "Completion": blocks until `quiet()`, opening the letters left for this
    /// thread meanwhile if it is a helper (README "Broadcasts"); returns when the helper
    /// that woke the caller detached (or a spawn woke it), if it blocked at all.
    fn block_until(
        &self,
        slot: &Slot,
        quiet: &dyn Fn() -> bool,
        counters: &Counters,
    ) -> Option<u64> {
        let own = mail::own();
        mail::registered(own.as_deref(), self, || {
            self.block_until_registered(slot, quiet, counters, own.as_deref())
        })
    }

    /// `block_until`, its wait registered in `own`, this helper's mailbox, if any.
    fn block_until_registered(
        &self,
        slot: &Slot,
        quiet: &dyn Fn() -> bool,
        counters: &Counters,
        own: Option<&Mailbox>,
    ) -> Option<u64> {
        slot.caller_sleeping().store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst); // pairs with the fence in `wake_owner`
        let mut guard = sync::lock(&self.lock);
        let mut blocked = false;
        while !quiet() {
            // Under the lock, which a post to this helper takes to wake it here.
            if let Some(own) = own.filter(|own| own.has_mail()) {
                drop(guard);
                own.open_all();
                guard = sync::lock(&self.lock);
                continue;
            }
            guard = slot.caller.wait(guard).unwrap_or_else(|p| p.into_inner());
            Counters::bump(&counters.kernel_wakeups);
            blocked = true;
        }
        drop(guard);
        slot.caller_sleeping().store(false, Ordering::Relaxed);
        blocked.then(|| slot.detached_ns.load(Ordering::Relaxed))
    }

    /// `after_post`'s path to a blocked joiner: wakes the first one, if any is still blocked.
    #[cold]
    #[inline(never)]
    fn wake_a_joiner(&self) {
        let _guard = sync::lock(&self.lock);
        // Relaxed: written under this lock.
        if let Some(slot) = self
            .slots
            .iter()
            .find(|slot| slot.joiner_blocked.load(Ordering::Relaxed))
        {
            slot.caller.notify_one();
        }
    }

    /// A joiner whose offered half was taken, in `slot` (withdrawn): blocks until the
    /// half's taker detached (`None`) or until it takes a join's offer posted meanwhile, in
    /// another slot from `cursor` on (README "Joining"): its slot and task.
    pub(crate) fn block_for_half(
        &self,
        slot: usize,
        cursor: &mut usize,
        counters: &Counters,
    ) -> Option<(usize, usize)> {
        let own = mail::own();
        loop {
            let outcome = mail::registered(own.as_deref(), self, || {
                self.block_for_half_until_mail(slot, cursor, counters, own.as_deref())
            });
            if let Some(outcome) = outcome {
                return outcome;
            }
            // Left for a letter: only a helper, with a mailbox, leaves.
            if let Some(own) = &own {
                own.open_all();
            }
        }
    }

    /// `block_for_half`, until a letter waits in `own`, this helper's mailbox: `None` then,
    /// unblocked (README "Broadcasts").
    fn block_for_half_until_mail(
        &self,
        slot: usize,
        cursor: &mut usize,
        counters: &Counters,
        own: Option<&Mailbox>,
    ) -> Option<Option<(usize, usize)>> {
        let owned = &self.slots[slot];
        owned.caller_sleeping().store(true, Ordering::Relaxed);
        self.blocked_joiners.fetch_add(1, Ordering::Relaxed);
        // SeqCst fence: pairs with the ones in `wake_owner` (a detach) and `after_post` (an
        // offer): either they see this joiner blocked, or its checks below see their change.
        fence(Ordering::SeqCst);
        let mut guard = sync::lock(&self.lock);
        owned.joiner_blocked.store(true, Ordering::Relaxed);
        let mut checks = !crate::broken::variant!("joiner_blocks_unchecked");
        let taken = loop {
            if checks {
                if owned.is_quiet() {
                    break Some(None);
                }
                if let Some(taken) = self.take_joinable(cursor) {
                    break Some(Some(taken));
                }
                // Under the lock, which a post to this helper takes to wake it here.
                if own.is_some_and(Mailbox::has_mail) {
                    break None;
                }
            }
            checks = true;
            guard = owned.caller.wait(guard).unwrap_or_else(|p| p.into_inner());
            Counters::bump(&counters.kernel_wakeups);
        };
        owned.joiner_blocked.store(false, Ordering::Relaxed);
        self.blocked_joiners.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
        owned.caller_sleeping().store(false, Ordering::Relaxed);
        taken
    }

    /// Wakes every helper asleep or parked: letters wait in their mailboxes (README
    /// "Broadcasts"). Each reads its mailbox under this lock before it blocks, after the
    /// letters were posted. (A helper blocked in a dispatch's or a join's wait is woken by
    /// the post itself: `Waiters`.)
    pub(crate) fn wake_all(&self) {
        let _guard = sync::lock(&self.lock);
        if crate::broken::variant!("mail_unwoken") {
            return; // deliberately broken: a helper asleep never reads its letter
        }
        self.helpers.notify_all();
        self.parked.notify_all();
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

impl Waiters for Signal {
    /// Wakes the threads blocked in `block_until` and `block_for_half`, under the lock they
    /// read their mailboxes under.
    fn wake_waiters(&self) {
        let _guard = sync::lock(&self.lock);
        for slot in self.slots.iter() {
            slot.caller.notify_all();
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn joins_own_their_kept_slots_first_and_dispatches_never_own_them() {
        let limits = SpinLimits {
            ceiling_ns: 0,
            cpus: 1,
        };
        let slots = SlotCounts {
            dispatches: 2,
            joins: 2,
            spawn: true,
        };
        let signal = Signal::new(limits, slots, 1);
        assert_eq!(signal.spawn_slot(), Some(4), "after the kept ones");
        assert_eq!(signal.own_join_slot(), Some(2), "a kept slot first");
        assert_eq!(signal.own_slot(), Some(0));
        assert_eq!(signal.own_join_slot(), Some(3));
        assert_eq!(signal.own_join_slot(), Some(1), "then a dispatches' one");
        assert_eq!(signal.own_join_slot(), None);
        signal.slot(3).release();
        assert_eq!(signal.own_slot(), None, "a dispatch never owns a kept slot");
        assert_eq!(signal.own_join_slot(), Some(3));
        signal.slot(1).release();
        assert_eq!(signal.own_join_slot(), Some(1));
        assert_eq!(signal.own_join_slot(), None, "nobody owns the spawns' slot");
        assert_eq!(signal.own_slot(), None);
    }
}
