//! The data-parallel operations give the serial result exactly: at 0, 1, 2, the pool's
//! width and 1e6 items, narrow and wide, and nested inside a task (shared with idle helpers;
//! inline while none is).
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::{Pool, Runs};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::thread;

fn pool() -> Pool {
    Pool::builder().workers(3).wide_workers(4).build().unwrap()
}

/// The sizes every operation is checked at.
fn sizes(pool: &Pool) -> [usize; 6] {
    [0, 1, 2, pool.width(), pool.wide_width(), 1_000_000]
}

/// A cheap function of the index whose serial results are easy to state.
fn value(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40
}

/// Every operation on `runs` (narrow or wide), against serial code, at `n` items.
fn check_all<R: Runs>(runs: &R, n: usize) {
    let expected: Vec<u64> = (0..n).map(value).collect();
    assert_eq!(runs.map(n, value), expected, "map, {n}");
    assert_eq!(runs.map_slice(&expected, |v| v + 1), {
        expected.iter().map(|v| v + 1).collect::<Vec<_>>()
    });

    let mut out = vec![0u64; n];
    runs.for_each_mut(&mut out, |i, o| *o = value(i));
    assert_eq!(out, expected, "for_each_mut, {n}");
    let mut parts = vec![0u64; n];
    let offsets = std::sync::Mutex::new(Vec::new());
    runs.parts_mut(&mut parts, |offset, part| {
        offsets.lock().unwrap().push((offset, part.len()));
        for (k, o) in part.iter_mut().enumerate() {
            *o += value(offset + k); // += : an item written twice would show
        }
    });
    assert_eq!(parts, expected, "parts_mut, {n}");
    let mut offsets = offsets.into_inner().unwrap();
    offsets.sort_unstable();
    let mut next = 0;
    for (offset, len) in offsets {
        assert!(
            offset == next && len > 0,
            "parts_mut, {n}: a gap or overlap at {offset} (next {next}, len {len})"
        );
        next += len;
    }
    assert_eq!(next, n, "parts_mut covers every item, {n}");
    let mut chunked = vec![usize::MAX; n];
    runs.chunks_mut(&mut chunked, 7, |c, chunk| chunk.fill(c));
    assert!(
        chunked.iter().enumerate().all(|(i, &c)| c == i / 7),
        "chunks_mut, {n}"
    );

    let sum: u64 = expected.iter().sum();
    assert_eq!(runs.sum(n, value), sum, "sum, {n}");
    let folded = runs.fold(n, || 0u64, |acc, i| *acc += value(i), |a, b| a + b);
    assert_eq!(folded, sum, "fold, {n}");
    assert_eq!(
        runs.reduce_with(n, value, u64::max),
        expected.iter().copied().max()
    );
    let min_at = (0..n).min_by_key(|&i| value(i) % 1000);
    assert_eq!(
        runs.position_min_by_key(n, |i| value(i) % 1000),
        min_at,
        "position_min_by_key, {n}"
    );
    let max_at = (0..n).max_by_key(|&i| value(i) % 1000);
    assert_eq!(
        runs.position_max_by_key(n, |i| value(i) % 1000),
        max_at,
        "position_max_by_key, {n}"
    );

    let target = n.saturating_sub(1) / 2;
    let found = runs.position_any(n, |i| i == target);
    assert_eq!(found, (n > 0).then_some(target), "position_any, {n}");
    // `value` is injective below 2^24 items, so the target's value is found at the target.
    let found = runs.position_any_slice(&expected, |&v| v == value(target));
    assert_eq!(found, (n > 0).then_some(target), "position_any_slice, {n}");
    assert_eq!(
        runs.position_any_slice(&expected, |&v| v == u64::MAX),
        None,
        "position_any_slice, {n}"
    );
    assert!(!runs.any(n, |i| value(i) == u64::MAX), "any, {n}");
    assert!(runs.all(n, |i| value(i) < 1 << 24), "all, {n}");

    let mut inclusive = vec![0u64; n];
    runs.scan_inclusive(&expected, &mut inclusive, |a, b| a.wrapping_add(*b));
    let mut acc = 0u64;
    let serial: Vec<u64> = expected
        .iter()
        .map(|v| {
            acc = acc.wrapping_add(*v);
            acc
        })
        .collect();
    assert_eq!(inclusive, serial, "scan_inclusive, {n}");
    let mut exclusive = vec![7u64; n];
    runs.scan_exclusive(&expected, &mut exclusive, 0, |a, b| a.wrapping_add(*b));
    let shifted: Vec<u64> = (0..n)
        .map(|i| if i == 0 { 0 } else { serial[i - 1] })
        .collect();
    assert_eq!(exclusive, shifted, "scan_exclusive, {n}");
}

