//! The pool against rayon (same width) and `std::thread::scope`, in wall time and in
//! process CPU time, in one run: empty-dispatch round trip by width, alternating narrow and
//! wide dispatches, a parallel sum of 64M u64; then the spin_count sweep, back to back and
//! bursty (two ~2.7 us tasks, then 200 us idle). Results: BENCHMARKS.md.
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::{small_task, ProcessCpuTime};
use criterion::measurement::{Measurement, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rayforce_pool::Pool;
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const WIDTHS: [usize; 2] = [2, 4];
const SUM_LEN: usize = 64 << 20;
const SPIN_COUNTS: [u32; 7] = [0, 8, 17, 35, 70, 140, 280];
const BURST_GAP: Duration = Duration::from_micros(200);

fn our_pool(width: usize) -> Pool {
    Pool::builder()
        .workers(width)
        .wide_workers(width)
        .build()
        .unwrap()
}

fn rayon_pool(width: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(width)
        .build()
        .unwrap()
}

/// Empty dispatch of `width` tasks, called from outside the pool.
fn round_trip<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    let mut group = c.benchmark_group(format!("round_trip_{label}"));
    for width in WIDTHS {
        let pool = our_pool(width);
        group.bench_function(BenchmarkId::new("rayforce", width), |b| {
            b.iter(|| {
                pool.dispatch(width, |i| {
                    black_box(i);
                })
            })
        });
        let rayon = rayon_pool(width);
        group.bench_function(BenchmarkId::new("rayon", width), |b| {
            b.iter(|| {
                rayon.install(|| {
                    if width == 2 {
                        rayon::join(|| black_box(0), || black_box(1));
                    } else {
                        (0..width).into_par_iter().for_each(|i| {
                            black_box(i);
                        });
                    }
                })
            })
        });
        group.bench_function(BenchmarkId::new("thread_scope", width), |b| {
            b.iter(|| {
                std::thread::scope(|s| {
                    for i in 1..width {
                        s.spawn(move || black_box(i));
                    }
                    black_box(0)
                })
            })
        });
    }
    group.finish();
}

/// Narrow (2 small tasks) and wide (2 x width small tasks) dispatches, alternating.
fn alternating<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    let width = 4;
    let mut group = c.benchmark_group(format!("alternating_{label}"));
    let pool = our_pool(width);
    group.bench_function(BenchmarkId::new("rayforce", width), |b| {
        b.iter(|| {
            pool.dispatch(2, |i| {
                small_task(i);
            });
            pool.dispatch_wide(2 * width, |i| {
                small_task(i);
            });
        })
    });
    let rayon = rayon_pool(width);
    group.bench_function(BenchmarkId::new("rayon", width), |b| {
        b.iter(|| {
            rayon.install(|| {
                rayon::join(|| small_task(0), || small_task(1));
                (0..2 * width).into_par_iter().for_each(|i| {
                    small_task(i);
                });
            })
        })
    });
    group.finish();
}

/// Sum of 64M u64 (512 MiB): bandwidth-bound.
fn parallel_sum<M: Measurement>(c: &mut Criterion<M>, label: &str, data: &[u64]) {
    let width = 2;
    let chunks = 8 * width;
    let chunk = data.len().div_ceil(chunks);
    let expected: u64 = data.iter().sum();
    let mut group = c.benchmark_group(format!("sum_64m_{label}"));
    group.sample_size(10);
    let pool = our_pool(width);
    group.bench_function(BenchmarkId::new("rayforce", width), |b| {
        b.iter(|| {
            let total = AtomicU64::new(0);
            pool.dispatch(chunks, |i| {
                let part: u64 = data[i * chunk..((i + 1) * chunk).min(data.len())]
                    .iter()
                    .sum();
                total.fetch_add(part, Ordering::Relaxed);
            });
            assert_eq!(total.into_inner(), expected);
        })
    });
    let rayon = rayon_pool(width);
    group.bench_function(BenchmarkId::new("rayon", width), |b| {
        b.iter(|| {
            assert_eq!(
                rayon.install(|| data
                    .par_chunks(chunk)
                    .map(|c| c.iter().sum::<u64>())
                    .sum::<u64>()),
                expected
            )
        })
    });
    group.bench_function(BenchmarkId::new("thread_scope", width), |b| {
        b.iter(|| {
            let (first, second) = data.split_at(data.len() / 2);
            let total: u64 = std::thread::scope(|s| {
                let helper = s.spawn(|| second.iter().sum::<u64>());
                first.iter().sum::<u64>() + helper.join().unwrap()
            });
            assert_eq!(total, expected);
        })
    });
    group.finish();
}

/// `iters` dispatches of two small tasks; with `gap`, each followed by that much idle time.
/// Returns (wall time inside the dispatches, process CPU time of the whole loop): the CPU
/// spent spinning through the gaps is the cost a spin count trades for latency.
fn burst_loop(iters: u64, gap: Option<Duration>, dispatch: &dyn Fn()) -> (Duration, Duration) {
    let cpu_start = rayforce_rt::process_cpu_time();
    let mut wall = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        dispatch();
        wall += start.elapsed();
        if let Some(gap) = gap {
            let idle_until = Instant::now() + gap;
            while Instant::now() < idle_until {
                std::thread::sleep(idle_until - Instant::now());
            }
        }
    }
    (wall, rayforce_rt::process_cpu_time() - cpu_start)
}

/// The spin_count sweep, and rayon beside it, in wall (`pick_cpu == false`) or CPU time.
fn spin_sweep<M: Measurement<Value = Duration>>(c: &mut Criterion<M>, label: &str, pick_cpu: bool) {
    let pick = |(wall, cpu): (Duration, Duration)| if pick_cpu { cpu } else { wall };
    for (pattern, gap) in [("back_to_back", None), ("bursty", Some(BURST_GAP))] {
        let mut group = c.benchmark_group(format!("spin_{pattern}_{label}"));
        group.sample_size(20);
        group.measurement_time(Duration::from_secs(2));
        for spins in SPIN_COUNTS {
            let pool = Pool::builder()
                .workers(2)
                .spin_count(spins)
                .build()
                .unwrap();
            let dispatch = || {
                pool.dispatch(2, |i| {
                    small_task(i);
                })
            };
            group.bench_function(BenchmarkId::new("rayforce", spins), |b| {
                b.iter_custom(|iters| pick(burst_loop(iters, gap, &dispatch)))
            });
        }
        let rayon = rayon_pool(2);
        let dispatch = || {
            black_box(rayon.install(|| rayon::join(|| small_task(0), || small_task(1))));
        };
        group.bench_function("rayon", |b| {
            b.iter_custom(|iters| pick(burst_loop(iters, gap, &dispatch)))
        });
        group.finish();
    }
}

fn sum_data() -> Vec<u64> {
    (0..SUM_LEN as u64).collect()
}

fn wall(c: &mut Criterion<WallTime>) {
    round_trip(c, "wall");
    alternating(c, "wall");
    parallel_sum(c, "wall", &sum_data());
    spin_sweep(c, "wall", false);
}

fn cpu(c: &mut Criterion<ProcessCpuTime>) {
    round_trip(c, "cpu");
    alternating(c, "cpu");
    parallel_sum(c, "cpu", &sum_data());
    spin_sweep(c, "cpu", true);
}

criterion_group! {
    name = wall_time;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = wall
}
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(ProcessCpuTime).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = cpu
}
criterion_main!(wall_time, cpu_time);
