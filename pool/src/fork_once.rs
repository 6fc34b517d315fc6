//! `ForkOnceCell`: a value built once, on first use, that a forked child builds itself when
//! the fork came while another thread was building it (README "Fork"). A plain once-cell
//! (`std::sync::OnceLock`, `once_cell::sync::OnceCell`) makes that child wait forever for a
//! builder that exists only in its parent; `once_cell`'s race cells build the value again
//! in every racing thread (a second pool, its helpers started and dropped), so the crate
//! does not depend on `once_cell`.

use crate::fork;
use crate::sync::{self, AtomicU64, Ordering, UnsafeCell};
use std::mem::MaybeUninit;

/// No value, and nobody building one.
const EMPTY: u64 = 0;
/// The value is built.
const READY: u64 = 1;
/// A thread of fork generation `g` is building the value: the state is `BUILDING + g`.
const BUILDING: u64 = 2;

/// A value built once per process, on first use: by the first caller of
/// [`get_or_init`](Self::get_or_init), while the others wait for it.
///
/// Unlike a plain once-cell, a child process forked while another thread of its parent was
/// building the value does not wait for that build, which no thread of the child runs: its
/// caller builds the value itself. A child forked after the build keeps the parent's value
/// (a [`Pool`](crate::Pool) in it starts fresh helpers on next use). The runtime holds its
/// pool in one.
///
/// ```
/// use rayforce_pool::{ForkOnceCell, Pool};
/// static POOL: ForkOnceCell<Pool> = ForkOnceCell::new();
/// let pool = POOL.get_or_init(|| Pool::builder().workers(2).build().unwrap());
/// assert_eq!(pool.width(), 2);
/// assert!(std::ptr::eq(pool, POOL.get().unwrap()));
/// ```
pub struct ForkOnceCell<T> {
    /// `EMPTY`, `READY`, or `BUILDING + generation` (the builder's fork generation).
    state: AtomicU64,
    /// # Safety
    /// Written only by the caller that moved `state` to `BUILDING + g` in generation `g`,
    /// before it stores `READY` (Release); read only after loading `READY` (Acquire).
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the value is written once, by one thread, before it is published (field
// `# Safety`), then only shared: `T: Sync` makes sharing it sound, `T: Send` building it on
// one thread and dropping it on another.
unsafe impl<T: Send + Sync> Sync for ForkOnceCell<T> {}

/// The value once set, as `OnceLock`'s `Debug` shows it.
impl<T: std::fmt::Debug> std::fmt::Debug for ForkOnceCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut cell = f.debug_tuple("ForkOnceCell");
        match self.get() {
            Some(value) => cell.field(value),
            None => cell.field(&format_args!("<uninit>")),
        };
        cell.finish()
    }
}

impl<T> Default for ForkOnceCell<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ForkOnceCell<T> {
    /// An empty cell.
    #[cfg(not(rayforce_loom))]
    pub const fn new() -> ForkOnceCell<T> {
        ForkOnceCell {
            state: AtomicU64::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// An empty cell (loom's atomics cannot be built in a `const fn`).
    #[cfg(rayforce_loom)]
    pub fn new() -> ForkOnceCell<T> {
        ForkOnceCell {
            state: AtomicU64::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The value, if it is built.
    pub fn get(&self) -> Option<&T> {
        let ordering = if crate::broken::variant!("once_relaxed") {
            Ordering::Relaxed // deliberately broken: the value's writes may not be seen
        } else {
            // Acquire: pairs with the Release store of `READY` in `build`, so the value's
            // writes happen-before this read of it.
            Ordering::Acquire
        };
        // SAFETY: `READY` is stored only after the value was written (field `# Safety`).
        (self.state.load(ordering) == READY).then(|| unsafe { self.value_ref() })
    }

    /// The value, built by `build` if nobody built it yet; while another thread of this
    /// process builds it, waits. If `build` panics, the cell stays empty and the next
    /// caller builds it.
    pub fn get_or_init(&self, build: impl FnOnce() -> T) -> &T {
        match self.get() {
            Some(value) => value,
            None => self.build_or_wait(build),
        }
    }

    #[cold]
    fn build_or_wait(&self, build: impl FnOnce() -> T) -> &T {
        // A fork from now on bumps the generation, so a build interrupted by one is seen.
        fork::watch();
        let mut round = 0;
        loop {
            if let Some(value) = self.get() {
                return value;
            }
            let state = self.state.load(Ordering::Relaxed);
            let generation = fork::generation();
            // Empty, or being built by a thread of an earlier generation: of a parent
            // process, which has no thread here to finish it.
            let free = state == EMPTY || (state >= BUILDING && state - BUILDING != generation);
            // Relaxed: the winner publishes nothing until `READY`; losers read nothing.
            if free
                && self
                    .state
                    .compare_exchange(
                        state,
                        BUILDING + generation,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                return self.build(build);
            }
            sync::back_off(round);
            round = round.saturating_add(1);
        }
    }

    /// Builds the value (this caller won the state) and publishes it.
    fn build(&self, build: impl FnOnce() -> T) -> &T {
        /// Empties the cell if the build unwinds, so that the next caller builds it.
        struct EmptyOnUnwind<'a>(&'a AtomicU64);
        impl Drop for EmptyOnUnwind<'_> {
            fn drop(&mut self) {
                // Relaxed: no value was published.
                self.0.store(EMPTY, Ordering::Relaxed);
            }
        }
        let guard = EmptyOnUnwind(&self.state);
        let value = build();
        std::mem::forget(guard);
        // SAFETY: this caller holds the build (field `# Safety`): nobody else writes or
        // reads the value until `READY`. A value a parent's builder wrote before the fork
        // is overwritten, never dropped: it is leaked, as a stale crew is.
        self.value.with_mut(|slot| unsafe { (*slot).write(value) });
        // Release: pairs with the Acquire load in `get`.
        self.state.store(READY, Ordering::Release);
        // SAFETY: just written and published.
        unsafe { self.value_ref() }
    }

    /// # Safety
    /// The value must be built (`READY` loaded with Acquire, or written by this thread).
    unsafe fn value_ref(&self) -> &T {
        // SAFETY: built (the caller's promise) and never written again (field `# Safety`).
        self.value.with(|slot| unsafe { (*slot).assume_init_ref() })
    }
}

impl<T> Drop for ForkOnceCell<T> {
    fn drop(&mut self) {
        // Acquire: as in `get` (with `&mut self` nothing races; it keeps one way to read).
        if self.state.load(Ordering::Acquire) == READY {
            // SAFETY: built, and `&mut self` means nobody else holds a reference to it.
            self.value
                .with_mut(|slot| unsafe { (*slot).assume_init_drop() });
        }
    }
}
