//! rayforce-alloc: a `#[global_allocator]` with CPU-policy-sized arenas on mimalloc v3
//! first-class heaps.
//!
//! An arena is a mimalloc heap (`mi_heap_new`; arena 0 is the main heap). A thread joins
//! arena 0 on its first allocation, or is placed on arena k with `bind_current_thread` (the
//! runtime's pool puts helper k there), and keeps its "theap" for that heap (mimalloc's
//! per-thread part of a heap) in a thread-local: an allocation is one thread-local compare
//! and `mi_theap_malloc_aligned`, the call `mi_malloc_aligned` itself makes after reading its
//! own thread-local. Why not spread every thread over the arenas, as glibc does: a v3 heap
//! takes no lock to allocate, and the pages a thread leaves when it exits are reclaimed only
//! within its heap, so threads that come and go over several heaps hold more memory than on
//! one (measured in BENCHMARKS.md); long-lived workers placed one per arena strand nothing
//! until they exit.

mod arenas;
mod bind_lock;
mod binding;
mod ffi;
mod ray_alloc;
mod stats;

pub use arenas::{arena_limit, Sizing};
pub use ray_alloc::{OnBind, RayAlloc};
pub use stats::AllocStats;

/// The crate README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
