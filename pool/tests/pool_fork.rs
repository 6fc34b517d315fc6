//! `fork()` and the pool: a child forked from inside a task finishes the dispatch it was in
//! and gets fresh helpers for the next one; a child forked from a helper's task exits when
//! that task returns; a child forked between dispatches runs in parallel again; a child
//! forked while helpers start and exit starts threads; a child forked inside `install`
//! broadcasts on itself alone (the parent's helpers are not there), and on its fresh
//! helpers through the pool; a child asking `yield_now` starts no helper; a child forked inside an operation
//! drops nothing a helper of the parent was writing, and neither pulls from nor drops a
//! `par_bridge` iterator a helper was inside. Children run with a deadline: a hang
//! is a failure, not a stuck test.
#![cfg(not(rayforce_loom))] // real threads and processes

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod child_ends;
use child_ends::ChildEnds;

/// How many forks each test makes (the issue asks for 1,000 of each kind).
const FORKS: usize = 1000;

/// In the child: exits at once with `ok`'s code, without the parent's atexit handlers.
fn exit_child(ok: bool) -> ! {
    // SAFETY: _exit is async-signal-safe and ends only this (child) process.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// In the child: a deadline for everything it does (SIGALRM kills it).
fn child_deadline() {
    // SAFETY: alarm has no preconditions.
    unsafe { libc::alarm(10) };
}

/// Forks: in the child, 0 with its deadline set; in the parent, the child's pid.
fn fork_with_deadline() -> libc::pid_t {
    // SAFETY: every child only runs this test's code, then _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child_deadline();
    }
    pid
}

/// In the parent: checks that the child exited with 0; a failure naming `what` if it did
/// not, or hangs.
fn wait_child(pid: libc::pid_t, what: &str) {
    let status = child_ends::status(pid, what);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: child status {status:#x}"
    );
}

/// Two tasks that wait for each other: they finish only if a helper runs one of them.
fn needs_two_participants(pool: &Pool) -> bool {
    let arrived = AtomicUsize::new(0);
    let timed_out = AtomicUsize::new(0);
    pool.dispatch(2, |_| {
        arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while arrived.load(Ordering::SeqCst) < 2 {
            if Instant::now() > deadline {
                timed_out.fetch_add(1, Ordering::SeqCst);
                return;
            }
            std::hint::spin_loop();
        }
    });
    timed_out.load(Ordering::SeqCst) == 0
}

fn pool() -> Pool {
    Pool::builder().workers(2).wide_workers(3).build().unwrap()
}

#[test]
fn a_child_forked_inside_a_callers_task_finishes_the_dispatch_and_starts_fresh_helpers() {
    let pool = pool();
    let caller = std::thread::current().id();
    for round in 0..FORKS {
        let child = AtomicI32::new(-1);
        let ran = AtomicUsize::new(0);
        pool.dispatch(4, |_| {
            ran.fetch_add(1, Ordering::SeqCst);
            if std::thread::current().id() != caller {
                // The helper waits until the caller forked, so the caller claims a task.
                let deadline = Instant::now() + Duration::from_secs(5);
                while child.load(Ordering::SeqCst) == -1 && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
            } else if child.load(Ordering::SeqCst) == -1 {
                let pid = fork_with_deadline();
                child.store(pid, Ordering::SeqCst);
            }
        });
        let pid = child.load(Ordering::SeqCst);
        if pid == 0 {
            // In the child: the dispatch above returned. The pool must run in parallel
            // again, on helpers of its own, and say so.
            let ok = pool.width() == 2 && needs_two_participants(&pool);
            exit_child(ok);
        }
        assert_eq!(ran.load(Ordering::SeqCst), 4, "round {round}");
        wait_child(
            pid,
            &format!("round {round}: fork inside the caller's task"),
        );
    }
    assert!(
        needs_two_participants(&pool),
        "the parent's pool still works"
    );
}

