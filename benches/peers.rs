//! The pool against the strongest public peers on the same work: fork_union (its static
//! `for_slices`, the caller taking part, workers spinning between regions), chili (`join`
//! under heartbeat scheduling), orx-parallel (its adaptive runner on a rayon pool) and
//! rayon (inside one `install`, its strongest form), each two threads wide. Shapes: the
//! N-body step (`common::nbody`, 32 to 256 bodies, one contiguous block per thread), the
//! sum of squares of f32 and the map into a `Vec` of u64, at 1e3, 1e5 and 1e7 items; each
//! in wall time and in process CPU time, against the same code run serially.
//!
//! Rows `peers_{wall,cpu}/{shape}/{implementation}/{size}`. Run one implementation per
//! process (`cargo bench --bench peers -- '/fork_union/'`, and so on): an implementation's
//! threads are made on the first of its rows that runs, so a process that runs another's
//! rows never has fork_union's spinning workers beside it. Each row's result is checked
//! equal to serial code's (N-body: ten steps, bit for bit) before it is timed. Results:
//! BENCHMARKS.md, "Peers".
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::compare::Clock;
use common::nbody::Bodies;
use common::ProcessCpuTime;
use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use rayforce_pool::{ParallelFold, ParallelMap, Pool};
use std::cell::RefCell;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::num::NonZero;
use std::ops::Range;
use std::time::Duration;

const WIDTH: usize = 2;
const BODIES: [usize; 4] = [32, 64, 128, 256];
const SIZES: [usize; 3] = [1_000, 100_000, 10_000_000];
/// chili's recursion splits a range until it is at most this long.
const CHILI_LEAF: usize = 1 << 10;

