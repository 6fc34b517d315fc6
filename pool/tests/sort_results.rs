//! The parallel sorts against `std`'s: the same output as `std`'s stable sort (floats by
//! `total_cmp`, compared by bits) for every radix key type and for comparison sorts, on
//! random, duplicated, equal, sorted, reversed, skewed and special inputs of 0 items to a
//! million; equal keys kept in order by the stable sorts; sorts inside tasks, joins, a
//! 1-wide pool and the default pool; one key call per item for `par_sort_by_cached_key`.
#![cfg(not(rayforce_loom))] // real threads

use rayforce_pool::prelude::*;
use rayforce_pool::slice::RadixKey;
use rayforce_pool::Pool;
use std::any::type_name;
use std::cmp::Ordering;
use std::fmt::Debug;
use std::sync::atomic::{self, AtomicUsize};

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().unwrap()
}

/// A xorshift64* generator: the inputs, without a dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn next_u128(&mut self) -> u128 {
        u128::from(self.next_u64()) << 64 | u128::from(self.next_u64())
    }

    /// A number below `n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The kinds of input every sort is checked on.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Random bits.
    Random,
    /// 16 random values, each many times.
    Duplicates,
    /// One random value, every time.
    AllEqual,
    /// Random values, sorted.
    Sorted,
    /// Random values, sorted and reversed.
    Reversed,
    /// Mostly squares below a million (more of them small), one in 64 random bits: most
    /// keys in the lowest buckets of a radix pass.
    Skewed,
    /// The type's extremes and, for floats, NaNs of both signs, zeros, infinities and
    /// subnormals.
    Specials,
    /// Random values of the lowest 20 bits: a radix sort by two passes over all items.
    TwentyBits,
    /// Random values of the lowest 10 bits: a radix sort by one pass over all items.
    TenBits,
}

const SHAPES: [Shape; 7] = [
    Shape::Random,
    Shape::Duplicates,
    Shape::AllEqual,
    Shape::Sorted,
    Shape::Reversed,
    Shape::Skewed,
    Shape::Specials,
];

/// An item type the sorts are checked on: compared to `std`'s output by its bits.
trait Sample: Copy + Debug + Send + Sync {
    /// What must equal `std`'s output: floats by their bits, so NaNs and zeros count.
    type Bits: Eq + Debug;
    fn bits(&self) -> Self::Bits;
    /// The order `std`'s stable sort is given for reference: `Ord`'s, or `total_cmp`.
    fn order(&self, other: &Self) -> Ordering;
}

/// A key type, drawn at random in a [`Shape`].
trait Key: Sample {
    /// The key of (truncated) random `bits`.
    fn from_random(bits: u128) -> Self;
    /// The type's extremes and special values.
    fn specials() -> Vec<Self>;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            type Bits = $t;
            fn bits(&self) -> $t {
                *self
            }
            fn order(&self, other: &$t) -> Ordering {
                self.cmp(other)
            }
        }
        impl Key for $t {
            fn from_random(bits: u128) -> $t {
                bits as $t
            }
            fn specials() -> Vec<$t> {
                vec![<$t>::MIN, <$t>::MIN + 1, 0, 1, <$t>::MAX / 2, <$t>::MAX - 1, <$t>::MAX]
            }
        }
    )*};
}

int_key!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

macro_rules! float_key {
    ($($t:ident => $bits:ty),*) => {$(
        impl Sample for $t {
            type Bits = $bits;
            fn bits(&self) -> $bits {
                self.to_bits()
            }
            fn order(&self, other: &$t) -> Ordering {
                self.total_cmp(other)
            }
        }
        impl Key for $t {
            fn from_random(bits: u128) -> $t {
                $t::from_bits(bits as $bits)
            }
            fn specials() -> Vec<$t> {
                let nan_with_payload = $t::from_bits($t::NAN.to_bits() | 1);
                let signaling_nan = $t::from_bits($t::INFINITY.to_bits() | 1);
                let subnormal = $t::from_bits(1);
                vec![
                    $t::NAN, -$t::NAN, nan_with_payload, -nan_with_payload, signaling_nan,
                    -signaling_nan, $t::INFINITY, $t::NEG_INFINITY, 0.0, -0.0, subnormal,
                    -subnormal, $t::MIN_POSITIVE, $t::MIN, $t::MAX, 1.0, -1.0,
                ]
            }
        }
    )*};
}

