//! `RayAlloc`: the `GlobalAlloc` over policy-sized mimalloc arenas.

use crate::arenas::{arena_limit, Arenas, Sizing};
use crate::bind_lock;
use crate::binding::{self, Target};
use crate::ffi;
use crate::stats::AllocStats;
use core::alloc::{GlobalAlloc, Layout};
use core::marker::PhantomPinned;
use core::time::Duration;
use rayforce_tunables::cpu::{CpuCounts, CpuPolicy};
use rayforce_tunables::Choices;

/// A global allocator on mimalloc v3 whose arena count follows a CPU policy.
///
/// Arena 0 is mimalloc's main heap: a thread joins it on its first allocation, so threads
/// that come and go share one pool of pages and the process holds what raw mimalloc holds.
/// Arenas 1.. are for threads placed with [`bind_current_thread`](Self::bind_current_thread):
/// the runtime's pool puts helper k on arena k.
///
/// ```
/// use rayforce_alloc::RayAlloc;
/// use rayforce_tunables::cpu::{CpuCounts, CpuPolicy};
/// #[global_allocator]
/// static ALLOC: RayAlloc = RayAlloc::with_policy(CpuPolicy::Physical);
/// let v = vec![1u8; 100];
/// assert_eq!(ALLOC.stats().arenas_created, 1);
/// ```
///
/// Arena limit: `rayforce.malloc.arena_max`, else `arenas_per_cpu x count(policy)`, fixed
/// on the first allocation. With `rayforce.tunables.strict=1`, an invalid `RAYFORCE_TUNABLES`
/// entry aborts the process there, after writing every diagnostic to standard error. An
/// instance must outlive the threads bound to it: dropping one waits a second for them to
/// exit (a scoped thread's exit runs after `std::thread::scope` returned), then aborts the
/// process if one is still bound (a `static`, the usual home of a global allocator, is
/// never dropped).
/// A thread's first allocation through an instance binds it there: whoever calls its
/// `GlobalAlloc` methods directly (they are `unsafe`) must neither move nor forget it while
/// such a thread lives.
// `repr(C)` with the arenas first: their address is the instance's, so the fast path's
// ownership check compares the thread's binding with `self` as passed, with no offset to add.
#[repr(C)]
pub struct RayAlloc {
    arenas: Arenas,
    choices: Choices,
    /// Bound threads reach the arenas through a shared pointer until they detach, which
    /// may be while `drop` holds `&mut self`: `!Unpin` keeps that `&mut` from claiming
    /// the memory as unique (no `noalias`), as the instance's contract (it must not move
    /// while threads are bound) already says.
    _bound_threads_alias: PhantomPinned,
}

impl Default for RayAlloc {
    fn default() -> Self {
        Self::new()
    }
}

impl RayAlloc {
    /// Sized by physical cores.
    pub const fn new() -> RayAlloc {
        RayAlloc::with_policy(CpuPolicy::Physical)
    }

    /// Sized by `policy` (which `rayforce.cpu.policy` in `RAYFORCE_TUNABLES` overrides).
    pub const fn with_policy(policy: CpuPolicy) -> RayAlloc {
        RayAlloc::with_choices(Choices::new().policy(policy))
    }

    /// Sized by what the program chose in code (policy, `arena_max`, `arenas_per_cpu`,
    /// whether the environment is read), below `RAYFORCE_TUNABLES` as always.
    pub const fn with_choices(choices: Choices) -> RayAlloc {
        RayAlloc {
            choices,
            arenas: Arenas::new(),
            _bound_threads_alias: PhantomPinned,
        }
    }

    /// Places the calling thread on arena `arena % limit` (the pool puts helper k on arena
    /// k), replacing any binding it had. For long-lived threads: the pages a thread leaves
    /// when it exits are reclaimed only by threads of the same arena. `'static`: the thread
    /// keeps the instance's address until it exits or binds elsewhere, so an instance that
    /// moved or was forgotten meanwhile would be written through a dangling pointer.
    pub fn bind_current_thread(&'static self, arena: usize) {
        if let Some(sizing) = self.arenas.sizing(&self.choices) {
            let limit = self.arenas.limit(&sizing);
            binding::bind(&self.arenas, || self.arenas.attach_to(arena, limit));
        }
    }

    /// Points the heap of arena `arena % limit` (the arena helper `arena` binds) at NUMA
    /// node `node`'s memory, `None` clearing it: the pool's placement calls this for each
    /// helper it pins when its plan spans several nodes. Arena 0, mimalloc's main heap that
    /// every unplaced thread shares, keeps no node; an arena not created yet is skipped
    /// (the helper binds it after this). Two helpers on different nodes that share an arena
    /// (more helpers than arenas) leave it with the later one's node.
    pub fn prefer_node(&self, arena: usize, node: Option<usize>) {
        let Some(sizing) = self.arenas.sizing(&self.choices) else {
            return;
        };
        let index = arena % self.arenas.limit(&sizing);
        if index == 0 || index >= self.arenas.created() {
            return;
        }
        // SAFETY: a created arena's heap stays live until the allocator drops.
        unsafe { ffi::set_heap_node(self.arenas.heap(index), node) };
    }

