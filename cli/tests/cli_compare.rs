//! `rayforce-rt compare`: rayforce-rt and the three baselines (rayon on the system
//! allocator, on mimalloc, and on rayforce-rt) run every workload with agreeing checksums,
//! policies of one width run once, the verdict and the chart match the runs, `--policy`
//! selects, bad values exit 2.

use serde_json::Value;
use std::collections::HashSet;
use std::process::{Command, Output};

const WORKLOADS: [&str; 4] = ["hash_join", "random_lookups", "group_by", "short_queries"];

/// `compare --quick` with small sizes, then `args`.
fn compare(args: &[&str]) -> Output {
    compare_exactly(
        &[
            &[
                "--quick", "--rows", "2000", "--repeat", "3", "--rounds", "2",
            ],
            args,
        ]
        .concat(),
    )
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

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_has_rayforce_and_every_baseline_for_every_workload_with_agreeing_checksums() {
    let out = compare(&["--json"]);
    let report = json_of(&out);
    let configs = report["configurations"].as_array().unwrap();
    for workload in WORKLOADS {
        let rows: Vec<&Value> = configs
            .iter()
            .filter(|c| c["workload"] == workload)
            .collect();
        let allocators: HashSet<&str> = rows
            .iter()
            .map(|c| c["allocator"].as_str().unwrap())
            .collect();
        assert_eq!(
            allocators,
            HashSet::from(["rayforce-rt", "system", "mimalloc"]),
            "{workload}"
        );
        assert!(
            rows.iter()
                .all(|c| c["checksum"] == rows[0]["checksum"] && c["checksum"].is_u64()),
            "{workload}: {rows:?}"
        );
        // Every (policy, mode) appears exactly once among the runtime's rows, and those rows
        // have distinct widths: policies of one width run once, under all their names.
        let ours: Vec<&&Value> = rows
            .iter()
            .filter(|c| c["implementation"] == "rayforce-rt")
            .collect();
        let variants: Vec<String> = ours
            .iter()
            .flat_map(|c| c["variants"].as_array().unwrap())
            .map(|v| format!("{} {}", v["policy"], v["mode"]))
            .collect();
        assert_eq!(variants.len(), 3 * 2, "{workload}: {variants:?}");
        assert_eq!(variants.iter().collect::<HashSet<_>>().len(), 6);
        let widths: HashSet<u64> = ours.iter().map(|c| c["width"].as_u64().unwrap()).collect();
        assert_eq!(widths.len(), ours.len(), "{workload}");
        // rayon on the system allocator and on mimalloc run at each of the runtime's
        // widths; rayon on the runtime once, at the width the runtime's pool has (the
        // physical policy's, this command's default).
        for c in &rows {
            assert!(widths.contains(&c["width"].as_u64().unwrap()), "{c}");
        }
        let bridged: Vec<&&Value> = rows
            .iter()
            .filter(|c| c["implementation"] == "rayon" && c["allocator"] == "rayforce-rt")
            .collect();
        assert_eq!(bridged.len(), 1, "{workload}: {rows:?}");
        assert_eq!(bridged[0]["label"], "rayon on rayforce-rt");
        let physical_width = ours
            .iter()
            .find(|c| {
                c["variants"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|v| v["policy"] == "physical" && v["mode"] == "dispatch")
            })
            .unwrap()["width"]
            .clone();
        assert_eq!(bridged[0]["width"], physical_width, "{workload}");
        assert_eq!(rows.len(), ours.len() * 3 + 1, "{workload}");
    }
    for c in configs {
        for spread in [&c["wall_ms"], &c["cpu_ms"]] {
            assert!(spread["min"].as_f64() <= spread["median"].as_f64(), "{c}");
            assert!(spread["median"].as_f64() <= spread["max"].as_f64(), "{c}");
        }
        assert!(c["work_per_cpu_second"].as_f64().unwrap() > 0.0);
    }
    let summary = report["summary"].as_array().unwrap();
    assert_eq!(summary.len(), WORKLOADS.len());
    for (verdict, workload) in summary.iter().zip(WORKLOADS) {
        assert_eq!(verdict["workload"], workload);
        assert!(verdict["rayforce"]
            .as_str()
            .unwrap()
            .starts_with("rayforce-rt"));
        assert!(verdict["baseline"].as_str().unwrap().starts_with("rayon "));
        let against = verdict["against"].as_array().unwrap();
        assert_eq!(against.len(), 3, "one line per baseline: {verdict}");
        assert_eq!(
            against[0]["baseline"], verdict["baseline"],
            "the best first"
        );
        let names: HashSet<&str> = against
            .iter()
            .map(|a| a["baseline"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 3, "{verdict}");
        for ratio in [&verdict["wall_ratio"], &verdict["cpu_ratio"]] {
            let (min, median, max) = (
                ratio["min"].as_f64().unwrap(),
                ratio["median"].as_f64().unwrap(),
                ratio["max"].as_f64().unwrap(),
            );
            assert!(0.0 < min && min <= median && median <= max, "{verdict}");
        }
    }
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("round 2/2"), "progress on stderr: {stderr}");
}

#[test]
fn the_plot_is_an_svg_with_one_bar_group_per_workload() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.svg");
    let report = json_of(&compare(&["--json", "--plot", path.to_str().unwrap()]));
    let configs = report["configurations"].as_array().unwrap();
    let names: HashSet<String> = configs
        .iter()
        .map(|c| format!("{} ({} threads)", c["label"].as_str().unwrap(), c["width"]))
        .collect();
    let svg = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("valid XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    // Two panels (wall, CPU): each names every workload once, under its group of bars, and
    // every configuration once, in its legend.
    for label in WORKLOADS
        .iter()
        .map(|w| w.to_string())
        .chain(names.iter().cloned())
    {
        assert_eq!(
            texts.iter().filter(|t| **t == label).count(),
            2,
            "{label} in {texts:?}"
        );
    }
    // Coloured rectangles: a bar per configuration and a legend swatch per name, per panel.
    let coloured = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter(|n| !matches!(n.attribute("fill"), Some("#FFFFFF") | Some("none") | None))
        .count();
    assert_eq!(coloured, 2 * (configs.len() + names.len()));
}

#[test]
fn policy_flags_select_and_the_verdict_comes_first() {
    let out = compare(&["--policy", "online", "--policy", "physical"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("verdict"), "{text}");
    assert!(
        !text.contains("schedulable") && text.contains("wall ms"),
        "{text}"
    );
    for workload in WORKLOADS {
        let rows = text
            .lines()
            .filter(|l| l.trim_start().starts_with(workload))
            .count();
        // One verdict line, then at least one runtime row and two baselines in the table.
        assert!(rows > 3, "{workload}: {text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with(workload) && l.contains("rayon + mimalloc")),
            "{text}"
        );
    }
}

#[test]
fn bad_values_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let unwritable = dir.path().join("missing").join("out.svg");
    for args in [
        &["--rounds", "0"][..],
        &["--policy", "numa"],
        &["--rows", "-5"],
        &["--rows", "18446744073709551615"],
        &["--rows", "4000000000000"],
        &["--repeat", "18446744073709551615"],
        &[
            "--quick",
            "--rounds",
            "1",
            "--rows",
            "100",
            "--repeat",
            "1",
            "--plot",
            unwritable.to_str().unwrap(),
        ],
    ] {
        let out = compare_exactly(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.starts_with("compare: "))
            .collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
    }
    let out = compare_exactly(&["--rows", "18446744073709551615"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--rows 18446744073709551615") && stderr.contains("expected at most"),
        "{stderr}"
    );
}

#[test]
fn the_baseline_subcommand_refuses_to_run_unless_compare_started_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .args([
            "compare-baseline",
            "--rows",
            "1",
            "--repeat",
            "1",
            "--table-len",
            "1",
        ])
        .args(["--steps", "1", "--group-rows", "1", "--queries", "1"])
        .env_remove("RAYFORCE_COMPARE_ENGINE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("RAYFORCE_COMPARE_ENGINE"), "{stderr}");
}

#[test]
fn an_unwritable_plot_path_is_refused_before_anything_runs() {
    let out = compare_exactly(&["--plot", "/nonexistent/dir/x.svg"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no results printed");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("/nonexistent/dir/x.svg"), "{stderr}");
    assert!(!stderr.contains("compare: round"), "nothing ran: {stderr}");
}

#[test]
fn a_repeated_policy_runs_and_reads_once() {
    let out = compare(&["--json", "--policy", "online", "--policy", "online"]);
    let report = json_of(&out);
    let text = report.to_string();
    assert!(text.contains("online"), "{text}");
    assert!(
        !text.contains("online dispatch = online dispatch"),
        "{text}"
    );
    assert!(!text.contains("online/online"), "{text}");
}
