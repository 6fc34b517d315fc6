//! `broadcast`: one call on each of the pool's threads, the caller as index 0, each helper
//! on its own thread; from inside install, from a task on a helper (whose region's caller
//! is not among them), from several threads at once, nested in its own calls, at the
//! leaves of joins and dispatches whose helpers wait meanwhile; a panic resumes once every
//! call returned; a helper whose start hook panicked is left out; a narrowed pool
//! broadcasts on its narrow width; rayon's own broadcast tests pass as written.
#![cfg(not(rayforce_loom))] // real threads

use rayforce_pool::{BroadcastContext, Pool};
use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

/// Long enough for any thread of this machine to get a turn, short enough to fail fast.
const PATIENCE: Duration = Duration::from_secs(30);

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().unwrap()
}

/// Each call's index, thread count and thread.
fn where_it_ran(ctx: BroadcastContext<'_>) -> (usize, usize, ThreadId) {
    (ctx.index(), ctx.num_threads(), thread::current().id())
}

/// The calls ran once each, indexed in order, `n` of them, on `n` distinct threads.
fn assert_once_per_thread(ran: &[(usize, usize, ThreadId)], n: usize) {
    assert_eq!(ran.len(), n);
    for (i, &(index, num_threads, _)) in ran.iter().enumerate() {
        assert_eq!((index, num_threads), (i, n));
    }
    let threads: HashSet<ThreadId> = ran.iter().map(|&(_, _, thread)| thread).collect();
    assert_eq!(threads.len(), n, "one call per thread: {ran:?}");
}

#[test]
fn a_broadcast_runs_once_on_the_caller_and_once_on_each_helper() {
    for workers in [1, 2, 4] {
        let pool = pool(workers);
        for _ in 0..50 {
            let ran = pool.broadcast(where_it_ran);
            assert_once_per_thread(&ran, workers);
            assert_eq!(ran[0].2, thread::current().id(), "index 0 is the caller");
        }
    }
}

#[test]
fn the_free_broadcast_runs_on_the_installed_pool() {
    let pool = pool(3);
    let ran = pool.install(|| rayforce_pool::broadcast(where_it_ran));
    assert_once_per_thread(&ran, 3);
}

#[test]
fn a_broadcast_from_a_task_on_a_helper_runs_there_and_on_the_other_helpers() {
    let pool = pool(3);
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || {
        let me = thread::current().id();
        tx.send((me, rayforce_pool::broadcast(where_it_ran)))
            .unwrap();
    });
    let (helper, ran) = rx.recv_timeout(PATIENCE).expect("the broadcast finished");
    assert_once_per_thread(&ran, 2);
    assert_eq!(ran[0].2, helper, "index 0 is the broadcasting helper");
    assert!(ran.iter().all(|&(_, _, t)| t != thread::current().id()));
}

#[test]
fn a_panic_resumes_once_every_call_returned() {
    let pool = pool(4);
    let returned = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.broadcast(|ctx| {
            if ctx.index() % 2 == 1 {
                thread::sleep(Duration::from_millis(10 * ctx.index() as u64));
                returned.fetch_add(1, Ordering::SeqCst);
                panic!("call {}", ctx.index());
            }
            returned.fetch_add(1, Ordering::SeqCst);
        })
    }));
    let payload = outcome.expect_err("the panic resumed");
    assert_eq!(
        returned.load(Ordering::SeqCst),
        4,
        "every call returned first"
    );
    assert_eq!(payload.downcast_ref::<String>().unwrap(), "call 1");
    assert_once_per_thread(&pool.broadcast(where_it_ran), 4);
}

#[test]
fn broadcasts_from_several_threads_at_once_each_run_once_per_thread() {
    let pool = pool(3);
    let per_thread = Mutex::new(std::collections::HashMap::<ThreadId, usize>::new());
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..200 {
                    let ran = pool.broadcast(|ctx| {
                        *per_thread
                            .lock()
                            .unwrap()
                            .entry(thread::current().id())
                            .or_default() += 1;
                        where_it_ran(ctx)
                    });
                    assert_once_per_thread(&ran, 3);
                }
            });
        }
    });
    let calls: usize = per_thread.lock().unwrap().values().sum();
    assert_eq!(calls, 3 * 200 * 3);
}

