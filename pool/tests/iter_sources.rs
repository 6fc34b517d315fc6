//! The owned and chunk sources give what `std`'s give: `vec.into_par_iter()` moves each
//! item out once and drops, once, every item no consumer took (a search that stopped, a
//! panic, the longer side of a `zip`); `par_chunks` and `par_chunks_mut` cut as
//! `chunks` and `chunks_mut` do, at every length around the chunk size.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

const WIDTH: usize = 3;

/// Counts its drops; carries a value.
#[derive(Debug)]
struct Counted<'a>(usize, &'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

fn counted(n: usize, drops: &AtomicUsize) -> Vec<Counted<'_>> {
    (0..n).map(|i| Counted(i, drops)).collect()
}

#[test]
fn an_owned_vec_moves_every_item_out_once() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for n in [0, 1, 2, WIDTH, 100_000] {
        let run = || {
            let drops = AtomicUsize::new(0);
            let values: Vec<usize> = counted(n, &drops).into_par_iter().map(|c| c.0).collect();
            assert_eq!(values, (0..n).collect::<Vec<_>>(), "{n}");
            assert_eq!(
                drops.load(Ordering::Relaxed),
                n,
                "each item dropped once, {n}"
            );
            let strings: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            let total: usize = strings.clone().into_par_iter().map(|s| s.len()).sum();
            assert_eq!(total, strings.iter().map(String::len).sum::<usize>());
            let odd: Vec<String> = strings
                .clone()
                .into_par_iter()
                .filter(|s| s.ends_with(['1', '3', '5', '7', '9']))
                .collect();
            assert_eq!(
                odd,
                strings
                    .iter()
                    .filter(|s| s.ends_with(['1', '3', '5', '7', '9']))
                    .cloned()
                    .collect::<Vec<_>>()
            );
        };
        run();
        pool.install(run);
    }
}

#[test]
fn items_an_owned_vec_did_not_hand_out_are_dropped_once() {
    let n = 200_000;
    // A search that stops early.
    let drops = AtomicUsize::new(0);
    let found = counted(n, &drops)
        .into_par_iter()
        .find_any(|c| c.0 == 1234)
        .map(|c| c.0);
    assert_eq!(found, Some(1234));
    assert_eq!(drops.load(Ordering::Relaxed), n, "find_any");
    let drops = AtomicUsize::new(0);
    let first = counted(n, &drops)
        .into_par_iter()
        .position_first(|c| c.0 % 1000 == 999);
    assert_eq!(first, Some(999));
    assert_eq!(drops.load(Ordering::Relaxed), n, "position_first");
    // The longer side of a zip.
    let drops = AtomicUsize::new(0);
    let pairs = counted(n, &drops)
        .into_par_iter()
        .zip(counted(n / 2, &drops))
        .count();
    assert_eq!(pairs, n / 2);
    assert_eq!(drops.load(Ordering::Relaxed), n + n / 2, "zip");
    // A panic in the middle, in place and by ranges.
    for exact in [true, false] {
        let drops = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let items = counted(n, &drops).into_par_iter();
            let step = |c: Counted<'_>| {
                assert!(c.0 != 77_777, "item {}", c.0);
                c.0
            };
            if exact {
                items.map(step).collect::<Vec<_>>()
            } else {
                items.filter(|c| c.0 % 2 == 1).map(step).collect()
            }
        }));
        assert!(outcome.is_err(), "the panic resumes");
        assert_eq!(
            drops.load(Ordering::Relaxed),
            n,
            "each item dropped once, exact {exact}"
        );
    }
    // Never consumed at all.
    let drops = AtomicUsize::new(0);
    drop(counted(1000, &drops).into_par_iter());
    assert_eq!(drops.load(Ordering::Relaxed), 1000);
    // An item whose drop panics: the others are dropped all the same, as `std`'s are.
    let drops = AtomicUsize::new(0);
    let items: Vec<PanicsOnDrop> = (0..1000).map(|i| PanicsOnDrop(i == 200, &drops)).collect();
    let iter = items.into_par_iter();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| drop(iter)));
    assert!(outcome.is_err(), "the drop's panic resumes");
    assert_eq!(drops.load(Ordering::Relaxed), 1000, "every item dropped");
}

/// Counts its drops; panics in its drop where it says so.
struct PanicsOnDrop<'a>(bool, &'a AtomicUsize);

impl Drop for PanicsOnDrop<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
        assert!(!self.0, "an item's drop panics");
    }
}

