//! Whether this thread is running a pool task (any pool's): a dispatch from inside a task
//! runs inline, so nested and cross-pool dispatches cannot deadlock.

use crate::sync;
use std::cell::Cell;

sync::const_thread_local! {
    static IN_TASK: Cell<bool> = Cell::new(false);
}

/// Whether the current thread is running a pool task.
#[inline]
pub(crate) fn in_task() -> bool {
    IN_TASK.with(Cell::get)
}

/// Runs `f` marked as a pool task, restoring the mark after.
#[inline(always)]
pub(crate) fn as_task<R>(f: impl FnOnce() -> R) -> R {
    let was = IN_TASK.with(|t| t.replace(true));
    let result = f();
    IN_TASK.with(|t| t.set(was));
    result
}

/// Marks the current (helper) thread as running pool tasks for its whole life.
pub(crate) fn mark_helper_thread() {
    IN_TASK.with(|t| t.set(true));
}
