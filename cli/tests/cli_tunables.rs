//! `RAYFORCE_TUNABLES=... rayforce-rt tunables --json` shows the effect and the diagnostic
//! for every hostile case; strict mode exits 2 with the diagnostics on stderr.
#![cfg(unix)]

mod common;

use serde_json::Value;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output};

fn tunables(string: &[u8], extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"));
    cmd.arg("tunables").args(extra);
    for (name, _) in std::env::vars_os() {
        if name.as_bytes().starts_with(b"RAYFORCE_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("RAYFORCE_TUNABLES", OsStr::from_bytes(string))
        .output()
        .unwrap()
}

/// (value of spin_us, its source, diagnostic messages) from `--json`.
fn spin_us_and_messages(string: &[u8]) -> (Value, String, Vec<String>) {
    let out = tunables(string, &["--json"]);
    let report: Value = serde_json::from_str(&common::success_stdout(out)).unwrap();
    let spin = common::tunable(&report, "rayforce.pool.spin_us").clone();
    let messages = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert!(
                d["offset"].as_u64().unwrap() < string.len().max(1) as u64,
                "{d}"
            );
            format!(
                "{} {}",
                d["entry"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    (
        spin["value"].clone(),
        spin["source"].as_str().unwrap().to_owned(),
        messages,
    )
}

#[test]
fn every_hostile_case_shows_effect_and_diagnostic() {
    let long = [b"rayforce.pool.spin_us=".as_slice(), &[b'9'; 10_000]].concat();
    let cases: Vec<(&[u8], Option<&str>)> = vec![
        (b"", None),
        (b":", None),
        (b":::", None),
        (b"=", Some("no tunable name")),
        (b"=4", Some("no tunable name")),
        (b"rayforce.pool.spin_us", Some("expected name=value")),
        (
            b"rayforce.pool.spin_us=",
            Some("no value for rayforce.pool.spin_us"),
        ),
        (b"rayforce.pool.spin_us=4=4", Some("not a number")),
        (b"rayforce.pool.spin_us=abc", Some("not a number")),
        (b"rayforce.pool.spin_us=4abc", Some("not a number")),
        (b"rayforce.pool.spin_us=-1", Some("not a number")),
        (
            b"rayforce.pool.spin_us=18446744073709551616",
            Some("too large"),
        ),
        (&long, Some("too large")),
        (
            b"RAYFORCE.POOL.SPIN_US=7",
            Some("did you mean `rayforce.pool.spin_us`"),
        ),
        (
            b"rayforce.pool.spin_usx=7",
            Some("did you mean `rayforce.pool.spin_us`"),
        ),
        (b"rayforce.pool=7", Some("unknown tunable")),
        (
            b"rayforce.malloc.arena_max=0",
            Some("0 is below the minimum of rayforce.malloc.arena_max"),
        ),
        (
            b"rayforce.cpu.policy=PHYSICAL",
            Some("did you mean `physical`"),
        ),
        (
            b"rayforce.cpu.policy=numa",
            Some("not a value of rayforce.cpu.policy"),
        ),
        (b"rayforce.pool.spin\xffcount=7", Some("spin\\xffcount")),
        (b"rayforce.pool.spin_us=7\xff", Some("7\\xff")),
    ];
    let default_spin_us = rayforce_rt::registry::Id::SpinUs.tunable().default.unwrap();
    for (string, expected) in cases {
        let (value, source, messages) = spin_us_and_messages(string);
        let shown = String::from_utf8_lossy(string);
        assert_eq!(
            (value, source.as_str()),
            (Value::from(default_spin_us), "default"),
            "{shown}"
        );
        match expected {
            None => assert!(messages.is_empty(), "{shown}: {messages:?}"),
            Some(needle) => {
                assert_eq!(messages.len(), 1, "{shown}: {messages:?}");
                assert!(messages[0].contains(needle), "{shown}: {messages:?}");
            }
        }
    }
    for (string, applied) in [
        (&b"rayforce.pool.spin_us=0x10"[..], 16),
        (b" rayforce.pool.spin_us = 7 ", 7),
    ] {
        let (value, source, messages) = spin_us_and_messages(string);
        assert_eq!(
            (value, source.as_str()),
            (Value::from(applied), "RAYFORCE_TUNABLES")
        );
        assert!(messages.is_empty(), "{messages:?}");
    }
}

#[test]
fn table_lists_every_tunable_then_diagnostics() {
    let out = tunables(b"rayforce.pool.workers=3:bogus", &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for t in &rayforce_rt::registry::TABLE {
        assert!(text.contains(t.name), "{} missing:\n{text}", t.name);
    }
    let workers = text
        .lines()
        .find(|l| l.starts_with("rayforce.pool.workers"))
        .unwrap();
    assert!(
        workers.contains(" 3 ") && workers.ends_with("RAYFORCE_TUNABLES"),
        "{workers}"
    );
    assert!(
        text.contains("diagnostics:") && text.contains("`bogus`: expected name=value"),
        "{text}"
    );
}

#[test]
fn strict_mode_fails_with_exit_2_and_diagnostics_on_stderr() {
    let out = tunables(b"rayforce.tunables.strict=1:rayforce.pool.spinn=3", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("rayforce.pool.spinn=3") && stderr.contains("strict"),
        "{stderr}"
    );
    let clean = tunables(b"rayforce.tunables.strict=1:rayforce.pool.spin_us=3", &[]);
    assert_eq!(clean.status.code(), Some(0));
}

#[test]
fn strict_mode_stops_every_subcommand_before_it_runs() {
    for subcommand in [
        &["inspect"][..],
        &["inspect", "--json"],
        &["compare", "--quick"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
            .args(subcommand)
            .env(
                "RAYFORCE_TUNABLES",
                "rayforce.tunables.strict=1:rayforce.pool.spinn=3",
            )
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{subcommand:?}");
        assert!(out.stdout.is_empty(), "{subcommand:?}: nothing ran");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("rayforce.pool.spinn=3") && stderr.contains("strict"),
            "{subcommand:?}: {stderr}"
        );
    }
}

#[test]
fn a_closed_pipe_ends_the_listing_quietly_and_no_subcommand_prints_the_usage() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    // A reader that is gone before the first line (`| true`): the write's SIGPIPE ends
    // the process, as other tools; no panic message.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .arg("tunables")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{}: {stderr}",
        out.status
    );

    let out = Command::new(env!("CARGO_BIN_EXE_rayforce-rt"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Usage:") && stderr.contains("tunables"),
        "{stderr}"
    );
}
