//! Fork awareness: a process-wide generation that a `pthread_atfork` child handler bumps,
//! so a pool can tell that the helpers it started do not exist in this process (README
//! "Fork"). Under loom there is no fork: the generation is a constant.

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
