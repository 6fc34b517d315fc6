//! The pool follows the machine: readings change its active widths (unless a width was
//! set explicitly), helpers beyond them park and take no permits, missing ones start, and
//! every dispatch stays exact while widths change under it. `refresh` allocates nothing
//! (a counting allocator, counting per thread, wraps the system one here).
#![cfg(not(rayforce_loom))] // real threads; the loom model is in loom-tests

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Const-initialised and without a destructor, so touching it never allocates.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every method forwards to `System` unchanged; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout, as the caller promises.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations this thread made in `f`.
fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

use rayforce_pool::{Pool, SignalState, MAX_WIDTH};
use rayforce_tunables::cpu::{Count, CpuCounts, Source};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A reading of a machine with `physical` cores and twice as many logical CPUs.
fn machine(physical: usize) -> CpuCounts {
    let count = |value| Count {
        value,
        source: Source::OnlineList,
        fallback: false,
    };
    CpuCounts {
        online: count(2 * physical),
        schedulable: count(2 * physical),
        physical: count(physical),
        quota: None,
    }
}

/// A pool whose widths follow readings (of `machine(physical)` first), with no periodic
/// re-check: the test hands it every reading.
fn pool_on(physical: usize) -> Pool {
    Pool::builder()
        .cpu_counts(machine(physical))
        .recheck_ms(0)
        .build()
        .unwrap()
}

/// `n` tasks that wait for each other: they finish only if `n` participants run at once.
fn all_at_once(pool: &Pool, n: usize) -> bool {
    let arrived = AtomicUsize::new(0);
    let gave_up = AtomicBool::new(false);
    pool.dispatch(n, |_| {
        arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while arrived.load(Ordering::SeqCst) < n {
            if Instant::now() > deadline {
                gave_up.store(true, Ordering::SeqCst);
                return;
            }
            std::thread::yield_now();
        }
    });
    !gave_up.load(Ordering::SeqCst)
}

/// Over `rounds` wide dispatches of `n` tasks of about 20 us: the threads that ran tasks,
/// and the most that ran tasks of one dispatch at once.
fn threads_used(pool: &Pool, n: usize, rounds: usize) -> (usize, usize) {
    let seen = Mutex::new(HashSet::new());
    let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
    for _ in 0..rounds {
        pool.dispatch_wide(n, |_| {
            seen.lock().unwrap().insert(std::thread::current().id());
            let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            let until = Instant::now() + Duration::from_micros(20);
            while Instant::now() < until {}
            inside.fetch_sub(1, Ordering::SeqCst);
        });
    }
    let used = seen.lock().unwrap().len();
    (used, most.into_inner())
}

