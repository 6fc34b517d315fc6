//! The parallel iterators give what `std`'s sequential iterators give, as rayon's do: at
//! 0, 1, 2, the pool's width and 1e6 items, on the default pool and inside `install`,
//! nested inside one another; `collect`, `find_first`, `position_first`, `reduce`, `min`,
//! `max` and their `_by` and `_by_key` forms keep the items' order, as do `flat_map` and
//! `flatten` over parallel inner iterators, `partition`,
//! `partition_map`, `find_map_first` and the lexicographic comparisons; a panic in `map`
//! resumes after every item written was dropped once. rayon's other forms (`update`,
//! `find_last`, `position_last`, `positions`, `zip_eq`, `take_any`, `skip_any` and their
//! `_while` forms, the `try_` consumers and folds) keep their promises.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::iter::Either;
use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::num::Wrapping;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

const WIDTH: usize = 3;

fn sizes() -> [usize; 5] {
    [0, 1, 2, WIDTH, 1_000_000]
}

/// A value per index that is neither sorted nor distinct.
fn value(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44
}

/// A 2x2 matrix of wrapping integers, row by row: its product is associative and does not
/// commute. Both its `Sum` and its `Product` multiply, so that either consumer's order shows.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mat([Wrapping<u64>; 4]);

impl Mat {
    const ONE: Mat = Mat([Wrapping(1), Wrapping(0), Wrapping(0), Wrapping(1)]);

    fn times(self, other: Mat) -> Mat {
        let ([a, b, c, d], [e, f, g, h]) = (self.0, other.0);
        Mat([a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h])
    }
}

impl std::iter::Sum for Mat {
    fn sum<I: Iterator<Item = Mat>>(items: I) -> Mat {
        items.fold(Mat::ONE, Mat::times)
    }
}

impl std::iter::Product for Mat {
    fn product<I: Iterator<Item = Mat>>(items: I) -> Mat {
        items.fold(Mat::ONE, Mat::times)
    }
}

