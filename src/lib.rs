//! rayforce-rt: one CPU-count policy (online, schedulable or physical cores) sizes both the
//! allocator's arenas and the worker pool's width.
//!
//! [`Runtime`] is the whole: a `#[global_allocator]` ([`rayforce_alloc::RayAlloc`] over
//! mimalloc v3 heaps) that owns a [`Pool`] built on first use from the same CPU reading and
//! tunables. The `rayforce-rt` command line (package `rayforce-cli`) shows what it sizes.

mod cpu_time;
mod default_offer;
#[cfg(feature = "rayon")]
mod rayon_bridge;
mod runtime;
mod static_memory;

#[doc(hidden)]
pub use cpu_time::process_cpu_time;
pub use rayforce_alloc::{AllocStats, RayAlloc, Sizing};
pub use rayforce_pool::{
    broadcast, current_num_threads, current_thread_index, in_place_scope, in_place_scope_fifo,
    iter, join, join_context, max_num_threads, prelude, range, range_inclusive, scope, scope_fifo,
    slice, spawn, spawn_broadcast, spawn_fifo, str, vec, yield_local, yield_now, BroadcastContext,
    FnContext, Pool, Scope, ScopeFifo, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Wide,
    Yield,
};
pub use rayforce_tunables::{cpu, registry, Choices, Environment, Tunables};
#[cfg(feature = "rayon")]
pub use rayon_bridge::RayonInitError;
pub use runtime::Runtime;
