//! Returning memory: `rayforce.malloc.purge_delay_ms` and `rayforce.malloc.thp` reach
//! mimalloc (and mimalloc's own `MIMALLOC_` settings stand when they are unset, which also
//! proves the option numbers), and `collect()` gives freed memory back at once.

mod common;

use common::{child_value, is_child, resident_bytes, run_child};
use rayforce_alloc::RayAlloc;

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

#[test]
fn settings_child() {
    if !is_child() {
        return;
    }
    let stats = ALLOC.stats();
    println!("purge={} thp={}", stats.purge_delay_ms, stats.thp);
}

/// (purge delay, THP) as a child with `env` sees them.
fn settings(env: &[(&str, &str)]) -> (String, String) {
    let out = run_child("settings_child", env);
    (child_value(&out, "purge"), child_value(&out, "thp"))
}

#[test]
fn the_tunables_reach_mimalloc_and_mimallocs_own_settings_stand_otherwise() {
    assert_eq!(
        settings(&[(
            "RAYFORCE_TUNABLES",
            "rayforce.malloc.purge_delay_ms=5:rayforce.malloc.thp=0"
        )]),
        ("5".into(), "false".into())
    );
    // Unset: mimalloc's own, from its environment variables (matched by name inside
    // mimalloc, so this checks which option numbers the allocator sets and reads).
    assert_eq!(
        settings(&[("MIMALLOC_PURGE_DELAY", "777"), ("MIMALLOC_ALLOW_THP", "0")]),
        ("777".into(), "false".into())
    );
    assert_eq!(
        settings(&[]),
        ("1000".into(), "true".into()),
        "mimalloc's defaults"
    );
}

#[test]
fn collect_child() {
    if !is_child() {
        return;
    }
    // 64 MiB in 16 KiB blocks, touched, then freed: with purging put off for an hour,
    // only `collect` can return it.
    let blocks: Vec<Vec<u8>> = (0..4096).map(|i| vec![i as u8; 16 << 10]).collect();
    drop(blocks);
    let before = resident_bytes();
    ALLOC.collect();
    let after = resident_bytes();
    println!("before={before} after={after}");
}

#[test]
fn collect_returns_freed_memory_to_the_system() {
    let out = run_child(
        "collect_child",
        &[(
            "RAYFORCE_TUNABLES",
            "rayforce.malloc.purge_delay_ms=3600000",
        )],
    );
    let before: usize = child_value(&out, "before").parse().unwrap();
    let after: usize = child_value(&out, "after").parse().unwrap();
    assert!(
        after + (32 << 20) <= before,
        "resident {before} bytes before collect, {after} after: less than half of the 64 MiB freed came back"
    );
}
