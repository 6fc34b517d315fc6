//! Start-up cost: one full CPU reading (online, affinity, topology, cgroup quota), on this
//! machine and on the largest fixture (128 CPUs), as the allocator's first call pays it.
//! The peer is `std::thread::available_parallelism`, what most pools size themselves by.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{criterion_group, criterion_main, Criterion};
use rayforce_rt::cpu::{self, Affinity, SysRoot};
use std::hint::black_box;
use std::path::PathBuf;

fn cpu_reading(c: &mut Criterion) {
    let largest =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/topology/arm64-kunpeng920-128");
    let mut group = c.benchmark_group("cpu_reading");
    group.bench_function("std_available_parallelism", |b| {
        b.iter(|| black_box(std::thread::available_parallelism()))
    });
    group.bench_function("this_machine", |b| b.iter(|| black_box(cpu::read())));
    group.bench_function("fixture_128_cpus", |b| {
        b.iter(|| black_box(cpu::read_at(SysRoot::new(&largest), Affinity::AllOnline)))
    });
    group.finish();
}

criterion_group!(benches, cpu_reading);
criterion_main!(benches);
