//! `rayforce-rt inspect` end to end: every fixture through the binary, agreement with
//! `nproc` and `lscpu` on this machine, `taskset`, the NUMA nodes and placement of the dumps
//! that have them, and one-line errors with exit code 2.
#![cfg(target_os = "linux")]

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The real sysfs dumps in the repository's `fixtures/topology/`: this package is built from
/// the repository only (it is not published), so their absence is a failure, never a skip.
fn fixtures() -> PathBuf {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/topology"));
    assert!(
        dir.join("EXPECTED.tsv").is_file(),
        "fixtures missing at {}",
        dir.display()
    );
    dir
}

fn inspect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .arg("inspect")
        .args(args)
        .output()
        .unwrap()
}

fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Runs a system tool, or `None` (with the reason printed) where it is not installed.
fn tool(program: &str, args: &[&str]) -> Option<String> {
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Some(String::from_utf8(out.stdout).unwrap()),
        other => {
            eprintln!("skipping the {program} comparison: {other:?}");
            None
        }
    }
}

#[test]
fn nodes_and_placement_match_the_numa_dumps() {
    let fixtures = fixtures();
    let table = std::fs::read_to_string(fixtures.join("EXPECTED-numa.tsv")).unwrap();
    let mut rows: std::collections::BTreeMap<&str, Vec<(u64, &str, u64)>> = Default::default();
    for line in table.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let row = (cols[1].parse().unwrap(), cols[2], cols[3].parse().unwrap());
        rows.entry(cols[0]).or_default().push(row);
    }
    assert!(rows.len() >= 5);
    for (fixture, nodes) in rows {
        let dir = fixtures.join(fixture);
        let root = dir.to_str().unwrap();
        let report = json(&inspect(&[
            "--json",
            "--sysfs-root",
            root,
            "--place",
            "spread",
        ]));
        let shown: Vec<(u64, &str, u64)> = report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let cpus = n["cpus"].as_str().unwrap();
                (
                    n["node"].as_u64().unwrap(),
                    cpus,
                    n["cores"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(shown, nodes, "{fixture}: nodes");
        let helpers = report["placement"]["helpers"].as_array().unwrap();
        let wide = report["pool_wide_width"].as_u64().unwrap() as usize;
        assert_eq!(helpers.len(), wide - 1, "{fixture}: one line per helper");
        assert_eq!(report["placement"]["mode"], "spread");
        let mut cpus: Vec<u64> = helpers.iter().filter_map(|h| h["cpu"].as_u64()).collect();
        let placed = cpus.len();
        cpus.sort_unstable();
        cpus.dedup();
        assert_eq!(cpus.len(), placed, "{fixture}: distinct CPUs");
    }
    // Off shows no placement; a bad word is a one-line error naming it.
    let dir = fixtures.join("amd-bulldozer-4p8n-numa");
    let root = dir.to_str().unwrap();
    let off = json(&inspect(&[
        "--json",
        "--sysfs-root",
        root,
        "--place",
        "off",
    ]));
    assert!(off["placement"].is_null() && off["nodes"].as_array().unwrap().len() == 8);
    let bad = inspect(&["--sysfs-root", root, "--place", "numa"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr)
        .unwrap()
        .contains("off, spread, close"));
}

#[test]
fn json_matches_expected_for_every_fixture() {
    let fixtures = fixtures();
    let table = std::fs::read_to_string(fixtures.join("EXPECTED.tsv")).unwrap();
    let mut checked = 0;
    for line in table.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let dir = fixtures.join(cols[0]);
        let report = json(&inspect(&["--json", "--sysfs-root", dir.to_str().unwrap()]));
        assert_eq!(
            report["counts"]["online"]["value"].to_string(),
            cols[1],
            "{}: online",
            cols[0]
        );
        assert_eq!(
            report["counts"]["schedulable"]["value"].to_string(),
            cols[1],
            "{}: schedulable",
            cols[0]
        );
        assert_eq!(
            report["counts"]["physical"]["value"].to_string(),
            cols[2],
            "{}: physical",
            cols[0]
        );
        assert_eq!(report["policy"], "physical");
        assert_eq!(report["count"].to_string(), cols[2]);
        assert!(
            report["counts"]["physical"]["source"].is_string()
                && report["counts"]["quota"].is_null()
        );
        assert_eq!(report["counts"]["physical"]["fallback"], false);
        checked += 1;
    }
    assert!(checked >= 8);
}

#[test]
fn this_machine_agrees_with_nproc_and_lscpu() {
    let report = json(&inspect(&["--json"]));
    if let Some(nproc) = tool("nproc", &[]) {
        assert_eq!(
            report["counts"]["schedulable"]["value"].to_string(),
            nproc.trim(),
            "nproc honours affinity"
        );
    }
    if let Some(all) = tool("nproc", &["--all"]) {
        assert!(
            report["counts"]["online"]["value"].as_u64().unwrap() <= all.trim().parse().unwrap()
        );
    }
    if let Some(lscpu) = tool("lscpu", &["-p=CPU,CORE,SOCKET,ONLINE", "--online"]) {
        let mut cores: Vec<(String, String)> = lscpu
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let cols: Vec<&str> = l.split(',').collect();
                (cols[2].to_owned(), cols[1].to_owned())
            })
            .collect();
        let online = cores.len();
        cores.sort();
        cores.dedup();
        assert_eq!(
            report["counts"]["online"]["value"].as_u64(),
            Some(online as u64),
            "lscpu online CPUs"
        );
        // Without an affinity mask narrower than the machine, physical = lscpu's cores.
        if report["counts"]["schedulable"]["value"] == report["counts"]["online"]["value"] {
            assert_eq!(
                report["counts"]["physical"]["value"].as_u64(),
                Some(cores.len() as u64),
                "lscpu cores"
            );
        }
    }
}

