//! The pool against rayon (same width), serial code and `std::thread::scope`, in wall time
//! and in process CPU time, in one run: empty-dispatch round trip by width, against the
//! hardware's own round trip (one atomic handed back and forth between two spinning
//! threads), and with the periodic CPU re-check off and on; the N-body shape (two short
//! regions per step, back to back; against the same handoff between two spinning threads
//! as its limit); alternating
//! narrow and wide dispatches, a parallel sum of 64M u64; the task-size sweep (two tasks of
//! 5 us to 1 ms per dispatch, back to back and bursty); fine-grained dispatch (1e3 to 1e7
//! tiny tasks) and uneven tasks. Every benchmark builds its pools itself and lets them
//! fall asleep before the next one (`settle`), so no spinning helper of one implementation
//! steals CPU from another. Results: BENCHMARKS.md.
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::nbody::Bodies;
use common::work::{rounds_per_us, take_tiny_sum, tiny, Task};
use common::{settle, small_task, ProcessCpuTime};
use criterion::measurement::{Measurement, WallTime};
use criterion::{criterion_group, BenchmarkGroup, BenchmarkId, Criterion};
use rayforce_pool::Pool;
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const WIDTHS: [usize; 2] = [2, 4];
const SUM_LEN: usize = 64 << 20;

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
    ping_pong(&mut group);
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

/// The physical limit of a round trip between two cores: one atomic handed back and forth
/// between this thread and a spinning partner (each round trip: this thread writes an odd
/// value, the partner answers with the next even one).
fn ping_pong<M: Measurement>(group: &mut BenchmarkGroup<'_, M>) {
    let ball = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let seen = ball.load(Ordering::Acquire);
                if seen % 2 == 1 {
                    ball.store(seen + 1, Ordering::Release);
                }
                std::hint::spin_loop();
            }
        });
        let mut value = 0;
        group.bench_function(BenchmarkId::new("atomic_ping_pong", 2), |b| {
            b.iter(|| {
                value += 1;
                ball.store(value, Ordering::Release);
                value += 1;
                while ball.load(Ordering::Acquire) != value {
                    std::hint::spin_loop();
                }
            })
        });
        stop.store(true, Ordering::Relaxed);
    });
    settle();
}

/// The cost of following the machine: the empty round trip at width 2 with the periodic
/// re-check off (`recheck_ms = 0`) and at its default, interleaved in one run.
fn following<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    let mut group = c.benchmark_group(format!("follow_{label}"));
    for (name, recheck_ms) in [("recheck_ms=0", 0), ("recheck_ms=default", 1000)] {
        let pool = Pool::builder()
            .workers(2)
            .recheck_ms(recheck_ms)
            .build()
            .unwrap();
        group.bench_function(BenchmarkId::new("rayforce", name), |b| {
            b.iter(|| {
                pool.dispatch(2, |i| {
                    black_box(i);
                })
            })
        });
        drop(pool);
        settle();
    }
    group.finish();
}

