//! rayforce-alloc: a `#[global_allocator]` with CPU-policy-sized arenas on mimalloc v3
//! first-class heaps.
//!
//! An arena is a mimalloc heap (`mi_heap_new`). Each thread is bound to one arena on its
//! first allocation and keeps its "theap" for that heap (mimalloc's per-thread part of a
//! heap) in a thread-local: an allocation is one thread-local compare and
//! `mi_theap_malloc_aligned`, the call `mi_malloc_aligned` itself makes after reading its
//! own thread-local. Why arenas at all: one heap shared by ~100 threads contends on
//! heap-level locks, while a heap per thread strands pages and grows resident memory; the
//! count is the trade, and a CPU policy sizes it.

mod arenas;
mod bind_lock;
mod binding;
mod ffi;
mod ray_alloc;
mod stats;

pub use arenas::{arena_limit, Sizing};
pub use ray_alloc::RayAlloc;
pub use stats::AllocStats;

/// The crate README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
