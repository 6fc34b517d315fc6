//! `Job`: what a participant needs to run one dispatch's tasks (the type-erased closure and
//! the task count), copied into the dispatch's slot so that a helper reads it from the line
//! it attached on; tasks are claimed from a cursor there, in chunks that adapt to the tasks'
//! cost and shrink toward the end (README "Claiming"). `Panics` keeps a dispatch's first
//! panic for its caller.

use crate::sync::{self, AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use crate::tasks::{self, Participant, Tasks};
use crate::unwind::{self, Panic};
use std::ops::Range;
use std::panic;
use std::ptr;

/// A chunk should run about this long: a claim (one `fetch_add` on a line other
/// participants write too, about 0.1 us across cores) and the clock read that times it
/// then cost under 1% of the work.
const CHUNK_TARGET_NS: u64 = 20_000;

/// Toward the end chunks shrink, but never below about this much work (a tenth of the
/// target, at the last chunk's rate): finer pieces would cost more in claims than they
/// save in balance, and the participant that ends last waits for at most about this long.
const CHUNK_FLOOR_NS: u64 = CHUNK_TARGET_NS / 10;

/// A chunk grows at most this many times over the last one: a cheap first task (whose
/// time is mostly the clock read) reaches the target in two claims, not ten, while a run
/// of cheap tasks before expensive ones cannot hand out an unbounded chunk.
const CHUNK_MAX_GROWTH: usize = 64;

/// Runs a range of tasks of the closure behind the pointer as a participant, handing panics
/// to `Panics` (`tasks::run_erased`).
pub(crate) type RunRange = unsafe fn(*const (), Participant, Range<usize>, &Panics);

/// One dispatch's tasks, as every participant sees them.
///
/// # Safety
/// `data` points to the caller's closure, valid until the dispatch returns. A participant
/// dereferences it only to run tasks it claimed, while attached to the dispatch's slot, and
/// the caller returns only after every helper detached (README "Completion"), so no helper
/// sees a dangling `data`.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    pub(crate) run: RunRange,
    pub(crate) data: *const (),
    pub(crate) n_tasks: usize,
    /// Participants the dispatch may have: the caller and the helpers it posted permits to.
    pub(crate) participants: usize,
    /// The largest chunk: the cursor, which each participant's last claim may carry past
    /// `n_tasks`, then stays below `usize::MAX`.
    pub(crate) max_chunk: usize,
    /// Set when no more tasks need to run (an operation found what it looked for): no
    /// participant claims another chunk. Null for a dispatch that runs every task. On the
    /// caller's stack, valid as `data` is.
    pub(crate) stop: *const AtomicBool,
    /// Under loom: the caller's liveness cell (see [`Liveness`]).
    #[cfg(rayforce_loom)]
    pub(crate) alive: *const Liveness,
}

/// Under loom, a cell on the dispatching caller's stack that the caller writes when the
/// dispatch returns and every participant reads before each claim, so a helper touching a
/// finished dispatch is a detected data race. Nothing outside loom.
pub(crate) struct Liveness {
    #[cfg(rayforce_loom)]
    alive: loom::cell::UnsafeCell<bool>,
}

impl Liveness {
    pub(crate) fn new() -> Liveness {
        Liveness {
            #[cfg(rayforce_loom)]
            alive: loom::cell::UnsafeCell::new(true),
        }
    }

    /// The dispatch returns: under loom, the write every late read races with.
    pub(crate) fn end(&self) {
        // SAFETY: every helper has detached (README "Completion"); loom checks that.
        #[cfg(rayforce_loom)]
        self.alive.with_mut(|alive| unsafe { *alive = false });
    }
}

// SAFETY: `data` points to a `T: Tasks`, which is `Sync`, only ever called through `&T`, and
// `stop` to an atomic; lifetimes are enforced by the protocol (see the struct's `# Safety`).
unsafe impl Send for Job {}

