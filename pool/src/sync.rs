//! The one door to concurrency primitives: std normally, loom under `--cfg rayforce_loom`,
//! so the same pool code runs on threads or inside loom's model checker.

#[cfg(not(rayforce_loom))]
mod imp {
    pub(crate) use std::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
    };
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use std::thread;
    pub(crate) use std::thread_local;

    /// One iteration of a spin-wait.
    pub(crate) fn spin_hint() {
        std::hint::spin_loop();
    }
}

#[cfg(rayforce_loom)]
mod imp {
    pub(crate) use loom::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
    };
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use loom::thread;
    pub(crate) use loom::thread_local;

    /// One iteration of a spin-wait: loom must be told, or it explores the loop forever.
    pub(crate) fn spin_hint() {
        loom::thread::yield_now();
    }
}

pub(crate) use imp::*;

/// Locks `mutex`, ignoring poisoning: the pool's locks guard no data that a panic could
/// leave half-written (tasks' panics are caught before they reach a lock).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
