//! The helper thread's life: run the start hook, then wait for a permit, work on the
//! dispatch it belongs to, detach; until the pool shuts down or the process forked away.

use crate::claim::ClaimHooks;
use crate::current;
use crate::detached;
use crate::fork;
use crate::in_task::mark_helper_thread;
use crate::job::Job;
use crate::mail::{self, Mailbox};
use crate::shared::{Shared, ThreadStart};
use crate::signal::{Left, Wait};
use crate::spin::Gaps;
use crate::stats::Counters;
use crate::sync::Arc;
use crate::tasks::Participant;
use crate::unwind::{self, AbortOnUnwind};
use std::panic::{self, AssertUnwindSafe};

/// Helper `index`'s life, between its start and exit hooks, `hooks` (a panic in either goes
/// to the panic handler; without one, the start hook's fails the build, the exit hook's
/// aborts); it counts what it does in `counters`, its own, and reads the letters left in
/// `own`, its mailbox, which it closes at shutdown, then opens what is left before it stops
/// (in a forked child it only forgets it).
pub(crate) fn run(
    shared: &Shared,
    index: usize,
    (on_start, on_exit): (Option<ThreadStart>, Option<ThreadStart>),
    counters: &Counters,
    own: Arc<Mailbox>,
) {
    mark_helper_thread();
    current::set_for_thread(shared, index);
    mail::make_own(&own);
    if let Some(hook) = on_start {
        let failure = if detached::has_panic_handler(shared) {
            // As rayon's: the panic goes to the handler, and the helper serves.
            detached::run_as_spawned(shared, "a pool's start hook", || hook(index));
            None
        } else {
            match panic::catch_unwind(AssertUnwindSafe(|| hook(index))) {
                Ok(()) => None,
                Err(payload) => {
                    let message = unwind::message(&payload);
                    unwind::discard(payload);
                    Some(message)
                }
            }
        };
        let failed = failure.is_some();
        if failed {
            shared.mail.close(&own); // never counted as serving
            mail::forget_own();
        }
        shared.report_start(index, failure);
        if failed {
            return;
        }
    }
    let guard = AbortOnUnwind("a pool helper's loop");
    let mut forked_away = ForkedAway(shared.generation);
    let mut gaps = Gaps::default();
    // Helpers start looking at different slots, then each goes round (README "Sharing").
    let mut cursor = index;
    let mut last_job: Option<(usize, Job)> = None;
    let mut left = Left::Nothing;
    let mut closed = false;
    loop {
        let (slot, task, joinable, mut spun) = match (shared.signal).wait_for_permit(
            index,
            &own,
            &mut gaps,
            &mut cursor,
            counters,
            left,
        ) {
            Wait::Attached {
                slot,
                task,
                joinable,
                spun,
            } => (slot, task, joinable, spun),
            Wait::Mail => {
                if forked_away.stop() {
                    break;
                }
                own.open_all();
                if forked_away.stop() {
                    break; // a call forked: the child's only thread leaves the crew
                }
                left = Left::Nothing;
                continue;
            }
            // Closed at the first shutdown seen, the mailbox takes no more letters (their
            // posters open them), and the helper waits once more: for the letters left,
            // and the permits of tasks their calls spawned.
            Wait::Shutdown if forked_away.stop() => break, // touch none of its locks
            Wait::Shutdown if !closed => {
                shared.mail.close(&own);
                closed = true;
                continue;
            }
            Wait::Shutdown => break,
        };
        left = if joinable {
            // A join's half is a whole subtree of work: leave the spinners now, or the joins
            // of other threads would see an idle thread in this one all the while and offer
            // to it in vain (README "Joining"). A dispatch's first task starts first.
            if let Some(spun) = spun.take() {
                shared.signal.end_spin(spun, &mut gaps, counters);
            }
            Left::JoinOffer
        } else {
            Left::Dispatch
        };
        let attached = shared.signal.slot(slot);
        let job = match last_job {
            // Deliberately broken: a job kept from an earlier dispatch in this slot.
            Some((kept, job)) if crate::broken::variant!("stale_job") && kept == slot => job,
            _ => attached.job(),
        };
        last_job = Some((slot, job));
        if forked_away.stop() {
            break; // the old crew is abandoned here: touch none of its locks
        }
        // The permit's rank is its place in the dispatch; its index, its worker.
        let who = Participant {
            rank: task,
            worker: index,
        };
        let task = job.first_task(task);
        // The job is live: we are attached, so its dispatch has not returned and will not
        // until we detach (`Job`'s `# Safety`).
        let first_began = job.first_task_began();
        if !job.stopped() {
            job.run(who, task..task + 1, &attached.panics);
        }
        // What waiting for the permit taught, counted once the first task ran.
        Counters::bump(&counters.wakeups);
        if let Some(spun) = spun {
            shared.signal.end_spin(spun, &mut gaps, counters);
        }
        job.work(
            first_began,
            who,
            attached.cursors(),
            &attached.panics,
            &mut forked_away,
        );
        if forked_away.stop() {
            break;
        }
        shared.signal.detach(slot);
    }
    if let Some(hook) = on_exit.filter(|_| !forked_away.stop()) {
        detached::run_as_spawned(shared, "a pool's exit hook", || hook(index));
        // Tasks the hook spawned: the other helpers may have stopped already.
        while detached::run_one(shared) {}
    }
    // In a forked child, the parent's mailbox is only forgotten: another thread may have
    // held its lock.
    mail::forget_own();
    guard.disarm();
}

/// A helper's claiming hooks: in a child forked from inside one of this helper's tasks, this
/// thread is the child's only one: it claims no more of the parent's tasks, detaches and
/// exits (README "Fork"). Holds the generation the helper's crew runs in.
struct ForkedAway(u64);

impl ClaimHooks for ForkedAway {
    #[inline]
    fn stop(&self) -> bool {
        fork::generation() != self.0
    }
}
