//! Spinning, on real threads: back-to-back dispatches are caught by a spinning helper, not
//! through the kernel; a caller spinning on the CPU of the helper it waits for lets it run;
//! a stream of operation regions, each too short to wake a helper for, wakes it once;
//! a large `spin_us` does not keep a core busy between dispatches a
//! millisecond apart (no window outlasts what blocking costs, measured or, until measured,
//! bounded); and an idle pool burns nothing: after a dispatch and 50 ms of quiet, every
//! helper and the caller have blocked, and the process uses under 1 ms of CPU over the
//! next second. Its own test binary, one test at a time: CPU time is the whole
//! process's, so nothing else may run beside them.
#![cfg(not(rayforce_loom))] // real threads

use rayforce_pool::prelude::*;
use rayforce_pool::{Pool, Stats};
use rayforce_tunables::cpu::{Count, CpuCounts, Source};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// CPU time of the whole process (every thread).
fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is valid for writes; the clock id is a constant the kernel knows.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0;
    assert!(ok, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A two-wide pool spinning up to `spin_us`, on a policy count of 4 CPUs: the budget lets
/// the helper spin, whatever this machine has.
fn spinning_pool(spin_us: u32) -> Pool {
    let count = |value| Count {
        value,
        source: Source::OnlineList,
        fallback: false,
    };
    let counts = CpuCounts {
        online: count(4),
        schedulable: count(4),
        physical: count(4),
        quota: None,
    };
    Pool::builder()
        .workers(2)
        .cpu_counts(counts)
        .spin_us(spin_us)
        .build()
        .unwrap()
}

#[test]
fn back_to_back_dispatches_are_caught_while_spinning() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let pool = spinning_pool(5_000);
    for _ in 0..2_000 {
        // Two tasks that wait for each other: every dispatch needs the helper.
        let arrived = AtomicUsize::new(0);
        pool.dispatch(2, |_| {
            arrived.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            while arrived.load(Ordering::SeqCst) < 2 {
                assert!(Instant::now() < deadline, "no helper came");
                std::hint::spin_loop();
            }
        });
    }
    let stats = pool.stats();
    assert_eq!(stats.wakeups, 2_000, "{stats:?}");
    assert!(
        stats.caught_spinning > 10 * stats.kernel_wakeups,
        "back to back, waits end while spinning, not in the kernel: {stats:?}"
    );
}

/// Pins the calling thread to `cpu`; false where the system refuses.
fn pin_to(cpu: usize) -> bool {
    // SAFETY: a zeroed `cpu_set_t` is a valid empty set; the call reads the set passed by
    // pointer with its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// A two-wide pool spinning up to `spin_us` with its helper pinned to `helper_cpu`, and
/// `run(pool)` on a thread pinned to `caller_cpu`; the pool's statistics after. `None`, once
/// said, where the system refuses to pin.
fn on_pinned_pool(
    helper_cpu: usize,
    caller_cpu: usize,
    spin_us: u32,
    run: impl FnOnce(&Pool) + Send,
) -> Option<Stats> {
    let pool = Pool::builder()
        .workers(2)
        .spin_us(spin_us)
        .on_thread_start(move |_| assert!(pin_to(helper_cpu), "pinning the helper"))
        .build();
    let Ok(pool) = pool else {
        eprintln!("skipped: the system refuses to pin threads");
        return None;
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            assert!(pin_to(caller_cpu), "pinning the caller");
            run(&pool);
        });
    });
    Some(pool.stats())
}

#[test]
fn a_caller_spinning_on_its_helpers_cpu_lets_it_run() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: `sched_getcpu` has no preconditions.
    let Ok(cpu) = usize::try_from(unsafe { libc::sched_getcpu() }) else {
        eprintln!("skipped: sched_getcpu failed");
        return;
    };
    // The caller and the helper on one CPU, as the kernel often leaves a woken helper. Each
    // helper task hands the CPU back halfway, so the caller finishes first and waits for
    // quiet while the helper, runnable on the same CPU, still has its task's end to run. A
    // wait that spun its window out there would block, and the helper's detach would wake
    // it through the kernel: without the yield, 130 of 200 spins ended so here; with it
    // 1 to 3, and 24 under the sanitizer.
    let stats = on_pinned_pool(cpu, cpu, 5_000, |pool| {
        for _ in 0..200 {
            let helper_began = AtomicUsize::new(0);
            pool.dispatch_with_worker(2, 2, |worker, _| {
                if worker == 0 {
                    while helper_began.load(Ordering::SeqCst) == 0 {
                        std::thread::yield_now();
                    }
                } else {
                    helper_began.store(1, Ordering::SeqCst);
                    std::thread::yield_now();
                }
            });
        }
    });
    let Some(stats) = stats else { return };
    assert!(
        stats.spins_then_blocked * 4 < stats.dispatches,
        "spins on a shared CPU end in the wait they are for, not in blocking: {stats:?}"
    );
}

