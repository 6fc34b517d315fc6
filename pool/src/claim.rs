//! Claiming a job's tasks (README "Claiming"): each participant runs its first task, then
//! claims chunks of the rest from the slot's cursor until none is left, at the named points
//! of [`ClaimHooks`] where the caller's policies act. Chunk sizes: `chunk_size.rs`.

use crate::chunk_size;
use crate::job::Job;
use crate::panics::Panics;
use crate::sync::{self, AtomicUsize, Ordering};
use crate::tasks::Participant;
use std::ops::Range;

/// What a participant does at the claiming loop's named points. A helper stops when its
/// process forked away; the caller withdraws the permits after the last claim and decides
/// there whether to wake helpers it left asleep (README "Waking late").
pub(crate) trait ClaimHooks {
    /// Whether to claim no more.
    fn stop(&self) -> bool {
        false
    }

    /// Runs once, right after a claim that took the last task.
    fn claimed_last(&mut self) {}

    /// Runs after each chunk sized by the clock, with the clock now, the time since the
    /// participant's first task began, and the time the tasks not yet claimed would take at
    /// its rate so far.
    fn tick(&mut self, _now_ns: u64, _worked_ns: u64, _left_ns: u64) {}
}

impl Job {
    /// Claims and runs chunks of the tasks beyond the participants' first ones (from
    /// `participants` on) from `cursor` until none is left, or until `hooks.stop()` or the
    /// job's stop flag says to claim no more; returns how many tasks this participant ran.
    /// `first_began` is [`first_task_began`](Job::first_task_began)'s reading before the
    /// participant's first task, which sizes the first chunk. Panics go to `panics` (README
    /// "Panics").
    #[inline]
    pub(crate) fn work(
        &self,
        first_began: u64,
        who: Participant,
        cursor: &AtomicUsize,
        panics: &Panics,
        hooks: &mut impl ClaimHooks,
    ) -> usize {
        if self.sized_by_clock() {
            self.work_by_clock(first_began, who, cursor, panics, hooks)
        } else {
            self.work_one_at_a_time(who, cursor, panics, hooks)
        }
    }

    /// `work` for a dispatch of more than two claimable tasks per participant: chunks sized
    /// by the clock. Kept out of line, so the common one-task-each dispatch inlines the
    /// other path alone.
    #[inline(never)]
    fn work_by_clock(
        &self,
        began: u64,
        who: Participant,
        cursor: &AtomicUsize,
        panics: &Panics,
        hooks: &mut impl ClaimHooks,
    ) -> usize {
        // The first task, timed from `began`, is the first chunk: the next is sized by it.
        let mut clock = sync::now_ns();
        let mut ran = 0;
        let mut chunk = chunk_size::next_chunk(1, clock.saturating_sub(began));
        let mut seen_left = self.n_tasks - self.participants;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            if hooks.stop() || self.stopped() {
                return ran;
            }
            let tasks = self.claim(cursor, chunk, chunk_size::floor(chunk), &mut seen_left);
            if tasks.is_empty() {
                return ran;
            }
            let len = tasks.len();
            let last = tasks.end == self.n_tasks;
            if last {
                hooks.claimed_last();
            }
            self.run(who, tasks, panics);
            ran += len;
            if last {
                // Nothing is left to claim: no next size to choose, nobody left to wake.
                return ran;
            }
            let now = sync::now_ns();
            chunk = chunk_size::next_chunk(len, now.saturating_sub(clock));
            clock = now;
            let worked = now.saturating_sub(began);
            let left = (seen_left as u128 * u128::from(worked)) / (ran + 1) as u128;
            hooks.tick(now, worked, u64::try_from(left).unwrap_or(u64::MAX));
        }
    }

    /// `work` for a dispatch of at most two tasks per participant: a task at a time.
    #[inline]
    fn work_one_at_a_time(
        &self,
        who: Participant,
        cursor: &AtomicUsize,
        panics: &Panics,
        hooks: &mut impl ClaimHooks,
    ) -> usize {
        let mut ran = 0;
        loop {
            #[cfg(rayforce_loom)]
            self.assert_alive();
            if hooks.stop() || self.stopped() {
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
                hooks.claimed_last();
            }
            self.run(who, task..task + 1, panics);
            ran += 1;
        }
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
    if const { crate::broken::variant("racy_claim") } {
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

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use crate::job::Liveness;
    use crate::tasks::Each;

    /// A job of `n` tasks of `tasks` (which must outlive it) for `participants`.
    fn job<F: Fn(usize) + Sync>(tasks: &Each<F>, n: usize, participants: usize) -> Job {
        Job::new(tasks, n, participants, None, &Liveness::new())
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

    /// Hooks that count the claims that took the last task.
    struct CountLast<'a>(&'a mut usize);

    impl ClaimHooks for CountLast<'_> {
        fn claimed_last(&mut self) {
            *self.0 += 1;
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
                &mut CountLast(&mut last),
            );
            assert_eq!((ran, last), (n - 2, 1), "{n} tasks");
            let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
            assert_eq!(counts[..2], [0, 0], "{n}: the first tasks are not claimed");
            assert!(counts[2..].iter().all(|&c| c == 1), "{n}: {counts:?}");
        }
    }
}
