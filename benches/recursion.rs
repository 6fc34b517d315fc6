//! Recursive programs by `join` (rayon-demo's shapes), against rayon's and chili's `join`,
//! each inside its own pool of the same width, and against the same recursion run serially:
//! quicksort of 1e7 `u32` (rayon-demo's, serial below 5 Ki), a merge sort of 1e7 `u32`
//! (halves sorted by `join`, merged serially; leaves of 5 Ki sorted by `sort_unstable`),
//! the Z-order matrix multiply of 512 x 512 `f32` (quadrants contiguous, leaves of 32 x
//! 32), and the N-body accelerations of 2,000 bodies with the fold over the other bodies
//! nested in the map over bodies (rayon-demo's `par_reduce` tick: no chili row, it has no
//! fold). Wall time and process CPU time; results checked against the serial run first.
//! Run one implementation per process: `cargo bench --bench recursion -- 'quicksort/rayon'`.
//! Results: BENCHMARKS.md, "Fork-join".
#![allow(missing_docs)] // criterion's macros generate undocumented items

mod common;

use common::ProcessCpuTime;
use criterion::measurement::{Measurement, WallTime};
use criterion::{BatchSize, Criterion};
use rayforce_pool::Pool;
use rayforce_pool::{ParallelFold, ParallelMap};
use rayon::prelude::*;
use std::num::NonZero;
use std::time::Duration;

const WIDTH: usize = 2;
const SORT_LEN: usize = 10_000_000;
/// Below this many items a sort recurses serially (rayon-demo's quicksort cut-off).
const SORT_SERIAL_BELOW: usize = 5 * 1024;
const MATRIX: usize = 512;
/// Leaves of the Z-order recursion are `LEAF x LEAF` row-major blocks.
const LEAF: usize = 32;
const BODIES: usize = 2_000;

/// A context-free `join`, for rayforce's, rayon's and the serial kernels.
macro_rules! join_free {
    ($join:path, $c:ident, |$ca:ident| $a:expr, |$cb:ident| $b:expr) => {
        $join(
            || {
                let $ca = &mut *$c;
                $a
            },
            || {
                let $cb = &mut Free;
                $b
            },
        )
    };
}

/// No state to pass: rayforce's, rayon's and the serial joins find their pool themselves.
pub struct Free;

fn serial_join<RA, RB>(a: impl FnOnce() -> RA, b: impl FnOnce() -> RB) -> (RA, RB) {
    (a(), b())
}

macro_rules! join_serial {
    ($c:ident, |$ca:ident| $a:expr, |$cb:ident| $b:expr) => {
        join_free!(serial_join, $c, |$ca| $a, |$cb| $b)
    };
}
macro_rules! join_rayforce {
    ($c:ident, |$ca:ident| $a:expr, |$cb:ident| $b:expr) => {
        join_free!(rayforce_pool::join, $c, |$ca| $a, |$cb| $b)
    };
}
macro_rules! join_rayon {
    ($c:ident, |$ca:ident| $a:expr, |$cb:ident| $b:expr) => {
        join_free!(rayon::join, $c, |$ca| $a, |$cb| $b)
    };
}
macro_rules! join_chili {
    ($c:ident, |$ca:ident| $a:expr, |$cb:ident| $b:expr) => {
        $c.join(|$ca| $a, |$cb| $b)
    };
}

