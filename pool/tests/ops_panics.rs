//! A panicking call in a data-parallel operation: every result already written is dropped
//! exactly once and nothing else is, state made for a participant is dropped too, the
//! other calls still run, the first panic reaches the caller, and the pool stays usable.
#![cfg(not(rayforce_loom))] // real threads

mod common;

use common::{message, pool};
use rayforce_pool::prelude::*;
use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Values that count how many were made and how many dropped.
struct Counted<'a> {
    drops: &'a AtomicUsize,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn map_drops_each_written_result_once_and_nothing_else() {
    let pool = pool();
    for n in [2, 3, 1000, 100_000] {
        let indices: Vec<usize> = (0..n).collect();
        for panicking in [vec![0], vec![n - 1], vec![1, n / 2, n - 1]] {
            let panicking: BTreeSet<usize> = panicking.into_iter().collect();
            for form in ["map", "map_slice"] {
                let (made, drops) = (AtomicUsize::new(0), AtomicUsize::new(0));
                let call = |i: usize| {
                    if panicking.contains(&i) {
                        panic!("item {i}");
                    }
                    made.fetch_add(1, Ordering::Relaxed);
                    Counted { drops: &drops }
                };
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| match form {
                    "map" => pool.map(n, call),
                    _ => pool.map_slice(&indices, |&i| call(i)),
                }));
                let payload = outcome.err().expect("the panic reached the caller");
                assert!(message(payload).starts_with("item "), "{form}");
                let made = made.into_inner();
                assert_eq!(
                    made,
                    n - panicking.len(),
                    "{form}: every other item ran, {n}"
                );
                assert_eq!(
                    drops.into_inner(),
                    made,
                    "{form}: each written result dropped once, {n}"
                );
            }
        }
    }
    assert_eq!(pool.map(3, |i| i), [0, 1, 2], "the pool stays usable");
}

#[test]
fn for_each_mut_runs_the_other_items_and_resumes_the_first_panic() {
    let pool = pool();
    let mut items = vec![0u32; 10_000];
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.for_each_mut(&mut items, |i, x| {
            assert!(i != 4321, "at 4321");
            *x = 1;
        })
    }));
    assert_eq!(message(outcome.err().unwrap()), "at 4321");
    assert_eq!(items.iter().filter(|&&x| x == 1).count(), 9_999);
}

#[test]
fn parts_mut_runs_the_other_parts_and_resumes_the_first_panic() {
    let pool = pool();
    let mut items = vec![0u32; 100_000];
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.parts_mut(&mut items, |offset, part| {
            let has = (offset..offset + part.len()).contains(&54_321);
            assert!(!has, "the part with 54321");
            part.fill(1);
        })
    }));
    assert_eq!(message(outcome.err().unwrap()), "the part with 54321");
    // Every other part ran: the items left are one run around 54321, the panicking part.
    let untouched = items.iter().filter(|&&x| x == 0).count();
    let start = items[..54_321]
        .iter()
        .rposition(|&x| x == 1)
        .map_or(0, |i| i + 1);
    let end = items[54_321..]
        .iter()
        .position(|&x| x == 1)
        .map_or(items.len(), |i| 54_321 + i);
    assert_eq!(items[54_321], 0);
    assert_eq!(untouched, end - start, "only the panicking part is left");
    assert!(untouched < items.len());
}

#[test]
fn fold_drops_every_state_it_made_when_a_call_panics() {
    let pool = pool();
    for n in [2, 1000, 100_000] {
        let (made, drops) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.fold(
                n,
                || {
                    made.fetch_add(1, Ordering::Relaxed);
                    Counted { drops: &drops }
                },
                |_, i| assert!(i != n / 2, "fold at {i}"),
                |a, b| {
                    drop(b);
                    a
                },
            )
        }));
        assert!(message(outcome.err().unwrap()).starts_with("fold at"));
        assert_eq!(
            drops.into_inner(),
            made.into_inner(),
            "no state leaked, {n}"
        );
    }
}

/// Counts its drops, and panics in the drop of the one marked.
struct PanicsOnDrop<'a> {
    drops: &'a AtomicUsize,
    panics: bool,
}

impl Drop for PanicsOnDrop<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
        assert!(!self.panics, "a drop panicked");
    }
}

#[test]
fn map_drops_every_written_result_when_one_drop_panics_and_resumes_the_calls_panic() {
    let pool = pool();
    let n = 10_000;
    let drops = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.map(n, |i| {
            if i == n - 1 {
                panic!("item {i}");
            }
            PanicsOnDrop {
                drops: &drops,
                panics: i == 7,
            }
        })
    }));
    let payload = outcome.err().expect("the panic reached the caller");
    assert_eq!(
        message(payload),
        format!("item {}", n - 1),
        "the call's panic, not the drop's"
    );
    assert_eq!(
        drops.into_inner(),
        n - 1,
        "every written result dropped once"
    );
}
