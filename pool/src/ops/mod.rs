//! The data-parallel operations: results written in place, mutable output, per-participant
//! state and early exit, without atomics, locks or `unsafe` in user code. A layer above the
//! pool: every operation is an instance of one pipeline (`pipeline.rs`: state made at most
//! once per participant, the ranges it claims folded into it, an optional stop, states
//! combined once), the operations' one door into the pool (`Pool::run_chunks`, README
//! "The operations' hook").
//!
//! Bring them in with `use rayforce_pool::prelude::*`; they run on a [`Pool`](crate::Pool)
//! as `dispatch` does, or on [`pool.wide()`](crate::Pool::wide) as `dispatch_wide` does.
//! From inside a task they share their items with the pool's threads idle then, and run
//! inline, on the calling thread, when none is.

mod each;
pub(crate) mod find;
mod fold;
mod look_back;
pub(crate) mod map;
pub(crate) mod pipeline;
pub(crate) mod region;
pub(crate) mod scan;

pub use each::ParallelEach;
pub use find::ParallelFind;
pub use fold::ParallelFold;
pub use map::ParallelMap;
pub use region::{Runs, Wide};
pub use scan::ParallelScan;
