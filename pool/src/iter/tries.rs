//! What the `try_` consumers and adaptors (`try_for_each`, `try_reduce`, `try_fold`, ...)
//! stand on: rayon's `Try`, the types `?` works on (`Option`, `Result`, `ControlFlow`), and
//! the first failure a participant met, which stops the others (through `while_some`) and
//! is the result: not necessarily the first in the items' order, as rayon's.

use std::convert::Infallible;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// The seal: [`Try`] is a trait of a private module, implemented here only, as rayon's.
pub(crate) mod sealed {
    use std::ops::ControlFlow;

    /// A value that either holds an output or is a failure (`std`'s unstable `Try`).
    pub trait Try {
        /// What a success holds.
        type Output;
        /// What a failure holds.
        type Residual;

        /// A success holding `output`.
        fn from_output(output: Self::Output) -> Self;

        /// The failure `residual` stands for.
        fn from_residual(residual: Self::Residual) -> Self;

        /// The output to go on with, or the failure to stop at.
        fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
    }
}

pub(crate) use sealed::Try;

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = Option<Infallible>;

    fn from_output(output: T) -> Self {
        Some(output)
    }

    fn from_residual(_: Option<Infallible>) -> Self {
        None
    }

    fn branch(self) -> ControlFlow<Option<Infallible>, T> {
        match self {
            Some(output) => ControlFlow::Continue(output),
            None => ControlFlow::Break(None),
        }
    }
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = Result<Infallible, E>;

    fn from_output(output: T) -> Self {
        Ok(output)
    }

    fn from_residual(residual: Result<Infallible, E>) -> Self {
        match residual {
            Err(error) => Err(error),
            Ok(never) => match never {},
        }
    }

    fn branch(self) -> ControlFlow<Result<Infallible, E>, T> {
        match self {
            Ok(output) => ControlFlow::Continue(output),
            Err(error) => ControlFlow::Break(Err(error)),
        }
    }
}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    type Residual = ControlFlow<B, Infallible>;

    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }

    fn from_residual(residual: ControlFlow<B, Infallible>) -> Self {
        match residual {
            ControlFlow::Break(value) => ControlFlow::Break(value),
            ControlFlow::Continue(never) => match never {},
        }
    }

    fn branch(self) -> ControlFlow<ControlFlow<B, Infallible>, C> {
        match self {
            ControlFlow::Continue(output) => ControlFlow::Continue(output),
            ControlFlow::Break(value) => ControlFlow::Break(ControlFlow::Break(value)),
        }
    }
}

/// Whether any participant met a failure: once set, the participants stop taking items
/// (they map each to `None` for `while_some`).
#[derive(Default)]
pub(crate) struct Failed(AtomicBool);

impl Failed {
    pub(crate) fn set(&self) {
        // Relaxed: a hint to stop early; what failed travels by other means (a lock, or
        // the reduction's result).
        self.0.store(true, Ordering::Relaxed);
    }

    pub(crate) fn is_set(&self) -> bool {
        // Relaxed: as in `set`.
        self.0.load(Ordering::Relaxed)
    }

    /// `value` unless a participant failed already (then `None`, to stop).
    pub(crate) fn pass<R: Try>(&self, value: R) -> Option<R> {
        (!self.is_set()).then(|| self.note(value))
    }

    /// `value`, the flag set if it is a failure.
    pub(crate) fn note<R: Try>(&self, value: R) -> R {
        match value.branch() {
            ControlFlow::Continue(output) => R::from_output(output),
            ControlFlow::Break(residual) => {
                self.set();
                R::from_residual(residual)
            }
        }
    }
}

/// The first failure any participant met, kept as the `Try` value itself (which is `Send`
/// where its residual need not be).
pub(crate) struct FirstFailure<R> {
    first: Mutex<Option<R>>,
    failed: Failed,
}

impl<R: Try> FirstFailure<R> {
    pub(crate) fn new() -> FirstFailure<R> {
        FirstFailure {
            first: Mutex::new(None),
            failed: Failed::default(),
        }
    }

    /// The output of `make()`, or `None` once its failure is kept (unless one was kept
    /// before), and without calling it once any failure was kept.
    pub(crate) fn output_of(&self, make: impl FnOnce() -> R) -> Option<R::Output> {
        if self.failed.is_set() {
            return None;
        }
        match make().branch() {
            ControlFlow::Continue(output) => Some(output),
            ControlFlow::Break(residual) => {
                // A panic elsewhere while holding the lock left the value whole.
                let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
                first.get_or_insert_with(|| R::from_residual(residual));
                self.failed.set();
                None
            }
        }
    }

    /// The failure kept, if any.
    pub(crate) fn into_failure(self) -> Option<R> {
        self.first
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs `run`, which keeps in the failure it is given the first an item met; that failure,
/// else success.
pub(crate) fn until_failure<R: Try<Output = ()>>(run: impl FnOnce(&FirstFailure<R>)) -> R {
    let failure = FirstFailure::new();
    run(&failure);
    failure.into_failure().unwrap_or_else(|| R::from_output(()))
}
