//! `join`: runs two closures, offering the second to other participants of the pool
//! (README "Joining"). A join pushes a frame for its second half on the thread's join
//! stack, runs the first half, pops the frame, and runs the second half itself unless
//! another thread took it. While a participant is idle, or standing while none is, a join
//! offers the oldest frame of its thread's stack not offered yet (the largest work left),
//! one offer per join at most, as a region of two tasks in a free slot: task 1 is the
//! half, posted with one joinable permit; task 0, the first half, is already running on
//! the joiner.

use crate::fork;
use crate::in_task::{as_task, in_task};
use crate::job::{Job, Liveness, RunRange};
use crate::offering::{self, Idle};
use crate::panics::Panics;
use crate::shared::Shared;
use crate::slot::JOINABLE;
use crate::spin;
use crate::sync::{self, UnsafeCell};
use crate::tasks::{self, Participant, Tasks};
use crate::unwind::{self, AbortOnUnwind};
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::thread::Result as Outcome;

/// Frames this deep or deeper in a thread's join stack are never offered: the oldest ones
/// hold the most work, and a bounded stack needs no allocation.
const MAX_FRAMES: usize = 32;

/// Runs `a` and `b`, `b` possibly on another thread of `shared`'s pool, and returns both
/// results. A panic in either resumes here once both halves finished (`a`'s if both
/// panicked).
pub(crate) fn join_in<A, B, RA, RB>(shared: &Shared, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    // Never dropped: it holds nothing once its outcome is taken, and in a child forked from
    // inside `a` the parent's taker may have left it half-written (`Frame::finish`).
    let half = ManuallyDrop::new(Half {
        run: UnsafeCell::new(Some(b)),
        outcome: UnsafeCell::new(None),
    });
    let frame = Frame {
        shared,
        run: tasks::run_erased::<Half<B, RB>>,
        data: (&*half as *const Half<B, RB>).cast(),
        alive: Liveness::new(),
        offer: Cell::new(Offer::NotYet),
    };
    STACK.with(|stack| {
        stack.push(&frame);
        if stack.look_now() || stack.starts_a_recursion_again() {
            stack.offer_oldest();
        }
    });
    // If `a` unwinds, the half still runs (or is waited for) before the panic goes on.
    let unwinding = EndOnUnwind {
        frame: &frame,
        half: &half,
    };
    let first = a();
    std::mem::forget(unwinding);
    STACK.with(|stack| stack.pop(&frame));
    if frame.offer.get() == Offer::NotYet {
        // Never offered: the half is a plain call here, its panic unwinding as any.
        return (first, half.take_run()());
    }
    frame.finish(&*half);
    match half.take_outcome() {
        Ok(second) => (first, second),
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// Ends a join whose first half unwound: pops its frame and runs its second half (or waits
/// for its taker), discarding the half's own panic; the first half's goes on.
struct EndOnUnwind<'a, 'f, B: FnOnce() -> RB + Send, RB: Send> {
    frame: &'a Frame<'f>,
    half: &'a Half<B, RB>,
}

impl<B: FnOnce() -> RB + Send, RB: Send> Drop for EndOnUnwind<'_, '_, B, RB> {
    fn drop(&mut self) {
        STACK.with(|stack| stack.pop(self.frame));
        // A second panic here would abort: `finish`'s own (in a forked child) is dropped.
        match panic::catch_unwind(AssertUnwindSafe(|| self.frame.finish(self.half))) {
            Ok(()) => {
                if let Err(discarded) = self.half.take_outcome() {
                    unwind::discard(discarded);
                }
            }
            Err(discarded) => unwind::discard(discarded),
        }
    }
}

/// A join's second half and its outcome: task 1 of the region that offers it.
///
/// # Safety
/// The half runs once, on one thread: the helper or joiner that took its permit, or the
/// joiner that withdrew the permit or never offered it; `outcome` is read after it ran.
struct Half<B, RB> {
    run: UnsafeCell<Option<B>>,
    outcome: UnsafeCell<Option<Outcome<RB>>>,
}

// SAFETY: one thread at a time touches the half (struct `# Safety`), moved there once,
// which `B: Send` and `RB: Send` allow.
unsafe impl<B: Send, RB: Send> Sync for Half<B, RB> {}

impl<B: FnOnce() -> RB + Send, RB: Send> Half<B, RB> {
    /// The half's closure, taken out to run.
    fn take_run(&self) -> B {
        let run = self.run.with_mut(|run| {
            // SAFETY: only the one thread running the half touches it (struct `# Safety`).
            unsafe { (*run).take() }
        });
        run.expect("a join's second half runs once")
    }

    /// The outcome of the half, which ran (`Frame::finish`) and nobody touches any more.
    fn take_outcome(&self) -> Outcome<RB> {
        let outcome = self.outcome.with_mut(|outcome| {
            // SAFETY: as `take_run`: the half ran, and only this thread reads it now.
            unsafe { (*outcome).take() }
        });
        outcome.expect("a finished join's second half has an outcome")
    }

    /// Runs the half, catching its panic into the outcome.
    fn run_once(&self) {
        let run = self.take_run();
        let outcome = panic::catch_unwind(AssertUnwindSafe(run));
        // SAFETY: as above.
        self.outcome
            .with_mut(|slot| unsafe { *slot = Some(outcome) });
    }
}

impl<B: FnOnce() -> RB + Send, RB: Send> Tasks for Half<B, RB> {
    /// Runs the half on its taker (the joiner runs its own by `run_once`).
    fn run(&self, _who: Participant, _tasks: Range<usize>, _panics: &Panics) {
        let before = STACK.with(Stack::start_taken_half);
        self.run_once();
        STACK.with(|stack| stack.end_taken_half(before));
    }
}

/// Where a frame's half stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Offer {
    /// Not offered (or withdrawn untaken by `reclaim_offers`): the joiner runs it.
    NotYet,
    /// Offered in this slot of the frame's pool, which the joiner owns.
    Posted { slot: usize },
    /// Offered, taken, run and its slot freed (`Stack::free_offers`).
    Done,
}

/// One join in progress, on its joiner's stack, as the thread's join stack records it.
struct Frame<'a> {
    shared: &'a Shared,
    /// The half, erased, as a region's job runs it.
    run: RunRange,
    data: *const (),
    alive: Liveness,
    offer: Cell<Offer>,
}