/// What placement adds to a re-check (`Pool::refresh`, as the periodic re-check runs it):
/// floating helpers against placed ones whose mask did not change (the check reads the
/// process mask and each helper's), and the plan a placement change computes, on this
/// machine and on the 128-CPU, 4-node dump (a change then pins each helper: one
/// `sched_setaffinity` each).
fn placement<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    use rayforce_tunables::cpu::{self, Affinity, Place, SysRoot};
    let mut group = c.benchmark_group(format!("place_{label}"));
    for place in [Place::Off, Place::Spread] {
        let pool = Pool::builder().workers(2).place(place).build().unwrap();
        pool.dispatch(2, |i| {
            black_box(i);
        });
        group.bench_function(BenchmarkId::new("refresh", place), |b| {
            b.iter(|| black_box(pool.refresh()))
        });
        drop(pool);
        settle();
    }
    let dump = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/topology/arm-2p4n-clusters-128");
    for (name, root) in [
        ("this machine", SysRoot::SYSTEM),
        ("128 CPUs, 4 nodes", SysRoot::new(&dump)),
    ] {
        let mask = cpu::schedulable_cpus(root, Affinity::AllOnline);
        group.bench_function(BenchmarkId::new("plan", name), |b| {
            b.iter(|| black_box(cpu::plan(root, &mask, Place::Spread, usize::MAX)))
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

/// Task sizes of the sweep (two tasks per dispatch).
const TASK_US: [u64; 5] = [5, 20, 50, 200, 1000];
/// Bursty shapes: (task size, idle time after each dispatch).
const BURSTS: [(u64, u64); 2] = [(20, 200), (200, 1000)];
/// The ceilings of the `spin_us` sweep.
const SPIN_US: [u32; 7] = [0, 5, 10, 20, 50, 100, 200];

/// `iters` dispatches; with `gap`, each followed by that much idle time. Returns (wall time
/// inside the dispatches, process CPU time of the whole loop, idle gaps included): the CPU
/// a pool burns while nothing happens is the cost its spinning trades for latency.
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

/// One shape of two tasks per dispatch, for serial code, the pool and rayon, each with its
/// own pool, built for this benchmark and asleep again before the next.
fn two_task_shape<M: Measurement<Value = Duration>>(
    group: &mut BenchmarkGroup<'_, M>,
    name: &str,
    task: Task,
    gap: Option<Duration>,
    pick_cpu: bool,
) {
    let pick = |(wall, cpu): (Duration, Duration)| if pick_cpu { cpu } else { wall };
    settle();
    group.bench_function(BenchmarkId::new("serial", name), |b| {
        b.iter_custom(|iters| {
            pick(burst_loop(iters, gap, &|| {
                black_box(task.run(0) ^ task.run(1));
            }))
        })
    });
    settle();
    pool_then_rayon(group, name, 2, task, &|iters, dispatch| {
        pick(burst_loop(iters, gap, dispatch))
    });
}

/// Two tasks per dispatch on the pool, then on rayon, each on its own pool of `width`
/// (asleep again before the next): `drive(iters, dispatch)` runs the dispatches and returns
/// the time to report.
fn pool_then_rayon<M: Measurement<Value = Duration>>(
    group: &mut BenchmarkGroup<'_, M>,
    parameter: &str,
    width: usize,
    task: Task,
    drive: &dyn Fn(u64, &(dyn Fn() + Sync)) -> Duration,
) {
    let pool = our_pool(width);
    group.bench_function(BenchmarkId::new("rayforce", parameter), |b| {
        b.iter_custom(|iters| {
            drive(iters, &|| {
                pool.dispatch(2, |i| {
                    black_box(task.run(i));
                })
            })
        })
    });
    drop(pool);
    settle();
    let rayon = rayon_pool(width);
    group.bench_function(BenchmarkId::new("rayon", parameter), |b| {
        b.iter_custom(|iters| {
            drive(iters, &|| {
                black_box(rayon.install(|| rayon::join(|| task.run(0), || task.run(1))));
            })
        })
    });
}

/// The task-size sweep, back to back and bursty, in wall (`pick_cpu == false`) or CPU time.
fn task_sizes<M: Measurement<Value = Duration>>(c: &mut Criterion<M>, label: &str, pick_cpu: bool) {
    let rate = rounds_per_us();
    let mut group = c.benchmark_group(format!("task_size_{label}"));
    group.sample_size(10);
    for us in TASK_US {
        let task = Task::lasting(Duration::from_micros(us), rate);
        two_task_shape(&mut group, &format!("{us}us"), task, None, pick_cpu);
    }
    for (us, idle) in BURSTS {
        let task = Task::lasting(Duration::from_micros(us), rate);
        let gap = Some(Duration::from_micros(idle));
        two_task_shape(
            &mut group,
            &format!("{us}us_every_{idle}us"),
            task,
            gap,
            pick_cpu,
        );
    }
    group.finish();
}

/// The `spin_us` sweep over the same shapes, the pool alone (its peers are above).
fn spin_sweep<M: Measurement<Value = Duration>>(c: &mut Criterion<M>, label: &str, pick_cpu: bool) {
    let pick = |(wall, cpu): (Duration, Duration)| if pick_cpu { cpu } else { wall };
    let rate = rounds_per_us();
    let shapes = TASK_US
        .iter()
        .map(|&us| (format!("{us}us"), us, None))
        .chain(BURSTS.iter().map(|&(us, idle)| {
            let gap = Some(Duration::from_micros(idle));
            (format!("{us}us_every_{idle}us"), us, gap)
        }));
    let mut group = c.benchmark_group(format!("spin_us_{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    for (name, us, gap) in shapes {
        let task = Task::lasting(Duration::from_micros(us), rate);
        for spin_us in SPIN_US {
            settle();
            let pool = Pool::builder().workers(2).spin_us(spin_us).build().unwrap();
            group.bench_function(BenchmarkId::new(format!("spin_us={spin_us}"), &name), |b| {
                b.iter_custom(|iters| {
                    pick(burst_loop(iters, gap, &|| {
                        pool.dispatch(2, |i| {
                            black_box(task.run(i));
                        })
                    }))
                })
            });
        }
    }
    group.finish();
}

/// Callers that dispatch at once: `CALLERS` threads, each `CALLER_ROUNDS` back-to-back
/// dispatches of two 50 us tasks, on one 4-wide pool (rayon: `install` from each thread
/// into one 4-thread pool). Measures the time until every caller is done.
fn several_callers<M: Measurement<Value = Duration>>(
    c: &mut Criterion<M>,
    label: &str,
    pick_cpu: bool,
) {
    const CALLERS: usize = 2;
    const CALLER_ROUNDS: usize = 50;
    let pick = |(wall, cpu): (Duration, Duration)| if pick_cpu { cpu } else { wall };
    let task = Task::lasting(Duration::from_micros(50), rounds_per_us());
    let mut group = c.benchmark_group(format!("callers_{label}"));
    group.sample_size(10);
    let run_callers = |iters: u64, dispatch: &(dyn Fn() + Sync)| {
        let cpu_start = rayforce_rt::process_cpu_time();
        let start = Instant::now();
        for _ in 0..iters {
            std::thread::scope(|s| {
                for _ in 0..CALLERS {
                    s.spawn(|| (0..CALLER_ROUNDS).for_each(|_| dispatch()));
                }
            });
        }
        (start.elapsed(), rayforce_rt::process_cpu_time() - cpu_start)
    };
    settle();
    pool_then_rayon(
        &mut group,
        &CALLERS.to_string(),
        4,
        task,
        &|iters, dispatch| pick(run_callers(iters, dispatch)),
    );
    group.finish();
}

/// Fine-grained dispatch: `n` tiny tasks (add the index to a per-thread sum), against a
/// plain loop and rayon's `into_par_iter().for_each`.
fn fine_grained<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    let mut group = c.benchmark_group(format!("tiny_{label}"));
    group.sample_size(10);
    for n in [1_000usize, 100_000, 10_000_000] {
        let name = format!("1e{}", n.ilog10());
        settle();
        group.bench_function(BenchmarkId::new("loop", &name), |b| {
            b.iter(|| {
                for i in 0..n {
                    tiny(i);
                }
            })
        });
        take_tiny_sum();
        settle();
        let pool = our_pool(2);
        group.bench_function(BenchmarkId::new("rayforce", &name), |b| {
            b.iter(|| pool.dispatch(n, tiny))
        });
        drop(pool);
        settle();
        let rayon = rayon_pool(2);
        group.bench_function(BenchmarkId::new("rayon", &name), |b| {
            b.iter(|| rayon.install(|| (0..n).into_par_iter().for_each(tiny)))
        });
    }
    group.finish();
}

/// Uneven tasks: 10,000 tasks of about 1 us, eight of them 1000x longer, placed at random
/// (seeded) or all at the front. Against serial (the ideal split on 2 is half of it).
fn uneven<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    let rate = rounds_per_us();
    let short = Task::lasting(Duration::from_micros(1), rate);
    let long = Task::lasting(Duration::from_millis(1), rate);
    let n = 10_000;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let spread: Vec<usize> = (0..8)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        })
        .collect();
    let mut group = c.benchmark_group(format!("uneven_{label}"));
    group.sample_size(10);
    for (placement, longs) in [("spread", spread), ("front", (0..8).collect())] {
        let run = |i: usize| {
            black_box(if longs.contains(&i) { long } else { short }.run(i));
        };
        settle();
        group.bench_function(BenchmarkId::new("serial", placement), |b| {
            b.iter(|| (0..n).for_each(run))
        });
        settle();
        let pool = our_pool(2);
        group.bench_function(BenchmarkId::new("rayforce", placement), |b| {
            b.iter(|| pool.dispatch(n, run))
        });
    }
    group.finish();
}

