//! The parallel iterators against the index operations they stand on and against rayon's
//! same chain (inside one `install`, its strongest form), at 1e3, 1e5 and 1e7 items, in
//! wall time and in process CPU time: map into a `Vec`, sum of squares of f32, `a + b` by
//! `zip`, `position_first` and `position_any` with the match at 10% and at 90%, a group-by
//! into 1e3 groups with `fold` (a map per participant) then `reduce`, `filter(..).collect()`
//! at 50% and 1% selectivity, and a word count by `par_split_whitespace`. Rows `iter` (the
//! chain on the default pool), `index` (the index operation, where there is one), `rayon`;
//! every result checked against serial code's first. Results: BENCHMARKS.md, "Parallel
//! iterators".
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::compare::{compare, Clock, Contender};
use common::ProcessCpuTime;
use criterion::measurement::Measurement;
use criterion::Criterion;
use rayforce_pool::{ParallelEach, ParallelFind, ParallelFold, ParallelMap, Pool};
use std::collections::HashMap;
use std::time::Duration;

const WIDTH: usize = 2;
const SIZES: [usize; 3] = [1_000, 100_000, 10_000_000];

fn mix(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn ours<'a, T>(name: &'static str, run: &'a (dyn Fn() -> T + Sync)) -> Contender<'a, T> {
    Contender {
        name,
        in_rayon: false,
        run,
    }
}

fn rayons<T>(run: &(dyn Fn() -> T + Sync)) -> Contender<'_, T> {
    Contender {
        name: "rayon",
        in_rayon: true,
        run,
    }
}

/// A group-by's result, comparable: the groups in key order.
fn sorted(map: HashMap<u64, u64>) -> Vec<(u64, u64)> {
    let mut groups: Vec<_> = map.into_iter().collect();
    groups.sort_unstable();
    groups
}

fn merge(mut a: HashMap<u64, u64>, b: HashMap<u64, u64>) -> HashMap<u64, u64> {
    for (k, v) in b {
        *a.entry(k).or_default() += v;
    }
    a
}

/// The same chains, compiled once against each crate's prelude: only the `use` line
/// differs, as in a program moved from rayon.
macro_rules! chains {
    ($module:ident, $($prelude:tt)*) => {
        mod $module {
            use $($prelude)*;
            use std::collections::HashMap;

            pub fn map(values: &[u64]) -> Vec<u64> {
                values.par_iter().map(super::finalise).collect()
            }

            pub fn sum_squares(xs: &[f32]) -> u32 {
                xs.par_iter().map(|x| x * x).sum::<f32>().to_bits()
            }

            pub fn add(a: &[u32], b: &[u32]) -> Vec<u32> {
                let mut out = vec![0u32; a.len()];
                out.par_iter_mut()
                    .zip(a.par_iter().zip(b))
                    .for_each(|(o, (x, y))| *o = x + y);
                out
            }

            pub fn position_first(values: &[u64], needle: u64) -> Option<usize> {
                values.par_iter().position_first(|&v| v == needle)
            }

            pub fn position_any(values: &[u64], needle: u64) -> Option<usize> {
                values.par_iter().position_any(|&v| v == needle)
            }

            pub fn group_by(values: &[u64]) -> Vec<(u64, u64)> {
                let groups = values
                    .par_iter()
                    .fold(HashMap::new, super::count)
                    .reduce(HashMap::new, super::merge);
                super::sorted(groups)
            }

            pub fn filter_collect(values: &[u64], percent: u64) -> Vec<u64> {
                values.par_iter().copied().filter(|x| x % 100 < percent).collect()
            }

            pub fn word_count(text: &str) -> usize {
                text.par_split_whitespace().count()
            }
        }
    };
}

chains!(on_rayforce, rayforce_rt::prelude::*);
chains!(on_rayon, rayon::prelude::*);

