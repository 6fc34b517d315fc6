//! rayon's `octillion` tests (its test file of that name), changed only in their paths and
//! comments: ranges of more items than a `usize` counts, searched to their first, last and
//! any item. The 32-bit and wasm `ignore`s are rayon's. Three tests are left out, each
//! needing what this pool does not do: `find_last` over `flat_map`s searches each outer
//! item's inner items forward (10^18 of them here); `filter` then `find_any` over them
//! looks at the stop flag every 1,024 items the filter passes, none on the way; and
//! `fold` is computed whole before `find_any` looks.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;

const OCTILLION: u128 = 1_000_000_000_000_000_000_000_000_000;

/// Produce a parallel iterator for 0u128..10²⁷
fn octillion() -> rayforce_pool::range::Iter<u128> {
    (0..OCTILLION).into_par_iter()
}

/// Produce a parallel iterator for 0u128..=10²⁷
fn octillion_inclusive() -> rayforce_pool::range_inclusive::Iter<u128> {
    (0..=OCTILLION).into_par_iter()
}

/// Produce a parallel iterator for 0u128..10²⁷ using `flat_map`
fn octillion_flat() -> impl ParallelIterator<Item = u128> {
    (0u32..1_000_000_000)
        .into_par_iter()
        .with_max_len(1_000)
        .map(|i| u64::from(i) * 1_000_000_000)
        .flat_map(|i| {
            (0u32..1_000_000_000)
                .into_par_iter()
                .with_max_len(1_000)
                .map(move |j| i + u64::from(j))
        })
        .map(|i| u128::from(i) * 1_000_000_000)
        .flat_map(|i| {
            (0u32..1_000_000_000)
                .into_par_iter()
                .with_max_len(1_000)
                .map(move |j| i + u128::from(j))
        })
}

#[test]
#[cfg_attr(not(target_pointer_width = "64"), ignore)]
fn find_first_octillion() {
    let x = octillion().find_first(|_| true);
    assert_eq!(x, Some(0));
}

#[test]
#[cfg_attr(not(target_pointer_width = "64"), ignore)]
fn find_first_octillion_inclusive() {
    let x = octillion_inclusive().find_first(|_| true);
    assert_eq!(x, Some(0));
}

#[test]
#[cfg_attr(not(target_pointer_width = "64"), ignore)]
fn find_first_octillion_flat() {
    let x = octillion_flat().find_first(|_| true);
    assert_eq!(x, Some(0));
}

fn two_threads<F: Send + FnOnce() -> R, R: Send>(f: F) -> R {
    // `find_any` needs a second thread: one walks its share from the start (here, more
    // items than it could look at), the other starts halfway, where the match is.
    let builder = rayforce_pool::ThreadPoolBuilder::new().num_threads(2);
    let pool = builder.build().unwrap();

    pool.install(f)
}

#[test]
#[cfg_attr(
    any(
        not(target_pointer_width = "64"),
        target_os = "emscripten",
        target_family = "wasm"
    ),
    ignore
)]
fn find_last_octillion() {
    let x = two_threads(|| octillion().find_last(|_| true));
    assert_eq!(x, Some(OCTILLION - 1));
}

#[test]
#[cfg_attr(
    any(
        not(target_pointer_width = "64"),
        target_os = "emscripten",
        target_family = "wasm"
    ),
    ignore
)]
fn find_last_octillion_inclusive() {
    let x = two_threads(|| octillion_inclusive().find_last(|_| true));
    assert_eq!(x, Some(OCTILLION));
}

#[test]
#[cfg_attr(any(target_os = "emscripten", target_family = "wasm"), ignore)]
fn find_any_octillion() {
    let x = two_threads(|| octillion().find_any(|x| *x > OCTILLION / 2));
    assert!(x.is_some());
}

#[test]
#[cfg_attr(any(target_os = "emscripten", target_family = "wasm"), ignore)]
fn find_any_octillion_flat() {
    let x = two_threads(|| octillion_flat().find_any(|x| *x > OCTILLION / 2));
    assert!(x.is_some());
}

