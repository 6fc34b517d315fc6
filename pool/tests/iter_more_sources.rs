//! rayon's other sources give what `std`'s sequential iteration gives: `char` ranges (the
//! surrogate gap skipped), `u128`/`i128` ranges (longer ones in `iter_long_ranges.rs`),
//! `empty`, `once`, `repeat`, `repeat_n`, arrays by value (each item
//! dropped once), `Option`, `Result`, `VecDeque` and `std`'s maps, sets, heaps and lists;
//! drains of a `VecDeque`'s or `String`'s range and of whole maps, sets and heaps (the
//! items removed at once, the rest kept), `walk_tree`, `repeatn`, and tuples of indexed
//! iterators zipped (`MultiZip`), as long as the shortest, each owned item dropped once;
//! `Either` of two iterators, the side it holds.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::iter::{empty, once, range, range_inclusive, repeat, repeat_n, Either};
use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::fmt::Debug;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

const WIDTH: usize = 3;
const SIZES: [usize; 5] = [0, 1, 2, 3, 100_000];

/// Runs `check` on the default pool, on a pool of [`WIDTH`], and there with ranges of one
/// position at most (`fine`): every cut a source can be asked for.
fn everywhere(check: impl Fn(bool) + Sync) {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    check(false);
    pool.install(|| check(false));
    pool.install(|| check(true));
}

/// The items of `iter`, collected in order, claimed by ranges of one position if `fine`.
fn items<I: IndexedParallelIterator>(iter: I, fine: bool) -> Vec<I::Item> {
    if fine {
        iter.with_max_len(1).collect()
    } else {
        iter.collect()
    }
}

/// `iter`'s length and items are those of `serial`.
fn same<I, S>(iter: I, serial: S, fine: bool, what: &str)
where
    I: IndexedParallelIterator,
    I::Item: PartialEq + Debug,
    S: IntoIterator<Item = I::Item>,
{
    let serial: Vec<I::Item> = serial.into_iter().collect();
    assert_eq!(iter.len(), serial.len(), "len, {what}");
    assert_eq!(items(iter, fine), serial, "{what}");
}

/// `iter`'s length (`opt_len`) and items are those of `serial`: an iterator rayon leaves
/// unindexed, claimed as the pool chooses.
fn same_unindexed<I, S>(iter: I, serial: S, what: &str)
where
    I: ParallelIterator,
    I::Item: PartialEq + Debug,
    S: IntoIterator<Item = I::Item>,
{
    let serial: Vec<I::Item> = serial.into_iter().collect();
    assert_eq!(iter.opt_len(), Some(serial.len()), "len, {what}");
    assert_eq!(iter.collect::<Vec<_>>(), serial, "{what}");
}

#[test]
fn either_of_two_iterators_is_the_side_it_holds() {
    everywhere(|fine| {
        for n in SIZES {
            let evens = |left: bool| -> Either<_, _> {
                if left {
                    Either::Left((0..n).into_par_iter().map(|i| 2 * i))
                } else {
                    Either::Right((0..n).into_par_iter().rev().map(|i| 2 * (n - 1 - i)))
                }
            };
            for left in [true, false] {
                let what = format!("Either, left {left}, {n} items");
                same(evens(left), (0..n).map(|i| 2 * i), fine, &what);
                // Unindexed sides: the items of the side held, in order.
                let side: Either<_, _> = if left {
                    Either::Left((0..n).into_par_iter().filter(|i| i % 3 == 0))
                } else {
                    Either::Right(
                        (0..n)
                            .into_par_iter()
                            .flat_map_iter(|i| (i % 3 == 0).then_some(i)),
                    )
                };
                let multiples: Vec<usize> = side.collect();
                assert_eq!(
                    multiples,
                    (0..n).filter(|i| i % 3 == 0).collect::<Vec<_>>(),
                    "{what}"
                );
            }
        }
    });
}