#[test]
fn array_windows_are_std_s_windows_as_arrays() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for len in [0, 1, 2, 3, 4, 100_003] {
        let xs: Vec<u32> = (0..len).collect();
        let check = || {
            let pairs: Vec<&[u32; 2]> = xs.par_array_windows().collect();
            let serial: Vec<&[u32; 2]> = xs.windows(2).map(|w| w.try_into().unwrap()).collect();
            assert_eq!(pairs, serial, "len {len}");
            let triples = xs.par_array_windows::<3>();
            assert_eq!(triples.len(), xs.windows(3).len(), "len {len}");
            let sums: Vec<u32> = triples.map(|&[a, b, c]| a + b + c).collect();
            let serial: Vec<u32> = xs.windows(3).map(|w| w.iter().sum()).collect();
            assert_eq!(sums, serial, "len {len}");
            let ones: Vec<&[u32; 1]> = xs.par_array_windows().rev().collect();
            assert_eq!(ones.len(), xs.len());
            assert!(ones.iter().zip(xs.iter().rev()).all(|(&&[a], &b)| a == b));
        };
        check();
        pool.install(check);
    }
}

#[test]
fn chunks_cut_as_std_cuts() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for len in [0, 1, 2, 6, 7, 8, 9, 100_003] {
        let xs: Vec<u32> = (0..len as u32).collect();
        for size in [1, 2, 7, 8, 1000] {
            let check = || {
                let sums: Vec<u32> = xs.par_chunks(size).map(|c| c.iter().sum()).collect();
                let serial: Vec<u32> = xs.chunks(size).map(|c| c.iter().sum()).collect();
                assert_eq!(sums, serial, "len {len}, size {size}");
                assert_eq!(xs.par_chunks(size).len(), serial.len());
                let exact: Vec<&[u32]> = xs.par_chunks_exact(size).collect();
                assert_eq!(exact, xs.chunks_exact(size).collect::<Vec<_>>());
                let rest = xs.par_chunks_exact(size).remainder();
                assert_eq!(rest, xs.chunks_exact(size).remainder());
                let from_back: Vec<&[u32]> = xs.par_rchunks(size).collect();
                assert_eq!(from_back, xs.rchunks(size).collect::<Vec<_>>());
                let exact_from_back: Vec<&[u32]> = xs.par_rchunks_exact(size).collect();
                assert_eq!(exact_from_back, xs.rchunks_exact(size).collect::<Vec<_>>());
                let rest = xs.par_rchunks_exact(size).remainder();
                assert_eq!(rest, xs.rchunks_exact(size).remainder());
                assert_eq!(
                    xs.par_rchunks_exact(size).len(),
                    xs.rchunks_exact(size).len()
                );
                let windows: Vec<&[u32]> = xs.par_windows(size).collect();
                assert_eq!(windows, xs.windows(size).collect::<Vec<_>>());
                assert_eq!(xs.par_windows(size).len(), xs.windows(size).len());
                assert_eq!(xs.par_chunks_exact(size).len(), xs.chunks_exact(size).len());
                assert_eq!(xs.par_rchunks(size).len(), xs.rchunks(size).len());
                // Through the adaptors that move positions, each source cut as std cuts.
                let moved: Vec<(&[u32], &[u32])> = xs
                    .par_rchunks(size)
                    .rev()
                    .skip(1)
                    .zip(xs.par_windows(size).take(3))
                    .collect();
                let serial: Vec<(&[u32], &[u32])> = xs
                    .rchunks(size)
                    .rev()
                    .skip(1)
                    .zip(xs.windows(size).take(3))
                    .collect();
                assert_eq!(moved, serial, "len {len}, size {size}");
                let mut ys = xs.clone();
                ys.par_chunks_mut(size).enumerate().for_each(|(i, chunk)| {
                    chunk.iter_mut().for_each(|y| *y += i as u32);
                });
                let mut serial_ys = xs.clone();
                serial_ys
                    .chunks_mut(size)
                    .enumerate()
                    .for_each(|(i, chunk)| {
                        chunk.iter_mut().for_each(|y| *y += i as u32);
                    });
                assert_eq!(ys, serial_ys, "mut, len {len}, size {size}");
                let mut ys = xs.clone();
                ys.par_chunks_exact_mut(size)
                    .enumerate()
                    .for_each(|(i, chunk)| chunk.iter_mut().for_each(|y| *y += i as u32));
                ys.par_rchunks_mut(size).enumerate().for_each(|(i, chunk)| {
                    chunk
                        .iter_mut()
                        .for_each(|y| *y = y.wrapping_mul(i as u32 + 2))
                });
                ys.par_rchunks_exact_mut(size)
                    .enumerate()
                    .for_each(|(i, chunk)| chunk.iter_mut().for_each(|y| *y ^= i as u32 + 1));
                let mut serial_ys = xs.clone();
                serial_ys
                    .chunks_exact_mut(size)
                    .enumerate()
                    .for_each(|(i, chunk)| chunk.iter_mut().for_each(|y| *y += i as u32));
                serial_ys
                    .rchunks_mut(size)
                    .enumerate()
                    .for_each(|(i, chunk)| {
                        chunk
                            .iter_mut()
                            .for_each(|y| *y = y.wrapping_mul(i as u32 + 2))
                    });
                serial_ys
                    .rchunks_exact_mut(size)
                    .enumerate()
                    .for_each(|(i, chunk)| chunk.iter_mut().for_each(|y| *y ^= i as u32 + 1));
                assert_eq!(
                    ys, serial_ys,
                    "exact and from the back, mut, len {len}, size {size}"
                );
                let mut chunks = ys.par_chunks_exact_mut(size);
                let rest_len = chunks.remainder().len();
                let rest = chunks.take_remainder();
                rest.iter_mut().for_each(|y| *y = u32::MAX);
                assert!(chunks.remainder().is_empty());
                chunks.for_each(|chunk| chunk.fill(0));
                let whole = len / size * size;
                assert_eq!(rest_len, len - whole);
                assert!(
                    ys[..whole].iter().all(|&y| y == 0),
                    "len {len}, size {size}"
                );
                assert!(ys[whole..].iter().all(|&y| y == u32::MAX));
                let mut chunks = ys.par_rchunks_exact_mut(size);
                assert_eq!(chunks.remainder().len(), len % size);
                chunks.take_remainder().fill(7);
                assert!(chunks.remainder().is_empty());
                chunks.for_each(|chunk| chunk.fill(1));
                let (front, back) = ys.split_at(len % size);
                assert!(front.iter().all(|&y| y == 7), "len {len}, size {size}");
                assert!(back.iter().all(|&y| y == 1), "len {len}, size {size}");
                let rest = ys.par_rchunks_exact_mut(size).into_remainder();
                assert_eq!(rest.len(), len % size);
                rest.fill(3);
                assert!(ys[..len % size].iter().all(|&y| y == 3));
            };
            check();
            pool.install(check);
        }
    }
}

