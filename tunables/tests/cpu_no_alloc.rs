//! The CPU reading must not allocate: it runs inside the global allocator's first call.
//! A counting allocator wraps the system one; a full reading of this machine, of every
//! fixture and of a tree with a cgroup quota must count zero allocations.
#![cfg(target_os = "linux")]

mod common;

use rayforce_tunables::cpu::{self, Affinity, CpuSet, SysRoot};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` unchanged; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout, as the caller promises.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which we pass on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` (this binary runs a single test, so no other thread counts).
fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn a_full_reading_allocates_nothing() {
    // Everything that allocates (paths, trees) is built before counting.
    let fixture_dirs: Vec<_> = std::fs::read_dir(common::fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert!(fixture_dirs.len() >= 8);
    let quota_tree = common::Tree::new();
    quota_tree.smt(&common::strided(4, 2));
    common::cgroup_v2(&quota_tree, &[("app.slice/job", "150000 100000\n")]);
    let no_topology = common::Tree::new();
    let affinity = CpuSet::parse_list(b"0-2").unwrap();

    let mut quota_seen = None;
    let counted = allocations_during(|| {
        let live = cpu::read();
        assert!(live.is_valid());
        for dir in &fixture_dirs {
            cpu::read_at(SysRoot::new(dir), Affinity::AllOnline);
            cpu::read_at(SysRoot::new(dir), Affinity::Given(&affinity));
        }
        quota_seen = cpu::read_at(SysRoot::new(quota_tree.path()), Affinity::Process).quota;
        cpu::read_at(SysRoot::new(no_topology.path()), Affinity::Process);
    });
    assert_eq!(counted, 0, "the CPU reading allocated {counted} times");
    assert!(quota_seen.is_some(), "the quota path was exercised");
}
