//! The parallel sorts against rayon's and against voracious's multi-threaded radix sort,
//! each inside its own pool of the same width, and against `std`'s serial sort, at 1e3, 1e5
//! and 1e7 items of `u32`, `u64`, `f64` and records (`Record(key, payload)`, two `u64`s,
//! sorted by key), each drawn three ways: `uniform` (xorshift), `skewed` (Zipf-like, s = 1
//! over 1e6 distinct values: the key is the rank `floor(1e6^u) - 1` for `u` uniform in
//! [0, 1), so `P(k)` is about `1 / ((k + 1) ln 1e6)` and half the keys are below 1e3) and
//! `sorted` (the uniform input, already in order). Wall time and process CPU time.
//!
//! Rows (throughout, `f64` by `total_cmp` and records by key: `.._by(f64::total_cmp)`,
//! `.._by_key(|r| r.0)`): `serial` (`std`'s `sort_unstable`); `rayon` (`par_sort_unstable`)
//! and `rayon_stable` (`par_sort`) inside one `install` of a rayon pool; `voracious`
//! (`voracious_mt_sort(2)`, unstable: records through its `Radixable<u64>` on the key, it
//! sorts no tuples; below 2.5e6 `u32`s, 2e6 `u64`s or 8e5 `f64`s it hands over to rayon's
//! `par_sort_unstable_by` on the current rayon pool, so it runs inside the same rayon
//! `install` and its 1e3 and 1e5 rows of those types are rayon's sort; above, each call
//! builds a rayon pool of 2 threads, counted, as its API does it; records below 1.28e5 it
//! sorts on the calling thread); `rayforce` (`par_sort_unstable`), `rayforce_stable`
//! (`par_sort`) and `rayforce_radix` (`par_radix_sort`, records by
//! `par_radix_sort_by_key(|r| r.0)`) inside one `install` of a rayforce pool. Each row's
//! input is cloned outside the timing; before a row is timed its result is checked against
//! `std`'s stable sort of the same input: the keys (`f64` bit for bit) for unstable sorts,
//! whole records for stable ones.
//!
//! Run one implementation per process (their spinning threads would steal each other's
//! CPU), ending the name with `/` (`rayforce/` is no prefix of `rayforce_radix/`):
//! `cargo bench --bench sort -- 'sort_(wall|cpu)/[a-z0-9_]+/rayforce_radix/'`, and so on.
//!
//! Every implementation allocates through the system's allocator, or, with
//! `RAYFORCE_BENCH_ALLOC=runtime`, through the runtime's (as a program that sets
//! `rayforce_rt::Runtime` as its global allocator does); the groups are then named
//! `sort_runtime_wall` and `sort_runtime_cpu`.
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::selected_alloc::SelectedAlloc;
use common::ProcessCpuTime;
use criterion::measurement::{Measurement, WallTime};
use criterion::{BatchSize, BenchmarkGroup, BenchmarkId, Criterion};
use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::cmp::Ordering;
use std::sync::OnceLock;
use std::time::Duration;
use voracious_radix_sort::{RadixSort, Radixable};

#[global_allocator]
static ALLOC: SelectedAlloc = SelectedAlloc;

const WIDTH: usize = 2;
const SIZES: [usize; 3] = [1_000, 100_000, 10_000_000];
/// How many distinct keys the skewed inputs draw from.
const DISTINCT: u64 = 1_000_000;

/// A record: a key and a payload (the item's place in the input drawn). Equal and ordered by
/// key alone, as voracious's `Radixable` (which needs `PartialOrd`) reads it; the checks
/// compare the fields.
#[derive(Clone, Copy, Debug)]
struct Record(u64, u64);

impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl PartialOrd for Record {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.0.partial_cmp(&other.0)
    }
}

impl Radixable<u64> for Record {
    type Key = u64;
    fn key(&self) -> u64 {
        self.0
    }
}