/// Every adaptor and consumer against `std` on `xs`.
fn check_all(xs: &[u64]) {
    let n = xs.len();
    let serial_map: Vec<u64> = xs.iter().map(|x| x * 3).collect();
    assert_eq!(
        xs.par_iter().map(|x| x * 3).collect::<Vec<_>>(),
        serial_map,
        "map, {n}"
    );
    let serial_filter: Vec<u64> = xs.iter().copied().filter(|x| x % 3 == 0).collect();
    let filtered: Vec<u64> = xs.par_iter().copied().filter(|x| x % 3 == 0).collect();
    assert_eq!(filtered, serial_filter, "filter keeps the order, {n}");
    let serial_filter_map: Vec<u64> = xs
        .iter()
        .filter_map(|&x| (x % 5 == 1).then_some(x / 5))
        .collect();
    let filter_mapped: Vec<u64> = xs
        .par_iter()
        .filter_map(|&x| (x % 5 == 1).then_some(x / 5))
        .collect();
    assert_eq!(filter_mapped, serial_filter_map, "filter_map, {n}");
    let cloned: Vec<u64> = xs.par_iter().cloned().collect();
    assert_eq!(cloned, xs, "cloned, {n}");
    let enumerated: Vec<(usize, u64)> = xs.par_iter().copied().enumerate().collect();
    assert_eq!(
        enumerated,
        xs.iter().copied().enumerate().collect::<Vec<_>>(),
        "{n}"
    );
    let doubled: Vec<u64> = xs.iter().map(|x| 2 * x).collect();
    let zipped: Vec<u64> = xs
        .par_iter()
        .zip(&doubled[..n.saturating_sub(1)])
        .map(|(a, b)| a + b)
        .collect();
    let serial_zip: Vec<u64> = xs
        .iter()
        .zip(&doubled[..n.saturating_sub(1)])
        .map(|(a, b)| a + b)
        .collect();
    assert_eq!(zipped, serial_zip, "zip stops at the shorter, {n}");

    assert_eq!(xs.par_iter().count(), n);
    assert_eq!(
        xs.par_iter().filter(|&&x| x % 2 == 0).count(),
        xs.iter().filter(|&&x| x % 2 == 0).count()
    );
    assert_eq!(
        xs.par_iter().sum::<u64>(),
        xs.iter().sum::<u64>(),
        "sum, {n}"
    );
    assert_eq!(
        xs.par_iter()
            .map(|&x| Wrapping(x % 7 + 1))
            .product::<Wrapping<u64>>(),
        xs.iter()
            .map(|&x| Wrapping(x % 7 + 1))
            .product::<Wrapping<u64>>(),
        "product, {n}"
    );
    // An associative operation that does not commute: 2x2 matrix products, as a `Sum`
    // and as a `Product`, combine the ranges in order (as rayon's).
    // Of determinant 1, so that no product wraps to zero.
    let matrix = |&x: &u64| {
        let (a, b) = (Wrapping(x % 5), Wrapping(x % 3));
        Mat([Wrapping(1), a, b, Wrapping(1) + a * b])
    };
    assert_eq!(
        xs.par_iter().map(matrix).sum::<Mat>(),
        xs.iter().map(matrix).sum::<Mat>(),
        "sum in order, {n}"
    );
    assert_eq!(
        xs.par_iter().map(matrix).product::<Mat>(),
        xs.iter().map(matrix).product::<Mat>(),
        "product in order, {n}"
    );
    // Parallel inner iterators, flattened in order.
    let nested: Vec<u64> = xs
        .par_iter()
        .flat_map(|&x| (0..x % 4).into_par_iter())
        .collect();
    let serial: Vec<u64> = xs.iter().flat_map(|&x| 0..x % 4).collect();
    assert_eq!(nested, serial, "flat_map, {n}");
    let rows: Vec<Vec<u64>> = xs.chunks(5).map(<[u64]>::to_vec).collect();
    let flat: Vec<u64> = rows.clone().into_par_iter().flatten().collect();
    assert_eq!(flat, xs, "flatten, {n}");
    let evens: usize = rows
        .par_iter()
        .flat_map(|row| row.par_iter().filter(|&&x| x % 2 == 0))
        .count();
    assert_eq!(evens, xs.iter().filter(|&&x| x % 2 == 0).count(), "{n}");
    // An endless inner iterator, searched: as rayon's, the search stops in it.
    let endless = rows
        .par_iter()
        .flat_map(|_| rayforce_pool::iter::repeat(7u64))
        .find_any(|_| true);
    assert_eq!(endless, (n > 0).then_some(7), "{n}");

    // Splitting, searching by a map, comparing, and rayon's other collecting forms.
    let (even, odd): (Vec<u64>, Vec<u64>) = xs.par_iter().partition(|&&x| x % 2 == 0);
    let serial: (Vec<u64>, Vec<u64>) = xs.iter().partition(|&&x| x % 2 == 0);
    assert_eq!((even, odd), serial, "partition, {n}");
    let (small, big): (Vec<u64>, Vec<String>) = xs.par_iter().partition_map(|&x| {
        if x < 500 {
            Either::Left(x)
        } else {
            Either::Right(x.to_string())
        }
    });
    assert_eq!(
        small,
        xs.iter().copied().filter(|&x| x < 500).collect::<Vec<_>>()
    );
    assert_eq!(
        big,
        xs.iter()
            .filter(|&&x| x >= 500)
            .map(u64::to_string)
            .collect::<Vec<_>>()
    );
    // Nested, by `Either` items into a pair whose second side is a pair.
    let sides = xs.par_iter().map(|&x| match x % 3 {
        0 => Either::Left(x),
        1 => Either::Right((x, x.to_string())),
        _ => Either::Right((x + 1, String::new())),
    });
    let (zero, (others, names)): (Vec<u64>, (Vec<u64>, Vec<String>)) = sides.collect();
    assert_eq!(
        zero,
        xs.iter()
            .copied()
            .filter(|x| x % 3 == 0)
            .collect::<Vec<_>>()
    );
    let rest = xs.iter().filter(|&&x| x % 3 != 0);
    let serial: Vec<u64> = rest.clone().map(|&x| x + u64::from(x % 3 == 2)).collect();
    assert_eq!(others, serial, "nested partition, {n}");
    assert_eq!(names.len(), serial.len());
    let over = |&x: &u64| (x > 900).then_some(x * 2);
    assert_eq!(
        xs.par_iter().find_map_first(over),
        xs.iter().find_map(over),
        "{n}"
    );
    if let Some(found) = xs.par_iter().find_map_any(over) {
        assert!(found > 1800 && xs.contains(&(found / 2)));
    } else {
        assert!(xs.iter().all(|&x| x <= 900));
    }
    let mut changed = xs.to_vec();
    if let Some(last) = changed.last_mut() {
        *last += 1;
    }
    for (a, b) in [
        (xs, &changed[..]),
        (&changed[..], xs),
        (xs, xs),
        (xs, &xs[..n / 2]),
    ] {
        assert_eq!(a.par_iter().cmp(b), a.iter().cmp(b), "cmp, {n}");
        assert_eq!(a.par_iter().partial_cmp(b), a.iter().partial_cmp(b), "{n}");
        assert_eq!(a.par_iter().eq(b), a.iter().eq(b), "eq, {n}");
        assert_eq!(a.par_iter().lt(b), a.iter().lt(b), "lt, {n}");
        assert_eq!(a.par_iter().ge(b), a.iter().ge(b), "ge, {n}");
    }
    let (mut firsts, mut seconds) = (vec![7u64; 3], Vec::new());
    xs.par_iter()
        .map(|&x| (x, x + 1))
        .unzip_into_vecs(&mut firsts, &mut seconds);
    assert_eq!(firsts, xs);
    assert_eq!(seconds, xs.iter().map(|x| x + 1).collect::<Vec<_>>());
    assert_eq!(xs.par_iter().opt_len(), Some(n));
    assert_eq!(xs.par_iter().filter(|_| true).opt_len(), None);
    let boxed: Box<[u64]> = xs.par_iter().copied().collect();
    let shared: std::sync::Arc<[u64]> = xs.par_iter().copied().collect();
    assert_eq!(
        (&*boxed, &*shared),
        (xs, xs),
        "boxed and shared slices, {n}"
    );
    let mut copies = vec![u64::MAX];
    copies.par_extend(xs.par_iter());
    assert_eq!(copies[1..], *xs, "par_extend by reference, {n}");

    assert_eq!(xs.par_iter().min(), xs.iter().min(), "min, {n}");
    assert_eq!(xs.par_iter().max(), xs.iter().max(), "max, {n}");
    assert_eq!(
        xs.par_iter().copied().reduce_with(|a, b| a.max(b)),
        xs.iter().copied().reduce(|a, b| a.max(b))
    );
    assert_eq!(
        xs.par_iter().copied().reduce(|| 0, |a, b| a ^ b),
        xs.iter().fold(0, |a, b| a ^ b)
    );

    // Searches: a value at the middle, one that is absent.
    if let Some(&target) = xs.get(n / 2) {
        let first = xs.iter().position(|&x| x == target);
        assert_eq!(xs.par_iter().position_first(|&x| x == target), first, "{n}");
        let any = xs.par_iter().position_any(|&x| x == target).unwrap();
        assert_eq!(xs[any], target);
        assert_eq!(xs.par_iter().find_any(|&&x| x == target), Some(&target));
        let found = xs.par_iter().enumerate().find_first(|&(_, &x)| x == target);
        assert_eq!(found.map(|(i, _)| i), first, "find_first, {n}");
        assert!(xs.par_iter().any(|&x| x == target));
    }
    assert_eq!(xs.par_iter().position_any(|&x| x == u64::MAX), None);
    assert_eq!(xs.par_iter().position_first(|&x| x == u64::MAX), None);
    assert!(xs.par_iter().all(|&x| x < 1 << 20), "{n}");
    assert!(!xs.par_iter().any(|&x| x == u64::MAX));
}