impl Frame<'_> {
    /// After the first half: the second one has run when this returns, wherever it ran.
    fn finish<B: FnOnce() -> RB + Send, RB: Send>(&self, half: &Half<B, RB>) {
        let slot = match self.offer.get() {
            Offer::NotYet => return half.run_once(),
            Offer::Done => return,
            Offer::Posted { slot } => slot,
        };
        // Nothing from here to quiet may unwind: a taker holds pointers into this frame.
        let guard = AbortOnUnwind("a join between its offer and the half's end");
        let signal = &self.shared.signal;
        let untaken = signal.withdraw(slot);
        if self.shared.generation != fork::generation() {
            // A fork from inside the first half, and this is the child: the crew's helpers
            // do not exist here. Its slot is abandoned with the crew (README "Fork").
            guard.disarm();
            if untaken == 0 {
                // The half ran, or was running, in the parent: it may have been halfway
                // through writing what the caller's frames own (through a `&mut` it
                // borrowed), so the child must not unwind into them.
                fork::abort_child("join");
            }
            return half.run_once();
        }
        if untaken == 1 {
            half.run_once();
        } else {
            STACK.with(Stack::taken);
            if !crate::broken::variant!("join_skip_wait") {
                wait_for_half(self.shared, slot);
            }
        }
        guard.disarm();
        self.alive.end();
        signal.slot(slot).release();
    }
}

/// Waits until the taker of the half offered in `slot` detached, taking other joiners'
/// offers meanwhile (their tasks are independent of this one): spinning for as long as a
/// helper would (at most a kernel wake-up's cost; never with `spin_us = 0`), counted as a
/// join waiter; then blocked, counted as idle, until the taker detaches or an offer wakes
/// it. A spin per offer taken: each one's window starts when it ran. While it runs, this
/// thread is busy, not a waiter for other joins to offer to.
fn wait_for_half(shared: &Shared, slot: usize) {
    let signal = &shared.signal;
    let offered = signal.slot(slot);
    let window = signal.spin_ceiling_ns();
    let mut cursor = slot + 1;
    loop {
        let mut taken = None;
        if window > 0 {
            signal.join_waiting(true);
            taken = spin::spin_for(window, || {
                if offered.is_quiet() {
                    Some(None)
                } else {
                    signal.take_joinable(&mut cursor).map(Some)
                }
            })
            .0;
            signal.join_waiting(false);
        }
        let (other, task) = match taken {
            Some(Some(other)) => other,
            Some(None) => return,
            None => match signal.block_for_half(slot, &mut cursor, shared.counters.callers()) {
                Some(other) => other,
                None => return,
            },
        };
        run_taken(shared, other, task);
    }
}