impl Job {
    /// A job of `n_tasks` tasks of `closure`, for up to `participants` participants, which
    /// stop claiming once `stop` is set; `closure`, `stop` and `alive` are the caller's, on
    /// its stack for the dispatch's length.
    pub(crate) fn new<T: Tasks>(
        closure: &T,
        n_tasks: usize,
        participants: usize,
        stop: Option<&AtomicBool>,
        #[cfg_attr(not(rayforce_loom), allow(unused_variables))] alive: &Liveness,
    ) -> Job {
        Job {
            run: tasks::run_erased::<T>,
            data: (closure as *const T).cast(),
            n_tasks,
            participants: participants.max(1),
            max_chunk: max_chunk(n_tasks, participants.max(1)),
            stop: stop.map_or(ptr::null(), |stop| stop as *const AtomicBool),
            #[cfg(rayforce_loom)]
            alive,
        }
    }

    /// Runs `tasks`, which this participant owns (its first task, or every task of an
    /// inline dispatch), as `who`; panics go to `panics`.
    #[inline]
    pub(crate) fn run(&self, who: Participant, tasks: Range<usize>, panics: &Panics) {
        #[cfg(rayforce_loom)]
        self.assert_alive();
        // SAFETY: the closure is live while a participant holds tasks of it (struct
        // `# Safety`; for the caller, its caller holds it).
        unsafe { (self.run)(self.data, who, tasks, panics) };
    }