#[test]
fn every_adaptor_and_consumer_matches_std_on_the_default_pool_and_inside_install() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for n in sizes() {
        let xs: Vec<u64> = (0..n).map(value).collect();
        check_all(&xs);
        pool.install(|| check_all(&xs));
    }
}

/// rayon's other adaptors and consumers (`update`, the `_last` searches, `positions`,
/// `zip_eq`, the `_any` counts and tests, the `try_` forms) against `std` on `xs`.
fn check_the_rest(xs: &[u64]) {
    let n = xs.len();
    let updated: Vec<u64> = xs.par_iter().copied().update(|x| *x += 1).collect();
    assert_eq!(updated, xs.iter().map(|x| x + 1).collect::<Vec<_>>());
    // Matches that are many, a few, or none: the last differs from the first.
    for modulus in [5, 100_003, u64::MAX] {
        let hits = |&x: &u64| x % modulus == 3;
        let last = xs.iter().rposition(hits);
        let found = xs.par_iter().enumerate().find_last(|(_, x)| hits(x));
        assert_eq!(found.map(|(i, _)| i), last, "find_last % {modulus}, {n}");
        assert_eq!(xs.par_iter().position_last(hits), last);
        let mapped = xs
            .par_iter()
            .enumerate()
            .find_map_last(|(i, x)| hits(x).then_some(i));
        assert_eq!(mapped, last);
        let positions: Vec<usize> = xs.par_iter().positions(hits).collect();
        let serial: Vec<usize> = (0..n).filter(|&i| hits(&xs[i])).collect();
        assert_eq!(positions, serial, "positions % {modulus}, {n}");
    }
    // `a[0], b[0], a[1], b[1], ...`, then the rest of the longer.
    let interleaved = |a: &[u64], b: &[u64]| -> Vec<u64> {
        let tail = if a.len() > b.len() {
            &a[b.len()..]
        } else {
            &b[a.len()..]
        };
        let pairs = a.iter().zip(b).flat_map(|(&x, &y)| [x, y]);
        pairs.chain(tail.iter().copied()).collect()
    };
    for m in [0, 1, n / 2, n + 3] {
        let other: Vec<u64> = (0..m as u64).map(|x| x + (1 << 40)).collect();
        let serial = interleaved(xs, &other);
        let (ta, tb) = if n <= m { (n, n) } else { (m + 1, m) };
        let shortest = interleaved(&xs[..ta], &other[..tb]);
        let mixed: Vec<u64> = xs
            .par_iter()
            .copied()
            .interleave(other.par_iter().copied())
            .collect();
        assert_eq!(mixed, serial, "interleave {n} and {m}");
        let cut: Vec<u64> = xs
            .par_iter()
            .copied()
            .interleave_shortest(other.par_iter().copied())
            .collect();
        assert_eq!(cut, shortest, "interleave_shortest {n} and {m}");
    }
    for size in [1, 2, 7, 1000] {
        let groups: Vec<Vec<u64>> = xs.par_iter().copied().chunks(size).collect();
        let serial: Vec<Vec<u64>> = xs.chunks(size).map(<[u64]>::to_vec).collect();
        assert_eq!(groups, serial, "chunks({size}), {n}");
        let sums: Vec<u64> = xs
            .par_iter()
            .chunks(size)
            .rev()
            .map(|g| g.into_iter().sum())
            .collect();
        let serial: Vec<u64> = xs.chunks(size).rev().map(|g| g.iter().sum()).collect();
        assert_eq!(sums, serial, "chunks({size}).rev(), {n}");
    }
    let separated: Vec<u64> = xs.par_iter().copied().intersperse(u64::MAX).collect();
    let serial: Vec<u64> = xs.iter().flat_map(|&x| [u64::MAX, x]).skip(1).collect();
    assert_eq!(separated, serial, "intersperse, {n}");
    // Unindexed: the items after a filter, gathered first; a count and a sum see the
    // separators too.
    let odd = |x: &u64| x % 2 == 1;
    let kept: Vec<u64> = xs.iter().copied().filter(odd).collect();
    let separated: Vec<u64> = xs.par_iter().copied().filter(odd).intersperse(0).collect();
    let serial: Vec<u64> = kept.iter().flat_map(|&x| [0, x]).skip(1).collect();
    assert_eq!(separated, serial, "intersperse after filter, {n}");
    let count = xs.par_iter().copied().filter(odd).intersperse(0).count();
    assert_eq!(count, (2 * kept.len()).saturating_sub(1));
    let sum: u64 = xs.par_iter().copied().filter(odd).intersperse(1).sum();
    assert_eq!(
        sum,
        kept.iter().sum::<u64>() + kept.len().saturating_sub(1) as u64
    );
    // Asking its length, or interspersing it again, gathers nothing: only consuming does.
    let looked = AtomicUsize::new(0);
    let looking = |x: &u64| {
        looked.fetch_add(1, Ordering::Relaxed);
        odd(x)
    };
    let twice = xs
        .par_iter()
        .copied()
        .filter(looking)
        .intersperse(0)
        .intersperse(7);
    assert_eq!(twice.opt_len(), None);
    assert_eq!(
        looked.load(Ordering::Relaxed),
        0,
        "gathered before consumed, {n}"
    );
    let serial: Vec<u64> = serial.iter().flat_map(|&x| [7, x]).skip(1).collect();
    assert_eq!(
        twice.collect::<Vec<u64>>(),
        serial,
        "intersperse twice, {n}"
    );
    let doubled: Vec<u64> = xs.par_iter().zip_eq(xs).map(|(a, b)| a + b).collect();
    assert_eq!(doubled, xs.iter().map(|x| 2 * x).collect::<Vec<_>>());

    // Items (by index) of `xs`, each at most once.
    let of_xs = |indices: Vec<usize>| {
        let mut seen = vec![false; n];
        indices
            .into_iter()
            .all(|i| !std::mem::replace(&mut seen[i], true))
    };
    for k in [0, 1, n / 2, n, n + 1] {
        let taken: Vec<usize> = (0..n).into_par_iter().take_any(k).collect();
        assert_eq!(taken.len(), k.min(n), "take_any {k} of {n}");
        assert!(of_xs(taken));
        let kept: Vec<usize> = (0..n).into_par_iter().skip_any(k).collect();
        assert_eq!(kept.len(), n - k.min(n), "skip_any {k} of {n}");
        assert!(of_xs(kept));
    }
    let bound = 1 << 19;
    let small: Vec<u64> = xs
        .par_iter()
        .copied()
        .take_any_while(|&x| x < bound)
        .collect();
    assert!(small.iter().all(|&x| x < bound));
    let every: Vec<u64> = xs.par_iter().copied().take_any_while(|_| true).collect();
    assert_eq!(every.len(), n, "take_any_while, all held, {n}");
    // An item the test fails is never skipped.
    let rest: Vec<u64> = xs
        .par_iter()
        .copied()
        .skip_any_while(|&x| x < bound)
        .collect();
    let large = |items: &[u64]| items.iter().filter(|&&x| x >= bound).count();
    assert_eq!(large(&rest), large(xs), "skip_any_while, {n}");
    let none: Vec<u64> = xs.par_iter().copied().skip_any_while(|_| true).collect();
    assert!(none.is_empty());

    let bad = xs.iter().position(|&x| x == 7);
    let checked: Result<(), usize> =
        xs.par_iter()
            .enumerate()
            .try_for_each(|(i, &x)| if x == 7 { Err(i) } else { Ok(()) });
    assert_eq!(
        checked.err().map(|i| xs[i]),
        bad.map(|i| xs[i]),
        "try_for_each, {n}"
    );
    let with: Result<(), u64> = xs.par_iter().try_for_each_with(Vec::new(), |seen, &x| {
        seen.push(x);
        if x == 7 {
            Err(x)
        } else {
            Ok(())
        }
    });
    assert_eq!(with.err(), bad.map(|_| 7), "try_for_each_with, {n}");
    let stopped: std::ops::ControlFlow<u64> = xs.par_iter().try_for_each_init(
        || (),
        |(), &x| {
            if x == 7 {
                std::ops::ControlFlow::Break(x)
            } else {
                std::ops::ControlFlow::Continue(())
            }
        },
    );
    assert_eq!(stopped.break_value(), bad.map(|_| 7));

    let serial_sum: u64 = xs.iter().sum();
    let sum = xs
        .par_iter()
        .map(|&x| Some(x))
        .try_reduce(|| 0, |a, b| a.checked_add(b));
    assert_eq!(sum, Some(serial_sum), "try_reduce, {n}");
    let limit = serial_sum / 2;
    let capped = xs.par_iter().map(|&x| Ok::<u64, u64>(x)).try_reduce(
        || 0,
        |a, b| if a + b > limit { Err(a + b) } else { Ok(a + b) },
    );
    assert_eq!(capped.is_err(), serial_sum > limit, "{n}");
    let with = xs
        .par_iter()
        .map(|&x| Some(x))
        .try_reduce_with(|a, b| a.checked_add(b));
    assert_eq!(with, (n > 0).then_some(Some(serial_sum)));
    let folded = xs
        .par_iter()
        .try_fold(|| 0u64, |a, &x| a.checked_add(x))
        .try_reduce(|| 0, |a, b| a.checked_add(b));
    assert_eq!(folded, Some(serial_sum));
    let failed = xs
        .par_iter()
        .try_fold_with(0u64, |a, &x| if x == 7 { Err(x) } else { Ok(a + x) })
        .try_reduce(|| 0, |a, b| Ok(a + b));
    assert_eq!(failed.err(), bad.map(|_| 7), "try_fold_with, {n}");
}

