//! `spawn`: a spawned task runs on a helper while its spawner goes on (it may wait for the
//! task); the free `spawn` runs on the current pool; dropping a pool runs every task still
//! queued and waits for those running, also when a spawned task drops the pool's last
//! handle; a pool of one thread runs the task on the spawner; a task waiting for one it
//! spawned gets an idle helper, also one only the wide width counts; a panic aborts the
//! process.
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

#[test]
fn dropping_a_pool_runs_and_waits_for_its_spawned_tasks() {
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
        assert_eq!(ran.load(Ordering::Relaxed), 200, "{workers} workers");
    }
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
    let deadline = std::time::Instant::now() + PATIENCE;
    while ran_after.load(Ordering::Relaxed) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the queued task never ran"
        );
        thread::sleep(Duration::from_millis(1));
    }
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