/// Runs task `task` of the joinable offer in `slot`, whose permit this thread took, and
/// detaches.
fn run_taken(shared: &Shared, slot: usize, task: usize) {
    let taken = shared.signal.slot(slot);
    // The job is live: attached, its joiner waits for this thread's detach (`Job`'s
    // `# Safety`).
    let job = taken.job();
    let who = Participant {
        rank: task,
        worker: 0,
    };
    // A join's job has no homes (`Job::erased`): the rank is the task.
    as_task(|| job.run(who, task..task + 1, &taken.panics));
    if shared.generation != fork::generation() {
        // The half forked, and this is the child: its joiner, and whatever this thread
        // waits for, are the parent's; the detach may wait for a lock a parent's thread
        // held. Its joiner's data may be half-written.
        fork::abort_child("join");
    }
    shared.signal.detach(slot);
}

/// A thread's joins in progress, innermost last: the first `MAX_FRAMES` recorded.
///
/// # Safety
/// `frames[k]` for `k < min(depth, MAX_FRAMES)` points to a live frame of this thread (its
/// join pops it before returning). Frames below `offered` are not offered again: posted,
/// done, or withdrawn by `reclaim_offers` (then not yet offered, and run by their joiner).
struct Stack {
    depth: Cell<usize>,
    offered: Cell<usize>,
    frames: [Cell<*const Frame<'static>>; MAX_FRAMES],
    /// Joins until the next look for idle threads (`offering.rs`).
    joins_to_look: Cell<u32>,
    /// Whether a join ran inside another since this thread's last outermost join outside
    /// any task: its last one was a recursion.
    recursed: Cell<bool>,
    /// Joins between looks, paced by how far apart this thread's joins come.
    joins_per_look: Cell<u32>,
    /// The clock at the last look that found a thread idle (0: none yet), and the looks
    /// since: the joins between them, about `joins_per_look` each, set the pace.
    idle_look_ns: Cell<u64>,
    looks_since_idle: Cell<u32>,
    /// Joins the looks since then did not wait for: a look brought forward (`look_next`)
    /// skips the rest of its count.
    joins_skipped: Cell<u32>,
    /// The clock before which no offer goes out (`offering::interval_ns` after the last).
    next_offer_ns: Cell<u64>,
    /// The oldest frame not offered at the last look while nobody was idle (`NO_FRAME`
    /// once a pop ended it): found again at the next look, it outlived a look interval and
    /// is offered standing (`offer_oldest`).
    candidate: Cell<usize>,
}

/// `Stack::candidate` when no frame is one.
const NO_FRAME: usize = usize::MAX;

sync::const_thread_local! {
    static STACK: Stack = Stack::new();
}

impl Stack {
    const fn new() -> Stack {
        Stack {
            depth: Cell::new(0),
            offered: Cell::new(0),
            frames: [const { Cell::new(std::ptr::null()) }; MAX_FRAMES],
            joins_to_look: Cell::new(0),
            recursed: Cell::new(false),
            joins_per_look: Cell::new(offering::JOINS_PER_LOOK),
            idle_look_ns: Cell::new(0),
            looks_since_idle: Cell::new(0),
            joins_skipped: Cell::new(0),
            next_offer_ns: Cell::new(0),
            candidate: Cell::new(NO_FRAME),
        }
    }

    /// Counts a join; whether it is time to look for idle threads.
    #[inline]
    fn look_now(&self) -> bool {
        match self.joins_to_look.get() {
            0 => {
                self.joins_to_look.set(self.joins_per_look.get() - 1);
                true
            }
            left => {
                self.joins_to_look.set(left - 1);
                false
            }
        }
    }

    /// A half taken from another thread starts on this one: its first join looks, and
    /// finding nobody idle offers its frame standing at once if that is the oldest frame
    /// not offered (every older one of this thread's offered already, as a joiner's
    /// waiting for its own half are), not after it outlived a look: the joiner it was
    /// taken from runs out of work about when its own first half ends, and would otherwise
    /// wait for this thread's second look, sixteen joins on (a part of a few leaves may
    /// have fewer). Returns the candidate it replaced.
    fn start_taken_half(&self) -> usize {
        self.look_next();
        self.candidate.replace(self.depth.get())
    }

    /// The taken half started by `start_taken_half` ended: its frames are popped, and the
    /// candidate this thread had before it (if it waited for a half of its own) is back.
    fn end_taken_half(&self, candidate: usize) {
        self.candidate.set(candidate);
    }