#[test]
fn the_rest_of_rayons_adaptors_and_consumers_match_std() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for n in sizes() {
        let xs: Vec<u64> = (0..n).map(value).collect();
        check_the_rest(&xs);
        pool.install(|| check_the_rest(&xs));
    }
}

#[test]
fn a_pool_of_one_searches_for_the_last_match_from_the_back() {
    // One thread claims a whole window as one range: a match near the end costs a block of
    // it, and a search over endless positions ends.
    let pool = Pool::builder().workers(1).build().unwrap();
    let n: usize = 1_000_000;
    let made = AtomicUsize::new(0);
    let found = pool.install(|| {
        (0..n)
            .into_par_iter()
            .inspect(|_| {
                made.fetch_add(1, Ordering::Relaxed);
            })
            .find_last(|&x| x % 1000 == 7)
    });
    assert_eq!(found, Some(n - 1000 + 7));
    let made = made.into_inner();
    assert!(made < 2_000, "find_last made {made} of {n} items");
    let xs: Vec<u32> = (0..100_000).map(|x| x % 7).collect();
    let serial = xs.iter().rposition(|&x| x == 3);
    assert_eq!(
        pool.install(|| xs.par_iter().position_last(|&x| x == 3)),
        serial
    );
    assert_eq!(
        pool.install(|| xs.par_iter().position_last(|&x| x == 9)),
        None
    );
    let endless = pool.install(|| rayforce_pool::iter::repeat(5u8).find_last(|_| true));
    assert_eq!(endless, Some(5));
}

