//! `fork` from a multithreaded program, then allocate and free in the child; and `fork`
//! while other threads bind, then bind a new thread in the child (the bind lock is held
//! across `fork`, so no child inherits it locked).
//!
//! Both run in one test, one after the other: a thread that starts or exits while another
//! forks can leave one of mimalloc's own locks (a heap's list of thread heaps) held in the
//! child, a hazard of mimalloc's that these tests are not about (seen here with gdb, in
//! `_mi_theap_init`). So the forks wait until the busy threads have started, and the two
//! scenarios share one test, so that no test thread of this binary exits while one forks
//! (a child once hung at the second fork of a run, before both were in place).

use rayforce_alloc::RayAlloc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

/// Threads running `body(i)` until the returned flag is set; join them with [`stop`].
/// Returns once each has run `body` once, so no thread is still starting (and initialising
/// mimalloc's state for itself) when the caller forks.
fn busy_threads(n: usize, body: fn(usize)) -> (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>) {
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

fn stop((flag, threads): (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>)) {
    flag.store(true, Ordering::Relaxed);
    threads.into_iter().for_each(|t| t.join().unwrap());
}

/// Waits for child `pid` to exit with 0; fails naming `what` if it takes over 5 s (the
/// child's own alarm, 10 s, only ends it after that, so a hang is seen as one).
fn wait_child(pid: libc::pid_t, what: &str) {
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

#[test]
fn children_forked_from_a_busy_parent_can_allocate_and_bind() {
    child_of_a_busy_multithreaded_parent_can_allocate();
    a_child_forked_while_other_threads_bind_can_bind();
}

fn child_of_a_busy_multithreaded_parent_can_allocate() {
    let busy = busy_threads(4, |i| {
        let v: Vec<u64> = (0..(i as u64 + 1) * 100).collect();
        std::hint::black_box(v);
    });
    for round in 0..20 {
        // SAFETY: the child only allocates, frees and calls _exit; alarm bounds a hang.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: alarm and _exit are async-signal-safe; allocation is what is tested.
            unsafe { libc::alarm(10) };
            let ok = std::thread::spawn(|| {
                (0..1000)
                    .map(|i| vec![i as u8; 64 + i])
                    .map(|v| v.len())
                    .sum::<usize>()
            })
            .join()
            .is_ok_and(|n| n == (0..1000).map(|i| 64 + i).sum::<usize>());
            let boxed: Vec<Box<[u8]>> = (0..10_000)
                .map(|i| vec![1u8; i % 512 + 1].into_boxed_slice())
                .collect();
            let code = if ok && boxed.len() == 10_000 { 0 } else { 1 };
            drop(boxed);
            // SAFETY: leave the child without running the parent's atexit handlers.
            unsafe { libc::_exit(code) };
        }
        wait_child(pid, &format!("fork {round}: allocating in the child"));
    }
    stop(busy);
}

/// What a child does after `fork`: bind a new thread (it takes the bind lock) and allocate
/// on it; 0 when that worked. SIGALRM ends a child that hangs.
fn child_binds_a_new_thread() -> ! {
    // SAFETY: alarm has no preconditions.
    unsafe { libc::alarm(10) };
    let ok = std::thread::spawn(|| {
        ALLOC.bind_current_thread(1);
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

fn a_child_forked_while_other_threads_bind_can_bind() {
    const FORKS: usize = 1000;
    // Two threads rebinding as fast as they can: the bind lock is held most of the time.
    let binders = busy_threads(2, |i| {
        for arena in i..i + 64 {
            ALLOC.bind_current_thread(arena);
        }
    });
    for round in 0..FORKS {
        // SAFETY: the child runs `child_binds_a_new_thread` only, which ends in _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            child_binds_a_new_thread();
        }
        wait_child(pid, &format!("fork {round}: binding a thread in the child"));
    }
    stop(binders);
}