    /// A half this thread offered was taken: look again at the next join, and offer then if
    /// a thread is idle (the interval bounds offers in vain, and this one was not).
    fn taken(&self) {
        self.look_next();
        self.next_offer_ns.set(0);
    }

    /// Makes the next join look, whatever its count, and notes the joins skipped so for
    /// the pace (`pace_looks`).
    fn look_next(&self) {
        let skipped = self.joins_to_look.replace(0);
        self.joins_skipped
            .set(self.joins_skipped.get().saturating_add(skipped));
    }

    #[inline]
    fn push(&self, frame: &Frame<'_>) {
        let depth = self.depth.get();
        if depth < MAX_FRAMES {
            // The lifetime is erased: the frame is popped before its join returns.
            self.frames[depth].set((frame as *const Frame<'_>).cast());
        }
        if depth > 0 {
            self.recursed.set(true);
        }
        self.depth.set(depth + 1);
    }

    /// Whether the join just pushed is the outermost, on a thread outside any task (a
    /// program's, not a helper's piece of another thread's recursion), after one that
    /// recursed: likely the top of another recursion (a sort after a sort), worth offering
    /// at once, not when the count of joins since the last look, which the last recursion
    /// left anywhere up to sixteen, runs out a cut and leaves later (in a probe, the second
    /// of eight 1e7 sorts offered its top half 21 ms late so).
    #[inline]
    fn starts_a_recursion_again(&self) -> bool {
        if self.depth.get() == 1 && self.recursed.get() && !in_task() {
            self.recursed.set(false);
            return true;
        }
        false
    }

    #[inline]
    fn pop(&self, frame: &Frame<'_>) {
        let depth = self.depth.get() - 1;
        debug_assert!(
            depth >= MAX_FRAMES || std::ptr::eq(self.frames[depth].get().cast(), frame),
            "join frames popped out of order"
        );
        self.depth.set(depth);
        self.offered.set(self.offered.get().min(depth));
        if depth <= self.candidate.get() {
            self.candidate.set(NO_FRAME);
        }
    }

    /// The frame at `index`, which is live (struct `# Safety`).
    #[inline]
    fn frame(&self, index: usize) -> &Frame<'_> {
        // SAFETY: `index` is below the recorded depth (callers' check); see `# Safety`.
        unsafe { &*self.frames[index].get() }
    }

    /// Offers the oldest frame not offered yet, if a slot is free (freeing the slots of
    /// its offers that ran, if none is): waking a thread for it if one is idle and the
    /// last offer is far enough back (`offering.rs`); standing, waking nobody, if nobody
    /// is idle, the frame was the oldest not offered at the last look that found nobody
    /// idle too, and this thread's newest offer does not wait untaken. A thread that runs
    /// out of work takes a standing offer at once, as rayon's thieves steal the oldest
    /// job, instead of waiting for this thread's next look.
    #[inline]
    fn offer_oldest(&self) {
        let index = self.offered.get();
        if index >= self.depth.get().min(MAX_FRAMES) {
            return;
        }
        let frame = self.frame(index);
        let shared = frame.shared;
        let signal = &shared.signal;
        let idle = signal.idle_for_offers();
        self.looks_since_idle
            .set(self.looks_since_idle.get().saturating_add(1));
        // When the next offer that wakes a thread may go out; none for a standing offer.
        let next_offer_ns = match offering::interval_ns(idle, signal.block_cost()) {
            Some(interval) => {
                let now = sync::now_ns();
                self.pace_looks(idle, now);
                if now < self.next_offer_ns.get() {
                    return;
                }
                Some(now + interval)
            }
            None => {
                let outlived = self.candidate.replace(index) == index;
                if !outlived || shared.serving_width() < 2 || self.offer_waits(index) {
                    return;
                }
                None
            }
        };
        if shared.generation != fork::generation() {
            return;
        }
        let Some(slot) = signal
            .own_join_slot()
            .or_else(|| self.free_offers(shared, false))
        else {
            return;
        };
        if let Some(next) = next_offer_ns {
            self.next_offer_ns.set(next);
        }
        let job = Job::erased(frame.run, frame.data, 2, 2, &frame.alive);
        let owned = signal.slot(slot);
        owned.publish(&job);
        frame.offer.set(Offer::Posted { slot });
        self.offered.set(index + 1);
        let helper_limit = (shared.width() - 1) | JOINABLE;
        signal.post(slot, 1, helper_limit, next_offer_ns.is_some());
    }

    /// Whether this thread's newest offer, below frame `index`, still waits untaken.
    fn offer_waits(&self, index: usize) -> bool {
        let Some(newest) = index.checked_sub(1) else {
            return false;
        };
        let frame = self.frame(newest);
        match frame.offer.get() {
            Offer::Posted { slot } => frame.shared.signal.slot(slot).state().permits > 0,
            Offer::NotYet | Offer::Done => false,
        }
    }

    /// At a look that found `idle` threads at `now`: from how far apart the joins since the
    /// last such look came, how many joins to the next look (`offering::joins_per_look`).
    fn pace_looks(&self, idle: Idle, now: u64) {
        let last = self.idle_look_ns.replace(now);
        let looks = self.looks_since_idle.replace(0);
        let skipped = self.joins_skipped.replace(0);
        if last == 0 {
            return;
        }
        let per_look = self.joins_per_look.get();
        let joins = (u64::from(looks) * u64::from(per_look)).saturating_sub(u64::from(skipped));
        let per_join = now.saturating_sub(last) / joins.max(1);
        let pace = offering::joins_per_look(idle, per_join);
        if pace != per_look {
            self.joins_per_look.set(pace);
            self.joins_to_look.set(pace - 1);
        }
    }

    /// Frees the slots of this thread's offers to `shared`'s pool that were taken and ran
    /// and, with `withdraw_untaken`, of those nobody took yet (their halves then run on
    /// this thread, at their pops). Returns the first slot freed, still owned; releases
    /// the others.
    fn free_offers(&self, shared: &Shared, withdraw_untaken: bool) -> Option<usize> {
        let mut kept = None;
        for index in 0..self.offered.get() {
            let frame = self.frame(index);
            let Offer::Posted { slot } = frame.offer.get() else {
                continue;
            };
            if !std::ptr::eq(frame.shared, shared) {
                continue;
            }
            let owned = shared.signal.slot(slot);
            if owned.offer_done() {
                self.taken();
                frame.offer.set(Offer::Done);
            } else if withdraw_untaken && shared.signal.withdraw(slot) == 1 {
                frame.offer.set(Offer::NotYet);
            } else {
                continue; // not taken, or taken and running: its taker ends it
            }
            // Nobody touches the frame's half through the slot again.
            frame.alive.end();
            shared.signal.withdraw(slot);
            match kept {
                None => kept = Some(slot),
                Some(_) => owned.release(),
            }
        }
        kept
    }
}

/// Makes this thread's next join look for idle threads (`offering.rs`), whatever the count
/// of joins to its next look: for joins a long piece of work apart, where that count (made
/// for joins nanoseconds apart) could let another thread idle through several pieces.
pub(crate) fn look_at_next_join() {
    STACK.with(Stack::look_next);
}

/// Frees the slots this thread holds for its joins' offers to `shared`'s pool that it can:
/// those taken and run, and those not taken (withdrawn: the joiner runs the half itself).
/// A dispatch waiting for a slot calls it: only this thread can free them, and its joins
/// cannot end while it waits.
pub(crate) fn reclaim_offers(shared: &Shared) {
    if let Some(slot) = STACK.with(|stack| stack.free_offers(shared, true)) {
        shared.signal.slot(slot).release();
    }
}

/// Takes another thread's join offer to `shared`'s pool, if one is posted, and runs its
/// half: a dispatch waiting for a slot is idle, and an offer (a standing one above all)
/// holds a slot that only its joiner frees, at its pop. Whether it ran one.
pub(crate) fn run_an_offer(shared: &Shared) -> bool {
    if shared.generation != fork::generation() {
        return false; // a forked child: the parent's joiners do not exist here
    }
    let mut cursor = 0;
    let taken = shared.signal.take_joinable(&mut cursor);
    if let Some((slot, task)) = taken {
        run_taken(shared, slot, task);
    }
    taken.is_some()
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use crate::current;
    use crate::offering::Idle;
    use crate::Pool;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::ThreadId;
    use std::time::{Duration, Instant};

    /// The pool's idle state as this thread's joins see it.
    fn idle_now() -> Idle {
        current::map(|shared| shared.expect("inside install").signal.idle_for_offers())
    }

    /// Spins until `flag` is set, at most `limit`; whether it was set. Acquire: pairs
    /// with the tests' Release stores of the flag.
    fn wait_for(flag: &AtomicBool, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while !flag.load(Ordering::Acquire) {
            if Instant::now() > deadline {
                return false;
            }
            std::hint::spin_loop();
        }
        true
    }

    /// A join whose second half, if another thread takes it, waits until the first half
    /// looked at the pool's idle state: what it saw, if the half was taken.
    fn idle_seen_while_a_half_runs_elsewhere() -> Option<Idle> {
        let (half_started, looked) = (AtomicBool::new(false), AtomicBool::new(false));
        let (seen, ()) = crate::join(
            || {
                let seen = wait_for(&half_started, Duration::from_millis(20)).then(idle_now);
                looked.store(true, Ordering::Release);
                seen
            },
            || {
                half_started.store(true, Ordering::Release);
                wait_for(&looked, Duration::from_secs(10));
            },
        );
        seen
    }

    #[test]
    fn a_helper_running_an_offered_half_is_not_idle() {
        // One helper. After running a half it spins, and takes the next join's half
        // spinning: the first half, still running here, must see nobody idle (a helper
        // counted among the spinners all along made other joins offer to it in vain).
        let pool = Pool::builder().workers(2).spin_us(10_000).build().unwrap();
        let mut taken = 0;
        for _ in 0..50 {
            pool.install(|| {
                for _ in 0..2 {
                    // Past the helper's detach from the last half, into its spin.
                    let settled = Instant::now() + Duration::from_micros(5);
                    while Instant::now() < settled {
                        std::hint::spin_loop();
                    }
                    if let Some(idle) = idle_seen_while_a_half_runs_elsewhere() {
                        assert_eq!(
                            idle,
                            Idle::Nobody,
                            "the helper running a half counts as idle"
                        );
                        taken += 1;
                    }
                }
            });
        }
        assert!(taken > 0, "no half was taken in 100 joins");
    }

    /// In `pool` (one helper), with the helper held in an outer join's half: a join whose
    /// first half makes joins enough for its frame to be offered standing (their looks
    /// find nobody idle), sets `posted`, and then, making no join, waits at most 2 s for
    /// the half to run elsewhere. The helper is let go before that wait if
    /// `release_helper_first`, else after it. Where the half ran; `None` if the helper
    /// never took the outer half.
    fn where_a_standing_offer_ran(
        pool: &Pool,
        posted: &AtomicBool,
        release_helper_first: bool,
    ) -> Option<ThreadId> {
        let (helper_busy, release, inner_ran) = (
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
        );
        // The outer join looks for idle threads, whatever the joins before it.
        super::STACK.with(super::Stack::taken);
        let (ran_on, ()) = pool.install(|| {
            crate::join(
                || {
                    if !wait_for(&helper_busy, Duration::from_millis(20)) {
                        release.store(true, Ordering::Release);
                        return None;
                    }
                    let ((), on) = crate::join(
                        || {
                            for _ in 0..100 {
                                crate::join(|| (), || ());
                            }
                            posted.store(true, Ordering::Release);
                            if release_helper_first {
                                release.store(true, Ordering::Release);
                            }
                            wait_for(&inner_ran, Duration::from_secs(2));
                            release.store(true, Ordering::Release);
                        },
                        || {
                            inner_ran.store(true, Ordering::Release);
                            std::thread::current().id()
                        },
                    );
                    Some(on)
                },
                || {
                    helper_busy.store(true, Ordering::Release);
                    wait_for(&release, Duration::from_secs(10));
                },
            )
        });
        ran_on
    }

    #[test]
    fn a_thread_that_runs_out_of_work_takes_a_standing_offer_without_a_look() {
        // The helper, let go while the first half makes no join, must find the inner half
        // offered standing and run it, not wait for the first half's end.
        let pool = Pool::builder().workers(2).spin_us(10_000).build().unwrap();
        let main = std::thread::current().id();
        let (mut busy, mut elsewhere) = (0, 0);
        for _ in 0..20 {
            if let Some(on) = where_a_standing_offer_ran(&pool, &AtomicBool::new(false), true) {
                busy += 1;
                elsewhere += usize::from(on != main);
            }
        }
        assert!(busy > 0, "the helper never took the outer half");
        assert_eq!(
            elsewhere, busy,
            "inner halves taken while the first half ran"
        );
    }

    #[test]
    fn a_dispatch_waiting_for_a_slot_runs_a_standing_offer() {
        // Both slots held (the outer offer, taken; the standing one), the helper busy: a
        // dispatch from another thread waits for a slot, and meanwhile runs the half.
        let pool = Pool::builder()
            .workers(2)
            .spin_us(10_000)
            .join_slots_per_thread(0)
            .build()
            .unwrap();
        let (mut busy, mut by_waiter) = (0, 0);
        for _ in 0..10 {
            let posted = AtomicBool::new(false);
            let (ran_on, waiter) = std::thread::scope(|scope| {
                let waiter = scope.spawn(|| {
                    // Sleeping, not spinning: the main thread and the helper spin on the
                    // machine's two cores meanwhile.
                    while !posted.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                    pool.dispatch(2, |_| {});
                    std::thread::current().id()
                });
                let ran_on = where_a_standing_offer_ran(&pool, &posted, false);
                posted.store(true, Ordering::Release);
                (ran_on, waiter.join().unwrap())
            });
            if let Some(on) = ran_on {
                busy += 1;
                by_waiter += usize::from(on == waiter);
            }
        }
        assert!(busy > 0, "the helper never took the outer half");
        assert_eq!(by_waiter, busy, "inner halves run by the waiting dispatch");
    }

    #[test]
    fn a_dispatch_inside_a_join_gets_the_slot_its_own_offer_held() {
        // One slot and none kept for joins: the join's offer may hold it when the first half
        // dispatches tasks that wait for each other, which need a slot; the dispatch frees
        // the offer's slot (taken and run, or withdrawn untaken) instead of waiting for its
        // own join forever.
        let pool = Pool::builder()
            .workers(2)
            .max_in_flight(1)
            .join_slots_per_thread(0)
            .build()
            .unwrap();
        let (done, wait) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for _ in 0..1_000 {
                let barrier = std::sync::Barrier::new(2);
                let ((), b) = pool.join(
                    || {
                        pool.dispatch(2, |_| {
                            barrier.wait();
                        })
                    },
                    || 7,
                );
                assert_eq!(b, 7);
            }
            done.send(()).unwrap();
        });
        wait.recv_timeout(std::time::Duration::from_secs(60))
            .expect("a dispatch inside a join waited for its own join's slot");
    }

