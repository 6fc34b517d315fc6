//! What makes a fold's accumulators: a closure (`fold`, `fold_chunks`), or clones of a
//! value (`fold_with`, `fold_chunks_with`).

use std::sync::Mutex;

/// The seal: [`Identity`] names the accumulator's type, so that [`Fold`](super::Fold) and
/// [`FoldChunks`](super::FoldChunks) have rayon's three type parameters.
pub(crate) mod sealed {
    /// Makes accumulators.
    pub trait Identity: Sync {
        /// The accumulator.
        type Accumulator;

        /// A fresh accumulator.
        fn make(&self) -> Self::Accumulator;
    }
}

use sealed::Identity;

impl<T, F: Fn() -> T + Sync> Identity for F {
    type Accumulator = T;

    fn make(&self) -> T {
        self()
    }
}

/// Clones of a value, for `fold_with` and `fold_chunks_with`: behind a lock, so that the
/// value need only be `Send` (as rayon asks), not `Sync`.
#[derive(Debug)]
pub struct CloneOf<T>(Mutex<T>);

impl<T> CloneOf<T> {
    pub(crate) fn new(value: T) -> CloneOf<T> {
        CloneOf(Mutex::new(value))
    }
}

impl<T: Clone> Clone for CloneOf<T> {
    fn clone(&self) -> Self {
        CloneOf::new(self.value())
    }
}

impl<T: Clone> CloneOf<T> {
    /// A clone of the value. A panic while cloning poisons nothing of value: the value is
    /// only read.
    fn value(&self) -> T {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl<T: Clone + Send> Identity for CloneOf<T> {
    type Accumulator = T;

    fn make(&self) -> T {
        self.value()
    }
}
