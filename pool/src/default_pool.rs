//! The default pool: where the free functions (`join`, `current_num_threads`) run outside
//! any pool's task or `install`, as rayon's global pool. A pool the program chose with
//! [`Pool::set_default`]; else the one a maker offered with [`Pool::set_default_maker`]
//! makes (the runtime's pool, when a runtime is the global allocator); else one built on
//! first use by [`Pool::builder`]'s defaults and the environment's tunables, with whatever
//! helpers can start; a child forked while another thread built it builds its own. One
//! pool is ever the default (in one process): the first stored in [`CHOSEN`], whether
//! chosen, made or built; every free function runs on it.

#[cfg(not(rayforce_loom))]
use crate::fork_once::ForkOnceCell;
use crate::Pool;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The default pool: chosen with `Pool::set_default`, made by the maker or built; null
/// until then, and set once. Not a loom atomic: under loom nothing sets it.
static CHOSEN: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

/// The maker offered with `Pool::set_default_maker`, as a `fn() -> &'static Pool`; null
/// until then.
static MAKER: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

#[cfg(not(rayforce_loom))]
static BUILT: ForkOnceCell<Pool> = ForkOnceCell::new();

/// The default pool, made or built now if there is none yet.
pub(crate) fn get() -> &'static Pool {
    if let Some(chosen) = chosen() {
        return chosen;
    }
    made().unwrap_or_else(build)
}

/// The default pool, if there is one yet.
fn chosen() -> Option<&'static Pool> {
    // Acquire: pairs with the Release of `choose` and `build`, so the pool is seen whole.
    let chosen = CHOSEN.load(Ordering::Acquire);
    // SAFETY: only `choose` and `build` store it, each from a `&'static Pool`.
    unsafe { chosen.as_ref() }
}

/// The maker's pool, made the default unless another was chosen meanwhile (then that one).
fn made() -> Option<&'static Pool> {
    // The global allocator's first allocation on this thread, if this is it, may offer a
    // maker (the runtime's does, when it binds the thread): allocate before looking.
    drop(std::hint::black_box(Box::new(0_u8)));
    // Relaxed: a function pointer, whose code needs no ordering to be seen.
    let maker = MAKER.load(Ordering::Relaxed);
    if maker.is_null() {
        return None;
    }
    // SAFETY: only `set_default_maker` stores it, from a `fn() -> &'static Pool`.
    let make = unsafe { std::mem::transmute::<*mut (), fn() -> &'static Pool>(maker) };
    let pool = {
        let _making = Making::enter();
        make()
    };
    choose(pool);
    chosen()
}

std::thread_local! {
    /// Whether this thread runs the default pool's maker.
    static MAKING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread as running the maker until dropped (also when the maker unwinds).
struct Making;

impl Making {
    /// Panics if this thread runs the maker already: the maker needed the default pool
    /// (ran a parallel operation outside any pool), which would wait for itself.
    fn enter() -> Making {
        assert!(
            !MAKING.with(|making| making.replace(true)),
            "the default pool's maker (`Pool::set_default_maker`) ran a parallel operation \
             outside any pool, which needs the default pool it is making"
        );
        Making
    }
}

impl Drop for Making {
    fn drop(&mut self) {
        MAKING.with(|making| making.set(false));
    }
}

/// Whether a default pool was chosen or built already.
pub(crate) fn settled() -> bool {
    // Acquire: as in `chosen`.
    let chosen = !CHOSEN.load(Ordering::Acquire).is_null();
    #[cfg(not(rayforce_loom))]
    let chosen = chosen || BUILT.get().is_some();
    chosen
}

/// Makes `pool` the default, unless there is one already or one was built (which becomes
/// it); whether it is now.
pub(crate) fn choose(pool: &'static Pool) -> bool {
    // Acquire: as in `chosen`.
    let chosen = CHOSEN.load(Ordering::Acquire);
    if !chosen.is_null() {
        return std::ptr::eq(chosen, pool);
    }
    #[cfg(not(rayforce_loom))]
    if BUILT.get().is_some() {
        return false;
    }
    let pool = (pool as *const Pool).cast_mut();
    // Release: pairs with `chosen`'s Acquire.
    let chosen = CHOSEN.compare_exchange(
        std::ptr::null_mut(),
        pool,
        Ordering::Release,
        Ordering::Acquire,
    );
    match chosen {
        Ok(_) => true,
        Err(already) => std::ptr::eq(already, pool),
    }
}

/// The pool built by the defaults, made the default unless another was chosen since the
/// build began (then that one: the built pool is never used, its helpers parked for the
/// life of the process).
#[cfg(not(rayforce_loom))]
fn build() -> &'static Pool {
    let built = BUILT.get_or_init(|| {
        let tunables = rayforce_tunables::Tunables::resolve(&rayforce_tunables::Choices::new());
        // Strict mode (`rayforce.tunables.strict=1`) stops the program here, as at a
        // runtime's first allocation, with every diagnostic on standard error.
        tunables.abort_if_strict();
        Pool::builder()
            .tunables(&tunables)
            .best_effort()
            .build()
            .expect("a best-effort pool starts whatever helpers it can")
    });
    // Release: pairs with `chosen`'s Acquire, so the built pool is seen whole. Acquire on
    // failure: as in `chosen`.
    let adopted = CHOSEN.compare_exchange(
        std::ptr::null_mut(),
        std::ptr::from_ref(built).cast_mut(),
        Ordering::Release,
        Ordering::Acquire,
    );
    match adopted {
        Ok(_) => built,
        // SAFETY: only `choose` and this store it, each from a `&'static Pool`.
        Err(chosen) => unsafe { &*chosen },
    }
}

