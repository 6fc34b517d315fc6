//! The sources made whole before they are consumed, and the bridge: `iter::split` yields
//! every piece its splitter leaves, in order; `walk_tree_prefix`/`walk_tree_postfix` every
//! node, in prefix/postfix order; `par_bridge` every item of a sequential iterator once.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::{iter, Pool};
use std::sync::atomic::{AtomicUsize, Ordering};

const WIDTH: usize = 3;

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn check_split() {
    let cut = |n: u64| {
        if n < 2 {
            (n, None)
        } else {
            (n - 2, Some(n - 1))
        }
    };
    assert_eq!(iter::split(25u64, cut).map(fib).sum::<u64>(), fib(25));
    // Ranges halved until a piece is at most 10 long: the pieces are the range, in order.
    let halve = |r: std::ops::Range<u32>| {
        if r.len() <= 10 {
            (r, None)
        } else {
            let mid = r.start + r.len() as u32 / 2;
            (r.start..mid, Some(mid..r.end))
        }
    };
    let pieces: Vec<std::ops::Range<u32>> = iter::split(0..100_000u32, halve).collect();
    assert_eq!(pieces.first().map(|r| r.start), Some(0));
    assert!(
        pieces.windows(2).all(|w| w[0].end == w[1].start),
        "in order, no gap"
    );
    assert_eq!(pieces.last().map(|r| r.end), Some(100_000));
    let items: Vec<u32> = iter::split(0..100_000u32, halve)
        .flat_map_iter(|r| r)
        .collect();
    assert_eq!(items, (0..100_000).collect::<Vec<_>>());
    // A quicksort by split, as rayon-demo's: every piece sorted where it is.
    let mut xs: Vec<u64> = (0..200_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40)
        .collect();
    let mut sorted = xs.clone();
    sorted.sort_unstable();
    iter::split(&mut xs[..], |v| {
        if v.len() < 2 {
            return (v, None);
        }
        let pivot = v[v.len() / 2];
        let mut lo = 0;
        for i in 0..v.len() {
            if v[i] < pivot {
                v.swap(i, lo);
                lo += 1;
            }
        }
        if lo == 0 {
            return (v, None); // the pivot is least: sort this piece whole
        }
        let (left, right) = v.split_at_mut(lo);
        (left, Some(right))
    })
    .for_each(|piece| piece.sort_unstable());
    assert_eq!(xs, sorted);
}

fn check_walks() {
    const SIZE: u64 = 100_000;
    let prefix: Vec<u64> = iter::walk_tree_prefix(0..SIZE, |r| {
        let mid = (r.start + 1 + r.end) / 2;
        [r.start + 1..mid, mid..r.end]
            .into_iter()
            .filter(|r| !r.is_empty())
    })
    .map(|r| r.start)
    .collect();
    assert_eq!(prefix, (0..SIZE).collect::<Vec<_>>(), "prefix order");
    let postfix: Vec<u64> = iter::walk_tree_postfix(0..SIZE, |r| {
        let mid = (r.start + r.end - 1) / 2;
        [r.start..mid, mid..r.end - 1]
            .into_iter()
            .filter(|r| !r.is_empty())
    })
    .map(|r| r.end - 1)
    .collect();
    assert_eq!(postfix, (0..SIZE).collect::<Vec<_>>(), "postfix order");
    let leaf = iter::walk_tree_prefix(7u8, |_| None).collect::<Vec<_>>();
    assert_eq!(leaf, [7]);
}

fn check_bridge() {
    let pulled = AtomicUsize::new(0);
    let mut squares: Vec<u64> = (0..100_000u64)
        .inspect(|_| {
            pulled.fetch_add(1, Ordering::Relaxed);
        })
        .par_bridge()
        .map(|x| x * x)
        .collect();
    squares.sort_unstable();
    assert_eq!(squares, (0..100_000u64).map(|x| x * x).collect::<Vec<_>>());
    assert_eq!(pulled.into_inner(), 100_000, "each item pulled once");
    assert_eq!(std::iter::empty::<u8>().par_bridge().count(), 0);
    let found = (0..1_000_000u32).par_bridge().find_any(|&x| x == 777);
    assert_eq!(found, Some(777));
}

#[test]
fn split_walks_and_bridge_yield_every_item_on_the_default_pool_and_inside_install() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for check in [check_split, check_walks, check_bridge] {
        check();
        pool.install(check);
    }
}

#[test]
fn fold_with_fold_chunks_collect_into_vec_and_nested_unzip_match_std() {
    let xs: Vec<u64> = (0..100_003).collect();
    assert_eq!(
        xs.par_iter().fold_with(0u64, |a, &b| a + b).sum::<u64>(),
        xs.iter().sum()
    );
    let chunks: Vec<u64> = xs.par_iter().fold_chunks(7, || 0, |a, &b| a + b).collect();
    assert_eq!(
        chunks,
        xs.chunks(7).map(|c| c.iter().sum()).collect::<Vec<u64>>()
    );
    let maxima: Vec<u64> = xs
        .par_iter()
        .fold_chunks_with(1000, 0, |a, &b| a.max(b))
        .collect();
    assert_eq!(
        maxima,
        xs.chunks(1000)
            .map(|c| c[c.len() - 1])
            .collect::<Vec<u64>>()
    );
    let mut out = Vec::with_capacity(200_000);
    let storage = out.as_ptr();
    xs.par_iter().map(|x| x + 1).collect_into_vec(&mut out);
    assert_eq!(out, xs.iter().map(|x| x + 1).collect::<Vec<_>>());
    assert_eq!(out.as_ptr(), storage, "collect_into_vec reuses the storage");
    xs[..10].par_iter().copied().collect_into_vec(&mut out);
    assert_eq!(out, xs[..10], "the old items are dropped first");
    let (indices, (squares, cubes)): (Vec<usize>, (Vec<u64>, Vec<u64>)) = xs
        .par_iter()
        .map(|&x| (x * x, x * x * x))
        .enumerate()
        .unzip();
    assert_eq!(indices, (0..xs.len()).collect::<Vec<_>>());
    assert_eq!(squares[12], 144);
    assert_eq!(cubes[3], 27);
    let debug = format!("{:?}", xs.par_iter().map(|x| x + 1).filter(|_| true));
    assert!(debug.starts_with("Filter { base: Map"), "{debug}");
    let debug = format!("{:?}", xs.par_iter().fold_chunks(3, || 0, |a, _| a));
    assert!(debug.starts_with("FoldChunks { base: Iter"), "{debug}");
}