/// Body counts of the N-body shape, 32 to 128 and the sizes around them.
const BODIES: [usize; 6] = [16, 24, 32, 48, 64, 128];

/// The N-body shape on two threads at their limit: the caller and one partner that spins
/// between regions, each region handed over with one atomic store and handed back with
/// another, as the round trip's ping-pong (what a pool adds is its own cost). Runs
/// `measure(step)` once the partner spins; the partner stops before it returns.
fn with_handoff<R>(bodies: &Bodies, measure: impl FnOnce(&dyn Fn()) -> R) -> R {
    let (go, done, stop) = (AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false));
    let ready = AtomicBool::new(false);
    // Region `e` is the forces for odd `e`, the integration for even; block 0 is the
    // caller's, block 1 the partner's.
    let run = |e: u64, block: usize| {
        let range = bodies.block(block, 2);
        if e % 2 == 1 {
            bodies.forces(range)
        } else {
            bodies.integrate(range)
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            ready.store(true, Ordering::Relaxed);
            let mut seen = 0;
            while !stop.load(Ordering::Relaxed) {
                // Acquire: pairs with the caller's Release store of `go`.
                let e = go.load(Ordering::Acquire);
                if e == seen {
                    std::hint::spin_loop();
                    continue;
                }
                seen = e;
                run(e, 1);
                // Release: pairs with the caller's Acquire load of `done`.
                done.store(e, Ordering::Release);
            }
        });
        while !ready.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        let epoch = std::cell::Cell::new(0);
        let region = || {
            let e = epoch.get() + 1;
            epoch.set(e);
            // Release: the previous region's writes reach the partner before it starts.
            go.store(e, Ordering::Release);
            run(e, 0);
            // Acquire: the partner's writes in this region are seen after it.
            while done.load(Ordering::Acquire) != e {
                std::hint::spin_loop();
            }
        };
        let result = measure(&|| {
            region();
            region();
        });
        stop.store(true, Ordering::Relaxed);
        result
    })
}

