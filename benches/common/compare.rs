//! One shape at one size, several implementations side by side: each result checked equal
//! to serial code's first, then each timed in wall or process CPU time with the others'
//! threads asleep; rayon's inside one `install`, its strongest form.

use super::settle;
use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, BenchmarkId};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Whether a group measures wall time (false: process CPU time).
#[derive(Clone, Copy)]
pub struct Clock(pub bool);

impl Clock {
    /// `iters` runs of `run`, in the clock's time.
    pub fn time(self, iters: u64, run: &dyn Fn()) -> Duration {
        let (cpu, wall) = (rayforce_rt::process_cpu_time(), Instant::now());
        (0..iters).for_each(|_| run());
        if self.0 {
            wall.elapsed()
        } else {
            rayforce_rt::process_cpu_time() - cpu
        }
    }
}

/// An implementation: its row's name, and whether it runs inside rayon's pool.
pub struct Contender<'a, T> {
    pub name: &'static str,
    pub in_rayon: bool,
    pub run: &'a (dyn Fn() -> T + Sync),
}

/// `serial`, then each contender, at `n` items, as rows `{shape}/{name}` of size `1eK`.
pub fn compare<M, T>(
    group: &mut BenchmarkGroup<'_, M>,
    clock: Clock,
    shape: &str,
    n: usize,
    rayon: &rayon::ThreadPool,
    serial: &(dyn Fn() -> T + Sync),
    contenders: &[Contender<'_, T>],
) where
    M: Measurement<Value = Duration>,
    T: PartialEq + std::fmt::Debug + Send,
{
    let expected = serial();
    for contender in contenders {
        let got = if contender.in_rayon {
            rayon.install(contender.run)
        } else {
            (contender.run)()
        };
        assert_eq!(got, expected, "{shape} at {n}: {}", contender.name);
    }
    let label = format!("1e{}", n.ilog10());
    settle();
    group.bench_function(BenchmarkId::new(format!("{shape}/serial"), &label), |b| {
        b.iter_custom(|iters| clock.time(iters, &|| drop(black_box(serial()))))
    });
    for contender in contenders {
        let run = || drop(black_box((contender.run)()));
        group.bench_function(
            BenchmarkId::new(format!("{shape}/{}", contender.name), &label),
            |b| {
                b.iter_custom(|iters| {
                    if contender.in_rayon {
                        rayon.install(|| clock.time(iters, &run))
                    } else {
                        clock.time(iters, &run)
                    }
                })
            },
        );
        settle();
    }
}

/// The pool's and rayon's forms of one shape: rows `rayforce` and `rayon`.
#[allow(clippy::too_many_arguments)]
pub fn pool_and_rayon<M, T>(
    group: &mut BenchmarkGroup<'_, M>,
    clock: Clock,
    shape: &str,
    n: usize,
    rayon: &rayon::ThreadPool,
    serial: &(dyn Fn() -> T + Sync),
    on_pool: &(dyn Fn() -> T + Sync),
    on_rayon: &(dyn Fn() -> T + Sync),
) where
    M: Measurement<Value = Duration>,
    T: PartialEq + std::fmt::Debug + Send,
{
    let contenders = [
        Contender {
            name: "rayforce",
            in_rayon: false,
            run: on_pool,
        },
        Contender {
            name: "rayon",
            in_rayon: true,
            run: on_rayon,
        },
    ];
    compare(group, clock, shape, n, rayon, serial, &contenders);
}
