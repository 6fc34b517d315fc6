//! `scope` (README "Scopes"): a task spawned in a scope, and one it spawns in turn, each run
//! once, on whichever thread took them, and the scope returns only after both ran and every
//! helper let go of it; its slot is then free and idle.

use super::pool;
use crate::sync::{AtomicUsize, Ordering};

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
