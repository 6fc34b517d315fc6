//! Loom models of the pool's internals (run with `--cfg rayforce_loom`).

mod fork_once_model;
mod join_model;
mod ops_model;
mod scope_model;
mod signal_model;

use crate::Pool;

/// A pool of one helper that never spins (idle, it sleeps), one caller's slot, no
/// re-reading: the smallest pool with every path of a post, a take and a withdraw.
fn pool() -> Pool {
    Pool::builder()
        .workers(2)
        .spin_us(0)
        .max_in_flight(1)
        .recheck_ms(0)
        .build()
        .unwrap()
}