/// The recursive kernels, written once, for a `join` of each implementation: `$Ctx` is what
/// a kernel passes down (chili's scope; nothing for the others).
macro_rules! kernels {
    ($module:ident, $Ctx:ty, $join:ident) => {
        mod $module {
            use super::*;

            /// rayon-demo's quicksort: Lomuto partition around the last item.
            pub fn quicksort(c: &mut $Ctx, v: &mut [u32]) {
                if v.len() <= 1 {
                    return;
                }
                if v.len() < SORT_SERIAL_BELOW {
                    return serial_quicksort(v);
                }
                let mid = partition(v);
                let (lo, hi) = v.split_at_mut(mid);
                $join!(c, |c| quicksort(c, lo), |c| quicksort(c, &mut hi[1..]));
            }

            /// Sorts `v` using `buf` (as long) as scratch: halves by `join`, merged serially.
            pub fn merge_sort(c: &mut $Ctx, v: &mut [u32], buf: &mut [u32]) {
                if v.len() < SORT_SERIAL_BELOW {
                    return v.sort_unstable();
                }
                let mid = v.len() / 2;
                {
                    let (v_lo, v_hi) = v.split_at_mut(mid);
                    let (b_lo, b_hi) = buf.split_at_mut(mid);
                    $join!(c, |c| merge_sort(c, v_lo, b_lo), |c| merge_sort(
                        c, v_hi, b_hi
                    ));
                }
                merge(&v[..mid], &v[mid..], buf);
                v.copy_from_slice(buf);
            }

            /// `dest += a * b` for Z-order matrices of `n x n` (`n` a power of two times
            /// `LEAF`): the four quadrant products with `a`'s left half, then the four with
            /// its right half, each four by `join`s of `join`s.
            pub fn matmul_z(c: &mut $Ctx, a: &[f32], b: &[f32], dest: &mut [f32], n: usize) {
                if n <= LEAF {
                    return matmul_leaf(a, b, dest);
                }
                let q = a.len() / 4;
                let h = n / 2;
                let (a00, a01, a10, a11) = (&a[..q], &a[q..2 * q], &a[2 * q..3 * q], &a[3 * q..]);
                let (b00, b01, b10, b11) = (&b[..q], &b[q..2 * q], &b[2 * q..3 * q], &b[3 * q..]);
                let (d0, d1) = dest.split_at_mut(2 * q);
                let (d00, d01) = d0.split_at_mut(q);
                let (d10, d11) = d1.split_at_mut(q);
                for (left, top, right, bottom) in [(a00, b00, a10, b01), (a01, b10, a11, b11)] {
                    $join!(
                        c,
                        |c| $join!(c, |c| matmul_z(c, left, top, d00, h), |c| matmul_z(
                            c, left, bottom, d01, h
                        )),
                        |c| $join!(c, |c| matmul_z(c, right, top, d10, h), |c| matmul_z(
                            c, right, bottom, d11, h
                        ))
                    );
                }
            }
        }
    };
}

kernels!(serial, Free, join_serial);
kernels!(by_rayforce, Free, join_rayforce);
kernels!(by_rayon, Free, join_rayon);
kernels!(by_chili, chili::Scope<'_>, join_chili);

fn serial_quicksort(v: &mut [u32]) {
    if v.len() <= 1 {
        return;
    }
    let mid = partition(v);
    let (lo, hi) = v.split_at_mut(mid);
    serial_quicksort(lo);
    serial_quicksort(&mut hi[1..]);
}

/// Lomuto's partition around the last item; returns the pivot's place.
fn partition(v: &mut [u32]) -> usize {
    let pivot = v.len() - 1;
    let mut i = 0;
    for j in 0..pivot {
        if v[j] <= v[pivot] {
            v.swap(i, j);
            i += 1;
        }
    }
    v.swap(i, pivot);
    i
}

fn merge(lo: &[u32], hi: &[u32], out: &mut [u32]) {
    let (mut i, mut j) = (0, 0);
    for slot in out.iter_mut() {
        if j == hi.len() || (i < lo.len() && lo[i] <= hi[j]) {
            *slot = lo[i];
            i += 1;
        } else {
            *slot = hi[j];
            j += 1;
        }
    }
}

/// `dest += a * b` for row-major `LEAF x LEAF` blocks (i-k-j: the inner loop vectorises).
fn matmul_leaf(a: &[f32], b: &[f32], dest: &mut [f32]) {
    for i in 0..LEAF {
        for k in 0..LEAF {
            let aik = a[i * LEAF + k];
            let row = &b[k * LEAF..(k + 1) * LEAF];
            for (d, &bkj) in dest[i * LEAF..(i + 1) * LEAF].iter_mut().zip(row) {
                *d += aik * bkj;
            }
        }
    }
}

/// Where element (`row`, `col`) of an `n x n` Z-order matrix is: quadrants contiguous,
/// top-left, top-right, bottom-left, bottom-right, down to row-major `LEAF x LEAF` leaves.
fn z_index(row: usize, col: usize, n: usize) -> usize {
    if n <= LEAF {
        return row * LEAF + col;
    }
    let h = n / 2;
    let quadrant = usize::from(row >= h) * 2 + usize::from(col >= h);
    quadrant * h * h + z_index(row % h, col % h, h)
}

/// `n` pseudo-random `u32`s (xorshift, fixed seed).
fn random_u32s(n: usize) -> Vec<u32> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 32) as u32
        })
        .collect()
}