    /// Spins until a thread of the current pool is idle, at most a second.
    fn wait_until_a_thread_idles() {
        let deadline = Instant::now() + Duration::from_secs(1);
        while idle_now() == Idle::Nobody && Instant::now() < deadline {
            std::hint::spin_loop();
        }
    }

    /// Of ten joins on a pool of two, each made once the helper idles and `prepare` ran,
    /// whose first half waits for the second to start: how many second halves ran on
    /// another thread than this one.
    fn halves_run_elsewhere(prepare: impl Fn()) -> usize {
        let pool = Pool::builder().workers(2).spin_us(10_000).build().unwrap();
        let main = std::thread::current().id();
        let mut elsewhere = 0;
        for _ in 0..10 {
            let ran = AtomicBool::new(false);
            let on = pool.install(|| {
                wait_until_a_thread_idles();
                prepare();
                let ((), on) = crate::join(
                    || {
                        wait_for(&ran, Duration::from_secs(2));
                    },
                    || {
                        ran.store(true, Ordering::Release);
                        std::thread::current().id()
                    },
                );
                on
            });
            elsewhere += usize::from(on != main);
        }
        elsewhere
    }

    #[test]
    fn a_programs_join_after_a_recursion_offers_at_once() {
        // The count of joins to the next look as a recursion may leave it, far from its
        // end: the next outermost join on this thread (a program's, in no task) still
        // offers its half to the idle helper at once, so the half runs there while the
        // first half, which makes no join, waits for it.
        let elsewhere = halves_run_elsewhere(|| {
            crate::join(|| crate::join(|| (), || ()), || ());
            wait_until_a_thread_idles();
            super::STACK.with(|stack| {
                stack.joins_to_look.set(10);
                stack.next_offer_ns.set(0);
            });
        });
        assert_eq!(elsewhere, 10, "halves offered after a recursion, of 10");
    }

