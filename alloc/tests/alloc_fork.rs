//! `fork` from a multithreaded program, then allocate and free in the child; and `fork`
//! while other threads bind, then bind a new thread in the child (the bind lock is held
//! across `fork`, so no child inherits it locked).
//!
//! Both run in one test, one after the other: a thread std spawned that starts or exits
//! while another forks can leave std's own lock (its stack-overflow handler's map) held in
//! the child, whose next `std::thread::spawn` then hangs, a hazard of std's that these
//! tests are not about (threads that start and exit beside a fork are
//! `alloc_fork_thread_exit.rs`'s). So the forks wait until the busy threads have started,
//! and the two scenarios share one test, so that no test thread of this binary exits while
//! one forks.

use rayforce_alloc::RayAlloc;

mod forking;

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

#[test]
fn children_forked_from_a_busy_parent_can_allocate_and_bind() {
    child_of_a_busy_multithreaded_parent_can_allocate();
    a_child_forked_while_other_threads_bind_can_bind();
}

fn child_of_a_busy_multithreaded_parent_can_allocate() {
    let busy = forking::busy_threads(4, |i| {
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
        forking::wait_child(pid, &format!("fork {round}: allocating in the child"));
    }
    forking::stop(busy);
}

fn a_child_forked_while_other_threads_bind_can_bind() {
    const FORKS: usize = 1000;
    // Two threads rebinding as fast as they can: the bind lock is held most of the time.
    let binders = forking::busy_threads(2, |i| {
        for arena in i..i + 64 {
            ALLOC.bind_current_thread(arena);
        }
    });
    for round in 0..FORKS {
        // SAFETY: the child runs `child_binds_a_new_thread` only, which ends in _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            forking::child_binds_a_new_thread(&ALLOC);
        }
        forking::wait_child(pid, &format!("fork {round}: binding a thread in the child"));
    }
    forking::stop(binders);
}
