//! `Arenas`: the fixed table of arenas (mimalloc first-class heaps), their limit, and which
//! threads each holds. Everything here runs inside the first allocation of a thread, so
//! nothing here allocates through Rust's allocator.

use crate::bind_lock::{self, BindGuard};
use crate::ffi::{self, mi_heap_t};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use core::time::Duration;
use rayforce_tunables::cpu::{self, CpuCounts, CpuPolicy};
use rayforce_tunables::registry::MAX_ARENAS as MAX_ARENAS_U64;
use rayforce_tunables::{Choices, Tunables};
use std::time::Instant;

/// Capacity of the arena table (the largest `rayforce.malloc.arena_max`).
pub(crate) const MAX_ARENAS: usize = MAX_ARENAS_U64 as usize;

/// The arena limit: `rayforce.malloc.arena_max`, else `arenas_per_cpu x cpu_count`,
/// within `1..=MAX_ARENAS`.
pub fn arena_limit(tunables: &Tunables, cpu_count: usize) -> usize {
    tunables
        .arena_max()
        .unwrap_or_else(|| tunables.arenas_per_cpu().saturating_mul(cpu_count))
        .clamp(1, MAX_ARENAS)
}

const UNINIT: u8 = 0;
const INITIALISING: u8 = 1;
const READY: u8 = 2;

/// One arena: a heap (null until created) and how many live threads are bound to it.
struct Arena {
    heap: AtomicPtr<mi_heap_t>,
    attached: AtomicUsize,
}

/// What the first allocation decided, from one CPU reading and the start-up tunables.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    /// The policy in force (chosen in code, unless `rayforce.cpu.policy` overrode it).
    pub policy: CpuPolicy,
    /// The CPU reading everything is sized from.
    pub counts: CpuCounts,
    /// `counts.count(policy)`, quota-capped unless `rayforce.cpu.quota=0`.
    pub cpu_count: usize,
    /// The arena limit.
    pub limit: usize,
    /// The tunables as resolved at start-up (defaults, choices, `RAYFORCE_TUNABLES`).
    pub tunables: Tunables,
}

pub(crate) struct Arenas {
    /// `UNINIT` -> `INITIALISING` (one thread) -> `READY`.
    state: AtomicU8,
    /// # Safety
    /// Written once, by the thread that moved `state` to `INITIALISING`, before it stores
    /// `READY` (Release); read only after loading `READY` (Acquire).
    sizing: UnsafeCell<Option<Sizing>>,
    created: AtomicUsize,
    /// The arena limit for threads binding from now on: the first sizing's, until a new
    /// CPU reading changes it (`follow`); 0 until then. Threads already bound stay.
    limit_now: AtomicUsize,
    /// The latest CPU reading followed (`None`: only the sizing's).
    ///
    /// # Safety
    /// Read and written only under the bind lock, which no forked child inherits held.
    followed: UnsafeCell<Option<CpuCounts>>,
    arenas: [Arena; MAX_ARENAS],
}

// SAFETY: `sizing` follows the write-once protocol on its field, `followed` the bind lock;
// the rest is atomics.
unsafe impl Sync for Arenas {}

impl Arenas {
    pub(crate) const fn new() -> Arenas {
        #[allow(clippy::declare_interior_mutable_const)] // a template for the array only
        const EMPTY: Arena = Arena {
            heap: AtomicPtr::new(core::ptr::null_mut()),
            attached: AtomicUsize::new(0),
        };
        Arenas {
            state: AtomicU8::new(UNINIT),
            sizing: UnsafeCell::new(None),
            created: AtomicUsize::new(0),
            limit_now: AtomicUsize::new(0),
            followed: UnsafeCell::new(None),
            arenas: [EMPTY; MAX_ARENAS],
        }
    }