#[test]
fn char_ranges_skip_the_surrogate_gap() {
    let around_gap = [
        '\0',
        'a',
        '\u{D7FE}',
        '\u{D7FF}',
        '\u{E000}',
        '\u{E001}',
        '\u{FFFF}',
        '\u{10FFFE}',
        char::MAX,
    ];
    everywhere(|fine| {
        for &low in &around_gap {
            for &high in &around_gap {
                same((low..high).into_par_iter(), low..high, fine, "..");
                same((low..=high).into_par_iter(), low..=high, fine, "..=");
            }
            // Sizes 0 to 3 from each start.
            for n in 0..4u32 {
                let Some(high) = char::from_u32(u32::from(low) + n) else {
                    continue;
                };
                same((low..high).into_par_iter(), low..high, fine, "short");
            }
        }
        // Every char, and a range of 100_000 across the gap.
        same(
            ('\0'..=char::MAX).into_par_iter(),
            '\0'..=char::MAX,
            fine,
            "all",
        );
        let (low, high) = (
            '\u{D000}',
            char::from_u32(0xD000 + 0x800 + 100_000).unwrap(),
        );
        assert_eq!((low..high).count(), 100_000);
        same((low..high).into_par_iter(), low..high, fine, "100_000");
    });
    // An exhausted inclusive range holds nothing.
    let mut spent = 'a'..='a';
    spent.next();
    assert_eq!(spent.clone().into_par_iter().count(), 0);
    assert_eq!(spent.into_par_iter().len(), 0);
}

#[test]
fn wide_integer_ranges_are_those_of_std() {
    everywhere(|fine| {
        if fine {
            // Unindexed: no one-position claims (`with_max_len` is indexed); every cut of
            // such a range is `ranges.rs`'s unit test.
            return;
        }
        for n in SIZES {
            let n128 = n as u128;
            for start in [0, u128::MAX - n128, 1 << 100] {
                let end = start + n128;
                same_unindexed((start..end).into_par_iter(), start..end, "u128");
                if n > 0 {
                    let last = end - 1;
                    same_unindexed((start..=last).into_par_iter(), start..=last, "u128 ..=");
                }
            }
            for start in [i128::MIN, -(n as i128) / 2, i128::MAX - n as i128] {
                let end = start + n as i128;
                same_unindexed((start..end).into_par_iter(), start..end, "i128");
                same_unindexed((start..=end).into_par_iter(), start..=end, "i128 ..=");
            }
        }
    });
    // Empty and reversed ranges hold nothing.
    assert_eq!((5u128..5).into_par_iter().opt_len(), Some(0));
    let (high, low) = (9i128, -9i128);
    assert_eq!((high..=low).into_par_iter().count(), 0);
    // The ends of the type.
    let low = (i128::MIN..=i128::MIN + 2).into_par_iter();
    assert_eq!(low.map(|x| x - i128::MIN).sum::<i128>(), 3);
    assert_eq!(
        (u128::MAX - 2..=u128::MAX).into_par_iter().max(),
        Some(u128::MAX)
    );
    // rayon's module paths name the iterators.
    let evens: range::Iter<u128> = (0..10u128).into_par_iter();
    assert_eq!(evens.filter(|x| x % 2 == 0).count(), 5);
    let all: range_inclusive::Iter<i128> = (-1..=1i128).into_par_iter();
    assert_eq!(all.collect::<Vec<_>>(), [-1, 0, 1]);
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = panic::catch_unwind(AssertUnwindSafe(f)).expect_err("a panic");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload.downcast_ref::<&str>().unwrap().to_string(),
    }
}

