//! Start-up must not allocate: the CPU reading and the tunables parser run inside the
//! global allocator's first call. A counting allocator wraps the system one and counts,
//! per thread, so tests in this binary can run side by side.
#![cfg(target_os = "linux")]

mod common;

use proptest::prelude::*;
use rayforce_tunables::cpu::{self, Affinity, CpuSet, SysRoot};
use rayforce_tunables::parse::{parse, write_values};
use rayforce_tunables::registry::TABLE;
use rayforce_tunables::{Choices, Tunables};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Const-initialised and without a destructor, so touching it never allocates.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: during thread teardown the slot may be gone; those are not ours.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to `System` unchanged; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout, as the caller promises.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which we pass on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made on this thread by `f`.
fn allocations_during<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (ALLOCATIONS.with(Cell::get) - before, result)
}

#[test]
fn the_counter_sees_allocations() {
    let (counted, v) = allocations_during(|| vec![1u8; 16]);
    assert!(counted >= 1 && v.len() == 16);
}

#[test]
fn a_full_cpu_reading_allocates_nothing() {
    // Everything that allocates (paths, trees) is built before counting.
    let fixture_dirs: Vec<_> = common::fixtures_if_present()
        .map(|dir| {
            let dirs: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_dir())
                .collect();
            assert!(dirs.len() >= 8);
            dirs
        })
        .unwrap_or_default();
    let quota_tree = common::Tree::new();
    quota_tree.smt(&common::strided(4, 2));
    common::cgroup_v2(&quota_tree, &[("app.slice/job", "150000 100000\n")]);
    let no_topology = common::Tree::new();
    let affinity = CpuSet::parse_list(b"0-2").unwrap();

    let (counted, quota) = allocations_during(|| {
        assert!(cpu::read().is_valid());
        for dir in &fixture_dirs {
            cpu::read_at(SysRoot::new(dir), Affinity::AllOnline);
            cpu::read_at(SysRoot::new(dir), Affinity::Given(&affinity));
            // The nodes too, and with them the cpuset's limits.
            cpu::read_nodes(SysRoot::new(dir), &affinity);
        }
        cpu::read_nodes(SysRoot::SYSTEM, &affinity);
        cpu::read_at(SysRoot::new(no_topology.path()), Affinity::Process);
        cpu::read_at(SysRoot::new(quota_tree.path()), Affinity::Process).quota
    });
    assert_eq!(counted, 0, "the CPU reading allocated {counted} times");
    assert!(quota.is_some(), "the quota path was exercised");
}

#[test]
fn the_strict_mode_report_allocates_nothing() {
    let mut tunables = Tunables::from_choices(&Choices::new());
    tunables.apply_string(b"rayforce.tunables.strict=1:rayforce.cpu.policy=bogus:x=1:a");
    assert!(tunables.check_strict().is_err());
    // SAFETY: opening /dev/null for writing; closed below.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY) };
    assert!(null >= 0);
    let (allocations, ()) =
        allocations_during(|| rayforce_tunables::strict::write_report(&tunables, null));
    // SAFETY: our own descriptor, closed once.
    unsafe { libc::close(null) };
    assert_eq!(allocations, 0);
}

#[test]
fn startup_resolution_allocates_nothing() {
    // RAYFORCE_TUNABLES is whatever the environment holds; absent or not, no allocation.
    let (counted, tunables) = allocations_during(|| Tunables::at_startup(&Choices::new()));
    assert_eq!(counted, 0);
    let (counted, _) = allocations_during(|| {
        let mut t = tunables;
        t.apply_string(b"rayforce.pool.spinn=3:x:rayforce.cpu.policy=numa:=:\xff");
        t
    });
    assert_eq!(counted, 0, "diagnostics are recorded without allocating");
}

/// Bytes biased towards the grammar: real names, separators, numbers, junk.
fn tunables_bytes() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        proptest::sample::select(
            TABLE
                .iter()
                .map(|t| t.name.as_bytes().to_vec())
                .collect::<Vec<_>>()
        ),
        proptest::collection::vec(any::<u8>(), 0..12),
    ];
    let value = prop_oneof![
        (0u64..200_000).prop_map(|n| n.to_string().into_bytes()),
        proptest::sample::select(vec![
            b"physical".to_vec(),
            b"online".to_vec(),
            b"0x1f".to_vec(),
            b"1".to_vec()
        ]),
        proptest::collection::vec(any::<u8>(), 0..8),
    ];
    let entry = (name, proptest::option::of(value)).prop_map(|(mut n, v)| {
        if let Some(v) = v {
            n.push(b'=');
            n.extend(v);
        }
        n
    });
    prop_oneof![
        proptest::collection::vec(entry, 0..8).prop_map(|entries| entries.join(&b':')),
        proptest::collection::vec(any::<u8>(), 0..64),
    ]
}

proptest! {
    #[test]
    fn parsing_any_bytes_is_safe_and_round_trips(bytes in tunables_bytes()) {
        let (counted, parsed) = allocations_during(|| parse(&bytes));
        prop_assert_eq!(counted, 0, "parse allocated");
        for d in parsed.diagnostics.iter() {
            let offset = d.offset().unwrap();
            prop_assert!(offset < bytes.len(), "offset {} outside {} bytes", offset, bytes.len());
        }
        let mut printed = String::new();
        write_values(&parsed.values, &mut printed).unwrap();
        let reparsed = parse(printed.as_bytes());
        prop_assert_eq!(reparsed.values, parsed.values, "{}", printed);
        prop_assert!(reparsed.diagnostics.is_empty(), "{:?}", reparsed.diagnostics);
    }
}