/// The same sorts, compiled once against each crate's prelude: only the `use` line differs.
macro_rules! sorts {
    ($module:ident, $($prelude:tt)*) => {
        mod $module {
            use $($prelude)*;
            use std::cmp::Ordering;

            pub fn unstable<T: Ord + Send>(v: &mut [T]) {
                v.par_sort_unstable();
            }

            pub fn stable<T: Ord + Send>(v: &mut [T]) {
                v.par_sort();
            }

            pub fn unstable_by<T: Send>(v: &mut [T], f: impl Fn(&T, &T) -> Ordering + Sync) {
                v.par_sort_unstable_by(f);
            }

            pub fn stable_by<T: Send>(v: &mut [T], f: impl Fn(&T, &T) -> Ordering + Sync) {
                v.par_sort_by(f);
            }

            pub fn unstable_by_key<T: Send, K: Ord>(v: &mut [T], f: impl Fn(&T) -> K + Sync) {
                v.par_sort_unstable_by_key(f);
            }

            pub fn stable_by_key<T: Send, K: Ord>(v: &mut [T], f: impl Fn(&T) -> K + Sync) {
                v.par_sort_by_key(f);
            }
        }
    };
}

sorts!(on_rayforce, rayforce_pool::prelude::*);
sorts!(on_rayon, rayon::prelude::*);

/// A key type of the rows: how it is drawn, what a check compares, and each sort of it.
trait Item: Copy + Send + Sync + 'static {
    /// The type's name in the benchmark ids.
    const NAME: &'static str;
    /// The item drawn from `x`, uniform over 64 bits, at place `index`.
    fn uniform(x: u64, index: usize) -> Self;
    /// The item of key `rank` (below `DISTINCT`), at place `index`.
    fn ranked(rank: u64, index: usize) -> Self;
    /// What the checks compare: the key's bits, and a record's payload when `whole`.
    fn view(&self, whole: bool) -> (u64, u64);
    fn serial(v: &mut [Self]);
    fn serial_stable(v: &mut [Self]);
    fn rayon(v: &mut [Self]);
    fn rayon_stable(v: &mut [Self]);
    fn voracious(v: &mut [Self]);
    fn rayforce(v: &mut [Self]);
    fn rayforce_stable(v: &mut [Self]);
    fn rayforce_radix(v: &mut [Self]);
}

macro_rules! integer_item {
    ($t:ty, $name:literal, |$x:ident| $from_uniform:expr) => {
        impl Item for $t {
            const NAME: &'static str = $name;
            fn uniform($x: u64, _index: usize) -> Self {
                $from_uniform
            }
            fn ranked(rank: u64, _index: usize) -> Self {
                rank as $t
            }
            fn view(&self, _whole: bool) -> (u64, u64) {
                (u64::from(*self), 0)
            }
            fn serial(v: &mut [Self]) {
                v.sort_unstable();
            }
            fn serial_stable(v: &mut [Self]) {
                v.sort();
            }
            fn rayon(v: &mut [Self]) {
                on_rayon::unstable(v);
            }
            fn rayon_stable(v: &mut [Self]) {
                on_rayon::stable(v);
            }
            fn voracious(v: &mut [Self]) {
                v.voracious_mt_sort(WIDTH);
            }
            fn rayforce(v: &mut [Self]) {
                on_rayforce::unstable(v);
            }
            fn rayforce_stable(v: &mut [Self]) {
                on_rayforce::stable(v);
            }
            fn rayforce_radix(v: &mut [Self]) {
                v.par_radix_sort();
            }
        }
    };
}

integer_item!(u32, "u32", |x| (x >> 32) as u32);
integer_item!(u64, "u64", |x| x);

