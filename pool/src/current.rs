//! The current pool of a thread (README "Joining"): inside a pool's task or helper, that
//! pool; inside `pool.install(..)`, that pool; otherwise none, and the free functions use
//! the default pool, built on first use. Also the thread's index in it.

use crate::shared::Shared;
use crate::sync;
use std::cell::Cell;

sync::const_thread_local! {
    static CURRENT: Cell<*const Shared> = Cell::new(std::ptr::null());
}

sync::const_thread_local! {
    /// On a helper, its pool and its index (1-based); elsewhere null and 0.
    static HELPER_OF: Cell<(*const Shared, usize)> = Cell::new((std::ptr::null(), 0));
}

/// Runs `f` with `shared`'s pool current, restoring the one before after (also when `f`
/// unwinds).
#[inline]
pub(crate) fn with<R>(shared: &Shared, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|current| current.replace(shared));
    let _restore = Restore(before);
    f()
}

/// Makes `shared`'s pool current for the rest of the thread's life, that of its helper
/// `index`.
pub(crate) fn set_for_thread(shared: &Shared, index: usize) {
    CURRENT.with(|current| current.set(shared));
    HELPER_OF.with(|helper| helper.set((shared, index)));
}

/// Leaves the pool made current by `set_for_thread` (a helper at its end): the thread's
/// last code, its thread-locals' destructors, runs in no pool.
pub(crate) fn leave_for_thread() {
    CURRENT.with(|current| current.set(std::ptr::null()));
    HELPER_OF.with(|helper| helper.set((std::ptr::null(), 0)));
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

/// The current pool and this thread's index in it: its helper index on one of the pool's
/// helpers, 0 on any other thread (the caller of the region or `install` it is in); `None`
/// outside every pool. The pointer is only compared, never read.
pub(crate) fn thread_index() -> Option<(*const Shared, usize)> {
    let current = CURRENT.with(Cell::get);
    if current.is_null() {
        return None;
    }
    let (helper_of, index) = HELPER_OF.with(Cell::get);
    Some((current, if helper_of == current { index } else { 0 }))
}

/// Puts the current pool back as it was before `with`.
struct Restore(*const Shared);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.0));
    }
}
