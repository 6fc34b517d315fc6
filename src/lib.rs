//! rayforce-rt: one CPU-count policy (online, schedulable or physical cores) sizes both the
//! allocator's arenas and the worker pool's width.
//!
//! This crate is the facade: it re-exports the CPU reading of [`rayforce_tunables`] and
//! reports it ([`CpuReport`]), as `rayforce-rt inspect` prints it.

mod report;

pub use rayforce_tunables::cpu;
pub use report::{CpuReport, QuotaReport};
