//! The free functions of fork-join, on the current pool (README "Joining"): the pool whose
//! task, helper or `install` the thread is in, else the default pool.

use crate::current;
use crate::default_pool;
use crate::joins;

/// Runs `a` and `b`, `b` possibly on another thread, and returns both results, as rayon's
/// `join`. Runs on the current pool: the pool whose task, helper or
/// [`install`](crate::Pool::install) this thread is in, else the default pool (built on
/// first use from the CPU policy and the tunables, as rayon's global pool).
///
/// `b` goes to another thread only if one of the pool's threads is idle when this join, or
/// a join inside `a`, looks (pool README "Joining"); otherwise both run here, `a` then `b`,
/// at the cost of a few loads. A panic in either resumes here once both finished (`a`'s,
/// if both panicked).
///
/// ```
/// fn sum(xs: &[u64]) -> u64 {
///     if xs.len() <= 1024 {
///         return xs.iter().sum();
///     }
///     let (left, right) = xs.split_at(xs.len() / 2);
///     let (a, b) = rayforce_pool::join(|| sum(left), || sum(right));
///     a + b
/// }
/// let xs: Vec<u64> = (0..100_000).collect();
/// assert_eq!(sum(&xs), 4_999_950_000);
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    current::map(|shared| match shared {
        Some(shared) => joins::join_in(shared, a, b),
        None => default_pool::get().join(a, b),
    })
}

/// The number of threads of the current pool (its width, the calling thread included): the
/// pool whose task, helper or [`install`](crate::Pool::install) this thread is in, else the
/// default pool (see [`join`](crate::join)). As rayon's `current_num_threads`.
///
/// ```
/// let pool = rayforce_pool::Pool::builder().workers(3).build().unwrap();
/// assert_eq!(pool.install(rayforce_pool::current_num_threads), 3);
/// assert!(rayforce_pool::current_num_threads() >= 1);
/// ```
#[must_use]
pub fn current_num_threads() -> usize {
    current::map(|shared| match shared {
        Some(shared) => shared.width(),
        None => default_pool::get().width(),
    })
}