    /// Whether the job's stop flag is set (no more chunks to claim).
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        if const { crate::sync::broken("claim_after_stop") } {
            return false; // deliberately broken: participants claim on after the stop
        }
        // SAFETY: `stop` is null or the caller's flag, live as the job (struct `# Safety`).
        // Relaxed: the flag publishes nothing; what the task that set it found reaches the
        // caller through the detach's Release and the quiet check's Acquire.
        !self.stop.is_null() && unsafe { &*self.stop }.load(Ordering::Relaxed)
    }

    /// Claims and runs chunks of the tasks beyond the participants' first ones (from
    /// `participants` on, README "Claiming") from `cursor` until none is left, or until
    /// `stop()` says to claim no more; returns how many tasks this participant ran.
    /// `claimed_last` runs once, right after a claim that took the last task (the caller
    /// withdraws the dispatch's permits there); `tick(now, worked, left)` after each chunk
    /// sized by the clock, with the time since the participant's first task began and the
    /// time the tasks not yet claimed would take at this participant's rate so far.
    /// `first_began` is [`first_task_began`](Self::first_task_began)'s reading before that
    /// first task, which sizes the first chunk. Panics go to `panics` (README "Panics").
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn work(
        &self,
        first_began: u64,
        who: Participant,
        cursor: &AtomicUsize,
        panics: &Panics,
        stop: impl Fn() -> bool,
        claimed_last: impl FnMut(),
        tick: impl FnMut(u64, u64, u64),
    ) -> usize {
        if self.sized_by_clock() {
            self.work_by_clock(first_began, who, cursor, panics, stop, claimed_last, tick)
        } else {
            self.work_one_at_a_time(who, cursor, panics, stop, claimed_last)
        }
    }

    /// `work` for a dispatch of more than two claimable tasks per participant: chunks sized
    /// by the clock. Kept out of line, so the common one-task-each dispatch inlines the
    /// other path alone.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn work_by_clock(
        &self,
        began: u64,
        who: Participant,
        cursor: &AtomicUsize,
        panics: &Panics,
        stop: impl Fn() -> bool,
        mut claimed_last: impl FnMut(),
        mut tick: impl FnMut(u64, u64, u64),
    ) -> usize {
        // The first task, timed from `began`, is the first chunk: the next is sized by it.
        let mut clock = sync::now_ns();
        let mut ran = 0;
        let mut chunk = next_chunk(1, clock.saturating_sub(began));
        let mut seen_left = self.n_tasks - self.participants;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            if stop() || self.stopped() {
                return ran;
            }
            let floor = chunk / (CHUNK_TARGET_NS / CHUNK_FLOOR_NS) as usize;
            let tasks = self.claim(cursor, chunk, floor, &mut seen_left);
            if tasks.is_empty() {
                return ran;
            }
            let len = tasks.len();
            let last = tasks.end == self.n_tasks;
            if last {
                claimed_last();
            }
            self.run(who, tasks, panics);
            ran += len;
            if last {
                // Nothing is left to claim: no next size to choose, nobody left to wake.
                return ran;
            }
            let now = sync::now_ns();
            chunk = next_chunk(len, now.saturating_sub(clock));
            clock = now;
            let worked = now.saturating_sub(began);
            let left = (seen_left as u128 * u128::from(worked)) / (ran + 1) as u128;
            tick(now, worked, u64::try_from(left).unwrap_or(u64::MAX));
        }
    }

    /// What a participant reads before its first task, for `work`: the clock, if this job
    /// sizes chunks by it (else 0: no decision needs it).
    #[inline]
    pub(crate) fn first_task_began(&self) -> u64 {
        if self.sized_by_clock() {
            sync::now_ns()
        } else {
            0
        }
    }

    /// Whether `work` sizes chunks by the clock: only with more than two claimable tasks
    /// per participant can a chunk be more than one task (`claim`'s cap); below that,
    /// chunks are single tasks and no decision needs the clock.
    #[inline]
    pub(crate) fn sized_by_clock(&self) -> bool {
        self.n_tasks.saturating_sub(self.participants) > 2 * self.participants
    }

    /// `work` for a dispatch of at most two tasks per participant: a task at a time.
    #[inline]
    fn work_one_at_a_time(
        &self,
        who: Participant,
        cursor: &AtomicUsize,
        panics: &Panics,
        stop: impl Fn() -> bool,
        mut claimed_last: impl FnMut(),
    ) -> usize {
        let mut ran = 0;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            if stop() || self.stopped() {
                return ran;
            }
            // Relaxed: as in `claim`.
            if cursor.load(Ordering::Relaxed) >= self.n_tasks {
                return ran;
            }
            let task = take(cursor, 1);
            if task >= self.n_tasks {
                return ran;
            }
            if task + 1 == self.n_tasks {
                claimed_last();
            }
            self.run(who, task..task + 1, panics);
            ran += 1;
        }
    }

    /// Under loom: a read of the caller's liveness cell, which races with `Liveness::end`
    /// if this participant touches the job after its dispatch returned.
    #[cfg(rayforce_loom)]
    fn assert_alive(&self) {
        // SAFETY: the cell is on the caller's stack; loom checks this read against `end`'s
        // write, and a race is the bug sought.
        let alive = unsafe { &(*self.alive).alive };
        // SAFETY: as above.
        alive.with(|alive| assert!(unsafe { *alive }, "job touched after its dispatch returned"));
    }

    /// Claims up to `want` of the next unclaimed tasks from `cursor`, fewer near the end:
    /// never more than half an equal share of what this participant last saw left
    /// (`seen_left`, updated here) unless that is below `floor`, so the last chunks are
    /// small and the participants end together. One load, then one `fetch_add`: the cursor
    /// may run past `n_tasks` by one chunk per participant, which `max_chunk` keeps from
    /// overflowing. Empty when none is left (then without writing the cursor's line).
    fn claim(
        &self,
        cursor: &AtomicUsize,
        want: usize,
        floor: usize,
        seen_left: &mut usize,
    ) -> Range<usize> {
        // Relaxed: the cursor only hands out disjoint ranges; it publishes nothing.
        let seen = cursor.load(Ordering::Relaxed);
        if seen >= self.n_tasks {
            return seen..seen;
        }
        if self.max_chunk == 0 {
            return self.claim_one_without_overshoot(cursor);
        }
        let len = want
            .min(seen_left.div_ceil(2 * self.participants).max(floor))
            .min(self.max_chunk)
            .max(1);
        let start = take(cursor, len);
        if start >= self.n_tasks {
            return start..start;
        }
        let end = (start + len).min(self.n_tasks);
        *seen_left = self.n_tasks - end;
        start..end
    }

    /// One task, by compare-and-swap, for a dispatch within `participants` tasks of
    /// `usize::MAX`, where even one overshooting `fetch_add` each could wrap the cursor.
    #[cold]
    fn claim_one_without_overshoot(&self, cursor: &AtomicUsize) -> Range<usize> {
        // Relaxed: as in `claim`.
        match cursor.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
            (next < self.n_tasks).then_some(next + 1)
        }) {
            Ok(start) => start..start + 1,
            Err(end) => end..end,
        }
    }
}

/// Moves `cursor` on by `len`; returns where it was. One `fetch_add`, which may carry it past
/// the last task (the claim is then empty).
#[inline]
fn take(cursor: &AtomicUsize, len: usize) -> usize {
    if const { crate::sync::broken("racy_claim") } {
        // Deliberately broken (loom must catch it): two participants can read the same
        // cursor and both run the same chunk.
        let seen = cursor.load(Ordering::Relaxed);
        cursor.store(seen + len, Ordering::Relaxed);
        seen
    } else {
        // Relaxed: the cursor only hands out disjoint ranges; it publishes nothing.
        cursor.fetch_add(len, Ordering::Relaxed)
    }
}