#[test]
fn a_child_forked_inside_a_helpers_task_exits_when_the_task_returns() {
    let pool = pool();
    let caller = std::thread::current().id();
    for round in 0..FORKS / 10 {
        let child = AtomicI32::new(-1);
        let helper_forked = AtomicUsize::new(0);
        pool.dispatch(2, |_| {
            if std::thread::current().id() == caller {
                // Keep the caller busy until the helper took the other task and forked.
                let deadline = Instant::now() + Duration::from_secs(5);
                while helper_forked.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                return;
            }
            // SAFETY: in the child this thread returns from the task and the pool's helper
            // loop ends it; it is the child's only thread, so the child exits with 0.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                child_deadline();
                return;
            }
            child.store(pid, Ordering::SeqCst);
            helper_forked.store(1, Ordering::SeqCst);
        });
        let pid = child.load(Ordering::SeqCst);
        assert!(pid > 0, "round {round}: the helper did not fork");
        wait_child(pid, &format!("round {round}: fork inside a helper's task"));
    }
    assert!(
        needs_two_participants(&pool),
        "the parent's pool still works"
    );
}

#[test]
fn a_child_forked_between_dispatches_runs_them_in_parallel() {
    let pool = pool();
    pool.dispatch_wide(3, |_| ());
    for round in 0..FORKS / 10 {
        let pid = fork_with_deadline();
        if pid == 0 {
            let ok = pool.width() == 2
                && pool.wide_width() == 3
                && needs_two_participants(&pool)
                && pool.stats().inline_dispatches == 0;
            exit_child(ok);
        }
        wait_child(pid, &format!("round {round}: fork between dispatches"));
    }
}

#[test]
fn a_child_forked_inside_install_broadcasts_on_itself_alone_then_on_fresh_helpers() {
    let pool = pool();
    assert_eq!(pool.broadcast(|ctx| ctx.num_threads()), [2, 2]);
    for round in 0..FORKS / 10 {
        let pid = pool.install(|| {
            let pid = fork_with_deadline();
            if pid == 0 {
                // The parent's pool is current, its helpers absent: this thread alone.
                let alone = rayforce_pool::broadcast(|ctx| (ctx.index(), ctx.num_threads()));
                let fresh = pool.broadcast(|ctx| ctx.num_threads());
                exit_child(alone == [(0, 1)] && fresh == [2, 2]);
            }
            pid
        });
        wait_child(pid, &format!("round {round}: broadcast in a child"));
    }
}

#[test]
#[cfg(target_os = "linux")] // counts the child's threads in /proc
fn a_child_asking_whether_it_is_in_the_pool_starts_no_helper() {
    let pool = pool();
    pool.dispatch(2, |_| ());
    let pid = fork_with_deadline();
    if pid == 0 {
        let outside = pool.yield_now().is_none() && pool.yield_local().is_none();
        let threads = std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count);
        exit_child(outside && threads == 1);
    }
    wait_child(pid, "yield_now in a child");
}

/// Threads that spin beside the forks, as on a loaded machine.
const BUSY: usize = 2;

#[test]
fn a_child_forked_while_helpers_start_and_exit_starts_threads() {
    // Another thread keeps building and dropping pools: their helpers start and exit all the
    // time, so forks land inside a helper's start or exit, where std holds a lock of its
    // own that a child could never take again (README "Fork"). The lock is held briefly:
    // without the fork gate, about one run in four had a child hang on this 2-core machine
    // with other spinning processes beside it.
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let churn = Pool::builder().workers(6).build().unwrap();
                churn.dispatch(6, |_| ());
            }
        });
        // Threads that keep the CPUs busy, so that a starting helper is often preempted.
        for _ in 0..BUSY {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            for round in 0..FORKS / 2 {
                let pid = fork_with_deadline();
                if pid == 0 {
                    let started = std::thread::spawn(|| 7).join().ok() == Some(7);
                    exit_child(started && needs_two_participants(&pool()));
                }
                wait_child(pid, &format!("round {round}: fork beside starting helpers"));
            }
        }));
        stop.store(true, Ordering::Relaxed);
        if let Err(payload) = outcome {
            panic::resume_unwind(payload);
        }
    });
}

