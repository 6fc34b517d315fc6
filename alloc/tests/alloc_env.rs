//! Tunables read by the allocator's first allocation, so each case runs in a child process
//! started with its `RAYFORCE_TUNABLES`: arena_max=2 with 16 threads stays at 2 arenas, the
//! threads placed on arenas 0..8 wrap onto 2, and the threads not placed all share arena 0; an
//! invalid string keeps the defaults and its diagnostics can be read afterwards.

mod common;

use common::{child_value, is_child, run_child};
use rayforce_alloc::RayAlloc;

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

/// In the child: 16 threads allocating at once, 8 of them placed on arenas 0..8 first; print
/// the stats, taken while all 16 are alive.
fn sixteen_threads_then_report() {
    let barrier = std::sync::Barrier::new(16);
    let seen = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for i in 0..16 {
            let (barrier, seen) = (&barrier, &seen);
            s.spawn(move || {
                if i < 8 {
                    ALLOC.bind_current_thread(i);
                }
                let v = vec![i as u8; 1000];
                barrier.wait(); // all 16 are alive and bound at once
                if i == 0 {
                    *seen.lock().unwrap() = ALLOC.stats().threads_per_arena;
                }
                barrier.wait();
                assert_eq!(v.len(), 1000);
            });
        }
    });
    let stats = ALLOC.stats();
    let seen = seen.into_inner().unwrap();
    println!("limit={}", stats.limit);
    println!("arenas={}", stats.arenas_created);
    println!("arena_1_threads={}", seen[1]);
    println!("arena_0_threads={}", seen[0]);
    println!("diagnostics={}", stats.diagnostics.len());
    for d in stats.diagnostics.iter() {
        println!("diagnostic: {d}");
    }
}

#[test]
fn arena_max_2_with_16_threads() {
    if is_child() {
        return sixteen_threads_then_report();
    }
    let out = run_child(
        "arena_max_2_with_16_threads",
        &[("RAYFORCE_TUNABLES", "rayforce.malloc.arena_max=2")],
    );
    assert_eq!(child_value(&out, "limit"), "2");
    assert_eq!(child_value(&out, "arenas"), "2", "{out}");
    // Placed on 1, 3, 5, 7 (mod 2): only those. On arena 0: 0, 2, 4, 6 and the 8 not placed,
    // with the child's own test thread.
    assert_eq!(child_value(&out, "arena_1_threads"), "4", "{out}");
    let arena_0: usize = child_value(&out, "arena_0_threads").parse().unwrap();
    assert!(arena_0 >= 12, "{out}");
}

#[test]
fn invalid_tunables_keep_defaults_and_explain() {
    if is_child() {
        return sixteen_threads_then_report();
    }
    let defaults = run_child("invalid_tunables_keep_defaults_and_explain", &[]);
    let out = run_child(
        "invalid_tunables_keep_defaults_and_explain",
        &[(
            "RAYFORCE_TUNABLES",
            "rayforce.malloc.arena_max=0:rayforce.malloc.arenas_per_cpu=lots",
        )],
    );
    assert_eq!(
        child_value(&out, "limit"),
        child_value(&defaults, "limit"),
        "defaults kept"
    );
    assert_eq!(child_value(&out, "diagnostics"), "2");
    assert!(
        out.contains("0 is below the minimum of rayforce.malloc.arena_max"),
        "{out}"
    );
    assert!(
        out.contains("not a number for rayforce.malloc.arenas_per_cpu"),
        "{out}"
    );
}