#[test]
fn the_any_forms_on_one_thread_are_std_s_and_every_form_stops_early() {
    let alone = Pool::builder().workers(1).build().unwrap();
    let xs: Vec<u64> = (0..100_000).map(value).collect();
    let bound = 1 << 19;
    alone.install(|| {
        let taken: Vec<u64> = xs
            .par_iter()
            .copied()
            .take_any_while(|&x| x < bound)
            .collect();
        let serial: Vec<u64> = xs.iter().copied().take_while(|&x| x < bound).collect();
        assert_eq!(taken, serial);
        let skipped: Vec<u64> = xs
            .par_iter()
            .copied()
            .skip_any_while(|&x| x < bound)
            .collect();
        let serial: Vec<u64> = xs.iter().copied().skip_while(|&x| x < bound).collect();
        assert_eq!(skipped, serial);
        let first: Vec<u64> = xs.par_iter().copied().take_any(10).collect();
        assert_eq!(first, xs[..10]);
    });
    // Each form, failing or done at the very first item of 1e6, makes few of the others.
    let n: usize = 1_000_000;
    let made = AtomicUsize::new(0);
    let items = || {
        (0..n).into_par_iter().inspect(|_| {
            made.fetch_add(1, Ordering::Relaxed);
        })
    };
    let few = |form: &str| {
        let count = made.swap(0, Ordering::Relaxed);
        assert!(count < n / 2, "{form} made {count} of {n} items");
    };
    let failed = items().try_for_each(|i| if i == 0 { Err(i) } else { Ok(()) });
    assert_eq!(failed, Err(0));
    few("try_for_each");
    let reduced = items()
        .map(|i| if i == 0 { None } else { Some(i) })
        .try_reduce(|| 0, |a, b| Some(a + b));
    assert_eq!(reduced, None);
    few("try_reduce, an item failing");
    let reduced = items().map(Some).try_reduce(
        || 0,
        |a, b| if a == 0 || b == 0 { None } else { Some(a + b) },
    );
    assert_eq!(reduced, None);
    few("try_reduce, the operation failing");
    let taken: Vec<usize> = items().take_any(10).collect();
    assert_eq!(taken.len(), 10);
    few("take_any");
    // The `_last` searches, matches everywhere: the last found near the end.
    assert_eq!(items().find_last(|i| i % 10 == 3), Some(n - 7));
    few("find_last");
    assert_eq!(items().position_last(|i| i % 10 == 3), Some(n - 7));
    few("position_last");
    // A match at either end only, claimed in ranges of every grain.
    for grain in [1, 7, 4096] {
        for at in [0, n - 1] {
            let only = |i: &usize| *i == at;
            let fine = (0..n).into_par_iter().with_max_len(grain);
            assert_eq!(fine.find_last(only), Some(at), "grain {grain}");
            let coarse = (0..n).into_par_iter().with_min_len(grain);
            assert_eq!(coarse.position_last(|i| only(&i)), Some(at));
        }
    }
    // A fold stops its own accumulator: the first, of one thread's share, at its first item.
    let folded: Vec<Option<usize>> = items()
        .try_fold(|| 0, |a, i| if i == 0 { None } else { Some(a + i) })
        .collect();
    assert_eq!(folded[0], None);
    let count = made.swap(0, Ordering::Relaxed);
    assert!(count < n * 9 / 10, "try_fold made {count} of {n} items");
}

