//! A setuid copy of the binary, run by an unprivileged user, ignores `RAYFORCE_TUNABLES`
//! (the kernel sets `AT_SECURE`), as glibc ignores `GLIBC_TUNABLES`. A plain copy run by
//! the same user applies it, which shows the difference is the setuid bit.
//!
//! Skips, saying why, only where it cannot make such a file or user: not root, or no
//! setuid-capable directory that the unprivileged user can reach.
#![cfg(target_os = "linux")]

mod common;

use serde_json::Value;
use std::os::unix::fs::{chown, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// `nobody` runs the copy; the copy belongs to `daemon`, so no root privilege is involved.
const RUNNER_UID: u32 = 65534;
const RUNNER_GID: u32 = 65534;
const OWNER_UID: u32 = 1;

/// Whether `dir`'s filesystem honours setuid bits.
fn allows_setuid(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: `stat` is plain data; zeroed is a valid value for the kernel to overwrite.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `stat` is a valid place to write.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut stat) };
    rc == 0 && stat.f_flag & libc::ST_NOSUID == 0
}

/// Runs `binary tunables --json` as the unprivileged user; the spin count's value and
/// source, and the diagnostic messages.
fn run_as_runner(binary: &Path) -> std::io::Result<(Value, Value, String)> {
    let out = Command::new(binary)
        .args(["tunables", "--json"])
        .env("RAYFORCE_TUNABLES", "rayforce.pool.spin_us=7")
        .uid(RUNNER_UID)
        .gid(RUNNER_GID)
        .output()?;
    let report: Value = serde_json::from_str(&common::success_stdout(out)).unwrap();
    let spin = common::tunable(&report, "rayforce.pool.spin_us").clone();
    Ok((
        spin["value"].clone(),
        spin["source"].clone(),
        report["diagnostics"].to_string(),
    ))
}

fn default_spin_us() -> u64 {
    rayforce_rt::registry::Id::SpinUs.tunable().default.unwrap()
}

#[test]
fn setuid_copy_ignores_the_variable() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: only root can make a file owned by another user and run as one");
        return;
    }
    let Some(parent) = [std::env::temp_dir(), env!("CARGO_TARGET_TMPDIR").into()]
        .into_iter()
        .find(|d| allows_setuid(d))
    else {
        eprintln!("skipping: every candidate directory is mounted nosuid");
        return;
    };
    let dir = tempfile::tempdir_in(parent).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.path().join("rayforce-rt");
    std::fs::copy(env!("CARGO_BIN_EXE_rayforce-rt"), &copy).unwrap();
    chown(&copy, Some(OWNER_UID), Some(OWNER_UID)).unwrap();

    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plain = match run_as_runner(&copy) {
        Ok(result) => result,
        Err(err) => {
            eprintln!(
                "skipping: the unprivileged user cannot run {}: {err}",
                copy.display()
            );
            return;
        }
    };
    assert_eq!(
        (plain.0, plain.1),
        (Value::from(7), Value::from("RAYFORCE_TUNABLES")),
        "control run"
    );

    // chown cleared any setuid bit, so set it after.
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let (value, source, diagnostics) = run_as_runner(&copy).unwrap();
    assert_eq!(
        (value, source),
        (Value::from(default_spin_us()), Value::from("default")),
        "setuid run"
    );
    assert!(diagnostics.contains("setuid or setgid"), "{diagnostics}");
}
