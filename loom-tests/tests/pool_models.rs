//! Loom models of `Pool` through its public API, three threads each (two helpers, or one
//! helper and two callers).
//! Invariants (pool/src/README.md "Invariants"): every task runs exactly once; no helper
//! touches a dispatch after it returned; between dispatches no permit is left and no helper
//! attached (no drift); a dispatch wakes at most `min(n_tasks - 1, helpers)` helpers; a
//! wide dispatch after narrow ones gets all its helpers; a panic reaches the caller; and the
//! same with a helper that spins between dispatches (the adaptive path, window non-zero);
//! and all of it across a resize during and between dispatches.
#![cfg(rayforce_loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Condvar, Mutex};
use rayforce_pool::{Pool, SignalState};
use rayforce_tunables::cpu::{Count, CpuCounts, Source};

/// A cell the tasks read and the caller writes after the dispatch: loom reports a data race
/// if any read is not ordered before the write.
struct Tracked(UnsafeCell<usize>);

// SAFETY: every access goes through loom's `UnsafeCell`, which checks for data races;
// sharing it is the point of the model.
unsafe impl Sync for Tracked {}

impl Tracked {
    fn read(&self) -> usize {
        // SAFETY: loom checks this access against `write` for races; that is the test.
        self.0.with(|v| unsafe { *v })
    }

    fn write(&self, value: usize) {
        // SAFETY: as in `read`.
        self.0.with_mut(|v| unsafe { *v = value });
    }
}

/// A pool of one caller's slot: every slot is one more atomic for each helper's poll, and
/// these models have one caller (`two_callers_share_one_helper` has two slots).
fn pool(workers: usize, wide: usize) -> Pool {
    Pool::builder()
        .workers(workers)
        .wide_workers(wide)
        .spin_us(0)
        .max_in_flight(1)
        .recheck_ms(0)
        .build()
        .unwrap()
}

/// Runs `n` tasks (wide or not) and checks exactly-once, no drift, and the wake-up bound.
fn dispatch_checked(pool: &Pool, n: usize, wide: bool) {
    let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let before = pool.stats().wakeups;
    let task = |i: usize| {
        runs[i].fetch_add(1, Ordering::Relaxed);
    };
    if wide {
        pool.dispatch_wide(n, task);
    } else {
        pool.dispatch(n, task);
    }
    for (i, count) in runs.iter().enumerate() {
        assert_eq!(count.load(Ordering::Relaxed), 1, "task {i} of {n}");
    }
    assert_eq!(
        pool.signal_state(),
        SignalState::IDLE,
        "drift after {n} tasks"
    );
    let helpers = if wide {
        pool.wide_width()
    } else {
        pool.width()
    } - 1;
    let woken = pool.stats().wakeups - before;
    assert!(
        woken as usize <= (n.saturating_sub(1)).min(helpers),
        "{woken} wake-ups for {n} tasks"
    );
}

#[test]
fn narrow_then_wide_then_narrow_runs_every_task_once() {
    rayforce_pool::loom_model(|| {
        let pool = pool(3, 3);
        dispatch_checked(&pool, 1, false);
        dispatch_checked(&pool, 3, false);
        dispatch_checked(&pool, 2, false);
    });
}

/// Two CPUs for the policy: one helper may spin.
fn two_cpus() -> CpuCounts {
    let count = |value| Count {
        value,
        source: Source::OnlineList,
        fallback: false,
    };
    CpuCounts {
        online: count(2),
        schedulable: count(2),
        physical: count(2),
        quota: None,
    }
}

#[test]
fn a_spinning_helper_runs_back_to_back_dispatches_once_without_drift() {
    rayforce_pool::loom_model(|| {
        // A spin window of two clock readings: the helper spins between the dispatches,
        // and the second is posted to it while it spins or after it gave up.
        let pool = Pool::builder()
            .workers(2)
            .spin_us(2)
            .cpu_counts(two_cpus())
            .max_in_flight(1)
            .build()
            .unwrap();
        dispatch_checked(&pool, 2, false);
        dispatch_checked(&pool, 2, false);
    });
}

#[test]
fn chunked_claims_run_every_task_once() {
    rayforce_pool::loom_model(|| {
        // Six tasks, two participants: claims of 1 and then 2 tasks (chunks double under
        // loom's clock), capped by a quarter of what is left, so the chunk shrinks again.
        let pool = pool(2, 2);
        dispatch_checked(&pool, 6, false);
    });
}

#[test]
fn no_helper_touches_a_dispatch_after_it_returned() {
    rayforce_pool::loom_model(|| {
        let pool = pool(3, 3);
        let cell = Tracked(UnsafeCell::new(0));
        pool.dispatch(2, |_| assert_eq!(cell.read(), 0));
        // A helper still inside the closure would race with this write.
        cell.write(1);
        pool.dispatch(1, |_| ());
    });
}