impl Item for f64 {
    const NAME: &'static str = "f64";
    fn uniform(x: u64, _index: usize) -> Self {
        unit(x)
    }
    fn ranked(rank: u64, _index: usize) -> Self {
        rank as f64
    }
    fn view(&self, _whole: bool) -> (u64, u64) {
        (self.to_bits(), 0)
    }
    fn serial(v: &mut [Self]) {
        v.sort_unstable_by(f64::total_cmp);
    }
    fn serial_stable(v: &mut [Self]) {
        v.sort_by(f64::total_cmp);
    }
    fn rayon(v: &mut [Self]) {
        on_rayon::unstable_by(v, f64::total_cmp);
    }
    fn rayon_stable(v: &mut [Self]) {
        on_rayon::stable_by(v, f64::total_cmp);
    }
    fn voracious(v: &mut [Self]) {
        v.voracious_mt_sort(WIDTH);
    }
    fn rayforce(v: &mut [Self]) {
        on_rayforce::unstable_by(v, f64::total_cmp);
    }
    fn rayforce_stable(v: &mut [Self]) {
        on_rayforce::stable_by(v, f64::total_cmp);
    }
    fn rayforce_radix(v: &mut [Self]) {
        v.par_radix_sort();
    }
}

impl Item for Record {
    const NAME: &'static str = "record";
    fn uniform(x: u64, index: usize) -> Self {
        Record(x, index as u64)
    }
    fn ranked(rank: u64, index: usize) -> Self {
        Record(rank, index as u64)
    }
    fn view(&self, whole: bool) -> (u64, u64) {
        (self.0, if whole { self.1 } else { 0 })
    }
    fn serial(v: &mut [Self]) {
        v.sort_unstable_by_key(|r| r.0);
    }
    fn serial_stable(v: &mut [Self]) {
        v.sort_by_key(|r| r.0);
    }
    fn rayon(v: &mut [Self]) {
        on_rayon::unstable_by_key(v, |r| r.0);
    }
    fn rayon_stable(v: &mut [Self]) {
        on_rayon::stable_by_key(v, |r| r.0);
    }
    fn voracious(v: &mut [Self]) {
        v.voracious_mt_sort(WIDTH);
    }
    fn rayforce(v: &mut [Self]) {
        on_rayforce::unstable_by_key(v, |r| r.0);
    }
    fn rayforce_stable(v: &mut [Self]) {
        on_rayforce::stable_by_key(v, |r| r.0);
    }
    fn rayforce_radix(v: &mut [Self]) {
        v.par_radix_sort_by_key(|r| r.0);
    }
}

/// `x`'s top 53 bits as a float in [0, 1).
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The Zipf-like rank (s = 1) of a uniform `x`: `floor(DISTINCT^u) - 1`, below `DISTINCT`.
fn zipf_rank(x: u64) -> u64 {
    (DISTINCT as f64).powf(unit(x)) as u64 - 1
}

#[derive(Clone, Copy)]
enum Dist {
    Uniform,
    Skewed,
    Sorted,
}

impl Dist {
    fn name(self) -> &'static str {
        match self {
            Dist::Uniform => "uniform",
            Dist::Skewed => "skewed",
            Dist::Sorted => "sorted",
        }
    }

    /// `n` items (xorshift, fixed seed).
    fn draw<T: Item>(self, n: usize) -> Vec<T> {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut v: Vec<T> = (0..n)
            .map(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                match self {
                    Dist::Skewed => T::ranked(zipf_rank(seed), i),
                    Dist::Uniform | Dist::Sorted => T::uniform(seed, i),
                }
            })
            .collect();
        if let Dist::Sorted = self {
            T::serial_stable(&mut v);
        }
        v
    }
}

/// Where a row runs: on the calling thread, or inside one `install` of a pool.
#[derive(Clone, Copy)]
enum On {
    Caller,
    Rayon,
    Rayforce,
}

struct Row<T> {
    name: &'static str,
    on: On,
    /// Stable: checked whole records, else keys only.
    stable: bool,
    sort: fn(&mut [T]),
}

