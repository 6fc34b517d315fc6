//! CPU-count policies and glibc-style tunables for rayforce-rt.
//!
//! [`cpu`] reads how many CPUs a process has under each [`cpu::CpuPolicy`] (online,
//! schedulable, physical cores), without allocating, so the global allocator can size its
//! arenas from the same reading that sizes the worker pool.
//!
//! [`registry`] declares every tunable; [`parse`] reads `RAYFORCE_TUNABLES`
//! (`rayforce.cpu.policy=physical:rayforce.malloc.arena_max=4`) without allocating;
//! [`Tunables`] resolves defaults, the program's [`Choices`], the per-knob variables and
//! the string, and keeps every [`diagnostic`].

pub mod cpu;
pub mod diagnostic;
mod env;
mod number;
pub mod parse;
pub mod registry;
mod resolve;
mod setting;
pub mod strict;
mod words;

pub use env::TUNABLES_VARIABLE;
pub use resolve::{Choices, Environment, StrictError, Tunables};
pub use setting::{Setting, ValueSource};

/// The crate README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