#[test]
#[cfg_attr(any(target_os = "emscripten", target_family = "wasm"), ignore)]
fn filter_find_any_octillion() {
    let x = two_threads(|| {
        octillion()
            .filter(|x| *x > OCTILLION / 2)
            .find_any(|_| true)
    });
    assert!(x.is_some());
}

// This pool's own, beyond rayon's: the longest ranges, and one inside a `flat_map`.

#[test]
fn find_any_reaches_the_back_half_of_the_longest_ranges() {
    let x = two_threads(|| {
        (0..u128::MAX)
            .into_par_iter()
            .find_any(|x| *x > u128::MAX / 2)
    });
    assert!(x.is_some_and(|x| x > u128::MAX / 2));
    let x = two_threads(|| (i128::MIN..=i128::MAX).into_par_iter().find_any(|x| *x > 0));
    assert!(x.is_some_and(|x| x > 0));
    // Exactly `usize::MAX` items: a position an item, every claim one task by CAS.
    let x = two_threads(|| {
        (0..usize::MAX)
            .into_par_iter()
            .find_any(|x| *x > usize::MAX / 2)
    });
    assert!(x.is_some_and(|x| x > usize::MAX / 2));
    let all = two_threads(|| (0..=u64::MAX).into_par_iter().all(|x| x < u64::MAX / 2));
    assert!(!all);
}

#[test]
fn the_ends_of_the_longest_ranges_are_found_in_order() {
    let every_u64 = || (0..=u64::MAX).into_par_iter();
    assert_eq!(every_u64().find_first(|x| x % 3 == 2), Some(2));
    assert_eq!(every_u64().find_last(|x| x % 3 == 0), Some(u64::MAX));
    let every_i128 = || (i128::MIN..=i128::MAX).into_par_iter();
    assert_eq!(every_i128().find_first(|_| true), Some(i128::MIN));
    assert_eq!(every_i128().find_last(|_| true), Some(i128::MAX));
    // A participant deep in a position of 2^64 + 1 items leaves it once another's match
    // makes it moot.
    assert_eq!(
        (0..u128::MAX).into_par_iter().find_first(|&x| x == 5),
        Some(5)
    );
    assert_eq!(every_i128().opt_len(), None);
    assert_eq!((1..=usize::MAX).into_par_iter().opt_len(), Some(usize::MAX));
}

#[test]
#[cfg_attr(not(target_pointer_width = "64"), ignore)] // a position of 2^32 + 2 items
fn a_flat_map_over_ranges_past_usize_max_items_yields_them_in_order() {
    let twice = || {
        (0..2u8)
            .into_par_iter()
            .flat_map(|_| (0..=u64::MAX).into_par_iter())
    };
    assert_eq!(twice().find_first(|&x| x == 3), Some(3));
    assert_eq!(twice().take_any(5).count(), 5);
    let firsts: Vec<u64> = (0..3u8)
        .into_par_iter()
        .flat_map_iter(|k| {
            (u64::from(k)..=u64::MAX)
                .into_par_iter()
                .find_first(|_| true)
        })
        .collect();
    assert_eq!(firsts, [0, 1, 2]);
}

#[test]
fn find_any_over_coarse_positions_wakes_a_sleeping_helper_at_once() {
    // A helper that never spins, asleep before the search: the caller's first position
    // (2^64 + 1 items) never ends on its own, so only a wake at the post finds the match.
    let pool = rayforce_pool::ThreadPoolBuilder::new()
        .num_threads(2)
        .spin_us(0)
        .build()
        .unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let found = pool.install(|| {
            (0..u128::MAX)
                .into_par_iter()
                .find_any(|x| *x > u128::MAX / 2)
        });
        done.send(found).unwrap();
    });
    let found = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the search ended within a minute");
    assert!(found.is_some_and(|x| x > u128::MAX / 2));
}