    #[test]
    fn a_taken_halfs_first_join_offers_standing_to_its_joiner_once_it_waits() {
        // The helper takes the half `b` and joins in it while the main thread is busy (so
        // nobody is idle at that look): the join's half `d` is offered standing at once,
        // and the main thread, waiting for `b` once its first half ends, takes and runs
        // it while `c` waits for it to start.
        let pool = Pool::builder().workers(2).spin_us(10_000).build().unwrap();
        let main = std::thread::current().id();
        let mut on_main = 0;
        for _ in 0..10 {
            let helper_joined = AtomicBool::new(false);
            let d_started = AtomicBool::new(false);
            let d_on = pool.install(|| {
                wait_until_a_thread_idles();
                super::STACK.with(|stack| {
                    stack.joins_to_look.set(0);
                    stack.next_offer_ns.set(0);
                });
                let ((), (b_on, d_on)) = crate::join(
                    || {
                        wait_for(&helper_joined, Duration::from_secs(2));
                    },
                    || {
                        let ((), d_on) = crate::join(
                            || {
                                helper_joined.store(true, Ordering::Release);
                                wait_for(&d_started, Duration::from_secs(2));
                            },
                            || {
                                d_started.store(true, Ordering::Release);
                                std::thread::current().id()
                            },
                        );
                        (std::thread::current().id(), d_on)
                    },
                );
                assert_ne!(b_on, main, "the helper, idle, took the offered half");
                d_on
            });
            on_main += usize::from(d_on == main);
        }
        assert_eq!(
            on_main, 10,
            "taken halves' inner halves run by their joiner, of 10"
        );
    }

