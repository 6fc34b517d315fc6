//! `spawn` (README "Spawns"): a task spawned with nobody waiting on the pool, and one it
//! spawns in turn, each run once by the helper, woken for them, while the spawner waits
//! only on its own lock; a task spawned before the pool is dropped runs, also when the
//! helper spins at the drop, and after the pool narrowed to its caller with the task's
//! permit posted.

use super::{small, two_cpus};
use crate::sync::{self, Arc, Condvar, Mutex};
use crate::Pool;

/// `tests::pool`'s pool, with the slot kept for spawned tasks.
fn pool() -> Pool {
    small().spawn_slot().build().unwrap()
}

/// What the tasks ran, and a wake-up for each run.
type Runs = Arc<(Mutex<u32>, Condvar)>;

/// A task adding `amount` to `runs`.
fn adding(runs: &Runs, amount: u32) -> impl FnOnce() + Send + 'static {
    let runs = Arc::clone(runs);
    move || {
        *sync::lock(&runs.0) += amount;
        runs.1.notify_one();
    }
}

/// Waits, outside the pool, until the tasks added `total` (a lost task: a deadlock).
fn wait_for(runs: &Runs, total: u32) {
    let mut seen = sync::lock(&runs.0);
    while *seen != total {
        assert!(*seen < total, "each task once");
        seen = runs.1.wait(seen).unwrap();
    }
}

#[test]
fn spawned_tasks_run_once_with_nobody_waiting_on_the_pool() {
    crate::sync::model(|| {
        let pool = pool();
        let runs = Runs::default();
        let (outer, inner) = (adding(&runs, 1), adding(&runs, 10));
        pool.spawn(move || {
            crate::spawn(inner);
            outer();
        });
        wait_for(&runs, 11);
    });
}

#[test]
fn a_task_spawned_before_the_drop_runs() {
    crate::sync::model(|| {
        // The helper spins too (two clock readings: loom's clock moves a microsecond a
        // reading), so it may see the shutdown in a poll of the dispatches' slot alone.
        let pool = small()
            .spin_us(2)
            .cpu_counts(two_cpus())
            .spawn_slot()
            .build()
            .unwrap();
        let runs = Runs::default();
        pool.spawn(adding(&runs, 1));
        drop(pool);
        wait_for(&runs, 1);
    });
}

#[test]
fn a_task_spawned_before_the_pool_narrows_runs_after_its_drop() {
    crate::sync::model(|| {
        let pool = pool();
        let runs = Runs::default();
        pool.spawn(adding(&runs, 1));
        pool.resize(1, 1);
        drop(pool);
        wait_for(&runs, 1);
    });
}