/// The N-body shape: each iteration is one step, two regions of one contiguous block per
/// participant. Serial code; the pool; rayon with the whole loop inside one `install`, its
/// strongest form (`join` of the two blocks); and the two-thread handoff, the limit
/// (`with_handoff`). Before timing, ten steps of each are checked equal, bit for bit, to ten
/// serial steps.
fn nbody<M: Measurement<Value = Duration>>(c: &mut Criterion<M>, label: &str, pick_cpu: bool) {
    let width = 2;
    let mut group = c.benchmark_group(format!("nbody_{label}"));
    // (wall, process CPU) of `iters` steps of `step`.
    let steps = |iters: u64, step: &dyn Fn()| {
        let cpu_start = rayforce_rt::process_cpu_time();
        let start = Instant::now();
        (0..iters).for_each(|_| step());
        let (wall, cpu) = (start.elapsed(), rayforce_rt::process_cpu_time() - cpu_start);
        if pick_cpu {
            cpu
        } else {
            wall
        }
    };
    for n in BODIES {
        let pool = our_pool(width);
        let rayon = rayon_pool(width);
        let pool_step = |bodies: &Bodies| {
            pool.dispatch(width, |t| bodies.forces(bodies.block(t, width)));
            pool.dispatch(width, |t| bodies.integrate(bodies.block(t, width)));
        };
        let rayon_step = |bodies: &Bodies| {
            let (a, b) = (bodies.block(0, width), bodies.block(1, width));
            rayon::join(|| bodies.forces(a.clone()), || bodies.forces(b.clone()));
            rayon::join(|| bodies.integrate(a), || bodies.integrate(b));
        };
        let serial_step = |bodies: &Bodies| {
            bodies.forces(0..bodies.len());
            bodies.integrate(0..bodies.len());
        };
        let ten_steps = |step: &(dyn Fn(&Bodies) + Sync)| {
            let bodies = Bodies::new(n);
            (0..10).for_each(|_| step(&bodies));
            bodies.snapshot()
        };
        let expected = ten_steps(&serial_step);
        assert_eq!(ten_steps(&pool_step), expected, "pool, {n} bodies");
        let on_rayon = rayon.install(|| ten_steps(&rayon_step));
        assert_eq!(on_rayon, expected, "rayon, {n} bodies");
        let handed_off = Bodies::new(n);
        with_handoff(&handed_off, |step| (0..10).for_each(|_| step()));
        assert_eq!(handed_off.snapshot(), expected, "handoff, {n} bodies");

        let bodies = Bodies::new(n);
        settle();
        group.bench_function(BenchmarkId::new("serial", n), |b| {
            b.iter_custom(|iters| steps(iters, &|| serial_step(&bodies)))
        });
        group.bench_function(BenchmarkId::new("rayforce", n), |b| {
            b.iter_custom(|iters| steps(iters, &|| pool_step(&bodies)))
        });
        drop(pool);
        settle();
        group.bench_function(BenchmarkId::new("rayon", n), |b| {
            b.iter_custom(|iters| rayon.install(|| steps(iters, &|| rayon_step(&bodies))))
        });
        drop(rayon);
        settle();
        // One partner for the whole measurement, so that no sample times a thread's start.
        with_handoff(&bodies, |step| {
            group.bench_function(BenchmarkId::new("handoff", n), |b| {
                b.iter_custom(|iters| steps(iters, step))
            });
        });
        settle();
    }
    group.finish();
}

