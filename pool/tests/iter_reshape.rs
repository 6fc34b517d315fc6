//! The adaptors that move positions (`skip`, `take`, `step_by`, `rev`, `chain`), those with
//! state per range (`map_init`, `map_with` and their `for_each` forms), `flatten_iter` and
//! `panic_fuse` give what `std`'s give, on every size around the pool's width (also
//! chained after a `skip` past the end or a `step_by`); an owned source through them, or
//! flattened, drops each item once.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

const WIDTH: usize = 3;

fn check(n: usize) {
    let xs: Vec<u64> = (0..n as u64).map(|i| i * 7 % 1000).collect();
    for k in [0, 1, 2, n / 2, n, n + 1] {
        let skipped: Vec<u64> = xs.par_iter().copied().skip(k).collect();
        assert_eq!(
            skipped,
            xs.iter().copied().skip(k).collect::<Vec<_>>(),
            "skip {k} of {n}"
        );
        let taken: Vec<u64> = xs.par_iter().copied().take(k).collect();
        assert_eq!(
            taken,
            xs.iter().copied().take(k).collect::<Vec<_>>(),
            "take {k} of {n}"
        );
    }
    for step in [1, 2, 3, 1000] {
        let stepped: Vec<u64> = xs.par_iter().copied().step_by(step).collect();
        let serial: Vec<u64> = xs.iter().copied().step_by(step).collect();
        assert_eq!(stepped, serial, "step_by {step} of {n}");
    }
    // Chained, where a claimed range lies wholly on the other side: each side is then asked
    // for an empty range at its end, also past a skip or between steps.
    let tail = [u64::MAX, 1, 2];
    for k in [n + 1, n + 5] {
        let chained: Vec<u64> = xs
            .par_iter()
            .copied()
            .skip(k)
            .chain(tail.par_iter().copied())
            .collect();
        assert_eq!(chained, tail, "skip {k} of {n}, then chain");
        let chained: Vec<u64> = tail
            .par_iter()
            .copied()
            .chain(xs.par_iter().copied().skip(k))
            .collect();
        assert_eq!(chained, tail, "chain, then skip {k} of {n}");
    }
    for step in [2, 3, 1000] {
        let serial: Vec<u64> = xs.iter().copied().step_by(step).chain(tail).collect();
        let chained: Vec<u64> = xs
            .par_iter()
            .copied()
            .step_by(step)
            .chain(tail.par_iter().copied())
            .with_max_len(1)
            .collect();
        assert_eq!(chained, serial, "step_by {step} of {n}, then chain");
        let serial: Vec<u64> = tail
            .iter()
            .copied()
            .chain(xs.iter().copied().step_by(step).rev())
            .collect();
        let chained: Vec<u64> = tail
            .par_iter()
            .copied()
            .chain(xs.par_iter().copied().step_by(step).rev())
            .with_max_len(1)
            .collect();
        assert_eq!(
            chained, serial,
            "chain, then step_by {step} of {n} reversed"
        );
    }
    let reversed: Vec<u64> = xs.par_iter().copied().rev().collect();
    assert_eq!(
        reversed,
        xs.iter().copied().rev().collect::<Vec<_>>(),
        "rev {n}"
    );
    let chained: Vec<u64> = xs
        .par_iter()
        .copied()
        .chain(xs.par_iter().copied().rev())
        .collect();
    let serial: Vec<u64> = xs.iter().copied().chain(xs.iter().copied().rev()).collect();
    assert_eq!(chained, serial, "chain {n}");
    let filtered_chain = xs
        .par_iter()
        .filter(|&&x| x % 2 == 0)
        .chain(xs.par_iter())
        .count();
    assert_eq!(
        filtered_chain,
        xs.iter().filter(|&&x| x % 2 == 0).count() + n
    );
    let made = AtomicUsize::new(0);
    let with_init: Vec<u64> = xs
        .par_iter()
        .map_init(
            || {
                made.fetch_add(1, Ordering::Relaxed);
                3u64
            },
            |three, &x| x * *three,
        )
        .collect();
    assert_eq!(
        with_init,
        xs.iter().map(|x| x * 3).collect::<Vec<_>>(),
        "map_init {n}"
    );
    assert!(made.into_inner() <= n.max(1), "init once per range at most");
    let with_value: Vec<u64> = xs.par_iter().map_with(5u64, |five, &x| x + *five).collect();
    assert_eq!(
        with_value,
        xs.iter().map(|x| x + 5).collect::<Vec<_>>(),
        "map_with {n}"
    );
    let total = AtomicUsize::new(0);
    xs.par_iter().for_each_with(2usize, |two, &x| {
        total.fetch_add(x as usize * *two, Ordering::Relaxed);
    });
    assert_eq!(
        total.into_inner(),
        xs.iter().map(|&x| x as usize * 2).sum::<usize>()
    );
    let rows: Vec<Vec<u64>> = xs.chunks(7).map(<[u64]>::to_vec).collect();
    let flat: Vec<u64> = rows.par_iter().cloned().flatten_iter().collect();
    assert_eq!(flat, xs, "flatten_iter {n}");
}

#[test]
fn reshaping_adaptors_match_std_on_the_default_pool_and_inside_install() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for n in [0, 1, 2, WIDTH, 1_000_000] {
        check(n);
        pool.install(|| check(n));
    }
}

/// Counts its drops.
struct Counted<'a>(u32, &'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn an_owned_source_through_skip_step_by_and_rev_drops_each_item_once() {
    let drops = AtomicUsize::new(0);
    let items = |n: u32| (0..n).map(|i| Counted(i, &drops)).collect::<Vec<_>>();
    let kept: Vec<u32> = items(10_000)
        .into_par_iter()
        .skip(100)
        .step_by(3)
        .rev()
        .map(|c| c.0)
        .collect();
    let serial: Vec<u32> = (0..10_000).skip(100).step_by(3).rev().collect();
    assert_eq!(kept, serial);
    assert_eq!(drops.load(Ordering::Relaxed), 10_000);

    // Owned inner iterators, flattened, the search stopping early: each item dropped once.
    drops.store(0, Ordering::Relaxed);
    let rows: Vec<Vec<Counted<'_>>> = (0..100).map(|_| items(100)).collect();
    let found = rows.into_par_iter().flatten().find_any(|c| c.0 == 50);
    assert_eq!(found.map(|c| c.0), Some(50));
    assert_eq!(drops.into_inner(), 10_000, "flatten");
}

#[test]
fn a_blown_fuse_stops_the_other_items() {
    // One thread, ranges of one item: without the fuse every other item runs.
    let pool = Pool::builder().workers(1).build().unwrap();
    let count = |fused: bool| {
        let ran = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let items = (0..10_000u32).into_par_iter().with_max_len(1);
            let step = |&i: &u32| {
                assert!(i != 5_000, "boom");
                ran.fetch_add(1, Ordering::Relaxed);
            };
            pool.install(|| {
                if fused {
                    items.panic_fuse().for_each(|i| step(&i));
                } else {
                    items.for_each(|i| step(&i));
                }
            });
        }));
        assert!(outcome.is_err());
        ran.into_inner()
    };
    assert_eq!(count(false), 9_999);
    assert!(count(true) < 9_999);
}
