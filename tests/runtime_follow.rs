//! A running program follows the machine: with `Runtime` as its allocator and
//! `rayforce.cpu.recheck_ms=200`, narrowing its affinity (all threads, as `taskset -a -p`
//! does) or capping its cgroup CPU quota narrows `Pool::width()` within two recheck
//! periods, and widening brings it back, with every dispatch exact throughout. Under a
//! thread limit, `inspect` says which helpers could not start and why, and once the limit
//! lifts the helpers start and the error is gone. This test binary is
//! the program: it runs itself as a child. Where the machine does not allow a step (one CPU,
//! no `taskset`, no writable cgroup), the test says so and skips that step.
#![cfg(target_os = "linux")]

mod common;

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

/// The re-check period the child runs with.
const RECHECK: Duration = Duration::from_millis(200);

/// The child: dispatches every 5 ms, checks each result, and prints `width=N` whenever
/// the pool's width changes; stops when its stdin closes.
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
            writeln!(out, "width={last}").unwrap();
            out.flush().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The child process, and its `width=N` lines as they come.
struct Program {
    child: Child,
    widths: Receiver<usize>,
}

impl Program {
    fn start() -> Program {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
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
                if let Some(w) = line.split("width=").nth(1) {
                    let _ = tx.send(w.trim().parse().unwrap());
                }
            }
        });
        Program { child, widths }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the width to become `want`; returns how long it took after `since`.
    fn wait_for(&self, want: usize, since: Instant) -> Duration {
        let deadline = since + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.widths.recv_timeout(left) {
                Ok(w) if w == want => return since.elapsed(),
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

/// Runs `taskset -a -p -c LIST PID`; false (with the reason) where it cannot.
fn taskset(cpus: &str, pid: u32) -> bool {
    match Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &pid.to_string()])
        .output()
    {
        Ok(out) if out.status.success() => true,
        other => {
            eprintln!("skipping the affinity steps: taskset failed: {other:?}");
            false
        }
    }
}

/// A cgroup v1 child group this test creates and removes.
struct Group(PathBuf);

impl Group {
    fn create(controller: &str) -> Option<Group> {
        let dir = Path::new("/sys/fs/cgroup")
            .join(controller)
            .join(format!("rayforce-test-{}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => Some(Group(dir)),
            Err(err) => {
                eprintln!(
                    "skipping the {controller} cgroup steps: cannot create {}: {err}",
                    dir.display()
                );
                None
            }
        }
    }

    fn write(&self, file: &str, value: &str) {
        std::fs::write(self.0.join(file), value)
            .unwrap_or_else(|err| panic!("{}/{file} <- {value}: {err}", self.0.display()));
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Move every process back to the root group, then remove ours.
        let root = self.0.parent().unwrap().join("cgroup.procs");
        if let Ok(procs) = std::fs::read_to_string(self.0.join("cgroup.procs")) {
            for pid in procs.lines() {
                let _ = std::fs::write(&root, pid);
            }
        }
        let _ = std::fs::remove_dir(&self.0);
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
    let program = Program::start();
    program.wait_for(2.min(online_cpus()), Instant::now());
    let two_periods = 2 * RECHECK;

    if taskset("0", program.pid()) {
        let took = program.wait_for(1, Instant::now());
        assert!(
            took <= two_periods,
            "affinity narrowed: width followed after {took:?}"
        );
        assert!(taskset(&format!("0-{}", online_cpus() - 1), program.pid()));
        let took = program.wait_for(2, Instant::now());
        assert!(
            took <= two_periods,
            "affinity widened: width followed after {took:?}"
        );
    }

    if let Some(group) = Group::create("cpu") {
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
fn inspect_says_which_helpers_a_thread_limit_kept_from_starting() {
    if common::is_child() {
        return;
    }
    let Some(group) = Group::create("pids") else {
        return;
    };
    group.write("pids.max", "1"); // the process itself: no thread can start
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} inspect --json",
        group.0.display(),
        env!("CARGO_BIN_EXE_rayforce-rt")
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("RAYFORCE_CORES", "2")
        .output()
        .unwrap();
    drop(group);
    let stdout = common::success_stdout(out);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["pool_width"], 1, "{report}");
    assert_eq!(report["missing_helpers"], 1, "{report}");
    assert!(
        report["start_error"]
            .as_str()
            .is_some_and(|e| e.contains("temporarily unavailable")),
        "{report}"
    );
}

/// Set in the child of the test below: the pids group to join.
const PIDS_GROUP: &str = "RAYFORCE_TEST_PIDS_GROUP";

/// The child: joins the pids group with no thread to spare, builds a best-effort pool of
/// width 3, lifts the limit, resizes (which retries), dispatches; prints the stats between.
fn start_error_child(group: &Path) {
    let threads = std::fs::read_dir("/proc/self/task").unwrap().count();
    std::fs::write(group.join("pids.max"), threads.to_string()).unwrap();
    std::fs::write(group.join("cgroup.procs"), std::process::id().to_string()).unwrap();
    let pool = rayforce_rt::Pool::builder()
        .workers(3)
        .spin_us(0)
        .recheck_ms(0)
        .best_effort()
        .build()
        .unwrap();
    let report = |when: &str| {
        let stats = pool.stats();
        println!(
            "{when}: width={} missing={} error={}",
            pool.width(),
            stats.missing_helpers,
            stats.start_error.is_some()
        );
    };
    report("limited");
    std::fs::write(group.join("pids.max"), "max").unwrap();
    pool.resize(3, 3);
    pool.dispatch(3, |_| ());
    report("lifted");
}

#[test]
fn once_the_thread_limit_lifts_the_helpers_start_and_the_error_is_gone() {
    if common::is_child() {
        if let Some(group) = std::env::var_os(PIDS_GROUP) {
            start_error_child(Path::new(&group));
        }
        return;
    }
    let Some(group) = Group::create("pids") else {
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
    assert!(
        out.contains("lifted: width=3 missing=0 error=false"),
        "both started, and the error went with the limit: {out}"
    );
}
