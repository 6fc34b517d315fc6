//! `rayforce-rt compare`: every configuration runs, checksums agree, equal widths are called
//! noise, `--policy` selects, bad values exit 2.

use serde_json::Value;
use std::process::{Command, Output};

/// `compare` with small sizes, then `args`.
fn compare(args: &[&str]) -> Output {
    compare_exactly(&[&["--rows", "2000", "--repeat", "3", "--rounds", "2"], args].concat())
}

/// `compare` with only `args`.
fn compare_exactly(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .arg("compare")
        .args(args)
        .env_remove("RAYFORCE_TUNABLES")
        .output()
        .unwrap()
}

#[test]
fn json_has_every_configuration_with_agreeing_checksums() {
    let out = compare(&["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let configs = report["configurations"].as_array().unwrap();
    assert_eq!(
        configs.len(),
        2 * 3 * 2,
        "2 workloads x 3 policies x 2 modes"
    );
    for workload in ["hash_join", "random_lookups"] {
        let sums: Vec<&Value> = configs
            .iter()
            .filter(|c| c["workload"] == workload)
            .map(|c| &c["checksum"])
            .collect();
        assert!(
            sums.iter().all(|s| *s == sums[0] && s.is_u64()),
            "{workload}: {sums:?}"
        );
    }
    for c in configs {
        assert!(c["wall_ms"]["min"].as_f64() <= c["wall_ms"]["median"].as_f64());
        assert!(c["wall_ms"]["median"].as_f64() <= c["wall_ms"]["max"].as_f64());
        assert!(c["work_per_cpu_second"].as_f64().unwrap() > 0.0);
        // A later policy with the width of an earlier one is flagged, never presented as a
        // difference.
        let earlier_same = configs
            .iter()
            .take_while(|o| !std::ptr::eq(*o, c))
            .any(|o| {
                o["workload"] == c["workload"] && o["mode"] == c["mode"] && o["width"] == c["width"]
            });
        assert_eq!(
            earlier_same,
            c["note"].as_str().unwrap().contains("same width"),
            "{c}"
        );
    }
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("round 2/2"), "progress on stderr: {stderr}");
}

#[test]
fn policy_flags_select_and_table_prints() {
    let out = compare(&["--policy", "online", "--policy", "physical"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1 + 2 * 2 * 2, "{text}");
    assert!(
        !text.contains("schedulable") && text.contains("wall ms"),
        "{text}"
    );
}

#[test]
fn bad_values_exit_2() {
    for args in [
        &["--rounds", "0"][..],
        &["--policy", "numa"],
        &["--rows", "-5"],
        &["--rows", "18446744073709551615"],
        &["--rows", "4000000000000"],
    ] {
        let out = compare_exactly(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr)
                .trim_end()
                .lines()
                .count(),
            1,
            "{args:?}"
        );
    }
    let out = compare_exactly(&["--rows", "18446744073709551615"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--rows 18446744073709551615") && stderr.contains("expected at most"),
        "{stderr}"
    );
}
