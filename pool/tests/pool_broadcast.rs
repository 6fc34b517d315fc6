//! `broadcast`: one call on each of the pool's threads, the caller as index 0, each helper
//! on its own thread; from inside install, from a task on a helper (whose region's caller
//! is not among them), from several threads at once, nested in its own calls, at the
//! leaves of joins and dispatches whose helpers wait meanwhile; a panic resumes once every
//! call returned; a helper whose start hook panicked is left out; a narrowed pool
//! broadcasts on its narrow width; rayon's own broadcast tests pass as written. A spawned
//! broadcast runs once on each helper (the spawning one too) and returns at once; on a pool
//! of one thread it runs on the spawner; its panics go to the panic handler; a pool dropped
//! with calls left returns, and its helpers run them.
#![cfg(not(rayforce_loom))] // real threads

use rayforce_pool::{BroadcastContext, Pool};
use std::any::Any;
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

/// A pool of `workers` threads whose panic handler sends each payload to the receiver.
fn pool_with_panics_caught(workers: usize) -> (Pool, mpsc::Receiver<Box<dyn Any + Send>>) {
    let (panics, caught) = mpsc::channel();
    let panics = Mutex::new(panics);
    let pool = Pool::builder()
        .workers(workers)
        .panic_handler(move |payload| panics.lock().unwrap().send(payload).unwrap())
        .build()
        .unwrap();
    (pool, caught)
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

#[test]
fn a_spawned_broadcast_runs_once_on_each_helper_and_returns_at_once() {
    let pool = pool(4);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let gate = Arc::new(std::sync::Barrier::new(4));
    let waiting = Arc::clone(&gate);
    // Each call waits for the spawner: the spawn returned before any could finish.
    pool.spawn_broadcast(move |ctx| {
        waiting.wait();
        tx.lock().unwrap().send(where_it_ran(ctx)).unwrap();
    });
    gate.wait();
    let mut ran: Vec<_> = rx.iter().take(3).collect();
    ran.sort_by_key(|&(index, _, _)| index);
    assert_once_per_thread(&ran, 3);
    assert!(ran.iter().all(|&(_, _, t)| t != thread::current().id()));
}

#[test]
fn a_spawned_broadcast_on_a_pool_of_one_runs_on_the_spawner() {
    let pool = pool(1);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&ran);
    pool.spawn_broadcast(move |ctx| record.lock().unwrap().push(where_it_ran(ctx)));
    assert_eq!(*ran.lock().unwrap(), [(0, 1, thread::current().id())]);
}

#[test]
fn a_spawned_broadcast_from_a_helper_reaches_it_too() {
    let pool = Arc::new(pool(3));
    let (tx, rx) = mpsc::channel();
    let spawning = Arc::clone(&pool);
    pool.spawn(move || {
        let tx = Mutex::new(tx);
        let me = thread::current().id();
        rayforce_pool::spawn_broadcast(move |ctx| {
            tx.lock().unwrap().send((where_it_ran(ctx), me)).unwrap();
        });
        drop(spawning);
    });
    let ran: Vec<_> = rx.iter().take(2).collect();
    let mut calls: Vec<_> = ran.iter().map(|&(call, _)| call).collect();
    calls.sort_by_key(|&(index, _, _)| index);
    assert_once_per_thread(&calls, 2);
    let spawner = ran[0].1;
    assert!(
        calls.iter().any(|&(_, _, t)| t == spawner),
        "the spawning helper ran one"
    );
}

#[test]
fn a_spawned_broadcasts_panics_go_to_the_panic_handler() {
    let (pool, caught) = pool_with_panics_caught(3);
    pool.spawn_broadcast(|ctx| panic!("call {}", ctx.index()));
    let mut messages: Vec<String> = (0..2)
        .map(|_| {
            *caught
                .recv_timeout(PATIENCE)
                .unwrap()
                .downcast::<String>()
                .unwrap()
        })
        .collect();
    messages.sort();
    assert_eq!(messages, ["call 0", "call 1"]);
}

#[test]
fn a_pool_dropped_with_spawned_calls_left_returns_and_its_helpers_run_them() {
    let pool = pool(3);
    let (release, released) = mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(released));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    // Each call waits for the thread that drops the pool.
    pool.spawn_broadcast(move |ctx| {
        released.lock().unwrap().recv().unwrap();
        tx.lock().unwrap().send(ctx.index()).unwrap();
    });
    let (dropped, drop_returned) = mpsc::channel();
    thread::spawn(move || {
        drop(pool);
        dropped.send(()).unwrap();
    });
    drop_returned
        .recv_timeout(PATIENCE)
        .expect("the drop returned without waiting for the calls");
    release.send(()).unwrap();
    release.send(()).unwrap();
    let mut indices: Vec<usize> = rx.iter().take(2).collect();
    indices.sort();
    assert_eq!(indices, [0, 1]);
}

#[test]
fn a_panic_dropping_a_spawned_broadcasts_closure_goes_to_the_panic_handler() {
    struct PanicsOnDrop;
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("dropped");
        }
    }
    let (pool, caught) = pool_with_panics_caught(3);
    let owned = PanicsOnDrop;
    pool.spawn_broadcast(move |_| {
        let _kept = &owned;
    });
    let payload = caught.recv_timeout(PATIENCE).unwrap();
    assert_eq!(*payload.downcast::<&str>().unwrap(), "dropped");
    drop(pool);
    assert!(caught.try_recv().is_err(), "dropped once");
}

#[test]
fn a_pool_dropped_right_after_a_spawned_broadcast_runs_the_tasks_its_calls_spawn() {
    for _ in 0..50 {
        let pool = pool(3);
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        pool.spawn_broadcast(move |ctx| {
            let (tx, index) = (tx.lock().unwrap().clone(), ctx.index());
            rayforce_pool::spawn(move || tx.send(index).unwrap());
        });
        drop(pool);
        let mut indices: Vec<usize> = (0..2).map(|_| rx.recv_timeout(PATIENCE).unwrap()).collect();
        indices.sort();
        assert_eq!(indices, [0, 1]);
    }
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

#[test]
fn rayon_par_bridge_recursion() {
    // rayon's own `par_bridge_recursion` test.
    use rayforce_pool::prelude::*;
    use std::iter::once_with;

    const N: usize = 100_000;

    let pool = rayforce_pool::ThreadPoolBuilder::new()
        .num_threads(10)
        .build()
        .unwrap();

    let seq: Vec<_> = (0..N).map(|i| (i, i.to_string())).collect();

    pool.broadcast(|_| {
        let mut par: Vec<_> = (0..N)
            .into_par_iter()
            .flat_map(|i| {
                once_with(move || {
                    // Using rayon within the serial iterator creates an opportunity for
                    // work-stealing to make par_bridge's mutex accidentally recursive.
                    rayforce_pool::join(move || i, move || i.to_string())
                })
                .par_bridge()
            })
            .collect();
        par.par_sort_unstable();
        assert_eq!(seq, par);
    });
}