#[test]
fn empty_once_and_repeat_n_are_std_s() {
    everywhere(|fine| {
        same(empty::<String>(), std::iter::empty(), fine, "empty");
        same(
            once(String::from("x")),
            std::iter::once(String::from("x")),
            fine,
            "once",
        );
        for n in SIZES {
            same(
                repeat_n(String::from("ab"), n),
                std::iter::repeat_n(String::from("ab"), n),
                fine,
                "repeat_n",
            );
            same(
                repeat(7u8).take(n),
                std::iter::repeat_n(7u8, n),
                fine,
                "repeat take",
            );
            let xs: Vec<usize> = (0..n).collect();
            same(
                repeat('r').zip(&xs),
                std::iter::repeat('r').zip(&xs),
                fine,
                "repeat zip",
            );
        }
    });
    assert_eq!(empty::<u32>().sum::<u32>(), 0);
    assert_eq!(once(5u32).max(), Some(5));
    // Clones are whole iterators.
    let ab = repeat_n(String::from("ab"), 3);
    assert_eq!(ab.clone().collect::<String>(), ab.collect::<String>());
    let once_more = once(vec![1u8]);
    assert_eq!(
        once_more.clone().collect::<Vec<_>>(),
        once_more.collect::<Vec<_>>()
    );
}

#[test]
fn an_endless_repeat_stops_at_a_search() {
    everywhere(|_| {
        assert_eq!(repeat(3u32).find_any(|&x| x == 3), Some(3));
        assert!(repeat(String::from("a")).any(|s| s == "a"));
        assert!(!repeat(1u8).all(|x| x == 2));
        assert_eq!(repeat(1u8).map(|x| x + 1).find_any(|_| true), Some(2));
    });
}

#[test]
fn a_repeat_item_need_only_be_send() {
    // `Cell` is `Send` but not `Sync`, as rayon allows.
    let cells: Vec<std::cell::Cell<u8>> = repeat_n(std::cell::Cell::new(4), 1000).collect();
    assert!(cells.iter().all(|c| c.get() == 4));
    let once_cell: Vec<std::cell::Cell<u8>> = once(std::cell::Cell::new(1)).collect();
    assert_eq!(once_cell.len(), 1);
}

/// Counts its drops; carries a value.
#[derive(Debug)]
struct Counted<'a>(usize, &'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

/// `[Counted(0), .., Counted(N - 1)]`.
fn counted<const N: usize>(drops: &AtomicUsize) -> [Counted<'_>; N] {
    std::array::from_fn(|i| Counted(i, drops))
}

/// An array of `N` moved out by value, each item dropped once: all consumed, searched
/// (stopping early), panicking midway, never consumed.
fn array_by_value<const N: usize>(fine: bool) {
    let drops = AtomicUsize::new(0);
    let values = items(counted::<N>(&drops).into_par_iter().map(|c| c.0), fine);
    assert_eq!(values, (0..N).collect::<Vec<_>>(), "{N}");
    assert_eq!(drops.load(Ordering::Relaxed), N, "consumed, {N}");

    let drops = AtomicUsize::new(0);
    let found = counted::<N>(&drops)
        .into_par_iter()
        .find_any(|c| c.0 == N / 2);
    assert_eq!(found.as_ref().map(|c| c.0), (N > 0).then_some(N / 2));
    drop(found);
    assert_eq!(drops.load(Ordering::Relaxed), N, "searched, {N}");

    let drops = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        counted::<N>(&drops)
            .into_par_iter()
            .for_each(|c| assert!(c.0 != N / 2));
    }));
    assert_eq!(outcome.is_err(), N > 0, "{N}");
    assert_eq!(drops.load(Ordering::Relaxed), N, "panicked, {N}");

    let drops = AtomicUsize::new(0);
    drop(counted::<N>(&drops).into_par_iter());
    assert_eq!(drops.load(Ordering::Relaxed), N, "not consumed, {N}");
}

