//! Placement on this machine, live: with `place=off` helpers keep the process mask; with
//! `place=spread` each helper runs on one CPU of its own, inside the mask, and a task on it
//! runs there; under a narrowed mask (`taskset -a -p`, as an operator narrows a running
//! process) a new pool plans inside it without error, and a running pool's helpers move
//! at its next re-check. One test, since `taskset -a -p` moves every thread of this
//! process; it needs two CPUs and `taskset`, and says so where the machine lacks them.
#![cfg(target_os = "linux")]

use rayforce_pool::Pool;
use rayforce_tunables::cpu::{self, CpuSet, Place};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The calling thread's mask.
fn own_mask() -> CpuSet {
    cpu::thread_affinity(0).expect("this thread's mask")
}

/// For each worker of a dispatch in which all `width` participants run at once: (its
/// mask, the CPU it ran on).
fn where_workers_run(pool: &Pool, width: usize) -> Vec<(CpuSet, usize)> {
    let seen: Vec<Mutex<Option<(CpuSet, usize)>>> = (0..width).map(|_| Mutex::new(None)).collect();
    let arrived = std::sync::atomic::AtomicUsize::new(0);
    pool.dispatch_with_worker(width, width, |worker, _| {
        arrived.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while arrived.load(std::sync::atomic::Ordering::SeqCst) < width && Instant::now() < deadline
        {
            std::thread::yield_now(); // participants may share a CPU
        }
        // SAFETY: sched_getcpu has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        *seen[worker].lock().unwrap() = Some((own_mask(), cpu as usize));
    });
    assert_eq!(arrived.into_inner(), width, "all {width} ran at once");
    seen.into_iter()
        .map(|s| s.into_inner().unwrap().unwrap())
        .collect()
}

fn only(cpu: usize) -> CpuSet {
    let mut set = CpuSet::new();
    set.insert(cpu);
    set
}

/// Moves every thread of this process onto `cpus`, as an operator would.
fn taskset_all(cpus: &str) {
    let pid = std::process::id().to_string();
    let status = Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &pid])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("taskset ran");
    assert!(status.success(), "taskset -a -p -c {cpus} {pid}");
}

fn pool(width: usize, place: Place) -> Pool {
    Pool::builder()
        .workers(width)
        .place(place)
        .spin_us(0)
        .recheck_ms(1)
        .build()
        .unwrap()
}

/// Dispatches until the pool's re-check has moved helper 1 to `cpu` (or 5 s passed).
fn wait_for_helper_on(pool: &Pool, cpu: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
        pool.dispatch(2, |_| ());
        if pool.placement().first().and_then(|p| p.cpu) == Some(cpu) {
            return true;
        }
    }
    false
}

#[test]
fn helpers_are_pinned_inside_the_mask_and_follow_it() {
    let mask = cpu::process_affinity().expect("the process mask");
    let cpus: Vec<usize> = mask.iter().collect();
    if cpus.len() < 2 {
        eprintln!(
            "skipped: placement needs two CPUs, this process has {}",
            cpus.len()
        );
        return;
    }
    if Command::new("taskset").arg("--version").output().is_err() {
        eprintln!("skipped: no taskset on this machine");
        return;
    }
    let width = cpus.len().min(8);

    // Off: helpers keep exactly the mask they inherit, and nothing is reported.
    let off = pool(width, Place::Off);
    for (worker, (helper_mask, _)) in where_workers_run(&off, width).into_iter().enumerate() {
        if worker > 0 {
            assert_eq!(helper_mask, mask, "place=off: helper {worker}'s mask");
        }
    }
    assert!(off.placement().is_empty());
    drop(off);

    // Spread: one CPU each, all distinct, inside the mask, and tasks run there.
    let spread = pool(width, Place::Spread);
    let mut used = CpuSet::new();
    let placement = spread.placement();
    assert_eq!(placement.len(), width - 1, "{placement:?}");
    for (worker, (helper_mask, ran_on)) in where_workers_run(&spread, width).into_iter().enumerate()
    {
        if worker == 0 {
            assert_eq!(helper_mask, mask, "the caller is not pinned");
            continue;
        }
        let placed = placement[worker - 1];
        assert_eq!(placed.failure, None, "{placed:?}");
        let cpu = placed.cpu.expect("placed");
        assert_eq!(
            helper_mask,
            only(cpu),
            "helper {worker} runs on CPU {cpu} alone"
        );
        assert_eq!(ran_on, cpu, "sched_getcpu() on helper {worker}");
        assert!(
            mask.contains(cpu) && !used.contains(cpu),
            "CPU {cpu}: inside, distinct"
        );
        used.insert(cpu);
    }
    assert_eq!(spread.stats().unplaced_helpers, 0);
    let (first, last) = (cpus[0], cpus[cpus.len() - 1]);

    drop(spread);

    // Narrowed to the last CPU before the pool starts: the plan uses it, without error.
    let all = cpus
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    taskset_all(&last.to_string());
    let narrowed = pool(2, Place::Spread);
    let placed = narrowed.placement()[0];
    assert_eq!(
        (placed.cpu, placed.failure),
        (Some(last), None),
        "{placed:?}"
    );
    assert_eq!(where_workers_run(&narrowed, 2)[1], (only(last), last));

    // Widened while it runs: at the next re-check helper 1 moves to the first core.
    taskset_all(&all);
    assert!(
        wait_for_helper_on(&narrowed, first),
        "{:?}",
        narrowed.placement()
    );
    assert_eq!(where_workers_run(&narrowed, 2)[1], (only(first), first));
    // Narrowed again: it moves back.
    taskset_all(&last.to_string());
    assert!(
        wait_for_helper_on(&narrowed, last),
        "{:?}",
        narrowed.placement()
    );
    assert_eq!(where_workers_run(&narrowed, 2)[1].0, only(last));
    assert_eq!(narrowed.stats().unplaced_helpers, 0);
    taskset_all(&all);
}
