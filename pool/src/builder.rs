//! `PoolBuilder`: the pool's width from a CPU policy, an explicit count, or the tunables.

use crate::crew::{HelperSetup, StartError};
use crate::follow::{counted_widths, Follow, ReadingHook};
#[cfg(doc)]
use crate::limits::MAX_WIDTH;
#[cfg(target_os = "linux")]
use crate::place::{PlaceHook, Placement};
use crate::pool::Pool;
use crate::shared::{PanicHandler, ThreadStart};
use crate::signal::{SlotCounts, JOIN_SLOTS_PER_THREAD, SPAWN_SLOT};
use crate::spin::SpinLimits;
use crate::sync::Arc;
use rayforce_tunables::cpu::{self, CpuCounts, CpuPolicy, Place};
use rayforce_tunables::registry::{self, MAX_DELAY_MS, MAX_SPIN_US};
use rayforce_tunables::{Choices, Tunables};
use std::fmt;

/// Why a pool could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// `workers(0)`: a pool needs at least the caller.
    ZeroWorkers,
    /// A helper thread could not be spawned.
    Spawn(std::io::Error),
    /// A setting above its bound: a width above [`MAX_WIDTH`], `spin_us` above 100000,
    /// `recheck_ms` above an hour, `stack_size` above 1 TiB.
    OutOfRange {
        /// The builder method, such as `workers`.
        setting: &'static str,
        /// The value it was given.
        value: u64,
        /// The largest it accepts.
        max: u64,
    },
    /// [`build_global`](PoolBuilder::build_global): a default pool was chosen or built
    /// already (a free function or parallel iterator ran before).
    GlobalPoolAlreadyInitialized,
    /// [`thread_name`](PoolBuilder::thread_name) named a helper with a NUL byte, which no
    /// thread's name may hold.
    ThreadName {
        /// The helper's index (1-based; the caller is worker 0).
        helper: usize,
        /// The name given.
        name: String,
    },
    /// The [`on_thread_start`](PoolBuilder::on_thread_start) hook panicked on a helper.
    ThreadStart {
        /// The helper's index (1-based; the caller is worker 0).
        helper: usize,
        /// The panic's message.
        message: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ZeroWorkers => {
                f.write_str("a pool needs at least 1 worker (the caller); got workers(0)")
            }
            BuildError::OutOfRange {
                setting,
                value,
                max,
            } => write!(
                f,
                "{setting}({value}) is out of range: expected at most {max}"
            ),
            BuildError::Spawn(err) => write!(f, "could not start a pool helper thread: {err}"),
            BuildError::GlobalPoolAlreadyInitialized => f.write_str(
                "build_global: the default pool was already chosen or built (a parallel \
                 iterator, join or scope ran before); call build_global first",
            ),
            BuildError::ThreadName { helper, name } => write!(
                f,
                "thread_name({helper}) gave {name:?}: expected a name without a NUL byte"
            ),
            BuildError::ThreadStart { helper, message } => write!(
                f,
                "the thread-start hook panicked on pool helper {helper}: {message}"
            ),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<StartError> for BuildError {
    fn from(err: StartError) -> BuildError {
        match err {
            StartError::Spawn(err) => BuildError::Spawn(err),
            StartError::Hook { helper, message } => BuildError::ThreadStart { helper, message },
        }
    }
}

/// The largest helper stack `stack_size` accepts, in bytes (1 TiB): larger ones overflow
/// `std`'s rounding to whole pages near `usize::MAX`, and no system maps them.
const MAX_STACK_SIZE: u64 = 1 << 40;

/// Builds a [`Pool`]. Each setting, when not given, comes from the tunables passed with
/// [`tunables`](Self::tunables) (else the built-in defaults):
/// width = `workers`, else `rayforce.pool.workers`, else the policy's CPU count (policy
/// `rayforce.cpu.policy`, capped by the cgroup quota unless `rayforce.cpu.quota=0`).
#[derive(Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct PoolBuilder {
    policy: Option<CpuPolicy>,
    workers: Option<usize>,
    wide_workers: Option<usize>,
    spin_us: Option<u32>,
    in_flight: Option<usize>,
    /// Slots kept for joins' offers per thread (tests set it; else `JOIN_SLOTS_PER_THREAD`).
    join_slots_per_thread: Option<usize>,
    /// Whether a slot is kept for spawned tasks (loom models set it; else `SPAWN_SLOT`).
    spawn_slot: Option<bool>,
    recheck_ms: Option<u32>,
    on_reading: Option<ReadingHook>,
    best_effort: bool,
    /// Boxed, as the reading below: each is kilobytes, and the builder moves at every call.
    tunables: Option<Box<Tunables>>,
    counts: Option<Box<CpuCounts>>,
    on_start: Option<ThreadStart>,
    on_exit: Option<ThreadStart>,
    panic_handler: Option<PanicHandler>,
    /// Helper k's name, asked for each helper the widest pool has, at `build`.
    thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    stack_size: Option<usize>,
    place: Option<Place>,
    #[cfg(target_os = "linux")]
    on_place: Option<PlaceHook>,
}

