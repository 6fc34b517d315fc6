//! Returning memory: `rayforce.malloc.purge_delay_ms` and `rayforce.malloc.thp` reach
//! mimalloc (and mimalloc's own `MIMALLOC_` settings stand when they are unset, which also
//! proves the option numbers), `thp=0` changes nothing outside the allocator (no other
//! program it starts loses huge pages), and `collect()` gives freed memory back at once.

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
    println!(
        "purge={} thp={} numa_local={}",
        stats.purge_delay_ms, stats.thp, stats.numa_local_arenas
    );
    // What the kernel lets this process, and a program it starts, do with huge pages.
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    let started = std::process::Command::new("cat")
        .arg("/proc/self/status")
        .output()
        .unwrap();
    let started = String::from_utf8(started.stdout).unwrap();
    for (who, status) in [("own", own), ("started", started)] {
        if let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) {
            println!("{who}_thp_enabled={}", line["THP_enabled:".len()..].trim());
        }
    }
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
    // The option placement turns on, by number, as mimalloc reads it by name.
    let numa = |env: &[(&str, &str)]| child_value(&run_child("settings_child", env), "numa_local");
    assert_eq!(numa(&[("MIMALLOC_ARENA_IS_NUMA_LOCAL", "1")]), "true");
    assert_eq!(numa(&[]), "false");
}

#[test]
fn turning_huge_pages_off_changes_no_other_program() {
    let out = run_child(
        "settings_child",
        &[("RAYFORCE_TUNABLES", "rayforce.malloc.thp=0")],
    );
    assert_eq!(child_value(&out, "thp"), "false", "{out}");
    if !out.contains("own_thp_enabled=") {
        eprintln!("skipping: this kernel's /proc/PID/status has no THP_enabled line");
        return;
    }
    // `PR_SET_THP_DISABLE` would show as 0 here, in this process and in every program it
    // starts (the flag survives exec).
    assert_eq!(child_value(&out, "own_thp_enabled"), "1", "{out}");
    assert_eq!(child_value(&out, "started_thp_enabled"), "1", "{out}");
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