/// The largest chunk a dispatch of `n_tasks` on `participants` may claim, so that the
/// cursor, which each participant's last claim may carry past `n_tasks`, stays below
/// `usize::MAX`. Below `usize::MAX >> 14` tasks no claim can carry it that far (a claim is
/// at most `n_tasks`, and participants are at most `MAX_WIDTH`, 2^13, so the cursor stays
/// below `n_tasks * (1 + 2^13)`): no limit, and no division on the dispatch's path.
fn max_chunk(n_tasks: usize, participants: usize) -> usize {
    if n_tasks < usize::MAX >> 14 {
        usize::MAX
    } else {
        (usize::MAX - n_tasks) / participants
    }
}

/// The next chunk size for a participant whose last chunk of `len` tasks took `took_ns`:
/// what runs in the target time at that rate, but at most `CHUNK_MAX_GROWTH` times `len`
/// and at least half of it (one chunk that met an expensive task does not collapse the
/// size), and at least one task.
fn next_chunk(len: usize, took_ns: u64) -> usize {
    let at_rate = (len as u128 * u128::from(CHUNK_TARGET_NS)) / u128::from(took_ns.max(1));
    let at_rate = usize::try_from(at_rate).unwrap_or(usize::MAX);
    at_rate
        .min(len.saturating_mul(CHUNK_MAX_GROWTH))
        .max(len / 2)
        .max(1)
}

/// The first panic of a dispatch, boxed once more to fit a thin pointer; null if none.
/// Lock-free, so a child forked while a helper held it cannot find it locked (README
/// "Fork").
pub(crate) struct Panics(AtomicPtr<Panic>);

impl Panics {
    pub(crate) fn new() -> Panics {
        Panics(AtomicPtr::new(ptr::null_mut()))
    }

    /// Keeps `payload` if it is the first panic; otherwise discards it where its `Drop`
    /// cannot unwind into the protocol.
    pub(crate) fn keep_first(&self, payload: Panic) {
        let boxed = Box::into_raw(Box::new(payload));
        // Release: publishes the payload to `take`'s Acquire swap. A failed exchange reads
        // nothing through the pointer it sees.
        let kept =
            self.0
                .compare_exchange(ptr::null_mut(), boxed, Ordering::Release, Ordering::Relaxed);
        if kept.is_err() {
            // SAFETY: `boxed` came from `Box::into_raw` above and was not published.
            unwind::discard(*unsafe { Box::from_raw(boxed) });
        }
    }

