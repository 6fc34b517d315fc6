//! `join`, `install` and `current_num_threads`: results exact at every recursion depth,
//! each half run once wherever it ran, panics resumed once both halves finished with
//! nothing dropped twice or lost, operations nested inside joins inside operations, joins
//! outside any pool (the default pool) and in a child forked from inside a join;
//! `join_context` tells a half taken by another thread that it migrated.
#![cfg(not(rayforce_loom))] // real threads and processes

use rayforce_pool::prelude::*;
use rayforce_pool::{join, Pool};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod child_ends;
use child_ends::ChildEnds;

/// Held by the tests that panic and by the one that forks: a child forked while another
/// thread of this test binary printed a panic (its backtrace lock held) would hang in its
/// own panic.
static PANICS_OR_FORKS: Mutex<()> = Mutex::new(());

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().unwrap()
}

/// Leaves of a full binary tree of `depth` levels, counted by joins.
fn leaves(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (a, b) = join(|| leaves(depth - 1), || leaves(depth - 1));
    a + b
}

fn fib_join(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = join(|| fib_join(n - 1), || fib_join(n - 2));
    a + b
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[test]
fn results_are_exact_at_every_recursion_depth() {
    for workers in [1, 2, 4] {
        let pool = pool(workers);
        for depth in 0..=20 {
            assert_eq!(pool.install(|| leaves(depth)), 1 << depth, "depth {depth}");
        }
        for n in [0, 1, 2, 10, 25] {
            assert_eq!(
                pool.install(|| fib_join(n)),
                fib(n),
                "fib({n}), {workers} workers"
            );
        }
    }
}

#[test]
fn each_half_runs_once_and_the_results_come_back_in_order() {
    let pool = pool(2);
    let runs = AtomicUsize::new(0);
    for round in 0..10_000u64 {
        let (a, b) = pool.join(
            || {
                runs.fetch_add(1, Ordering::Relaxed);
                round
            },
            || {
                runs.fetch_add(1, Ordering::Relaxed);
                vec![round; 3]
            },
        );
        assert_eq!((a, b), (round, vec![round; 3]));
    }
    assert_eq!(runs.into_inner(), 20_000);
}

/// Counts its drops: a value returned, captured or panicked through must be dropped once.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// `pool.join(a, b)` where `a` and `b` each return a counted value and panic as asked; both
/// always run to their end. Returns the panic's message, if one resumed.
fn join_panicking(pool: &Pool, a_panics: bool, b_panics: bool) -> Option<String> {
    let (made, dropped, ran) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let half = |name: &'static str, panics: bool| {
        let (made, dropped, ran) = (&made, &dropped, &ran);
        move || {
            // Nested joins inside the half: their frames must unwind cleanly too.
            let (x, _) = join(|| Counted(dropped), || Counted(dropped));
            made.fetch_add(2, Ordering::Relaxed);
            ran.fetch_add(1, Ordering::Relaxed);
            if panics {
                panic!("{name} panicked");
            }
            x
        }
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.join(half("a", a_panics), half("b", b_panics))
    }));
    let message = match outcome {
        Ok(values) => {
            drop(values);
            None
        }
        Err(payload) => Some(payload.downcast_ref::<String>().cloned().unwrap()),
    };
    assert_eq!(
        ran.load(Ordering::Relaxed),
        2,
        "both halves ran to their end"
    );
    assert_eq!(
        dropped.load(Ordering::Relaxed),
        made.load(Ordering::Relaxed),
        "every value made was dropped once"
    );
    message
}

#[test]
fn a_panic_in_either_half_resumes_after_both_finished_with_every_value_dropped_once() {
    let _alone = PANICS_OR_FORKS.lock().unwrap_or_else(|p| p.into_inner());
    for workers in [1, 2] {
        let pool = pool(workers);
        for _ in 0..50 {
            assert_eq!(join_panicking(&pool, false, false), None);
            assert_eq!(
                join_panicking(&pool, true, false).as_deref(),
                Some("a panicked")
            );
            assert_eq!(
                join_panicking(&pool, false, true).as_deref(),
                Some("b panicked")
            );
            // Both: `a`'s, as rayon's `join`.
            assert_eq!(
                join_panicking(&pool, true, true).as_deref(),
                Some("a panicked")
            );
        }
    }
}