float_key!(f32 => u32, f64 => u64);

impl Sample for char {
    type Bits = char;
    fn bits(&self) -> char {
        *self
    }
    fn order(&self, other: &char) -> Ordering {
        self.cmp(other)
    }
}

impl Key for char {
    fn from_random(bits: u128) -> char {
        char::from_u32((bits % 0x11_0000) as u32).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
    fn specials() -> Vec<char> {
        vec![
            '\0',
            '\u{7F}',
            '\u{80}',
            '\u{D7FF}',
            '\u{E000}',
            '\u{FFFF}',
            '\u{10000}',
            char::MAX,
        ]
    }
}

/// `n` keys of `shape`, the same at every call.
fn keys<K: Key>(shape: Shape, n: usize) -> Vec<K> {
    let mut rng = Rng::new((n as u64) << 8 | shape as u64);
    let mut keys: Vec<K> = match shape {
        Shape::Random | Shape::Sorted | Shape::Reversed => {
            (0..n).map(|_| K::from_random(rng.next_u128())).collect()
        }
        Shape::Duplicates => {
            let palette: Vec<K> = (0..16).map(|_| K::from_random(rng.next_u128())).collect();
            (0..n).map(|_| palette[rng.below(palette.len())]).collect()
        }
        Shape::AllEqual => vec![K::from_random(rng.next_u128()); n],
        Shape::Specials => {
            let specials = K::specials();
            (0..n)
                .map(|_| specials[rng.below(specials.len())])
                .collect()
        }
        Shape::TwentyBits => (0..n)
            .map(|_| K::from_random(rng.next_u128() & 0xF_FFFF))
            .collect(),
        Shape::TenBits => (0..n)
            .map(|_| K::from_random(rng.next_u128() & 0x3FF))
            .collect(),
        Shape::Skewed => (0..n)
            .map(|_| {
                let bits = if rng.below(64) == 0 {
                    rng.next_u128()
                } else {
                    u128::from((rng.next_u64() % 1000).pow(2))
                };
                K::from_random(bits)
            })
            .collect(),
    };
    if let Shape::Sorted | Shape::Reversed = shape {
        keys.sort_by(K::order);
    }
    if let Shape::Reversed = shape {
        keys.reverse();
    }
    keys
}

/// An item sorted by `key` alone, `index` its place in the input: after a stable sort, the
/// indices of each key are still increasing, as in `std`'s output.
#[derive(Clone, Copy, Debug)]
struct Record<K> {
    key: K,
    index: usize,
}

impl<K: Sample> Sample for Record<K> {
    type Bits = (K::Bits, usize);
    fn bits(&self) -> Self::Bits {
        (self.key.bits(), self.index)
    }
    fn order(&self, other: &Self) -> Ordering {
        self.key.order(&other.key)
    }
}

impl<K: Ord> PartialEq for Record<K> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<K: Ord> Eq for Record<K> {}

impl<K: Ord> PartialOrd for Record<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Ord> Ord for Record<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// `n` records whose keys are of `shape`.
fn records<K: Key>(shape: Shape, n: usize) -> Vec<Record<K>> {
    let keys = keys::<K>(shape, n);
    keys.into_iter()
        .enumerate()
        .map(|(index, key)| Record { key, index })
        .collect()
}

/// A parallel sort under test, and its name.
type Sort<T> = (&'static str, fn(&mut [T]));

/// The comparison sorts of `Ord` items.
fn ord_sorts<T: Ord + Send + Copy>() -> Vec<Sort<T>> {
    vec![
        ("par_sort", |xs| xs.par_sort()),
        ("par_sort_by", |xs| xs.par_sort_by(T::cmp)),
        ("par_sort_by_key", |xs| xs.par_sort_by_key(|&x| x)),
        ("par_sort_by_cached_key", |xs| {
            xs.par_sort_by_cached_key(|&x| x)
        }),
        ("par_sort_unstable", |xs| xs.par_sort_unstable()),
        ("par_sort_unstable_by", |xs| xs.par_sort_unstable_by(T::cmp)),
        ("par_sort_unstable_by_key", |xs| {
            xs.par_sort_unstable_by_key(|&x| x)
        }),
    ]
}

/// The radix sort of keys (its `_by_key` form is checked on records).
fn radix_sort<T: RadixKey + Send>() -> Sort<T> {
    ("par_radix_sort", |xs| xs.par_radix_sort())
}

/// Every sort of `Ord` keys.
fn all_sorts<T: Ord + RadixKey + Send>() -> Vec<Sort<T>> {
    let mut sorts = ord_sorts();
    sorts.push(radix_sort());
    sorts.push(("par_radix_sort_by_key", |xs| {
        xs.par_radix_sort_by_key(|&x| x)
    }));
    sorts
}

/// The comparison sorts of floats, by `total_cmp`.
fn float_sorts<T: Sample>() -> Vec<Sort<T>> {
    vec![
        ("par_sort_by", |xs| xs.par_sort_by(T::order)),
        ("par_sort_unstable_by", |xs| {
            xs.par_sort_unstable_by(T::order)
        }),
    ]
}

/// The stable sorts of records with `Ord` keys, by key.
fn stable_record_sorts<K: Ord + RadixKey + Send>() -> Vec<Sort<Record<K>>> {
    vec![
        ("par_sort", |rs| rs.par_sort()),
        ("par_sort_by", |rs| rs.par_sort_by(|a, b| a.key.cmp(&b.key))),
        ("par_sort_by_key", |rs| rs.par_sort_by_key(|r| r.key)),
        ("par_sort_by_cached_key", |rs| {
            rs.par_sort_by_cached_key(|r| r.key)
        }),
        radix_record_sort(),
    ]
}

/// The radix sort of records by key.
fn radix_record_sort<K: RadixKey + Send>() -> Sort<Record<K>> {
    ("par_radix_sort_by_key", |rs| {
        rs.par_radix_sort_by_key(|r| r.key)
    })
}

/// Asserts that `actual` is `expected`, bit for bit, naming the first difference.
fn assert_same<T: Sample>(actual: &[T], expected: &[T], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: the length changed");
    if let Some(i) = (0..actual.len()).find(|&i| actual[i].bits() != expected[i].bits()) {
        panic!(
            "{what}: first difference at {i}: {:?} where std has {:?}",
            actual[i], expected[i]
        );
    }
}

/// Runs each of `sorts` on a copy of `input`, on the current pool, and asserts that its
/// output is `std`'s stable sort's.
fn assert_sorts_like_std<T: Sample>(input: &[T], sorts: &[Sort<T>], what: &str) {
    let mut expected = input.to_vec();
    expected.sort_by(T::order);
    for (name, sort) in sorts {
        let mut actual = input.to_vec();
        sort(&mut actual);
        let what = format!("{name} of {} {} ({what})", input.len(), type_name::<T>());
        assert_same(&actual, &expected, &what);
    }
}

/// Checks `sorts` against `std` on `pool`, on the input `make` gives for each of `shapes`
/// at each of `sizes`.
fn check<T: Sample>(
    pool: &Pool,
    shapes: &[Shape],
    sizes: &[usize],
    make: fn(Shape, usize) -> Vec<T>,
    sorts: &[Sort<T>],
) {
    for &shape in shapes {
        for &n in sizes {
            let input = make(shape, n);
            pool.install(|| assert_sorts_like_std(&input, sorts, &format!("{shape:?}")));
        }
    }
}

/// Checks `sorts` against `std` on `pool`, on every shape at 0, 1, 2 and the pool's width,
/// just above the serial cutoff, and large enough for several levels of splitting.
fn check_all<T: Sample>(pool: &Pool, make: fn(Shape, usize) -> Vec<T>, sorts: &[Sort<T>]) {
    let sizes = [0, 1, 2, pool.width(), 5000, 100_000];
    check(pool, &SHAPES, &sizes, make, sorts);
}

/// The `sorts` named in `names`.
fn named<T>(sorts: Vec<Sort<T>>, names: &[&str]) -> Vec<Sort<T>> {
    let picked: Vec<Sort<T>> = sorts
        .into_iter()
        .filter(|(name, _)| names.contains(name))
        .collect();
    assert_eq!(
        picked.len(),
        names.len(),
        "a sort named in {names:?} is missing"
    );
    picked
}

#[test]
fn radix_sort_matches_std_for_unsigned_integers() {
    let pool = pool(2);
    check_all(&pool, keys::<u8>, &[radix_sort()]);
    check_all(&pool, keys::<u16>, &[radix_sort()]);
    check_all(&pool, keys::<u32>, &[radix_sort()]);
    check_all(&pool, keys::<u64>, &[radix_sort()]);
    check_all(&pool, keys::<u128>, &[radix_sort()]);
    check_all(&pool, keys::<usize>, &[radix_sort()]);
}

#[test]
fn radix_sort_matches_std_for_signed_integers() {
    let pool = pool(2);
    check_all(&pool, keys::<i8>, &[radix_sort()]);
    check_all(&pool, keys::<i16>, &[radix_sort()]);
    check_all(&pool, keys::<i32>, &[radix_sort()]);
    check_all(&pool, keys::<i64>, &[radix_sort()]);
    check_all(&pool, keys::<i128>, &[radix_sort()]);
    check_all(&pool, keys::<isize>, &[radix_sort()]);
}

#[test]
fn radix_sort_matches_total_cmp_for_floats_and_std_for_chars() {
    let pool = pool(2);
    check_all(&pool, keys::<f32>, &[radix_sort()]);
    check_all(&pool, keys::<f64>, &[radix_sort()]);
    check_all(&pool, keys::<char>, &[radix_sort()]);
}

#[test]
fn comparison_sorts_match_std() {
    let pool = pool(2);
    check_all(&pool, keys::<u32>, &ord_sorts());
    let plain = ["par_sort", "par_sort_unstable"];
    check_all(&pool, keys::<i128>, &named(ord_sorts(), &plain));
    check_all(&pool, keys::<char>, &named(ord_sorts(), &plain));
}

#[test]
fn comparison_sorts_of_floats_match_total_cmp() {
    let pool = pool(2);
    check_all(&pool, keys::<f32>, &float_sorts());
    check_all(&pool, keys::<f64>, &float_sorts());
}

#[test]
fn stable_sorts_keep_equal_keys_in_order() {
    let pool = pool(2);
    check_all(&pool, records::<u32>, &stable_record_sorts());
    check_all(&pool, records::<i16>, &[radix_record_sort()]);
    check_all(&pool, records::<u128>, &[radix_record_sort()]);
    check_all(&pool, records::<f64>, &[radix_record_sort()]);
}

#[test]
fn a_million_items_sort_like_std() {
    let pool = pool(2);
    let million = [1_000_000];
    let [random, skewed, duplicates] =
        [Shape::Random, Shape::Skewed, Shape::Duplicates].map(|s| [s]);
    let u64_sorts = named(all_sorts(), &["par_sort", "par_radix_sort"]);
    check(&pool, &random, &million, keys::<u64>, &u64_sorts);
    let u32_sorts = named(all_sorts(), &["par_sort_unstable", "par_radix_sort"]);
    check(&pool, &skewed, &million, keys::<u32>, &u32_sorts);
    check(&pool, &random, &million, keys::<f64>, &[radix_sort()]);
    check(&pool, &random, &million, keys::<f32>, &[radix_sort()]);
    check(&pool, &skewed, &million, keys::<i64>, &[radix_sort()]);
    check(&pool, &random, &million, keys::<i32>, &[radix_sort()]);
    let stable = ["par_sort_by_key", "par_radix_sort_by_key"];
    let record_sorts = named(stable_record_sorts(), &stable);
    check(&pool, &duplicates, &million, records::<u32>, &record_sorts);
    let narrow = [Shape::TwentyBits, Shape::TenBits];
    check(&pool, &narrow, &million, keys::<u64>, &[radix_sort()]);
    check(&pool, &narrow, &million, keys::<i32>, &[radix_sort()]);
    check(
        &pool,
        &narrow,
        &million,
        records::<u32>,
        &[radix_record_sort()],
    );
}

/// Records keyed by doubles drawn uniformly from [0, 1): half of them share one exponent,
/// so a radix split by the top varying bits crowds them into a few digits. As many as make
/// the split take a digit wider than a byte (pool/src/README.md "Sorting"; the radix
/// sort's unit tests check that it does, on plain doubles); their order among equal keys
/// checked.
#[test]
fn records_keyed_by_doubles_in_the_unit_interval_sort_like_std() {
    let pool = pool(2);
    let mut rng = Rng::new(7);
    let records: Vec<Record<f64>> = (0..1_500_000)
        .map(|index| {
            let key = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            Record { key, index }
        })
        .collect();
    pool.install(|| assert_sorts_like_std(&records, &[radix_record_sort()], "in [0, 1)"));
}

/// Input in order (or in reverse) but for one pair of neighbours, at the start, inside the
/// first thread's half, where the two halves meet (found only by the check across
/// chunks), or at the end: no sort may take it for sorted. Enough items that the check
/// is shared between threads.
#[test]
fn input_in_order_but_for_one_pair_is_sorted() {
    let pool = pool(2);
    let n = 200_000;
    let ascending: Vec<u128> = (0..n as u128).map(|i| i << 64 | i).collect();
    for at in [0, n / 4, n / 2 - 1, n - 2] {
        for order in ["ascending", "descending"] {
            let mut input = ascending.clone();
            if order == "descending" {
                input.reverse();
            }
            input.swap(at, at + 1);
            let what = format!("{order} but for items {at} and {}", at + 1);
            pool.install(|| assert_sorts_like_std(&input, &all_sorts(), &what));
        }
    }
}

#[test]
fn sorts_inside_tasks_sort_like_std() {
    let pool = pool(2);
    let done = AtomicUsize::new(0);
    pool.dispatch(2, |task| {
        let input = keys::<u64>(Shape::Random, 50_000 + task);
        assert_sorts_like_std(&input, &all_sorts(), &format!("in task {task}"));
        done.fetch_add(1, atomic::Ordering::Relaxed);
    });
    assert_eq!(done.into_inner(), 2, "both tasks sorted");
}

#[test]
fn sorts_inside_join_halves_sort_like_std() {
    let pool = pool(2);
    let input = keys::<u64>(Shape::Skewed, 100_000);
    let (left, right) = input.split_at(50_000);
    pool.install(|| {
        rayforce_pool::join(
            || assert_sorts_like_std(left, &all_sorts(), "left half of a join"),
            || assert_sorts_like_std(right, &all_sorts(), "right half of a join"),
        )
    });
}

#[test]
fn sorts_on_a_one_wide_pool_sort_like_std() {
    let pool = pool(1);
    let input = keys::<u64>(Shape::Random, 100_000);
    pool.install(|| assert_sorts_like_std(&input, &all_sorts(), "on a 1-wide pool"));
}

#[test]
fn sorts_outside_any_pool_sort_like_std() {
    let input = keys::<i64>(Shape::Duplicates, 100_000);
    assert_sorts_like_std(&input, &all_sorts(), "on the default pool");
}

#[test]
fn sort_by_cached_key_calls_the_key_once_per_item() {
    let pool = pool(2);
    for n in [2, 5000, 100_000] {
        for shape in [Shape::Random, Shape::Duplicates] {
            let input = records::<u32>(shape, n);
            let mut expected = input.clone();
            expected.sort_by_key(|r| r.key);
            let mut actual = input;
            let calls = AtomicUsize::new(0);
            pool.install(|| {
                actual.par_sort_by_cached_key(|r| {
                    calls.fetch_add(1, atomic::Ordering::Relaxed);
                    r.key
                })
            });
            let what = format!("par_sort_by_cached_key of {n} records ({shape:?})");
            assert_eq!(calls.into_inner(), n, "{what}: key calls");
            assert_same(&actual, &expected, &what);
        }
    }
}
