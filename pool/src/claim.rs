//! Claiming a job's tasks (README "Claiming"): each participant runs its first task, then
//! claims chunks of the rest from the slot's cursors (its own home's first, if the job has
//! homes) until none is left, at the named points of [`ClaimHooks`] where the caller's
//! policies act. Chunk sizes: `chunk_size.rs`.

use crate::chunk_size;
use crate::job::{Job, MAX_HOMES};
use crate::panics::Panics;
use crate::sync::{self, AtomicUsize, Ordering};
use crate::tasks::Participant;
use crossbeam_utils::CachePadded;
use std::ops::Range;

/// A slot's claim cursors: each the next task to claim of one home (of the one home, the
/// tasks beyond the participants' first ones, for a job without homes), each on a line of
/// its own: a participant claiming from its own home writes a line nobody else touches
/// until it is nearly done.
pub(crate) struct Cursors([CachePadded<AtomicUsize>; MAX_HOMES]);

impl Cursors {
    pub(crate) fn new() -> Cursors {
        Cursors(std::array::from_fn(|_| {
            CachePadded::new(AtomicUsize::new(0))
        }))
    }

    /// Step 2: each home's cursor at its first claimable task.
    #[inline]
    pub(crate) fn reset(&self, job: &Job) {
        for home in 0..job.homes() {
            // Relaxed: the permits' Release orders it before any helper's claim.
            self.home(home)
                .store(job.claimable(home).start, Ordering::Relaxed);
        }
    }

    #[inline]
    fn home(&self, home: usize) -> &AtomicUsize {
        &self.0[home]
    }
}

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
    /// participant's first task began, and how many tasks it ran since (the first not
    /// counted).
    fn tick(&mut self, _now_ns: u64, _worked_ns: u64, _ran: usize) {}
}

impl Job {
    /// Claims and runs chunks of the tasks beyond the participants' first ones from
    /// `cursors` until none is left, or until `hooks.stop()` or the job's stop flag says to
    /// claim no more; returns how many tasks this participant ran.
    /// `first_began` is [`first_task_began`](Job::first_task_began)'s reading before the
    /// participant's first task, which sizes the first chunk. Panics go to `panics` (README
    /// "Panics").
    #[inline]
    pub(crate) fn work(
        &self,
        first_began: u64,
        who: Participant,
        cursors: &Cursors,
        panics: &Panics,
        hooks: &mut impl ClaimHooks,
    ) -> usize {
        if self.sized_by_clock() {
            self.work_by_clock(first_began, who, cursors, panics, hooks)
        } else {
            self.work_one_at_a_time(who, cursors.home(0), panics, hooks)
        }
    }

    /// `work` for a dispatch of more than two claimable tasks per participant: chunks sized
    /// by the clock, from the participant's own home first, then from each other home in
    /// turn (a home found empty stays empty: cursors only grow). Kept out of line, so the
    /// common one-task-each dispatch inlines the other path alone.
    #[inline(never)]
    fn work_by_clock(
        &self,
        began: u64,
        who: Participant,
        cursors: &Cursors,
        panics: &Panics,
        hooks: &mut impl ClaimHooks,
    ) -> usize {
        // The first task, timed from `began`, is the first chunk: the next is sized by it.
        let mut clock = sync::now_ns();
        let mut ran = 0;
        let mut chunk = chunk_size::next_chunk(1, clock.saturating_sub(began));
        let homes = self.homes();
        // Deliberately broken (loom must catch it): the other homes are never visited.
        let visits = if crate::broken::variant!("own_home_only") {
            1
        } else {
            homes
        };
        // Deliberately broken (loom must catch it): claims from homes ignore the stop flag.
        let homes_stop = !(homes > 1 && crate::broken::variant!("homes_claim_after_stop"));
        for visit in 0..visits {
            // A homed job's participants are its homes, so the rank is one.
            let home = (who.rank + visit) % homes;
            let (cursor, end) = (cursors.home(home), self.claimable(home).end);
            loop {
                #[cfg(rayforce_loom)]
                self.assert_alive();
                if hooks.stop() || (homes_stop && self.stopped()) {
                    return ran;
                }
                let tasks = self.claim(cursor, end, chunk, chunk_size::floor(chunk));
                if tasks.is_empty() {
                    break;
                }
                let len = tasks.len();
                // The others were found empty before this one.
                let last = tasks.end == end && visit + 1 == homes;
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
                hooks.tick(now, now.saturating_sub(began), ran);
            }
        }
        ran
    }

