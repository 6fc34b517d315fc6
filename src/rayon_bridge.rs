//! The rayon bridge (feature `rayon`): code written for rayon gets the runtime's policy
//! without a rewrite. rayon's pool takes the width the runtime's pool has, its workers are
//! named, and worker k binds to the arena the runtime's helper k uses.

use crate::Runtime;
use std::fmt;
use std::sync::atomic::Ordering;

/// Why [`Runtime::init_rayon_global`] built no pool. The program carries on: rayon's global
/// pool is whatever was there before the call.
#[derive(Debug)]
pub struct RayonInitError {
    threads: usize,
    cause: rayon::ThreadPoolBuildError,
}

impl fmt::Display for RayonInitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = self.cause.to_string();
        write!(
            f,
            "cannot make rayon's global pool the runtime's ({} threads): rayon says \"{}\", \
             and keeps the pool it has (expected init_rayon_global once, before any rayon \
             call)",
            self.threads,
            cause.trim_end_matches('.')
        )
    }
}

impl std::error::Error for RayonInitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

impl Runtime {
    /// A rayon pool builder set up by the runtime: as many threads as the runtime's pool is
    /// wide (its policy's count, `rayforce.pool.workers` / `RAYFORCE_CORES`, the cgroup
    /// quota), named `rayforce-rayon-K`, and each worker bound to arena `K mod limit`, the
    /// arena the runtime's helper K uses (worker 0 shares arena 0 with the threads the
    /// runtime does not place, as the pool's caller does). The runtime's own pool is not
    /// built for this: its width is computed from the same reading and tunables. Further
    /// settings can be chained; `num_threads` overrides the width.
    ///
    /// ```no_run
    /// use rayforce_rt::{cpu::CpuPolicy, Runtime};
    ///
    /// #[global_allocator]
    /// static RT: Runtime = Runtime::new(CpuPolicy::Physical);
    ///
    /// let pool = RT.rayon_builder().build().unwrap();
    /// assert_eq!(pool.current_num_threads(), RT.pool().width());
    /// ```
    pub fn rayon_builder(&'static self) -> rayon::ThreadPoolBuilder {
        self.rayon_builder_of(self.pool_width())
    }

    /// `rayon_builder` for `threads` workers, the width read once by the caller.
    fn rayon_builder_of(&'static self, threads: usize) -> rayon::ThreadPoolBuilder {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|worker| format!("rayforce-rayon-{worker}"))
            .start_handler(move |worker| self.alloc.bind_current_thread(worker))
    }

    /// Builds rayon's global pool with [`rayon_builder`](Self::rayon_builder), so every
    /// `par_iter` and `join` outside an explicit pool runs on it; returns its width. Call it
    /// once, early in `main`: rayon's global pool is built only once, and if it already
    /// exists (an earlier call, or any rayon call before this one) this returns an error and
    /// changes nothing.
    ///
    /// ```no_run
    /// use rayforce_rt::{cpu::CpuPolicy, Runtime};
    /// use rayon::prelude::*;
    ///
    /// #[global_allocator]
    /// static RT: Runtime = Runtime::new(CpuPolicy::Physical);
    ///
    /// let threads = RT.init_rayon_global().expect("first rayon use");
    /// assert_eq!(rayon::current_num_threads(), threads);
    /// let sum: u64 = (0..1000u64).into_par_iter().sum();
    /// assert_eq!(sum, 499_500);
    /// ```
    pub fn init_rayon_global(&'static self) -> Result<usize, RayonInitError> {
        let threads = self.pool_width();
        self.rayon_builder_of(threads)
            .build_global()
            .map_err(|cause| RayonInitError { threads, cause })?;
        // Relaxed: a fact for `rayon_threads`; nothing is published through it.
        self.rayon_threads.store(threads, Ordering::Relaxed);
        Ok(threads)
    }

    /// The width of rayon's global pool if [`init_rayon_global`](Self::init_rayon_global)
    /// built it; `None` if it did not (rayon may still have built its own).
    pub fn rayon_threads(&self) -> Option<usize> {
        // Relaxed: as `init_rayon_global` stores it.
        let threads = self.rayon_threads.load(Ordering::Relaxed);
        (threads > 0).then_some(threads)
    }
}
