//! The bind lock: serialises arena binding decisions across every `RayAlloc`, and is held
//! across `fork` so that a child never inherits it locked (glibc does the same with its
//! malloc arena locks: `__malloc_fork_lock_parent` / `__malloc_fork_unlock_child`).
//!
//! A plain `pthread_mutex_t`: it never allocates, and unlike a guard-based lock it can be
//! taken in the `pthread_atfork` prepare handler and released in the parent and child ones.

use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::{AtomicU8, Ordering};

struct Lock(UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be shared between threads; it is only ever used
// through `pthread_mutex_lock` / `pthread_mutex_unlock`, never moved.
unsafe impl Sync for Lock {}

static LOCK: Lock = Lock(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));

/// Whether the fork handlers are registered: `UNWATCHED`, `REGISTERING` (by one thread),
/// `WATCHING`. Not a `Once`, whose waiters block: a child forked while another thread
/// registered them would wait for that thread for ever.
static WATCH_FORK: AtomicU8 = AtomicU8::new(UNWATCHED);
const UNWATCHED: u8 = 0;
const REGISTERING: u8 = 1;
const WATCHING: u8 = 2;

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

std::thread_local! {
    /// Whether this thread holds the bind lock through a `BindGuard`. Const, no destructor:
    /// readable at any point of the thread's life.
    static HELD_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the bind lock held: taken for it, unless this thread holds it already (an
/// allocation re-entered from inside a section that holds it).
pub(crate) fn with_lock<R>(f: impl FnOnce() -> R) -> R {
    if HELD_HERE.with(Cell::get) {
        f()
    } else {
        let _lock = lock();
        f()
    }
}

/// Takes the bind lock. The first call registers the fork handlers (registration may
/// allocate; the callers bind inside `binding::bind`, whose re-entrant allocations go to the
/// main heap, or during thread exit, whose allocations do too). A call while another thread
/// registers them goes on without waiting: a fork in that moment is as unguarded as one
/// before any call.
pub(crate) fn lock() -> BindGuard {
    // Acquire and Release: not for memory (the handlers are glibc's to order), only so the
    // state is never seen going back.
    if WATCH_FORK.load(Ordering::Acquire) != WATCHING
        && WATCH_FORK
            .compare_exchange(UNWATCHED, REGISTERING, Ordering::Acquire, Ordering::Acquire)
            .is_ok()
    {
        // SAFETY: the handlers only lock and unlock `LOCK`, which lives as long as the
        // process; the forking thread takes it before fork and releases it on both sides.
        // A failure (ENOMEM) leaves fork as unsafe as it was without this module.
        unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(after_fork)) };
        WATCH_FORK.store(WATCHING, Ordering::Release);
    }
    lock_raw();
    HELD_HERE.with(|held| held.set(true));
    BindGuard(())
}

impl Drop for BindGuard {
    fn drop(&mut self) {
        HELD_HERE.with(|held| held.set(false));
        unlock_raw();
    }
}
