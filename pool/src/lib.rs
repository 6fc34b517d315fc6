//! rayforce-pool: a data-parallel worker pool sized by a CPU-count policy.
//!
//! `pool.dispatch(n, |task| ..)` runs tasks `0..n` with the caller as worker 0 and wakes at
//! most `n - 1` helpers. Sized by physical cores (the default) it leaves SMT siblings idle;
//! `dispatch_wide` lets latency-bound work use them. The signalling protocol, and why each
//! memory ordering is enough, is in `README.md` beside this file; its loom models are in
//! `src/tests/` (internals) and the `rayforce-loom-tests` crate (public API).
//!
//! Above `dispatch`, the data-parallel operations ([`prelude`]) get results out without
//! atomics, locks or `unsafe`: `map` and `map_slice` into a `Vec`, `for_each_mut`,
//! `parts_mut` and `chunks_mut` over mutable slices, `fold` with state per participant
//! (and `reduce_with`, `sum`, `position_min_by_key`, `position_max_by_key`),
//! `position_any`, `position_any_slice`, `any` and `all` with early exit, and prefix sums.
//! Each takes indices (`pool.map(n, |i| ..)`); where rayon has the name, it means what
//! rayon's does.
#![warn(missing_debug_implementations)]

mod broadcast;
mod broken;
mod builder;
mod caller;
mod chunk_size;
mod claim;
mod crew;
mod current;
mod default_pool;
mod detached;
mod follow;
mod fork;
mod fork_gate;
mod fork_once;
mod free;
mod in_task;
pub mod iter;
mod job;
mod join_context;
mod joins;
mod limits;
mod mail;
mod offering;
mod ops;
mod panics;
#[cfg(target_os = "linux")]
mod place;
mod placed;
mod pool;
mod region;
mod scope;
mod shared;
mod signal;
mod site_rate;
pub mod slice;
mod slot;
mod solo;
mod sort;
mod spin;
mod stats;
mod stream;
mod sync;
mod tasks;
#[cfg(all(target_os = "linux", target_arch = "x86_64", not(rayforce_loom)))]
mod tsc;
mod unwind;
mod waking_late;
mod worker;
mod yielding;

#[cfg(all(test, rayforce_loom))]
mod tests;

pub use broadcast::BroadcastContext;
pub use builder::{widths, BuildError, PoolBuilder};
/// rayon's names for the pool and its builder: a program's `use rayon::ThreadPoolBuilder`
/// becomes `use rayforce_pool::ThreadPoolBuilder`.
pub use builder::{BuildError as ThreadPoolBuildError, PoolBuilder as ThreadPoolBuilder};
pub use fork_once::ForkOnceCell;
pub use free::{
    broadcast, current_num_threads, current_thread_index, in_place_scope, in_place_scope_fifo,
    join, max_num_threads, scope, scope_fifo, spawn, spawn_broadcast, spawn_fifo,
};
pub use join_context::{join_context, FnContext};
pub use limits::MAX_WIDTH;
pub use ops::{ParallelEach, ParallelFind, ParallelFold, ParallelMap, ParallelScan, Runs, Wide};
pub use placed::{HelperPlacement, PlaceFailure};
/// rayon's name for [`Pool`].
pub use pool::Pool as ThreadPool;
pub use pool::Pool;
pub use scope::{Scope, ScopeFifo};
pub use slot::SignalState;
pub use stats::{StartFailure, Stats};
/// The models' runner (`sync::model`), for the public-API models in `loom-tests`.
#[cfg(rayforce_loom)]
#[doc(hidden)]
pub use sync::model as loom_model;
pub use yielding::{yield_local, yield_now, Yield};

/// The string sources, as rayon's `rayon::str`: [`ParallelString`](str::ParallelString)
/// (`par_split`, `par_lines`, `par_chars`, ...) and the iterators its methods make.
pub mod str {
    pub use crate::iter::text::{
        Bytes, CharIndices, Chars, EncodeUtf16, Lines, MatchIndices, Matches, ParallelString,
        Pattern, Split, SplitAsciiWhitespace, SplitInclusive, SplitTerminator, SplitWhitespace,
    };
}

pub use iter::{range, range_inclusive, vec};

/// The data-parallel operations and the parallel iterators, in scope:
/// `use rayforce_pool::prelude::*;`, then `pool.map(n, |i| ..)`, `pool.wide().sum(..)`, or
/// rayon's `xs.par_iter().map(..).sum()`.
pub mod prelude {
    pub use crate::iter::{
        FromParallelIterator, IndexedParallelIterator, IntoParallelIterator,
        IntoParallelRefIterator, IntoParallelRefMutIterator, ParallelBridge, ParallelDrainFull,
        ParallelDrainRange, ParallelExtend, ParallelIterator,
    };
    pub use crate::ops::{ParallelEach, ParallelFind, ParallelFold, ParallelMap, ParallelScan};
    pub use crate::slice::{ParallelSlice, ParallelSliceMut};
    pub use crate::str::ParallelString;
}

/// The crate README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
