//! Loom models of the pool's internals (run with `--cfg rayforce_loom`).

mod broadcast_model;
mod fork_once_model;
mod join_model;
mod ops_model;
mod scope_model;
mod signal_model;
mod spawn_model;

use crate::{Pool, PoolBuilder};
use rayforce_tunables::cpu::{Count, CpuCounts, Source};

/// A pool of one helper that never spins (idle, it sleeps), one caller's slot, no
/// re-reading: the smallest pool with every path of a post, a take and a withdraw.
fn pool() -> Pool {
    small().build().unwrap()
}

/// `pool`'s builder, for a model that changes one setting.
fn small() -> PoolBuilder {
    Pool::builder()
        .workers(2)
        .spin_us(0)
        .max_in_flight(1)
        .recheck_ms(0)
}

/// Two CPUs by every policy, so that one helper may spin (and no reading of the machine
/// inside a model).
fn two_cpus() -> CpuCounts {
    let two = Count {
        value: 2,
        source: Source::OnlineList,
        fallback: false,
    };
    CpuCounts {
        online: two,
        schedulable: two,
        physical: two,
        quota: None,
    }
}
