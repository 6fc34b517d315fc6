//! `Runtime`: the global allocator and the owner of the pool, sized from one CPU reading.

use rayforce_alloc::{AllocStats, RayAlloc, Sizing};
use rayforce_pool::{ForkOnceCell, Pool};
use rayforce_tunables::cpu::CpuCounts;
use rayforce_tunables::cpu::CpuPolicy;
use rayforce_tunables::registry::Id;
use rayforce_tunables::{Choices, Environment, Tunables};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::AtomicBool;
#[cfg(feature = "rayon")]
use std::sync::atomic::AtomicUsize;

/// What the first allocation fixes; per-knob variables, read later, cannot change them.
const FIXED_AT_STARTUP: [Id; 6] = [
    Id::CpuPolicy,
    Id::CpuQuota,
    Id::ArenaMax,
    Id::ArenasPerCpu,
    Id::PurgeDelayMs,
    Id::Thp,
];

/// The allocator's arenas and the pool's width, from one CPU policy and one reading.
///
/// ```no_run
/// use rayforce_rt::prelude::*;
/// use rayforce_rt::{cpu::CpuPolicy, Runtime};
///
/// #[global_allocator]
/// static RT: Runtime = Runtime::new(CpuPolicy::Physical);
///
/// let squares: Vec<u64> = RT.pool().map(8, |i| (i * i) as u64);
/// assert_eq!(squares[3], 9);
/// ```
///
/// The first allocation reads the CPUs and `RAYFORCE_TUNABLES` (without allocating) and
/// fixes the arena limit; the pool, built on first use (of [`pool`](Self::pool), or of a
/// parallel operation outside any pool: it is the default pool), takes the same reading
/// and policy, plus the per-knob variables (`RAYFORCE_CORES`, ...) for its own knobs. Pool
/// helper k binds to arena k mod the arena limit in force when it starts.
///
/// Whoever calls its `GlobalAlloc` methods directly (they are `unsafe`), rather than
/// through `#[global_allocator]`, keeps [`RayAlloc`]'s contract, and one more: a runtime in
/// static memory (say inside a `static Mutex`) that served an allocation has offered its
/// pool as the default one, so it must never be moved out; dropping it aborts the process.
// `repr(C)` with the allocator first: its address is the runtime's, so the allocation fast
// path's ownership check compares the thread's binding with `self` as passed.
#[repr(C)]
pub struct Runtime {
    pub(crate) alloc: RayAlloc,
    /// The pool and the tunables it was built from (start-up ones plus variables). Built on
    /// first use; a child forked while another thread built it builds its own.
    pool: ForkOnceCell<(Pool, Tunables)>,
    /// Whether a thread's binding looked whether to offer the pool as the default one.
    pub(crate) offer_checked: AtomicBool,
    /// The width of rayon's global pool once `init_rayon_global` built it; 0 before.
    #[cfg(feature = "rayon")]
    pub(crate) rayon_threads: AtomicUsize,
}

impl core::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Runtime")
            .field("alloc", &self.alloc)
            .finish_non_exhaustive()
    }
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
            pool: ForkOnceCell::new(),
            offer_checked: AtomicBool::new(false),
            #[cfg(feature = "rayon")]
            rayon_threads: AtomicUsize::new(0),
        }
    }

    /// The pool, built on first use from the allocator's CPU reading and tunables. If some
    /// helper threads cannot be started, it runs with those that could (`pool().stats()`
    /// says why). It is the default pool, where parallel iterators, [`join`](crate::join),
    /// [`scope`](crate::scope) and [`current_num_threads`](crate::current_num_threads) run
    /// outside any pool, built by the first of them if this did not run before, when this
    /// runtime is the global allocator (the first runtime in static memory to allocate: it
    /// offers its pool then, on Linux) and the program chose no other default
    /// ([`Pool::set_default`], `ThreadPoolBuilder::build_global`) before.
    pub fn pool(&'static self) -> &'static Pool {
        &self.pool_and_tunables().0
    }

    /// Re-reads the CPUs now (allocation-free) and applies what changed: threads that bind
    /// an arena from now on get the new arena limit, the pool's widths follow the policy's
    /// count (unless set explicitly: in code, by `Pool::resize`, or by
    /// `rayforce.pool.workers`), and helpers a thread limit kept from starting are tried
    /// again. The pool does the same on its own at most every `rayforce.cpu.recheck_ms`, at
    /// dispatch start. Returns whether anything changed (helpers started included).
    pub fn refresh(&'static self) -> bool {
        self.pool().refresh()
    }

    /// The tunables as finally resolved (start-up ones plus the per-knob variables), with
    /// every diagnostic about them. Builds the pool if it was not built yet.
    pub fn tunables(&'static self) -> &'static Tunables {
        &self.pool_and_tunables().1
    }

    /// The width the pool has, or would have if built now (without building it).
    #[cfg(feature = "rayon")]
    pub(crate) fn pool_width(&'static self) -> usize {
        if let Some((pool, _)) = self.pool.get() {
            return pool.width();
        }
        let sizing = self.alloc.sizing();
        let tunables = sizing.tunables.with_variables_except(&FIXED_AT_STARTUP);
        rayforce_pool::widths(&tunables, sizing.policy, &sizing.counts).0
    }

    fn pool_and_tunables(&'static self) -> &'static (Pool, Tunables) {
        let unbuilt = self.pool.get().is_none();
        let built = self.pool.get_or_init(|| {
            let sizing = self.alloc.sizing();
            let tunables = sizing.tunables.with_variables_except(&FIXED_AT_STARTUP);
            // Strict mode holds the per-knob variables, read now, to the start-up rule.
            tunables.abort_if_strict();
            let pool = Pool::builder()
                .policy(sizing.policy)
                .cpu_counts(sizing.counts)
                .tunables(&tunables)
                // The arena limit in force when the helper starts: a helper the pool adds after
                // a reading widened it gets an arena of its own.
                .on_thread_start(move |helper| self.alloc.bind_current_thread(helper));
            // Placement (`rayforce.pool.place`) pins a helper before its start hook binds
            // its arena, and tells the node to prefer when it moves it later.
            #[cfg(target_os = "linux")]
            let pool = pool.on_place(move |helper, node| self.alloc.prefer_node(helper, node));
            let pool = pool
                .on_reading(move |counts| self.alloc.follow(counts))
                .best_effort()
                .build()
                .expect("a best-effort pool starts whatever helpers it can");
            (pool, tunables)
        });
        if unbuilt {
            built.0.set_default();
        }
        built
    }

    /// What the first allocation decided: policy, reading, arena limit, tunables.
    pub fn sizing(&self) -> Sizing {
        self.alloc.sizing()
    }

    /// The allocator's arenas and their threads.
    pub fn alloc_stats(&self) -> AllocStats {
        self.alloc.stats()
    }

    /// Returns freed memory to the system now ([`RayAlloc::collect`]).
    pub fn collect(&self) {
        self.alloc.collect();
    }

    /// The latest CPU reading: the pool's last re-reading (by [`refresh`](Self::refresh) or
    /// by its periodic re-check), or, before any, the first allocation's (which the pool is
    /// built from).
    pub fn reading(&self) -> CpuCounts {
        self.alloc.reading()
    }
}

// SAFETY: every call goes to `RayAlloc`, a conforming allocator, unchanged; the hook it
// calls when a thread binds allocates nothing.
unsafe impl GlobalAlloc for Runtime {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract passes through.
        unsafe { self.served().alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.served().alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { self.alloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.served().realloc(ptr, layout, new_size) }
    }
}