fn random_matrix(n: usize, salt: u32) -> Vec<f32> {
    random_u32s(n * n + salt as usize)[salt as usize..]
        .iter()
        .map(|&x| (x % 1000) as f32 / 1000.0)
        .collect()
}

/// rayon-demo's N-body tick (`par_reduce`), reduced to what it parallelises: for each body,
/// the acceleration from every other, a fold over the bodies nested in the map over them.
#[derive(Clone, Copy)]
struct Body {
    position: [f64; 3],
    mass: f64,
}

fn bodies(n: usize) -> Vec<Body> {
    let raw = random_u32s(4 * n);
    raw.chunks(4)
        .map(|r| Body {
            position: [0, 1, 2].map(|k| f64::from(r[k]) / f64::from(u32::MAX)),
            mass: 1.0 + f64::from(r[3] % 100),
        })
        .collect()
}

fn pull(on: &Body, from: &Body) -> [f64; 3] {
    let d = [0, 1, 2].map(|k| from.position[k] - on.position[k]);
    let dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-9;
    let inv = from.mass / (dist2 * dist2.sqrt());
    d.map(|x| x * inv)
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn accelerations_serial(bodies: &[Body]) -> Vec<[f64; 3]> {
    bodies
        .iter()
        .map(|on| {
            bodies
                .iter()
                .fold([0.0; 3], |acc, from| add(acc, pull(on, from)))
        })
        .collect()
}

fn accelerations_rayforce(pool: &Pool, bodies: &[Body]) -> Vec<[f64; 3]> {
    pool.map(bodies.len(), |i| {
        pool.fold(
            bodies.len(),
            || [0.0; 3],
            |acc, j| *acc = add(*acc, pull(&bodies[i], &bodies[j])),
            add,
        )
    })
}

fn accelerations_rayon(bodies: &[Body]) -> Vec<[f64; 3]> {
    bodies
        .par_iter()
        .map(|on| {
            bodies
                .par_iter()
                .fold(|| [0.0; 3], |acc, from| add(acc, pull(on, from)))
                .reduce(|| [0.0; 3], add)
        })
        .collect()
}

fn assert_close(got: &[[f64; 3]], want: &[[f64; 3]], what: &str) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        for k in 0..3 {
            let scale = w[k].abs().max(1.0);
            assert!(
                (g[k] - w[k]).abs() <= 1e-9 * scale,
                "{what}: {g:?} against {w:?}"
            );
        }
    }
}

struct Pools {
    pool: Pool,
    rayon: rayon::ThreadPool,
    chili: chili::ThreadPool,
}

