//! Unwinding never crosses the pool's shared state (README "Panics"): a panic payload that
//! will not be resumed is dropped where a second panic is caught too, and the steps that
//! other threads depend on abort the process rather than unwind through them.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// A caught panic's payload.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// Drops a payload that will not be resumed. Its `Drop` may panic: that panic is caught, and
/// its own payload is leaked rather than dropped (its `Drop` could panic in turn).
pub(crate) fn discard(payload: Panic) {
    if let Err(nested) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(nested);
    }
}

/// The message of a panic payload, when it has one (`panic!` with a literal or a format).
pub(crate) fn message(payload: &Panic) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
}

/// Aborts the process if it is dropped by unwinding: a step between posting a dispatch and
/// its caller returning, or a helper's loop, must never unwind (a helper could touch a freed
/// job, or a caller wait forever). Leave the guarded section with [`disarm`](Self::disarm).
pub(crate) struct AbortOnUnwind(
    #[cfg_attr(rayforce_loom, allow(dead_code))] pub(crate) &'static str,
);

impl AbortOnUnwind {
    /// The guarded section ended normally.
    pub(crate) fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for AbortOnUnwind {
    /// Under loom the panic goes on unwinding instead: loom reports it as the failing
    /// model (an abort would end the whole model run without naming it).
    #[cfg(rayforce_loom)]
    fn drop(&mut self) {}

    #[cfg(not(rayforce_loom))]
    fn drop(&mut self) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "rayforce-pool: {} unwound; aborting",
            self.0
        );
        std::process::abort();
    }
}