    /// The first panic, if any, taken out.
    #[inline]
    pub(crate) fn take(&self) -> Option<Panic> {
        // Relaxed: most dispatches have no panic, and then the line is not written.
        if self.0.load(Ordering::Relaxed).is_null() {
            return None;
        }
        // Acquire: pairs with the Release in `keep_first`.
        let kept = self.0.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Box::into_raw` in `keep_first`, and the
        // swap took it out, so it is freed exactly once.
        (!kept.is_null()).then(|| *unsafe { Box::from_raw(kept) })
    }

    /// Resumes the first panic, if any (call when the dispatch is over and the pool is
    /// consistent).
    pub(crate) fn resume(&self) {
        resume(self.take());
    }
}

/// Resumes `panic`, if any.
#[inline]
pub(crate) fn resume(panic: Option<Panic>) {
    if let Some(payload) = panic {
        panic::resume_unwind(payload);
    }
}

impl Drop for Panics {
    fn drop(&mut self) {
        if let Some(payload) = self.take() {
            unwind::discard(payload);
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use crate::tasks::Each;

    /// A job of `n` tasks of `tasks` (which must outlive it) for `participants`.
    fn job<F: Fn(usize) + Sync>(tasks: &Each<F>, n: usize, participants: usize) -> Job {
        Job::new(tasks, n, participants, None, &Liveness::new())
    }

    #[test]
    fn chunks_grow_while_cheap_and_shrink_after_an_expensive_one() {
        // A cheap first task: 64 times, not the 200 its rate asks for.
        assert_eq!(next_chunk(1, 100), CHUNK_MAX_GROWTH);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS / 4), 4 * 4096);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS), 4096);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS * 3 / 2), 2730);
        // One expensive chunk halves the size, no more.
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS * 3), 2048);
        assert_eq!(next_chunk(1, CHUNK_TARGET_NS * 100), 1);
        assert_eq!(next_chunk(usize::MAX, 1), usize::MAX);
        assert_eq!(next_chunk(7, 0), 7 * CHUNK_MAX_GROWTH);
    }

    /// Every claim one participant makes of `job`'s tasks alone, as large as `floor`
    /// allows.
    fn claim_all(job: &Job, floor: usize) -> Vec<Range<usize>> {
        let cursor = AtomicUsize::new(0);
        let mut seen_left = job.n_tasks;
        std::iter::from_fn(|| {
            let tasks = job.claim(&cursor, usize::MAX, floor, &mut seen_left);
            (!tasks.is_empty()).then_some(tasks)
        })
        .collect()
    }

    #[test]
    fn claims_cover_every_task_once_and_shrink_toward_the_end() {
        let f = Each(|_: usize| ());
        let job = job(&f, 1000, 2);
        let claimed = claim_all(&job, 0);
        let lens: Vec<usize> = claimed.iter().map(|r| r.len()).collect();
        assert_eq!(lens[0], 250, "a quarter of 1000 with 2 participants");
        assert!(lens.windows(2).all(|w| w[1] <= w[0]), "{lens:?}");
        assert_eq!(*lens.last().unwrap(), 1);
        let covered: Vec<usize> = claimed.into_iter().flatten().collect();
        assert_eq!(covered, (0..1000).collect::<Vec<_>>());
        // With a floor of 100 tasks the tail stops shrinking there, and the last claim
        // takes what is left.
        let lens: Vec<usize> = claim_all(&job, 100).iter().map(|r| r.len()).collect();
        assert_eq!(lens, [250, 188, 141, 106, 100, 100, 100, 15]);
        // Two tasks, two participants: one task each.
        let job = self::job(&f, 2, 2);
        let cursor = AtomicUsize::new(0);
        let (mut a, mut b) = (2, 2);
        assert_eq!(
            (
                job.claim(&cursor, 8, 0, &mut a),
                job.claim(&cursor, 8, 0, &mut b)
            ),
            (0..1, 1..2)
        );
        assert!(job.claim(&cursor, 8, 0, &mut a).is_empty());
        assert_eq!(
            cursor.into_inner(),
            2,
            "a claim that finds nothing writes nothing"
        );
    }

    #[test]
    fn the_cursor_never_overflows() {
        let f = Each(|_: usize| ());
        let job = job(&f, usize::MAX - 3, 4);
        let cursor = AtomicUsize::new(0);
        let mut seen_left = usize::MAX;
        assert_eq!(
            job.claim(&cursor, usize::MAX, 0, &mut seen_left),
            0..1,
            "one at a time"
        );
        cursor.store(usize::MAX - 4, Ordering::Relaxed);
        assert_eq!(
            job.claim(&cursor, 8, 0, &mut seen_left),
            usize::MAX - 4..usize::MAX - 3
        );
        for _ in 0..8 {
            assert!(
                job.claim(&cursor, 8, 0, &mut seen_left).is_empty(),
                "never wraps"
            );
        }
    }

    #[test]
    fn claims_start_after_the_first_tasks_and_the_last_is_reported_once() {
        for n in [3, 5, 6, 7, 1000] {
            let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let f = Each(|i: usize| {
                runs[i].fetch_add(1, Ordering::Relaxed);
            });
            let job = job(&f, n, 2);
            let cursor = AtomicUsize::new(2); // as `Slot::publish` sets it
            let mut last = 0;
            let caller = Participant::CALLER;
            let ran = job.work(
                job.first_task_began(),
                caller,
                &cursor,
                &Panics::new(),
                || false,
                || last += 1,
                |_, _, _| {},
            );
            assert_eq!((ran, last), (n - 2, 1), "{n} tasks");
            let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
            assert_eq!(counts[..2], [0, 0], "{n}: the first tasks are not claimed");
            assert!(counts[2..].iter().all(|&c| c == 1), "{n}: {counts:?}");
        }
    }
}