/// Under loom, a pool of one per call, leaked: the models build their own pools, and a
/// static cell would outlive loom's executions.
#[cfg(rayforce_loom)]
fn build() -> &'static Pool {
    let pool = Pool::builder().workers(1).build();
    Box::leak(Box::new(pool.expect("a pool of one starts no thread")))
}

impl Pool {
    /// Makes this pool the default one: where [`join`](crate::join) and
    /// [`current_num_threads`](crate::current_num_threads) run outside any pool's task or
    /// [`install`](Self::install). Returns whether it is the default now: `false` if
    /// another pool was made the default, or a free function that ran before built one.
    /// One pool is ever the default, and every free function runs on it: one building a
    /// default pool at this moment, on another thread, runs on this pool if this call
    /// stores it first. The runtime makes its pool the default when it builds it.
    ///
    /// ```
    /// use rayforce_pool::Pool;
    /// static POOL: rayforce_pool::ForkOnceCell<Pool> = rayforce_pool::ForkOnceCell::new();
    /// let pool = POOL.get_or_init(|| Pool::builder().workers(2).build().unwrap());
    /// if pool.set_default() {
    ///     assert_eq!(rayforce_pool::current_num_threads(), 2);
    /// }
    /// ```
    pub fn set_default(&'static self) -> bool {
        choose(self)
    }

    /// Offers `make` to make the default pool when it is first needed, if no pool is made
    /// the default before (with [`set_default`](Self::set_default) or
    /// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global), which
    /// take precedence). Returns whether it is the maker now: `false` if the default pool
    /// was chosen or built already, or another maker was offered. A runtime that is the
    /// global allocator offers its pool this way at its first allocation. `make` may run on
    /// several threads at once (the first pool stored stays the default: one it returns,
    /// one chosen meanwhile, or one a free function racing it built); a parallel
    /// operation it runs outside any pool panics, as it would need the default pool it is
    /// making.
    ///
    /// ```
    /// use rayforce_pool::{ForkOnceCell, Pool};
    /// static POOL: ForkOnceCell<Pool> = ForkOnceCell::new();
    /// fn make() -> &'static Pool {
    ///     POOL.get_or_init(|| Pool::builder().workers(3).build().unwrap())
    /// }
    /// if Pool::set_default_maker(make) {
    ///     assert_eq!(rayforce_pool::current_num_threads(), 3);
    /// }
    /// ```
    pub fn set_default_maker(make: fn() -> &'static Pool) -> bool {
        if settled() {
            return false;
        }
        let make = make as *mut ();
        // Relaxed: see `made`.
        match MAKER.compare_exchange(
            std::ptr::null_mut(),
            make,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => true,
            Err(offered) => offered == make,
        }
    }
}
