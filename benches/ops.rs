//! The data-parallel operations against rayon's equivalents (its whole loop inside one
//! `install`, its strongest form) and serial code, at 1e3, 1e5 and 1e7 items, in wall time
//! and in process CPU time: map into a `Vec` (a slice of u64 to u64, and about 20 ns of
//! work per index), sum of squares of f32, `out[i] = a[i] + b[i]` (with `parts_mut`), a
//! group-by of 1e6 keys into 1e4 groups with one hash map per participant, a histogram of
//! the same keys into 16 counts per participant (a state written at every item),
//! `position_any_slice` with the match at 10% and at 90%, and a prefix sum of u64 into an
//! output kept from run to run (rayon has none: against serial code); and a sum of squares
//! that starts after an idle spell, with every thread asleep. Every run's result is checked
//! against serial code's first. Results: BENCHMARKS.md, "Data-parallel operations".
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::compare::{pool_and_rayon, Clock};
use common::work::spin_work;
use common::ProcessCpuTime;
use criterion::measurement::{Measurement, WallTime};
use criterion::{BenchmarkId, Criterion};
use rayforce_pool::Pool;
use rayforce_pool::{ParallelEach, ParallelFind, ParallelFold, ParallelMap, ParallelScan};
use rayon::prelude::*;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WIDTH: usize = 2;
const SIZES: [usize; 3] = [1_000, 100_000, 10_000_000];

/// About 20 ns of arithmetic here (8 xorshift rounds).
fn twenty_ns(i: usize) -> u64 {
    spin_work(i as u64, 8)
}

