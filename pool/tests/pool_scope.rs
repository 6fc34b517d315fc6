//! `scope`: every spawned task runs once, also those spawned by tasks and in nested scopes;
//! with helpers a spawned task starts at once (the body may wait for it); panics resume once
//! every task finished, what each task captured dropped once; with no helper that can take
//! it (one thread, the pool narrowed, a helper that never served), after the body, so the
//! spawner may hold a lock the task takes, but at once in an in-place scope whose body is
//! outside the pool; the slot a scope held is free again after it
//! (no drift); scopes inside tasks, inside joins, with every slot taken, and in a
//! child forked from inside a task; a body's dispatch gets the slot its scope held, and a
//! task waiting for one it spawned finishes.
#![cfg(not(rayforce_loom))] // real threads and processes

use rayforce_pool::{join, scope, Pool, Scope, SignalState};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier, Mutex};
use std::time::Duration;

#[cfg(unix)]
mod child_ends;
#[cfg(unix)]
use child_ends::ChildEnds;

/// Held by the tests that panic and by the one that forks (as `pool_join.rs`).
static PANICS_OR_FORKS: Mutex<()> = Mutex::new(());

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().unwrap()
}

/// Counts its drops in the counter it holds.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Spawns a binary tree of `depth` levels of tasks in `s`, each leaf adding one.
fn spawn_tree<'scope>(s: &Scope<'scope>, depth: u32, leaves: &'scope AtomicUsize) {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    s.spawn(move |s| spawn_tree(s, depth - 1, leaves));
    s.spawn(move |s| spawn_tree(s, depth - 1, leaves));
}

#[test]
fn every_spawned_task_runs_once_also_those_spawned_by_tasks() {
    for workers in [1, 2, 4] {
        let pool = pool(workers);
        for depth in [0, 1, 5, 12] {
            let leaves = AtomicUsize::new(0);
            pool.scope(|s| spawn_tree(s, depth, &leaves));
            assert_eq!(
                leaves.into_inner(),
                1 << depth,
                "depth {depth}, {workers} workers"
            );
            assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
        }
    }
}

#[test]
fn tasks_borrow_from_outside_the_scope_and_write_disjoint_parts() {
    let pool = pool(2);
    let mut data = vec![0u64; 10_000];
    let total = AtomicUsize::new(0);
    let returned = pool.scope(|s| {
        for (k, chunk) in data.chunks_mut(1000).enumerate() {
            let total = &total;
            s.spawn(move |_| {
                for (i, x) in chunk.iter_mut().enumerate() {
                    *x = (k * 1000 + i) as u64;
                }
                total.fetch_add(chunk.len(), Ordering::Relaxed);
            });
        }
        "body's result"
    });
    assert_eq!(returned, "body's result");
    assert_eq!(total.into_inner(), 10_000);
    assert!(data.iter().enumerate().all(|(i, &x)| x == i as u64));
}

#[test]
fn with_helpers_a_spawned_task_starts_at_once_so_the_body_may_wait_for_it() {
    for workers in [2, 3] {
        let pool = pool(workers);
        for _ in 0..200 {
            let (tx, rx) = mpsc::channel();
            pool.scope(|s| {
                s.spawn(move |_| tx.send(7).unwrap());
                assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(7));
            });
        }
    }
}

/// A scope whose body spawns while it holds a lock the tasks take (rayon-core's
/// `linear_stack_growth` does): each task runs once the body released the lock, after the
/// body, in the order spawned. Returns the order the body's end and the tasks were seen in.
fn spawns_under_a_lock(pool: &Pool) -> Vec<&'static str> {
    let seen = Mutex::new(Vec::new());
    pool.scope(|s| {
        let mut guard = seen.lock().unwrap();
        for task in ["first task", "second task"] {
            let seen = &seen;
            s.spawn(move |_| seen.lock().unwrap().push(task));
        }
        guard.push("body's end");
    });
    seen.into_inner().unwrap()
}

