//! A panicking comparator or key function in a parallel sort, and a radix key function that
//! changes its mind: the panic reaches the caller, the slice still holds each of its items
//! exactly once with its own key (none lost, duplicated or dropped by the sort), each is
//! dropped once with the slice, and the pool then sorts them.
#![cfg(not(rayforce_loom))] // real threads

mod common;

use common::{message, pool};
use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `n` keys from a xorshift64* generator, masked by `mask`.
fn keys(n: usize, mask: u64) -> Vec<u64> {
    let mut state = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D) & mask
        })
        .collect()
}

/// Keys of every bit: the radix sort splits on the top digit, then sorts each bucket.
const ALL_BITS: u64 = u64::MAX;
/// Keys of 12 low bits: the radix sort looks for the top digit that varies, or sorts by
/// passes over all the items if they are many.
const LOW_BITS: u64 = 0xFFF;

/// Which of one input's items were dropped, and how many drops were of an item dropped
/// already.
struct Drops {
    dropped: Vec<AtomicBool>,
    again: AtomicUsize,
}

/// An item to sort by `key`: `id` is its place in the input; its drop is recorded in
/// `drops`.
struct Item<'a> {
    key: u64,
    id: usize,
    drops: &'a Drops,
}

impl Drop for Item<'_> {
    fn drop(&mut self) {
        if self.drops.dropped[self.id].swap(true, Ordering::Relaxed) {
            self.drops.again.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drops {
    fn new(n: usize) -> Drops {
        Drops {
            dropped: (0..n).map(|_| AtomicBool::new(false)).collect(),
            again: AtomicUsize::new(0),
        }
    }

    /// An item per key, its id its index.
    fn items(&self, keys: &[u64]) -> Vec<Item<'_>> {
        assert_eq!(keys.len(), self.dropped.len());
        keys.iter()
            .enumerate()
            .map(|(id, &key)| Item {
                key,
                id,
                drops: self,
            })
            .collect()
    }

    /// How many items were dropped.
    fn dropped(&self) -> usize {
        self.dropped
            .iter()
            .filter(|d| d.load(Ordering::Relaxed))
            .count()
    }

    /// Asserts that every item was dropped, none twice.
    fn assert_each_dropped_once(&self, what: &str) {
        assert_eq!(
            self.dropped(),
            self.dropped.len(),
            "{what}: items not dropped"
        );
        assert_eq!(
            self.again.load(Ordering::Relaxed),
            0,
            "{what}: items dropped twice"
        );
    }
}

/// Asserts that `items` holds each item made from `keys` once, with its own key, and that
/// none was dropped.
fn assert_permutation(items: &[Item<'_>], keys: &[u64], drops: &Drops, what: &str) {
    assert_eq!(drops.dropped(), 0, "{what}: the sort dropped items");
    let mut ids: Vec<usize> = items.iter().map(|item| item.id).collect();
    ids.sort_unstable();
    assert!(
        ids.iter().copied().eq(0..keys.len()),
        "{what}: the ids are not a permutation of the input's"
    );
    for item in items {
        assert_eq!(
            item.key, keys[item.id],
            "{what}: item {} lost its key",
            item.id
        );
    }
}

/// Asserts that `items` is in order of key.
fn assert_sorted(items: &[Item<'_>], what: &str) {
    assert!(
        items.windows(2).all(|w| w[0].key <= w[1].key),
        "{what}: not sorted"
    );
}

/// How many calls in a row a fuse panics at: more than one, so that both threads of the
/// pool may panic at once, but few, as a panic (and its backtrace) is slow.
const BLOWS: usize = 3;

/// Counts the calls of a comparator or key function, and panics at calls `at` to
/// `at + BLOWS - 1`.
struct Fuse {
    calls: AtomicUsize,
    at: usize,
}

impl Fuse {
    fn at(at: usize) -> Fuse {
        Fuse {
            calls: AtomicUsize::new(0),
            at,
        }
    }

    fn never() -> Fuse {
        Fuse::at(usize::MAX)
    }

    /// Counts a call; panics if it is one of those the fuse blows at.
    fn tick(&self) {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let blown = (self.at..self.at.saturating_add(BLOWS)).contains(&call);
        assert!(!blown, "fuse blown at call {call}");
    }
}

/// A sort of items by key whose comparator or key function can panic.
#[derive(Clone, Copy, Debug)]
enum Method {
    SortBy,
    SortUnstableBy,
    SortByKey,
    SortUnstableByKey,
    SortByCachedKey,
    RadixSortByKey,
}

impl Method {
    /// Sorts `items` by key, `fuse` ticking at every comparison or key call.
    fn sort(self, items: &mut [Item<'_>], fuse: &Fuse) {
        let key = |item: &Item<'_>| {
            fuse.tick();
            item.key
        };
        let compare = |a: &Item<'_>, b: &Item<'_>| {
            fuse.tick();
            a.key.cmp(&b.key)
        };
        match self {
            Method::SortBy => items.par_sort_by(compare),
            Method::SortUnstableBy => items.par_sort_unstable_by(compare),
            Method::SortByKey => items.par_sort_by_key(key),
            Method::SortUnstableByKey => items.par_sort_unstable_by_key(key),
            Method::SortByCachedKey => items.par_sort_by_cached_key(key),
            Method::RadixSortByKey => items.par_radix_sort_by_key(key),
        }
    }
}

/// Whether a sort must panic, or may also return (its order then unspecified).
#[derive(Clone, Copy, PartialEq)]
enum Panics {
    Must,
    May,
}

/// Runs `sort` on items made from `keys`, on `pool`; asserts that it panics (or, if it
/// `May`, returns) with a message containing `expected` and leaves the items a
/// permutation; sorts them again by `method` on the same pool; and asserts that each is
/// dropped once with the slice.
fn check_panic(
    pool: &Pool,
    keys: &[u64],
    method: Method,
    (expected, panics): (&str, Panics),
    sort: impl FnOnce(&mut [Item<'_>]),
    what: &str,
) {
    let drops = Drops::new(keys.len());
    let mut items = drops.items(keys);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| sort(&mut items))));
    match outcome {
        Err(payload) => {
            let message = message(payload);
            assert!(
                message.contains(expected),
                "{what}: the panic was {message:?}"
            );
        }
        Ok(()) => assert!(panics == Panics::May, "{what}: no panic"),
    }
    assert_permutation(&items, keys, &drops, what);
    pool.install(|| method.sort(&mut items, &Fuse::never()));
    let what = format!("{what}, sorted again");
    assert_permutation(&items, keys, &drops, &what);
    assert_sorted(&items, &what);
    drop(items);
    drops.assert_each_dropped_once(&what);
}

/// Sorts items of `keys` by `method` on `pool` once to count its calls, then again with a
/// fuse at its first call, midway and near the last, checking each panic with
/// [`check_panic`].
fn check_fuses(pool: &Pool, method: Method, keys: &[u64]) {
    let what = format!("{method:?} of {} items", keys.len());
    let drops = Drops::new(keys.len());
    let mut items = drops.items(keys);
    let counter = Fuse::never();
    pool.install(|| method.sort(&mut items, &counter));
    assert_permutation(&items, keys, &drops, &what);
    assert_sorted(&items, &what);
    drop(items);
    drops.assert_each_dropped_once(&what);
    let calls = counter.calls.into_inner();
    // Half the length in: inside the unstable sort's first cut (its partition).
    for at in [1, keys.len() / 2, calls / 2, calls - calls / 100] {
        let what = format!("{what}, panicking at call {at} of {calls}");
        let sort = |items: &mut [Item<'_>]| method.sort(items, &Fuse::at(at));
        check_panic(
            pool,
            keys,
            method,
            ("fuse blown", Panics::Must),
            sort,
            &what,
        );
    }
}

#[test]
fn a_panicking_comparator_leaves_a_permutation() {
    let pool = pool();
    for method in [Method::SortBy, Method::SortUnstableBy] {
        for n in [10, 5000, 100_000] {
            check_fuses(&pool, method, &keys(n, ALL_BITS));
        }
    }
}

/// Items of 8 bytes that own memory: the unstable sort's cuts move them around one gap, an
/// item held out of the slice while the comparator runs.
#[test]
fn a_comparator_panicking_while_a_cut_holds_an_item_out_leaves_a_permutation() {
    let pool = pool();
    let n = 100_000;
    let keys = keys(n, ALL_BITS);
    let mut want = keys.clone();
    want.sort_unstable();
    // A quarter, half and three quarters into the first cut, which compares each item once
    // after a few hundred calls (the check for order, the pivot's sample).
    for at in [n / 4, n / 2, 3 * n / 4] {
        let mut items: Vec<Box<u64>> = keys.iter().map(|&k| Box::new(k)).collect();
        let calls = AtomicUsize::new(0);
        let sorted = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                items.par_sort_unstable_by(|a, b| {
                    if calls.fetch_add(1, Ordering::Relaxed) == at {
                        panic!("fuse blown");
                    }
                    a.cmp(b)
                });
            });
        }));
        let payload = sorted.expect_err("the comparator panicked");
        assert_eq!(message(payload), "fuse blown");
        let mut got: Vec<u64> = items.iter().map(|item| **item).collect();
        got.sort_unstable();
        assert!(
            got == want,
            "panicking at call {at}: the items are no permutation of the input"
        );
    }
}

