//! `spawn`: rayon's `spawn`, a task that outlives its spawner (README "Spawns"). Each crew
//! keeps one detached scope, whose queue its helpers drain through the slot kept for
//! spawned tasks; a helper stops only once no permit is left, so dropping the pool runs
//! the tasks still queued.

use crate::in_task::as_task;
use crate::scope::Scope;
use crate::shared::{PanicHandler, Shared};

/// The crew's detached scope: `'static`, as the tasks it takes.
type Detached = Scope<'static>;

/// Gives `shared`'s crew its detached scope, as the crew starts: a task's panic goes to
/// `panic_handler`, else aborts the process.
pub(crate) fn keep_in(shared: &Shared, panic_handler: Option<PanicHandler>) {
    let kept = shared
        .spawns
        .set(Box::new(Detached::detached(shared, panic_handler)));
    debug_assert!(kept.is_ok(), "a crew's spawns are kept once");
}

/// Queues `task` in `shared`'s pool: an idle helper takes it at once, or the first that
/// becomes idle; with no helper that can take it (a pool of one thread, or resized to
/// one), it runs now on this thread.
pub(crate) fn spawn_in(shared: &Shared, task: impl FnOnce() + Send + 'static) {
    detached(shared).spawn(move |_| task());
}

/// Runs `task` (`what`, named in the abort's message) here as a task spawned on
/// `shared`'s pool: its panic goes to the pool's panic handler, else aborts the process
/// (`spawn_broadcast`'s calls, exit hooks).
pub(crate) fn run_as_spawned(shared: &Shared, what: &'static str, task: impl FnOnce()) {
    as_task(|| detached(shared).run_spawned(what, move |_| task()));
}

/// Whether `shared`'s pool has a panic handler (a start hook's panic goes to it then).
pub(crate) fn has_panic_handler(shared: &Shared) -> bool {
    detached(shared).has_panic_handler()
}

/// Counts a spawned broadcast's call on `shared`'s pool posted (`true`) or returned
/// (`false`): while any is, a dropped pool does not wait for its helpers (`busy`).
pub(crate) fn count_call(shared: &Shared, posted: bool) {
    detached(shared).count_call(posted);
}

/// Whether a task is queued in `shared`'s pool, a helper is running one, or a spawned
/// broadcast's call is posted and has not returned.
pub(crate) fn busy(shared: &Shared) -> bool {
    detached(shared).busy()
}

/// Runs one task queued in `shared`'s pool on this thread, if there is one: whether it
/// did (`yield_now`).
pub(crate) fn run_one(shared: &Shared) -> bool {
    detached(shared).run_one()
}

fn detached(shared: &Shared) -> &Detached {
    shared
        .spawns
        .get()
        .and_then(|kept| kept.downcast_ref())
        .expect("a crew keeps its spawns from its start")
}