#[test]
fn with_no_helper_a_spawned_task_waits_for_the_body_so_the_spawner_may_hold_a_lock() {
    // A pool of one thread, one narrowed to its caller inside the body, and one whose only
    // helper never served (its start hook panicked): no helper can take the task, so it
    // waits in the queue and the scope's thread runs it after the body, as rayon's one
    // thread does (running it inside `spawn` would wait for the lock forever).
    let expected = ["body's end", "first task", "second task"];
    assert_eq!(spawns_under_a_lock(&pool(1)), expected, "one thread");
    let narrowed = pool(2);
    narrowed.resize(1, 1);
    assert_eq!(spawns_under_a_lock(&narrowed), expected, "narrowed pool");
    let helperless = Pool::builder()
        .workers(2)
        .best_effort()
        .on_thread_start(|_| panic!("this helper never serves"))
        .build()
        .unwrap();
    assert!(helperless.stats().start_error.is_some());
    // One width, inside the pool as outside: the caller alone.
    assert_eq!(helperless.width(), 1);
    assert_eq!(helperless.install(rayforce_pool::current_num_threads), 1);
    assert_eq!(
        spawns_under_a_lock(&helperless),
        expected,
        "no helper serves"
    );
    // Narrowed inside the body, after a first spawn found the helper: the later ones wait
    // for the body too.
    let narrowed_inside = pool(2);
    let ran = AtomicUsize::new(0);
    let guard = Mutex::new(());
    narrowed_inside.scope(|s| {
        s.spawn(|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        narrowed_inside.resize(1, 1);
        let held = guard.lock().unwrap();
        s.spawn(|_| {
            let _taken = guard.lock().unwrap();
            ran.fetch_add(1, Ordering::Relaxed);
        });
        drop(held);
    });
    assert_eq!(ran.into_inner(), 2);
}

#[test]
fn an_in_place_scope_from_outside_a_pool_of_one_thread_may_wait_for_its_task() {
    // rayon-core's `in_place_scope_no_deadlock`: rayon's one worker runs the task beside a
    // body on a thread outside the pool; here the spawn runs it at once. Inside the pool
    // (`install`), the task waits for the body, as rayon's.
    let pool = pool(1);
    for fifo in [false, true] {
        let (tx, rx) = mpsc::channel();
        let body = |s: &Scope<'_>| {
            s.spawn(move |_| tx.send(()).unwrap());
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(()));
        };
        if fifo {
            pool.in_place_scope_fifo(body);
        } else {
            pool.in_place_scope(body);
        }
    }
    let order = pool.install(|| {
        let order = Mutex::new(Vec::new());
        rayforce_pool::in_place_scope(|s| {
            s.spawn(|_| order.lock().unwrap().push("task"));
            order.lock().unwrap().push("body");
        });
        order.into_inner().unwrap()
    });
    assert_eq!(order, ["body", "task"], "inside the pool");
}

#[test]
fn with_a_helper_a_spawned_task_runs_beside_the_body() {
    // Both wait at a barrier for the other: only a task that runs on another thread while
    // the body runs gets past it.
    let pool = pool(2);
    for _ in 0..200 {
        let barrier = Barrier::new(2);
        pool.scope(|s| {
            s.spawn(|_| {
                barrier.wait();
            });
            barrier.wait();
        });
        assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
    }
}

#[test]
fn a_task_that_waits_for_another_task_finishes() {
    let pool = pool(3);
    for _ in 0..100 {
        let (tx, rx) = mpsc::channel();
        let got = AtomicUsize::new(0);
        pool.scope(|s| {
            let got = &got;
            s.spawn(move |_| {
                got.store(
                    rx.recv_timeout(Duration::from_secs(10)).unwrap(),
                    Ordering::Relaxed,
                )
            });
            s.spawn(move |_| tx.send(5).unwrap());
        });
        assert_eq!(got.into_inner(), 5);
    }
}

#[test]
fn a_panicking_task_resumes_after_every_task_ran_and_the_body_wins() {
    let _alone = PANICS_OR_FORKS.lock().unwrap_or_else(|p| p.into_inner());
    let pool = pool(2);
    for body_panics in [false, true] {
        let (ran, dropped) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                for task in 0..50 {
                    let (ran, captured) = (&ran, Counted(&dropped));
                    s.spawn(move |_| {
                        let _captured = captured;
                        ran.fetch_add(1, Ordering::Relaxed);
                        if task % 10 == 3 {
                            panic!("task {task}");
                        }
                    });
                }
                if body_panics {
                    panic!("the body");
                }
            })
        }));
        let payload = outcome.expect_err("a panic resumes");
        assert_eq!(
            ran.into_inner(),
            50,
            "every task ran before the panic resumed"
        );
        assert_eq!(
            dropped.into_inner(),
            50,
            "what each task captured dropped once, panicking or not"
        );
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap();
        if body_panics {
            assert_eq!(message, "the body");
        } else {
            assert!(message.starts_with("task "), "{message}");
        }
        assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
    }
    // The pool serves on.
    let leaves = AtomicUsize::new(0);
    pool.scope(|s| spawn_tree(s, 6, &leaves));
    assert_eq!(leaves.into_inner(), 64);
}

#[test]
fn nested_scopes_and_joins_inside_tasks_finish() {
    let pool = pool(2);
    let leaves = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..8 {
            s.spawn(|_| {
                let (a, b) = join(
                    || scope(|inner| spawn_tree(inner, 4, &leaves)),
                    || scope(|inner| spawn_tree(inner, 3, &leaves)),
                );
                assert_eq!((a, b), ((), ()));
            });
        }
    });
    assert_eq!(leaves.into_inner(), 8 * (16 + 8));
    assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
}

#[test]
fn scopes_inside_a_dispatchs_tasks_with_every_slot_taken_run_their_tasks() {
    // One slot, held by the dispatch: the scopes inside its tasks find none, and run each
    // task as it is spawned.
    let pool = Pool::builder().workers(2).max_in_flight(1).build().unwrap();
    let leaves = AtomicUsize::new(0);
    pool.dispatch(4, |_| {
        let (tx, rx) = mpsc::channel();
        scope(|s| {
            spawn_tree(s, 3, &leaves);
            s.spawn(move |_| tx.send(1).unwrap());
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(1));
        });
    });
    assert_eq!(leaves.into_inner(), 4 * 8);
    assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
}