#[test]
fn broadcasts_nested_in_every_call_of_a_broadcast_finish() {
    let pool = pool(3);
    // The caller's nested broadcast reaches the pool's three threads; each helper's, itself
    // and the other helper, while every thread waits for the others' calls.
    let nested = pool.broadcast(|_| rayforce_pool::broadcast(where_it_ran));
    assert_once_per_thread(&nested[0], 3);
    for ran in &nested[1..] {
        assert_once_per_thread(ran, 2);
    }
}

/// A recursion of joins whose leaves broadcast: joiners wait for their taken halves
/// meanwhile, and must open the letters left for them.
fn joins_broadcasting(depth: u32, calls: &AtomicUsize) -> usize {
    if depth == 0 {
        let ran = rayforce_pool::broadcast(|_| calls.fetch_add(1, Ordering::SeqCst));
        return ran.len();
    }
    let (a, b) = rayforce_pool::join(
        || joins_broadcasting(depth - 1, calls),
        || joins_broadcasting(depth - 1, calls),
    );
    a + b
}

#[test]
fn broadcasts_at_the_leaves_of_joins_and_dispatches_finish() {
    let pool = pool(3);
    for _ in 0..20 {
        let calls = AtomicUsize::new(0);
        let threads = pool.install(|| joins_broadcasting(6, &calls));
        assert_eq!(calls.load(Ordering::SeqCst), threads);
        assert!((64 * 2..=64 * 3).contains(&threads), "{threads} calls");
    }
    let calls = AtomicUsize::new(0);
    pool.dispatch(64, |_| {
        rayforce_pool::broadcast(|_| calls.fetch_add(1, Ordering::SeqCst));
    });
    assert!(calls.load(Ordering::SeqCst) >= 64 * 2);
}

#[test]
fn a_helper_whose_start_hook_panicked_is_left_out() {
    let pool = Pool::builder()
        .workers(4)
        .best_effort()
        .on_thread_start(|k| assert_ne!(k, 2, "helper 2 does not start"))
        .build()
        .unwrap();
    let ran = pool.broadcast(where_it_ran);
    assert_once_per_thread(&ran, 3);
}

#[test]
fn a_narrowed_pool_broadcasts_on_its_narrow_width() {
    let pool = pool(4);
    assert_once_per_thread(&pool.broadcast(where_it_ran), 4);
    pool.resize(2, 4);
    assert_once_per_thread(&pool.broadcast(where_it_ran), 2);
    pool.resize(3, 3);
    assert_once_per_thread(&pool.broadcast(where_it_ran), 3);
}

#[test]
fn a_helper_blocked_in_another_pools_scope_opens_its_letter() {
    // Pool a's helper waits for its scope's task on pool b's helper, which broadcasts on
    // a: the letter must reach the helper where it is blocked. (A thread of its own, left
    // behind if it hangs.)
    let (a, b) = (Arc::new(pool(2)), pool(2));
    b.install(|| ()); // its helper started (a task starts none)
    let (tx, rx) = mpsc::channel();
    let pool_a = Arc::clone(&a);
    a.spawn(move || {
        let ran = Mutex::new(Vec::new());
        b.scope(|s| {
            s.spawn(|_| {
                // Posted once a's helper blocks for this task.
                thread::sleep(Duration::from_millis(40));
                *ran.lock().unwrap() = pool_a.broadcast(|_| thread::current().id());
            });
            // Long enough for b's helper to take the task.
            thread::sleep(Duration::from_millis(10));
        });
        tx.send((thread::current().id(), ran.into_inner().unwrap()))
            .unwrap();
    });
    let (helper, ran) = rx
        .recv_timeout(PATIENCE)
        .expect("the broadcast reached the blocked helper");
    assert!(ran.contains(&helper), "a's helper ran its call: {ran:?}");
}

