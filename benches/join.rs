//! Fork-join against rayon's and chili's `join` (each inside its own pool of the same width:
//! rayon's whole loop inside one `install`, chili's in one scope): an empty join (nobody
//! takes the second half), and recursive Fibonacci by `join` with no cut-off (rayon-demo's
//! `fib_join`) against the same recursion run serially (plain calls) and by `join` on a
//! pool of one (the same code, nothing offered). Wall time and process CPU time.
//! Run one implementation per process (their spinning threads would steal each other's
//! CPU): `cargo bench --bench join -- 'join_wall/fib/rayon'`, and so on; results checked
//! equal to serial's first. Results: BENCHMARKS.md, "Fork-join".
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::ProcessCpuTime;
use criterion::measurement::{Measurement, WallTime};
use criterion::{BenchmarkId, Criterion};
use rayforce_pool::Pool;
use std::hint::black_box;
use std::num::NonZero;
use std::time::Duration;

const WIDTH: usize = 2;
const FIB: [u64; 3] = [25, 30, 32];

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    fib_serial(n - 1) + fib_serial(n - 2)
}

fn fib_rayforce(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayforce_pool::join(|| fib_rayforce(n - 1), || fib_rayforce(n - 2));
    a + b
}

fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}

fn bench<M>(c: &mut Criterion<M>, label: &str)
where
    M: Measurement + Sync + 'static,
    M::Value: Send,
{
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let alone = Pool::builder().workers(1).build().unwrap();
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(WIDTH)
        .build()
        .unwrap();
    let chili = chili::ThreadPool::with_config(chili::Config {
        thread_count: NonZero::new(WIDTH),
        ..chili::Config::default()
    });
    let mut group = c.benchmark_group(format!("join_{label}"));
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));

    group.bench_function("empty/rayforce", |b| {
        pool.install(|| b.iter(|| rayforce_pool::join(|| black_box(1), || black_box(2))))
    });
    group.bench_function("empty/rayon", |b| {
        rayon.install(|| b.iter(|| rayon::join(|| black_box(1), || black_box(2))))
    });
    group.bench_function("empty/chili", |b| {
        let mut s = chili.scope();
        b.iter(|| s.join(|_| black_box(1), |_| black_box(2)))
    });

    for n in FIB {
        let expected = fib_serial(n);
        assert_eq!(pool.install(|| fib_rayforce(n)), expected);
        assert_eq!(rayon.install(|| fib_rayon(n)), expected);
        assert_eq!(fib_chili(&mut chili.scope(), n), expected);
        group.bench_function(BenchmarkId::new("fib/serial", n), |b| {
            b.iter(|| fib_serial(black_box(n)))
        });
        group.bench_function(BenchmarkId::new("fib/rayforce", n), |b| {
            pool.install(|| b.iter(|| fib_rayforce(black_box(n))))
        });
        group.bench_function(BenchmarkId::new("fib/rayforce_alone", n), |b| {
            alone.install(|| b.iter(|| fib_rayforce(black_box(n))))
        });
        group.bench_function(BenchmarkId::new("fib/rayon", n), |b| {
            rayon.install(|| b.iter(|| fib_rayon(black_box(n))))
        });
        group.bench_function(BenchmarkId::new("fib/chili", n), |b| {
            let mut s = chili.scope();
            b.iter(|| fib_chili(&mut s, black_box(n)))
        });
    }
    group.finish();
}

fn main() {
    let mut wall = Criterion::<WallTime>::default().configure_from_args();
    bench(&mut wall, "wall");
    let mut cpu = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .configure_from_args();
    bench(&mut cpu, "cpu");
    Criterion::default().configure_from_args().final_summary();
}
