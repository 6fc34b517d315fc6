//! The one door to concurrency primitives: std normally, loom under `--cfg rayforce_loom`,
//! so the same pool code runs on threads or inside loom's model checker.

#[cfg(not(rayforce_loom))]
mod imp {
    pub(crate) use std::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
    };
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use std::thread;

    /// One iteration of a spin-wait.
    pub(crate) fn spin_hint() {
        std::hint::spin_loop();
    }

    /// Offers this thread's CPU to another runnable thread (`sched_yield`); returns at once
    /// when none waits for it.
    pub(crate) fn yield_cpu() {
        std::thread::yield_now();
    }

    /// Waits a little, longer as `round` grows: for waits of milliseconds (a pool's build),
    /// spinning first, then yielding, then sleeping 100 us at a time.
    pub(crate) fn back_off(round: u32) {
        match round {
            0..16 => std::hint::spin_loop(),
            16..64 => std::thread::yield_now(),
            _ => std::thread::sleep(std::time::Duration::from_micros(100)),
        }
    }

    /// `std::cell::UnsafeCell` with loom's interface: every access is a closure, so that
    /// loom can check it against the others.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) const fn new(value: T) -> UnsafeCell<T> {
            UnsafeCell(std::cell::UnsafeCell::new(value))
        }

        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }

        pub(crate) fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }

    /// Monotonic time in nanoseconds. On Linux, since boot: on x86_64 the time-stamp
    /// counter, scaled (`tsc.rs`: 12 ns on this project's VM), else `monotonic_ns` (where
    /// `Instant::elapsed` and its conversion through `Duration` took 39); chunk sizing reads
    /// it several times per region.
    #[cfg(target_os = "linux")]
    #[inline]
    pub(crate) fn now_ns() -> u64 {
        #[cfg(target_arch = "x86_64")]
        return crate::tsc::now_ns(monotonic_ns);
        #[cfg(not(target_arch = "x86_64"))]
        monotonic_ns()
    }

    /// `CLOCK_MONOTONIC`: one vDSO call (30 ns on this project's VM).
    #[cfg(target_os = "linux")]
    pub(crate) fn monotonic_ns() -> u64 {
        clock_ns(libc::CLOCK_MONOTONIC)
    }

    /// Monotonic time in nanoseconds, to the kernel's tick (a few ms): for deadlines of a
    /// second, checked on every dispatch. Linux's coarse clock is a read of the vDSO's page,
    /// without the time-stamp counter; elsewhere, `now_ns`.
    #[cfg(target_os = "linux")]
    pub(crate) fn coarse_now_ns() -> u64 {
        clock_ns(libc::CLOCK_MONOTONIC_COARSE)
    }

    #[cfg(target_os = "linux")]
    fn clock_ns(clock: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is valid for writes; the clock ids passed are constants the kernel
        // knows.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
    }

    /// Monotonic time in nanoseconds since the first call in this process.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn now_ns() -> u64 {
        static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let elapsed = BASE.get_or_init(std::time::Instant::now).elapsed();
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn coarse_now_ns() -> u64 {
        now_ns()
    }
}

#[cfg(rayforce_loom)]
mod imp {
    pub(crate) use loom::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
    };
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use loom::thread;

    pub(crate) use loom::cell::UnsafeCell;

    /// One iteration of a spin-wait: loom must be told, or it explores the loop forever.
    pub(crate) fn spin_hint() {
        loom::thread::yield_now();
    }

    /// Nothing to loom: the spin's every poll already yields to it (`spin_hint`).
    pub(crate) fn yield_cpu() {}

    /// A wait of any length is one yield to loom.
    pub(crate) fn back_off(_round: u32) {
        loom::thread::yield_now();
    }

    loom::thread_local! {
        static CLOCK: std::cell::Cell<u64> = std::cell::Cell::new(0);
    }

    /// A per-thread counter that advances one microsecond per reading: the models never
    /// depend on real time, and a spin window of N microseconds is N readings.
    pub(crate) fn now_ns() -> u64 {
        CLOCK.with(|clock| {
            let now = clock.get() + 1_000;
            clock.set(now);
            now
        })
    }

    /// The same clock as `now_ns` under loom.
    pub(crate) fn coarse_now_ns() -> u64 {
        now_ns()
    }

    /// Preemptions a model explores when `LOOM_MAX_PREEMPTIONS` is not set: the bound
    /// `loom-tests/check.sh` runs at. loom's own default is no bound, under which the pool's
    /// models do not finish.
    const DEFAULT_PREEMPTIONS: usize = 3;

    /// `loom::model(f)`, bounded to `DEFAULT_PREEMPTIONS` unless `LOOM_MAX_PREEMPTIONS` (or
    /// loom's other variables) say otherwise: every model of the pool and of its API runs
    /// through this, so a plain `cargo test` under `--cfg rayforce_loom` ends.
    pub fn model<F: Fn() + Sync + Send + 'static>(f: F) {
        model_at_least(0, f);
    }

    /// `model(f)` exploring at least `preemptions`: for a model whose path of interest
    /// needs that many (it must stay small enough to end).
    pub(crate) fn model_at_least<F: Fn() + Sync + Send + 'static>(preemptions: usize, f: F) {
        let mut builder = loom::model::Builder::new();
        let bound = builder.preemption_bound.unwrap_or(DEFAULT_PREEMPTIONS);
        builder.preemption_bound = Some(bound.max(preemptions));
        builder.check(f);
    }
}

#[cfg(rayforce_loom)]
pub use imp::model;
pub(crate) use imp::*;

/// A thread-local with a constant initial value: `const { }` (one load, no lazy-init check),
/// except under loom, whose macro takes none.
macro_rules! const_thread_local {
    ($(#[$attr:meta])* static $name:ident: $ty:ty = $init:expr;) => {
        #[cfg(not(rayforce_loom))]
        std::thread_local! {
            $(#[$attr])*
            static $name: $ty = const { $init };
        }
        #[cfg(rayforce_loom)]
        loom::thread_local! {
            $(#[$attr])*
            #[allow(clippy::missing_const_for_thread_local)]
            static $name: $ty = $init;
        }
    };
}
pub(crate) use const_thread_local;

/// Atomics that loom need not explore, in both builds: they order nothing between the
/// pool's threads. Statistics counters (Relaxed counts), and the pointer to a pool's crew,
/// which is written before any other thread can see the pool and replaced only in a forked
/// child (there is no fork under loom). Each loom atomic multiplies the schedules a model
/// explores; these would add schedules without adding anything to check.
pub(crate) mod unmodeled {
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};
}

/// Locks `mutex`, ignoring poisoning: the pool's locks guard no data that a panic could
/// leave half-written (tasks' panics are caught before they reach a lock).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
