//! `fork()` and the pool: a child forked from inside a task finishes the dispatch it was in
//! and gets fresh helpers for the next one; a child forked from a helper's task exits when
//! that task returns; a child forked between dispatches runs in parallel again. Children
//! run with a deadline: a hang is a failure, not a stuck test.
#![cfg(not(rayforce_loom))] // real threads and processes

use rayforce_pool::Pool;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How many forks each test makes (the issue asks for 1,000 of each kind).
const FORKS: usize = 1000;

/// In the child: exits at once with `ok`'s code, without the parent's atexit handlers.
fn exit_child(ok: bool) -> ! {
    // SAFETY: _exit is async-signal-safe and ends only this (child) process.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// In the child: a deadline for everything it does (SIGALRM kills it).
fn child_deadline() {
    // SAFETY: alarm has no preconditions.
    unsafe { libc::alarm(10) };
}

/// In the parent: the child's exit code, or a failure naming `what` if it hangs 10 s.
fn wait_child(pid: libc::pid_t, what: &str) {
    assert!(pid > 0, "{what}: fork failed");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child, without blocking.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            break;
        }
        if Instant::now() > deadline {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("{what}: the child hung");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: child status {status:#x}"
    );
}

/// Two tasks that wait for each other: they finish only if a helper runs one of them.
fn needs_two_participants(pool: &Pool) -> bool {
    let arrived = AtomicUsize::new(0);
    let timed_out = AtomicUsize::new(0);
    pool.dispatch(2, |_| {
        arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while arrived.load(Ordering::SeqCst) < 2 {
            if Instant::now() > deadline {
                timed_out.fetch_add(1, Ordering::SeqCst);
                return;
            }
            std::hint::spin_loop();
        }
    });
    timed_out.load(Ordering::SeqCst) == 0
}

fn pool() -> Pool {
    Pool::builder().workers(2).wide_workers(3).build().unwrap()
}

#[test]
fn a_child_forked_inside_a_callers_task_finishes_the_dispatch_and_starts_fresh_helpers() {
    let pool = pool();
    let caller = std::thread::current().id();
    for round in 0..FORKS {
        let child = AtomicI32::new(-1);
        let ran = AtomicUsize::new(0);
        pool.dispatch(4, |_| {
            ran.fetch_add(1, Ordering::SeqCst);
            if std::thread::current().id() != caller {
                // The helper waits until the caller forked, so the caller claims a task.
                let deadline = Instant::now() + Duration::from_secs(5);
                while child.load(Ordering::SeqCst) == -1 && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
            } else if child.load(Ordering::SeqCst) == -1 {
                // SAFETY: the child only runs this test's code, then _exits.
                let pid = unsafe { libc::fork() };
                child.store(pid, Ordering::SeqCst);
                if pid == 0 {
                    child_deadline();
                }
            }
        });
        let pid = child.load(Ordering::SeqCst);
        if pid == 0 {
            // In the child: the dispatch above returned. The pool must run in parallel
            // again, on helpers of its own, and say so.
            let ok = pool.width() == 2 && needs_two_participants(&pool);
            exit_child(ok);
        }
        assert_eq!(ran.load(Ordering::SeqCst), 4, "round {round}");
        wait_child(
            pid,
            &format!("round {round}: fork inside the caller's task"),
        );
    }
    assert!(
        needs_two_participants(&pool),
        "the parent's pool still works"
    );
}

#[test]
fn a_child_forked_inside_a_helpers_task_exits_when_the_task_returns() {
    let pool = pool();
    let caller = std::thread::current().id();
    for round in 0..FORKS / 10 {
        let child = AtomicI32::new(-1);
        let helper_forked = AtomicUsize::new(0);
        pool.dispatch(2, |_| {
            if std::thread::current().id() == caller {
                // Keep the caller busy until the helper took the other task and forked.
                let deadline = Instant::now() + Duration::from_secs(5);
                while helper_forked.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                return;
            }
            // SAFETY: in the child this thread returns from the task and the pool's helper
            // loop ends it; it is the child's only thread, so the child exits with 0.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                child_deadline();
                return;
            }
            child.store(pid, Ordering::SeqCst);
            helper_forked.store(1, Ordering::SeqCst);
        });
        let pid = child.load(Ordering::SeqCst);
        assert!(pid > 0, "round {round}: the helper did not fork");
        wait_child(pid, &format!("round {round}: fork inside a helper's task"));
    }
    assert!(
        needs_two_participants(&pool),
        "the parent's pool still works"
    );
}

#[test]
fn a_child_forked_between_dispatches_runs_them_in_parallel() {
    let pool = pool();
    pool.dispatch_wide(3, |_| ());
    for round in 0..FORKS / 10 {
        // SAFETY: the child only runs this test's code, then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            child_deadline();
            let ok = pool.width() == 2
                && pool.wide_width() == 3
                && needs_two_participants(&pool)
                && pool.stats().inline_dispatches == 0;
            exit_child(ok);
        }
        wait_child(pid, &format!("round {round}: fork between dispatches"));
    }
}