    /// The sizing, deciding it on first call (allocation-free: the CPU reading and the
    /// start-up tunables). `None` while another call is deciding it (a re-entrant call from
    /// the deciding thread, or a racing thread): the caller then uses the main heap once.
    ///
    /// A hand-made cell, not a `once_cell` one: its `sync` cells block (a re-entrant
    /// allocation from the deciding thread would wait for itself), its race cells decide
    /// again in every racing or re-entrant call (deciding sets the allocator's options and
    /// may abort in strict mode), and `OnceBox` allocates.
    pub(crate) fn sizing(&self, choices: &Choices) -> Option<Sizing> {
        // Acquire: pairs with the Release store of READY below.
        match self.state.load(Ordering::Acquire) {
            // SAFETY: READY was stored after `sizing` was written (field `# Safety`).
            READY => return unsafe { *self.sizing.get() },
            INITIALISING => return None,
            _ => {}
        }
        // Held until READY: a fork waits for the decision (the bind lock's prepare handler),
        // so no child inherits INITIALISING with nobody to finish it. Nothing below takes it;
        // a re-entrant call returns at INITIALISING above, before it.
        let lock = self.lock();
        if self
            .state
            .compare_exchange(UNINIT, INITIALISING, Ordering::Acquire, Ordering::Acquire)
            .is_err()
        {
            drop(lock);
            return self.sizing(choices);
        }
        let tunables = Tunables::at_startup(choices);
        // Strict mode stops the program here, at its first allocation, with every
        // diagnostic on standard error (allocation-free).
        tunables.abort_if_strict();
        if let Some(ms) = tunables.purge_delay_ms() {
            ffi::set_purge_delay_ms(ms);
        }
        if let Some(allowed) = tunables.thp() {
            ffi::set_thp(allowed);
        }
        let counts = cpu::read();
        let policy = tunables.policy();
        let cpu_count = counts.count(policy, tunables.quota_cap());
        let limit = arena_limit(&tunables, cpu_count);
        let sizing = Sizing {
            policy,
            counts,
            cpu_count,
            limit,
            tunables,
        };
        // SAFETY: we won the UNINIT -> INITIALISING race, so we are the only writer and no
        // reader looks before READY.
        unsafe { *self.sizing.get() = Some(sizing) };
        // Release: pairs with the Acquire load at the top.
        self.state.store(READY, Ordering::Release);
        drop(lock);
        Some(sizing)
    }

    /// The arena limit for threads placed now (the sizing's until a reading changed it).
    pub(crate) fn limit(&self, sizing: &Sizing) -> usize {
        // Relaxed: a limit only bounds which arena a thread is placed on; nothing it
        // publishes.
        match self.limit_now.load(Ordering::Relaxed) {
            0 => sizing.limit,
            limit => limit,
        }
    }

    /// A new CPU reading, `counts`: threads placed from now on get at most `limit` arenas
    /// (within the fixed table); returns whether the limit changed.
    pub(crate) fn follow(&self, sizing: &Sizing, counts: &CpuCounts, limit: usize) -> bool {
        let limit = limit.clamp(1, MAX_ARENAS);
        let lock = self.lock();
        // SAFETY: under the bind lock (the field's rule).
        unsafe { *self.followed.get() = Some(*counts) };
        let before = self.limit(sizing);
        self.limit_now.store(limit, Ordering::Relaxed);
        drop(lock);
        before != limit
    }

    /// The latest reading `follow` took, else the sizing's.
    pub(crate) fn reading(&self, sizing: &Sizing) -> CpuCounts {
        let lock = self.lock();
        // SAFETY: under the bind lock (the field's rule).
        let followed = unsafe { *self.followed.get() };
        drop(lock);
        followed.unwrap_or(sizing.counts)
    }

