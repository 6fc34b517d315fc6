//! Panics that must not escape the pool's protocol: payloads whose `Drop` panics, dropped on
//! the caller while a helper still runs a task of the dispatch, and dropped on a helper;
//! after either, the dispatch returned only once quiet, and the pool still runs in parallel.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests and loom-tests

use rayforce_pool::{Pool, SignalState};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

/// A panic payload whose `Drop` panics, after saying it ran.
struct DropPanics {
    dropped: Arc<AtomicBool>,
}

impl Drop for DropPanics {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
        panic!("a panic payload's drop panics");
    }
}

/// Waits until `flag` is set; panics after 10 s (a task placed on the wrong thread).
fn wait_for(flag: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "timed out waiting for a flag");
        thread::yield_now();
    }
}

/// Waits until `count` reaches `at_least`; panics after 10 s.
fn wait_for_count(count: &AtomicUsize, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while count.load(Ordering::SeqCst) < at_least {
        assert!(Instant::now() < deadline, "timed out waiting for a count");
        thread::yield_now();
    }
}

/// Runs `f` on a fresh thread; fails the test if it has not returned within 20 s (a hang).
fn within_deadline(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(20)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// Whether a parallel dispatch still gets a helper: two tasks that wait for each other.
fn still_parallel(pool: &Pool) {
    let inline_before = pool.stats().inline_dispatches;
    let arrived = AtomicUsize::new(0);
    pool.dispatch(2, |_| {
        arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while arrived.load(Ordering::SeqCst) < 2 {
            assert!(Instant::now() < deadline, "no helper joined the dispatch");
            thread::yield_now();
        }
    });
    assert_eq!(pool.stats().inline_dispatches, inline_before);
    assert_eq!(pool.signal_state(), SignalState::IDLE);
}

/// The helper's payload is kept first; the caller's payload is dropped on the caller while
/// the helper is still inside another task that reads the caller's stack.
fn caller_drops_while_a_helper_works(pool: &'static Pool) {
    let caller = thread::current().id();
    let caller_payload_dropped = Arc::new(AtomicBool::new(false));
    let helper_payload_dropped = Arc::new(AtomicBool::new(false));
    let on_callers_stack = vec![7u64; 1024];
    let late_task_done = AtomicBool::new(false);
    let helper_tasks = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.dispatch(3, |_| {
            if thread::current().id() == caller {
                // The helper's payload is kept first: the helper claims its second task
                // only after its first one's panic was caught and kept.
                wait_for_count(&helper_tasks, 2);
                panic::panic_any(DropPanics {
                    dropped: Arc::clone(&caller_payload_dropped),
                });
            }
            if helper_tasks.fetch_add(1, Ordering::SeqCst) == 0 {
                panic::panic_any(DropPanics {
                    dropped: Arc::clone(&helper_payload_dropped),
                });
            }
            // The helper's second task: still running when the caller drops its payload.
            wait_for(&caller_payload_dropped);
            thread::sleep(Duration::from_millis(5));
            assert_eq!(on_callers_stack.iter().sum::<u64>(), 7 * 1024);
            late_task_done.store(true, Ordering::SeqCst);
        })
    }));
    let payload = outcome.expect_err("a task's panic resumes on the caller");
    assert!(
        late_task_done.load(Ordering::SeqCst),
        "dispatch returned while a helper still ran one of its tasks"
    );
    assert!(caller_payload_dropped.load(Ordering::SeqCst));
    // The kept payload panics when dropped too: that is the test's own business now.
    std::mem::forget(payload);
}

/// The caller's payload is kept first; the helper's payload is dropped on the helper.
fn helper_drops(pool: &'static Pool) {
    let caller = thread::current().id();
    let helper_started = AtomicBool::new(false);
    let caller_tasks = AtomicUsize::new(0);
    let caller_payload_dropped = Arc::new(AtomicBool::new(false));
    let helper_payload_dropped = Arc::new(AtomicBool::new(false));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.dispatch(3, |_| {
            if thread::current().id() == caller {
                if caller_tasks.fetch_add(1, Ordering::SeqCst) == 0 {
                    wait_for(&helper_started);
                    panic::panic_any(DropPanics {
                        dropped: Arc::clone(&caller_payload_dropped),
                    });
                }
                return; // its second task: its first one's panic was caught and kept
            }
            helper_started.store(true, Ordering::SeqCst);
            // The caller's payload is kept first: the caller claims the third task (the
            // helper is here) only after its first one's panic was caught and kept.
            wait_for_count(&caller_tasks, 2);
            panic::panic_any(DropPanics {
                dropped: Arc::clone(&helper_payload_dropped),
            });
        })
    }));
    let payload = outcome.expect_err("a task's panic resumes on the caller");
    assert!(helper_payload_dropped.load(Ordering::SeqCst));
    std::mem::forget(payload);
}

fn quiet_panics() {
    // The payloads' own panics are expected; keep the test output readable.
    panic::set_hook(Box::new(|_| {}));
}

#[test]
fn payloads_whose_drop_panics_never_end_a_dispatch_early_or_kill_a_helper() {
    quiet_panics();
    let pool: &'static Pool = Box::leak(Box::new(
        Pool::builder().workers(2).wide_workers(2).build().unwrap(),
    ));
    within_deadline("100 rounds of both orders", move || {
        for _ in 0..100 {
            caller_drops_while_a_helper_works(pool);
            still_parallel(pool);
            helper_drops(pool);
            still_parallel(pool);
        }
    });
    // From another thread too: the pool was not left owned by a dispatch that unwound.
    within_deadline("a dispatch from another thread", move || {
        still_parallel(pool)
    });
}

#[test]
fn a_start_hook_that_panics_fails_the_build_naming_the_helper() {
    quiet_panics();
    let built = Pool::builder()
        .workers(3)
        .on_thread_start(|helper| {
            if helper == 2 {
                panic!("no arena for helper {helper}");
            }
        })
        .build();
    match built {
        Err(err @ rayforce_pool::BuildError::ThreadStart { helper: 2, .. }) => {
            assert!(err.to_string().contains("no arena for helper 2"), "{err}");
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(pool) => panic!("built with a width of {}", pool.width()),
    }
    // Wide helpers start on first use: one whose hook panics is not counted.
    let pool = Pool::builder()
        .workers(2)
        .wide_workers(4)
        .on_thread_start(|helper| assert!(helper != 3, "helper 3 refuses"))
        .build()
        .unwrap();
    pool.dispatch_wide(4, |_| ());
    assert_eq!(
        pool.wide_width(),
        3,
        "the caller and the two helpers that serve"
    );
    still_parallel(&pool);
}

#[test]
fn a_pool_can_be_observed_after_a_caught_panic_without_assert_unwind_safe() {
    fn unwind_safe<T: panic::UnwindSafe + panic::RefUnwindSafe>(_: &T) {}
    let pool = Pool::builder().workers(2).build().unwrap();
    unwind_safe(&pool);
    let caught = panic::catch_unwind(|| pool.dispatch(2, |i| assert!(i != 1, "task 1")));
    assert!(caught.is_err());
    still_parallel(&pool);
}
