//! The fork gate: a `fork` waits while one of the pool's helpers starts or exits. Std
//! takes a process-wide lock as every thread starts and as it exits (the map its
//! stack-overflow handler reads); a child forked while a thread held it can never start a
//! thread, so a child's pool would wait forever for its first helper (README "Fork").
//! Threads the program starts itself are the program's to keep away from its forks.

#[cfg(all(unix, not(rayforce_loom)))]
mod imp {
    use std::cell::{Cell, UnsafeCell};
    use std::sync::Once;

    /// Passages in progress, under a mutex that the forking thread holds across `fork`.
    struct Gate {
        mutex: UnsafeCell<libc::pthread_mutex_t>,
        /// Signalled when `passing` drops to 0.
        emptied: UnsafeCell<libc::pthread_cond_t>,
        /// # Safety
        /// Read and written only with `mutex` held.
        passing: UnsafeCell<usize>,
    }

    // SAFETY: the mutex and condvar are made to be shared between threads and are only used
    // through pthread calls, never moved; `passing` is only touched under the mutex.
    unsafe impl Sync for Gate {}

    static GATE: Gate = Gate {
        mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
        emptied: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER),
        passing: UnsafeCell::new(0),
    };
    static WATCH: Once = Once::new();

    fn lock() {
        // SAFETY: an initialised mutex that lives as long as the process.
        unsafe { libc::pthread_mutex_lock(GATE.mutex.get()) };
    }

    fn unlock() {
        // SAFETY: called only by the thread that holds the mutex (after `lock`, or the
        // forking thread, which took it in `close_before_fork`).
        unsafe { libc::pthread_mutex_unlock(GATE.mutex.get()) };
    }

    /// The prepare handler: waits until no passage is in progress, then keeps the mutex, so
    /// that none starts until the fork is done.
    extern "C" fn close_before_fork() {
        lock();
        // SAFETY: the mutex is held (field `# Safety`); `pthread_cond_wait` releases and
        // retakes it around the wait.
        unsafe {
            while *GATE.passing.get() > 0 {
                libc::pthread_cond_wait(GATE.emptied.get(), GATE.mutex.get());
            }
        }
    }

    /// The parent and child handler. In the child nothing is passing either: the prepare
    /// handler waited until nothing was, and held off every new passage.
    extern "C" fn open_after_fork() {
        unlock();
    }

    /// A helper's start or exit, in progress: a fork waits until it is dropped.
    pub(crate) struct Passage(());

    impl Passage {
        /// Begins a passage, once no fork is in progress.
        ///
        /// The first call registers the fork handlers. Prepare handlers run in the reverse
        /// order of registration, and the gate's must run before that of the allocator's
        /// bind lock (`rayforce-alloc`), which a starting or exiting thread may wait for.
        /// That one registers on a thread's first allocation, so a caller allocates before
        /// its first `begin`.
        pub(crate) fn begin() -> Passage {
            WATCH.call_once(|| {
                // SAFETY: the handlers only take and release the gate's mutex and wait on
                // its condvar, which live as long as the process. A failure (ENOMEM) leaves
                // forks ungated, as they were without this module.
                unsafe {
                    libc::pthread_atfork(
                        Some(close_before_fork),
                        Some(open_after_fork),
                        Some(open_after_fork),
                    )
                };
            });
            lock();
            // SAFETY: the mutex is held (field `# Safety`).
            unsafe { *GATE.passing.get() += 1 };
            unlock();
            Passage(())
        }

        /// Ends the passage (as dropping it does).
        pub(crate) fn end(self) {}
    }

    impl Drop for Passage {
        fn drop(&mut self) {
            lock();
            // SAFETY: the mutex is held (field `# Safety`); the condvar lives as long as
            // the process.
            unsafe {
                *GATE.passing.get() -= 1;
                if *GATE.passing.get() == 0 {
                    libc::pthread_cond_broadcast(GATE.emptied.get());
                }
            }
            unlock();
        }
    }

    std::thread_local! {
        /// The exit passage of a helper that is ending: the first of its thread-locals
        /// dropped (the last one set), after std has taken the helper out of its map.
        static EXITING: Cell<Option<Passage>> = const { Cell::new(None) };
    }

    /// The calling helper is about to end: forks wait until its thread-locals start to be
    /// dropped.
    pub(crate) fn hold_until_exit() {
        let passage = Passage::begin();
        EXITING.with(|exiting| exiting.set(Some(passage)));
    }
}

#[cfg(any(not(unix), rayforce_loom))]
mod imp {
    /// No fork to hold off.
    pub(crate) struct Passage(());

    impl Passage {
        pub(crate) fn begin() -> Passage {
            Passage(())
        }

        pub(crate) fn end(self) {}
    }

    pub(crate) fn hold_until_exit() {}
}

pub(crate) use imp::{hold_until_exit, Passage};