fn operations<M: Measurement<Value = Duration>>(c: &mut Criterion<M>, label: &str, clock: Clock) {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(WIDTH)
        .build()
        .unwrap();
    let mut group = c.benchmark_group(format!("ops_{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    for n in SIZES {
        let r = &rayon;
        let mix = |i: usize| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // u64 -> u64 over a slice: one round of a hash finaliser on each value (over the
        // index instead, `mix` alone, the compiler turned the serial loop's multiplications
        // into additions, a shortcut no real map has).
        let values: Vec<u64> = (0..n).map(mix).collect();
        let finalise = |&x: &u64| (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        pool_and_rayon(
            &mut group,
            clock,
            "map",
            n,
            r,
            &|| values.iter().map(finalise).collect::<Vec<u64>>(),
            &|| pool.map_slice(&values, finalise),
            &|| values.par_iter().map(finalise).collect::<Vec<u64>>(),
        );
        pool_and_rayon(
            &mut group,
            clock,
            "map_20ns",
            n,
            r,
            &|| (0..n).map(twenty_ns).collect::<Vec<u64>>(),
            &|| pool.map(n, twenty_ns),
            &|| (0..n).into_par_iter().map(twenty_ns).collect::<Vec<u64>>(),
        );
        // Zeros and ones: every sum of their squares below 2^24 is exact in f32, so serial
        // code, the pool and rayon agree bit for bit whatever their grouping.
        let xs: Vec<f32> = (0..n).map(|i| (mix(i) >> 63) as f32).collect();
        pool_and_rayon(
            &mut group,
            clock,
            "sum_squares",
            n,
            r,
            &|| xs.iter().map(|x| x * x).sum::<f32>().to_bits(),
            &|| pool.sum(n, |i| xs[i] * xs[i]).to_bits(),
            &|| xs.par_iter().map(|x| x * x).sum::<f32>().to_bits(),
        );
        let (a, b): (Vec<u32>, Vec<u32>) = ((0..n as u32).collect(), (0..n as u32).rev().collect());
        pool_and_rayon(
            &mut group,
            clock,
            "add",
            n,
            r,
            &|| {
                let mut out = vec![0u32; n];
                out.iter_mut()
                    .zip(a.iter().zip(&b))
                    .for_each(|(o, (x, y))| *o = x + y);
                out
            },
            &|| {
                let mut out = vec![0u32; n];
                pool.parts_mut(&mut out, |offset, part| {
                    let (a, b) = (&a[offset..][..part.len()], &b[offset..][..part.len()]);
                    part.iter_mut()
                        .zip(a.iter().zip(b))
                        .for_each(|(o, (x, y))| *o = x + y);
                });
                out
            },
            &|| {
                let mut out = vec![0u32; n];
                out.par_iter_mut()
                    .zip(a.par_iter().zip(b.par_iter()))
                    .for_each(|(o, (x, y))| *o = x + y);
                out
            },
        );
        // A search of a haystack of distinct values, for one that sits at 10% or 90% (a
        // predicate the compiler cannot solve for the index, as it could `mix(i) == x`).
        let hay: Vec<u64> = (0..n).map(mix).collect();
        for (name, at) in [("find_10pct", n / 10), ("find_90pct", n * 9 / 10)] {
            let needle = black_box(hay[at]);
            pool_and_rayon(
                &mut group,
                clock,
                name,
                n,
                r,
                &|| hay.iter().position(|&v| v == needle),
                &|| pool.position_any_slice(&hay, |&v| v == needle),
                &|| hay.par_iter().position_any(|&v| v == needle),
            );
        }
        let values: Vec<u64> = (0..n as u64).map(|i| i % 1000).collect();
        // Each into an output of its own, made once, as a program that scans repeatedly
        // keeps one: the scan's cost, not the allocator's first touch of fresh pages (at
        // 1e7 that was most of both, and the pool's two threads faulting in one address
        // space pay more for it than one thread does). Each returns its last item; the
        // whole outputs are compared once first.
        let (serial_out, pool_out) = (Mutex::new(vec![0u64; n]), Mutex::new(vec![0u64; n]));
        let serial_scan = || {
            let mut out = serial_out.lock().unwrap();
            let mut acc = 0u64;
            for (o, v) in out.iter_mut().zip(&values) {
                acc += v;
                *o = acc;
            }
            out.last().copied()
        };
        let pool_scan = || {
            let mut out = pool_out.lock().unwrap();
            pool.scan_inclusive(&values, &mut out, |x, y| x + y);
            out.last().copied()
        };
        serial_scan();
        pool_scan();
        assert_eq!(
            *pool_out.lock().unwrap(),
            *serial_out.lock().unwrap(),
            "scan at {n}: the pool's whole output"
        );
        // No scan in rayon: serial code stands in its row.
        pool_and_rayon(
            &mut group,
            clock,
            "scan",
            n,
            r,
            &serial_scan,
            &pool_scan,
            &serial_scan,
        );
    }
    // The group-by: 1e6 keys into 1e4 groups.
    let n = 1_000_000;
    let keys: Vec<u32> = (0..n)
        .map(|i| ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as u32 % 10_000)
        .collect();
    let merge = |mut x: HashMap<u32, u64>, y: HashMap<u32, u64>| {
        for (k, v) in y {
            *x.entry(k).or_default() += v;
        }
        x
    };
    let sorted = |map: HashMap<u32, u64>| {
        let mut v: Vec<_> = map.into_iter().collect();
        v.sort_unstable();
        v
    };
    pool_and_rayon(
        &mut group,
        clock,
        "group_by",
        n,
        &rayon,
        &|| {
            let mut m = HashMap::new();
            for k in &keys {
                *m.entry(*k).or_default() += 1;
            }
            sorted(m)
        },
        &|| {
            sorted(pool.fold(
                keys.len(),
                HashMap::new,
                |m, i| *m.entry(keys[i]).or_default() += 1,
                merge,
            ))
        },
        &|| {
            sorted(
                keys.par_iter()
                    .fold(HashMap::new, |mut m, k| {
                        *m.entry(*k).or_default() += 1;
                        m
                    })
                    .reduce(HashMap::new, merge),
            )
        },
    );
    // The histogram: the same keys into 16 counts, a state written at every item.
    let bin = |k: u32| k as usize % 16;
    let add_counts = |mut x: [u64; 16], y: [u64; 16]| {
        x.iter_mut().zip(y).for_each(|(x, y)| *x += y);
        x
    };
    pool_and_rayon(
        &mut group,
        clock,
        "histogram",
        n,
        &rayon,
        &|| {
            let mut counts = [0u64; 16];
            for &k in &keys {
                counts[bin(k)] += 1;
            }
            counts
        },
        &|| {
            pool.fold(
                keys.len(),
                || [0u64; 16],
                |counts, i| counts[bin(keys[i])] += 1,
                add_counts,
            )
        },
        &|| {
            keys.par_iter()
                .fold(
                    || [0u64; 16],
                    |mut counts, &k| {
                        counts[bin(k)] += 1;
                        counts
                    },
                )
                .reduce(|| [0u64; 16], add_counts)
        },
    );
    group.finish();
}

/// Regions that start after the pool's threads fell asleep, as a query arriving after an
/// idle spell: every timed run follows 500 us of sleep, untimed, so a helper (or a rayon
/// worker) is woken from the kernel for it. Sum of squares of f32 from 1e4 to 1e6 items:
/// where waking a helper starts to repay its latency.
fn after_idle(c: &mut Criterion<WallTime>) {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(WIDTH)
        .build()
        .unwrap();
    let xs: Vec<f32> = (0..1_000_000)
        .map(|i: u64| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63) as f32)
        .collect();
    let timed = |iters: u64, run: &dyn Fn()| -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            std::thread::sleep(Duration::from_micros(500));
            let began = Instant::now();
            run();
            total += began.elapsed();
        }
        total
    };
    let mut group = c.benchmark_group("after_idle_wall");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for n in [10_000, 100_000, 300_000, 1_000_000] {
        let xs = &xs[..n];
        let serial = || xs.iter().map(|x| x * x).sum::<f32>();
        assert_eq!(pool.sum(n, |i| xs[i] * xs[i]), serial(), "the pool at {n}");
        assert_eq!(
            rayon.install(|| xs.par_iter().map(|x| x * x).sum::<f32>()),
            serial()
        );
        let label = format!("{n}");
        group.bench_function(BenchmarkId::new("serial", &label), |b| {
            b.iter_custom(|iters| {
                timed(iters, &|| {
                    black_box(serial());
                })
            })
        });
        group.bench_function(BenchmarkId::new("rayforce", &label), |b| {
            b.iter_custom(|iters| {
                timed(iters, &|| {
                    black_box(pool.sum(n, |i| xs[i] * xs[i]));
                })
            })
        });
        group.bench_function(BenchmarkId::new("rayon", &label), |b| {
            b.iter_custom(|iters| {
                rayon.install(|| {
                    timed(iters, &|| {
                        black_box(xs.par_iter().map(|x| x * x).sum::<f32>());
                    })
                })
            })
        });
    }
    group.finish();
}

