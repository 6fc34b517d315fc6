//! An instance that is not the global allocator, dropped as soon as `std::thread::scope`
//! returned: the scoped threads that allocated through it are still exiting (their exit
//! hooks run after the scope saw them finish), and the drop waits for them to detach.

use core::alloc::{GlobalAlloc, Layout};
use rayforce_alloc::RayAlloc;
use std::time::Duration;

/// Dropped at thread exit, after the allocator's exit hook was registered (so before it
/// runs: a thread's destructors run last registered first), holding the detach back.
struct SlowExit;

impl Drop for SlowExit {
    fn drop(&mut self) {
        std::thread::sleep(Duration::from_millis(200));
    }
}

thread_local! {
    static SLOW_EXIT: SlowExit = const { SlowExit };
}

#[test]
fn dropping_an_instance_right_after_a_scope_waits_for_its_threads_to_exit() {
    for _ in 0..5 {
        let alloc = RayAlloc::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let layout = Layout::from_size_align(64, 8).unwrap();
                    // SAFETY: a non-zero layout; the block is freed by the instance that
                    // made it, which outlives this thread's use of it.
                    unsafe {
                        let block = alloc.alloc(layout);
                        assert!(!block.is_null());
                        block.write_bytes(7, 64);
                        alloc.dealloc(block, layout);
                    }
                    SLOW_EXIT.with(|_| {});
                });
            }
        });
        assert!(
            alloc.stats().threads_per_arena.iter().sum::<usize>() > 0,
            "the scope returned before its threads' exit hooks ran"
        );
        // Dropped here, where it lives: `drop(alloc)` would move it away from the address
        // its threads detach through. It aborted the process before it waited.
    }
}
