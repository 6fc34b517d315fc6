//! Several callers at once share the helpers: a second caller's dispatch gets a helper
//! while the first's is in flight; tasks that wait for each other get their helpers while
//! other callers hold every slot; a dispatch inside a task runs inline, in order; and 4
//! threads x 25,000 dispatches of random widths, narrow and wide, on one 4-wide pool run
//! every task exactly once with `stats()` adding up.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests and loom-tests

use rayforce_pool::prelude::*;
use rayforce_pool::{Pool, SignalState};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

#[test]
fn a_second_caller_gets_helpers_while_the_first_dispatch_runs() {
    let pool = Arc::new(Pool::builder().workers(4).wide_workers(4).build().unwrap());
    let a = {
        let pool = Arc::clone(&pool);
        std::thread::spawn(move || {
            pool.dispatch(2, |_| std::thread::sleep(Duration::from_millis(300)));
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    let inline_before = pool.stats().inline_dispatches;
    // Sleeping tasks need no free core, so this holds on any machine with the helpers.
    let started = Instant::now();
    pool.dispatch(2, |_| std::thread::sleep(Duration::from_millis(100)));
    let took = started.elapsed();
    assert_eq!(
        pool.stats().inline_dispatches,
        inline_before,
        "B ran inline: {:?}",
        pool.stats()
    );
    assert!(
        took < Duration::from_millis(150),
        "B's two 100 ms tasks took {took:?} while A's dispatch was in flight"
    );
    a.join().unwrap();
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn four_callers_of_random_widths_run_every_task_once() {
    const CALLERS: usize = 4;
    const ROUNDS: usize = 25_000;
    let pool = Arc::new(Pool::builder().workers(4).wide_workers(6).build().unwrap());
    let start = Arc::new(Barrier::new(CALLERS));
    let callers: Vec<_> = (0..CALLERS as u64)
        .map(|caller| {
            let (pool, start) = (Arc::clone(&pool), Arc::clone(&start));
            std::thread::spawn(move || {
                let mut seed = 0x9e37_79b9_7f4a_7c15 ^ (caller + 1);
                let counts: Vec<AtomicU32> = (0..=24).map(|_| AtomicU32::new(0)).collect();
                // (dispatches with a task, the most helpers they may attach)
                let mut tally = (0u64, 0u64);
                start.wait();
                for round in 0..ROUNDS {
                    // xorshift64*: a fixed sequence per caller, so a failure reproduces.
                    seed ^= seed >> 12;
                    seed ^= seed << 25;
                    seed ^= seed >> 27;
                    let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
                    let n = (r % 25) as usize;
                    let task = |i: usize| {
                        counts[i].fetch_add(1, Ordering::Relaxed);
                    };
                    let helpers = if r >> 32 & 1 == 0 {
                        pool.dispatch_wide(n, task);
                        pool.wide_width() - 1
                    } else {
                        pool.dispatch(n, task);
                        pool.width() - 1
                    };
                    for (i, c) in counts.iter().enumerate() {
                        let expected = u32::from(i < n);
                        let got = c.swap(0, Ordering::Relaxed);
                        assert_eq!(
                            got, expected,
                            "caller {caller} round {round}: task {i} of {n}"
                        );
                    }
                    tally.0 += u64::from(n > 0);
                    tally.1 += n.saturating_sub(1).min(helpers) as u64;
                }
                tally
            })
        })
        .collect();
    let (dispatches, wakeup_bound) = callers
        .into_iter()
        .map(|c| c.join().unwrap())
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let stats = pool.stats();
    assert_eq!(stats.dispatches, dispatches, "{stats:?}");
    assert!(
        stats.wakeups <= wakeup_bound,
        "more helpers attached than permits posted: {stats:?}, bound {wakeup_bound}"
    );
    assert!(
        stats.inline_dispatches < stats.dispatches,
        "callers shared the helpers rather than all running inline: {stats:?}"
    );
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

/// `f`'s result, run on a thread of its own; a failure naming `what` (instead of a hung
/// test) if it has not returned within `limit`.
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    result
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: not done after {limit:?}, hung"))
}

#[test]
fn tasks_that_wait_for_each_other_get_their_helper_while_other_callers_hold_every_slot() {
    // Two slots, both taken by 300 ms operations; the barrier's dispatch must wait for a
    // slot, not run its two tasks on one thread.
    let pool = Arc::new(Pool::builder().workers(2).max_in_flight(2).build().unwrap());
    let holders: Vec<_> = (0..2)
        .map(|_| {
            let pool = Arc::clone(&pool);
            std::thread::spawn(move || {
                pool.map(2, |_| std::thread::sleep(Duration::from_millis(300)));
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    let barrier_pool = Arc::clone(&pool);
    within(
        Duration::from_secs(20),
        "a barrier beside two slot holders",
        move || {
            let barrier = Barrier::new(2);
            barrier_pool.dispatch(2, |_| {
                barrier.wait();
            });
        },
    );
    holders.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

#[test]
fn barrier_dispatches_beside_streams_of_operations_never_hang() {
    // As the issue saw on the runtime's pool (one slot per participant): two threads
    // streaming operations, a third dispatching barrier tasks.
    let pool = Arc::new(Pool::builder().workers(2).build().unwrap());
    let streaming = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let streams: Vec<_> = (0..2)
        .map(|_| {
            let (pool, streaming) = (Arc::clone(&pool), Arc::clone(&streaming));
            std::thread::spawn(move || {
                let xs: Vec<u64> = (0..20_000).collect();
                while streaming.load(Ordering::Relaxed) {
                    let doubled = pool.map_slice(&xs, |x| x * 2);
                    assert_eq!(doubled[19_999], 39_998);
                }
            })
        })
        .collect();
    let barrier_pool = Arc::clone(&pool);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        within(
            Duration::from_secs(60),
            "2,000 barrier dispatches",
            move || {
                let barrier = Barrier::new(2);
                for _ in 0..2_000 {
                    barrier_pool.dispatch(2, |_| {
                        barrier.wait();
                    });
                }
            },
        )
    }));
    streaming.store(false, Ordering::Relaxed);
    streams.into_iter().for_each(|s| s.join().unwrap());
    if let Err(payload) = result {
        std::panic::resume_unwind(payload);
    }
}

#[test]
fn a_dispatch_inside_a_task_runs_its_tasks_inline_in_order() {
    let pool = Pool::builder().workers(2).build().unwrap();
    let nested: Vec<Mutex<Vec<(std::thread::ThreadId, usize)>>> =
        (0..2).map(|_| Mutex::default()).collect();
    pool.dispatch(2, |outer| {
        pool.dispatch(5, |task| {
            nested[outer]
                .lock()
                .unwrap()
                .push((std::thread::current().id(), task));
        });
    });
    for seen in &nested {
        let seen = seen.lock().unwrap();
        let thread = seen[0].0;
        assert_eq!(
            *seen,
            (0..5).map(|task| (thread, task)).collect::<Vec<_>>(),
            "one thread, tasks in order"
        );
    }
}

#[test]
fn a_worker_bound_below_the_sleeping_helpers_still_gets_its_helper() {
    // Three helpers asleep (no spinning); the bound lets only helper 1 take the permit, so
    // a wake-up that went to helper 2 or 3 alone would leave the barrier waiting.
    let pool = Arc::new(Pool::builder().workers(4).spin_us(0).build().unwrap());
    let bound_pool = Arc::clone(&pool);
    within(
        Duration::from_secs(60),
        "200 barriers on workers 0 and 1",
        move || {
            let barrier = Barrier::new(2);
            for _ in 0..200 {
                std::thread::sleep(Duration::from_micros(200)); // the helpers fall asleep
                bound_pool.dispatch_with_worker(2, 2, |worker, _| {
                    assert!(worker < 2, "worker {worker} past the bound");
                    barrier.wait();
                });
            }
        },
    );
}