#[test]
fn arrays_by_value_move_each_item_out_once() {
    everywhere(|fine| {
        array_by_value::<0>(fine);
        array_by_value::<1>(fine);
        array_by_value::<2>(fine);
        array_by_value::<3>(fine);
        array_by_value::<1000>(fine);
        // Items needing no drop, 100_000 of them (boxed: no such array on the stack).
        let big: Box<[u16; 100_000]> = vec![0u16; 100_000]
            .into_iter()
            .enumerate()
            .map(|(i, _)| i as u16)
            .collect::<Vec<_>>()
            .try_into()
            .unwrap();
        same((*big).into_par_iter(), *big, fine, "100_000 by value");
        same(big.par_iter(), big.iter(), fine, "100_000 by reference");
    });
    // By reference and mutably, as the slice's; `[..].par_iter()` as before.
    let mut xs = [1u32, 2, 3];
    xs.par_iter_mut().for_each(|x| *x *= 2);
    assert_eq!(xs, [2, 4, 6]);
    assert_eq!((&xs).into_par_iter().sum::<u32>(), 12);
    assert_eq!((&mut xs).into_par_iter().len(), 3);
    assert_eq!(xs.into_par_iter().sum::<u32>(), 12);
    assert_eq!([1, 2, 3].par_iter().copied().sum::<i32>(), 6);
    // A clone holds every item.
    let words = [String::from("a"), String::from("b")].into_par_iter();
    assert_eq!(words.clone().collect::<Vec<_>>(), words.collect::<Vec<_>>());
}

#[test]
fn options_and_results_hold_zero_or_one_item() {
    everywhere(|fine| {
        for value in [None, Some(String::from("v"))] {
            same(value.par_iter(), value.iter(), fine, "option ref");
            let mut mutable = value.clone();
            mutable.par_iter_mut().for_each(|s| s.push('!'));
            assert_eq!(mutable, value.clone().map(|s| s + "!"));
            same(value.clone().into_par_iter(), value.clone(), fine, "option");

            let result: Result<String, u8> = value.clone().ok_or(3);
            same(result.par_iter(), result.iter(), fine, "result ref");
            let mut mutable = result.clone();
            mutable.par_iter_mut().for_each(|s| s.push('!'));
            assert_eq!(mutable, result.clone().map(|s| s + "!"));
            same(result.clone().into_par_iter(), result, fine, "result");
        }
    });
}

/// A deque of `0..n` whose storage wraps (both slices non-empty from 2 items on).
fn wrapped_deque(n: usize) -> VecDeque<usize> {
    let mut deque = VecDeque::with_capacity(n);
    deque.extend(n / 2..n);
    for i in (0..n / 2).rev() {
        deque.push_front(i);
    }
    deque
}

#[test]
fn vec_deques_are_their_two_slices() {
    everywhere(|fine| {
        for n in SIZES {
            let deque = wrapped_deque(n);
            assert!(deque.iter().copied().eq(0..n));
            if n >= 2 {
                let (front, back) = deque.as_slices();
                assert!(!front.is_empty() && !back.is_empty(), "wrapped, {n}");
            }
            same(deque.par_iter(), deque.iter(), fine, "deque ref");
            let mut doubled = deque.clone();
            doubled.par_iter_mut().for_each(|x| *x *= 2);
            assert!(
                doubled.iter().copied().eq((0..n).map(|x| x * 2)),
                "deque mut, {n}"
            );
            if fine {
                let mut indices = deque.clone();
                indices
                    .par_iter_mut()
                    .enumerate()
                    .with_max_len(1)
                    .for_each(|(i, x)| *x = i);
                assert!(indices.iter().copied().eq(0..n), "deque enumerate, {n}");
            }
            same(deque.clone().into_par_iter(), deque, fine, "deque");
        }
    });
}

