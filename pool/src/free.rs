//! The free functions of fork-join, on the current pool (README "Joining"): the pool whose
//! task, helper or `install` the thread is in, else the default pool.

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::current;
use crate::default_pool;
use crate::detached::spawn_in;
use crate::joins;
use crate::scope::{self, Scope, ScopeFifo};

/// Runs `a` and `b`, `b` possibly on another thread, and returns both results, as rayon's
/// `join`. Runs on the current pool: the pool whose task, helper or
/// [`install`](crate::Pool::install) this thread is in, else the default pool (the
/// runtime's when it is the global allocator, else built on first use from the CPU policy
/// and the tunables, as rayon's global pool).
///
/// `b` goes to another thread only if one of the pool's threads is idle when this join, or
/// a join inside `a`, looks, or runs out of work after a later look inside `a` left `b`
/// offered standing (pool README "Joining"); otherwise both run here, `a` then `b`, at the
/// cost of a few loads. So `a` must not wait for `b` (on a channel, a barrier): the join
/// may never return, as rayon warns for its own. A panic in either resumes here once both
/// finished (`a`'s, if both panicked).
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

/// Makes a scope on the current pool (see [`join`]), runs `op` in it on this thread, and
/// returns `op`'s result once every task spawned in the scope ran, as rayon's `scope`. Each
/// [`spawn`](Scope::spawn) starts its task at once on an idle thread of the pool (on this
/// one if every slot is taken; after the body if the pool has no other thread, as rayon's
/// one thread runs it); tasks may borrow what outlives the scope. A panic in `op` or in a
/// task resumes here once every task finished (`op`'s, if both panicked).
///
/// ```
/// let mut left = vec![0u64; 1000];
/// let mut right = vec![0u64; 1000];
/// rayforce_pool::scope(|s| {
///     s.spawn(|_| left.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64));
///     s.spawn(|_| right.iter_mut().for_each(|x| *x = 1));
/// });
/// assert_eq!(left.iter().sum::<u64>() + right.iter().sum::<u64>(), 499_500 + 1000);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    current::map(|shared| match shared {
        Some(shared) => scope::scope_in(shared, false, op),
        None => default_pool::get().scope(op),
    })
}

/// rayon's `in_place_scope`: [`scope`], whose body runs on the calling thread, as every
/// scope's here does.
///
/// ```
/// let mut sum = 0;
/// rayforce_pool::in_place_scope(|s| s.spawn(|_| sum += 1));
/// assert_eq!(sum, 1);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    current::map(|shared| match shared {
        Some(shared) => scope::scope_in(shared, false, op),
        None => default_pool::get().in_place_scope(op),
    })
}

/// rayon's `scope_fifo`: [`scope`], whose queued tasks are taken in the order they were
/// spawned, as every scope's here are ([`ScopeFifo`] is [`Scope`]; a task that a spawn
/// runs at once, with no helper to offer it to, starts then).
///
/// ```
/// let order = std::sync::Mutex::new(Vec::new());
/// let pool = rayforce_pool::Pool::builder().workers(1).build().unwrap();
/// pool.install(|| {
///     rayforce_pool::scope_fifo(|s| {
///         for i in 0..4 {
///             let order = &order;
///             s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///         }
///     })
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    scope(op)
}

/// rayon's `in_place_scope_fifo`: [`scope_fifo`], whose body runs on the calling thread.
///
/// ```
/// let mut sum = 0;
/// rayforce_pool::in_place_scope_fifo(|s| s.spawn_fifo(|_| sum += 2));
/// assert_eq!(sum, 2);
/// ```
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    in_place_scope(op)
}

/// Starts `op` on the current pool (see [`join`]) and returns at once, as rayon's `spawn`:
/// an idle helper of the pool runs it, else the first that becomes idle. `op` may outlive
/// this call, so it borrows nothing; a channel or a shared handle brings its result back.
/// A pool with no helper (one of a single thread, or resized to one) runs `op` here and
/// now, as it runs all its work on its caller. A panic in `op` goes to the pool's
/// [`panic_handler`](crate::PoolBuilder::panic_handler), else aborts the process (nobody
/// waits for the task), as rayon's. A pool dropped with spawned tasks queued or running
/// returns at once, and its helpers run them before they stop, as rayon's; the default
/// pool lives as long as the process, whose exit does not wait for them.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// for i in 0..4u64 {
///     let tx = tx.clone();
///     rayforce_pool::spawn(move || tx.send(i * i).unwrap());
/// }
/// drop(tx);
/// assert_eq!(rx.iter().sum::<u64>(), 14);
/// ```
pub fn spawn<OP>(op: OP)
where
    OP: FnOnce() + Send + 'static,
{
    current::map(|shared| match shared {
        Some(shared) => spawn_in(shared, op),
        None => default_pool::get().spawn(op),
    });
}

