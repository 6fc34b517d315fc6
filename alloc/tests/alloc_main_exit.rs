//! The main thread allocates after its exit hook ran: `exit` runs the thread-local
//! destructors (the allocator's exit hook among them) before the `atexit` handlers, and a
//! handler that allocates must still get memory. The main thread's mimalloc state is
//! mimalloc's own, which nothing may end (it cannot be made again). No test harness: the
//! body runs on the process's main thread, and the run fails if the handler does.

use rayforce_alloc::RayAlloc;

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

/// Allocates, writes and reads back blocks of a few sizes; ends the process with 1 if they
/// are wrong (an allocation that fails aborts it).
extern "C" fn allocate_at_exit() {
    let ok = [24usize, 3000, 200_000].iter().all(|&size| {
        let block = vec![7u8; size];
        block.iter().all(|&b| b == 7)
    });
    if !ok {
        // SAFETY: ends the process at once, as a failing check must.
        unsafe { libc::_exit(1) };
    }
}

fn main() {
    let bound: Vec<u64> = (0..1000).collect(); // the main thread binds
    assert_eq!(bound.len(), 1000);
    // SAFETY: registering a handler that lives as long as the process.
    assert_eq!(unsafe { libc::atexit(allocate_at_exit) }, 0);
    println!("alloc_main_exit: the handler allocates at exit");
}