#[test]
fn a_panicking_key_function_of_a_comparison_sort_leaves_a_permutation() {
    let pool = pool();
    for method in [Method::SortByKey, Method::SortUnstableByKey] {
        for n in [10, 5000, 100_000] {
            for mask in [ALL_BITS, LOW_BITS] {
                check_fuses(&pool, method, &keys(n, mask));
            }
        }
    }
}

#[test]
fn a_panicking_cached_or_radix_key_function_leaves_a_permutation() {
    let pool = pool();
    for method in [Method::SortByCachedKey, Method::RadixSortByKey] {
        for n in [10, 5000, 100_000] {
            for mask in [ALL_BITS, LOW_BITS] {
                check_fuses(&pool, method, &keys(n, mask));
            }
        }
    }
    // More items, for the radix sort only (the slowest check here): a split into 256
    // buckets of over a thousand items, each then sorted by a pass per digit; and keys of
    // 12 bits, too many items for one thread's cache, sorted by a pass over all of them.
    check_fuses(&pool, Method::RadixSortByKey, &keys(300_000, ALL_BITS));
    check_fuses(&pool, Method::RadixSortByKey, &keys(300_000, LOW_BITS));
}

#[test]
fn a_radix_key_that_changes_leaves_a_permutation() {
    let pool = pool();
    let inputs = [5000, 100_000, 300_000].map(|n| (n, ALL_BITS));
    for (n, mask) in inputs.into_iter().chain([(300_000, LOW_BITS)]) {
        let keys = keys(n, mask);
        // Midway through the first pass over the keys: a later pass may see the same keys
        // throughout and sort them by those, or panic. Midway through the second: the
        // scatter meets more of key 0 than were counted, and must panic.
        for (at, panics) in [(n / 2, Panics::May), (n + n / 2, Panics::Must)] {
            let what = format!(
                "par_radix_sort_by_key of {n} keys under {mask:#x}, every key 0 from call {at}"
            );
            let calls = AtomicUsize::new(0);
            let sort = |items: &mut [Item<'_>]| {
                items.par_radix_sort_by_key(|item| {
                    let call = calls.fetch_add(1, Ordering::Relaxed);
                    if call < at {
                        item.key
                    } else {
                        0
                    }
                })
            };
            let expected = "the key function gave an item another key";
            let expected = (expected, panics);
            check_panic(&pool, &keys, Method::RadixSortByKey, expected, sort, &what);
        }
    }
}

