//! `Runtime`: the global allocator and the owner of the pool, sized from one CPU reading.

use crate::report::Report;
use once_cell::sync::OnceCell;
use rayforce_alloc::{AllocStats, RayAlloc, Sizing};
use rayforce_pool::Pool;
use rayforce_tunables::cpu::CpuPolicy;
use rayforce_tunables::registry::Id;
use rayforce_tunables::{Choices, Environment, Tunables};
use std::alloc::{GlobalAlloc, Layout};

/// What the first allocation fixes; per-knob variables, read later, cannot change them.
const FIXED_AT_STARTUP: [Id; 4] = [Id::CpuPolicy, Id::CpuQuota, Id::ArenaMax, Id::ArenasPerCpu];

/// The allocator's arenas and the pool's width, from one CPU policy and one reading.
///
/// ```no_run
/// use rayforce_rt::{cpu::CpuPolicy, Runtime};
///
/// #[global_allocator]
/// static RT: Runtime = Runtime::new(CpuPolicy::Physical);
///
/// let squares: Vec<u64> = {
///     let out: Vec<std::sync::atomic::AtomicU64> = (0..8).map(|_| Default::default()).collect();
///     RT.pool().dispatch(8, |i| out[i].store((i * i) as u64, std::sync::atomic::Ordering::Relaxed));
///     out.into_iter().map(|a| a.into_inner()).collect()
/// };
/// assert_eq!(squares[3], 9);
/// ```
///
/// The first allocation reads the CPUs and `RAYFORCE_TUNABLES` (without allocating) and
/// fixes the arena limit; the pool, built on first use of [`pool`](Self::pool), takes the
/// same reading and policy, plus the per-knob variables (`RAYFORCE_CORES`, ...) for its own
/// knobs. Pool helper k binds to arena k mod the arena count.
pub struct Runtime {
    alloc: RayAlloc,
    /// The pool and the tunables it was built from (start-up ones plus variables).
    pool: OnceCell<(Pool, Tunables)>,
}

impl Runtime {
    /// Sized by `policy`; the environment may tune it.
    pub const fn new(policy: CpuPolicy) -> Runtime {
        Runtime::with_choices(Choices::new().policy(policy))
    }

    /// Sized by `policy`, ignoring the environment (`RAYFORCE_TUNABLES` and the per-knob
    /// variables): for programs that must behave the same wherever they run.
    pub const fn hermetic(policy: CpuPolicy) -> Runtime {
        Runtime::with_choices(
            Choices::new()
                .policy(policy)
                .environment(Environment::Ignore),
        )
    }

    /// Sized by what the program chose in code (see [`Choices`]).
    pub const fn with_choices(choices: Choices) -> Runtime {
        Runtime {
            alloc: RayAlloc::with_choices(choices),
            pool: OnceCell::new(),
        }
    }

    /// The pool, built on first use from the allocator's CPU reading and tunables. If its
    /// helper threads cannot be started, it runs every dispatch on the caller.
    pub fn pool(&'static self) -> &'static Pool {
        &self.pool_and_tunables().0
    }

    /// The tunables as finally resolved (start-up ones plus the per-knob variables), with
    /// every diagnostic about them. Builds the pool if it was not built yet.
    pub fn tunables(&'static self) -> &'static Tunables {
        &self.pool_and_tunables().1
    }

    fn pool_and_tunables(&'static self) -> &'static (Pool, Tunables) {
        self.pool.get_or_init(|| {
            let sizing = self.alloc.sizing();
            let arenas = sizing.limit;
            let tunables = sizing.tunables.with_variables_except(&FIXED_AT_STARTUP);
            // Strict mode holds the per-knob variables, read now, to the start-up rule.
            tunables.abort_if_strict();
            let pool = Pool::builder()
                .policy(sizing.policy)
                .cpu_counts(sizing.counts)
                .tunables(&tunables)
                .on_thread_start(move |helper| self.alloc.bind_current_thread(helper % arenas))
                .build()
                .unwrap_or_else(|_| {
                    Pool::builder()
                        .workers(1)
                        .wide_workers(1)
                        .build()
                        .expect("no threads to start")
                });
            (pool, tunables)
        })
    }

    /// What the first allocation decided: policy, reading, arena limit, tunables.
    pub fn sizing(&self) -> Sizing {
        self.alloc.sizing()
    }

    /// The allocator's arenas and their threads.
    pub fn alloc_stats(&self) -> AllocStats {
        self.alloc.stats()
    }

    /// The counts per policy, the quota, the chosen policy, the arena limit and the pool
    /// width: what `rayforce-rt inspect` prints for this process.
    pub fn report(&'static self) -> Report {
        let sizing = self.sizing();
        let pool = self.pool();
        let widths = (pool.width(), pool.wide_width());
        Report::new(
            &sizing.counts,
            &sizing.tunables,
            sizing.policy,
            sizing.limit,
            widths,
        )
    }
}

// SAFETY: every call goes to `RayAlloc`, a conforming allocator, unchanged.
unsafe impl GlobalAlloc for Runtime {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract passes through.
        unsafe { self.alloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.alloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { self.alloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.alloc.realloc(ptr, layout, new_size) }
    }
}
