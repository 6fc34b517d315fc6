//! `Panics`: the first panic of a dispatch (or of a region run on its caller alone,
//! `solo.rs`), kept lock-free where its tasks ran and resumed on its caller once the
//! dispatch is quiet (README "Panics").

use crate::sync::{AtomicPtr, Ordering};
use crate::unwind::{self, Panic};
use std::panic;
use std::ptr;

/// The first panic of a dispatch, boxed once more to fit a thin pointer; null if none.
/// Lock-free, so a child forked while a helper held it cannot find it locked (README
/// "Fork").
pub(crate) struct Panics(AtomicPtr<Panic>);

impl Default for Panics {
    fn default() -> Panics {
        Panics::new()
    }
}

impl Panics {
    #[inline]
    pub(crate) fn new() -> Panics {
        Panics(AtomicPtr::new(ptr::null_mut()))
    }

    /// Keeps `payload` if it is the first panic; otherwise discards it where its `Drop`
    /// cannot unwind into the protocol.
    pub(crate) fn keep_first(&self, payload: Panic) {
        let boxed = Box::into_raw(Box::new(payload));
        // Release: publishes the payload to `take`'s Acquire swap. A failed exchange reads
        // nothing through the pointer it sees.
        let kept =
            self.0
                .compare_exchange(ptr::null_mut(), boxed, Ordering::Release, Ordering::Relaxed);
        if kept.is_err() {
            // SAFETY: `boxed` came from `Box::into_raw` above and was not published.
            unwind::discard(*unsafe { Box::from_raw(boxed) });
        }
    }

    /// Whether a panic is kept (by this thread, or one whose writes it saw).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        // Relaxed: as `take`'s first load.
        !self.0.load(Ordering::Relaxed).is_null()
    }

    /// The first panic, if any, taken out.
    #[inline]
    pub(crate) fn take(&self) -> Option<Panic> {
        // Relaxed: most dispatches have no panic, and then the line is not written.
        if self.0.load(Ordering::Relaxed).is_null() {
            return None;
        }
        // Acquire: pairs with the Release in `keep_first`.
        let kept = self.0.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Box::into_raw` in `keep_first`, and the
        // swap took it out, so it is freed exactly once.
        (!kept.is_null()).then(|| *unsafe { Box::from_raw(kept) })
    }

    /// Resumes the first panic, if any (call when the dispatch is over and the pool is
    /// consistent).
    #[inline]
    pub(crate) fn resume(&self) {
        resume(self.take());
    }
}

/// Resumes `panic`, if any.
#[inline]
pub(crate) fn resume(panic: Option<Panic>) {
    if let Some(payload) = panic {
        panic::resume_unwind(payload);
    }
}

impl Drop for Panics {
    #[inline]
    fn drop(&mut self) {
        if let Some(payload) = self.take() {
            unwind::discard(payload);
        }
    }
}
