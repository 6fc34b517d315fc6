//! `fork` from a multithreaded program, then allocate and free in the child.

use rayforce_alloc::RayAlloc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

#[test]
fn child_of_a_busy_multithreaded_parent_can_allocate() {
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..4)
        .map(|i| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let v: Vec<u64> = (0..(i + 1) * 100).collect();
                    std::hint::black_box(v);
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    for _ in 0..20 {
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
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status:#x}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    busy.into_iter().for_each(|t| t.join().unwrap());
}