/// The widths a pool gets from tunables and a CPU reading: (`dispatch` width, `dispatch_wide`
/// width). Width: `rayforce.pool.workers`, else the policy's count (quota-capped unless
/// `rayforce.cpu.quota=0`). Wide: the schedulable count when `rayforce.pool.wide` is on and
/// the width is the policy's; an explicit width is the wide width too (an operator who sets
/// `RAYFORCE_CORES=1` gets no helper thread at all).
// Not a stable API: the runtime's report predicts the widths with it. Hidden, not private,
// because the runtime is another crate.
#[doc(hidden)]
pub fn widths(tunables: &Tunables, policy: CpuPolicy, counts: &CpuCounts) -> (usize, usize) {
    match tunables.workers() {
        Some(width) => (width.max(1), width.max(1)),
        None => counted_widths(counts, policy, tunables.quota_cap(), tunables.wide()),
    }
}

/// The settings given, the hooks by whether each is set (as rayon's builder prints).
impl fmt::Debug for PoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("policy", &self.policy)
            .field("workers", &self.workers)
            .field("wide_workers", &self.wide_workers)
            .field("spin_us", &self.spin_us)
            .field("max_in_flight", &self.in_flight)
            .field("recheck_ms", &self.recheck_ms)
            .field("best_effort", &self.best_effort)
            .field("tunables", &self.tunables.is_some())
            .field("cpu_counts", &self.counts)
            .field("stack_size", &self.stack_size)
            .field("place", &self.place)
            .field("thread_name", &self.thread_name.is_some())
            .field("on_thread_start", &self.on_start.is_some())
            .field("on_thread_exit", &self.on_exit.is_some())
            .field("panic_handler", &self.panic_handler.is_some())
            .field("on_reading", &self.on_reading.is_some())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// A builder with nothing set.
    pub fn builder() -> PoolBuilder {
        PoolBuilder::default()
    }
}

impl PoolBuilder {
    /// A builder with nothing set, as [`Pool::builder`]: rayon's `ThreadPoolBuilder::new`.
    pub fn new() -> PoolBuilder {
        PoolBuilder::default()
    }

    /// Every explicit setting within its bound (tunables are bounded already, and the
    /// widths a reading gives are clamped to `MAX_WIDTH`, whoever made the reading).
    fn check_bounds(&self) -> Result<(), BuildError> {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let settings = [
            ("workers", self.workers.map(count), registry::MAX_WIDTH),
            (
                "wide_workers",
                self.wide_workers.map(count),
                registry::MAX_WIDTH,
            ),
            (
                "max_in_flight",
                self.in_flight.map(count),
                registry::MAX_WIDTH,
            ),
            ("spin_us", self.spin_us.map(u64::from), MAX_SPIN_US),
            ("recheck_ms", self.recheck_ms.map(u64::from), MAX_DELAY_MS),
            ("stack_size", self.stack_size.map(count), MAX_STACK_SIZE),
        ];
        for (setting, value, max) in settings {
            if let Some(value) = value.filter(|&value| value > max) {
                return Err(BuildError::OutOfRange {
                    setting,
                    value,
                    max,
                });
            }
        }
        Ok(())
    }