#[test]
fn a_chain_makes_a_computed_side_only_when_consumed() {
    let folded = AtomicUsize::new(0);
    let xs: Vec<u64> = (0..10_000).collect();
    let chained = xs
        .par_iter()
        .fold(
            || 0u64,
            |a, &x| {
                folded.fetch_add(1, Ordering::Relaxed);
                a + x
            },
        )
        .chain(rayforce_pool::iter::once(1));
    assert_eq!(folded.load(Ordering::Relaxed), 0, "made when chained");
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let total: u64 = pool.install(|| chained.sum());
    assert_eq!(total, xs.iter().sum::<u64>() + 1);
    assert_eq!(folded.load(Ordering::Relaxed), xs.len());
}

#[test]
#[should_panic(
    expected = "chain: 18446744073709551615 and 2 positions are more than a usize counts"
)]
fn a_chain_longer_than_a_usize_counts_is_refused() {
    // Counted when consumed: making the chain counts nothing (a `fold` side would make its
    // items there).
    let chained = (0..usize::MAX).into_par_iter().chain(0..2usize);
    let _ = chained.count();
}

#[test]
#[should_panic(expected = "zip_eq: the iterators' lengths differ (3 and 2)")]
fn zip_eq_refuses_iterators_of_different_lengths() {
    let _ = [1, 2, 3].par_iter().zip_eq(&[1, 2]);
}

#[test]
fn ranges_of_every_integer_type_yield_each_value_once() {
    // Unsuffixed literals are `i32`s, as in rayon (this compiles only so).
    let sum: i32 = (0..100).into_par_iter().sum();
    assert_eq!(sum, 4950);
    let doubled: Vec<_> = (0..=3).into_par_iter().map(|x| x * 2).collect();
    assert_eq!(doubled, [0i32, 2, 4, 6]);
    let separated: Vec<_> = (0..3).into_par_iter().intersperse(-1).collect();
    assert_eq!(separated, [0, -1, 1, -1, 2]);
    assert_eq!((0..0u32).into_par_iter().count(), 0);
    assert_eq!(
        (-128..127i8).into_par_iter().map(i64::from).sum::<i64>(),
        (-128..127i8).map(i64::from).sum::<i64>()
    );
    assert_eq!(
        (0..=254u8).collect::<Vec<_>>(),
        (0..255u8).into_par_iter().collect::<Vec<_>>()
    );
    let (from, to) = (std::hint::black_box(5i64), 3);
    assert_eq!(
        (from..to).into_par_iter().count(),
        0,
        "a range whose end is below its start"
    );
    let big: Vec<u64> = (u64::MAX - 1000..u64::MAX).into_par_iter().collect();
    assert_eq!(big, (u64::MAX - 1000..u64::MAX).collect::<Vec<_>>());
    assert_eq!(
        (0..1_000_000usize).into_par_iter().sum::<usize>(),
        499_999_500_000
    );
}

#[test]
fn par_iter_mut_lends_each_item_once() {
    let mut xs: Vec<u64> = (0..1_000_000).collect();
    xs.par_iter_mut().for_each(|x| *x = *x * 2 + 1);
    assert!(xs.iter().enumerate().all(|(i, &x)| x == 2 * i as u64 + 1));
    xs.par_iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x -= i as u64);
    assert!(xs.iter().enumerate().all(|(i, &x)| x == i as u64 + 1));
}

