//! `fold`, `flat_map_iter`, `unzip`, `par_extend` and `collect` into `std`'s collections,
//! a `String`, a `Result` and an `Option` give what `std`'s sequential forms give (a later
//! duplicate key's value wins in a map; a `Result` takes no item after an error, as
//! `while_some` none after a `None`), and `fold`'s accumulators are in order, its
//! identity run at most twice per thread however many items there are.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};

const WIDTH: usize = 3;

fn sizes() -> [usize; 5] {
    [0, 1, 2, WIDTH, 1_000_000]
}

fn value(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44
}

fn check_all(xs: &[u64]) {
    let n = xs.len();
    let made = AtomicUsize::new(0);
    let total = xs
        .par_iter()
        .fold(
            || {
                made.fetch_add(1, Ordering::Relaxed);
                0u64
            },
            |acc, &x| acc + x,
        )
        .sum::<u64>();
    assert_eq!(total, xs.iter().sum::<u64>(), "fold then sum, {n}");
    let made = made.into_inner();
    let most = rayforce_pool::current_num_threads();
    assert!(
        (1..=most).contains(&made),
        "identity ran {made} times for {n} items: at most {most}, 1 per thread"
    );
    // The accumulators keep the items' order, as rayon's: the linked-list idiom.
    let runs: std::collections::LinkedList<Vec<u64>> = xs
        .par_iter()
        .fold(Vec::new, |mut run, &x| {
            run.push(x);
            run
        })
        .collect();
    assert_eq!(
        runs.into_iter().flatten().collect::<Vec<_>>(),
        xs,
        "fold keeps order, {n}"
    );
    let longest = xs
        .par_iter()
        .fold(Vec::new, |mut v, &x| {
            v.push(x);
            v
        })
        .map(|v| v.len())
        .reduce(|| 0, |a, b| a + b);
    assert_eq!(longest, n, "every item folded once, {n}");

    let flat: Vec<u64> = xs
        .par_iter()
        .flat_map_iter(|&x| (0..x % 3).map(move |k| x + k))
        .collect();
    let serial_flat: Vec<u64> = xs
        .iter()
        .flat_map(|&x| (0..x % 3).map(move |k| x + k))
        .collect();
    assert_eq!(flat, serial_flat, "flat_map_iter, {n}");

    let (evens, odds): (Vec<u64>, VecDeque<bool>) =
        xs.par_iter().map(|&x| (x * 2, x % 2 == 1)).unzip();
    assert_eq!(evens, xs.iter().map(|x| x * 2).collect::<Vec<_>>());
    assert_eq!(odds, xs.iter().map(|x| x % 2 == 1).collect::<VecDeque<_>>());

    // Maps: a later duplicate key's value wins, as `std`'s `collect`.
    let pairs = |&(i, &x): &(usize, &u64)| (x % 1000, i);
    let map: HashMap<u64, usize> = xs.par_iter().enumerate().map(|p| pairs(&p)).collect();
    let serial_map: HashMap<u64, usize> = xs.iter().enumerate().map(|p| pairs(&p)).collect();
    assert_eq!(map, serial_map, "HashMap, {n}");
    let tree: BTreeMap<u64, usize> = xs.par_iter().enumerate().map(|p| pairs(&p)).collect();
    assert_eq!(tree, serial_map.into_iter().collect::<BTreeMap<_, _>>());
    let set: HashSet<u64> = xs.par_iter().map(|x| x % 777).collect();
    assert_eq!(set, xs.iter().map(|x| x % 777).collect::<HashSet<_>>());
    let ordered: BTreeSet<u64> = xs.par_iter().copied().filter(|x| x % 5 == 0).collect();
    assert_eq!(
        ordered,
        xs.iter()
            .copied()
            .filter(|x| x % 5 == 0)
            .collect::<BTreeSet<_>>()
    );

    let text: String = xs
        .par_iter()
        .map(|x| char::from(b'a' + (x % 26) as u8))
        .collect();
    assert_eq!(
        text,
        xs.iter()
            .map(|x| char::from(b'a' + (x % 26) as u8))
            .collect::<String>()
    );
    let words: String = xs.par_iter().map(|x| format!("{x},")).collect();
    assert_eq!(
        words,
        xs.iter().map(|x| format!("{x},")).collect::<String>()
    );

    let all_ok: Result<Vec<u64>, String> = xs.par_iter().map(|&x| Ok(x)).collect();
    assert_eq!(all_ok.as_deref(), Ok(xs));
    let with_error: Result<Vec<u64>, u64> = xs
        .par_iter()
        .map(|&x| if x % 1000 == 7 { Err(x) } else { Ok(x) })
        .collect();
    match with_error {
        Err(x) => assert_eq!(x % 1000, 7, "the error is one the items held"),
        Ok(v) => assert!(xs.iter().all(|x| x % 1000 != 7) && v == xs),
    }
    // After the first `Err`, no participant takes another item (rayon's `while_some`).
    let seen = AtomicUsize::new(0);
    let first_fails: Result<Vec<u64>, u64> = xs
        .par_iter()
        .map(|&x| {
            seen.fetch_add(1, Ordering::Relaxed);
            if x == xs[0] {
                Err(x)
            } else {
                Ok(x)
            }
        })
        .collect();
    assert_eq!(first_fails.is_err(), n > 0);
    assert!(
        n < 1000 || seen.into_inner() < n / 2,
        "the items after the error were left, {n}"
    );
    let in_order: Vec<u64> = xs.par_iter().map(|&x| Some(x)).while_some().collect();
    assert_eq!(in_order, xs, "while_some with no None, {n}");
    if let Some(&stop) = xs.get(n / 2) {
        let until: Vec<u64> = xs
            .par_iter()
            .map(|&x| (x != stop).then_some(x))
            .while_some()
            .collect();
        assert!(!until.contains(&stop) && until.len() < n, "while_some, {n}");
    }
    let all_some: Option<Vec<u64>> = xs.par_iter().map(|&x| Some(x + 1)).collect();
    assert_eq!(all_some, Some(xs.iter().map(|x| x + 1).collect()));
    let some_none: Option<Vec<u64>> = xs
        .par_iter()
        .map(|&x| (x != xs[n / 2]).then_some(x))
        .collect();
    assert_eq!(some_none.is_none(), n > 0);

    let mut extended = vec![u64::MAX];
    extended.par_extend(xs.par_iter().copied().filter(|x| x % 2 == 0));
    let mut serial_extended = vec![u64::MAX];
    serial_extended.extend(xs.iter().copied().filter(|x| x % 2 == 0));
    assert_eq!(extended, serial_extended, "par_extend, {n}");
}

