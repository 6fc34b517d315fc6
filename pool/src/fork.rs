//! Fork awareness: a process-wide generation that a `pthread_atfork` child handler bumps,
//! so a pool can tell that the helpers it started do not exist in this process, and
//! [`PerProcess`], a value that a forked child replaces rather than use (README "Fork").
//! Under loom there is no fork: the generation is a constant.

use crate::sync::unmodeled::AtomicPtr;
use crate::sync::Ordering;

#[cfg(all(unix, not(rayforce_loom)))]
mod imp {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Once;

    /// Forks since the process started, counted in each child. A std atomic on purpose, not
    /// the `sync` shim's: it orders nothing between the pool's threads (the child handler
    /// runs on the only thread the child has, before `fork` returns).
    static GENERATION: AtomicU64 = AtomicU64::new(0);
    static WATCH: Once = Once::new();

    extern "C" fn bump_in_child() {
        // Relaxed: read later by this same thread, or by threads it starts (spawn orders it).
        GENERATION.fetch_add(1, Ordering::Relaxed);
    }

    /// Registers the child handler, once per process (children inherit it).
    pub(crate) fn watch() {
        WATCH.call_once(|| {
            // SAFETY: `bump_in_child` is async-signal-safe (one atomic add) and lives as
            // long as the process. A failure (ENOMEM) leaves forks undetected: the pool
            // then behaves as before this module existed.
            unsafe { libc::pthread_atfork(None, None, Some(bump_in_child)) };
        });
    }

    /// The current generation: 0 in the original process, one more in each child.
    #[inline]
    pub(crate) fn generation() -> u64 {
        GENERATION.load(Ordering::Relaxed)
    }
}

#[cfg(any(not(unix), rayforce_loom))]
mod imp {
    pub(crate) fn watch() {}

    pub(crate) fn generation() -> u64 {
        0
    }
}

pub(crate) use imp::{generation, watch};

/// A value that belongs to one process: a child forked from it makes its own on first use
/// and leaks the parent's, whose locks may be held by threads the child does not have and
/// into which a task in flight at the fork may still point. The pool's crew and placement
/// state live in one.
pub(crate) struct PerProcess<T> {
    /// # Safety
    /// Always a pointer from `Box::into_raw`. Freed only by `Drop`, and only in the
    /// generation it was made in; a value replaced after a fork is leaked, so a `&T` read
    /// from `&self` stays valid as long as that borrow.
    current: AtomicPtr<OfGeneration<T>>,
}

struct OfGeneration<T> {
    generation: u64,
    value: T,
}

impl<T> PerProcess<T> {
    /// `value`, this process's.
    pub(crate) fn new(value: T) -> PerProcess<T> {
        watch();
        let generation = generation();
        PerProcess {
            current: AtomicPtr::new(Box::into_raw(Box::new(OfGeneration { generation, value }))),
        }
    }

    /// This process's value; in a child, the first call makes it with `fresh`, from the
    /// parent's (read only: nothing in it may be locked or dropped).
    #[inline]
    pub(crate) fn get(&self, fresh: impl FnOnce(&T) -> T) -> &T {
        // Acquire: pairs with the Release exchange in `replace`: a value is built before
        // it is read.
        let current = self.current.load(Ordering::Acquire);
        // SAFETY: see the field's `# Safety`.
        let current = unsafe { &*current };
        if current.generation == generation() {
            &current.value
        } else {
            self.replace(current, fresh)
        }
    }

    /// This process's value if it has one: `None` in a child that has not made its own.
    #[inline]
    pub(crate) fn peek(&self) -> Option<&T> {
        // Acquire: as in `get`.
        let current = self.current.load(Ordering::Acquire);
        // SAFETY: see the field's `# Safety`.
        let current = unsafe { &*current };
        (current.generation == generation()).then_some(&current.value)
    }

    /// In a forked child: replaces the parent's value with `fresh(&stale)`, leaking it.
    #[cold]
    fn replace(&self, stale: &OfGeneration<T>, fresh: impl FnOnce(&T) -> T) -> &T {
        let generation = generation();
        let value = fresh(&stale.value);
        let fresh = Box::into_raw(Box::new(OfGeneration { generation, value }));
        let stale = stale as *const OfGeneration<T> as *mut OfGeneration<T>;
        // AcqRel: the Release publishes the fresh value to `get`'s Acquire; on failure,
        // the Acquire reads the winner's. A racing replacement that lost frees its own
        // value, never published.
        let won = self
            .current
            .compare_exchange(stale, fresh, Ordering::AcqRel, Ordering::Acquire);
        match won {
            // SAFETY: `fresh` is now the published value (field `# Safety`).
            Ok(_) => unsafe { &(*fresh).value },
            Err(current) => {
                // SAFETY: `fresh` was never published; `current` is the winner's.
                drop(unsafe { Box::from_raw(fresh) });
                // SAFETY: see the field's `# Safety`.
                unsafe { &(*current).value }
            }
        }
    }
}

impl<T> Drop for PerProcess<T> {
    /// Drops the value in the process that made it; a parent's, in a child that never used
    /// it, is leaked.
    fn drop(&mut self) {
        let current = self.current.load(Ordering::Acquire);
        // SAFETY: `&mut self`: no borrow of the value is left (field `# Safety`).
        let current = unsafe { Box::from_raw(current) };
        if current.generation != generation() {
            std::mem::forget(current);
        }
    }
}

/// Aborts a child forked from inside `what` (an operation, a `join`, a `scope`), saying
/// why: a thread of the parent may have been halfway through writing what the caller's
/// frames own (through a `&mut` that a task borrowed), and unwinding would hand it to their
/// code to read and drop (a double free, for an item whose old value was dropped and new
/// one not yet written). A child that forks to `exec` or to `_exit` never gets here.
#[cold]
pub(crate) fn abort_child(what: &str) -> ! {
    // Straight to the descriptor: another thread of the parent may have held standard
    // error's lock at the fork, and nothing here may allocate.
    let parts: [&[u8]; 3] = [
        b"rayforce-pool: a task forked inside `",
        what.as_bytes(),
        b"`: in the child, what the parent's other threads were writing is in an unknown \
          state; aborting the child\n",
    ];
    for part in parts {
        // SAFETY: writing a live buffer of `part.len()` bytes to standard error.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
    std::process::abort();
}