#[test]
fn reduce_keeps_the_order_of_an_operation_that_does_not_commute() {
    let words: Vec<String> = (0..10_000).map(|i| format!("{i},")).collect();
    let joined = words.par_iter().cloned().reduce(String::new, |a, b| a + &b);
    assert_eq!(joined, words.concat());
    // The first of equal minima, the last of equal maxima, as `std`'s.
    let keyed: Vec<ByKey> = (0..100_000).map(|i| ByKey((i % 7) as u8, i)).collect();
    assert_eq!(
        keyed.par_iter().min().map(|k| k.1),
        keyed.iter().min().map(|k| k.1)
    );
    assert_eq!(
        keyed.par_iter().max().map(|k| k.1),
        keyed.iter().max().map(|k| k.1)
    );
    assert_eq!(
        keyed.iter().max().map(|k| k.1),
        Some(99_999 - (99_999 - 6) % 7)
    );
    let by_key = |k: &&ByKey| k.0;
    assert_eq!(
        keyed.par_iter().min_by_key(by_key).map(|k| k.1),
        keyed.iter().min_by_key(by_key).map(|k| k.1)
    );
    assert_eq!(
        keyed.par_iter().max_by_key(by_key).map(|k| k.1),
        keyed.iter().max_by_key(by_key).map(|k| k.1)
    );
    let compare = |a: &&ByKey, b: &&ByKey| a.0.cmp(&b.0);
    assert_eq!(
        keyed.par_iter().min_by(compare).map(|k| k.1),
        keyed.iter().min_by(compare).map(|k| k.1)
    );
    assert_eq!(
        keyed.par_iter().max_by(compare).map(|k| k.1),
        keyed.iter().max_by(compare).map(|k| k.1)
    );
    let none: [ByKey; 0] = [];
    assert!(
        none.par_iter().min_by_key(by_key).is_none() && none.par_iter().max_by(compare).is_none()
    );
}

/// Ordered by its key only: equal keys tell apart which item a search returned.
#[derive(Debug)]
struct ByKey(u8, usize);

impl PartialEq for ByKey {
    fn eq(&self, other: &ByKey) -> bool {
        self.0 == other.0
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &ByKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &ByKey) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// Counts its drops.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_panic_in_map_drops_every_item_written_once_and_resumes() {
    for exact in [true, false] {
        let (made, dropped) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let make = |i: usize| {
                if i == 77_777 {
                    panic!("item {i}");
                }
                made.fetch_add(1, Ordering::Relaxed);
                Counted(&dropped)
            };
            if exact {
                (0..200_000usize)
                    .into_par_iter()
                    .map(make)
                    .collect::<Vec<_>>()
            } else {
                (0..200_000usize)
                    .into_par_iter()
                    .filter(|i| i % 2 == 1)
                    .map(make)
                    .collect()
            }
        }));
        assert!(outcome.is_err(), "the panic resumes");
        drop(outcome);
        assert_eq!(
            dropped.into_inner(),
            made.into_inner(),
            "each item made dropped once"
        );
    }
}

#[test]
fn collect_after_filter_moves_each_item_once_in_order() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    // Past 4,096 of these 16-byte items the gathered items move into the output in
    // parallel; below, on the caller; a participant whose items all come first keeps them
    // in place, its `Vec` the output.
    for n in [0, 1, 2, WIDTH, 1_000, 100_000, 1_000_000] {
        filter_then_collect_moves_each_item_once_in_order(n);
        pool.install(|| filter_then_collect_moves_each_item_once_in_order(n));
    }
}

