//! Helpers shared by the command line's tests.
#![allow(dead_code)] // each test binary uses a different subset

use serde_json::Value;

/// The library's test helpers (`success_stdout`, the cgroup group), shared rather than copied.
#[path = "../../../tests/common/mod.rs"]
mod library;

#[cfg(target_os = "linux")]
#[allow(unused_imports)] // as `dead_code` above: each test binary uses a different subset
pub use library::cgroup;
#[allow(unused_imports)]
pub use library::success_stdout;

/// The entry for tunable `name` in the output of `rayforce-rt tunables --json`.
pub fn tunable<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tunables"]
        .as_array()
        .expect("a tunables array")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}
