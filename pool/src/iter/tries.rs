//! What the `try_` consumers and adaptors (`try_for_each`, `try_reduce`, `try_fold`, ...)
//! stand on: rayon's `Try`, the types `?` works on (`Option`, `Result`, `ControlFlow`), and
//! the first failure a participant met, which stops the others (through `while_some`) and
//! is the result: not necessarily the first in the items' order, as rayon's.

use std::convert::Infallible;
use std::ops::ControlFlow;
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

/// The first failure any participant met, kept as the `Try` value itself (which is `Send`
/// where its residual need not be).
pub(crate) struct FirstFailure<R>(Mutex<Option<R>>);

impl<R: Try> FirstFailure<R> {
    pub(crate) fn new() -> FirstFailure<R> {
        FirstFailure(Mutex::new(None))
    }

    /// `value`'s output, or `None` once its failure is kept (unless one was kept before).
    pub(crate) fn output(&self, value: R) -> Option<R::Output> {
        match value.branch() {
            ControlFlow::Continue(output) => Some(output),
            ControlFlow::Break(residual) => {
                // A panic elsewhere while holding the lock left the value whole.
                let mut first = self.0.lock().unwrap_or_else(PoisonError::into_inner);
                first.get_or_insert_with(|| R::from_residual(residual));
                None
            }
        }
    }

    /// The failure kept, if any.
    pub(crate) fn into_failure(self) -> Option<R> {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs `run`, which keeps in the failure it is given the first an item met; that failure,
/// else success.
pub(crate) fn until_failure<R: Try<Output = ()>>(run: impl FnOnce(&FirstFailure<R>)) -> R {
    let failure = FirstFailure::new();
    run(&failure);
    failure.into_failure().unwrap_or_else(|| R::from_output(()))
}
