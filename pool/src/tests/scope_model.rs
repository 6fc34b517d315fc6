//! `scope` (README "Scopes"): a task spawned in a scope, and one it spawns in turn, each run
//! once, on whichever thread took them, and the scope returns only after both ran and every
//! helper let go of it; its slot is then free and idle. A task that waits for one it
//! spawned, with the one helper busy running it, finishes: the owner runs the new task. A
//! dispatch of the body gets the slot the scope held. A task spawned while another thread
//! narrows the pool to its caller starts, though the body waits for it, where the spawn
//! found the helper; else it runs after the body.

use super::pool;
use crate::sync::{self, thread, Arc, AtomicUsize, Condvar, Mutex, Ordering};

#[test]
fn spawned_tasks_run_once_and_the_scope_returns_after_them() {
    crate::sync::model(|| {
        let pool = pool();
        let runs = AtomicUsize::new(0);
        pool.scope(|s| {
            s.spawn(|s| {
                runs.fetch_add(1, Ordering::Relaxed);
                s.spawn(|_| {
                    runs.fetch_add(10, Ordering::Relaxed);
                });
            });
        });
        assert_eq!(runs.load(Ordering::Relaxed), 11, "each task once");
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}

#[test]
fn a_task_waiting_for_one_it_spawned_finishes() {
    crate::sync::model(|| {
        let pool = pool();
        let sent = Mutex::new(false);
        let arrived = Condvar::new();
        pool.scope(|s| {
            s.spawn(|s| {
                s.spawn(|_| {
                    *sync::lock(&sent) = true;
                    arrived.notify_one();
                });
                let mut got = sync::lock(&sent);
                while !*got {
                    got = arrived.wait(got).unwrap();
                }
            });
        });
        assert!(*sync::lock(&sent), "the inner task ran");
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}

#[test]
fn a_dispatch_in_the_body_frees_and_gets_the_scopes_slot() {
    // One slot: the scope's first spawn owns it, and the body's dispatch (whose tasks may
    // wait for each other) waits for it until the scope frees it; the next spawn owns it
    // again.
    crate::sync::model(|| {
        let pool = pool();
        let runs = AtomicUsize::new(0);
        pool.scope(|s| {
            s.spawn(|_| {
                runs.fetch_add(1, Ordering::Relaxed);
            });
            pool.dispatch(2, |_| {
                runs.fetch_add(10, Ordering::Relaxed);
            });
            s.spawn(|_| {
                runs.fetch_add(100, Ordering::Relaxed);
            });
        });
        assert_eq!(runs.load(Ordering::Relaxed), 121, "each task once");
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}

#[test]
fn a_task_spawned_as_the_pool_narrows_starts() {
    // Another thread resizes the pool to the caller alone. A spawn that found the helper
    // offered the task (the scope holds a slot): the body waits for it, and the spawn runs
    // it, or the helper takes it before it parks. A spawn that found none left it queued
    // for the owner, after the body (as rayon's one thread): the body does not wait.
    crate::sync::model(|| {
        let pool = Arc::new(pool());
        let resizer = {
            let pool = Arc::clone(&pool);
            thread::spawn(move || pool.resize(1, 1))
        };
        let sent = Mutex::new(false);
        let arrived = Condvar::new();
        pool.scope(|s| {
            s.spawn(|_| {
                *sync::lock(&sent) = true;
                arrived.notify_one();
            });
            if s.holds_slot() {
                let mut got = sync::lock(&sent);
                while !*got {
                    got = arrived.wait(got).unwrap();
                }
            }
        });
        assert!(*sync::lock(&sent), "the task ran by the scope's end");
        resizer.join().unwrap();
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}