/// rayon's `spawn_fifo`: [`spawn`], whose tasks are taken in the order they were spawned,
/// as every spawned task here is.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// rayforce_pool::spawn_fifo(move || tx.send("done").unwrap());
/// assert_eq!(rx.recv().unwrap(), "done");
/// ```
pub fn spawn_fifo<OP>(op: OP)
where
    OP: FnOnce() + Send + 'static,
{
    spawn(op);
}

/// rayon's `broadcast`: runs `op` once on each thread of the current pool (see [`join`]),
/// and returns the results by [`index`](BroadcastContext::index). This thread runs index 0;
/// each of the pool's helpers below its width runs one more on its own thread, wherever it
/// next waits in the pool: between tasks, or blocked inside one (in a join, a dispatch, a
/// scope, a broadcast or a yield), as rayon's threads do. Inside a
/// task on one of the pool's helpers, that helper is index 0, and the thread whose region
/// the task belongs to, busy in it, is left out unless it is a helper too (pool README
/// "Broadcasts"). A panic in `op` resumes here once every call returned (the lowest
/// index's).
///
/// ```
/// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
/// let indices = pool.install(|| rayforce_pool::broadcast(|ctx| ctx.index()));
/// assert_eq!(indices, [0, 1]);
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    current::map(|shared| match shared {
        Some(shared) => broadcast_in(shared, op),
        None => default_pool::get().broadcast(op),
    })
}

/// rayon's `spawn_broadcast`: leaves a call of `op` for each helper of the current pool
/// (see [`join`]) and returns; each helper below the pool's width runs it on its own
/// thread wherever it next waits in the pool (this thread too, if it is one), its index
/// the helper's rank among them. Nothing spawned runs on its spawner while a helper can
/// take it, so the calls are one fewer than the pool's threads (rayon's: one per thread);
/// with no helper (a pool of one thread), `op` runs here and now, as [`spawn`]'s task does.
/// A panic goes to the pool's panic handler, else aborts the process; a pool dropped with
/// calls left returns at once, and its helpers run them before they stop (one that saw
/// the pool shut down already gets none).
///
/// ```
/// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// let tx = std::sync::Mutex::new(tx);
/// pool.install(|| {
///     rayforce_pool::spawn_broadcast(move |ctx| {
///         tx.lock().unwrap().send((ctx.index(), ctx.num_threads())).unwrap();
///     });
/// });
/// assert_eq!(rx.recv().unwrap(), (0, 1));
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    current::map(|shared| match shared {
        Some(shared) => spawn_broadcast_in(shared, op),
        None => default_pool::get().spawn_broadcast(op),
    });
}

/// The most threads a pool may have ([`MAX_WIDTH`](crate::MAX_WIDTH)), as rayon's
/// `max_num_threads`: a builder asked for more fails with
/// [`BuildError::OutOfRange`](crate::BuildError::OutOfRange) (rayon's lowers the count).
///
/// ```
/// assert!(rayforce_pool::current_num_threads() <= rayforce_pool::max_num_threads());
/// ```
#[must_use]
pub fn max_num_threads() -> usize {
    crate::MAX_WIDTH
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
        Some(shared) => shared.serving_width(),
        None => default_pool::get().width(),
    })
}

/// This thread's index in the current pool, as rayon's `current_thread_index`: on helper k
/// of the pool whose task or helper this thread is in, `Some(k)`; on a thread that takes
/// part as the caller of one of the pool's regions, or runs inside its
/// [`install`](crate::Pool::install), `Some(0)` (the caller is the pool's thread 0); outside
/// every pool, `None` (the default pool is not current until a region or `install` runs).
///
/// A thread's index does not change while it is in one pool. Threads of distinct pools
/// share indices, as rayon's do, and so do callers of one pool that run regions on it at
/// the same time (all are its thread 0). Indices are below the pool's
/// [`wide_width`](crate::Pool::wide_width), which is its width unless it has wide helpers.
///
/// ```
/// use rayforce_pool::current_thread_index;
/// let pool = rayforce_pool::Pool::builder().workers(3).build().unwrap();
/// assert_eq!(current_thread_index(), None);
/// assert_eq!(pool.install(current_thread_index), Some(0));
/// let mut seen = pool.broadcast(|_| current_thread_index().unwrap());
/// seen.sort();
/// assert_eq!(seen, [0, 1, 2]);
/// ```
#[must_use]
pub fn current_thread_index() -> Option<usize> {
    current::thread_index().map(|(_, index)| index)
}
