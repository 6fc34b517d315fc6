//! A hermetic Runtime (environment reading off) as the global allocator: `RAYFORCE_TUNABLES`
//! and the per-knob variables change neither the arenas nor the pool.
#![cfg(target_os = "linux")]

mod common;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;

#[global_allocator]
static RT: Runtime = Runtime::hermetic(CpuPolicy::Physical);

#[test]
fn the_environment_changes_nothing() {
    if common::is_child() {
        let sizing = RT.sizing();
        println!(
            "\nsizes={} {} {} {}",
            sizing.policy,
            sizing.limit,
            RT.pool().width(),
            sizing.tunables.diagnostics().len()
        );
        return;
    }
    let run = |env: &[(&str, &str)]| {
        let out = common::run_test_in_child("the_environment_changes_nothing", env);
        out.lines()
            .find_map(|l| l.strip_prefix("sizes="))
            .unwrap()
            .to_owned()
    };
    let quiet = run(&[]);
    let tuned = run(&[
        (
            "RAYFORCE_TUNABLES",
            "rayforce.cpu.policy=online:rayforce.malloc.arena_max=7:rayforce.pool.workers=5:bogus",
        ),
        ("RAYFORCE_CORES", "6"),
    ]);
    assert_eq!(
        tuned, quiet,
        "hermetic: same policy, arena limit, pool width, and no diagnostics"
    );
    assert!(
        quiet.starts_with("physical ") && quiet.ends_with(" 0"),
        "{quiet}"
    );
}