/// Asserts that `got`'s pieces are `expected`'s: the same items, each at the same place.
fn same_pieces<T: PartialEq + std::fmt::Debug>(got: &[&[T]], expected: &[&[T]], what: &str) {
    let placed = |pieces: &[&[T]]| -> Vec<(*const T, usize)> {
        pieces.iter().map(|p| (p.as_ptr(), p.len())).collect()
    };
    assert_eq!(got, expected, "{what}");
    assert_eq!(placed(got), placed(expected), "{what}: placed");
}

#[test]
fn splits_cut_as_std_cuts() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    // Every slice of up to 6 items of 0, 1 and 2, then long ones whose separators and runs
    // fall on every side of a 4,096-item block's edge.
    let mut slices: Vec<Vec<u8>> = vec![Vec::new()];
    let mut last = slices.clone();
    for _ in 0..6 {
        last = (last.iter())
            .flat_map(|xs| (0..3).map(move |x| [&xs[..], &[x]].concat()))
            .collect();
        slices.extend(last.iter().cloned());
    }
    for edge in [4096, 8192] {
        for offset in [edge - 2, edge - 1, edge, edge + 1] {
            let mut xs: Vec<u8> = (0..3 * 4096 + 7).map(|i| (i % 5 == 0) as u8).collect();
            xs[offset] = 2;
            slices.push(xs);
        }
    }
    slices.push((0..20_000).map(|i| (i / 4096 % 2) as u8).collect());
    let separator = |x: &u8| *x == 0;
    let same = |a: &u8, b: &u8| a <= b;
    for xs in &slices {
        let check = || {
            let what = format!("{xs:?}");
            let split: Vec<&[u8]> = xs.par_split(separator).collect();
            same_pieces(&split, &xs.split(separator).collect::<Vec<_>>(), &what);
            let inclusive: Vec<&[u8]> = xs.par_split_inclusive(separator).collect();
            let serial: Vec<&[u8]> = xs.split_inclusive(separator).collect();
            same_pieces(&inclusive, &serial, &what);
            let runs: Vec<&[u8]> = xs.par_chunk_by(same).collect();
            same_pieces(&runs, &xs.chunk_by(same).collect::<Vec<_>>(), &what);
            // Mutably: the same pieces, at the same places.
            type Cut = fn(&mut [u8]) -> Vec<&mut [u8]>;
            let serial: [Cut; 3] = [
                |xs| xs.split_mut(|x| *x == 0).collect(),
                |xs| xs.split_inclusive_mut(|x| *x == 0).collect(),
                |xs| xs.chunk_by_mut(|a, b| a <= b).collect(),
            ];
            let parallel: [Cut; 3] = [
                |xs| xs.par_split_mut(|x| *x == 0).collect(),
                |xs| xs.par_split_inclusive_mut(|x| *x == 0).collect(),
                |xs| xs.par_chunk_by_mut(|a, b| a <= b).collect(),
            ];
            let placed = |pieces: Vec<&mut [u8]>, base: usize| -> Vec<(usize, usize)> {
                (pieces.into_iter())
                    .map(|piece| (piece.as_ptr() as usize - base, piece.len()))
                    .collect()
            };
            for (serial, parallel) in serial.into_iter().zip(parallel) {
                let (mut ys, mut zs) = (xs.clone(), xs.clone());
                let (ys_base, zs_base) = (ys.as_ptr() as usize, zs.as_ptr() as usize);
                let expected = placed(serial(&mut ys), ys_base);
                assert_eq!(placed(parallel(&mut zs), zs_base), expected, "mut {what}");
            }
            // Each piece written by the thread it was lent to.
            let (mut ys, mut zs) = (xs.clone(), xs.clone());
            ys.split_mut(separator).for_each(<[u8]>::reverse);
            ys.split_inclusive_mut(separator)
                .for_each(|p| p.rotate_right(usize::from(!p.is_empty())));
            ys.chunk_by_mut(same)
                .for_each(|run| run.fill(run.len() as u8));
            zs.par_split_mut(separator).for_each(<[u8]>::reverse);
            zs.par_split_inclusive_mut(separator)
                .for_each(|p| p.rotate_right(usize::from(!p.is_empty())));
            zs.par_chunk_by_mut(same)
                .for_each(|run| run.fill(run.len() as u8));
            assert_eq!(zs, ys, "written {what}");
        };
        check();
        pool.install(check);
    }
    // Zero-sized items, every one a separator.
    let mut units = [(); 9];
    let every = |_: &()| true;
    assert_eq!(units.par_split(every).count(), units.split(every).count());
    let inclusive: Vec<&[()]> = units.par_split_inclusive(every).collect();
    assert_eq!(inclusive, units.split_inclusive(every).collect::<Vec<_>>());
    assert_eq!(units.par_chunk_by(|_, _| false).count(), 9);
    assert_eq!(units.par_split_mut(every).count(), 10);
    assert_eq!(units.par_chunk_by_mut(|_, _| true).count(), 1);
}