/// Runs `f` on a thread of its own; fails if it panics or has not returned within a
/// minute (a hang, whose thread is left behind).
fn finishes(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        done.send(()).unwrap();
    });
    match finished.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still running after 60 s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

#[test]
fn a_dispatch_in_the_body_gets_the_slot_its_own_scope_held() {
    // One slot, which the scope's first spawn owns; the dispatch's tasks wait for each
    // other, so it waits for a slot rather than run inline.
    finishes("a dispatch in a scope's body with one slot", || {
        let pool = Pool::builder().workers(2).max_in_flight(1).build().unwrap();
        for _ in 0..50 {
            let ran = AtomicUsize::new(0);
            pool.scope(|s| {
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                let barrier = Barrier::new(2);
                pool.dispatch(2, |_| {
                    barrier.wait();
                });
                s.spawn(|_| {
                    ran.fetch_add(10, Ordering::Relaxed);
                });
            });
            assert_eq!(ran.into_inner(), 11);
            assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
        }
    });
    // Two scopes, each holding one of the two slots, each body dispatching.
    finishes("dispatches in two scopes' bodies with two slots", || {
        let pool = Pool::builder().workers(3).max_in_flight(2).build().unwrap();
        let ran = AtomicUsize::new(0);
        std::thread::scope(|threads| {
            for _ in 0..2 {
                threads.spawn(|| {
                    for _ in 0..50 {
                        pool.scope(|s| {
                            s.spawn(|_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                            pool.dispatch(3, |_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        });
                    }
                });
            }
        });
        assert_eq!(ran.into_inner(), 2 * 50 * 4);
        assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
    });
}

#[test]
fn a_task_waiting_for_one_it_spawned_while_every_helper_is_busy_finishes() {
    // The task runs on the one helper (the body waits until it started, so not on the
    // body's thread), then spawns a task while the owner, past the body, waits for it:
    // there is no permit left to post, so the owner must run the new task.
    finishes("a task waiting for its own spawn", || {
        let pool = pool(2);
        for _ in 0..20 {
            let (started, has_started) = mpsc::channel();
            let got = AtomicUsize::new(0);
            pool.scope(|s| {
                let got = &got;
                s.spawn(move |s| {
                    started.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(5));
                    let (tx, rx) = mpsc::channel();
                    s.spawn(move |_| tx.send(9).unwrap());
                    got.store(rx.recv().unwrap(), Ordering::Relaxed);
                });
                has_started.recv().unwrap();
            });
            assert_eq!(got.into_inner(), 9);
            assert_eq!(pool.signal_state(), SignalState::IDLE, "no drift");
        }
    });
}

#[test]
fn the_free_scope_runs_on_the_current_pool() {
    let pool = pool(3);
    let width = pool.scope(|s| {
        let seen = AtomicUsize::new(0);
        scope(|inner| {
            inner.spawn(|_| seen.store(rayforce_pool::current_num_threads(), Ordering::Relaxed))
        });
        s.spawn(|_| assert_eq!(rayforce_pool::current_num_threads(), 3));
        seen.into_inner()
    });
    assert_eq!(width, 3);
    // Outside any pool: the default pool.
    let leaves = AtomicUsize::new(0);
    scope(|s| spawn_tree(s, 5, &leaves));
    assert_eq!(leaves.into_inner(), 32);
}

#[cfg(unix)]
#[test]
fn a_child_forked_inside_a_task_finishes_the_scope_or_aborts_saying_why() {
    let _alone = PANICS_OR_FORKS.lock().unwrap_or_else(|p| p.into_inner());
    let pool = pool(2);
    let mut ends = ChildEnds::new();
    for round in 0..30 {
        let forked = AtomicUsize::new(usize::MAX);
        let leaves = AtomicUsize::new(0);
        pool.scope(|s| {
            spawn_tree(s, 4, &leaves);
            std::thread::yield_now();
            // SAFETY: the child checks and exits (`_exit`) below.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // A deadline for everything the child does: SIGALRM kills it.
                // SAFETY: alarm has no preconditions.
                unsafe { libc::alarm(10) };
                ends.redirect_stderr();
            }
            forked.store(pid as usize, Ordering::Relaxed);
        });
        if forked.load(Ordering::Relaxed) == 0 {
            // The child, its scope ended: every task ran here (had a parent's helper been
            // inside the scope, the child aborted in it). Scopes then run, on a fresh crew.
            let after = AtomicUsize::new(0);
            scope(|s| spawn_tree(s, 3, &after));
            let ok = leaves.load(Ordering::Relaxed) == 16 && after.into_inner() == 8;
            // SAFETY: _exit ends only this child, without the parent's atexit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        assert_eq!(leaves.into_inner(), 16);
        ends.wait(
            forked.into_inner() as libc::pid_t,
            &format!("round {round}"),
        );
    }
    ends.assert_each_abort_said("scope");
}