fn mix(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn finalise(&x: &u64) -> u64 {
    (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

fn squares(xs: &[f32]) -> f32 {
    xs.iter().map(|x| x * x).sum()
}

/// `finalise` of each of `xs`, written into `out` (as long).
fn map_into(xs: &[u64], out: &mut [MaybeUninit<u64>]) {
    for (slot, x) in out.iter_mut().zip(xs) {
        slot.write(finalise(x));
    }
}

/// A `Vec` of `n` items, its storage filled by `fill`.
fn filled(n: usize, fill: impl FnOnce(&mut [MaybeUninit<u64>])) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
    fill(&mut out.spare_capacity_mut()[..n]);
    // SAFETY: every `fill` here writes each of the `n` items (checked equal to serial's).
    unsafe { out.set_len(n) };
    out
}

/// One implementation of the shapes, made once per process on its first row.
trait Implementation {
    const NAME: &'static str;

    /// `iters` runs of `run` in `clock`'s time, where this implementation is strongest.
    fn time(&self, clock: Clock, iters: u64, run: &(dyn Fn(&Self) + Sync)) -> Duration {
        clock.time(iters, &|| run(self))
    }

    /// One N-body step: the forces, then the integration, two regions.
    fn step(&self, bodies: &Bodies);

    fn sum_squares(&self, xs: &[f32]) -> f32;

    fn map(&self, xs: &[u64]) -> Vec<u64>;
}

struct Serial;

impl Implementation for Serial {
    const NAME: &'static str = "serial";

    fn step(&self, bodies: &Bodies) {
        bodies.forces(0..bodies.len());
        bodies.integrate(0..bodies.len());
    }

    fn sum_squares(&self, xs: &[f32]) -> f32 {
        squares(xs)
    }

    fn map(&self, xs: &[u64]) -> Vec<u64> {
        xs.iter().map(finalise).collect()
    }
}

/// The pool's index operations, and one block per participant by `dispatch` for N-body.
struct Rayforce(Pool);

impl Implementation for Rayforce {
    const NAME: &'static str = "rayforce";

    fn step(&self, bodies: &Bodies) {
        self.0
            .dispatch(WIDTH, |t| bodies.forces(bodies.block(t, WIDTH)));
        self.0
            .dispatch(WIDTH, |t| bodies.integrate(bodies.block(t, WIDTH)));
    }

    fn sum_squares(&self, xs: &[f32]) -> f32 {
        self.0.sum(xs.len(), |i| xs[i] * xs[i])
    }

    fn map(&self, xs: &[u64]) -> Vec<u64> {
        self.0.map_slice(xs, finalise)
    }
}

/// rayon's iterators, and a `join` of the two blocks for N-body.
struct Rayon(rayon::ThreadPool);

impl Implementation for Rayon {
    const NAME: &'static str = "rayon";

    fn time(&self, clock: Clock, iters: u64, run: &(dyn Fn(&Self) + Sync)) -> Duration {
        self.0.install(|| clock.time(iters, &|| run(self)))
    }

    fn step(&self, bodies: &Bodies) {
        let (a, b) = (bodies.block(0, WIDTH), bodies.block(1, WIDTH));
        rayon::join(|| bodies.forces(a.clone()), || bodies.forces(b.clone()));
        rayon::join(|| bodies.integrate(a), || bodies.integrate(b));
    }

    fn sum_squares(&self, xs: &[f32]) -> f32 {
        use rayon::prelude::*;
        xs.par_iter().map(|x| x * x).sum()
    }

    fn map(&self, xs: &[u64]) -> Vec<u64> {
        use rayon::prelude::*;
        xs.par_iter().map(finalise).collect()
    }
}

/// fork_union's `for_slices`: one contiguous slice per thread, the caller's included. Its
/// calls take the pool by `&mut`, hence the cell (one borrow a region).
struct ForkUnion(RefCell<fork_union::ThreadPool>);

impl ForkUnion {
    /// `task(range)` for one contiguous range of `0..n` per thread; `task` also gets the
    /// thread's index.
    fn slices(&self, n: usize, task: impl Fn(usize, Range<usize>) + Sync) {
        self.0.borrow_mut().for_slices(n, |prong, count| {
            task(
                prong.thread_index,
                prong.task_index..prong.task_index + count,
            )
        });
    }
}

impl Implementation for ForkUnion {
    const NAME: &'static str = "fork_union";

    fn step(&self, bodies: &Bodies) {
        self.slices(bodies.len(), |_, range| bodies.forces(range));
        self.slices(bodies.len(), |_, range| bodies.integrate(range));
    }

    fn sum_squares(&self, xs: &[f32]) -> f32 {
        let mut partials: [fork_union::CacheAligned<f32>; WIDTH] =
            std::array::from_fn(|_| fork_union::CacheAligned(0.0));
        let partial = fork_union::SyncMutPtr::new(partials.as_mut_ptr());
        self.slices(xs.len(), |thread, range| {
            // SAFETY: each thread writes only its own partial, and the array outlives the
            // region.
            unsafe { (*partial.get(thread)).0 = squares(&xs[range]) };
        });
        partials.iter().map(|p| p.0).sum()
    }

    fn map(&self, xs: &[u64]) -> Vec<u64> {
        filled(xs.len(), |out| {
            let out = fork_union::SyncMutPtr::new(out.as_mut_ptr());
            self.slices(xs.len(), |_, range| {
                // SAFETY: the threads' ranges are disjoint and inside `out`, which outlives
                // the region.
                let part =
                    unsafe { std::slice::from_raw_parts_mut(out.get(range.start), range.len()) };
                map_into(&xs[range], part);
            });
        })
    }
}

/// chili's `join` in one scope of its global pool, splitting ranges in halves down to
/// [`CHILI_LEAF`] items (its heartbeat makes an untaken join cost a few nanoseconds).
struct Chili(RefCell<chili::Scope<'static>>);

impl Chili {
    fn squares(s: &mut chili::Scope<'_>, xs: &[f32]) -> f32 {
        if xs.len() <= CHILI_LEAF {
            return squares(xs);
        }
        let (a, b) = xs.split_at(xs.len() / 2);
        let (a, b) = s.join(|s| Chili::squares(s, a), |s| Chili::squares(s, b));
        a + b
    }

    fn map(s: &mut chili::Scope<'_>, xs: &[u64], out: &mut [MaybeUninit<u64>]) {
        if xs.len() <= CHILI_LEAF {
            return map_into(xs, out);
        }
        let (a, b) = xs.split_at(xs.len() / 2);
        let (out_a, out_b) = out.split_at_mut(a.len());
        s.join(|s| Chili::map(s, a, out_a), |s| Chili::map(s, b, out_b));
    }
}

impl Implementation for Chili {
    const NAME: &'static str = "chili";

    fn step(&self, bodies: &Bodies) {
        let (a, b) = (bodies.block(0, WIDTH), bodies.block(1, WIDTH));
        let s = &mut *self.0.borrow_mut();
        s.join(|_| bodies.forces(a.clone()), |_| bodies.forces(b.clone()));
        s.join(|_| bodies.integrate(a), |_| bodies.integrate(b));
    }

    fn sum_squares(&self, xs: &[f32]) -> f32 {
        Chili::squares(&mut self.0.borrow_mut(), xs)
    }

    fn map(&self, xs: &[u64]) -> Vec<u64> {
        filled(xs.len(), |out| {
            Chili::map(&mut self.0.borrow_mut(), xs, out)
        })
    }
}

/// orx-parallel's iterators with its adaptive runner on a rayon pool; per body for N-body
/// (the runner chunks the bodies).
struct Orx(&'static rayon::ThreadPool);

impl Orx {
    fn runner(&self) -> impl orx_parallel::ParRunner {
        orx_parallel::Runner::adaptive_with_pool(self.0)
    }
}

impl Implementation for Orx {
    const NAME: &'static str = "orx";

    fn step(&self, bodies: &Bodies) {
        use orx_parallel::*;
        let bodies_each = |region: fn(&Bodies, Range<usize>)| {
            (0..bodies.len())
                .par()
                .runner(self.runner())
                .for_each(|i| region(bodies, i..i + 1))
        };
        bodies_each(Bodies::forces);
        bodies_each(Bodies::integrate);
    }

    fn sum_squares(&self, xs: &[f32]) -> f32 {
        use orx_parallel::*;
        xs.par().runner(self.runner()).map(|x| x * x).sum()
    }

    fn map(&self, xs: &[u64]) -> Vec<u64> {
        use orx_parallel::*;
        xs.par().runner(self.runner()).map(finalise).collect()
    }
}

fn rayon_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(WIDTH)
        .build()
        .unwrap()
}

/// The inputs of every row, and serial code's results to check against.
struct Inputs {
    /// Zeros and ones: every sum of their squares below 2^24 is exact in f32, whatever the
    /// order of the additions.
    floats: Vec<Vec<f32>>,
    words: Vec<Vec<u64>>,
    /// Ten serial N-body steps from `Bodies::new(n)`, for each of [`BODIES`].
    ten_steps: Vec<Vec<u32>>,
}

impl Inputs {
    fn new() -> Inputs {
        let floats = SIZES.map(|n| (0..n).map(|i| (mix(i) >> 63) as f32).collect());
        let words = SIZES.map(|n| (0..n).map(mix).collect());
        Inputs {
            floats: floats.into(),
            words: words.into(),
            ten_steps: BODIES.map(|n| ten_steps(&Serial, n)).into(),
        }
    }
}

fn ten_steps(implementation: &impl Implementation, n: usize) -> Vec<u32> {
    let bodies = Bodies::new(n);
    (0..10).for_each(|_| implementation.step(&bodies));
    bodies.snapshot()
}

/// Every row of implementation `I`, made by `make` on the first that runs.
fn rows<M, I>(
    group: &mut BenchmarkGroup<'_, M>,
    clock: Clock,
    inputs: &Inputs,
    made: &mut Option<I>,
    make: impl Fn() -> I,
) where
    M: Measurement<Value = Duration>,
    I: Implementation,
{
    let mut row = |shape: &str, size: usize, check: &dyn Fn(&I), run: &(dyn Fn(&I) + Sync)| {
        let mut checked = false;
        group.bench_function(
            BenchmarkId::new(format!("{shape}/{}", I::NAME), size),
            |b| {
                let implementation = made.get_or_insert_with(&make);
                if !checked {
                    check(implementation);
                    checked = true;
                }
                b.iter_custom(|iters| implementation.time(clock, iters, run))
            },
        );
    };
    for (k, &n) in BODIES.iter().enumerate() {
        let bodies = Bodies::new(n);
        let check = |i: &I| assert_eq!(ten_steps(i, n), inputs.ten_steps[k], "{n} bodies");
        row("nbody", n, &check, &|i| i.step(&bodies));
    }
    for (k, &n) in SIZES.iter().enumerate() {
        let xs = &inputs.floats[k];
        let expected = squares(xs);
        let check = |i: &I| assert_eq!(i.sum_squares(xs), expected, "sum at {n}");
        row("sum_squares", n, &check, &|i| {
            black_box(i.sum_squares(xs));
        });
    }
    for (k, &n) in SIZES.iter().enumerate() {
        let xs = &inputs.words[k];
        let expected = Serial.map(xs);
        let check = |i: &I| assert_eq!(i.map(xs), expected, "map at {n}");
        row("map", n, &check, &|i| drop(black_box(i.map(xs))));
    }
}

/// The implementations, each made at most once in the process (rows in wall time and in
/// CPU time share it).
#[derive(Default)]
struct Made {
    serial: Option<Serial>,
    rayforce: Option<Rayforce>,
    rayon: Option<Rayon>,
    fork_union: Option<ForkUnion>,
    chili: Option<Chili>,
    orx: Option<Orx>,
}

fn peers<M: Measurement<Value = Duration>>(
    c: &mut Criterion<M>,
    label: &str,
    clock: Clock,
    inputs: &Inputs,
    made: &mut Made,
) {
    let mut group = c.benchmark_group(format!("peers_{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    let g = &mut group;
    rows(g, clock, inputs, &mut made.serial, || Serial);
    rows(g, clock, inputs, &mut made.rayforce, || {
        Rayforce(Pool::builder().workers(WIDTH).build().unwrap())
    });
    rows(g, clock, inputs, &mut made.rayon, || Rayon(rayon_pool()));
    rows(g, clock, inputs, &mut made.fork_union, || {
        ForkUnion(RefCell::new(
            fork_union::ThreadPool::try_spawn(WIDTH).unwrap(),
        ))
    });
    rows(g, clock, inputs, &mut made.chili, || {
        let config = chili::Config {
            thread_count: NonZero::new(WIDTH),
            ..chili::Config::default()
        };
        let set = chili::ThreadPool::with_config(config).set_global();
        assert!(set.is_ok(), "chili's global pool is made here only");
        Chili(RefCell::new(chili::Scope::global()))
    });
    rows(g, clock, inputs, &mut made.orx, || {
        Orx(Box::leak(Box::new(rayon_pool())))
    });
    group.finish();
}

fn main() {
    let inputs = Inputs::new();
    let mut made = Made::default();
    let mut wall = Criterion::default().configure_from_args();
    peers(&mut wall, "wall", Clock(true), &inputs, &mut made);
    let mut cpu = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .configure_from_args();
    peers(&mut cpu, "cpu", Clock(false), &inputs, &mut made);
    Criterion::default().configure_from_args().final_summary();
}