/// Every implementation's result equal to the serial run's, before any timing.
fn check(pools: &Pools) {
    let input = random_u32s(1 << 20);
    let mut sorted = input.clone();
    sorted.sort_unstable();
    let sort_by = |f: &dyn Fn(&mut Vec<u32>)| {
        let mut v = input.clone();
        f(&mut v);
        v
    };
    let merge_by = |f: &dyn Fn(&mut Vec<u32>, &mut Vec<u32>)| {
        let mut v = input.clone();
        let mut buf = vec![0; v.len()];
        f(&mut v, &mut buf);
        v
    };
    assert_eq!(sort_by(&|v| serial::quicksort(&mut Free, v)), sorted);
    let by_pool = sort_by(&|v| pools.pool.install(|| by_rayforce::quicksort(&mut Free, v)));
    assert_eq!(by_pool, sorted);
    let by_rayon = sort_by(&|v| pools.rayon.install(|| by_rayon::quicksort(&mut Free, v)));
    assert_eq!(by_rayon, sorted);
    assert_eq!(
        sort_by(&|v| by_chili::quicksort(&mut pools.chili.scope(), v)),
        sorted
    );
    assert_eq!(
        merge_by(&|v, b| serial::merge_sort(&mut Free, v, b)),
        sorted
    );
    let by_pool = merge_by(&|v, b| {
        pools
            .pool
            .install(|| by_rayforce::merge_sort(&mut Free, v, b))
    });
    assert_eq!(by_pool, sorted);
    let by_rayon = merge_by(&|v, b| {
        pools
            .rayon
            .install(|| by_rayon::merge_sort(&mut Free, v, b))
    });
    assert_eq!(by_rayon, sorted);
    let by_chili = merge_by(&|v, b| by_chili::merge_sort(&mut pools.chili.scope(), v, b));
    assert_eq!(by_chili, sorted);

    let (a, b) = (random_matrix(MATRIX, 1), random_matrix(MATRIX, 2));
    let product = |f: &dyn Fn(&mut Vec<f32>)| {
        let mut dest = vec![0.0; MATRIX * MATRIX];
        f(&mut dest);
        dest
    };
    let want = product(&|d| serial::matmul_z(&mut Free, &a, &b, d, MATRIX));
    // Each product is added in the same order whichever thread runs it: equal bit for bit.
    let got = product(&|d| {
        pools
            .pool
            .install(|| by_rayforce::matmul_z(&mut Free, &a, &b, d, MATRIX))
    });
    assert!(got == want, "matmul_z, rayforce");
    let got = product(&|d| {
        pools
            .rayon
            .install(|| by_rayon::matmul_z(&mut Free, &a, &b, d, MATRIX))
    });
    assert!(got == want, "matmul_z, rayon");
    let got = product(&|d| by_chili::matmul_z(&mut pools.chili.scope(), &a, &b, d, MATRIX));
    assert!(got == want, "matmul_z, chili");
    // And the recursion itself against a row-major product, at sampled elements.
    let at = |m: &[f32], row: usize, col: usize| m[z_index(row, col, MATRIX)];
    for (row, col) in [
        (0, 0),
        (1, 511),
        (100, 37),
        (255, 256),
        (300, 480),
        (511, 511),
    ] {
        let dot: f32 = (0..MATRIX).map(|k| at(&a, row, k) * at(&b, k, col)).sum();
        let got = at(&want, row, col);
        assert!(
            (got - dot).abs() <= 1e-3 * dot.abs(),
            "matmul_z ({row}, {col}): {got} against {dot}"
        );
    }

    let bodies = bodies(BODIES);
    let want = accelerations_serial(&bodies);
    assert_close(
        &accelerations_rayforce(&pools.pool, &bodies),
        &want,
        "nbody, rayforce",
    );
    let by_rayon = pools.rayon.install(|| accelerations_rayon(&bodies));
    assert_close(&by_rayon, &want, "nbody, rayon");
}

