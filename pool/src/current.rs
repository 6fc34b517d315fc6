//! The current pool of a thread (README "Joining"): inside a pool's task or helper, that
//! pool; inside `pool.install(..)`, that pool; otherwise none, and the free functions use
//! the default pool, built on first use.

use crate::shared::Shared;
use crate::sync;
use std::cell::Cell;

sync::const_thread_local! {
    static CURRENT: Cell<*const Shared> = Cell::new(std::ptr::null());
}

/// Runs `f` with `shared`'s pool current, restoring the one before after (also when `f`
/// unwinds).
#[inline]
pub(crate) fn with<R>(shared: &Shared, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|current| current.replace(shared));
    let _restore = Restore(before);
    f()
}

/// Makes `shared`'s pool current for the rest of the thread's life (a helper's).
pub(crate) fn set_for_thread(shared: &Shared) {
    CURRENT.with(|current| current.set(shared));
}

/// Leaves the pool made current by `set_for_thread` (a helper at its end): the thread's
/// last code, its thread-locals' destructors, runs in no pool.
pub(crate) fn leave_for_thread() {
    CURRENT.with(|current| current.set(std::ptr::null()));
}

/// Runs `f` with the current pool's shared state, if there is one.
#[inline]
pub(crate) fn map<R>(f: impl FnOnce(Option<&Shared>) -> R) -> R {
    let current = CURRENT.with(Cell::get);
    // SAFETY: a pointer stored by `with` lives until `with` returns (it borrows the
    // shared state for that long), and one stored by `set_for_thread` until its helper
    // thread calls `leave_for_thread`, before it drops its crew's `Arc<Shared>`.
    f(unsafe { current.as_ref() })
}

/// Puts the current pool back as it was before `with`.
struct Restore(*const Shared);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.0));
    }
}
