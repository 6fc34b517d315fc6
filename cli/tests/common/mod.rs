//! Helpers shared by the command line's tests.
#![allow(dead_code)] // each test binary uses a different subset

use serde_json::Value;

/// The entry for tunable `name` in the output of `rayforce-rt tunables --json`.
pub fn tunable<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tunables"]
        .as_array()
        .expect("a tunables array")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

/// The stdout of a command that must have succeeded (else its stderr in the panic).
pub fn success_stdout(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