    /// What the first allocation decided (deciding it now if nothing was allocated yet).
    pub fn sizing(&self) -> Sizing {
        loop {
            if let Some(sizing) = self.arenas.sizing(&self.choices) {
                return sizing;
            }
            // Another thread is deciding it, which takes microseconds and calls nothing
            // that could come back here.
            std::hint::spin_loop();
        }
    }

    /// Follows a new CPU reading: threads placed from now on get at most the arena limit it
    /// gives (`arena_max`, else `arenas_per_cpu` x the policy's count, within the fixed
    /// table); threads already placed keep their arena. Returns whether the limit changed.
    /// Allocation-free.
    pub fn follow(&self, counts: &CpuCounts) -> bool {
        let sizing = self.sizing();
        let count = counts.count(sizing.policy, sizing.tunables.quota_cap());
        let limit = arena_limit(&sizing.tunables, count);
        self.arenas.follow(&sizing, counts, limit)
    }

    /// The CPU reading the arena limit follows now: the last one passed to
    /// [`follow`](Self::follow), else the first allocation's. Allocation-free; a child
    /// forked while another thread followed a reading reads it whole (the lock it takes is
    /// held across `fork`).
    pub fn reading(&self) -> CpuCounts {
        self.arenas.reading(&self.sizing())
    }

    /// Returns freed memory to the system now, whatever `rayforce.malloc.purge_delay_ms`
    /// says (for a server after a burst): the calling thread's free pages in every arena,
    /// and every free span of the process. Other threads' own free pages go back when they
    /// next collect, as mimalloc does every few thousand allocations.
    pub fn collect(&self) {
        // Under the bind lock: collecting a heap makes the thread's theap for it, under
        // mimalloc's locks that no fork may copy held (`binding.rs`'s note).
        binding::make_thread_state();
        bind_lock::with_lock(|| {
            // SAFETY: mi_collect has no preconditions.
            unsafe { ffi::mi_collect(true) };
            for index in 0..self.arenas.created() {
                // SAFETY: the heap of a created arena is live (heaps are deleted only on
                // drop, which waits for the bind lock).
                unsafe { ffi::mi_heap_collect(self.arenas.heap(index), true) };
            }
        });
    }

    /// The arena limit for threads placed now (the first allocation's, until a CPU reading
    /// changed it). Allocation-free, unlike [`stats`](Self::stats).
    pub fn limit(&self) -> usize {
        self.arenas.limit(&self.sizing())
    }

    /// Policy, CPU count, limit, arenas created, threads per arena, diagnostics.
    pub fn stats(&self) -> AllocStats {
        AllocStats::of(&self.sizing(), &self.arenas)
    }

    /// This allocator, calling `on_bind` on each thread right after one of its allocations
    /// bound it to this instance: once per thread and binding, outside any lock the binding
    /// took, never while a thread cannot bind (re-entered during its binding, or exiting).
    /// For an owner that must learn, without a cost per allocation, that it serves
    /// allocations: the runtime offers its pool as the default one there.
    ///
    /// ```
    /// use rayforce_alloc::RayAlloc;
    /// use std::alloc::{GlobalAlloc, Layout};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static ALLOC: RayAlloc = RayAlloc::new();
    /// static BINDS: AtomicUsize = AtomicUsize::new(0);
    /// let counted = ALLOC.on_bind(|| {
    ///     BINDS.fetch_add(1, Ordering::Relaxed);
    /// });
    /// let layout = Layout::new::<u64>();
    /// for _ in 0..2 {
    ///     // SAFETY: a non-zero-size layout; the block goes back to the allocator it came from.
    ///     unsafe { counted.dealloc(counted.alloc(layout), layout) };
    /// }
    /// assert_eq!(BINDS.load(Ordering::Relaxed), 1);
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn on_bind<F: Fn() + Copy>(&self, on_bind: F) -> OnBind<'_, F> {
        OnBind {
            alloc: self,
            on_bind,
        }
    }

    /// Runs `op` with where the calling thread allocates, binding it first if needed (then
    /// calling `on_bind` if it bound). Both paths end in a tail call, so the fast one saves
    /// no registers.
    #[inline(always)]
    fn with_target<R>(&self, on_bind: impl FnOnce(), op: impl FnOnce(Target) -> R) -> R {
        match binding::bound(&self.arenas) {
            Some(target) => op(target),
            None => self.unbound(on_bind, op),
        }
    }

    #[cold]
    #[inline(never)]
    fn unbound<R>(&self, on_bind: impl FnOnce(), op: impl FnOnce(Target) -> R) -> R {
        // Bound only when the binding completed: a re-entered or exiting thread is not.
        match self.bind_slow() {
            Some(target) => {
                on_bind();
                op(target)
            }
            None => binding::on_main_heap(op),
        }
    }

    fn bind_slow(&self) -> Option<Target> {
        // Arena 0 (mimalloc's main heap) for every thread not placed elsewhere: pages a
        // thread strands when it exits are reclaimed only within their heap, so threads
        // that come and go must share one (BENCHMARKS.md, "Resident memory after churn").
        self.arenas
            .sizing(&self.choices)
            .and_then(|_| binding::bind(&self.arenas, || self.arenas.attach_to(0, 1)))
    }
}

