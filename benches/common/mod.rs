//! Shared by the benches: a criterion `Measurement` of process CPU time, so each bench is
//! reported twice, in wall time and in CPU time (all threads of the process).
#![allow(dead_code)] // each bench uses what it needs

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;
use rayforce_rt::process_cpu_time;
use std::time::Duration;

/// Criterion measurement: process CPU time consumed during the timed routine.
pub struct ProcessCpuTime;

impl Measurement for ProcessCpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        process_cpu_time()
    }

    fn end(&self, start: Duration) -> Duration {
        process_cpu_time().saturating_sub(start)
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Formats nanoseconds of CPU time as `ns`, `us`, `ms` or `s` "cpu".
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns cpu"),
            t if t < 1e6 => (1e-3, "us cpu"),
            t if t < 1e9 => (1e-6, "ms cpu"),
            _ => (1e-9, "s cpu"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        _throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        values.iter_mut().for_each(|v| *v = 1e9 / *v);
        "ops/cpu-s"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// About 2.7 us of arithmetic on this kind of machine (the alternating benchmark's task).
pub fn small_task(seed: usize) -> u64 {
    work::spin_work(seed as u64, 2_000)
}

pub mod compare;
pub mod nbody;
pub mod selected_alloc;
pub mod work;

/// Lets every helper of pools measured before fall asleep (their spin windows are far
/// shorter), so that no spinning thread steals CPU from the next measurement.
pub fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(30));
}
