//! The helper thread's loop: wait for a permit, work on the dispatch it belongs to, detach.

use crate::pool::{mark_helper_thread, Shared, ThreadStart};
use crate::signal::Wait;
use crate::stats::Counters;
use crate::sync::Ordering;

pub(crate) fn run(shared: &Shared, index: usize, on_start: Option<ThreadStart>) {
    mark_helper_thread();
    if let Some(hook) = on_start {
        hook(index);
    }
    while let Wait::Attached { .. } = shared.signal.wait_for_permit(shared.spin_count) {
        Counters::bump(&shared.counters.wakeups);
        // Relaxed: the Acquire CAS that attached us ordered the caller's store (README step 3).
        let job = shared.job.load(Ordering::Relaxed);
        assert!(
            !job.is_null(),
            "attached to no dispatch: a permit outlived its dispatch"
        );
        // SAFETY: we are attached, so the dispatch that owns `job` has not returned and
        // will not until we detach (`Job`'s `# Safety`).
        let ran = unsafe { &*job }.work();
        if ran == 0 {
            Counters::bump(&shared.counters.empty_attachments);
        }
        shared.signal.detach();
    }
}
