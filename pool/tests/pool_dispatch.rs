//! `Pool` on real threads: results, the wake-up bound, panics, nesting, concurrent callers,
//! shutdown, and a stress run of 100,000 dispatches of random widths.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests and loom-tests

use rayforce_pool::{BuildError, Pool, SignalState};
use rayforce_tunables::cpu::{Count, CpuCounts, CpuPolicy, Source};
use rayforce_tunables::{Choices, Tunables};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

fn pool(workers: usize) -> Pool {
    Pool::builder()
        .workers(workers)
        .wide_workers(workers + 2)
        .build()
        .unwrap()
}

/// Runs `n` tasks and returns how often each ran.
fn run_counts(pool: &Pool, n: usize, wide: bool) -> Vec<u32> {
    let counts: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
    let task = |i: usize| {
        counts[i].fetch_add(1, Ordering::Relaxed);
    };
    if wide {
        pool.dispatch_wide(n, task);
    } else {
        pool.dispatch(n, task);
    }
    counts.into_iter().map(AtomicU32::into_inner).collect()
}

#[test]
fn every_task_runs_once_and_borrows_the_callers_stack() {
    let pool = pool(4);
    let data: Vec<u64> = (0..1000).collect();
    let sum = AtomicU64::new(0);
    pool.dispatch(10, |chunk| {
        let part: u64 = data[chunk * 100..(chunk + 1) * 100].iter().sum();
        sum.fetch_add(part, Ordering::Relaxed);
    });
    assert_eq!(sum.into_inner(), 499_500);
    assert!(run_counts(&pool, 37, false).iter().all(|&c| c == 1));
    assert!(run_counts(&pool, 0, false).is_empty());
}

#[test]
fn a_million_tiny_tasks_run_once_each_in_chunks_even_when_some_panic() {
    let pool = pool(3);
    let n = 1_000_003;
    let counts: Vec<std::sync::atomic::AtomicU8> = (0..n)
        .map(|_| std::sync::atomic::AtomicU8::new(0))
        .collect();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.dispatch(n, |i| {
            counts[i].fetch_add(1, Ordering::Relaxed);
            if i % 250_000 == 7 {
                panic!("task {i}");
            }
        })
    }));
    assert!(outcome.is_err(), "a panic resumes on the caller");
    let wrong: Vec<usize> = (0..n)
        .filter(|&i| counts[i].load(Ordering::Relaxed) != 1)
        .collect();
    assert!(
        wrong.is_empty(),
        "tasks not run exactly once: {:?}",
        &wrong[..wrong.len().min(10)]
    );
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn a_narrow_dispatch_wakes_at_most_n_minus_1_helpers() {
    let pool = Pool::builder().workers(8).spin_us(0).build().unwrap();
    for n in [1usize, 2, 3, 2, 1, 8, 2] {
        for _ in 0..50 {
            let before = pool.stats().wakeups;
            run_counts(&pool, n, false);
            let woken = pool.stats().wakeups - before;
            assert!(
                (woken as usize) < n,
                "{woken} helpers woken for {n} tasks (at most n - 1)"
            );
            assert_eq!(pool.signal_state(), SignalState::IDLE);
        }
    }
}

#[test]
fn tasks_that_need_n_participants_wake_exactly_n_minus_1_helpers() {
    let pool = Pool::builder().workers(8).spin_us(0).build().unwrap();
    for n in [2usize, 3, 2, 5, 2] {
        // Each task waits until all n have started, so n participants must run at once.
        let started = AtomicUsize::new(0);
        let before = pool.stats().wakeups;
        pool.dispatch(n, |_| {
            started.fetch_add(1, Ordering::SeqCst);
            while started.load(Ordering::SeqCst) < n {
                std::thread::yield_now();
            }
        });
        assert_eq!(pool.stats().wakeups - before, n as u64 - 1, "{n} tasks");
    }
}

#[test]
fn one_worker_runs_everything_inline() {
    // workers(1) alone: the wide width follows it (the builder's docs promise the caller
    // runs everything), whatever the machine's schedulable count.
    let pool = Pool::builder().workers(1).build().unwrap();
    assert_eq!((pool.width(), pool.wide_width()), (1, 1));
    let caller = std::thread::current().id();
    pool.dispatch(5, |_| assert_eq!(std::thread::current().id(), caller));
    pool.dispatch_wide(5, |_| assert_eq!(std::thread::current().id(), caller));
    assert_eq!(pool.stats().inline_dispatches, 2);
    assert_eq!(pool.stats().wakeups, 0);
}

#[test]
fn a_panic_resumes_on_the_caller_after_the_others_ran() {
    let pool = pool(3);
    let ran = AtomicUsize::new(0);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.dispatch(20, |i| {
            ran.fetch_add(1, Ordering::Relaxed);
            if i % 7 == 3 {
                panic!("task {i} failed");
            }
        })
    }));
    let payload = outcome.unwrap_err();
    let message = payload.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("task ") && message.ends_with(" failed"),
        "{message}"
    );
    assert_eq!(ran.into_inner(), 20);
    assert!(
        run_counts(&pool, 9, false).iter().all(|&c| c == 1),
        "still usable"
    );
}