fn finalise(&x: &u64) -> u64 {
    (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

fn group_of(x: &u64) -> u64 {
    x % 1000
}

fn count(mut groups: HashMap<u64, u64>, x: &u64) -> HashMap<u64, u64> {
    *groups.entry(group_of(x)).or_default() += 1;
    groups
}

fn iterators<M: Measurement<Value = Duration>>(
    c: &mut Criterion<M>,
    pool: &'static Pool,
    label: &str,
    clock: Clock,
) {
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(WIDTH)
        .build()
        .unwrap();
    let mut group = c.benchmark_group(format!("iter_{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    let g = &mut group;
    for n in SIZES {
        let r = &rayon;
        let values: Vec<u64> = (0..n).map(mix).collect();
        let v = &values;
        let serial = || v.iter().map(finalise).collect::<Vec<u64>>();
        compare(
            g,
            clock,
            "map",
            n,
            r,
            &serial,
            &[
                ours("iter", &|| on_rayforce::map(v)),
                ours("index", &|| pool.map_slice(v, finalise)),
                rayons(&|| on_rayon::map(v)),
            ],
        );

        // Zeros and ones: every sum of their squares below 2^24 is exact in f32.
        let xs: Vec<f32> = (0..n).map(|i| (mix(i) >> 63) as f32).collect();
        let xs = &xs;
        let serial = || xs.iter().map(|x| x * x).sum::<f32>().to_bits();
        compare(
            g,
            clock,
            "sum_squares",
            n,
            r,
            &serial,
            &[
                ours("iter", &|| on_rayforce::sum_squares(xs)),
                ours("index", &|| pool.sum(n, |i| xs[i] * xs[i]).to_bits()),
                rayons(&|| on_rayon::sum_squares(xs)),
            ],
        );

        let (a, b): (Vec<u32>, Vec<u32>) = ((0..n as u32).collect(), (0..n as u32).rev().collect());
        let (a, b) = (&a, &b);
        let by_parts = || {
            let mut out = vec![0u32; n];
            pool.parts_mut(&mut out, |offset, part| {
                let (a, b) = (&a[offset..][..part.len()], &b[offset..][..part.len()]);
                part.iter_mut()
                    .zip(a.iter().zip(b))
                    .for_each(|(o, (x, y))| *o = x + y);
            });
            out
        };
        let serial = || -> Vec<u32> { a.iter().zip(b).map(|(x, y)| x + y).collect() };
        compare(
            g,
            clock,
            "add",
            n,
            r,
            &serial,
            &[
                ours("iter", &|| on_rayforce::add(a, b)),
                ours("index", &by_parts),
                rayons(&|| on_rayon::add(a, b)),
            ],
        );

        // Distinct values; a predicate the compiler cannot solve for the index.
        for (tenths, at) in [(1, n / 10), (9, n * 9 / 10)] {
            let needle = std::hint::black_box(values[at]);
            let serial = || v.iter().position(|&x| x == needle);
            let shape = format!("position_first_{tenths}0pct");
            compare(
                g,
                clock,
                &shape,
                n,
                r,
                &serial,
                &[
                    ours("iter", &|| on_rayforce::position_first(v, needle)),
                    rayons(&|| on_rayon::position_first(v, needle)),
                ],
            );
            let shape = format!("position_any_{tenths}0pct");
            compare(
                g,
                clock,
                &shape,
                n,
                r,
                &serial,
                &[
                    ours("iter", &|| on_rayforce::position_any(v, needle)),
                    ours("index", &|| pool.position_any_slice(v, |&x| x == needle)),
                    rayons(&|| on_rayon::position_any(v, needle)),
                ],
            );
        }

        let by_index = || {
            let add =
                |m: &mut HashMap<u64, u64>, i: usize| *m.entry(group_of(&v[i])).or_default() += 1;
            sorted(pool.fold(n, HashMap::new, add, merge))
        };
        let serial = || sorted(v.iter().fold(HashMap::new(), count));
        compare(
            g,
            clock,
            "group_by",
            n,
            r,
            &serial,
            &[
                ours("iter", &|| on_rayforce::group_by(v)),
                ours("index", &by_index),
                rayons(&|| on_rayon::group_by(v)),
            ],
        );

        for percent in [50, 1] {
            let serial = || {
                v.iter()
                    .copied()
                    .filter(|x| x % 100 < percent)
                    .collect::<Vec<u64>>()
            };
            let shape = format!("filter_collect_{percent}pct");
            compare(
                g,
                clock,
                &shape,
                n,
                r,
                &serial,
                &[
                    ours("iter", &|| on_rayforce::filter_collect(v, percent)),
                    rayons(&|| on_rayon::filter_collect(v, percent)),
                ],
            );
        }

        // Words of 1 to 8 letters, one per item, separated by a space or a newline.
        let text: String = (0..n)
            .map(|i| {
                let word = &"abcdefgh"[..1 + (mix(i) >> 61) as usize];
                let gap = if mix(i) & 0xff < 16 { "\n" } else { " " };
                format!("{word}{gap}")
            })
            .collect();
        let text = &text;
        let serial = || text.split_whitespace().count();
        compare(
            g,
            clock,
            "word_count",
            n,
            r,
            &serial,
            &[
                ours("iter", &|| on_rayforce::word_count(text)),
                rayons(&|| on_rayon::word_count(text)),
            ],
        );
    }
    group.finish();
}

fn main() {
    let pool: &'static Pool = Box::leak(Box::new(Pool::builder().workers(WIDTH).build().unwrap()));
    assert!(
        pool.set_default(),
        "the iterators run on the index operations' pool"
    );
    let mut wall = Criterion::default().configure_from_args();
    iterators(&mut wall, pool, "wall", Clock(true));
    let mut cpu = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .configure_from_args();
    iterators(&mut cpu, pool, "cpu", Clock(false));
    Criterion::default().configure_from_args().final_summary();
}