/// The alignment every mimalloc block has: up to it, the unaligned theap calls serve.
const WORD_ALIGN: usize = core::mem::align_of::<usize>();

/// A [`RayAlloc`] that calls a hook when a thread binds to it ([`RayAlloc::on_bind`]).
pub struct OnBind<'a, F> {
    alloc: &'a RayAlloc,
    on_bind: F,
}

impl<F> core::fmt::Debug for OnBind<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OnBind").finish_non_exhaustive()
    }
}

// SAFETY: every block comes from a live mimalloc heap with the requested size and alignment
// (the `_aligned` calls, as the `mimalloc` crate makes them), or is null on failure;
// `mi_free` and `mi_heap_realloc_aligned` accept blocks of any heap, from any thread.
unsafe impl<F: Fn() + Copy> GlobalAlloc for OnBind<'_, F> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.alloc
            .with_target(self.on_bind, move |target| {
                // SAFETY: the theap is the calling thread's, and valid memory (referenced while
                // bound, else just looked up); `Layout` guarantees a power-of-two alignment.
                unsafe { ffi::mi_theap_malloc_aligned(target.theap, layout.size(), layout.align()) }
            })
            .cast()
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.alloc
            .with_target(self.on_bind, move |target| {
                if layout.align() <= WORD_ALIGN {
                    // SAFETY: as in `alloc`; every mimalloc block is word-aligned.
                    unsafe { ffi::mi_theap_zalloc(target.theap, layout.size()) }
                } else {
                    // SAFETY: the heap is live; `Layout` guarantees a power-of-two alignment.
                    unsafe {
                        ffi::mi_heap_zalloc_aligned(target.heap, layout.size(), layout.align())
                    }
                }
            })
            .cast()
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: the caller passes a block this allocator returned, i.e. a mimalloc block.
        unsafe { ffi::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.alloc
            .with_target(self.on_bind, move |target| {
                if layout.align() <= WORD_ALIGN {
                    // SAFETY: `ptr` is a mimalloc block; the theap as in `alloc`; every mimalloc
                    // block is word-aligned (what `mi_realloc_aligned` relies on for these too).
                    unsafe { ffi::mi_theap_realloc(target.theap, ptr.cast(), new_size) }
                } else {
                    // SAFETY: `ptr` is a mimalloc block of `layout`; the caller guarantees
                    // `new_size` with `layout.align()` is a valid layout.
                    unsafe {
                        ffi::mi_heap_realloc_aligned(
                            target.heap,
                            ptr.cast(),
                            new_size,
                            layout.align(),
                        )
                    }
                }
            })
            .cast()
    }
}

// SAFETY: the hook that `OnBind` adds allocates nothing of this instance's.
unsafe impl GlobalAlloc for RayAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract passes through.
        unsafe { self.on_bind(|| ()).alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.on_bind(|| ()).alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { self.on_bind(|| ()).dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.on_bind(|| ()).realloc(ptr, layout, new_size) }
    }
}

impl core::fmt::Debug for RayAlloc {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RayAlloc")
            .field("choices", &self.choices)
            .finish_non_exhaustive()
    }
}

/// How long a dropped instance waits for the threads still bound to it to exit.
const EXIT_GRACE: Duration = Duration::from_secs(1);

impl Drop for RayAlloc {
    /// Waits for the threads bound to this instance to detach (a scoped thread's exit hook
    /// runs after `std::thread::scope` returned); one still bound after a second
    /// aborts the process.
    fn drop(&mut self) {
        if !self.arenas.all_detached_within(EXIT_GRACE) {
            // A bound thread would later detach through a dangling pointer: stop instead.
            let message =
                b"rayforce-alloc: RayAlloc dropped while threads are bound to it; aborting\n";
            // SAFETY: writing a static buffer to stderr.
            unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
            std::process::abort();
        }
    }
}

// `RayAlloc` stays `!Unpin` (the field above): were it `Unpin`, both impls would apply
// and the call would not compile.
#[cfg(test)]
const _: () = {
    trait UnpinCheck<Which> {
        fn check() {}
    }
    impl<T: ?Sized> UnpinCheck<()> for T {}
    impl<T: ?Sized + Unpin> UnpinCheck<u8> for T {}
    let _ = <RayAlloc as UnpinCheck<_>>::check;
};

#[cfg(test)]
mod tests {
    use super::RayAlloc;
    use rayforce_tunables::cpu::CpuPolicy;

    #[test]
    fn debug_shows_the_policy_chosen_in_code() {
        let alloc = RayAlloc::with_policy(CpuPolicy::Online);
        let shown = format!("{alloc:?}");
        assert!(shown.starts_with("RayAlloc {"), "{shown}");
        assert!(shown.contains("rayforce.cpu.policy: online"), "{shown}");
    }
}
