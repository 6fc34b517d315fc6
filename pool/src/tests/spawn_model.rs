//! `spawn` (README "Spawns"): a task spawned with nobody waiting on the pool, and one it
//! spawns in turn, each run once by the helper, woken for them, while the spawner waits
//! only on its own lock; dropping the pool runs a task still queued, or waits for the
//! helper running it, before the helper stops, also after the pool narrowed to its caller
//! with the task's permit posted.

use super::{small, two_cpus};
use crate::sync::{self, Arc, AtomicUsize, Condvar, Mutex, Ordering};
use crate::Pool;

/// `tests::pool`'s pool, with the slot kept for spawned tasks.
fn pool() -> Pool {
    small().spawn_slot().build().unwrap()
}

#[test]
fn spawned_tasks_run_once_with_nobody_waiting_on_the_pool() {
    crate::sync::model(|| {
        let pool = pool();
        let runs = Arc::new((Mutex::new(0), Condvar::new()));
        let outer = Arc::clone(&runs);
        pool.spawn(move || {
            let inner = Arc::clone(&outer);
            crate::spawn(move || {
                *sync::lock(&inner.0) += 10;
                inner.1.notify_one();
            });
            *sync::lock(&outer.0) += 1;
            outer.1.notify_one();
        });
        let mut seen = sync::lock(&runs.0);
        while *seen != 11 {
            assert!(*seen < 11, "each task once");
            seen = runs.1.wait(seen).unwrap();
        }
    });
}

#[test]
fn dropping_the_pool_runs_its_spawned_tasks_first() {
    crate::sync::model(|| {
        // The helper spins too (two clock readings: loom's clock moves a microsecond a
        // reading), so it may see the shutdown in a poll of the dispatches' slot alone.
        let pool = small()
            .spin_us(2)
            .cpu_counts(two_cpus())
            .spawn_slot()
            .build()
            .unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let task = Arc::clone(&runs);
        pool.spawn(move || {
            task.fetch_add(1, Ordering::Relaxed);
        });
        drop(pool);
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "ran once, before the drop returned"
        );
    });
}

#[test]
fn a_task_spawned_before_the_pool_narrows_runs_before_its_drop_returns() {
    crate::sync::model(|| {
        let pool = pool();
        let runs = Arc::new(AtomicUsize::new(0));
        let task = Arc::clone(&runs);
        pool.spawn(move || {
            task.fetch_add(1, Ordering::Relaxed);
        });
        pool.resize(1, 1);
        drop(pool);
        assert_eq!(runs.load(Ordering::Relaxed), 1, "ran once, before the drop");
    });
}
