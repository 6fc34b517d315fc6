//! Thread exit in every order against mimalloc's own teardown. A bound thread allocates
//! through its theap without a lookup, so the binding must stay safe to use whatever runs
//! first: Rust thread-local destructors that allocate before and after the allocator's exit
//! hook, and a thread whose first allocation happens inside a pthread-key destructor (its
//! exit hook is registered too late to ever run) and that allocates again after mimalloc's
//! pthread-key destructor has freed the thread's theaps. The exit hook ends the thread's
//! mimalloc state itself (under the bind lock, so that no fork copies mimalloc's locks
//! held), and so does an allocation after it: mimalloc's key holds nothing by then.

use rayforce_alloc::RayAlloc;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

extern "C" {
    /// mimalloc's pthread key, whose destructor tears a thread down (`prim/unix/prim.c`).
    static _mi_heap_default_key: libc::pthread_key_t;
}

/// Allocates, writes, grows and reads back blocks of a few size classes (small, medium,
/// large page, huge), and frees them: whether memory from this thread's binding works now.
fn blocks_work(seed: u8) -> bool {
    [24usize, 3000, 200_000, 5 << 20].iter().all(|&size| {
        let mut block = vec![seed; size];
        block.resize(size * 2, seed.wrapping_add(1));
        let boxed = Box::new([seed; 64]);
        block[..size].iter().all(|&b| b == seed)
            && block[size..].iter().all(|&b| b == seed.wrapping_add(1))
            && boxed.iter().all(|&b| b == seed)
    })
}

static ORDER: AtomicUsize = AtomicUsize::new(0);
static EARLY_AT: AtomicUsize = AtomicUsize::new(0);
static LATE_AT: AtomicUsize = AtomicUsize::new(0);
static EARLY_OK: AtomicBool = AtomicBool::new(false);
static LATE_OK: AtomicBool = AtomicBool::new(false);
/// Whether mimalloc's key held the thread's state, as each destructor began and ended.
static EARLY_STATE: [AtomicBool; 2] = [AtomicBool::new(true), AtomicBool::new(true)];
static LATE_STATE: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];

/// Whether mimalloc's thread-exit key holds this thread's state (it has not been ended).
fn mimalloc_state_live() -> bool {
    // SAFETY: reading a pthread key's value for the calling thread; mimalloc made the key
    // at its start.
    !unsafe { libc::pthread_getspecific(_mi_heap_default_key) }.is_null()
}

/// Records when its destructor ran, whether allocating there worked, and whether
/// mimalloc's state for the thread was live before and after.
struct AllocatesOnDrop {
    at: &'static AtomicUsize,
    ok: &'static AtomicBool,
    state: &'static [AtomicBool; 2],
}