#[test]
fn operations_inside_joins_inside_operations_are_exact() {
    let pool = pool(2);
    let xs: Vec<u64> = (0..2_000).collect();
    let sums = pool.map(16, |i| {
        let (left, right) = join(
            || pool.sum(xs.len(), |j| xs[j] * i as u64),
            || pool.map_slice(&xs, |x| x + i as u64).iter().sum::<u64>(),
        );
        left + right
    });
    let total: u64 = xs.iter().sum();
    for (i, sum) in sums.into_iter().enumerate() {
        let i = i as u64;
        assert_eq!(sum, total * i + total + i * xs.len() as u64, "item {i}");
    }
}

#[test]
fn joins_outside_any_pool_run_on_the_default_pool() {
    assert_eq!(fib_join(20), fib(20));
    assert!(rayforce_pool::current_num_threads() >= 1);
}

#[test]
fn the_current_pool_is_the_installed_one_in_its_tasks_and_helpers() {
    let three = pool(3);
    assert_eq!(three.install(rayforce_pool::current_num_threads), 3);
    let widths = three.map(64, |_| rayforce_pool::current_num_threads());
    assert!(widths.iter().all(|&w| w == 3), "{widths:?}");
    // A pool installed inside another's task is current until its install returns.
    let one = pool(1);
    let (inner, outer) = three.install(|| {
        let inner = one.install(rayforce_pool::current_num_threads);
        (inner, rayforce_pool::current_num_threads())
    });
    assert_eq!((inner, outer), (1, 3));
}

#[test]
fn a_child_forked_inside_a_join_finishes_it_or_aborts_saying_why() {
    let _alone = PANICS_OR_FORKS.lock().unwrap_or_else(|p| p.into_inner());
    let pool = pool(2);
    let mut ends = ChildEnds::new();
    for round in 0..50 {
        let (pid, b) = pool.join(
            || {
                // Let the helper take the other half, some rounds.
                std::thread::yield_now();
                // SAFETY: the child joins, checks and exits (`_exit`) below.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    // A deadline for everything the child does: SIGALRM kills it.
                    // SAFETY: alarm has no preconditions.
                    unsafe { libc::alarm(10) };
                    ends.redirect_stderr();
                }
                pid
            },
            || 2,
        );
        if pid == 0 {
            // The child, its join ended: it ran the second half here (had the parent's
            // helper taken it, the child aborted inside `join`). Joins then run, on a
            // fresh crew.
            let ok = b == 2 && fib_join(15) == fib(15);
            // SAFETY: _exit ends only this child, without the parent's atexit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        assert_eq!(b, 2);
        ends.wait(pid, &format!("round {round}"));
    }
    ends.assert_each_abort_said("join");
}

/// Waits up to ten seconds for `flag`, calling `between` between looks; whether it was set.
fn wait_for(flag: &std::sync::atomic::AtomicBool, mut between: impl FnMut()) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !flag.load(Ordering::Acquire) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        between();
    }
    true
}

#[test]
fn a_joiner_blocked_for_its_taken_half_runs_its_takers_offer() {
    use std::sync::atomic::AtomicBool;
    // Nothing spins: a joiner whose half was taken blocks at once.
    let pool = Pool::builder().workers(2).spin_us(0).build().unwrap();
    // Starts the helper and gives it time to fall asleep, so that the join below offers it
    // its second half.
    pool.install(|| ());
    std::thread::sleep(std::time::Duration::from_millis(100));
    let (outer_taken, inner_ran) = (AtomicBool::new(false), AtomicBool::new(false));
    // On a thread of its own: its first join looks for idle threads, whatever ran before.
    let (caller, inner_ran_on) = std::thread::scope(|s| {
        s.spawn(|| {
            (
                std::thread::current().id(),
                outer_join(&pool, &outer_taken, &inner_ran),
            )
        })
        .join()
        .unwrap()
    });
    assert_eq!(
        inner_ran_on, caller,
        "the inner half ran on the helper itself: the blocked caller was not woken for it"
    );
}