#[test]
fn a_dispatch_from_inside_a_task_runs_inline() {
    let pool = pool(3);
    let inner = AtomicUsize::new(0);
    pool.dispatch(4, |_| {
        let me = std::thread::current().id();
        pool.dispatch(3, |_| {
            assert_eq!(std::thread::current().id(), me);
            inner.fetch_add(1, Ordering::Relaxed);
        });
    });
    assert_eq!(inner.into_inner(), 12);
}

#[test]
fn concurrent_callers_never_deadlock() {
    let pool = Arc::new(pool(3));
    let start = Arc::new(Barrier::new(4));
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (pool, start) = (Arc::clone(&pool), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                for n in 0..300 {
                    assert!(run_counts(&pool, n % 9, n % 2 == 0).iter().all(|&c| c == 1));
                }
            })
        })
        .collect();
    for caller in callers {
        caller.join().unwrap();
    }
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn dropping_the_pool_joins_its_helpers() {
    struct OnExit(Arc<AtomicUsize>);
    impl Drop for OnExit {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    thread_local! {
        static GUARD: std::cell::RefCell<Option<OnExit>> = const { std::cell::RefCell::new(None) };
    }
    let exited = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicUsize::new(0));
    let pool = {
        let (exited, started) = (Arc::clone(&exited), Arc::clone(&started));
        Pool::builder()
            .workers(3)
            .wide_workers(4)
            .on_thread_start(move |_| {
                started.fetch_add(1, Ordering::SeqCst);
                GUARD.with(|g| *g.borrow_mut() = Some(OnExit(Arc::clone(&exited))));
            })
            .build()
            .unwrap()
    };
    pool.dispatch_wide(4, |_| ());
    drop(pool);
    assert_eq!(
        started.load(Ordering::SeqCst),
        3,
        "2 helpers + 1 wide helper"
    );
    assert_eq!(
        exited.load(Ordering::SeqCst),
        3,
        "every helper exited before drop returned"
    );
}

#[test]
fn width_comes_from_explicit_workers_then_tunables_then_the_policy() {
    let count = |value| Count {
        value,
        source: Source::OnlineList,
        fallback: false,
    };
    let counts = CpuCounts {
        online: count(16),
        schedulable: count(8),
        physical: count(4),
        quota: None,
    };
    let by_policy = Pool::builder().cpu_counts(counts).build().unwrap();
    assert_eq!((by_policy.width(), by_policy.wide_width()), (4, 8));
    let online = Pool::builder()
        .cpu_counts(counts)
        .policy(CpuPolicy::Online)
        .build()
        .unwrap();
    assert_eq!(online.width(), 16);
    let mut tunables = Tunables::from_choices(&Choices::new());
    tunables.apply_string(b"rayforce.pool.workers=3:rayforce.pool.wide=0");
    let tuned = Pool::builder()
        .cpu_counts(counts)
        .tunables(&tunables)
        .build()
        .unwrap();
    assert_eq!((tuned.width(), tuned.wide_width()), (3, 3));
    let explicit = Pool::builder()
        .cpu_counts(counts)
        .tunables(&tunables)
        .workers(2)
        .build()
        .unwrap();
    assert_eq!(explicit.width(), 2);
    assert!(matches!(
        Pool::builder().workers(0).build(),
        Err(BuildError::ZeroWorkers)
    ));
}

/// `rounds` dispatches of random widths, narrow and wide, each task counted.
fn stress(pool: &Pool, rounds: usize) {
    let width = pool.width();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        // xorshift64*: a fixed sequence, so a failure reproduces.
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let counts: Vec<AtomicU32> = (0..=4 * width).map(|_| AtomicU32::new(0)).collect();
    for round in 0..rounds {
        let r = next();
        let n = (r % (4 * width as u64 + 1)) as usize;
        let task = |i: usize| {
            counts[i].fetch_add(1, Ordering::Relaxed);
        };
        if r >> 32 & 3 == 0 {
            pool.dispatch_wide(n, task);
        } else {
            pool.dispatch(n, task);
        }
        for (i, c) in counts.iter().enumerate() {
            let expected = u32::from(i < n);
            assert_eq!(
                c.swap(0, Ordering::Relaxed),
                expected,
                "round {round}: task {i} of {n}"
            );
        }
    }
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn stress_random_widths_narrow_and_wide() {
    stress(&pool(4), 100_000);
}

#[test]
fn with_spin_us_0_every_wait_blocks_and_every_result_is_exact() {
    let pool = Pool::builder()
        .workers(4)
        .wide_workers(6)
        .spin_us(0)
        .build()
        .unwrap();
    stress(&pool, 20_000);
    // The stress's tasks are so short that its caller may run all of them before a helper
    // started has first blocked (built optimised, beside another test: 20,000 dispatches in
    // 2 ms, no helper woken). Two tasks that wait for each other need a helper: once the
    // helpers have had time to block, one is woken from the kernel for them.
    for _ in 0..100 {
        if pool.stats().kernel_wakeups > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        let started = AtomicUsize::new(0);
        pool.dispatch(2, |_| {
            started.fetch_add(1, Ordering::SeqCst);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while started.load(Ordering::SeqCst) < 2 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no helper came in 10 s"
                );
                std::thread::yield_now();
            }
        });
    }
    let stats = pool.stats();
    assert_eq!(
        (stats.caught_spinning, stats.spins_then_blocked),
        (0, 0),
        "{stats:?}"
    );
    assert_eq!(stats.spin_time, std::time::Duration::ZERO);
    assert!(stats.kernel_wakeups > 0, "helpers blocked: {stats:?}");
}