#[test]
fn every_operation_matches_serial_code_narrow_and_wide() {
    let pool = pool();
    for n in sizes(&pool) {
        check_all(&pool, n);
        check_all(&pool.wide(), n);
    }
}

/// `x -> a x + b` (wrapping): composing maps is associative but not commutative, so a
/// scan that combined two blocks' parts in the wrong order would show.
type Affine = (u64, u64);

/// `f` then `g`.
fn then(f: &Affine, g: &Affine) -> Affine {
    (
        f.0.wrapping_mul(g.0),
        f.1.wrapping_mul(g.0).wrapping_add(g.1),
    )
}

#[test]
fn a_scan_of_an_operation_that_does_not_commute_keeps_the_order() {
    let pool = pool();
    let n = 300_000; // many blocks, so blocks start before the ones before them end
    let maps: Vec<Affine> = (0..n).map(|i| (value(i) | 1, value(i + n))).collect();
    let mut serial = Vec::with_capacity(n);
    let mut acc = (1, 0);
    for map in &maps {
        serial.push(acc);
        acc = then(&acc, map);
    }
    for round in 0..20 {
        let mut exclusive = vec![(0, 0); n];
        pool.scan_exclusive(&maps, &mut exclusive, (1, 0), then);
        assert_eq!(exclusive, serial, "scan_exclusive, round {round}");
        let mut inclusive = vec![(0, 0); n];
        pool.wide().scan_inclusive(&maps, &mut inclusive, then);
        assert_eq!(
            inclusive[..n - 1],
            serial[1..],
            "scan_inclusive, round {round}"
        );
        assert_eq!(inclusive[n - 1], acc, "scan_inclusive, round {round}");
    }
}

