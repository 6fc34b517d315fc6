//! The bind lock: serialises arena binding decisions across every `RayAlloc`, and is held
//! across `fork` so that a child never inherits it locked (glibc does the same with its
//! malloc arena locks: `__malloc_fork_lock_parent` / `__malloc_fork_unlock_child`).
//!
//! A plain `pthread_mutex_t`: it never allocates, and unlike a guard-based lock it can be
//! taken in the `pthread_atfork` prepare handler and released in the parent and child ones.

use core::cell::UnsafeCell;
use std::sync::Once;

struct Lock(UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be shared between threads; it is only ever used
// through `pthread_mutex_lock` / `pthread_mutex_unlock`, never moved.
unsafe impl Sync for Lock {}

static LOCK: Lock = Lock(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
static WATCH_FORK: Once = Once::new();

fn lock_raw() {
    // SAFETY: `LOCK` is an initialised mutex that lives as long as the process.
    unsafe { libc::pthread_mutex_lock(LOCK.0.get()) };
}

fn unlock_raw() {
    // SAFETY: only called by the thread that holds `LOCK` (a `BindGuard`'s owner, or the
    // forking thread, which took it in `before_fork`).
    unsafe { libc::pthread_mutex_unlock(LOCK.0.get()) };
}

extern "C" fn before_fork() {
    lock_raw();
}

extern "C" fn after_fork() {
    unlock_raw();
}

/// Holds the bind lock until dropped.
pub(crate) struct BindGuard(());

/// Takes the bind lock. The first call registers the fork handlers (registration may
/// allocate; the callers bind inside `binding::bind`, whose re-entrant allocations go to the
/// main heap, or during thread exit, whose allocations do too).
pub(crate) fn lock() -> BindGuard {
    WATCH_FORK.call_once(|| {
        // SAFETY: the handlers only lock and unlock `LOCK`, which lives as long as the
        // process; the forking thread takes it before fork and releases it on both sides.
        // A failure (ENOMEM) leaves fork as unsafe as it was without this module.
        unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(after_fork)) };
    });
    lock_raw();
    BindGuard(())
}

impl Drop for BindGuard {
    fn drop(&mut self) {
        unlock_raw();
    }
}
