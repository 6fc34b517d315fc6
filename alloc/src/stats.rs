//! `AllocStats`: what the allocator decided and how threads sit on its arenas.

use crate::arenas::{Arenas, Sizing};
use crate::ffi;
use rayforce_tunables::cpu::CpuPolicy;
use rayforce_tunables::diagnostic::Diagnostics;

/// A snapshot of a [`RayAlloc`](crate::RayAlloc)'s sizing and arenas.
#[derive(Clone, Debug)]
pub struct AllocStats {
    /// The policy in force (the one chosen in code, unless `rayforce.cpu.policy` overrode it).
    pub policy: CpuPolicy,
    /// The CPU count under that policy (quota-capped unless `rayforce.cpu.quota=0`).
    pub cpu_count: usize,
    /// The arena limit for threads placed now (it follows the machine's CPU count).
    pub limit: usize,
    /// Arenas created so far (never above `limit`).
    pub arenas_created: usize,
    /// Live threads bound to each created arena.
    pub threads_per_arena: Vec<usize>,
    /// What was wrong with `RAYFORCE_TUNABLES` at start-up (each says what stayed in force).
    pub diagnostics: Diagnostics,
    /// mimalloc's purge delay in force, in ms (`rayforce.malloc.purge_delay_ms`, else
    /// mimalloc's own; negative: never purge).
    pub purge_delay_ms: i64,
    /// Whether memory may be backed by transparent huge pages (`rayforce.malloc.thp`).
    pub thp: bool,
    /// Whether new mimalloc arenas are tagged with their creating thread's NUMA node (on
    /// once placement pointed an arena at a node; see `RayAlloc::prefer_node`).
    pub numa_local_arenas: bool,
}

impl AllocStats {
    pub(crate) fn of(sizing: &Sizing, arenas: &Arenas) -> AllocStats {
        AllocStats {
            policy: sizing.policy,
            cpu_count: sizing.cpu_count,
            limit: arenas.limit(sizing),
            arenas_created: arenas.created(),
            threads_per_arena: arenas.attached(),
            diagnostics: *sizing.tunables.diagnostics(),
            purge_delay_ms: ffi::purge_delay_ms(),
            thp: ffi::thp(),
            numa_local_arenas: ffi::arenas_numa_local(),
        }
    }
}