/// What the tasks keep rewriting while the caller forks: a vector of boxes, freed and
/// allocated again on every item, so the fork lands inside a helper's rewrite often. Each
/// has an id, and its drop marks the id: a second drop of one value (which the system
/// allocator may not catch across threads) sets `DROPPED_TWICE`.
struct Rewritten {
    id: usize,
    #[allow(clippy::vec_box)] // the point: many allocations, each freed on its own
    _boxes: Vec<Box<usize>>,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
static DROPPED: std::sync::OnceLock<Vec<AtomicBool>> = std::sync::OnceLock::new();
static DROPPED_TWICE: AtomicBool = AtomicBool::new(false);

impl Rewritten {
    fn new(seed: usize) -> Rewritten {
        let dropped =
            DROPPED.get_or_init(|| (0..1 << 23).map(|_| AtomicBool::new(false)).collect());
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        assert!(id < dropped.len(), "more values than ids");
        Rewritten {
            id,
            _boxes: (0..64).map(|k| Box::new(seed + k)).collect(),
        }
    }
}

impl Default for Rewritten {
    fn default() -> Rewritten {
        Rewritten::new(0)
    }
}

impl Drop for Rewritten {
    fn drop(&mut self) {
        let dropped = &DROPPED.get().expect("made by `new`")[self.id];
        if dropped.swap(true, Ordering::Relaxed) {
            DROPPED_TWICE.store(true, Ordering::Relaxed);
        }
    }
}

/// Forks this many times inside each operation (the issue saw 4-7 of 30 children of a
/// `fold` corrupt their heap).
const FORKS_INSIDE: usize = 30;

/// Runs `operation` until its tasks forked `FORKS_INSIDE` times in all: each task calls
/// `fork_once`, which forks on the caller once per run, once a helper's task has counted a
/// rewrite in `rewrites`, and says whether this is the child. A child exits once
/// `operation` returned or unwound, with `in_child`'s verdict on its outcome as its exit
/// code; `check` gets each child's pid in the parent.
fn fork_inside<R>(
    operation: impl Fn(&(dyn Fn() -> bool + Sync), &AtomicUsize) -> R,
    in_child: impl Fn(std::thread::Result<R>) -> bool,
    check: impl Fn(libc::pid_t, usize),
) {
    let caller = std::thread::current().id();
    let mut forks = 0;
    for _ in 0..20 * FORKS_INSIDE {
        let (rewrites, child) = (AtomicUsize::new(0), AtomicI32::new(-1));
        let fork_once = || {
            let mine = std::thread::current().id() == caller;
            if mine && child.load(Ordering::SeqCst) == -1 && rewrites.load(Ordering::SeqCst) > 0 {
                let pid = fork_with_deadline();
                child.store(pid, Ordering::SeqCst);
            }
            child.load(Ordering::SeqCst) == 0
        };
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| operation(&fork_once, &rewrites)));
        match child.load(Ordering::SeqCst) {
            0 => exit_child(in_child(outcome)),
            -1 => continue, // no helper took part this time
            pid => {
                assert!(outcome.is_ok(), "the parent's operation completes");
                check(pid, forks);
                forks += 1;
                if forks == FORKS_INSIDE {
                    return;
                }
            }
        }
    }
    panic!("only {forks} of {FORKS_INSIDE} runs had a helper to fork beside");
}

/// A task's work: rewrites `state`, counting it in `rewrites` when a helper does it.
fn rewrite(
    state: &mut Rewritten,
    seed: usize,
    caller: std::thread::ThreadId,
    rewrites: &AtomicUsize,
) {
    *state = Rewritten::new(seed);
    if std::thread::current().id() != caller {
        rewrites.fetch_add(1, Ordering::SeqCst);
    }
}

/// Whether the child's operation panicked saying the parent's results are missing, having
/// dropped no value twice.
fn panicked_for_the_fork<R>(outcome: std::thread::Result<R>) -> bool {
    !DROPPED_TWICE.load(Ordering::Relaxed)
        && outcome.err().is_some_and(|payload| {
            payload
                .downcast_ref::<&str>()
                .is_some_and(|m| m.contains("forked inside a data-parallel operation"))
        })
}

#[test]
fn a_child_forked_inside_fold_drops_no_state_a_helper_was_writing() {
    let pool = pool();
    let caller = std::thread::current().id();
    fork_inside(
        |fork_once, rewrites| {
            pool.fold(
                2_000,
                Rewritten::default,
                |state, i| {
                    fork_once();
                    rewrite(state, i, caller, rewrites);
                },
                |a, _| a,
            )
        },
        panicked_for_the_fork,
        |pid, fork| wait_child(pid, &format!("fork {fork} inside fold")),
    );
}

#[test]
fn a_child_forked_inside_map_drops_no_result_a_helper_was_writing() {
    let pool = pool();
    let caller = std::thread::current().id();
    fork_inside(
        |fork_once, rewrites| {
            pool.map(2_000, |i| {
                fork_once();
                let mut state = Rewritten::default();
                rewrite(&mut state, i, caller, rewrites);
                state
            })
        },
        panicked_for_the_fork,
        |pid, fork| wait_child(pid, &format!("fork {fork} inside map")),
    );
}

