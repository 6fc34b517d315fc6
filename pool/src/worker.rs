//! The helper thread's life: run the start hook, then wait for a permit, work on the
//! dispatch it belongs to, detach; until the pool shuts down or the process forked away.

use crate::crew::{Shared, ThreadStart};
use crate::fork;
use crate::job::Job;
use crate::pool::mark_helper_thread;
use crate::signal::Wait;
use crate::spin::Gaps;
use crate::stats::Counters;
use crate::sync;
use crate::unwind::{self, AbortOnUnwind};
use std::panic::{self, AssertUnwindSafe};

pub(crate) fn run(shared: &Shared, index: usize, on_start: Option<ThreadStart>) {
    mark_helper_thread();
    if let Some(hook) = on_start {
        let failure = match panic::catch_unwind(AssertUnwindSafe(|| hook(index))) {
            Ok(()) => None,
            Err(payload) => {
                let message = unwind::message(&payload);
                unwind::discard(payload);
                Some(message)
            }
        };
        let failed = failure.is_some();
        shared.report_start(index, failure);
        if failed {
            return; // never counted as serving
        }
    }
    let guard = AbortOnUnwind("a pool helper's loop");
    // In a child forked from inside one of this helper's tasks, this thread is the child's
    // only one: it claims no more of the parent's tasks, detaches and exits (README "Fork").
    let forked_away = || fork::generation() != shared.generation;
    let mut gaps = Gaps::default();
    // Helpers start looking at different slots, then each goes round (README "Sharing").
    let mut cursor = index;
    let mut last_job: (usize, *const Job) = (usize::MAX, std::ptr::null());
    while let Wait::Attached(slot) =
        shared
            .signal
            .wait_for_permit(index, &mut gaps, &mut cursor, &shared.counters)
    {
        Counters::bump(&shared.counters.wakeups);
        let job = if cfg!(rayforce_loom_broken = "stale_job") && last_job.0 == slot {
            last_job.1 // deliberately broken: a job kept from an earlier dispatch in this slot
        } else {
            shared.signal.slot(slot).job()
        };
        last_job = (slot, job);
        assert!(
            !job.is_null(),
            "attached to no dispatch: a permit outlived its dispatch"
        );
        // SAFETY: we are attached, so the dispatch that owns `job` has not returned and
        // will not until we detach (`Job`'s `# Safety`).
        let ran = unsafe { &*job }.work(sync::now_ns(), forked_away);
        if forked_away() {
            break; // the old crew is abandoned here: touch none of its locks
        }
        if ran == 0 {
            Counters::bump(&shared.counters.empty_attachments);
        }
        shared.signal.detach(slot);
    }
    guard.disarm();
}
