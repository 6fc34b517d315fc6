//! A `thread_local!` whose `Drop` allocates and frees during thread exit: after the
//! allocator's own exit hook ran, the thread falls back to mimalloc's main heap.

use rayforce_alloc::RayAlloc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

static DROPPED_OK: AtomicUsize = AtomicUsize::new(0);

struct AllocatesOnDrop(Vec<u8>);

impl Drop for AllocatesOnDrop {
    fn drop(&mut self) {
        let copy: Vec<u8> = self.0.iter().map(|b| b.wrapping_add(1)).collect();
        let text = format!("{}", copy.len());
        if copy.iter().all(|&b| b == 2) && text == "4096" {
            DROPPED_OK.fetch_add(1, Ordering::SeqCst);
        }
    }
}

thread_local! {
    static LATE: AllocatesOnDrop = AllocatesOnDrop(vec![1; 4096]);
}

#[test]
fn drops_that_allocate_during_exit_work() {
    const THREADS: usize = 200;
    for _ in 0..THREADS / 10 {
        let handles: Vec<_> = (0..10)
            .map(|_| std::thread::spawn(|| LATE.with(|l| assert_eq!(l.0.len(), 4096))))
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
    }
    assert_eq!(DROPPED_OK.load(Ordering::SeqCst), THREADS);
    let stats = ALLOC.stats();
    // Still bound: the main thread and libtest's thread for this test; the 200 exited.
    let bound: usize = stats.threads_per_arena.iter().sum();
    assert!(bound <= 2, "exited threads must detach: {stats:?}");
}
