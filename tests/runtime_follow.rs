//! A running program follows the machine: with `Runtime` as its allocator and
//! `rayforce.cpu.recheck_ms=200`, narrowing its affinity (all threads, as `taskset -a -p`
//! does, or the main thread's alone, as `taskset -p` does) or capping its cgroup CPU quota
//! narrows `Pool::width()` within two recheck periods, and widening brings it back, with
//! every dispatch exact throughout; a helper that a widening adds gets an arena of its own.
//! Under a thread limit, the pool's statistics say which helpers could not start and why, and
//! once the limit lifts the helpers start (at the next re-check, or on `refresh`) and the
//! error is gone. This test binary is the program: it runs itself as a child. Where the
//! machine does not allow a step (one CPU, no `taskset`, no writable cgroup), the test says so
//! and skips that step.
#![cfg(target_os = "linux")]

mod common;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

/// The re-check period the child runs with.
const RECHECK: Duration = Duration::from_millis(200);

/// The child: dispatches every 5 ms, checks each result, and prints `width=N threads=[..]`
/// (the threads bound to each arena) whenever the pool's width changes; stops when its
/// stdin closes.
fn child_program() {
    let stdin_closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let closed = std::sync::Arc::clone(&stdin_closed);
        std::thread::spawn(move || {
            let _ = std::io::stdin().lines().count();
            closed.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
    let pool = RT.pool();
    let mut last = 0;
    let mut out = std::io::stdout();
    while !stdin_closed.load(std::sync::atomic::Ordering::SeqCst) {
        let sum = std::sync::atomic::AtomicUsize::new(0);
        pool.dispatch(64, |i| {
            sum.fetch_add(i, std::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(
            sum.into_inner(),
            64 * 63 / 2,
            "a dispatch lost or repeated a task"
        );
        if pool.width() != last {
            last = pool.width();
            let arenas = RT.alloc_stats().threads_per_arena;
            writeln!(out, "width={last} threads={arenas:?}").unwrap();
            out.flush().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The child process, and its `width=N` lines as they come, with the threads per arena.
struct Program {
    child: Child,
    widths: Receiver<(usize, Vec<usize>)>,
}

impl Program {
    /// The child, on every CPU, or on `cpus` only (`taskset -c`).
    fn start(cpus: Option<&str>) -> Program {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = match cpus {
            None => Command::new(exe),
            Some(cpus) => {
                let mut cmd = Command::new("taskset");
                cmd.args(["-c", cpus]).arg(exe);
                cmd
            }
        };
        cmd.args([
            "--exact",
            "the_pool_follows_affinity_and_quota",
            "--nocapture",
        ])
        .env(common::CHILD, "1")
        .env("RAYFORCE_TUNABLES", "rayforce.cpu.recheck_ms=200")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, widths) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Some(report) = line.split("width=").nth(1) else {
                    continue;
                };
                let (width, threads) = report.split_once(" threads=").unwrap();
                let threads = threads.trim_matches(['[', ']']).split(", ");
                let threads = threads.map(|n| n.parse().unwrap()).collect();
                let _ = tx.send((width.parse().unwrap(), threads));
            }
        });
        Program { child, widths }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the width to become `want`; returns how long it took after `since`.
    fn wait_for(&self, want: usize, since: Instant) -> Duration {
        self.wait_for_threads(want, since).0
    }

    /// `wait_for`, and the threads bound to each arena then.
    fn wait_for_threads(&self, want: usize, since: Instant) -> (Duration, Vec<usize>) {
        let deadline = since + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.widths.recv_timeout(left) {
                Ok((w, threads)) if w == want => return (since.elapsed(), threads),
                Ok(_) => continue,
                Err(err) => panic!("width never became {want}: {err}"),
            }
        }
    }

    /// Ends the child and checks it found every dispatch exact.
    fn finish(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the program failed: {status}");
    }
}

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `taskset -a -p -c LIST PID` (every thread); false (with the reason) where it cannot.
fn taskset(cpus: &str, pid: u32) -> bool {
    taskset_with(&["-a"], cpus, pid)
}

/// Runs `taskset -p -c LIST PID` (the main thread only), or with `flags` added.
fn taskset_with(flags: &[&str], cpus: &str, pid: u32) -> bool {
    match Command::new("taskset")
        .args(flags)
        .args(["-p", "-c", cpus, &pid.to_string()])
        .output()
    {
        Ok(out) if out.status.success() => true,
        other => {
            eprintln!("skipping the affinity steps: taskset failed: {other:?}");
            false
        }
    }
}

#[test]
fn the_pool_follows_affinity_and_quota() {
    if common::is_child() {
        child_program();
        return;
    }
    if online_cpus() < 2 {
        eprintln!("skipping: one CPU here, so no narrower affinity or quota to follow");
        return;
    }
    let program = Program::start(None);
    program.wait_for(2.min(online_cpus()), Instant::now());
    let two_periods = 2 * RECHECK;
    let every_cpu = format!("0-{}", online_cpus() - 1);

    if taskset("0", program.pid()) {
        let took = program.wait_for(1, Instant::now());
        assert!(
            took <= two_periods,
            "affinity narrowed: width followed after {took:?}"
        );
        assert!(taskset(&every_cpu, program.pid()));
        let took = program.wait_for(2, Instant::now());
        assert!(
            took <= two_periods,
            "affinity widened: width followed after {took:?}"
        );
        // The main thread's mask alone: the child dispatches from another thread.
        assert!(taskset_with(&[], "0", program.pid()));
        let took = program.wait_for(1, Instant::now());
        assert!(
            took <= two_periods,
            "the main thread's affinity narrowed: width followed after {took:?}"
        );
        assert!(taskset_with(&[], &every_cpu, program.pid()));
        program.wait_for(2, Instant::now());
    }

    if let Some(group) = common::cgroup::Group::create("cpu") {
        group.write("cpu.cfs_period_us", "100000");
        group.write("cpu.cfs_quota_us", "50000"); // half a CPU: every count capped at 1
        group.write("cgroup.procs", &program.pid().to_string());
        let took = program.wait_for(1, Instant::now());
        assert!(
            took <= two_periods,
            "quota cut: width followed after {took:?}"
        );
        group.write("cpu.cfs_quota_us", "-1");
        let took = program.wait_for(2, Instant::now());
        assert!(
            took <= two_periods,
            "quota lifted: width followed after {took:?}"
        );
        drop(group);
    }
    program.finish();
}

#[test]
fn a_helper_that_widening_adds_gets_an_arena_of_its_own() {
    if common::is_child() {
        child_program();
        return;
    }
    if online_cpus() < 2 {
        eprintln!("skipping: one CPU here, so no narrower start to widen from");
        return;
    }
    // Started on one CPU: width 1, arena limit 1, no helper.
    let program = Program::start(Some("0"));
    program.wait_for(1, Instant::now());
    if taskset(&format!("0-{}", online_cpus() - 1), program.pid()) {
        let (_, threads) = program.wait_for_threads(2, Instant::now());
        assert_eq!(threads.len(), 2, "a second arena for helper 1: {threads:?}");
        assert_eq!(threads[1], 1, "helper 1 alone on arena 1: {threads:?}");
    }
    program.finish();
}

/// Set in the child of the test below: the pids group to join.
const PIDS_GROUP: &str = "RAYFORCE_TEST_PIDS_GROUP";

/// The child: joins the pids group with no thread to spare, builds three best-effort pools
/// of width 3 (none gets a helper), lifts the limit, then brings each back to width 3 its
/// own way: one by resizing (which retries), one by the periodic re-check, one by
/// `refresh`. Prints the stats between.
fn start_error_child(group: &Path) {
    let threads = std::fs::read_dir("/proc/self/task").unwrap().count();
    std::fs::write(group.join("pids.max"), threads.to_string()).unwrap();
    std::fs::write(group.join("cgroup.procs"), std::process::id().to_string()).unwrap();
    let pool = |recheck_ms| {
        rayforce_rt::Pool::builder()
            .workers(3)
            .spin_us(0)
            .recheck_ms(recheck_ms)
            .best_effort()
            .build()
            .unwrap()
    };
    let (resized, rechecked, refreshed) = (pool(0), pool(50), pool(0));
    let report = |when: &str, pool: &rayforce_rt::Pool| {
        let stats = pool.stats();
        println!(
            "{when}: width={} missing={} error={}",
            pool.width(),
            stats.missing_helpers,
            stats.start_error.is_some()
        );
    };
    report("limited", &resized);
    std::fs::write(group.join("pids.max"), "max").unwrap();
    resized.resize(3, 3);
    resized.dispatch(3, |_| ());
    report("resized", &resized);
    std::thread::sleep(Duration::from_millis(120)); // past the next re-check
    rechecked.dispatch(3, |_| ());
    report("rechecked", &rechecked);
    println!("refresh changed: {}", refreshed.refresh());
    report("refreshed", &refreshed);
}

#[test]
fn once_the_thread_limit_lifts_the_helpers_start_and_the_error_is_gone() {
    if common::is_child() {
        if let Some(group) = std::env::var_os(PIDS_GROUP) {
            start_error_child(Path::new(&group));
        }
        return;
    }
    let Some(group) = common::cgroup::Group::create("pids") else {
        return;
    };
    let path = group.0.display().to_string();
    let out = common::run_test_in_child(
        "once_the_thread_limit_lifts_the_helpers_start_and_the_error_is_gone",
        &[(PIDS_GROUP, &path)],
    );
    drop(group);
    assert!(
        out.contains("limited: width=1 missing=2 error=true"),
        "no helper could start: {out}"
    );
    for how in ["resized", "rechecked", "refreshed"] {
        assert!(
            out.contains(&format!("{how}: width=3 missing=0 error=false")),
            "{how}: both started, and the error went with the limit: {out}"
        );
    }
    assert!(out.contains("refresh changed: true"), "{out}");
}