#[test]
fn readings_change_the_widths_and_helpers_beyond_them_take_no_permits() {
    let pool = pool_on(4);
    assert_eq!((pool.width(), pool.wide_width()), (4, 8));
    pool.dispatch_wide(8, |_| ()); // all 7 helpers start
    assert!(pool.refresh_from(&machine(2)), "a smaller machine");
    assert_eq!((pool.width(), pool.wide_width()), (2, 4));
    assert!(
        !pool.refresh_from(&machine(2)),
        "the same reading changes nothing"
    );
    assert_eq!(pool.stats().resizes, 1);
    // The wide width is now 4 (the schedulable count): helpers 4 to 7, started while it
    // was 8, are parked and never run a task; at most 4 participants at once.
    let (used, most) = threads_used(&pool, 8, 100);
    assert!(used <= 4 && most <= 4, "{used} threads, {most} at once");
    assert!(all_at_once_wide(&pool, 4));
    assert!(pool.refresh_from(&machine(4)), "back to four cores");
    assert_eq!((pool.width(), pool.wide_width()), (4, 8));
    assert!(all_at_once(&pool, 4), "parked helpers came back");
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn the_reading_age_counts_from_the_latest_reading() {
    let pool = pool_on(2);
    std::thread::sleep(Duration::from_millis(20));
    assert!(pool.stats().reading_age >= Duration::from_millis(20));
    let before = Instant::now();
    assert!(!pool.refresh_from(&machine(2)));
    assert!(pool.stats().reading_age <= before.elapsed());
}

/// `all_at_once` with `dispatch_wide`.
fn all_at_once_wide(pool: &Pool, n: usize) -> bool {
    let arrived = AtomicUsize::new(0);
    pool.dispatch_wide(n, |_| {
        arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while arrived.load(Ordering::SeqCst) < n && Instant::now() < deadline {
            std::thread::yield_now();
        }
    });
    arrived.load(Ordering::SeqCst) == n
}

#[test]
fn an_explicit_width_does_not_follow_readings() {
    let pool = Pool::builder()
        .workers(3)
        .cpu_counts(machine(4))
        .spin_us(0)
        .build()
        .unwrap();
    assert!(!pool.refresh_from(&machine(1)));
    assert_eq!((pool.width(), pool.wide_width()), (3, 3));
}

#[test]
fn growing_starts_the_missing_helpers() {
    let pool = pool_on(1);
    assert_eq!(pool.width(), 1);
    pool.resize(3, 3);
    assert_eq!(pool.width(), 3);
    assert!(
        all_at_once(&pool, 3),
        "two helpers started on the next dispatch"
    );
}

#[test]
fn every_task_runs_once_while_widths_change_under_the_dispatches() {
    let pool = Arc::new(pool_on(4));
    let stop = Arc::new(AtomicBool::new(false));
    let resizer = {
        let (pool, stop) = (Arc::clone(&pool), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut cores = 1;
            while !stop.load(Ordering::Relaxed) {
                pool.refresh_from(&machine(cores));
                cores = cores % 4 + 1;
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let counts: Vec<AtomicU32> = (0..64).map(|_| AtomicU32::new(0)).collect();
    // At least 20,000 rounds, and on until more than 10 resizes fell among them: trivial
    // dispatches can outrun a resizer that sleeps 200 us between changes.
    let deadline = Instant::now() + Duration::from_secs(20);
    for round in 0usize.. {
        if round >= 20_000 && pool.stats().resizes > 10 {
            break;
        }
        assert!(Instant::now() < deadline, "{:?}", pool.stats());
        let n = round % 65;
        let task = |i: usize| {
            counts[i].fetch_add(1, Ordering::Relaxed);
        };
        if round % 3 == 0 {
            pool.dispatch_wide(n, task);
        } else {
            pool.dispatch(n, task);
        }
        for (i, c) in counts.iter().enumerate() {
            assert_eq!(
                c.swap(0, Ordering::Relaxed),
                u32::from(i < n),
                "round {round}: task {i} of {n}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    resizer.join().unwrap();
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn refreshing_allocates_nothing() {
    let pool = Pool::builder().recheck_ms(0).build().unwrap();
    pool.dispatch(4, |_| ());
    let smaller = machine(1);
    let allocations = allocations_during(|| {
        pool.refresh(); // the live machine, as the first reading
        pool.refresh_from(&smaller); // a change: the widths shrink, helpers park
        pool.refresh();
    });
    assert_eq!(allocations, 0);
}

#[test]
fn a_width_set_by_resize_stays_through_readings_and_the_recheck() {
    let pool = pool_on(4);
    pool.resize(1, 1);
    pool.refresh_from(&machine(4)); // the machine as before
    assert_eq!((pool.width(), pool.wide_width()), (1, 1));
    pool.refresh_from(&machine(8)); // a larger one
    assert_eq!((pool.width(), pool.wide_width()), (1, 1));
    assert_eq!(pool.stats().resizes, 1, "only the spin budget followed");

    // The periodic re-check, on a pool that follows the live machine.
    let pool = Pool::builder().recheck_ms(1).build().unwrap();
    pool.resize(1, 1);
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(2));
        pool.dispatch(2, |_| ());
        assert_eq!((pool.width(), pool.wide_width()), (1, 1));
    }
    pool.refresh();
    assert_eq!((pool.width(), pool.wide_width()), (1, 1));
}

#[test]
fn widths_beyond_the_bound_are_clamped_by_resize_and_readings_and_refused_by_the_builder() {
    let pool = pool_on(2);
    pool.resize(1, 1 << 32);
    assert_eq!((pool.width(), pool.wide_width()), (1, MAX_WIDTH));
    pool.resize(usize::MAX, usize::MAX);
    assert_eq!((pool.width(), pool.wide_width()), (MAX_WIDTH, MAX_WIDTH));
    pool.resize(0, 0);
    assert_eq!((pool.width(), pool.wide_width()), (1, 1));
    pool.dispatch_wide(4, |_| ());
    // A reading the caller made, of more CPUs than a pool may have, is clamped too (the
    // same rule sizes a pool built from it).
    let following = pool_on(2);
    following.refresh_from(&machine(40_000));
    assert_eq!(
        (following.width(), following.wide_width()),
        (MAX_WIDTH, MAX_WIDTH)
    );
    following.refresh_from(&machine(2));
    following.dispatch(4, |_| ());

    let refused = |builder: rayforce_pool::PoolBuilder, named: &str| {
        let err = builder
            .build()
            .expect_err("an out-of-range setting builds no pool");
        let message = err.to_string();
        assert!(message.contains(named), "{message}");
        assert!(message.contains("at most"), "{message}");
    };
    refused(Pool::builder().workers(1 << 33), "workers(8589934592)");
    refused(Pool::builder().workers(MAX_WIDTH + 1), "workers(8193)");
    refused(
        Pool::builder().workers(2).wide_workers(usize::MAX),
        "wide_workers(",
    );
    refused(
        Pool::builder().workers(2).max_in_flight(1 << 40),
        "max_in_flight(",
    );
    refused(
        Pool::builder().workers(2).spin_us(u32::MAX),
        "spin_us(4294967295)",
    );
    refused(
        Pool::builder().workers(2).recheck_ms(u32::MAX),
        "recheck_ms(4294967295)",
    );
    #[cfg(target_pointer_width = "64")]
    refused(
        Pool::builder().workers(2).stack_size(usize::MAX),
        "stack_size(18446744073709551615)",
    );
    let widest = Pool::builder().workers(1).wide_workers(MAX_WIDTH).build();
    assert_eq!(widest.unwrap().wide_width(), MAX_WIDTH);
}

#[test]
fn scratch_sized_once_holds_every_worker_index_after_the_pool_widens() {
    // As the README's per-worker scratch: sized once, by the width when made (1 here, as a
    // process started under `taskset -c 0`), reused after readings widened the pool.
    let pool = pool_on(1);
    let scratch: Vec<Mutex<Vec<usize>>> = (0..pool.width()).map(|_| Mutex::default()).collect();
    assert!(pool.refresh_from(&machine(2)));
    pool.resize(4, 4);
    assert_eq!(pool.wide_width(), 4, "widened past the scratch");
    for _ in 0..50 {
        pool.dispatch_with_worker(16, scratch.len(), |worker, task| {
            scratch[worker].lock().unwrap().push(task);
        });
    }
    let ran: usize = scratch.iter().map(|s| s.lock().unwrap().len()).sum();
    assert_eq!(ran, 50 * 16, "every task ran, on worker 0");
    // A larger bound lets helpers in, never past it, however wide the pool is.
    let wider: Vec<AtomicUsize> = (0..2).map(|_| AtomicUsize::new(0)).collect();
    for _ in 0..50 {
        pool.dispatch_with_worker(2, wider.len(), |worker, _| {
            wider[worker].fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_millis(100);
            while wider
                .iter()
                .map(|w| w.load(Ordering::SeqCst))
                .sum::<usize>()
                % 2
                == 1
                && Instant::now() < deadline
            {
                std::thread::yield_now();
            }
        });
    }
    assert!(wider[1].load(Ordering::SeqCst) > 0, "helper 1 took part");
    let zero = std::panic::catch_unwind(|| pool.dispatch_with_worker(2, 0, |_, _| ()));
    assert!(zero.is_err(), "a bound of 0 workers is refused");
}

#[test]
fn a_start_hook_that_uses_its_own_pool_while_the_pool_grows_does_not_hang() {
    static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
    static HOOK_RAN: AtomicUsize = AtomicUsize::new(0);
    let (done, finished) = std::sync::mpsc::channel();
    // On its own thread, so that a hang fails the test instead of stalling it.
    std::thread::spawn(move || {
        let pool = Pool::builder()
            .workers(2)
            .on_thread_start(|_| {
                if let Some(pool) = POOL.get() {
                    // A dispatch, a join and a re-reading, from the hook of a helper that
                    // the pool is starting: they run inline.
                    pool.dispatch(2, |_| ());
                    assert_eq!(pool.join(|| 1, || 2), (1, 2));
                    pool.refresh();
                    HOOK_RAN.fetch_add(1, Ordering::SeqCst);
                }
            })
            .build()
            .unwrap();
        let pool = POOL.get_or_init(|| pool);
        pool.resize(3, 3);
        pool.dispatch(3, |_| ());
        done.send(()).unwrap();
    });
    let outcome = finished.recv_timeout(Duration::from_secs(30));
    assert!(
        outcome.is_ok(),
        "the dispatch that starts the third helper returned"
    );
    assert!(
        HOOK_RAN.load(Ordering::SeqCst) >= 1,
        "the late helper's hook used its pool"
    );
}