/// Forks inside `write_all` (which hands each of 2,000 items, with its index, to `write`
/// on the pool) and asserts that every child aborted, saying it was inside `name`.
fn assert_children_abort_inside(
    name: &str,
    write_all: impl Fn(&mut [Rewritten], &(dyn Fn(usize, &mut Rewritten) + Sync)),
) {
    let caller = std::thread::current().id();
    let ends = std::cell::RefCell::new(ChildEnds::new());
    fork_inside(
        |fork_once, rewrites| {
            let mut items: Vec<Rewritten> = (0..2_000).map(|_| Rewritten::default()).collect();
            let ends: &ChildEnds = &ends.borrow();
            write_all(&mut items, &|i, item| {
                if fork_once() {
                    ends.redirect_stderr();
                }
                rewrite(item, i, caller, rewrites);
            });
        },
        |_| false, // not reached: the child aborts inside the operation
        |pid, fork| {
            ends.borrow_mut()
                .wait(pid, &format!("fork {fork} inside {name}"))
        },
    );
    let aborted = ends.into_inner().assert_each_abort_said(name);
    assert_eq!(aborted, FORKS_INSIDE, "every child aborted");
}

#[test]
fn a_child_forked_inside_for_each_mut_aborts_before_the_caller_sees_the_items() {
    let pool = pool();
    assert_children_abort_inside("for_each_mut", |items, write| {
        pool.for_each_mut(items, write);
    });
}

#[test]
fn a_child_forked_inside_an_iterator_over_mut_items_aborts_before_the_caller_sees_them() {
    let pool = pool();
    assert_children_abort_inside("a parallel iterator", |items, write| {
        pool.install(|| {
            items
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, item)| write(i, item))
        });
    });
}

/// Pins the calling thread (in a child, the whole process) to `cpu` alone.
#[cfg(target_os = "linux")]
fn pin_to(cpu: usize) {
    // SAFETY: an all-zero `cpu_set_t` is a valid empty set; CPU_SET and
    // sched_setaffinity get a set of the size passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
}

/// The CPUs the calling thread may run on.
#[cfg(target_os = "linux")]
fn own_cpus() -> Vec<usize> {
    let mask = rayforce_tunables::cpu::thread_affinity(0).expect("this thread's mask");
    mask.iter().collect()
}

#[cfg(target_os = "linux")]
#[test]
fn a_child_narrowed_to_other_cpus_places_its_helper_inside_its_own_mask() {
    use rayforce_tunables::cpu::Place;
    let cpus = own_cpus();
    if cpus.len() < 2 {
        eprintln!("skipped: one CPU, no other CPU for the child to narrow itself to");
        return;
    }
    let pool = Pool::builder()
        .workers(2)
        .place(Place::Spread)
        .recheck_ms(0)
        .build()
        .unwrap();
    pool.dispatch(2, |_| ());
    let parents = pool.placement()[0].cpu;
    let other = *cpus.iter().find(|&&cpu| Some(cpu) != parents).unwrap();
    let pid = fork_with_deadline();
    if pid == 0 {
        // As a pre-fork server pins a worker process.
        pin_to(other);
        let helper_cpus = Mutex::new(Vec::new());
        let arrived = AtomicUsize::new(0);
        pool.dispatch_with_worker(2, 2, |worker, _| {
            arrived.fetch_add(1, Ordering::SeqCst);
            while arrived.load(Ordering::SeqCst) < 2 {
                std::thread::yield_now();
            }
            if worker == 1 {
                *helper_cpus.lock().unwrap() = own_cpus();
            }
        });
        let placed = pool.placement();
        let ok = placed.len() == 1
            && placed[0].cpu == Some(other)
            && placed[0].failure.is_none()
            && *helper_cpus.lock().unwrap() == [other];
        if !ok {
            eprintln!("child on CPU {other}: {placed:?}, helper on {helper_cpus:?}");
        }
        exit_child(ok);
    }
    wait_child(pid, &format!("a child narrowed to CPU {other}"));
}

/// An iterator whose first `next` on a thread other than `caller` holds the bridge's lock
/// until the caller has forked or given up, or a second has passed (then it sets
/// `let_go`: the lock may have been free when the caller forked); its drop is recorded in
/// `SOURCE_DROPPED`.
struct HeldSource<'a> {
    left: usize,
    caller: std::thread::ThreadId,
    pulling: &'a AtomicBool,
    decided: &'a AtomicBool,
    let_go: &'a AtomicBool,
}