fn filter_then_collect_moves_each_item_once_in_order(n: usize) {
    let (made, dropped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut kept: Vec<(usize, Counted<'_>)> = vec![(usize::MAX, Counted(&dropped))];
    kept.par_extend((0..n).into_par_iter().filter(|i| i % 3 != 1).map(|i| {
        made.fetch_add(1, Ordering::Relaxed);
        (i, Counted(&dropped))
    }));
    let collected: Vec<(usize, Counted<'_>)> = (0..n)
        .into_par_iter()
        .filter(|i| i % 3 != 1)
        .map(|i| {
            made.fetch_add(1, Ordering::Relaxed);
            (i, Counted(&dropped))
        })
        .collect();
    let want: Vec<usize> = (0..n).filter(|i| i % 3 != 1).collect();
    let mut reserved: Vec<usize> = Vec::with_capacity(n);
    let storage = reserved.as_ptr();
    reserved.par_extend((0..n).into_par_iter().filter(|i| i % 3 != 1));
    assert_eq!(
        reserved, want,
        "par_extend into reserved storage, {n} items"
    );
    assert_eq!(
        reserved.as_ptr(),
        storage,
        "par_extend keeps the storage reserved, {n}"
    );
    let positions = |items: &[(usize, Counted<'_>)]| items.iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(positions(&collected), want, "collect, {n} items");
    assert_eq!(positions(&kept[1..]), want, "par_extend, {n} items");
    assert_eq!(kept[0].0, usize::MAX, "par_extend keeps what was there");
    assert_eq!(
        dropped.load(Ordering::Relaxed),
        0,
        "nothing dropped while held, {n}"
    );
    drop((collected, kept));
    assert_eq!(
        dropped.into_inner(),
        made.into_inner() + 1,
        "each item dropped once, {n} items"
    );
}

#[test]
fn iterators_nested_inside_iterators_are_exact() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let rows: Vec<Vec<u64>> = (0..64)
        .map(|r| (0..10_000).map(|c| value(r * 10_000 + c)).collect())
        .collect();
    let serial: Vec<u64> = rows
        .iter()
        .map(|row| row.iter().filter(|&&x| x % 3 == 0).sum())
        .collect();
    let nested = || -> Vec<u64> {
        rows.par_iter()
            .map(|row| row.par_iter().filter(|&&x| x % 3 == 0).sum())
            .collect()
    };
    assert_eq!(nested(), serial);
    assert_eq!(pool.install(nested), serial);
    // And inside a pool's tasks.
    let sums: Vec<u64> = pool.map(rows.len(), |r| rows[r].par_iter().sum());
    assert_eq!(
        sums,
        rows.iter()
            .map(|row| row.iter().sum::<u64>())
            .collect::<Vec<_>>()
    );
}

/// Runs `body` on a thread of its own; panics if it has not returned within a minute (an
/// endless source that did not end), else resumes its panic if it panicked.
fn ends_within_a_minute(what: &str, body: impl FnOnce() + Send + 'static) {
    let (done, ended) = std::sync::mpsc::channel();
    let runner = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match ended.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(()) => runner.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic::resume_unwind(runner.join().unwrap_err())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what} did not end"),
    }
}

#[test]
fn an_endless_source_ends_where_while_some_or_take_any_ends_it() {
    let endless = || rayforce_pool::iter::repeat(7u64);
    // The first item is `None` on every participant: nothing is yielded.
    let nothing = move || endless().map(|_| None::<u64>).while_some();
    ends_within_a_minute("while_some's collect", move || {
        assert_eq!(nothing().collect::<Vec<u64>>(), []);
    });
    ends_within_a_minute("while_some's count, sum and for_each", move || {
        assert_eq!(nothing().count(), 0);
        assert_eq!(nothing().sum::<u64>(), 0);
        nothing().for_each(|x| panic!("while_some yielded {x}"));
    });
    ends_within_a_minute("while_some's searches", move || {
        assert_eq!(nothing().find_any(|_| true), None);
        assert_eq!(nothing().find_first(|_| true), None);
        assert_eq!(nothing().min(), None);
        assert_eq!(nothing().fold(|| 0, |a, x| a + x).sum::<u64>(), 0);
    });
    // A `None` after a few thousand items: what came before it, and no more.
    let counted = move || {
        let seen = std::sync::Arc::new(AtomicUsize::new(0));
        endless()
            .map(move |x| (seen.fetch_add(1, Ordering::Relaxed) < 5_000).then_some(x))
            .while_some()
    };
    ends_within_a_minute("while_some after 5,000 items", move || {
        let got: Vec<u64> = counted().collect();
        assert!(
            got.len() <= 5_000 && got.iter().all(|&x| x == 7),
            "{}",
            got.len()
        );
    });
    ends_within_a_minute("take_any and take_any_while", move || {
        assert_eq!(endless().take_any(1_000).count(), 1_000);
        assert_eq!(endless().take_any(0).count(), 0);
        assert_eq!(endless().take_any_while(|&x| x != 7).count(), 0);
        let seen = AtomicUsize::new(0);
        let taken = endless()
            .take_any_while(|_| seen.fetch_add(1, Ordering::Relaxed) < 5_000)
            .count();
        assert!(taken <= 5_000, "{taken}");
    });
    // The ordered searches over usize::MAX positions, a match at either end.
    ends_within_a_minute(
        "find_first and find_last over usize::MAX positions",
        move || {
            assert_eq!(endless().find_first(|_| true), Some(7));
            let whole = || rayforce_pool::iter::repeat_n(7u8, usize::MAX);
            assert_eq!(whole().find_last(|_| true), Some(7));
            assert_eq!(whole().position_first(|x| x == 7), Some(0));
            assert_eq!(whole().position_last(|x| x == 7), Some(usize::MAX - 1));
        },
    );
    // Stacked: each ends where the one below it ended.
    ends_within_a_minute("stacked ends", move || {
        assert_eq!(endless().map(Some).take_any(5).while_some().count(), 5);
        assert_eq!(nothing().take_any(5).count(), 0);
        assert_eq!(endless().take_any(5).take_any_while(|_| true).count(), 5);
        assert_eq!(nothing().take_any_while(|_| true).count(), 0);
        let inner_ended = (0..4u32).into_par_iter().flat_map(move |_| nothing());
        assert_eq!(inner_ended.count(), 0);
    });
}
