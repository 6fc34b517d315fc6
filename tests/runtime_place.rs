//! With `Runtime` as the allocator and `rayforce.pool.place=spread`, the pool's helpers are
//! pinned and an allocation a placed helper makes lands on its CPU's NUMA node
//! (`get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`: node 0 on a one-node machine), from the
//! arena of its own that the helper binds. Needs two CPUs, and says so where it lacks them.
#![cfg(target_os = "linux")]

use rayforce_rt::cpu::Place;
use rayforce_rt::{Choices, Environment, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[global_allocator]
static RT: Runtime = Runtime::with_choices(
    Choices::new()
        .place(Place::Spread)
        .environment(Environment::Ignore),
);

/// The node of the page at `addr` (touched already), as the kernel reports it.
fn node_of_page(addr: *const u8) -> i64 {
    const MPOL_F_NODE: libc::c_ulong = 1;
    const MPOL_F_ADDR: libc::c_ulong = 2;
    let mut node: libc::c_int = -1;
    // SAFETY: get_mempolicy writes one int to `node`; with no node mask (null, 0) it reads
    // nothing else, and `addr` is a mapped page of this process.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            addr,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    assert_eq!(rc, 0, "get_mempolicy: {}", std::io::Error::last_os_error());
    i64::from(node)
}

#[test]
fn a_placed_helpers_allocation_lands_on_its_node() {
    let pool = RT.pool();
    if pool.width() < 2 {
        eprintln!("skipped: one CPU, no helper to place");
        return;
    }
    let placed = pool.placement()[0];
    assert_eq!(placed.failure, None, "{placed:?}");
    let node = placed.node.expect("this machine's CPUs are in node 0") as i64;
    let on_helper = Mutex::new(None);
    let arrived = AtomicUsize::new(0);
    pool.dispatch_with_worker(2, 2, |worker, _| {
        arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while arrived.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        if worker == 1 {
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = unsafe { libc::sched_getcpu() } as usize;
            let block = vec![1u8; 4 << 20]; // written, so every page is touched here
            let nodes: Vec<i64> = (0..block.len())
                .step_by(1 << 20)
                .map(|at| node_of_page(block[at..].as_ptr()))
                .collect();
            *on_helper.lock().unwrap() = Some((cpu, nodes));
        }
    });
    let (cpu, nodes) = on_helper.into_inner().unwrap().expect("helper 1 took part");
    assert_eq!(Some(cpu), placed.cpu, "the task ran on the helper's CPU");
    assert!(
        nodes.iter().all(|&n| n == node),
        "pages on nodes {nodes:?}, not {node}"
    );
    let threads = RT.alloc_stats().threads_per_arena;
    assert!(
        threads.get(1).is_some_and(|&n| n >= 1),
        "helper 1 has an arena: {threads:?}"
    );
}
