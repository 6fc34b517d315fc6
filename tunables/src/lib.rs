//! CPU-count policies and glibc-style tunables for rayforce-rt.
//!
//! [`cpu`] reads how many CPUs a process has under each [`cpu::CpuPolicy`] (online,
//! schedulable, physical cores), without allocating, so the global allocator can size its
//! arenas from the same reading that sizes the worker pool.

pub mod cpu;
mod number;