#[test]
fn operations_nested_inside_a_task_match() {
    let pool = pool();
    let checked = AtomicUsize::new(0);
    pool.dispatch(3, |task| {
        check_all(&pool, [2, 1000, 100_000][task]);
        checked.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(checked.into_inner(), 3);
}

#[test]
fn an_operation_inside_a_task_runs_inline_while_no_thread_is_idle() {
    // Both of the pool's threads are inside the dispatch's tasks, held there by the
    // barriers, while each runs its nested operation: nobody is idle to share it. (A helper
    // that caught its permit spinning counts as spinning until its first task ends: with
    // spinning on, these nested maps would post, in vain.)
    let pool = Pool::builder().workers(2).spin_us(0).build().unwrap();
    let (before, after) = (Barrier::new(2), Barrier::new(2));
    let inline_before = pool.stats().inline_dispatches;
    for _ in 0..20 {
        pool.dispatch(2, |_| {
            before.wait();
            let here = thread::current().id();
            let threads = pool.map(10_000, |_| thread::current().id());
            assert!(
                threads.iter().all(|&id| id == here),
                "shared with a busy thread"
            );
            after.wait();
        });
    }
    // Not posted at all: the 40 nested maps ran inline, the 20 dispatches did not.
    assert_eq!(pool.stats().inline_dispatches - inline_before, 40);
}

#[test]
fn an_operation_its_call_site_knows_to_be_small_runs_on_the_caller_alone() {
    // Two items. Unoptimised, and more so under the sanitizer, a caller's part of a posted
    // region costs over 1 us a task (its claim and withdraw), so its site never learns
    // the region is small: there only the counts are checked, and `solo.rs`'s tests check
    // the rule itself.
    let pool = pool();
    let sum = || pool.sum(2, value);
    let expected = value(0) + value(1);
    assert_eq!(
        sum(),
        expected,
        "its site unknown: shared, and its rate learnt"
    );
    let before = pool.stats();
    for _ in 0..100 {
        assert_eq!(sum(), expected);
    }
    let after = pool.stats();
    let alone = after.inline_dispatches - before.inline_dispatches;
    assert_eq!(after.dispatches - before.dispatches, 100);
    assert!(alone <= 100);
    if !cfg!(debug_assertions) {
        assert!(alone >= 50, "{alone} of 100 ran on the caller alone");
    }
}

#[test]
fn init_runs_at_most_once_per_participant_of_a_region() {
    let pool = pool();
    for n in [1, 2, 5, 1000, 100_000] {
        for wide in [false, true] {
            let inits = AtomicUsize::new(0);
            let init = || {
                inits.fetch_add(1, Ordering::Relaxed);
                Vec::new()
            };
            let fold = |seen: &mut Vec<usize>, i| seen.push(i);
            let combine = |mut a: Vec<usize>, b: Vec<usize>| {
                a.extend(b);
                a
            };
            let mut all = if wide {
                pool.wide().fold(n, init, fold, combine)
            } else {
                pool.fold(n, init, fold, combine)
            };
            let width = if wide {
                pool.wide_width()
            } else {
                pool.width()
            };
            let inits = inits.into_inner();
            assert!(
                (1..=width).contains(&inits),
                "{inits} inits, {n} items, width {width}"
            );
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "every index once, {n}");
        }
    }
}

#[test]
fn a_group_by_with_one_map_per_participant() {
    let pool = pool();
    let keys: Vec<u32> = (0..1_000_000u32)
        .map(|i| (value(i as usize) % 10_000) as u32)
        .collect();
    let groups = pool.fold(
        keys.len(),
        HashMap::<u32, u64>::new,
        |map, i| *map.entry(keys[i]).or_default() += 1,
        |mut a, b| {
            for (k, v) in b {
                *a.entry(k).or_default() += v;
            }
            a
        },
    );
    let mut serial = HashMap::<u32, u64>::new();
    for &k in &keys {
        *serial.entry(k).or_default() += 1;
    }
    assert_eq!(groups, serial);
}

#[test]
fn position_any_stops_within_a_check_of_the_match() {
    let pool = pool();
    let n = 1_000_000;
    let indices: Vec<usize> = (0..n).collect();
    for at in [n / 10, n * 9 / 10] {
        for form in ["position_any", "position_any_slice"] {
            let (tested, after) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let matched = AtomicBool::new(false);
            let test = |i: usize| {
                tested.fetch_add(1, Ordering::Relaxed);
                if matched.load(Ordering::SeqCst) {
                    after.fetch_add(1, Ordering::Relaxed);
                }
                let hit = i == at;
                if hit {
                    matched.store(true, Ordering::SeqCst);
                }
                hit
            };
            let found = match form {
                "position_any" => pool.position_any(n, test),
                _ => pool.position_any_slice(&indices, |&i| test(i)),
            };
            assert_eq!(found, Some(at), "{form}");
            let (tested, after) = (tested.into_inner(), after.into_inner());
            assert!(
                tested < n,
                "{form}: tested {tested} of {n} for a match at {at}"
            );
            // After the match, each other participant finishes at most the items before its
            // next look at the stop flag (at most 1,024 later: `find.rs`), and claims
            // nothing more.
            let bound = 1024 * pool.width();
            assert!(
                after <= bound,
                "{form}: {after} tested after the match (at most {bound})"
            );
        }
    }
}

#[test]
fn the_worker_index_is_the_same_thread_from_dispatch_to_dispatch() {
    let pool = pool();
    let threads: Vec<std::sync::Mutex<Vec<std::thread::ThreadId>>> =
        (0..pool.wide_width()).map(|_| Default::default()).collect();
    for _ in 0..200 {
        pool.dispatch_with_worker(8, threads.len(), |worker, _| {
            threads[worker]
                .lock()
                .unwrap()
                .push(std::thread::current().id());
        });
    }
    let caller = std::thread::current().id();
    for (worker, seen) in threads.iter().enumerate() {
        let seen: HashSet<_> = seen.lock().unwrap().iter().copied().collect();
        assert!(
            seen.len() <= 1,
            "worker {worker} ran on {} threads",
            seen.len()
        );
        if worker == 0 {
            assert!(seen.iter().all(|&t| t == caller), "worker 0 is the caller");
        }
    }
}

#[test]
fn chunks_of_zero_sized_items_near_usize_max_never_wrap() {
    let pool = pool();
    for len in [usize::MAX, usize::MAX - 1, usize::MAX / 2 + 2] {
        let mut items = vec![(); len];
        for size in [
            usize::MAX,
            usize::MAX - 1,
            usize::MAX / 2 + 1,
            usize::MAX / 3,
        ] {
            let chunks: std::sync::Mutex<Vec<(usize, usize)>> = Default::default();
            pool.chunks_mut(&mut items, size, |chunk, part| {
                chunks.lock().unwrap().push((chunk, part.len()));
            });
            let mut chunks = chunks.into_inner().unwrap();
            chunks.sort_unstable();
            let expected: Vec<(usize, usize)> =
                items.chunks(size).map(<[()]>::len).enumerate().collect();
            assert_eq!(chunks, expected, "len {len}, size {size}");
        }
    }
}
