//! A fork while another thread is building the runtime's pool: the child builds its own and
//! dispatches, instead of waiting forever for a build that only its parent was running.
//! Each round runs in a process of its own (the pool is built once per process): it starts
//! a thread that builds the pool and forks once the build has started its first helper.
//! The pool is 32 wide, so its build starts 31 helpers and waits for each to bind its
//! arena: milliseconds, so the fork lands inside the build in nearly every round. Two
//! threads spin beside the build, as on a loaded machine, where a fork lands at any point
//! of a helper's binding. Children run with a deadline: a hang is a failure.
#![cfg(target_os = "linux")]

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::registry::Id;
use rayforce_rt::{Choices, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[global_allocator]
static RT: Runtime = Runtime::with_choices(
    Choices::new()
        .policy(CpuPolicy::Physical)
        .set(Id::PoolWorkers, 32),
);

/// Rounds, each a fresh process that forks once during (or near) the pool's first build.
const ROUNDS: usize = 20;

/// Threads that keep the CPUs busy in each round.
const BUSY: usize = 2;

/// In a child: exits at once with `ok`'s code, without the parent's atexit handlers.
fn exit_child(ok: bool) -> ! {
    // SAFETY: _exit is async-signal-safe and ends only this (child) process.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// Forks; in the child, runs `child` under a 10 s deadline (SIGALRM ends it) and exits
/// with its result. In the parent, returns the child's pid.
fn fork_with_deadline(child: impl FnOnce() -> bool) -> libc::pid_t {
    // SAFETY: the child only runs `child`, then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: alarm has no preconditions.
        unsafe { libc::alarm(10) };
        exit_child(child());
    }
    pid
}

/// Waits for child `pid`; whether it exited with 0 within 20 s (else it is killed).
fn exited_cleanly(pid: libc::pid_t) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child, without blocking.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if Instant::now() > deadline {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Threads in this process.
fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line["Threads:".len()..].trim().parse().unwrap()
}

/// A dispatch on the runtime's pool with an exact result.
fn dispatch_is_exact() -> bool {
    let sum = AtomicUsize::new(0);
    RT.pool().dispatch(64, |i| {
        sum.fetch_add(i, Ordering::Relaxed);
    });
    sum.into_inner() == 64 * 63 / 2
}

#[test]
fn a_child_forked_during_the_pools_first_build_builds_its_own() {
    for round in 0..ROUNDS {
        // A fresh process: this test never builds the pool, so each round's is the first.
        let round_process = fork_with_deadline(|| {
            // The busy threads run before the build starts: only the pool's threads start
            // while the fork may land (the pool keeps forks out of its own threads' starts,
            // not out of those of the program's).
            let spinning = Arc::new(AtomicUsize::new(0));
            for _ in 0..BUSY {
                let spinning = Arc::clone(&spinning);
                std::thread::spawn(move || {
                    spinning.fetch_add(1, Ordering::Relaxed);
                    loop {
                        std::hint::spin_loop();
                    }
                });
            }
            while spinning.load(Ordering::Relaxed) < BUSY {
                std::hint::spin_loop();
            }
            let builder = std::thread::spawn(dispatch_is_exact);
            // This thread, the busy ones, the builder, and its first helper.
            while threads() < 3 + BUSY {
                std::hint::spin_loop();
            }
            let during_build = fork_with_deadline(dispatch_is_exact);
            exited_cleanly(during_build) && builder.join().unwrap_or(false)
        });
        assert!(
            exited_cleanly(round_process),
            "round {round}: the child forked during the build hung or failed"
        );
    }
}