impl Drop for AllocatesOnDrop {
    fn drop(&mut self) {
        self.at
            .store(ORDER.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
        self.state[0].store(mimalloc_state_live(), Ordering::SeqCst);
        self.ok.store(blocks_work(7), Ordering::SeqCst);
        self.state[1].store(mimalloc_state_live(), Ordering::SeqCst);
    }
}

thread_local! {
    /// Touched before the thread's first allocation: its destructor runs after the hook's.
    static EARLY: Cell<Option<AllocatesOnDrop>> = const { Cell::new(None) };
    /// Touched after: its destructor runs before the hook's.
    static LATE: Cell<Option<AllocatesOnDrop>> = const { Cell::new(None) };
}

#[test]
fn thread_local_destructors_allocate_before_and_after_the_exit_hook() {
    std::thread::spawn(|| {
        EARLY.set(Some(AllocatesOnDrop {
            at: &EARLY_AT,
            ok: &EARLY_OK,
            state: &EARLY_STATE,
        }));
        assert!(blocks_work(3), "the thread's own blocks");
        LATE.set(Some(AllocatesOnDrop {
            at: &LATE_AT,
            ok: &LATE_OK,
            state: &LATE_STATE,
        }));
    })
    .join()
    .unwrap();
    let (early, late) = (
        EARLY_AT.load(Ordering::SeqCst),
        LATE_AT.load(Ordering::SeqCst),
    );
    // Destructors run last registered first (glibc's `__call_tls_dtors`, and Rust's own
    // list elsewhere), so the hook, registered at the first allocation, ran between them.
    assert!(
        late > 0 && early > late,
        "LATE's destructor ran before EARLY's: {late}, {early}"
    );
    assert!(EARLY_OK.load(Ordering::SeqCst), "allocating after the hook");
    assert!(LATE_OK.load(Ordering::SeqCst), "allocating before the hook");
    let state = |flags: &[AtomicBool; 2]| flags.each_ref().map(|f| f.load(Ordering::SeqCst));
    assert_eq!(state(&LATE_STATE), [true, true], "live before the hook");
    assert_eq!(
        state(&EARLY_STATE),
        [false, false],
        "ended by the hook, and again after an allocation that made it anew"
    );
}

/// Rounds of the key destructor below, and how each went.
static ROUNDS: AtomicUsize = AtomicUsize::new(0);
static ROUNDS_OK: AtomicUsize = AtomicUsize::new(0);
/// Rounds that began with mimalloc's teardown of this thread already done.
static ROUNDS_AFTER_TEARDOWN: AtomicUsize = AtomicUsize::new(0);
static KEY: AtomicUsize = AtomicUsize::new(0);

/// The key destructor: allocates (binding the thread on the first round), then sets the
/// key again so that glibc calls it once more, after mimalloc's destructor, whose key is
/// older and so runs first in each round.
extern "C" fn key_destructor(_: *mut libc::c_void) {
    let round = ROUNDS.fetch_add(1, Ordering::SeqCst) + 1;
    let mimalloc_live = mimalloc_state_live();
    if round > 1 && !mimalloc_live {
        ROUNDS_AFTER_TEARDOWN.fetch_add(1, Ordering::SeqCst);
    }
    if blocks_work(round as u8) {
        ROUNDS_OK.fetch_add(1, Ordering::SeqCst);
    }
    // SAFETY: KEY holds a live key; a non-null value asks for another round.
    unsafe {
        libc::pthread_setspecific(
            KEY.load(Ordering::SeqCst) as _,
            core::ptr::dangling::<u8>().cast(),
        )
    };
}

/// The thread body: sets the key and returns without allocating.
extern "C" fn sets_the_key(_: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: as above.
    unsafe {
        libc::pthread_setspecific(
            KEY.load(Ordering::SeqCst) as _,
            core::ptr::dangling::<u8>().cast(),
        )
    };
    core::ptr::null_mut()
}

#[test]
fn a_first_binding_inside_a_pthread_key_destructor_outlives_mimallocs_teardown() {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: creating a key with a destructor that lives as long as the process.
    let created = unsafe { libc::pthread_key_create(&mut key, Some(key_destructor)) };
    assert_eq!(created, 0);
    // SAFETY: mimalloc wrote its key at its start, before this test ran.
    let mimalloc_key = unsafe { _mi_heap_default_key };
    assert!(
        mimalloc_key < key,
        "mimalloc's key {mimalloc_key} must be older than this test's {key}, or its \
         destructor would not run first in a round"
    );
    KEY.store(key as usize, Ordering::SeqCst);
    let mut thread: libc::pthread_t = 0;
    // SAFETY: a plain thread whose body touches nothing but the key.
    unsafe {
        assert_eq!(
            libc::pthread_create(
                &mut thread,
                core::ptr::null(),
                sets_the_key,
                core::ptr::null_mut()
            ),
            0
        );
        assert_eq!(libc::pthread_join(thread, core::ptr::null_mut()), 0);
        libc::pthread_key_delete(key);
    }
    let rounds = ROUNDS.load(Ordering::SeqCst);
    assert!(
        rounds >= 3,
        "glibc runs key destructors in up to 4 rounds: {rounds}"
    );
    assert_eq!(
        ROUNDS_OK.load(Ordering::SeqCst),
        rounds,
        "every round's blocks work"
    );
    assert_eq!(
        ROUNDS_AFTER_TEARDOWN.load(Ordering::SeqCst),
        rounds - 1,
        "every round after the first began after mimalloc tore the thread down, and \
         allocated through the binding made before"
    );
    assert!(blocks_work(9), "the process's allocator is intact");
}
