//! The rayon bridge: after `init_rayon_global`, rayon's global pool is as wide as the
//! runtime's pool (also under `rayforce.pool.workers` and `RAYFORCE_CORES`), its workers are
//! named and bound to the arenas the runtime's helpers use, and a second call is an error the
//! program survives. rayon's global pool is built once per process, so each case runs in a
//! child process of this binary.
#![cfg(target_os = "linux")]

mod common;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::collections::HashMap;

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

/// In the child: builds rayon's global pool through the runtime, checks what can be checked
/// in-process, and prints `key=value` lines for the parent.
fn bridge_in_child() {
    let before = RT.alloc_stats().threads_per_arena;
    let threads = RT
        .init_rayon_global()
        .expect("the first call builds the pool");
    // Every worker has run its start handler once it runs a broadcast.
    let names = rayon::broadcast(|ctx| {
        let name = std::thread::current().name().unwrap_or("").to_owned();
        (ctx.index(), name)
    });
    let after = RT.alloc_stats();
    let second = RT.init_rayon_global();
    // The program carries on: the pool it has still runs.
    let (a, b) = rayon::join(|| 20u64, || 22u64);
    println!();
    println!("threads={threads}");
    println!("rayon_threads={}", rayon::current_num_threads());
    println!("pool_width={}", RT.pool().width());
    println!("runtime_rayon_threads={:?}", RT.rayon_threads());
    println!("limit={}", after.limit);
    println!("before={before:?}");
    println!("after={:?}", after.threads_per_arena);
    for (index, name) in names {
        println!("worker{index}={name}");
    }
    match second {
        Ok(width) => println!("second=ok {width}"),
        Err(err) => println!("second=err {err}"),
    }
    println!("carried_on={}", a + b == 42);
}

/// Runs the child with `env` and returns its `key=value` map.
fn bridged(env: &[(&str, &str)]) -> HashMap<String, String> {
    common::run_test_in_child("rayon_gets_the_runtimes_width_names_and_arenas", env)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The arena counts as a vector (`[1, 0, 2]`).
fn counts(text: &str) -> Vec<usize> {
    text.trim_matches(['[', ']'])
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect()
}

fn check(env: &[(&str, &str)], expected_threads: Option<usize>) {
    let got = bridged(env);
    let threads: usize = got["threads"].parse().unwrap();
    assert_eq!(got["rayon_threads"], got["threads"], "{env:?}: {got:?}");
    assert_eq!(got["pool_width"], got["threads"], "{env:?}: {got:?}");
    if let Some(expected) = expected_threads {
        assert_eq!(threads, expected, "{env:?}: {got:?}");
    }
    assert_eq!(got["runtime_rayon_threads"], format!("Some({threads})"));
    for worker in 0..threads {
        assert_eq!(
            got[&format!("worker{worker}")],
            format!("rayforce-rayon-{worker}")
        );
    }
    // Worker k is on arena k mod limit: each arena gained the workers that map to it.
    let (limit, before, after) = (
        got["limit"].parse::<usize>().unwrap(),
        counts(&got["before"]),
        counts(&got["after"]),
    );
    for arena in 0..limit {
        let workers = (0..threads).filter(|k| k % limit == arena).count();
        let was = before.get(arena).copied().unwrap_or(0);
        let now = after.get(arena).copied().unwrap_or(0);
        assert_eq!(now, was + workers, "arena {arena}, {env:?}: {got:?}");
    }
    assert!(got["second"].starts_with("err "), "{got:?}");
    assert!(
        got["second"].contains("already") && got["second"].contains("expected"),
        "the error says what happened and what was expected: {}",
        got["second"]
    );
    assert_eq!(got["carried_on"], "true");
}

#[test]
fn rayon_gets_the_runtimes_width_names_and_arenas() {
    if common::is_child() {
        return bridge_in_child();
    }
    check(&[], None);
}

#[test]
fn rayon_follows_pool_workers_in_the_tunables() {
    // More workers than CPUs, so the arenas wrap around the limit.
    check(&[("RAYFORCE_TUNABLES", "rayforce.pool.workers=3")], Some(3));
}

#[test]
fn rayon_follows_rayforce_cores() {
    check(&[("RAYFORCE_CORES", "3")], Some(3));
}
