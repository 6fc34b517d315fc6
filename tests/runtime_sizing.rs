//! The Runtime as the global allocator: pool width and arena limit come from one CPU
//! reading, and `RAYFORCE_TUNABLES` changes both. The environment is read by the first
//! allocation, so each case runs in a child process of this binary.
#![cfg(target_os = "linux")]

mod common;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

/// In the child: print the sizes, one `key=value` per line.
fn report_sizes() {
    let sizing = RT.sizing();
    // Before `RT.pool()`: the free functions' default pool is the runtime's, built now.
    let free_width = rayforce_rt::current_num_threads();
    let pool = RT.pool();
    println!("\nfree_width={free_width}");
    println!("default_is_the_runtimes={}", pool.set_default());
    pool.dispatch(4, |_| {
        std::hint::black_box(vec![0u8; 64]);
    });
    println!("\npolicy={}", sizing.policy);
    println!("cpu_count={}", sizing.cpu_count);
    println!("arena_limit={}", sizing.limit);
    println!("pool_width={}", pool.width());
    println!("physical={}", sizing.counts.physical.value);
    println!("reading_physical={}", RT.reading().physical.value);
    println!("online={}", sizing.counts.online.value);
    let late = RT.tunables().diagnostics().iter();
    let late = late
        .filter(|d| d.to_string().contains("set it in RAYFORCE_TUNABLES"))
        .count();
    println!("late_diagnostics={late}");
}

/// Runs `report_sizes` in a child with `env` and returns its key=value map.
fn sizes(env: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    common::run_test_in_child("sizes_come_from_one_reading_and_the_string", env)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

#[test]
fn sizes_come_from_one_reading_and_the_string() {
    if common::is_child() {
        return report_sizes();
    }
    let plain = sizes(&[]);
    assert_eq!(plain["policy"], "physical");
    assert_eq!(plain["default_is_the_runtimes"], "true");
    assert_eq!(plain["free_width"], plain["pool_width"]);
    assert_eq!(
        plain["pool_width"], plain["cpu_count"],
        "pool width = the policy's count"
    );
    assert_eq!(
        plain["arena_limit"], plain["cpu_count"],
        "arena limit = 1 per CPU x the same count"
    );
    assert_eq!(
        plain["reading_physical"], plain["physical"],
        "the pool's reading is the first allocation's"
    );

    let tuned = sizes(&[(
        "RAYFORCE_TUNABLES",
        "rayforce.cpu.policy=online:rayforce.malloc.arenas_per_cpu=3",
    )]);
    assert_eq!(tuned["policy"], "online");
    assert_eq!(tuned["cpu_count"], tuned["online"]);
    assert_eq!(
        tuned["pool_width"], tuned["online"],
        "the string changed the pool"
    );
    assert_eq!(tuned["default_is_the_runtimes"], "true");
    let online: usize = tuned["online"].parse().unwrap();
    assert_eq!(
        tuned["arena_limit"],
        (3 * online).to_string(),
        "and the arenas"
    );

    let explicit = sizes(&[(
        "RAYFORCE_TUNABLES",
        "rayforce.pool.workers=3:rayforce.malloc.arena_max=5",
    )]);
    assert_eq!(
        (
            explicit["pool_width"].as_str(),
            explicit["arena_limit"].as_str()
        ),
        ("3", "5")
    );

    // Per-knob variables come after start-up: they size the pool, never the arenas.
    let late = sizes(&[("RAYFORCE_CORES", "3"), ("RAYFORCE_ARENA_MAX", "5")]);
    assert_eq!(late["pool_width"], "3");
    assert_eq!(late["arena_limit"], plain["arena_limit"]);
    assert_eq!(
        late["late_diagnostics"], "1",
        "RAYFORCE_ARENA_MAX is refused, with a reason"
    );
}