#[test]
fn maps_sets_heaps_and_lists_iterate_as_std_does() {
    everywhere(|fine| {
        for n in SIZES {
            let hash_map: HashMap<usize, String> = (0..n).map(|i| (i, i.to_string())).collect();
            same(hash_map.par_iter(), hash_map.iter(), fine, "HashMap ref");
            let mut changed = hash_map.clone();
            changed.par_iter_mut().for_each(|(_, v)| v.push('!'));
            assert!(changed.iter().all(|(k, v)| *v == format!("{k}!")));
            same(hash_map.clone().into_par_iter(), hash_map, fine, "HashMap");

            let hash_set: HashSet<usize> = (0..n).collect();
            same(hash_set.par_iter(), hash_set.iter(), fine, "HashSet ref");
            same(hash_set.clone().into_par_iter(), hash_set, fine, "HashSet");

            let btree_map: BTreeMap<usize, String> = (0..n).map(|i| (i, i.to_string())).collect();
            same(btree_map.par_iter(), btree_map.iter(), fine, "BTreeMap ref");
            let mut changed = btree_map.clone();
            changed.par_iter_mut().for_each(|(_, v)| v.push('!'));
            assert!(changed.iter().all(|(k, v)| *v == format!("{k}!")));
            same(
                btree_map.clone().into_par_iter(),
                btree_map,
                fine,
                "BTreeMap",
            );

            let btree_set: BTreeSet<usize> = (0..n).collect();
            same(btree_set.par_iter(), btree_set.iter(), fine, "BTreeSet ref");
            same(
                btree_set.clone().into_par_iter(),
                btree_set,
                fine,
                "BTreeSet",
            );

            let heap: BinaryHeap<usize> = (0..n).collect();
            same(heap.par_iter(), heap.iter(), fine, "BinaryHeap ref");
            same(heap.clone().into_par_iter(), heap, fine, "BinaryHeap");

            let list: LinkedList<usize> = (0..n).collect();
            same(list.par_iter(), list.iter(), fine, "LinkedList ref");
            let mut changed = list.clone();
            changed.par_iter_mut().for_each(|x| *x += 1);
            assert!(changed.iter().copied().eq(1..n + 1));
            same(list.clone().into_par_iter(), list, fine, "LinkedList");
        }
    });
}

#[test]
fn drains_remove_their_items_at_once_and_keep_the_rest() {
    everywhere(|fine| {
        for n in SIZES {
            let mut queue: VecDeque<u64> = (0..n as u64).collect();
            let (from, to) = (n / 3, n - n / 3);
            let mut serial = queue.clone();
            let expected: Vec<u64> = serial.drain(from..to).collect();
            // A search that stops early still removes the whole range.
            let found = queue
                .par_drain(from..to)
                .with_max_len(if fine { 1 } else { usize::MAX })
                .find_any(|&x| x == from as u64);
            assert_eq!(found.is_some(), from < to, "{n}");
            assert_eq!(queue, serial, "what the drain leaves, {n}");
            assert!(expected
                .iter()
                .all(|&x| (from as u64..to as u64).contains(&x)));
        }
        let mut text = String::from("añb€c");
        let taken: String = text.par_drain(1..7).collect();
        assert_eq!((taken.as_str(), text.as_str()), ("ñb€", "ac"));
        let mut map: HashMap<u32, u32> = (0..1000).map(|k| (k, k * 2)).collect();
        let mut pairs: Vec<(u32, u32)> = map.par_drain().collect();
        pairs.sort_unstable();
        assert_eq!(pairs, (0..1000).map(|k| (k, k * 2)).collect::<Vec<_>>());
        assert!(map.is_empty());
        let mut set: HashSet<u32> = (0..1000).collect();
        assert_eq!(set.par_drain().map(u64::from).sum::<u64>(), 499_500);
        assert!(set.is_empty());
        let mut heap: BinaryHeap<u32> = (0..1000).collect();
        assert_eq!(heap.par_drain().count(), 1000);
        assert!(heap.is_empty());
    });
}

#[test]
fn a_string_drain_off_a_char_boundary_panics_as_std() {
    let message = panic_message(|| {
        let mut text = String::from("añb");
        let _ = text.par_drain(2..3).count();
    });
    assert!(message.contains("char_boundary"), "{message}");
}

#[test]
fn the_unordered_walk_and_rayons_older_names_yield_every_item() {
    let mut nodes: Vec<u32> = rayforce_pool::iter::walk_tree(1u32, |&n| {
        (n < 1000)
            .then_some([2 * n, 2 * n + 1])
            .into_iter()
            .flatten()
    })
    .collect();
    nodes.sort_unstable();
    assert_eq!(nodes, (1..2000).collect::<Vec<u32>>());
    #[allow(deprecated)]
    let repeated: Vec<u8> = rayforce_pool::iter::repeatn(3u8, 5).collect();
    assert_eq!(repeated, [3; 5]);
}