    /// Binds a thread to arena `index % limit`, creating arenas up to it if needed; the
    /// bind lock stays held until the binding is done (see [`Attached`]).
    pub(crate) fn attach_to(&self, index: usize, limit: usize) -> Option<Attached<'_>> {
        let index = index % limit;
        let lock = self.lock();
        while self.created.load(Ordering::Relaxed) <= index {
            self.create(self.created.load(Ordering::Relaxed))?;
        }
        self.arenas[index].attached.fetch_add(1, Ordering::Relaxed);
        Some(Attached {
            arenas: self,
            index,
            _lock: lock,
        })
    }

    /// Creates arena `index` (the next one); call with the bind lock held. Arena 0 is
    /// mimalloc's main heap, which every thread not placed elsewhere shares, as do the
    /// allocations before binding and after a thread's exit: so those threads hold what raw
    /// mimalloc holds (BENCHMARKS.md, "Resident memory after churn").
    fn create(&self, index: usize) -> Option<usize> {
        let heap = if index == 0 {
            ffi::main_heap()
        } else {
            // SAFETY: mi_heap_new has no preconditions; it allocates inside mimalloc, never
            // through Rust's global allocator.
            unsafe { ffi::mi_heap_new() }
        };
        if heap.is_null() {
            return None;
        }
        // A heap's first page in one of mimalloc's arenas takes a lock of the heap's, which
        // no fork handler releases: taken here, under the bind lock, for the arena the
        // first page comes from (mimalloc reserves one of up to a GiB at a time, so most
        // processes use one), no child is forked while it is held (`binding.rs`'s note).
        // Out of memory, null is freed.
        // SAFETY: `heap` is live; both calls allocate and free inside mimalloc.
        unsafe { ffi::mi_free(ffi::mi_heap_malloc(heap, 1)) };
        // Release: pairs with the Acquire load in `heap`, for threads that read the heap
        // of an arena they did not create.
        self.arenas[index].heap.store(heap, Ordering::Release);
        self.created.store(index + 1, Ordering::Relaxed);
        Some(index)
    }

    /// Takes the bind lock (`bind_lock.rs`), which serialises binding decisions: only
    /// thread binding and exit take it (rare), and nothing under it allocates through Rust's
    /// allocator or panics.
    fn lock(&self) -> BindGuard {
        bind_lock::lock()
    }

    /// Arena `index`'s heap (created).
    pub(crate) fn heap(&self, index: usize) -> *mut mi_heap_t {
        // Acquire: pairs with the Release store in `create`.
        self.arenas[index].heap.load(Ordering::Acquire)
    }

    /// A bound thread exits, or rebinds elsewhere: its last touch of these arenas (the
    /// instance may drop once every thread detached). Call with the bind lock held, and
    /// release it after this returns.
    pub(crate) fn detach(&self, index: usize) {
        self.arenas[index].attached.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn created(&self) -> usize {
        self.created.load(Ordering::Relaxed)
    }

    /// Threads attached to each created arena.
    pub(crate) fn attached(&self) -> Vec<usize> {
        self.arenas[..self.created()]
            .iter()
            .map(|a| a.attached.load(Ordering::Relaxed))
            .collect()
    }

    /// Whether every thread bound here detached, waiting up to `grace` for those still
    /// bound (a scoped thread's exit hook runs after `std::thread::scope` returned). Once it
    /// returns `true`, no thread touches the arenas' heaps again: a thread detaches last,
    /// under the bind lock, which this reads under too.
    pub(crate) fn all_detached_within(&self, grace: Duration) -> bool {
        if self.created() == 0 {
            return true; // no thread ever bound here
        }
        let deadline = Instant::now() + grace;
        loop {
            let lock = self.lock();
            let any = self.arenas[..self.created()]
                .iter()
                .any(|a| a.attached.load(Ordering::Relaxed) > 0);
            drop(lock);
            if !any {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A thread just attached to arena `index`, with the bind lock held until this is dropped:
/// the binding finishes under it. Making the thread's theap for the arena takes mimalloc's
/// own locks (the heap's list of theaps), which no fork handler releases; a fork takes the
/// bind lock first (`bind_lock.rs`), so it never copies the process while a binding holds
/// one of them, and a child's helper binding the same arena cannot wait forever on it.
pub(crate) struct Attached<'a> {
    arenas: &'a Arenas,
    pub(crate) index: usize,
    _lock: BindGuard,
}

impl Attached<'_> {
    /// The thread could not bind after all (mimalloc had no memory for its theap).
    pub(crate) fn cancel(self) {
        self.arenas.arenas[self.index]
            .attached
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Arenas {
    /// Heaps go back to mimalloc; their live blocks move to the main heap, so memory still
    /// in use stays valid (`mi_heap_delete`). Arena 0, the main heap, stays.
    fn drop(&mut self) {
        // Arena 0 stays; none was created where no thread ever allocated.
        let created = *self.created.get_mut();
        // Under the bind lock: deleting a heap takes mimalloc's locks, which no fork may
        // copy held (`binding.rs`'s note).
        let _lock = self.lock();
        for arena in self.arenas.iter().take(created).skip(1) {
            let heap = arena.heap.load(Ordering::Relaxed);
            // SAFETY: `heap` came from `mi_heap_new` and every thread bound to it detached,
            // its last touch (`RayAlloc`'s drop checks that first).
            unsafe { ffi::mi_heap_delete(heap) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Arenas;
    use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
    use rayforce_tunables::Choices;

    #[test]
    fn a_child_forked_while_another_thread_decides_the_sizing_gets_one() {
        // A thread decides the sizing of fresh instances one after another while this one
        // forks; each child asks for the sizing of the instance being decided at the fork,
        // which it must get (a child that inherited it half-decided would wait for ever:
        // SIGALRM ends it).
        static CURRENT: AtomicPtr<Arenas> = AtomicPtr::new(core::ptr::null_mut());
        static DONE: AtomicBool = AtomicBool::new(false);
        // Made up front: the decider allocates nothing while this thread forks (a child
        // forked while another thread held the allocator's lock, the sanitizer's in
        // AddressSanitizer builds, could hang for that alone).
        let instances: Vec<&'static Arenas> = (0..200)
            .map(|_| &*Box::leak(Box::new(Arenas::new())))
            .collect();
        let decider = std::thread::spawn(move || {
            for arenas in instances {
                CURRENT.store((arenas as *const Arenas).cast_mut(), Ordering::Release);
                assert!(arenas.sizing(&Choices::new()).is_some());
            }
            DONE.store(true, Ordering::Release);
        });
        let mut forks = 0;
        while !DONE.load(Ordering::Acquire) {
            let current = CURRENT.load(Ordering::Acquire);
            if current.is_null() {
                continue;
            }
            // SAFETY: every instance is leaked, so live in the child too.
            let arenas = unsafe { &*current };
            let decided = in_forked_child(|| {
                while arenas.sizing(&Choices::new()).is_none() {
                    std::hint::spin_loop();
                }
            });
            assert!(decided, "fork {forks}: the child got no sizing");
            forks += 1;
        }
        decider.join().unwrap();
        assert!(forks > 0);
    }

    /// Runs `op` in a forked child, which SIGALRM ends after five seconds; whether it
    /// returned there. The child only runs `op`, then `_exit`s.
    fn in_forked_child(op: impl FnOnce()) -> bool {
        // SAFETY: the child runs `op`, which the callers keep to reads and spinning, then
        // `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: alarm has no preconditions.
            unsafe { libc::alarm(5) };
            op();
            // SAFETY: _exit ends only this child.
            unsafe { libc::_exit(0) };
        }
        assert!(pid > 0, "fork failed");
        let mut status = 0;
        // SAFETY: `pid` is this process's child; `status` is valid for writes.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }

    #[test]
    fn a_child_forked_while_another_thread_follows_a_reading_reads_one() {
        // A thread follows readings, alternating two, while this one forks; each child
        // reads the latest, which it must get whole, and soon.
        static DONE: AtomicBool = AtomicBool::new(false);
        let arenas: &'static Arenas = Box::leak(Box::new(Arenas::new()));
        let sizing = arenas
            .sizing(&Choices::new())
            .expect("no other thread decides it");
        let mut other = sizing.counts;
        other.online.value += 1;
        let readings = [sizing.counts, other];
        let follower = std::thread::spawn(move || {
            for round in 0..200_000 {
                arenas.follow(&sizing, &readings[round % 2], 1);
            }
            DONE.store(true, Ordering::Release);
        });
        let mut forks = 0;
        while !DONE.load(Ordering::Acquire) {
            let whole = in_forked_child(|| {
                let reading = arenas.reading(&sizing);
                if !readings.contains(&reading) {
                    // SAFETY: _exit ends only this child.
                    unsafe { libc::_exit(1) };
                }
            });
            assert!(whole, "fork {forks}: the child read no whole reading");
            forks += 1;
        }
        follower.join().unwrap();
        assert!(forks > 0);
    }

    #[test]
    fn arenas_no_thread_allocated_from_drop_quietly() {
        let unused = Arenas::new();
        assert_eq!(unused.created(), 0);
        drop(unused);
    }
}