#[test]
#[should_panic(expected = "more than a usize counts")]
fn a_split_of_usize_max_zero_sized_items_is_refused() {
    // SAFETY: a slice of zero-sized items may be any length, at a dangling aligned pointer.
    let units: &[()] = unsafe {
        std::slice::from_raw_parts(std::ptr::NonNull::<()>::dangling().as_ptr(), usize::MAX)
    };
    let _ = units.par_split(|_| false).count();
}

#[test]
#[should_panic(expected = "chunk_size must not be zero")]
fn a_zero_chunk_size_is_refused() {
    let _ = [1, 2, 3].par_chunks(0);
}

#[test]
fn with_min_len_and_with_max_len_bound_the_claimed_ranges() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    pool.install(|| {
        // One range of every position: one thread saw them all.
        let threads: std::collections::HashSet<_> = (0..100_000u32)
            .into_par_iter()
            .with_min_len(100_000)
            .map(|_| std::thread::current().id())
            .collect();
        assert_eq!(threads.len(), 1, "a range below the minimum was claimed");
        // Ranges of one position: a panicking item stops no other.
        let ran = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            (0..10_000u32)
                .into_par_iter()
                .with_max_len(1)
                .for_each(|i| {
                    assert!(i != 7_777, "item {i}");
                    ran.fetch_add(1, Ordering::Relaxed);
                });
        }));
        assert!(outcome.is_err());
        assert_eq!(
            ran.into_inner(),
            9_999,
            "every item but the panicking one ran"
        );
        // Both, through adaptors, and results as without them.
        let xs: Vec<u64> = (0..100_003).collect();
        let squares: Vec<u64> = xs
            .par_iter()
            .with_min_len(7)
            .with_max_len(50)
            .map(|x| x * x)
            .collect();
        assert_eq!(squares, xs.iter().map(|x| x * x).collect::<Vec<_>>());
        let evens = xs
            .par_iter()
            .with_max_len(3)
            .filter(|&&x| x % 2 == 0)
            .count();
        assert_eq!(evens, 50_002);
    });
}
