//! What the fork tests share: threads kept busy while the test forks, and children that
//! must exit 0 within a deadline (a hang is a failure, not a stuck test).
#![allow(dead_code)] // each test binary uses a different subset

use rayforce_alloc::RayAlloc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

/// Threads running `body(i)` until the returned flag is set; join them with [`stop`].
/// Returns once each has run `body` once, so no thread is still starting when the caller
/// forks (std's start takes a lock a child must not inherit: `alloc_fork.rs`'s note).
pub fn busy_threads(
    n: usize,
    body: fn(usize),
) -> (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>) {
    let flag = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Barrier::new(n + 1));
    let threads = (0..n)
        .map(|i| {
            let (flag, started) = (Arc::clone(&flag), Arc::clone(&started));
            std::thread::spawn(move || {
                body(i);
                started.wait();
                while !flag.load(Ordering::Relaxed) {
                    body(i);
                }
            })
        })
        .collect();
    started.wait();
    (flag, threads)
}

pub fn stop((flag, threads): (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>)) {
    flag.store(true, Ordering::Relaxed);
    threads.into_iter().for_each(|t| t.join().unwrap());
}

/// Waits for child `pid` to exit with 0; fails naming `what` if it takes over 5 s (the
/// child's own alarm, 10 s, only ends it after that, so a hang is seen as one).
pub fn wait_child(pid: libc::pid_t, what: &str) {
    assert!(pid > 0, "{what}: fork failed");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut status = 0;
    // SAFETY: waiting for our own child, without blocking.
    while unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } != pid {
        if std::time::Instant::now() > deadline {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("{what}: the child hung");
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: child status {status:#x}"
    );
}

/// What a child does after `fork`: bind a new thread to `alloc` (it takes the bind lock)
/// and allocate on it; exits 0 when that worked. SIGALRM ends a child that hangs.
pub fn child_binds_a_new_thread(alloc: &'static RayAlloc) -> ! {
    // SAFETY: alarm has no preconditions.
    unsafe { libc::alarm(10) };
    let ok = std::thread::spawn(|| {
        alloc.bind_current_thread(1);
        vec![3u8; 4096]
            .iter()
            .map(|&b| usize::from(b))
            .sum::<usize>()
    })
    .join()
    .is_ok_and(|n| n == 3 * 4096);
    // SAFETY: leave the child without running the parent's atexit handlers.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}
