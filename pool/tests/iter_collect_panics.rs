//! A `collect` in place whose chain panics: every item made (taken from an owned source,
//! or made by the chain) is dropped exactly once, and the first panic reaches the caller,
//! whatever the adaptors between the source and the output (`rev`, which gathers a range
//! before yielding it; `panic_fuse`, which ends the other ranges early; a per-range state
//! whose `Drop` panics), and whatever the output held before.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts of values made and dropped.
#[derive(Default)]
struct Tally {
    made: AtomicUsize,
    dropped: AtomicUsize,
}

impl Tally {
    fn make(&self, value: usize) -> Counted<'_> {
        self.made.fetch_add(1, Ordering::Relaxed);
        Counted { tally: self, value }
    }

    /// Every value made was dropped exactly once (`what` names the case).
    fn assert_each_dropped_once(&self, what: &str) {
        let (made, dropped) = (
            self.made.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
        );
        assert_eq!(dropped, made, "{what}: {made} made, {dropped} dropped");
    }
}

/// A value that counts its drop.
struct Counted<'a> {
    tally: &'a Tally,
    value: usize,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.tally.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

fn pools() -> [Pool; 2] {
    [1, 3].map(|width| Pool::builder().workers(width).build().unwrap())
}

/// Runs `collect` on `pool` and asserts that it panicked with a message starting
/// `expected`.
fn assert_panics(pool: &Pool, expected: &str, collect: impl FnOnce() + Send) {
    let payload = panic::catch_unwind(AssertUnwindSafe(|| pool.install(collect)))
        .expect_err("the panic reached the caller");
    let message = (payload.downcast_ref::<String>().cloned())
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(message.starts_with(expected), "panicked with {message:?}");
}

#[test]
fn an_owned_source_reversed_then_mapped_drops_each_item_once_when_the_map_panics() {
    for pool in pools() {
        for n in [2, 10, 1_000, 100_000] {
            for panicking in [0, n / 2, n - 1] {
                for max_len in [1, 7, usize::MAX] {
                    let tally = Tally::default();
                    let items: Vec<Counted<'_>> = (0..n).map(|i| tally.make(i)).collect();
                    assert_panics(&pool, "item ", || {
                        let _: Vec<Counted<'_>> = (items.into_par_iter().rev())
                            .with_max_len(max_len)
                            .map(|item| {
                                assert!(item.value != panicking, "item {panicking}");
                                item
                            })
                            .collect();
                    });
                    tally.assert_each_dropped_once(&format!(
                        "rev, n {n}, at {panicking}, max {max_len}"
                    ));
                }
            }
        }
    }
}

#[test]
fn a_reversed_map_that_panics_makes_and_drops_each_item_once() {
    for pool in pools() {
        for n in [2usize, 1_000, 10_000] {
            let tally = Tally::default();
            assert_panics(&pool, "item ", || {
                let made = (0..n).into_par_iter().map(|i| {
                    assert!(i != n / 3, "item {i}");
                    tally.make(i)
                });
                let _: Vec<Counted<'_>> = made.rev().collect();
            });
            tally.assert_each_dropped_once(&format!("map then rev, n {n}"));
            // Each position's item made at most once: a range is never made again.
            let made = tally.made.load(Ordering::Relaxed);
            assert!(made < n, "map then rev, n {n}: {made} made");
        }
    }
}

#[test]
fn a_fused_chain_that_panics_leaves_no_slot_unwritten_behind_the_output() {
    for pool in pools() {
        for n in [2usize, 1_000, 100_000] {
            let tally = Tally::default();
            // Items already in the output, dropped by `collect_into_vec`'s clear, then
            // their storage written again by the chain.
            let mut out: Vec<Counted<'_>> = (0..n).map(|i| tally.make(i)).collect();
            assert_panics(&pool, "item ", || {
                let fused = (0..n).into_par_iter().with_max_len(1).panic_fuse();
                let made = fused.map(|i| {
                    assert!(i != n / 2, "item {i}");
                    tally.make(i)
                });
                made.collect_into_vec(&mut out);
            });
            drop(out);
            tally.assert_each_dropped_once(&format!("panic_fuse, n {n}"));
        }
    }
}

/// A range's state whose `Drop` panics unless the range's thread is unwinding already.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("state dropped");
        }
    }
}

#[test]
fn a_state_whose_drop_panics_after_its_range_is_written_leaves_the_next_range_whole() {
    for pool in pools() {
        for n in [2usize, 9, 1_000] {
            let tally = Tally::default();
            // Whichever panic comes first: an item's, or a state's after its range.
            assert_panics(&pool, "", || {
                let made = (0..n).into_par_iter().with_max_len(1).map_init(
                    || PanicsOnDrop,
                    |_, i| {
                        assert!(i % 2 == 1, "item {i}");
                        tally.make(i)
                    },
                );
                let _: Vec<Counted<'_>> = made.collect();
            });
            tally.assert_each_dropped_once(&format!("map_init, n {n}"));
        }
    }
}