/// The outer join of the test above: returns the thread its inner second half ran on.
fn outer_join(
    pool: &Pool,
    outer_taken: &std::sync::atomic::AtomicBool,
    inner_ran: &std::sync::atomic::AtomicBool,
) -> std::thread::ThreadId {
    let (_, inner_ran_on) = pool.join(
        // The outer second half is taken by the helper before this half ends, so the
        // caller blocks for it.
        || {
            assert!(
                wait_for(outer_taken, std::thread::yield_now),
                "the helper never took the outer half"
            )
        },
        || {
            outer_taken.store(true, Ordering::Release);
            // The helper's inner second half can only run elsewhere while its first half
            // joins on (each join may look for idle threads) until it ran: on the blocked
            // caller, whom the offer must wake.
            let (_, ran_on) = join(
                || {
                    wait_for(inner_ran, || {
                        join(|| std::hint::black_box(1), || std::hint::black_box(2));
                    })
                },
                || {
                    inner_ran.store(true, Ordering::Release);
                    std::thread::current().id()
                },
            );
            ran_on
        },
    );
    inner_ran_on
}

#[test]
fn a_pool_whose_first_helper_never_served_shares_with_the_others() {
    // Helper 1's start hook panicked; helper 2 serves. Inside `install`, joins and
    // iterators count one helper but must admit helper 2 by its index.
    let pool = Pool::builder()
        .workers(3)
        .best_effort()
        .on_thread_start(|helper| assert_ne!(helper, 1, "helper 1 never serves"))
        .build()
        .unwrap();
    assert_eq!(pool.width(), 2);
    assert_eq!(pool.install(rayforce_pool::current_num_threads), 2);
    let threads = Mutex::new(std::collections::HashSet::<std::thread::ThreadId>::new());
    pool.install(|| {
        (0..64u32).into_par_iter().for_each(|_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            threads.lock().unwrap().insert(std::thread::current().id());
        });
    });
    assert_eq!(
        threads.into_inner().unwrap().len(),
        2,
        "the caller and helper 2"
    );
}

#[test]
fn join_context_tells_a_taken_half_it_migrated_and_one_run_here_it_did_not() {
    use std::sync::atomic::AtomicBool;
    let alone = pool(1);
    let (a, b) =
        alone.install(|| rayforce_pool::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated()));
    assert_eq!(
        (a, b),
        (false, false),
        "a pool of one runs both halves here"
    );
    let pool = Pool::builder().workers(2).spin_us(0).build().unwrap();
    pool.install(|| ());
    std::thread::sleep(std::time::Duration::from_millis(100));
    let b_started = AtomicBool::new(false);
    // On a thread of its own: its first join looks for idle threads, whatever ran before
    // (the join above, on this test's thread, was that thread's first).
    let (a, b) = std::thread::scope(|s| {
        s.spawn(|| {
            pool.install(|| {
                rayforce_pool::join_context(
                    // Waits for the second half, so that it cannot run after this one, here.
                    |ctx| {
                        let started = wait_for(&b_started, std::thread::yield_now);
                        assert!(started, "the second half never started");
                        ctx.migrated()
                    },
                    |ctx| {
                        b_started.store(true, Ordering::Release);
                        ctx.migrated()
                    },
                )
            })
        })
        .join()
        .unwrap()
    });
    assert_eq!((a, b), (false, true), "the second half ran on the helper");
    assert!(rayforce_pool::max_num_threads() >= 2);
}