    #[test]
    fn a_joiner_that_forks_in_an_offer_it_ran_while_waiting_aborts_the_child() {
        // As above: the main thread, waiting for `b` (taken by the helper), runs `b`'s
        // inner half `d`, which forks. In the child the helper does not exist, so `b`
        // never ends there: the joiner, back from `d`, must abort rather than wait.
        let pool = Pool::builder().workers(2).spin_us(10_000).build().unwrap();
        let main = std::thread::current().id();
        let mut child = None;
        for _ in 0..10 {
            let helper_joined = AtomicBool::new(false);
            let d_started = AtomicBool::new(false);
            pool.install(|| {
                wait_until_a_thread_idles();
                super::STACK.with(|stack| {
                    stack.joins_to_look.set(0);
                    stack.next_offer_ns.set(0);
                });
                crate::join(
                    || {
                        wait_for(&helper_joined, Duration::from_secs(2));
                    },
                    || {
                        crate::join(
                            || {
                                helper_joined.store(true, Ordering::Release);
                                wait_for(&d_started, Duration::from_secs(2));
                            },
                            || {
                                d_started.store(true, Ordering::Release);
                                if std::thread::current().id() == main {
                                    // SAFETY: the child only returns into the join, which
                                    // aborts it; SIGALRM ends it if it waits instead.
                                    let pid = unsafe { libc::fork() };
                                    if pid == 0 {
                                        // SAFETY: alarm has no preconditions.
                                        unsafe { libc::alarm(10) };
                                    } else {
                                        child = Some(pid);
                                    }
                                }
                            },
                        );
                    },
                );
            });
            if child.is_some() {
                break;
            }
        }
        let pid = child.expect("in ten tries, the joiner never ran the taken half's offer");
        let mut status = 0;
        // SAFETY: `pid` is this process's child; `status` is valid for writes.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGABRT,
            "the child aborted, rather than wait for a half nobody runs: status {status:#x}"
        );
    }

    #[test]
    fn looks_brought_forward_count_only_the_joins_that_passed_for_the_pace() {
        let stack = super::Stack::new();
        // The first look that finds a thread idle; then two looks, each brought forward
        // one join after the look before (of the sixteen its count allowed): two joins in
        // 2,000 ns.
        stack.pace_looks(Idle::Spinning, 1_000);
        for _ in 0..2 {
            stack.joins_to_look.set(crate::offering::JOINS_PER_LOOK - 1);
            stack.look_next();
            stack.looks_since_idle.set(stack.looks_since_idle.get() + 1);
        }
        stack.pace_looks(Idle::Spinning, 3_000);
        // 1,000 ns a join, about a look interval while a thread spins: a look a join (not
        // sixteen joins a look, as 32 joins in that time would set).
        assert_eq!(stack.joins_per_look.get(), 1);
    }

    #[test]
    fn a_join_told_to_look_offers_whatever_the_count_of_joins() {
        // The count of joins to the next look far from its end, and no recursion begun
        // (which would look anyway): told to look, the next join offers its half to the
        // idle helper, where the half runs while the first half waits for it.
        let elsewhere = halves_run_elsewhere(|| {
            super::STACK.with(|stack| {
                stack.joins_to_look.set(10);
                stack.recursed.set(false);
                stack.next_offer_ns.set(0);
            });
            super::look_at_next_join();
        });
        assert_eq!(
            elsewhere, 10,
            "halves offered by a join told to look, of 10"
        );
    }
}