/// A value that counts its drops.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The number of positions, as any generic code over the trait may ask.
fn positions_of<I: ParallelIterator>(iter: &I) -> usize {
    iter.position_count()
}

#[test]
fn a_fold_whose_making_panicked_is_never_made_again_and_drops_each_item_once() {
    let pool = Pool::builder().workers(2).build().unwrap();
    let n = 10_000;
    let dropped = AtomicUsize::new(0);
    let items: Vec<(usize, Counted<'_>)> = (0..n).map(|i| (i, Counted(&dropped))).collect();
    let folded = items.into_par_iter().fold(Vec::new, |mut kept, (i, item)| {
        assert!(i != n - 1, "item {i}");
        kept.push(item);
        kept
    });
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| positions_of(&folded))
    }));
    assert!(first.is_err(), "the fold's panic reached the caller");
    // Making again would move out the items already moved out: it panics instead.
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| folded.flatten_iter().count())
    }));
    let payload = again.expect_err("making again panicked");
    let message = payload.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(message.contains("cannot be made again"), "{message:?}");
    assert_eq!(dropped.load(Ordering::Relaxed), n, "each item dropped once");
}

#[test]
fn computed_sources_clone_before_and_after_they_are_made() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let words: Vec<String> = (0..10_000).map(|i| format!("{i},")).collect();
    let serial = words.concat();
    let joined = |folded: Vec<String>| folded.concat();
    pool.install(|| {
        // Before: the clone makes its own accumulators from a copy of the owned words.
        let folded = words
            .clone()
            .into_par_iter()
            .fold(String::new, |a, w| a + &w);
        let copy = folded.clone();
        assert_eq!(joined(copy.collect()), serial);
        assert_eq!(joined(folded.collect()), serial);
        // After: the words are moved into the accumulators; the clone copies those.
        let folded = words
            .clone()
            .into_par_iter()
            .fold(String::new, |a, w| a + &w);
        let made = positions_of(&folded);
        let copy = folded.clone();
        assert_eq!(positions_of(&copy), made);
        assert_eq!(joined(copy.collect()), serial);
        assert_eq!(joined(folded.collect()), serial);
        // Two threads cloning one unmade source at once each get every item.
        let pieces = iter::split(0..10_000u32, |r| {
            if r.len() <= 100 {
                (r, None)
            } else {
                let mid = r.start + r.len() as u32 / 2;
                (r.start..mid, Some(mid..r.end))
            }
        });
        let counts: Vec<usize> = std::thread::scope(|s| {
            let clones: Vec<_> = (0..2)
                .map(|_| s.spawn(|| pieces.clone().map(|r| r.len()).sum()))
                .collect();
            clones.into_iter().map(|c| c.join().unwrap()).collect()
        });
        assert_eq!(counts, [10_000, 10_000]);
        let walked = iter::walk_tree_prefix(0u32..64, |r| {
            let mid = (r.start + 1 + r.end) / 2;
            [r.start + 1..mid, mid..r.end]
                .into_iter()
                .filter(|r| !r.is_empty())
        });
        let starts: Vec<u32> = walked.clone().map(|r| r.start).collect();
        assert_eq!(starts, (0..64).collect::<Vec<_>>());
        assert_eq!(walked.count(), 64);
        // An unindexed base's items gathered for `intersperse`, before and after.
        let odd = || words.par_iter().filter(|w| w.len() % 2 == 1).cloned();
        let expected: Vec<String> = words.iter().filter(|w| w.len() % 2 == 1).cloned().collect();
        let expected = expected.join(" ");
        let spaced = odd().intersperse(String::from(" "));
        let copy = spaced.clone();
        assert_eq!(copy.collect::<Vec<_>>().concat(), expected);
        assert_eq!(positions_of(&spaced), 2 * expected.split(' ').count() - 1);
        let copy = spaced.clone();
        assert_eq!(copy.collect::<Vec<_>>().concat(), expected);
        assert_eq!(spaced.collect::<Vec<_>>().concat(), expected);
    });
}

#[test]
fn a_clone_taken_while_the_items_are_made_waits_for_them_and_copies_them() {
    let pool = Pool::builder().workers(2).build().unwrap();
    let words: Vec<String> = (0..1_000).map(|i| format!("{i},")).collect();
    let (started, making) = std::sync::mpsc::channel();
    let started = std::sync::Mutex::new(Some(started));
    let folded = words.par_iter().fold(String::new, |a, w| {
        if let Some(started) = started.lock().unwrap().take() {
            started.send(()).unwrap();
            // Long enough that the clone below comes while this making is under way.
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        a + w
    });
    let copy = std::thread::scope(|s| {
        let maker = s.spawn(|| pool.install(|| positions_of(&folded)));
        making.recv().unwrap();
        let copy = folded.clone();
        assert!(maker.join().unwrap() >= 1);
        copy
    });
    assert_eq!(copy.collect::<Vec<_>>().concat(), words.concat());
    assert_eq!(folded.collect::<Vec<_>>().concat(), words.concat());
}