/// `n` tasks that wait for each other: they finish only if `n` participants run at once,
/// so a lost wake-up (or a lost permit) is a deadlock loom reports.
fn all_at_once(pool: &Pool, n: usize, wide: bool) {
    let arrived = (Mutex::new(0usize), Condvar::new());
    let task = |_| {
        let (count, all_here) = &arrived;
        let mut count = count.lock().unwrap();
        *count += 1;
        all_here.notify_all();
        while *count < n {
            count = all_here.wait(count).unwrap();
        }
    };
    if wide {
        pool.dispatch_wide(n, task);
    } else {
        pool.dispatch(n, task);
    }
}

#[test]
fn a_wide_dispatch_after_narrow_ones_gets_every_helper() {
    rayforce_pool::loom_model(|| {
        let pool = pool(2, 3);
        dispatch_checked(&pool, 2, false);
        all_at_once(&pool, 3, true);
        assert_eq!(pool.signal_state(), SignalState::IDLE);
    });
}

#[test]
fn two_callers_share_one_helper() {
    // Three threads with two callers' worth of steps: three preemptions take many minutes
    // here, two about one, and already reach the races this model is for.
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| {
        let pool = Pool::builder()
            .workers(2)
            .spin_us(0)
            .max_in_flight(2)
            .build()
            .unwrap();
        let pool = std::sync::Arc::new(pool);
        // Caller B: two tasks that need the helper, while caller A dispatches twice in
        // its own slot (the second time a task panics): B's permit must survive A's
        // withdraw, the helper must not carry A's first job into A's second dispatch,
        // and A's panic must not touch B's dispatch.
        let b = {
            let pool = std::sync::Arc::clone(&pool);
            loom::thread::spawn(move || all_at_once(&pool, 2, true))
        };
        let runs = [AtomicUsize::new(0), AtomicUsize::new(0)];
        pool.dispatch(2, |i| {
            runs[i].fetch_add(1, Ordering::Relaxed);
        });
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.dispatch(2, |i| {
                runs[i].fetch_add(1, Ordering::Relaxed);
                assert!(i != 1, "caller A's task fails");
            })
        }));
        assert!(outcome.is_err(), "A's panic reaches A");
        for (i, count) in runs.iter().enumerate() {
            assert_eq!(count.load(Ordering::Relaxed), 2, "A's task {i}");
        }
        b.join().unwrap();
        assert_eq!(pool.signal_state(), SignalState::IDLE);
    });
}

#[test]
fn a_resize_during_and_between_dispatches_keeps_every_task_once() {
    rayforce_pool::loom_model(|| {
        let pool = pool(2, 2);
        let cell = Tracked(UnsafeCell::new(0));
        // Narrowed from inside a task, on the caller or on the helper: the helper parks
        // once it leaves (or never joins), and the dispatch still runs every task once.
        let runs = [AtomicUsize::new(0), AtomicUsize::new(0)];
        pool.dispatch(2, |i| {
            assert_eq!(cell.read(), 0);
            if i == 0 {
                pool.resize(1, 1);
            }
            runs[i].fetch_add(1, Ordering::Relaxed);
        });
        // A helper still inside the closure would race with this write.
        cell.write(1);
        for (i, count) in runs.iter().enumerate() {
            assert_eq!(count.load(Ordering::Relaxed), 1, "task {i}");
        }
        assert_eq!(pool.signal_state(), SignalState::IDLE);
        assert_eq!(pool.width(), 1);
        // Widened between dispatches: the parked helper must come back, or the two tasks
        // that wait for each other never finish (a lost wake-up is a deadlock here).
        pool.resize(2, 2);
        all_at_once(&pool, 2, false);
        assert_eq!(pool.signal_state(), SignalState::IDLE);
    });
}

#[test]
fn a_caller_that_finds_every_slot_taken_waits_for_one() {
    // One slot, two callers, each with two tasks that wait for each other: the caller that
    // finds the slot taken must wait for it (README "Dispatch", step 1), not run both its
    // tasks on one thread, where the first waits forever for the second. Bounded as
    // `two_callers_share_one_helper`, for the same reason.
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| {
        let pool = std::sync::Arc::new(pool(2, 2));
        let b = {
            let pool = std::sync::Arc::clone(&pool);
            loom::thread::spawn(move || all_at_once(&pool, 2, false))
        };
        all_at_once(&pool, 2, false);
        b.join().unwrap();
        assert_eq!(pool.stats().inline_dispatches, 0, "a caller ran inline");
        assert_eq!(pool.signal_state(), SignalState::IDLE);
    });
}
