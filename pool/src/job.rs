//! `Job`: one dispatch's state, on the caller's stack: the type-erased closure, the claim
//! cursor, the count of unfinished tasks, and the first panic. Participants claim tasks in
//! chunks that adapt to the tasks' cost and shrink toward the end (README "Claiming").

use crate::sync::{self, AtomicPtr, AtomicUsize, Ordering};
use crate::unwind::{self, Panic};
use crossbeam_utils::CachePadded;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

/// A chunk should run about this long: a claim (one compare-and-swap on a line other
/// participants write too, about 0.1 us across cores) then costs under 1% of the work, and
/// the participant that ends last waits for at most about this long.
const CHUNK_TARGET_NS: u64 = 20_000;

/// One dispatch. Lives on the dispatching caller's stack.
///
/// # Safety
/// `data` points to the caller's closure, valid until the dispatch returns. Helpers reach
/// the job only between attaching and detaching, and the caller returns only after every
/// helper detached (README "Completion"), so no helper sees a dangling `data`.
pub(crate) struct Job {
    run: unsafe fn(*const (), Range<usize>, &Job),
    data: *const (),
    n_tasks: usize,
    /// Participants the dispatch may have: the caller and the helpers it posted permits to.
    participants: usize,
    /// The largest chunk: the cursor, which each participant's last claim may carry past
    /// `n_tasks`, then stays below `usize::MAX`.
    max_chunk: usize,
    /// The next task index to claim (`>= n_tasks` once all are claimed). Its own cache
    /// line: every participant writes it, and nothing else should move with it.
    next: CachePadded<AtomicUsize>,
    /// Tasks not yet finished; its own cache line too.
    pending: CachePadded<AtomicUsize>,
    /// The first panic, boxed once more to fit a thin pointer; null if none. Lock-free, so
    /// a child forked while a helper held it cannot find it locked (README "Fork").
    panic: AtomicPtr<Panic>,
    /// Under loom: written by the caller when the dispatch returns, read by every access to
    /// the job, so a helper touching a finished dispatch is a detected data race.
    #[cfg(rayforce_loom)]
    alive: loom::cell::UnsafeCell<bool>,
}

// SAFETY: `data` points to an `F: Sync`, only ever called through `&F`; the other fields
// are thread-safe. Lifetimes are enforced by the protocol (see the struct's `# Safety`).
unsafe impl Sync for Job {}

/// Runs tasks `range` of the closure behind `data`. A panicking task is caught and handed
/// to `job` (the first is kept); the rest of the range still runs.
///
/// # Safety
/// `data` must point to a live `F`.
unsafe fn run_range<F: Fn(usize) + Sync>(data: *const (), range: Range<usize>, job: &Job) {
    // SAFETY: the caller guarantees `data` is a live `F`.
    let f = unsafe { &*data.cast::<F>() };
    let mut next = range.start;
    while next < range.end {
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            while next < range.end {
                let task = next;
                next += 1;
                f(task);
            }
        }));
        if let Err(payload) = outcome {
            job.keep_first(payload);
        }
    }
}

impl Job {
    /// A job of `n_tasks` calls of `f`, for up to `participants` participants.
    pub(crate) fn new<F: Fn(usize) + Sync>(f: &F, n_tasks: usize, participants: usize) -> Job {
        Job {
            run: run_range::<F>,
            data: (f as *const F).cast(),
            n_tasks,
            participants: participants.max(1),
            max_chunk: (usize::MAX - n_tasks) / participants.max(1),
            next: CachePadded::new(AtomicUsize::new(0)),
            pending: CachePadded::new(AtomicUsize::new(n_tasks)),
            panic: AtomicPtr::new(ptr::null_mut()),
            #[cfg(rayforce_loom)]
            alive: loom::cell::UnsafeCell::new(true),
        }
    }