#[test]
fn tuples_zip_their_iterators_as_long_as_the_shortest() {
    everywhere(|fine| {
        for n in SIZES {
            let a: Vec<usize> = (0..n).collect();
            let b: Vec<u64> = (0..n as u64 + 3).map(|x| x * 7).collect();
            let c: Vec<String> = (0..n + 1).map(|x| x.to_string()).collect();
            let serial = a.iter().zip(&b).zip(&c).map(|((x, y), z)| (x, y, z));
            same((&a, &b, &c).into_par_iter(), serial, fine, "(&a, &b, &c)");
            let serial = a.iter().zip(&b);
            same((&a, &b).into_par_iter(), serial.clone(), fine, "(&a, &b)");
            let pair = (a.clone(), b.clone());
            same(
                (&pair).into_par_iter(),
                serial,
                fine,
                "&(a, b) by reference",
            );
            let owned = (a.clone(), c.clone(), b.clone()).into_par_iter();
            let serial = a
                .iter()
                .zip(&c)
                .zip(&b)
                .map(|((&x, z), &y)| (x, z.clone(), y));
            same(owned, serial, fine, "owned (a, c, b)");
            same(
                (a.clone(),).into_par_iter(),
                a.iter().map(|&x| (x,)),
                fine,
                "(a,)",
            );
            // Adapted iterators beside, one with a grain of its own.
            let adapted = (a.par_iter().rev(), b.par_iter().skip(2).with_min_len(5));
            let serial = a.iter().rev().zip(b.iter().skip(2));
            same(
                adapted.into_par_iter(),
                serial,
                fine,
                "(rev, skip with a grain)",
            );
            // Written through the last, read through the others.
            let mut sums = vec![0u64; n + 5];
            (&a, &b, &mut sums)
                .into_par_iter()
                .for_each(|(x, y, s)| *s = *x as u64 + *y);
            let expected: Vec<u64> = (0..n + 5)
                .map(|i| if i < n { i as u64 * 8 } else { 0 })
                .collect();
            assert_eq!(sums, expected, "written, {n}");
            // Both written, through `&mut (a, b)`.
            let mut pair = (a.clone(), sums);
            (&mut pair).into_par_iter().for_each(|(x, s)| {
                *s += 1;
                *x *= 2;
            });
            assert!(pair.0.iter().enumerate().all(|(i, &x)| x == 2 * i));
            assert!(pair.1[..n].iter().zip(&expected).all(|(s, e)| *s == e + 1));
            assert!(pair.1[n..].iter().all(|&s| s == 0), "past the shorter, {n}");
            // `par_iter()` and `par_iter_mut()` on the tuple itself, and ranges beside.
            let serial = pair
                .0
                .iter()
                .zip(&pair.1)
                .zip(0..n)
                .map(|((x, s), r)| (x, s, r));
            let ranged = (&pair.0, &pair.1, 0..n).into_par_iter();
            same(ranged, serial, fine, "with a range");
            let products: Vec<u64> = pair.par_iter().map(|(&x, &s)| x as u64 * s).collect();
            let serial: Vec<u64> = pair
                .0
                .iter()
                .zip(&pair.1)
                .map(|(&x, &s)| x as u64 * s)
                .collect();
            assert_eq!(products, serial);
            pair.par_iter_mut().for_each(|(x, s)| *x += *s as usize);
            let twelve = (&a, &a, &a, &a, &a, &a, &a, &a, &a, &a, &a, &b).into_par_iter();
            assert_eq!(twelve.len(), n);
        }
    });
    // Owned items left over (the longer sides') or not taken are dropped once.
    let drops = AtomicUsize::new(0);
    let long: Vec<Counted<'_>> = (0..1000).map(|i| Counted(i, &drops)).collect();
    let short: Vec<Counted<'_>> = (0..10).map(|i| Counted(i, &drops)).collect();
    assert_eq!((long, short).into_par_iter().count(), 10);
    assert_eq!(drops.load(Ordering::Relaxed), 1010);
}