/// Busy for `nanos` of wall time (in any build), then returns `seed`.
fn busy(seed: usize, nanos: u64) -> usize {
    let until = Instant::now() + Duration::from_nanos(nanos);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
    seed
}

#[test]
fn a_stream_of_short_operation_regions_wakes_its_sleeping_helper() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The caller and the helper pinned to two CPUs, so that the kernel cannot wake the
    // helper onto the caller's CPU (where it would wait for its turn, README "Spinning").
    let allowed = rayforce_tunables::cpu::process_affinity();
    let Some(mut cpus) = allowed.map(|set| set.iter().take(2).collect::<Vec<usize>>()) else {
        eprintln!("skipped: the process mask could not be read");
        return;
    };
    let (Some(helper_cpu), Some(caller_cpu)) = (cpus.pop(), cpus.pop()) else {
        eprintln!("skipped: fewer than two CPUs allowed");
        return;
    };
    on_pinned_pool(helper_cpu, caller_cpu, 50, |pool| {
        std::thread::sleep(Duration::from_millis(50)); // the helper falls asleep
        let before = pool.stats();
        // Regions of 8 items of 0.5 us: none alone is worth a wake-up (50 us until one
        // is measured), so each leaves the helper asleep; back to back, once they have
        // kept the caller working alone for that long, they wake it (a stream wake-up
        // by region 7 to 9 in nine runs, three beside a busy loop), and it stays (it
        // joined 1,525 to 3,940 regions). Without the stream rule no region posts one,
        // and only a region that happens to run 50 us woke the helper: its first joins
        // came at regions 51, 57, 73, 256, 268 and never in six runs. (Under the
        // sanitizer such a late wake-up may come first; either counts.)
        let regions = 4_000;
        let mut helped_by = None;
        for region in 0..regions {
            let items = pool.map(8, |i| busy(i, 500));
            assert_eq!(items, (0..8).collect::<Vec<_>>());
            let now = pool.stats();
            let helped = now.stream_wakeups > before.stream_wakeups || now.wakeups > before.wakeups;
            if helped_by.is_none() && helped {
                helped_by = Some(region);
            }
        }
        let stats = pool.stats();
        assert!(
            helped_by.is_some_and(|region| region < 40),
            "no wake-up for the helper, nor its joining, before region {helped_by:?}: \
             {stats:?}"
        );
        let joined = stats.wakeups - before.wakeups;
        assert!(
            joined * 4 > regions,
            "the helper took part in {joined} of {regions} regions: {stats:?}"
        );
    });
}

#[test]
fn a_long_spin_ceiling_does_not_spin_through_millisecond_gaps() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // 20 ms of ceiling, and a two-task dispatch every millisecond: spinning through each gap
    // would cost a core; blocking costs one kernel wake-up (tens of microseconds).
    let pool = spinning_pool(20_000);
    let started = Instant::now();
    for _ in 0..400 {
        pool.dispatch(2, |i| {
            std::hint::black_box(i);
        });
        std::thread::sleep(Duration::from_millis(1));
    }
    let wall = started.elapsed();
    let stats = pool.stats();
    assert!(
        stats.spin_time < wall / 4,
        "spun {:?} in {wall:?} of wall time: {stats:?}",
        stats.spin_time
    );
}

#[test]
fn an_idle_pool_burns_no_cpu() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The default spin ceiling, and the most helpers this machine would let spin.
    let pool = Pool::builder().workers(4).build().unwrap();
    for _ in 0..1000 {
        pool.dispatch(4, |i| {
            std::hint::black_box(i);
        });
    }
    std::thread::sleep(Duration::from_millis(50));
    let before = process_cpu_time();
    std::thread::sleep(Duration::from_secs(1));
    let burnt = process_cpu_time() - before;
    assert!(
        burnt < Duration::from_millis(1),
        "an idle pool burnt {burnt:?} of CPU in one second ({:?})",
        pool.stats()
    );
}