fn sum_data() -> Vec<u64> {
    (0..SUM_LEN as u64).collect()
}

fn wall(c: &mut Criterion<WallTime>) {
    round_trip(c, "wall");
    nbody(c, "wall", false);
    following(c, "wall");
    alternating(c, "wall");
    parallel_sum(c, "wall", &sum_data());
    task_sizes(c, "wall", false);
    spin_sweep(c, "wall", false);
    several_callers(c, "wall", false);
    fine_grained(c, "wall");
    uneven(c, "wall");
    placement(c, "wall");
}

fn cpu(c: &mut Criterion<ProcessCpuTime>) {
    round_trip(c, "cpu");
    nbody(c, "cpu", true);
    following(c, "cpu");
    alternating(c, "cpu");
    parallel_sum(c, "cpu", &sum_data());
    task_sizes(c, "cpu", true);
    spin_sweep(c, "cpu", true);
    several_callers(c, "cpu", true);
    fine_grained(c, "cpu");
    uneven(c, "cpu");
}

/// Child for `benches/instructions.py pool`: `dispatches` empty two-task dispatches on a
/// two-wide pool through `counted_dispatch`, whose inclusive instructions callgrind reports
/// per call. The helper may spin as long as a pool lets it (`spin_us` at its maximum).
fn instructions_child(dispatches: u64) {
    let pool = Pool::builder().workers(2).spin_us(100_000).build().unwrap();
    for _ in 0..dispatches {
        counted_dispatch(&pool);
    }
}

#[inline(never)]
fn counted_dispatch(pool: &Pool) {
    pool.dispatch(2, |i| {
        black_box(i);
    });
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

fn main() {
    if let Ok(dispatches) = std::env::var("RAYFORCE_POOL_BENCH_INSTRUCTIONS") {
        return instructions_child(dispatches.parse().expect("a dispatch count"));
    }
    wall_time();
    cpu_time();
    Criterion::default().configure_from_args().final_summary();
}