#[test]
fn fold_flat_map_unzip_and_collections_match_std_on_the_default_pool_and_inside_install() {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for n in sizes() {
        let xs: Vec<u64> = (0..n).map(value).collect();
        check_all(&xs);
        pool.install(|| check_all(&xs));
    }
}

#[test]
fn a_participant_folds_the_adjacent_ranges_it_claims_into_one_accumulator() {
    // Two threads, four ranges (each half a thread's share, and at most that: one a
    // claim): a participant that claims its home's two ranges, the second where the first
    // ended, makes one accumulator of them; four only where every range was taken apart
    // from the one before it.
    let pool = Pool::builder().workers(2).build().unwrap();
    let n = 100_000u32;
    let mut fewest = usize::MAX;
    for _ in 0..20 {
        let made = AtomicUsize::new(0);
        let runs: Vec<Vec<u32>> = pool.install(|| {
            (0..n)
                .into_par_iter()
                .with_max_len(n as usize / 4)
                .fold(
                    || {
                        made.fetch_add(1, Ordering::Relaxed);
                        Vec::new()
                    },
                    |mut run, x| {
                        run.push(x);
                        run
                    },
                )
                .collect()
        });
        assert_eq!(
            runs.concat(),
            (0..n).collect::<Vec<_>>(),
            "in order, each once"
        );
        let made = made.into_inner();
        assert_eq!(made, runs.len());
        fewest = fewest.min(made);
        let text: String = pool.install(|| {
            (0..n)
                .into_par_iter()
                .map(|x| (b'a' + (x % 26) as u8) as char)
                .collect()
        });
        assert!(text
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'a' + (i % 26) as u8));
    }
    assert!(fewest < 4, "{fewest} accumulators at fewest in 20 folds");
}

#[test]
fn fold_with_no_items_yields_one_identity() {
    let accumulators: Vec<u32> = (0..0u32).into_par_iter().fold(|| 7, |a, b| a + b).collect();
    assert_eq!(accumulators, [7]);
}

/// A hasher builder with no `Default`: `par_extend` needs none, as rayon's.
struct Fixed;

impl std::hash::BuildHasher for Fixed {
    type Hasher = std::collections::hash_map::DefaultHasher;

    fn build_hasher(&self) -> Self::Hasher {
        std::collections::hash_map::DefaultHasher::new()
    }
}

#[test]
fn maps_and_sets_with_a_hasher_of_their_own_extend_in_parallel() {
    let mut map = HashMap::with_hasher(Fixed);
    map.par_extend((0..1000u32).into_par_iter().map(|k| (k, k + 1)));
    map.par_extend(&HashMap::from([(5000u32, 1u32)]));
    assert_eq!((map.len(), map[&999], map[&5000]), (1001, 1000, 1));
    let mut set = HashSet::with_hasher(Fixed);
    set.par_extend((0..1000u32).into_par_iter());
    assert_eq!(set.len(), 1000);
}