/// Child for `benches/instructions.py ops`: `calls` calls of each operation on 1,000 items
/// on a pool of one (no helper, so the count is the operation's own path: the pipeline's
/// set-up, the loop, combining), through `counted_*` functions whose inclusive
/// instructions callgrind reports per call.
fn instructions_child(calls: u64) {
    let pool = Pool::builder().workers(1).build().unwrap();
    let xs: Vec<u64> = (0..1_000).collect();
    let fs: Vec<f32> = (0..1_000).map(|i| i as f32).collect();
    for _ in 0..calls {
        black_box(counted_map_slice(&pool, &xs));
        black_box(counted_sum(&pool, &fs));
    }
}

#[inline(never)]
fn counted_map_slice(pool: &Pool, xs: &[u64]) -> Vec<u64> {
    pool.map_slice(xs, |x| x * 3)
}

#[inline(never)]
fn counted_sum(pool: &Pool, xs: &[f32]) -> f32 {
    pool.sum(xs.len(), |i| xs[i] * xs[i])
}

fn main() {
    if let Ok(calls) = std::env::var("RAYFORCE_OPS_BENCH_INSTRUCTIONS") {
        return instructions_child(calls.parse().expect("a call count"));
    }
    let mut wall = Criterion::default().configure_from_args();
    operations::<WallTime>(&mut wall, "wall", Clock(true));
    after_idle(&mut wall);
    let mut cpu = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .configure_from_args();
    operations(&mut cpu, "cpu", Clock(false));
    Criterion::default().configure_from_args().final_summary();
}