fn bench<M>(c: &mut Criterion<M>, label: &str, pools: &Pools)
where
    M: Measurement + Sync + 'static,
    M::Value: Send,
{
    let mut group = c.benchmark_group(format!("recursion_{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(4));
    let (pool, rayon, chili) = (&pools.pool, &pools.rayon, &pools.chili);

    let input = random_u32s(SORT_LEN);
    let fresh = || input.clone();
    let batch = BatchSize::LargeInput;
    group.bench_function("quicksort/serial", |b| {
        b.iter_batched_ref(fresh, |v| serial::quicksort(&mut Free, v), batch)
    });
    group.bench_function("quicksort/rayforce", |b| {
        b.iter_batched_ref(
            fresh,
            |v| pool.install(|| by_rayforce::quicksort(&mut Free, v)),
            batch,
        )
    });
    group.bench_function("quicksort/rayon", |b| {
        b.iter_batched_ref(
            fresh,
            |v| rayon.install(|| by_rayon::quicksort(&mut Free, v)),
            batch,
        )
    });
    group.bench_function("quicksort/chili", |b| {
        b.iter_batched_ref(fresh, |v| by_chili::quicksort(&mut chili.scope(), v), batch)
    });

    let mut buf = vec![0; SORT_LEN];
    group.bench_function("merge_sort/serial", |b| {
        b.iter_batched_ref(fresh, |v| serial::merge_sort(&mut Free, v, &mut buf), batch)
    });
    group.bench_function("merge_sort/rayforce", |b| {
        b.iter_batched_ref(
            fresh,
            |v| pool.install(|| by_rayforce::merge_sort(&mut Free, v, &mut buf)),
            batch,
        )
    });
    group.bench_function("merge_sort/rayon", |b| {
        b.iter_batched_ref(
            fresh,
            |v| rayon.install(|| by_rayon::merge_sort(&mut Free, v, &mut buf)),
            batch,
        )
    });
    group.bench_function("merge_sort/chili", |b| {
        b.iter_batched_ref(
            fresh,
            |v| by_chili::merge_sort(&mut chili.scope(), v, &mut buf),
            batch,
        )
    });

    let (ma, mb) = (random_matrix(MATRIX, 1), random_matrix(MATRIX, 2));
    let zeros = || vec![0.0f32; MATRIX * MATRIX];
    group.bench_function("matmul_z/serial", |b| {
        b.iter_batched_ref(
            zeros,
            |d| serial::matmul_z(&mut Free, &ma, &mb, d, MATRIX),
            batch,
        )
    });
    group.bench_function("matmul_z/rayforce", |b| {
        b.iter_batched_ref(
            zeros,
            |d| pool.install(|| by_rayforce::matmul_z(&mut Free, &ma, &mb, d, MATRIX)),
            batch,
        )
    });
    group.bench_function("matmul_z/rayon", |b| {
        b.iter_batched_ref(
            zeros,
            |d| rayon.install(|| by_rayon::matmul_z(&mut Free, &ma, &mb, d, MATRIX)),
            batch,
        )
    });
    group.bench_function("matmul_z/chili", |b| {
        b.iter_batched_ref(
            zeros,
            |d| by_chili::matmul_z(&mut chili.scope(), &ma, &mb, d, MATRIX),
            batch,
        )
    });

    let bodies = bodies(BODIES);
    group.bench_function("nbody_nested/serial", |b| {
        b.iter(|| accelerations_serial(&bodies))
    });
    group.bench_function("nbody_nested/rayforce", |b| {
        b.iter(|| accelerations_rayforce(pool, &bodies))
    });
    group.bench_function("nbody_nested/rayon", |b| {
        rayon.install(|| b.iter(|| accelerations_rayon(&bodies)))
    });
    group.finish();
}

fn main() {
    let pools = Pools {
        pool: Pool::builder().workers(WIDTH).build().unwrap(),
        rayon: rayon::ThreadPoolBuilder::new()
            .num_threads(WIDTH)
            .build()
            .unwrap(),
        chili: chili::ThreadPool::with_config(chili::Config {
            thread_count: NonZero::new(WIDTH),
            ..chili::Config::default()
        }),
    };
    check(&pools);
    let mut wall = Criterion::<WallTime>::default().configure_from_args();
    bench(&mut wall, "wall", &pools);
    let mut cpu = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .configure_from_args();
    bench(&mut cpu, "cpu", &pools);
    Criterion::default().configure_from_args().final_summary();
}
