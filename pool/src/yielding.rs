//! `yield_now` and `yield_local`: a thread inside a pool runs other pending work there
//! instead of waiting idle, as rayon's.

use crate::current;
use crate::detached;
use crate::joins;
use crate::mail;
use crate::shared::Shared;

/// What [`yield_now`] or [`yield_local`] did, as rayon's `Yield`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// Another piece of the pool's work ran on this thread.
    Executed,
    /// Nothing was pending that this thread could run.
    Idle,
}

/// Runs one piece of the current pool's pending work on this thread, if there is one:
/// the broadcasts' calls left for this thread if it is a helper, else a join's second half
/// on offer (another thread's, or one of this thread's own joins in progress, which that
/// join then finds done), else a spawned task waiting for a helper. As rayon's
/// `yield_now`: `None` if this thread is in no pool (in no task, helper or
/// [`install`](crate::Pool::install) of one), else whether something ran.
///
/// ```
/// assert_eq!(rayforce_pool::yield_now(), None, "not inside a pool");
/// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
/// let yielded = pool.install(rayforce_pool::yield_now);
/// assert!(yielded.is_some());
/// ```
#[must_use = "whether anything ran tells a waiting loop whether to back off"]
pub fn yield_now() -> Option<Yield> {
    current::map(|shared| shared.map(run_one))
}

/// rayon's `yield_local`, which runs a job of the thread's own queue. Here a thread's own
/// queue holds only the broadcasts' calls left for it, if it is a helper (its joins'
/// second halves are offered to every thread, and [`yield_now`] may run one): this runs
/// those. `None` if this thread is in no pool, else whether any ran.
///
/// ```
/// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
/// assert_eq!(
///     pool.install(rayforce_pool::yield_local),
///     Some(rayforce_pool::Yield::Idle)
/// );
/// ```
#[must_use = "whether anything ran tells a waiting loop whether to back off"]
pub fn yield_local() -> Option<Yield> {
    current::map(|shared| shared.map(|_| run_local()))
}

/// `yield_now` on `shared`'s pool, this thread in it.
pub(crate) fn run_one(shared: &Shared) -> Yield {
    if mail::open_own() || joins::run_an_offer(shared) || detached::run_one(shared) {
        Yield::Executed
    } else {
        Yield::Idle
    }
}

/// `yield_local`, this thread in a pool.
pub(crate) fn run_local() -> Yield {
    if mail::open_own() {
        Yield::Executed
    } else {
        Yield::Idle
    }
}