#[test]
fn taskset_one_cpu_gives_one() {
    let out = Command::new("taskset")
        .args([
            "-c",
            "0",
            env!("CARGO_BIN_EXE_rayforce-rt"),
            "inspect",
            "--json",
        ])
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let report: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(report["counts"]["schedulable"]["value"], 1);
            assert_eq!(report["counts"]["physical"]["value"], 1);
            assert_eq!(
                report["counts"]["schedulable"]["source"],
                "process_affinity"
            );
        }
        other => eprintln!("skipping: taskset unavailable: {other:?}"),
    }
}

#[test]
fn cpus_flag_sets_the_affinity() {
    let fixtures = fixtures();
    let dir = fixtures.join("intel-silver4108-2p8c2t");
    let report = json(&inspect(&[
        "--json",
        "--sysfs-root",
        dir.to_str().unwrap(),
        "--cpus",
        "0,16,1",
    ]));
    assert_eq!(
        (
            report["counts"]["schedulable"]["value"].as_u64(),
            report["counts"]["physical"]["value"].as_u64()
        ),
        (Some(3), Some(2))
    );
    let report = json(&inspect(&[
        "--json",
        "--sysfs-root",
        dir.to_str().unwrap(),
        "--policy",
        "online",
    ]));
    assert_eq!(
        (report["policy"].as_str(), report["count"].as_u64()),
        (Some("online"), Some(32))
    );
}

#[test]
fn table_names_every_policy_and_the_choice() {
    let fixtures = fixtures();
    let dir = fixtures.join("intel-raptorlake-hybrid");
    let out = inspect(&["--sysfs-root", dir.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for needle in [
        "online",
        "schedulable",
        "physical",
        "core_cpus_list",
        "cgroup quota: none",
        "-> 14 CPUs",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn an_explicit_width_is_the_wide_width_too() {
    let out = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .args(["inspect", "--json"])
        .env("RAYFORCE_CORES", "1")
        .output()
        .unwrap();
    let report = json(&out);
    assert_eq!(
        (&report["pool_width"], &report["pool_wide_width"]),
        (&Value::from(1), &Value::from(1)),
        "{report}"
    );
}

#[test]
fn bad_input_is_one_line_naming_the_value_with_exit_code_2() {
    let fixtures = fixtures();
    let fixture = fixtures.join("ps3-cell-no-ids");
    let fixture = fixture.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["--cpus", "0-"], "0-"),
        (&["--cpus", "3-1"], "3-1"),
        (&["--cpus", "9000"], "9000"),
        (&["--policy", "numa"], "numa"),
        (
            &["--sysfs-root", "/nonexistent/dir"],
            "/nonexistent/dir: no such directory",
        ),
        (
            &[
                "--sysfs-root",
                concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
            ],
            "Cargo.toml: not a directory",
        ),
        (
            &["--sysfs-root", env!("CARGO_MANIFEST_DIR")],
            "no sys/devices/system/cpu",
        ),
        (&["--sysfs-root", fixture, "--cpus", "5"], "--cpus 5"),
    ];
    for (args, needle) in cases {
        let out = inspect(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = inspect(&["--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--bogus"));

    // A dump whose CPU directory lists no CPU: refused, rather than this machine's count.
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(empty.path().join("sys/devices/system/cpu")).unwrap();
    let out = inspect(&["--sysfs-root", empty.path().to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no readable CPU list"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// Creates a named pipe at `path` (its parent directories too).
fn mkfifo(path: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; creates a pipe in a temporary directory.
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(made, 0, "{path:?}");
}

#[test]
fn named_pipes_in_a_dump_are_skipped_not_waited_on() {
    let dump = tempfile::tempdir().unwrap();
    let cpu = dump.path().join("sys/devices/system/cpu");
    for n in 0..2 {
        mkfifo(&cpu.join(format!("cpu{n}/topology/core_cpus_list")));
        mkfifo(&cpu.join(format!("cpu{n}/topology/thread_siblings_list")));
    }
    mkfifo(&cpu.join("online"));
    mkfifo(&dump.path().join("proc/self/cgroup"));
    mkfifo(&dump.path().join("proc/self/mountinfo"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .args(["inspect", "--json", "--sysfs-root"])
        .arg(dump.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("inspect hung on a named pipe");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let report = json(&child.wait_with_output().unwrap());
    assert_eq!(
        report["counts"]["online"]["value"], 2,
        "from the cpuN directories: {report}"
    );
    assert_eq!(report["counts"]["online"]["source"], "cpu_directories");
    assert_eq!(report["counts"]["physical"]["fallback"], true, "{report}");
    assert!(report["counts"]["quota"].is_null());
}