    /// How many tasks beyond the participants' first ones no participant has claimed yet.
    pub(crate) fn unclaimed(&self, cursors: &Cursors) -> usize {
        (0..self.homes())
            .map(|home| {
                let end = self.claimable(home).end;
                // Relaxed: a count for a policy; no access depends on it.
                end - cursors.home(home).load(Ordering::Relaxed).min(end)
            })
            .sum()
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

    /// Claims up to `want` of the next unclaimed tasks below `end` from `cursor`, fewer
    /// near the end: never more than half an equal share of what is left unless that is
    /// below `floor`, so the last chunks are small and the participants end together. One
    /// load, then one `fetch_add`: the cursor may run past `end` by one chunk per
    /// participant, which `max_chunk` keeps from overflowing. Empty when none is left (then
    /// without writing the cursor's line).
    fn claim(&self, cursor: &AtomicUsize, end: usize, want: usize, floor: usize) -> Range<usize> {
        // Relaxed: the cursor only hands out disjoint ranges; it publishes nothing.
        let seen = cursor.load(Ordering::Relaxed);
        if seen >= end {
            return seen..seen;
        }
        if self.max_chunk == 0 {
            return self.claim_one_without_overshoot(cursor, end);
        }
        let len = want
            .min((end - seen).div_ceil(2 * self.participants).max(floor))
            .min(self.max_chunk)
            .max(1);
        let start = take(cursor, len);
        if start >= end {
            return start..start;
        }
        start..(start + len).min(end)
    }

    /// One task below `end`, by compare-and-swap, for a dispatch within `participants`
    /// tasks of `usize::MAX`, where even one overshooting `fetch_add` each could wrap the
    /// cursor.
    #[cold]
    fn claim_one_without_overshoot(&self, cursor: &AtomicUsize, end: usize) -> Range<usize> {
        // Relaxed: as in `claim`.
        match cursor.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
            (next < end).then(|| next + 1)
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
    if crate::broken::variant!("racy_claim") {
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
    use crate::region::Claims;
    use crate::tasks::Each;

    /// A job of `n` tasks of `tasks` (which must outlive it) for `participants`, claimed
    /// in order.
    fn job<F: Fn(usize) + Sync>(tasks: &Each<F>, n: usize, participants: usize) -> Job {
        Job::new(
            tasks,
            n,
            participants,
            Claims::InOrder(None),
            &Liveness::new(),
        )
    }

    /// Every claim one participant makes of `job`'s tasks alone, as large as `floor`
    /// allows.
    fn claim_all(job: &Job, floor: usize) -> Vec<Range<usize>> {
        let cursor = AtomicUsize::new(0);
        std::iter::from_fn(|| {
            let tasks = job.claim(&cursor, job.n_tasks, usize::MAX, floor);
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
        assert_eq!(
            (job.claim(&cursor, 2, 8, 0), job.claim(&cursor, 2, 8, 0)),
            (0..1, 1..2)
        );
        assert!(job.claim(&cursor, 2, 8, 0).is_empty());
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
        let (cursor, n) = (AtomicUsize::new(0), job.n_tasks);
        assert_eq!(job.claim(&cursor, n, usize::MAX, 0), 0..1, "one at a time");
        cursor.store(usize::MAX - 4, Ordering::Relaxed);
        assert_eq!(job.claim(&cursor, n, 8, 0), usize::MAX - 4..usize::MAX - 3);
        for _ in 0..8 {
            assert!(job.claim(&cursor, n, 8, 0).is_empty(), "never wraps");
        }
    }

    #[test]
    fn homes_near_usize_max_tasks_hand_out_each_task_once_without_wrapping() {
        let f = Each(|_: usize| {});
        for n in [usize::MAX - 1000, usize::MAX - 1, usize::MAX] {
            let job = Job::new(&f, n, 2, Claims::FromHomes(None), &Liveness::new());
            assert!(job.homed, "{n} tasks");
            let cursors = Cursors::new();
            cursors.reset(&job);
            for home in 0..2 {
                let (cursor, end) = (cursors.home(home), job.claimable(home).end);
                // Two tasks before the home's end, each claim as long as it may be.
                cursor.store(end - 2, Ordering::Relaxed);
                let mut claimed = Vec::new();
                for _ in 0..4 {
                    claimed.push(job.claim(cursor, end, usize::MAX, usize::MAX));
                }
                let tasks: Vec<usize> = claimed.iter().flat_map(|r| r.clone()).collect();
                assert_eq!(
                    tasks,
                    [end - 2, end - 1],
                    "{n} tasks, home {home}: each once"
                );
                let left = cursor.load(Ordering::Relaxed);
                assert!(
                    left >= end,
                    "{n} tasks, home {home}: the cursor at {left} wrapped"
                );
                if job.max_chunk == 0 {
                    // A claim that loaded the cursor before the home ran out: the CAS
                    // takes nothing past the home's end (the next home's first task).
                    cursor.store(end, Ordering::Relaxed);
                    assert!(job.claim_one_without_overshoot(cursor, end).is_empty());
                    assert_eq!(cursor.load(Ordering::Relaxed), end);
                }
            }
        }
    }

    #[test]
    fn a_participant_claims_its_own_home_first_then_the_others_in_turn() {
        let order = std::sync::Mutex::new(Vec::new());
        let f = Each(|i: usize| order.lock().unwrap().push(i));
        let homed =
            |n, participants, claims| Job::new(&f, n, participants, claims, &Liveness::new()).homed;
        assert!(!homed(1000, 2, Claims::InOrder(None)), "asked for order");
        assert!(
            !homed(6, 2, Claims::FromHomes(None)),
            "too short to size chunks by the clock"
        );
        assert!(
            !homed(1000, MAX_HOMES + 1, Claims::FromHomes(None)),
            "more than MAX_HOMES"
        );
        // 1001 tasks on two participants: homes 0..501 and 501..1001.
        let job = Job::new(&f, 1001, 2, Claims::FromHomes(None), &Liveness::new());
        assert!(job.homed);
        assert_eq!((job.first_task(0), job.first_task(1)), (0, 501));
        assert_eq!((job.claimable(0), job.claimable(1)), (1..501, 502..1001));
        let cursors = Cursors::new();
        cursors.reset(&job);
        assert_eq!(job.unclaimed(&cursors), 999);
        // The helper alone: the rest of its home, then the caller's after its first task.
        let mut last = 0;
        let helper = Participant { rank: 1, worker: 1 };
        let ran = job.work(
            job.first_task_began(),
            helper,
            &cursors,
            &Panics::new(),
            &mut CountLast(&mut last),
        );
        assert_eq!((ran, last, job.unclaimed(&cursors)), (999, 1, 0));
        let expected: Vec<usize> = (502..1001).chain(1..501).collect();
        assert_eq!(*order.lock().unwrap(), expected);
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
            let cursors = Cursors::new();
            cursors.reset(&job); // as `Slot::publish` does
            let mut last = 0;
            let caller = Participant::CALLER;
            let ran = job.work(
                job.first_task_began(),
                caller,
                &cursors,
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
