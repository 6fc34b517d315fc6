//! The caller's part of a region it posted (README "Dispatch", steps 3-5): posting the
//! permits, its first task, the tasks it claims beyond the participants' first ones,
//! withdrawing the permits once the last is claimed, and the first tasks of permits no
//! helper took. The policies that wake helpers it left asleep (`waking_late.rs`,
//! `stream.rs`) act at the claiming loop's named points.

use crate::claim::ClaimHooks;
use crate::fork;
use crate::job::Job;
use crate::shared::Shared;
use crate::site_rate::Site;
use crate::stats::Counters;
use crate::sync;
use crate::tasks::Participant;
use crate::waking_late;

/// The caller of a posted region, while it works on it.
pub(crate) struct Caller<'a> {
    shared: &'a Shared,
    slot: usize,
    job: &'a Job,
    permits: usize,
    /// Whether this region may leave sleeping helpers asleep at first (an operation's
    /// region long enough to size chunks by the clock).
    wakes_late: bool,
    /// Helpers were asleep when the permits were posted, and are left so for now.
    asleep: bool,
    /// The clock before the caller's first task (0 if the job does not read it).
    first_began: u64,
    /// The caller's work so far, by its last clock reading, and the tasks it ran in it.
    worked_ns: u64,
    worked_tasks: usize,
    /// The clock once the permits were posted (an operation's: else 0): the caller's rate
    /// for its site leaves the post's cost out (a `futex` call, or far more under a
    /// sanitizer, is no part of a task's).
    posted_ns: u64,
    /// An operation's call site, which learns the caller's rate (README "Regions too small
    /// to share").
    site: Option<Site>,
    /// Permits no helper took, once withdrawn.
    untaken: Option<u32>,
}

impl<'a> Caller<'a> {
    /// Step 3: posts `permits` in `slot`, whose job is published, for helpers up to
    /// `helper_limit`. Sleeping helpers are woken now unless `independent` tasks of a
    /// region sized by the clock let them be woken late, or a stream of short regions
    /// wakes them for the ones that follow (README "Streams of short regions"). An
    /// operation's `site` learns the caller's rate.
    // Always inlined, as `work`: out of line, the two calls and the moves of this struct
    // cost an empty dispatch about a quarter more instructions (`benches/instructions.py`).
    #[inline(always)]
    pub(crate) fn post(
        shared: &'a Shared,
        slot: usize,
        job: &'a Job,
        (permits, helper_limit): (usize, usize),
        (independent, site): (bool, Option<Site>),
        counters: &Counters,
    ) -> Caller<'a> {
        let signal = &shared.signal;
        let wakes_late = independent && job.sized_by_clock() && !job.wakes_at_post;
        // Read before the post: it times the caller's first task and dates the region for
        // the stream rule.
        let first_began = job.first_task_began();
        let mut asleep = signal.post(slot, permits as u32, helper_limit, !wakes_late);
        if asleep
            && signal
                .slot(slot)
                .stream
                .wakes(first_began, signal.block_cost())
        {
            asleep = false;
            Counters::bump(&counters.stream_wakeups);
            signal.wake_late(slot, first_began, true);
        }
        Caller {
            shared,
            slot,
            job,
            permits,
            wakes_late,
            asleep,
            first_began,
            worked_ns: 0,
            worked_tasks: 0,
            posted_ns: if site.is_some() { sync::now_ns() } else { 0 },
            site,
            untaken: None,
        }
    }

    /// Steps 4-5: the caller's first task, then the tasks beyond the participants' first
    /// ones, withdrawing the permits as soon as the last of those is claimed; then the first
    /// tasks whose permits no helper took. A helper that arrives after the caller ran its
    /// share takes no part, so a region too small to share runs on the caller alone, and the
    /// caller does not wait for it (README "Claiming").
    #[inline(always)]
    pub(crate) fn work(mut self) {
        let (job, caller) = (self.job, Participant::CALLER);
        let owned = self.shared.signal.slot(self.slot);
        job.run(caller, 0..1, &owned.panics);
        let ran = job.work(
            self.first_began,
            caller,
            owned.cursors(),
            &owned.panics,
            &mut self,
        );
        let untaken =
            self.untaken
                .unwrap_or_else(|| self.shared.signal.withdraw(self.slot)) as usize;
        if self.wakes_late {
            owned
                .stream
                .ran(self.first_began, self.worked_ns, untaken < self.permits);
        }
        if let Some(site) = self.site {
            // By the last tick, else by a reading now (a caller whose second claim was its
            // last, or that claimed a task at a time). A search that stopped may count
            // tasks it did not run: its rate reads low, and the next region's first
            // part, timed, corrects it (`solo.rs`).
            let (until_ns, tasks) = match self.worked_tasks {
                0 => (sync::now_ns(), ran + 1),
                // A tick's reading: `worked_ns` after `first_began`.
                tasks => (self.first_began + self.worked_ns, tasks),
            };
            site.learn(until_ns.saturating_sub(self.posted_ns), tasks);
        }
        let participants = job.participants;
        let untaken = if crate::broken::variant!("untaken_lost") {
            // Deliberately broken: the first task of one untaken permit is never run.
            (participants - untaken + 1).min(participants)..participants
        } else {
            participants - untaken..participants
        };
        if !untaken.is_empty() && !job.stopped() {
            job.run_first_tasks(caller, untaken, &owned.panics);
        }
    }
}

impl ClaimHooks for Caller<'_> {
    fn claimed_last(&mut self) {
        self.untaken = Some(self.shared.signal.withdraw(self.slot));
    }

    fn tick(&mut self, now_ns: u64, worked_ns: u64, ran: usize) {
        self.worked_ns = worked_ns;
        // Its first task, then `ran` claimed.
        self.worked_tasks = ran + 1;
        let signal = &self.shared.signal;
        // The time the tasks not yet claimed would take at the caller's rate so far.
        let left_ns = || {
            let unclaimed = self.job.unclaimed(signal.slot(self.slot).cursors()) as u128;
            let left = unclaimed * u128::from(worked_ns) / (ran + 1) as u128;
            u64::try_from(left).unwrap_or(u64::MAX)
        };
        // Not in a child forked from a task: the crew's lock may be held there.
        if self.asleep
            && self.shared.generation == fork::generation()
            && waking_late::worth_waking(worked_ns, left_ns(), signal.block_cost())
        {
            self.asleep = false;
            signal.wake_late(self.slot, now_ns - worked_ns, false);
        }
    }
}