fn rows<T: Item>() -> [Row<T>; 7] {
    let row = |name, on, stable, sort| Row {
        name,
        on,
        stable,
        sort,
    };
    [
        row("serial", On::Caller, false, T::serial),
        row("rayon", On::Rayon, false, T::rayon),
        row("rayon_stable", On::Rayon, true, T::rayon_stable),
        row("voracious", On::Rayon, false, T::voracious),
        row("rayforce", On::Rayforce, false, T::rayforce),
        row("rayforce_stable", On::Rayforce, true, T::rayforce_stable),
        row("rayforce_radix", On::Rayforce, true, T::rayforce_radix),
    ]
}

struct Pools {
    pool: Pool,
    rayon: rayon::ThreadPool,
}

impl Pools {
    fn run<R: Send>(&self, on: On, f: impl FnOnce() -> R + Send) -> R {
        match on {
            On::Caller => f(),
            On::Rayon => self.rayon.install(f),
            On::Rayforce => self.pool.install(f),
        }
    }
}

/// `got` equal to `want` (`std`'s stable sort of the same input): keys, or whole records.
fn check<T: Item>(got: &[T], want: &[T], whole: bool, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].view(whole) != want[i].view(whole)) {
        panic!(
            "{what}: at {i}, {:?} where std's sort has {:?}",
            got[i].view(whole),
            want[i].view(whole)
        );
    }
}

/// The rows of one key type and distribution at `n` items. The input is drawn, and `std`'s
/// stable sort of it made, when a row first runs (a process runs the rows its filter picks).
fn shape<T: Item, M>(group: &mut BenchmarkGroup<'_, M>, pools: &Pools, dist: Dist, n: usize)
where
    M: Measurement + Sync + 'static,
    M::Value: Send,
{
    let shape = format!("{}_{}", T::NAME, dist.name());
    let input = OnceLock::new();
    let input = || input.get_or_init(|| dist.draw::<T>(n));
    let want = OnceLock::new();
    let want = || {
        want.get_or_init(|| {
            let mut v = input().clone();
            T::serial_stable(&mut v);
            v
        })
    };
    for row in rows::<T>() {
        let id = format!("{shape}/{}", row.name);
        let mut checked = false;
        group.bench_function(BenchmarkId::new(&id, n), |b| {
            let fresh = || input().clone();
            let checked = &mut checked;
            pools.run(row.on, || {
                if !*checked {
                    let mut got = fresh();
                    (row.sort)(&mut got);
                    check(&got, want(), row.stable, &format!("{id}/{n}"));
                    *checked = true;
                }
                b.iter_batched_ref(fresh, |v| (row.sort)(v), BatchSize::LargeInput)
            })
        });
    }
}

fn bench<M>(c: &mut Criterion<M>, label: &str, pools: &Pools)
where
    M: Measurement + Sync + 'static,
    M::Value: Send,
{
    let allocator = if SelectedAlloc::is_runtime() {
        "runtime_"
    } else {
        ""
    };
    let mut group = c.benchmark_group(format!("sort_{allocator}{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for n in SIZES {
        for dist in [Dist::Uniform, Dist::Skewed, Dist::Sorted] {
            shape::<u32, M>(&mut group, pools, dist, n);
            shape::<u64, M>(&mut group, pools, dist, n);
            shape::<f64, M>(&mut group, pools, dist, n);
            shape::<Record, M>(&mut group, pools, dist, n);
        }
    }
    group.finish();
}

fn main() {
    let pools = Pools {
        pool: Pool::builder().workers(WIDTH).build().unwrap(),
        rayon: rayon::ThreadPoolBuilder::new()
            .num_threads(WIDTH)
            .build()
            .unwrap(),
    };
    let mut wall = Criterion::<WallTime>::default().configure_from_args();
    bench(&mut wall, "wall", &pools);
    let mut cpu = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .configure_from_args();
    bench(&mut cpu, "cpu", &pools);
    Criterion::default().configure_from_args().final_summary();
}