static SOURCE_DROPPED: AtomicBool = AtomicBool::new(false);

impl Iterator for HeldSource<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        if std::thread::current().id() != self.caller && !self.pulling.swap(true, Ordering::SeqCst)
        {
            let deadline = Instant::now() + Duration::from_secs(1);
            while !self.decided.load(Ordering::SeqCst) && Instant::now() < deadline {
                std::hint::spin_loop();
            }
            if !self.decided.load(Ordering::SeqCst) {
                self.let_go.store(true, Ordering::SeqCst);
            }
        }
        self.left -= 1;
        Some(self.left)
    }
}

impl Drop for HeldSource<'_> {
    fn drop(&mut self) {
        SOURCE_DROPPED.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_child_forked_while_a_helper_pulls_from_par_bridge_aborts_without_waiting_for_its_lock() {
    const ITEMS: usize = 1_000;
    let pool = pool();
    let caller = std::thread::current().id();
    let mut forks = 0;
    for _ in 0..20 * FORKS_INSIDE {
        let (pulling, decided, let_go, child) = (
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicI32::new(-1),
        );
        let seen = AtomicUsize::new(0);
        SOURCE_DROPPED.store(false, Ordering::SeqCst);
        let source = HeldSource {
            left: ITEMS,
            caller,
            pulling: &pulling,
            decided: &decided,
            let_go: &let_go,
        };
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                source.par_bridge().for_each(|_| {
                    seen.fetch_add(1, Ordering::SeqCst);
                    let mine = std::thread::current().id() == caller;
                    if !mine || decided.load(Ordering::SeqCst) {
                        return;
                    }
                    // Fork while a helper is inside the iterator's `next`, holding its lock.
                    let deadline = Instant::now() + Duration::from_millis(200);
                    while !pulling.load(Ordering::SeqCst) && Instant::now() < deadline {
                        std::hint::spin_loop();
                    }
                    if pulling.load(Ordering::SeqCst) {
                        let pid = fork_with_deadline();
                        child.store(pid, Ordering::SeqCst);
                    }
                    decided.store(true, Ordering::SeqCst);
                })
            })
        }));
        match child.load(Ordering::SeqCst) {
            // Not reached: the child, its region cut short by the fork, aborts inside the
            // iterator's consumer (its helper may have been writing what the caller owns),
            // without hanging on the lock the parent's helper held.
            0 => exit_child(false),
            -1 => continue, // no helper pulled this time
            pid => {
                assert!(outcome.is_ok(), "the parent's for_each completes");
                assert_eq!(seen.into_inner(), ITEMS, "the parent sees every item");
                assert!(SOURCE_DROPPED.load(Ordering::SeqCst), "the parent drops it");
                let what = format!("fork {forks} while a helper pulls from par_bridge");
                let status = child_ends::status(pid, &what);
                assert!(
                    libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGABRT,
                    "{what}: child status {status:#x}"
                );
                if let_go.load(Ordering::SeqCst) {
                    // The helper may have left the iterator before the fork (a slow, busy
                    // machine): the child may have found the lock free. The run does not
                    // count.
                    continue;
                }
                forks += 1;
                if forks == FORKS_INSIDE {
                    return;
                }
            }
        }
    }
    panic!("only {forks} of {FORKS_INSIDE} runs had a helper pulling to fork beside");
}

#[test]
fn a_child_forked_inside_a_one_thread_par_bridge_pulls_every_item() {
    const ITEMS: usize = 1_000;
    let pool = Pool::builder().num_threads(1).build().unwrap();
    let (seen, child) = (AtomicUsize::new(0), AtomicI32::new(-1));
    pool.install(|| {
        (0..ITEMS).par_bridge().for_each(|_| {
            if seen.fetch_add(1, Ordering::SeqCst) == ITEMS / 2 {
                let pid = fork_with_deadline();
                child.store(pid, Ordering::SeqCst);
            }
        })
    });
    match child.load(Ordering::SeqCst) {
        // No other thread held the bridge at the fork: the child pulls on to the end.
        0 => exit_child(seen.load(Ordering::SeqCst) == ITEMS),
        pid => {
            assert_eq!(seen.into_inner(), ITEMS, "the parent sees every item");
            wait_child(pid, "a fork inside a one-thread par_bridge");
        }
    }
}
