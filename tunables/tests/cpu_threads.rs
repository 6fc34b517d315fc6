//! The schedulable count is the process's, whichever thread reads it: a thread that pins
//! itself to one CPU reads the same count as the main thread, and a change of the main
//! thread's mask alone (what `taskset -p PID` makes) is seen from every thread.
#![cfg(target_os = "linux")]

use rayforce_tunables::cpu;

/// Sets the calling thread's affinity to `cpus`.
fn pin_this_thread(cpus: &[usize]) {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below CPU_SETSIZE (this machine's CPUs).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity: {}",
        std::io::Error::last_os_error()
    );
}

fn online() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn a_pinned_thread_reads_the_process_count_and_sees_the_main_threads_changes() {
    if online() < 2 {
        eprintln!("skipping: one CPU here, so no narrower mask to pin a thread to");
        return;
    }
    // The test runs on a thread of the harness; this process's main thread waits for it.
    let process = cpu::read().schedulable.value;
    assert_eq!(process, online());
    let pinned = std::thread::spawn(|| {
        pin_this_thread(&[0]);
        cpu::read().schedulable.value
    });
    assert_eq!(
        pinned.join().unwrap(),
        process,
        "a pinned thread changes no count"
    );

    // The main thread's mask narrowed (as `taskset -p PID` does): every thread sees it.
    // SAFETY: getpid has no preconditions.
    let main_thread = unsafe { libc::getpid() };
    let narrowed = std::process::Command::new("taskset")
        .args(["-p", "-c", "0", &main_thread.to_string()])
        .output();
    match narrowed {
        Ok(out) if out.status.success() => {
            let seen = cpu::read().schedulable.value;
            let widen = format!("0-{}", online() - 1);
            let restored = std::process::Command::new("taskset")
                .args(["-p", "-c", &widen, &main_thread.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            assert!(restored, "could not give the main thread its mask back");
            assert_eq!(seen, 1, "the main thread's mask, read from this one");
        }
        other => eprintln!("skipping the taskset step: {other:?}"),
    }
}
