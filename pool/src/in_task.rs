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

/// Runs `f` marked as a pool task, restoring the mark after, also when `f` unwinds (else
/// every later dispatch on this thread would run inline).
#[inline(always)]
pub(crate) fn as_task<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(IN_TASK.with(|t| t.replace(true)));
    f()
}

/// Puts the mark back as it was before `as_task`.
struct Restore(bool);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        IN_TASK.with(|t| t.set(self.0));
    }
}

/// Marks the current (helper) thread as running pool tasks for its whole life.
pub(crate) fn mark_helper_thread() {
    IN_TASK.with(|t| t.set(true));
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use std::panic;

    #[test]
    fn a_task_that_unwinds_leaves_the_thread_unmarked() {
        assert!(!in_task());
        let unwound = panic::catch_unwind(|| as_task(|| panic!("in the task")));
        assert!(unwound.is_err());
        assert!(!in_task(), "marked after unwinding");
        as_task(|| assert!(as_task(in_task), "nested"));
        assert!(!in_task());
    }
}