    /// Claims and runs chunks of tasks until none is left, or until `stop()` says to claim
    /// no more; returns how many tasks this participant ran. `now` is `sync::now_ns()`, read
    /// just before. Panics are caught where they happen (README "Panics").
    pub(crate) fn work(&self, now: u64, stop: impl Fn() -> bool) -> usize {
        let mut ran = 0;
        let mut chunk = 1;
        let mut seen_left = self.n_tasks;
        let mut clock = now;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            if stop() {
                return ran;
            }
            let tasks = self.claim(chunk, &mut seen_left);
            if tasks.is_empty() {
                return ran;
            }
            let len = tasks.len();
            // SAFETY: the job is live while we work on it (struct `# Safety`).
            unsafe { (self.run)(self.data, tasks, self) };
            ran += len;
            let now = sync::now_ns();
            chunk = next_chunk(len, now.saturating_sub(clock));
            clock = now;
            // Release: pairs with the Acquire load in `finished`, so every task's effects
            // happen-before the caller sees the count reach zero.
            self.pending.fetch_sub(len, Ordering::Release);
        }
    }

    /// Keeps `payload` if it is the first panic; otherwise discards it where its `Drop`
    /// cannot unwind into the protocol.
    fn keep_first(&self, payload: Panic) {
        let boxed = Box::into_raw(Box::new(payload));
        // Release: publishes the payload to `take_panic`'s Acquire swap. A failed exchange
        // reads nothing through the pointer it sees.
        let kept = self.panic.compare_exchange(
            ptr::null_mut(),
            boxed,
            Ordering::Release,
            Ordering::Relaxed,
        );
        if kept.is_err() {
            // SAFETY: `boxed` came from `Box::into_raw` above and was not published.
            unwind::discard(*unsafe { Box::from_raw(boxed) });
        }
    }

    /// Under loom: a read of `alive` that races with `retire`'s write if this participant
    /// touches the job after its dispatch returned.
    #[cfg(rayforce_loom)]
    fn assert_alive(&self) {
        self.alive.with(|alive| {
            // SAFETY: loom checks this read against `retire`'s write; a race is the bug sought.
            let alive = unsafe { *alive };
            assert!(alive, "job touched after its dispatch returned");
        });
    }

    /// Claims up to `want` of the next unclaimed tasks, fewer near the end: never more than
    /// half an equal share of what this participant last saw left (`seen_left`, updated
    /// here), so the last chunks are small and the participants end together. One
    /// `fetch_add`: the cursor may run past `n_tasks` by one chunk per participant, which
    /// `max_chunk` keeps from overflowing. Empty when none is left.
    fn claim(&self, want: usize, seen_left: &mut usize) -> Range<usize> {
        if self.max_chunk == 0 {
            return self.claim_one_without_overshoot();
        }
        let len = want
            .min(seen_left.div_ceil(2 * self.participants))
            .min(self.max_chunk)
            .max(1);
        let start = if cfg!(rayforce_loom_broken = "racy_claim") {
            // Deliberately broken (loom must catch it): two participants can read the same
            // cursor and both run the same chunk.
            let start = self.next.load(Ordering::Relaxed);
            self.next.store(start + len, Ordering::Relaxed);
            start
        } else {
            // Relaxed: the cursor only hands out disjoint ranges; it publishes nothing.
            self.next.fetch_add(len, Ordering::Relaxed)
        };
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
    fn claim_one_without_overshoot(&self) -> Range<usize> {
        // Relaxed: as in `claim`.
        match self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
                (next < self.n_tasks).then_some(next + 1)
            }) {
            Ok(start) => start..start + 1,
            Err(end) => end..end,
        }
    }

    /// Whether every task has finished.
    pub(crate) fn finished(&self) -> bool {
        // Acquire: pairs with the Release decrement in `work`.
        self.pending.load(Ordering::Acquire) == 0
    }

    /// The first panic, if any, taken out of the job.
    fn take_panic(&self) -> Option<Panic> {
        // Acquire: pairs with the Release in `keep_first`.
        let kept = self.panic.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Box::into_raw` in `keep_first`, and the
        // swap took it out, so it is freed exactly once.
        (!kept.is_null()).then(|| *unsafe { Box::from_raw(kept) })
    }

    /// Ends the job's use (under loom, marks it dead) and resumes the first panic. By
    /// reference: moving the job (several cache lines) into a call would copy it on every
    /// dispatch; the caller's frame drops it.
    pub(crate) fn retire(&self) {
        // SAFETY: every helper has detached (README "Completion"); loom checks that.
        #[cfg(rayforce_loom)]
        self.alive.with_mut(|alive| unsafe { *alive = false });
        if let Some(payload) = self.take_panic() {
            panic::resume_unwind(payload);
        }
    }
}

/// The next chunk size for a participant whose last chunk of `len` tasks took `took_ns`:
/// double it while chunks run under half the target, halve it when one runs over twice
/// the target (a chunk that met an expensive task), else keep it.
fn next_chunk(len: usize, took_ns: u64) -> usize {
    if took_ns < CHUNK_TARGET_NS / 2 {
        len.saturating_mul(2)
    } else if took_ns > CHUNK_TARGET_NS * 2 {
        (len / 2).max(1)
    } else {
        len
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(payload) = self.take_panic() {
            unwind::discard(payload);
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn chunks_grow_while_cheap_and_shrink_after_an_expensive_one() {
        assert_eq!(next_chunk(1, 100), 2);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS / 4), 8192);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS), 4096);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS * 3), 2048);
        assert_eq!(next_chunk(1, CHUNK_TARGET_NS * 100), 1);
    }

    #[test]
    fn claims_cover_every_task_once_and_shrink_toward_the_end() {
        let f = |_: usize| ();
        let job = Job::new(&f, 1000, 2);
        let mut seen_left = 1000;
        let mut claimed = Vec::new();
        loop {
            let tasks = job.claim(usize::MAX, &mut seen_left);
            if tasks.is_empty() {
                break;
            }
            claimed.push(tasks);
        }
        let lens: Vec<usize> = claimed.iter().map(|r| r.len()).collect();
        assert_eq!(lens[0], 250, "a quarter of 1000 with 2 participants");
        assert!(lens.windows(2).all(|w| w[1] <= w[0]), "{lens:?}");
        assert_eq!(*lens.last().unwrap(), 1);
        let covered: Vec<usize> = claimed.into_iter().flatten().collect();
        assert_eq!(covered, (0..1000).collect::<Vec<_>>());
        // Two tasks, two participants: one task each.
        let job = Job::new(&f, 2, 2);
        let (mut a, mut b) = (2, 2);
        assert_eq!((job.claim(8, &mut a), job.claim(8, &mut b)), (0..1, 1..2));
        assert!(job.claim(8, &mut a).is_empty());
    }

    #[test]
    fn the_cursor_never_overflows() {
        let f = |_: usize| ();
        let job = Job::new(&f, usize::MAX - 3, 4);
        let mut seen_left = usize::MAX;
        assert_eq!(job.claim(usize::MAX, &mut seen_left), 0..1, "one at a time");
        job.next.store(usize::MAX - 4, Ordering::Relaxed);
        assert_eq!(job.claim(8, &mut seen_left), usize::MAX - 4..usize::MAX - 3);
        for _ in 0..8 {
            assert!(job.claim(8, &mut seen_left).is_empty(), "never wraps");
        }
    }
}