/// A comparator that is no total order: the stable sort's merge cuts (found by binary
/// search) could go back, and overlapping pieces would read the same items on two
/// threads. The order is unspecified, but the slice stays a permutation, with no panic.
#[test]
fn a_comparator_that_is_no_total_order_leaves_a_permutation() {
    let pool = pool();
    // Two sorted runs of 16,384 items each, tagged: within a tag by value; across tags,
    // by whether the values add up to 5,000 or more (so each binary search of the merge
    // finds its own, unrelated answer).
    let n = 32_768u32;
    let items: Vec<(bool, u32)> = (0..n).map(|i| (i >= n / 2, i % (n / 2))).collect();
    let compare = |a: &(bool, u32), b: &(bool, u32)| match (a.0, b.0) {
        (x, y) if x == y => a.1.cmp(&b.1),
        (true, false) if a.1 + b.1 >= 5000 => std::cmp::Ordering::Less,
        (true, false) => std::cmp::Ordering::Greater,
        _ if a.1 + b.1 >= 5000 => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Less,
    };
    let mut sorted = items.clone();
    pool.install(|| sorted.par_sort_by(compare));
    let mut got = sorted.clone();
    got.sort_unstable();
    let mut want = items;
    want.sort_unstable();
    assert_eq!(
        got, want,
        "the items after the sort are a permutation of the input"
    );
}