    /// The CPU policy whose count is the width (default `rayforce.cpu.policy`, physical).
    pub fn policy(mut self, policy: CpuPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The width: participants, the caller included; 1 runs everything on the caller, at
    /// most [`MAX_WIDTH`]. Unless [`wide_workers`](Self::wide_workers) is set too, it is the
    /// wide width as well. A width set here stays: readings of the machine do not change it.
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers);
        self
    }

    /// As rayon's `num_threads`: the threads that run the pool's work, `n`: the caller of an
    /// operation, which takes part, and `n - 1` helpers, so a region has `n` participants,
    /// as a rayon pool of `n` threads has (its caller waits instead); `0` leaves the count
    /// to the CPU policy and the tunables, as rayon's `0` leaves it to its default. Sets
    /// [`workers`](Self::workers) otherwise.
    ///
    /// ```
    /// use rayforce_pool::ThreadPoolBuilder;
    /// let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// ```
    pub fn num_threads(mut self, threads: usize) -> Self {
        self.workers = (threads != 0).then_some(threads);
        self
    }

    /// The width of `dispatch_wide`, at most [`MAX_WIDTH`] (default: the width when it was
    /// set explicitly, else the schedulable count when `rayforce.pool.wide` is on; never
    /// below the width). Set, it fixes both widths, as `workers` does: neither follows
    /// readings of the machine (until [`Pool::resize`](crate::Pool::resize)).
    pub fn wide_workers(mut self, workers: usize) -> Self {
        self.wide_workers = Some(workers);
        self
    }

    /// The ceiling of the adaptive spin window of an idle helper or a caller waiting for
    /// its last helper, in microseconds (`rayforce.pool.spin_us`), at most 100000; 0 blocks
    /// at once.
    pub fn spin_us(mut self, micros: u32) -> Self {
        self.spin_us = Some(micros);
        self
    }

    /// How many dispatches may be in flight at once, each with its own slot sharing the
    /// helpers (default: the wide width, one per participant of the widest dispatch). A
    /// dispatch that finds every slot taken waits for one; an operation runs inline on its
    /// caller instead. At most
    /// [`MAX_WIDTH`].
    pub fn max_in_flight(mut self, dispatches: usize) -> Self {
        self.in_flight = Some(dispatches);
        self
    }

    /// Keeps `slots` slots per thread for joins' offers (a test's pool whose joins hold the
    /// dispatches' slots: none).
    #[cfg(all(test, not(rayforce_loom)))]
    pub(crate) fn join_slots_per_thread(mut self, slots: usize) -> Self {
        self.join_slots_per_thread = Some(slots);
        self
    }

    /// Keeps a slot for spawned tasks (a loom model's pool, whose others keep none).
    #[cfg(all(test, rayforce_loom))]
    pub(crate) fn spawn_slot(mut self) -> Self {
        self.spawn_slot = Some(true);
        self
    }

    /// Resolved tunables, for whatever is not set explicitly.
    pub fn tunables(mut self, tunables: &Tunables) -> Self {
        self.tunables = Some(Box::new(*tunables));
        self
    }

    /// A CPU reading to size from, instead of reading the machine.
    pub fn cpu_counts(mut self, counts: CpuCounts) -> Self {
        self.counts = Some(Box::new(counts));
        self
    }

    /// Re-read the CPUs at most this often, at dispatch start, and follow what changed
    /// (`rayforce.cpu.recheck_ms`, at most 3600000; 0 never re-reads on its own,
    /// `Pool::refresh` still does).
    pub fn recheck_ms(mut self, millis: u32) -> Self {
        self.recheck_ms = Some(millis);
        self
    }

    /// Runs `hook(counts)` on every reading the pool takes (`Pool::refresh`, or the periodic
    /// re-check), after applying it; `hook` returns whether it changed anything. The runtime
    /// has its arenas follow the machine with it.
    pub fn on_reading(mut self, hook: impl Fn(&CpuCounts) -> bool + Send + Sync + 'static) -> Self {
        self.on_reading = Some(Box::new(hook));
        self
    }

    /// Builds the pool even if helpers cannot be started (the thread limit is reached, a
    /// start hook panics): it runs with those that could, and `stats()` (`start_error`,
    /// `missing_helpers`) says why it is narrower. Without this, `build` fails instead.
    pub fn best_effort(mut self) -> Self {
        self.best_effort = true;
        self
    }

    /// Runs `hook(k)` on helper k (1-based) as it starts; `build` waits until every helper
    /// ran it (rayon's does not), as does the first dispatch that starts a wide helper:
    /// a hook must not wait for what the building thread does after `build`, or neither
    /// returns. A panic in it goes to the [`panic_handler`](Self::panic_handler), and the
    /// helper serves, as rayon's; without a handler, `build` fails with
    /// [`BuildError::ThreadStart`].
    pub fn on_thread_start(mut self, hook: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_start = Some(Arc::new(Box::new(hook)));
        self
    }

    /// Calls `handler` with the payload of a panic in a task started by
    /// [`spawn`](crate::spawn) or [`Pool::spawn`], or in a helper's start or exit hook, as
    /// rayon's `panic_handler`; without one, such a panic aborts the process (nobody waits
    /// for the task), or a start hook's fails the build. A panic in `handler`
    /// aborts the process. Panics in `join`, `scope` and the operations resume on their
    /// caller, as before.
    ///
    /// ```
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let pool = rayforce_pool::Pool::builder()
    ///     .workers(2)
    ///     .panic_handler(move |payload| {
    ///         let message = payload.downcast_ref::<&str>().copied().unwrap_or("?");
    ///         tx.lock().unwrap().send(message.to_owned()).unwrap();
    ///     })
    ///     .build()
    ///     .unwrap();
    /// pool.spawn(|| panic!("caught by the handler"));
    /// assert_eq!(rx.recv().unwrap(), "caught by the handler");
    /// ```
    pub fn panic_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(Box<dyn std::any::Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Arc::new(Box::new(handler)));
        self
    }

    /// rayon's name for [`on_thread_start`](Self::on_thread_start): `hook(k)` runs on
    /// helper k (the pool's thread k: the caller is 0) as it starts, so `num_threads(n)`
    /// runs it `n - 1` times where rayon's runs it `n` times (its caller is no thread of
    /// the pool), and `build` waits for them.
    pub fn start_handler(self, hook: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_thread_start(hook)
    }

    /// Runs `hook(k)` on helper k (1-based) as it stops, once the pool was dropped and the
    /// helper ran what was left for it (not in a forked child, where the parent's helpers
    /// do not run, nor on a helper whose start hook panicked); tasks the hook spawns run on
    /// that helper before it ends. A pool with an exit hook returns from its drop at once,
    /// as rayon's, without waiting for its helpers: a hook may wait for the dropping thread.
    /// A panic in `hook` goes to the [`panic_handler`](Self::panic_handler), else aborts the
    /// process, as rayon's.
    ///
    /// ```
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let pool = rayforce_pool::Pool::builder()
    ///     .workers(3)
    ///     .on_thread_exit(move |k| tx.lock().unwrap().send(k).unwrap())
    ///     .build()
    ///     .unwrap();
    /// drop(pool); // returns at once; each helper runs the hook as it stops
    /// let mut exited: Vec<usize> = rx.iter().take(2).collect();
    /// exited.sort();
    /// assert_eq!(exited, [1, 2]);
    /// ```
    pub fn on_thread_exit(mut self, hook: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_exit = Some(Arc::new(Box::new(hook)));
        self
    }

    /// rayon's name for [`on_thread_exit`](Self::on_thread_exit): `hook(k)` runs on helper k
    /// (the pool's thread k: the caller is 0) as it stops.
    pub fn exit_handler(self, hook: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_thread_exit(hook)
    }

    /// Names helper k `name(k)` (the pool's thread k, from 1: the caller, thread 0, keeps
    /// its own name), as rayon's `thread_name`. `build` asks for the names of every helper
    /// the pool may have at its widths then; a helper past them (the pool widened since)
    /// is `rayforce-{k}`, as every helper is without this. A name with a NUL byte fails
    /// `build` with [`BuildError::ThreadName`].
    ///
    /// ```
    /// let pool = rayforce_pool::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .thread_name(|k| format!("crunch-{k}"))
    ///     .build()
    ///     .unwrap();
    /// let names = std::sync::Mutex::new(Vec::new());
    /// pool.dispatch(1000, |_| {
    ///     let name = std::thread::current().name().map(String::from);
    ///     names.lock().unwrap().push(name);
    /// });
    /// let names = names.into_inner().unwrap();
    /// assert!(names.iter().flatten().all(|n| !n.starts_with("rayforce-")));
    /// ```
    pub fn thread_name(mut self, name: impl FnMut(usize) -> String + 'static) -> Self {
        self.thread_name = Some(Box::new(name));
        self
    }

    /// The helpers' stack size in bytes, as rayon's `stack_size` (`std`'s default
    /// without this; the system's minimum where it is below), at most 1 TiB. Where the
    /// system refuses the size, `build` fails with [`BuildError::Spawn`] if it starts a
    /// helper (a pool of one starts none), and a helper started later (a wide one, or one
    /// of a [`best_effort`](Self::best_effort) pool) stays missing: the dispatches it would
    /// join run narrower, and `stats()` says why.
    ///
    /// ```
    /// let pool = rayforce_pool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .stack_size(8 << 20)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.current_num_threads(), 2);
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Pins each helper to a CPU of a core of its own (`rayforce.pool.place`, default off:
    /// helpers float): cores taken from the process mask round-robin across packages and
    /// NUMA nodes ([`Place::Spread`]) or one package first ([`Place::Close`]); a wide
    /// dispatch's extra helpers get the remaining siblings; the caller is not pinned. The
    /// plan follows the mask at each re-check. A helper that cannot be pinned runs unpinned,
    /// and [`Pool::placement`](crate::Pool::placement) says why. Linux only; elsewhere
    /// helpers float.
    pub fn place(mut self, place: Place) -> Self {
        self.place = Some(place);
        self
    }

    /// Runs `hook(k, node)` whenever placement pins helper k (as it starts, and when a
    /// re-check moves it), with the NUMA node whose memory it should prefer (only when the
    /// plan spans several nodes). The runtime points helper k's arena at that node with it.
    #[cfg(target_os = "linux")]
    pub fn on_place(mut self, hook: impl Fn(usize, Option<usize>) + Send + Sync + 'static) -> Self {
        self.on_place = Some(Box::new(hook));
        self
    }

    /// Builds the pool and makes it the default one (rayon's global pool): where parallel
    /// iterators, [`join`](crate::join) and [`scope`](crate::scope) run outside any pool's
    /// task or `install`. Fails, building nothing, once a default pool was chosen or built.
    ///
    /// ```
    /// let built = rayforce_pool::ThreadPoolBuilder::new().num_threads(2).build_global();
    /// if built.is_ok() {
    ///     assert_eq!(rayforce_pool::current_num_threads(), 2);
    /// }
    /// ```
    pub fn build_global(self) -> Result<(), BuildError> {
        if crate::default_pool::settled() {
            return Err(BuildError::GlobalPoolAlreadyInitialized);
        }
        let pool: &'static Pool = Box::leak(Box::new(self.build()?));
        if pool.set_default() {
            Ok(())
        } else {
            // SAFETY: from `Box::leak` above; `set_default` kept no reference to it (it
            // stores the pointer only when it returns true), so this is the only one.
            drop(unsafe { Box::from_raw(std::ptr::from_ref(pool).cast_mut()) });
            Err(BuildError::GlobalPoolAlreadyInitialized)
        }
    }

    /// Starts the pool; refuses settings above their bounds ([`BuildError::OutOfRange`]).
    pub fn build(self) -> Result<Pool, BuildError> {
        self.check_bounds()?;
        let tunables = self
            .tunables
            .unwrap_or_else(|| Box::new(Tunables::from_choices(&Choices::new())));
        let policy = self.policy.unwrap_or_else(|| tunables.policy());
        // Read the machine only if something is left to it, and then once.
        let mut counts = self.counts;
        let mut reading = || **counts.get_or_insert_with(|| Box::new(cpu::read()));
        let width = match self.workers {
            Some(0) => return Err(BuildError::ZeroWorkers),
            Some(n) => n,
            None => widths(&tunables, policy, &reading()).0,
        };
        let wide_width = match self.wide_workers {
            Some(n) => n.max(width),
            None if self.workers.is_some() => width,
            None => widths(&tunables, policy, &reading()).1.max(width),
        };
        let spin_us = self.spin_us.unwrap_or_else(|| tunables.spin_us());
        // The widths follow the machine unless a width was set explicitly (README
        // "Resizing"); the spin budget follows the policy's count.
        let explicit =
            self.workers.is_some() || self.wide_workers.is_some() || tunables.workers().is_some();
        let cap = tunables.quota_cap();
        let cpus = if spin_us > 0 || !explicit {
            reading().count(policy, cap)
        } else {
            1 // never used: nothing spins
        };
        let follow = Follow::new(
            policy,
            cap,
            tunables.wide(),
            self.recheck_ms.unwrap_or_else(|| tunables.recheck_ms()),
            self.on_reading,
        );
        let limits = SpinLimits::new(spin_us, cpus);
        let slots = SlotCounts {
            dispatches: self.in_flight.unwrap_or(wide_width).max(1),
            joins: self.join_slots_per_thread.unwrap_or(JOIN_SLOTS_PER_THREAD) * wide_width,
            spawn: self.spawn_slot.unwrap_or(SPAWN_SLOT),
        };
        let place = self.place.unwrap_or_else(|| tunables.place());
        #[cfg(target_os = "linux")]
        let (on_start, placement) = placed(place, self.on_place, self.on_start);
        #[cfg(not(target_os = "linux"))]
        let (on_start, _) = (self.on_start, place); // helpers float
        let names: Vec<String> = self.thread_name.map_or_else(Vec::new, |mut name| {
            (1..wide_width).map(&mut name).collect()
        });
        if let Some(k) = names.iter().position(|name| name.contains('\0')) {
            return Err(BuildError::ThreadName {
                helper: k + 1,
                name: names[k].clone(),
            });
        }
        let setup = HelperSetup {
            on_start,
            on_exit: self.on_exit,
            panic_handler: self.panic_handler,
            names,
            stack_size: self.stack_size,
        };
        Ok(Pool::start(
            (width, wide_width, explicit),
            slots,
            limits,
            follow,
            setup,
            #[cfg(target_os = "linux")]
            placement,
            self.best_effort,
        )?)
    }
}

/// With placement on, the start hook pins each helper first, then runs `on_start`, then the
/// placement hook; the placement goes to the pool, which follows the mask with it.
#[cfg(target_os = "linux")]
fn placed(
    place: Place,
    on_place: Option<PlaceHook>,
    on_start: Option<ThreadStart>,
) -> (Option<ThreadStart>, Option<std::sync::Arc<Placement>>) {
    if place == Place::Off {
        return (on_start, None);
    }
    let placement = std::sync::Arc::new(Placement::new(place, on_place));
    let pins = std::sync::Arc::clone(&placement);
    let hook: ThreadStart = Arc::new(Box::new(move |helper| {
        let placed = pins.join(helper);
        if let Some(hook) = &on_start {
            hook(helper); // binds the helper's arena, which the placement hook then points
        }
        pins.tell(&placed);
    }));
    (Some(hook), Some(placement))
}
