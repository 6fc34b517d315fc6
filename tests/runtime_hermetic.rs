//! A hermetic Runtime (environment reading off) as the global allocator: `RAYFORCE_TUNABLES`
//! and the per-knob variables change neither the arenas nor the pool.
#![cfg(target_os = "linux")]

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::process::Command;

#[global_allocator]
static RT: Runtime = Runtime::hermetic(CpuPolicy::Physical);

const CHILD: &str = "RAYFORCE_RUNTIME_TEST_CHILD";

#[test]
fn the_environment_changes_nothing() {
    if std::env::var_os(CHILD).is_some() {
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
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "the_environment_changes_nothing", "--nocapture"])
            .env(CHILD, "1")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
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
