//! `spawn`: a spawned task runs on a helper while its spawner goes on (it may wait for the
//! task); the free `spawn` runs on the current pool; dropping a pool runs every task still
//! queued, without waiting for a task that waits for the dropping thread, also when a
//! spawned task drops the pool's last handle; the pool's panic handler takes a task's
//! panic; a pool of one thread runs the task on the spawner; a task waiting for one it
//! spawned gets an idle helper, also one only the wide width counts; `yield_now` runs a
//! task waiting for a helper on the yielding thread; a helper left running by a drop ends
//! in no pool; a panic aborts the process.
#![cfg(not(rayforce_loom))] // real threads and processes

use rayforce_pool::Pool;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

/// Long enough for any thread of this machine to get a turn, short enough to fail fast.
const PATIENCE: Duration = Duration::from_secs(30);

fn named_pool(workers: usize) -> Pool {
    Pool::builder()
        .workers(workers)
        .thread_name(|k| format!("spawn-test-{k}"))
        .build()
        .unwrap()
}

#[test]
fn a_spawned_task_runs_on_a_helper_while_its_spawner_goes_on() {
    let pool = named_pool(2);
    let (to_task, from_spawner) = mpsc::channel::<u32>();
    let (to_spawner, from_task) = mpsc::channel();
    pool.spawn(move || {
        // Sent only after `spawn` returned: a task run inline would wait for ever.
        let x = from_spawner.recv().unwrap();
        let name = thread::current().name().map(str::to_owned);
        to_spawner.send((x * 2, name)).unwrap();
    });
    to_task.send(21).unwrap();
    let (doubled, name) = from_task.recv_timeout(PATIENCE).unwrap();
    assert_eq!(doubled, 42);
    assert_eq!(
        name.as_deref(),
        Some("spawn-test-1"),
        "the pool's helper ran it"
    );
}

#[test]
fn the_free_spawn_runs_on_the_current_pool() {
    let pool = named_pool(2);
    let (tx, rx) = mpsc::channel();
    pool.install(|| {
        rayforce_pool::spawn(move || {
            let name = thread::current().name().map(str::to_owned);
            // A task spawned by a task, through the current pool: the helper's.
            rayforce_pool::spawn_fifo(move || {
                let inner = thread::current().name().map(str::to_owned);
                tx.send((name, inner)).unwrap();
            });
        });
    });
    let (outer, inner) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(outer.as_deref(), Some("spawn-test-1"));
    assert_eq!(inner.as_deref(), Some("spawn-test-1"));
}

/// Waits until `count` reaches `expected`, at most `PATIENCE`.
fn wait_until(count: &AtomicUsize, expected: usize) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while count.load(Ordering::Relaxed) != expected {
        assert!(
            std::time::Instant::now() < deadline,
            "{count:?} of {expected}"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn dropping_a_pool_runs_its_spawned_tasks() {
    for workers in [1, 2, 3] {
        let pool = Pool::builder().workers(workers).build().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..200 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                thread::sleep(Duration::from_micros(50));
                ran.fetch_add(1, Ordering::Relaxed);
            });
        }
        drop(pool);
        wait_until(&ran, 200);
    }
}

#[test]
fn a_pool_dropped_while_its_task_waits_for_the_dropping_thread_returns() {
    // rayon's `termination_while_things_are_executing`: the task waits for a message sent
    // only after the drop, and spawns another through the pool it runs in.
    let (to_task, from_main) = mpsc::channel();
    let (to_main, from_task) = mpsc::channel();
    {
        let pool = Pool::builder().workers(2).build().unwrap();
        pool.spawn(move || {
            let data: u32 = from_main.recv().unwrap();
            rayforce_pool::spawn(move || to_main.send(data).unwrap());
        });
    }
    to_task.send(22).unwrap();
    assert_eq!(from_task.recv_timeout(PATIENCE), Ok(22));
}

#[test]
fn a_panic_in_a_spawned_task_goes_to_the_pool_s_panic_handler() {
    let (caught, panics) = mpsc::channel();
    let caught = std::sync::Mutex::new(caught);
    let pool = Pool::builder()
        .workers(2)
        .panic_handler(move |payload| {
            let message = payload.downcast_ref::<&str>().copied().unwrap_or("?");
            caught.lock().unwrap().send(message.to_owned()).unwrap();
        })
        .build()
        .unwrap();
    pool.spawn(|| panic!("first"));
    assert_eq!(panics.recv_timeout(PATIENCE).as_deref(), Ok("first"));
    // The helper goes on: the next task runs, and its panic is handled as well.
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || tx.send(()).unwrap());
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(()));
    pool.spawn(|| panic!("second"));
    assert_eq!(panics.recv_timeout(PATIENCE).as_deref(), Ok("second"));
}

#[test]
fn a_spawned_task_may_drop_the_last_handle_to_its_pool() {
    let pool = Arc::new(named_pool(2));
    let (dropped, wait_for_drop) = mpsc::channel();
    let (done, wait_for_done) = mpsc::channel();
    let ran_after = Arc::new(AtomicUsize::new(0));
    {
        let pool_in_task = Arc::clone(&pool);
        let ran_after = Arc::clone(&ran_after);
        pool.spawn(move || {
            wait_for_drop.recv().unwrap();
            // A task queued behind this one: the pool's end runs it.
            let ran_after = Arc::clone(&ran_after);
            pool_in_task.spawn(move || {
                ran_after.fetch_add(1, Ordering::Relaxed);
            });
            drop(pool_in_task); // the last handle: the pool ends from inside its task
            done.send(()).unwrap();
        });
    }
    drop(pool);
    dropped.send(()).unwrap();
    wait_for_done.recv_timeout(PATIENCE).unwrap();
    wait_until(&ran_after, 1);
}

