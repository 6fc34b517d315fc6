//! `build_global` racing the first free function, each race in a child forked from a
//! process that never touched the default pool: one pool is ever the default. The free
//! function runs on the pool that is the default after the race, and `build_global`
//! succeeds exactly when that pool is its own. One test: the default pool is per process.
#![cfg(not(rayforce_loom))] // real threads and processes

use rayforce_pool::{Pool, ThreadPoolBuilder};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[allow(dead_code)] // this test waits for its children, without reading their ends
mod child_ends;

/// Races run, each in a fresh child.
const RACES: usize = 200;

/// In a child: the race, the free call `delay` late; whether its outcome is one default
/// pool, and whether `build_global` won it.
fn race(wide: usize, delay: Duration) -> (bool, bool) {
    let start = Arc::new(Barrier::new(2));
    let free_call = std::thread::spawn({
        let start = Arc::clone(&start);
        move || {
            start.wait();
            let late = Instant::now() + delay;
            while Instant::now() < late {
                std::hint::spin_loop();
            }
            rayforce_pool::current_num_threads()
        }
    });
    start.wait();
    let built = ThreadPoolBuilder::new()
        .num_threads(wide)
        .build_global()
        .is_ok();
    let Ok(seen) = free_call.join() else {
        return (false, built);
    };
    let now = rayforce_pool::current_num_threads();
    (seen == now && built == (now == wide), built)
}

#[test]
fn build_global_racing_the_first_free_call_in_forked_children_leaves_one_default() {
    // A width the default pool does not have, learnt without building the default pool
    // (from the same tunables: the environment's).
    let tunables = rayforce_tunables::Tunables::resolve(&rayforce_tunables::Choices::new());
    let probe = Pool::builder().tunables(&tunables).best_effort().build();
    let wide = probe.unwrap().width() + 1;
    let mut won = 0;
    for race_index in 0..RACES {
        // SAFETY: the child runs only this test's code, then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: alarm has no preconditions: the child's deadline.
            unsafe { libc::alarm(10) };
            // From at once to 800 us late: each side wins some races, and some are close.
            let delay = Duration::from_micros(50 * (race_index % 17) as u64);
            let code = match std::panic::catch_unwind(|| race(wide, delay)) {
                Ok((true, built)) => 10 + i32::from(built),
                Ok((false, _)) => 1,
                Err(_) => 2,
            };
            // SAFETY: ends only this (child) process, without the parent's atexit handlers.
            unsafe { libc::_exit(code) };
        }
        let status = child_ends::status(pid, &format!("race {race_index}"));
        let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        assert!(
            matches!(code, Some(10 | 11)),
            "race {race_index}: child status {status:#x} (exit 1: two default pools; 2: a panic)"
        );
        won += usize::from(code == Some(11));
    }
    println!("build_global won {won} of {RACES} races");
    assert!(
        (1..RACES).contains(&won),
        "build_global won {won} of {RACES} races: the two did not race"
    );
}