#[test]
fn a_helper_back_in_its_wait_after_a_call_that_waited_still_gets_its_letters() {
    // As above, but the first letter's call blocks in a scope of a third pool (a wait of its
    // own inside the helper's wait), and a second broadcast follows once the helper is
    // blocked again: its wait must still be the one a post wakes.
    let (a, b, c) = (Arc::new(pool(2)), pool(2), Arc::new(pool(2)));
    b.install(|| ());
    c.install(|| ());
    let (tx, rx) = mpsc::channel();
    let (pool_a, pool_c) = (Arc::clone(&a), Arc::clone(&c));
    a.spawn(move || {
        let calls = AtomicUsize::new(0);
        b.scope(|s| {
            s.spawn(|_| {
                thread::sleep(Duration::from_millis(40));
                pool_a.broadcast(|ctx| {
                    if ctx.index() == 1 {
                        // On a's helper, blocked in b's scope: c's helper takes the task.
                        pool_c.scope(|s| {
                            s.spawn(|_| thread::sleep(Duration::from_millis(5)));
                            thread::sleep(Duration::from_millis(2));
                        });
                    }
                });
                thread::sleep(Duration::from_millis(20));
                calls.store(pool_a.broadcast(|ctx| ctx.index()).len(), Ordering::SeqCst);
            });
            thread::sleep(Duration::from_millis(10));
        });
        tx.send(calls.into_inner()).unwrap();
    });
    let calls = rx
        .recv_timeout(PATIENCE)
        .expect("the second broadcast reached the blocked helper");
    assert!(calls == 1 || calls == 2, "{calls} calls");
}

#[test]
fn a_helper_yielding_in_a_task_runs_its_broadcast_call() {
    let pool = Arc::new(pool(2));
    let set_by_the_helper = Arc::new(AtomicUsize::new(0));
    let spinning = Arc::clone(&set_by_the_helper);
    // The spawned task runs on the pool's one helper, which opens its letter only by
    // yielding.
    let (started, task_started) = mpsc::channel();
    pool.spawn(move || {
        started.send(()).unwrap();
        while spinning.load(Ordering::SeqCst) == 0 {
            let _ = rayforce_pool::yield_now();
        }
    });
    task_started.recv_timeout(PATIENCE).unwrap();
    let (tx, rx) = mpsc::channel();
    let broadcasting = Arc::clone(&pool);
    thread::spawn(move || {
        broadcasting.broadcast(|ctx| {
            if ctx.index() == 1 {
                set_by_the_helper.store(1, Ordering::SeqCst);
            }
        });
        tx.send(()).unwrap();
    });
    rx.recv_timeout(PATIENCE)
        .expect("the yielding helper ran its broadcast call");
}

// rayon's own broadcast tests (rayon-core's, beside its broadcast module), changed only in
// their paths: the pool's width counts the caller, so each count below holds as in rayon.

#[test]
fn rayon_broadcast_global() {
    let v = rayforce_pool::broadcast(|ctx| ctx.index());
    assert!(v.into_iter().eq(0..rayforce_pool::current_num_threads()));
}

#[test]
fn rayon_broadcast_pool() {
    let pool = rayforce_pool::ThreadPoolBuilder::new()
        .num_threads(7)
        .build()
        .unwrap();
    let v = pool.broadcast(|ctx| ctx.index());
    assert!(v.into_iter().eq(0..7));
}

#[test]
fn rayon_broadcast_self() {
    let pool = rayforce_pool::ThreadPoolBuilder::new()
        .num_threads(7)
        .build()
        .unwrap();
    let v = pool.install(|| rayforce_pool::broadcast(|ctx| ctx.index()));
    assert!(v.into_iter().eq(0..7));
}

#[test]
fn rayon_broadcast_mutual() {
    let count = AtomicUsize::new(0);
    let pool1 = rayforce_pool::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let pool2 = rayforce_pool::ThreadPoolBuilder::new()
        .num_threads(7)
        .build()
        .unwrap();
    pool1.install(|| {
        pool2.broadcast(|_| {
            pool1.broadcast(|_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
        })
    });
    assert_eq!(count.into_inner(), 3 * 7);
}

#[test]
fn rayon_broadcast_panic_one_and_many() {
    // rayon's `broadcast_panic_one` (call 3 panics) and `broadcast_panic_many` (the even
    // ones), in one loop.
    let panic_one: fn(usize) -> bool = |index| index == 3;
    let panic_many: fn(usize) -> bool = |index| index % 2 == 0;
    for panics in [panic_one, panic_many] {
        let count = AtomicUsize::new(0);
        let pool = rayforce_pool::ThreadPoolBuilder::new()
            .num_threads(7)
            .build()
            .unwrap();
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.broadcast(|ctx| {
                count.fetch_add(1, Ordering::Relaxed);
                if panics(ctx.index()) {
                    panic!("Hello, world!");
                }
            })
        }));
        assert_eq!(count.into_inner(), 7);
        assert!(result.is_err(), "broadcast panic should propagate!");
    }
}