#[test]
fn a_pool_of_one_thread_runs_a_spawned_task_on_the_spawner() {
    let pool = Pool::builder().workers(1).build().unwrap();
    let spawner = thread::current().id();
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || tx.send(thread::current().id()).unwrap());
    assert_eq!(rx.try_recv(), Ok(spawner), "ran before spawn returned");
}

#[test]
fn a_task_waiting_for_one_it_spawned_gets_an_idle_helper_also_a_wide_one() {
    // Two helpers, one counted by the narrow width: whichever takes the first task, the
    // other is idle and takes the second.
    let pool = Pool::builder().workers(2).wide_workers(3).build().unwrap();
    for _ in 0..20 {
        pool.dispatch_wide(3, |_| thread::sleep(Duration::from_micros(100)));
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || {
            let (inner_tx, inner_rx) = mpsc::channel();
            rayforce_pool::spawn(move || inner_tx.send(()).unwrap());
            // Not unwrapped: a failed wait reads as the assertion below, not an abort.
            let _ = tx.send(inner_rx.recv_timeout(PATIENCE).is_ok());
        });
        assert_eq!(rx.recv_timeout(2 * PATIENCE), Ok(true));
    }
}

/// Spawns a task that holds a helper until the returned sender sends; returns once the
/// task started.
fn hold_a_helper(pool: &Pool) -> mpsc::Sender<()> {
    let (release, held) = mpsc::channel::<()>();
    let (started, running) = mpsc::channel();
    pool.spawn(move || {
        started.send(()).unwrap();
        held.recv().unwrap();
    });
    running.recv_timeout(PATIENCE).unwrap();
    release
}

#[test]
fn yield_now_runs_a_spawned_task_waiting_for_a_helper() {
    use rayforce_pool::Yield;
    assert_eq!(rayforce_pool::yield_now(), None, "in no pool");
    let pool = named_pool(2);
    let other = named_pool(2);
    assert_eq!(pool.install(rayforce_pool::yield_now), Some(Yield::Idle));
    assert_eq!(pool.install(|| other.yield_now()), None, "in another pool");
    // The one helper waits inside a task until released: the next task waits for it.
    let release = hold_a_helper(&pool);
    let (ran_on, where_it_ran) = mpsc::channel();
    pool.spawn(move || ran_on.send(thread::current().id()).unwrap());
    assert_eq!(pool.install(|| pool.yield_now()), Some(Yield::Executed));
    assert_eq!(where_it_ran.try_recv(), Ok(thread::current().id()));
    assert_eq!(pool.install(rayforce_pool::yield_local), Some(Yield::Idle));
    release.send(()).unwrap();
}

/// Sends what `yield_now` says as its thread exits.
struct YieldAtExit(mpsc::Sender<Option<rayforce_pool::Yield>>);

impl Drop for YieldAtExit {
    fn drop(&mut self) {
        let _ = self.0.send(rayforce_pool::yield_now());
    }
}

thread_local! {
    static AT_EXIT: std::cell::RefCell<Option<YieldAtExit>> = const { std::cell::RefCell::new(None) };
}

#[test]
fn a_helper_s_thread_locals_drop_in_no_pool_after_a_drop_that_left_it_running() {
    let (tx, seen_at_exit) = mpsc::channel();
    let pool = Pool::builder()
        .workers(2)
        .on_thread_start(move |_| {
            let tx = tx.clone();
            AT_EXIT.with(|at_exit| *at_exit.borrow_mut() = Some(YieldAtExit(tx)));
        })
        .build()
        .unwrap();
    let release = hold_a_helper(&pool);
    drop(pool); // a task runs: the helper is left to end it, then stops
    release.send(()).unwrap();
    // The pool's last handle was the helper's own, dropped before its thread-locals.
    assert_eq!(seen_at_exit.recv_timeout(PATIENCE), Ok(None));
}

/// Set in the child process of the abort test: the test then spawns a panicking task.
const PANIC_CHILD: &str = "RAYFORCE_POOL_TEST_SPAWN_PANIC_CHILD";

#[test]
fn a_panic_in_a_spawned_task_aborts_the_process_saying_so() {
    if std::env::var_os(PANIC_CHILD).is_some() {
        let pool = Pool::builder().workers(2).build().unwrap();
        pool.spawn(|| panic!("spawned and failed"));
        thread::sleep(PATIENCE);
        return; // the abort did not come: the parent sees this test pass, and fails
    }
    // This test alone, in a child process of its own (no fork of the harness's threads).
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_panic_in_a_spawned_task_aborts_the_process_saying_so",
            "--nocapture",
        ])
        .env(PANIC_CHILD, "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(output.status.signal(), Some(libc::SIGABRT), "{said}");
    }
    assert!(!output.status.success(), "{said}");
    assert!(said.contains("spawned and failed"), "{said}");
    assert!(said.contains("a task spawned by `spawn` unwound"), "{said}");
}
