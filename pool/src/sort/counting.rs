//! The radix sort of plain keys spanning few values: each value's keys counted, then the
//! counts written back out in order.
//!
//! Keys map to their bits one to one (`RadixKey`), so two equal keys are the same key and a
//! key is remade from its bits: once every key is counted, the sorted slice is each value
//! as many times as it was counted, and nothing is moved. Where a sample of the keys, its
//! span widened, spans at most [`MAX_VALUES`] values and no more than there are keys, this
//! takes a read of the keys and a write, against the least-significant-digit passes' read
//! and two scatters through a scratch buffer.

use super::radix_key::sealed::Bits;
use super::radix_key::RadixKey;
use crate::iter::{IndexedParallelIterator, ParallelIterator};
use crate::slice::{ParallelSlice, ParallelSliceMut};
use std::mem::size_of;

/// The most values the keys may span: a participant's counts are `MAX_VALUES` bytes, and
/// their sum `4 * MAX_VALUES`. Past cache, counting falls off a cliff: 1e7 `u64`s over
/// 5e6 values (6.25e6 counted with the margins) took 66 ms by counting against 104 by the
/// splits, over 6.5e6 values 82-101 against 72-76, over 8e6 values 213 against 71 (two
/// threads, a 32 MiB L3 shared with other machines).
const MAX_VALUES: usize = 1 << 22;
/// A slice of at most this many bytes takes the radix sort's in-cache passes instead.
const FEWEST_BYTES: usize = 1 << 20;
/// Items a participant counts per claim.
const COUNT_CHUNK: usize = 1 << 14;
/// Values summed per task when the counts are totalled: the fill finds where its part
/// starts among these sums.
const VALUES_PER_SUM: usize = 1 << 12;
/// Parts per thread the fill writes: a thread slowed down holds back a quarter of its share.
const FILL_PARTS_PER_THREAD: usize = 4;

/// A participant's counts: of each value, the low byte, and each value once for every
/// time its low byte wrapped to zero (at most one item in 256: a count of a byte keeps a
/// participant's counts in a quarter of the cache that `u32`s would take).
struct Tally {
    low: Vec<u8>,
    wraps: Vec<u32>,
}

/// What a wrap of a low byte adds to its value's count.
const WRAP: u32 = 1 << u8::BITS;

/// Sorts `keys` (more than one): by counting where they span few enough values, else by
/// the radix sort's splits.
pub(crate) fn sort<K: RadixKey>(keys: &mut [K]) {
    if !sort_if_few_values(keys) {
        super::radix::sort_by_bits(keys, &|k: &K| k.order_bits());
    }
}

/// Sorts `keys` by counting if they span few enough values (returns `true`); else leaves
/// them as they were and returns `false`. The span is guessed from a sample's smallest and
/// largest keys, widened by an eighth of their distance on each side; a key outside it ends
/// the count, a pass lost (each participant stops at the first it meets).
fn sort_if_few_values<K: RadixKey>(keys: &mut [K]) -> bool {
    // The keys are remade from these bits: no other key function.
    let key = |k: &K| k.order_bits();
    let n = keys.len();
    if n.saturating_mul(size_of::<K>()) <= FEWEST_BYTES || u32::try_from(n).is_err() {
        return false;
    }
    let (first, sampled) = super::radix::sample(keys, key);
    let (lowest, highest) = sampled.iter().fold((first, first), |(lowest, highest), k| {
        let k = k.xor(first);
        (lowest.min(k), highest.max(k))
    });
    let Some(distance) = highest.wrapping_sub(lowest).to_usize() else {
        return false;
    };
    let margin = K::Bits::from_low(distance.min(MAX_VALUES) / 8);
    let base = lowest.saturating_sub(margin);
    // The highest value counted, as its key less `base`.
    let last = highest.saturating_add(margin).wrapping_sub(base);
    let values = match last.to_usize() {
        Some(last) if last < MAX_VALUES && last < n => last + 1,
        _ => return false,
    };
    if super::in_order::holds(keys, &|a, b| key(a) <= key(b)) {
        return true;
    }
    let counted: Option<Vec<Tally>> = keys
        .par_chunks(COUNT_CHUNK)
        .try_fold(
            || Tally {
                low: vec![0u8; values],
                wraps: Vec::new(),
            },
            |mut tally, chunk| {
                // Copies the compiler keeps in registers: the increments could alias the
                // originals, read through the closure's references.
                let (base, last) = (base, last);
                for k in chunk {
                    let value = key(k).wrapping_sub(base);
                    if value > last {
                        return None;
                    }
                    let value = value.bits_from(0);
                    let low = &mut tally.low[value];
                    *low = low.wrapping_add(1);
                    if *low == 0 {
                        // `value` < 2^22.
                        tally.wraps.push(value as u32);
                    }
                }
                Some(tally)
            },
        )
        .collect();
    let Some(tallies) = counted else {
        return false;
    };
    // Each value's count from every participant's low bytes, by runs of `VALUES_PER_SUM`
    // values in parallel, and each run's total; then the wraps, few, on the caller.
    let mut counts = vec![0u32; values];
    let mut sums: Vec<usize> = counts
        .par_chunks_mut(VALUES_PER_SUM)
        .enumerate()
        .map(|(run, run_counts)| {
            let start = run * VALUES_PER_SUM;
            for tally in &tallies {
                let low = &tally.low[start..start + run_counts.len()];
                run_counts
                    .iter_mut()
                    .zip(low)
                    .for_each(|(c, &l)| *c += u32::from(l));
            }
            run_counts.iter().map(|&c| c as usize).sum()
        })
        .collect();
    for &value in tallies.iter().flat_map(|t| &t.wraps) {
        counts[value as usize] += WRAP;
        sums[value as usize / VALUES_PER_SUM] += WRAP as usize;
    }
    drop(tallies);
    let count_of = |value: usize| counts[value] as usize;
    let run_starts: Vec<usize> = std::iter::once(0)
        .chain(sums.iter().scan(0, |at, sum| {
            *at += sum;
            Some(*at)
        }))
        .collect();
    let part_len = n
        .div_ceil(crate::current_num_threads() * FILL_PARTS_PER_THREAD)
        .max(COUNT_CHUNK);
    keys.par_chunks_mut(part_len)
        .enumerate()
        .with_max_len(1)
        .for_each(|(part, out)| {
            let from = part * part_len;
            // The last run starting at or before `from`, then its values up to the one
            // whose keys cover `from`.
            let run = run_starts.partition_point(|&start| start <= from) - 1;
            let mut value = run * VALUES_PER_SUM;
            let mut at = run_starts[run];
            let mut count = count_of(value);
            while at + count <= from {
                at += count;
                value += 1;
                count = count_of(value);
            }
            let mut written = 0;
            while written < out.len() {
                let stop = (at + count - from).min(out.len());
                if stop > written {
                    // Only a counted value is remade: between two keys may lie bits that
                    // are no key (a `char` surrogate).
                    let bits = base.saturating_add(K::Bits::from_low(value));
                    out[written..stop].fill(K::from_order_bits(bits));
                }
                written = stop;
                at += count;
                value += 1;
                if written < out.len() {
                    count = count_of(value);
                }
            }
        });
    true
}

#[cfg(all(test, not(rayforce_loom)))] // pools of real threads
mod tests {
    use super::{sort, sort_if_few_values, RadixKey, FEWEST_BYTES};
    use std::mem::size_of;

    /// `n` xorshift draws from `seed`, each made a key by `make`.
    fn draws<K>(n: usize, seed: u64, make: impl Fn(u64) -> K) -> Vec<K> {
        crate::sort::xorshift(n, seed).map(make).collect()
    }

    /// Sorts `keys` by counting on pools one, two and five wide, asserting each time that
    /// they were counted (`counted`) or left as they were, and that `sort` orders them as
    /// `std`'s stable sort by their bits does.
    fn check<K: RadixKey + std::fmt::Debug>(keys: &[K], counted: bool, what: &str) {
        let bits = |xs: &[K]| xs.iter().map(|k| k.order_bits()).collect::<Vec<_>>();
        let mut expected = bits(keys);
        expected.sort();
        for workers in [1, 2, 5] {
            let pool = crate::Pool::builder().workers(workers).build().unwrap();
            let what = format!("{what}, {workers} wide");
            let mut tried = keys.to_vec();
            assert_eq!(
                pool.install(|| sort_if_few_values(&mut tried)),
                counted,
                "{what}: counted"
            );
            if counted {
                assert!(bits(&tried) == expected, "{what}: counted out of order");
            } else {
                assert!(
                    bits(&tried) == bits(keys),
                    "{what}: not counted, yet changed"
                );
            }
            let mut sorted = keys.to_vec();
            pool.install(|| sort(&mut sorted));
            assert!(bits(&sorted) == expected, "{what}: sorted out of order");
        }
    }

    #[test]
    fn keys_spanning_fewer_values_than_items_are_counted_into_order() {
        check(&draws(1 << 21, 1, |x| x as u8), true, "every u8");
        check(&draws(1 << 20, 2, |x| x as i16), true, "every i16");
        let far_from_zero = |x| 0xDEAD_0000 + (x % 300_000) as u32;
        check(&draws(1 << 19, 3, far_from_zero), true, "u32 far from zero");
        let around_zero = |x| (x % 300_000) as i64 - 150_000;
        check(&draws(1 << 19, 4, around_zero), true, "i64 around zero");
        // Subnormals of both signs and both zeros sit side by side in `total_cmp`'s bits.
        let tiny = |x: u64| {
            let magnitude = f32::from_bits((x >> 1) as u32 % 50_000);
            if x & 1 == 0 {
                magnitude
            } else {
                -magnitude
            }
        };
        check(&draws(1 << 19, 5, tiny), true, "f32 near zero");
        // The counts span the surrogates, which are no `char`s and none of the keys.
        let across_surrogates =
            |x| char::from_u32(0xD000 + (x % 0x1800) as u32).unwrap_or('\u{E000}');
        check(
            &draws(1 << 19, 6, across_surrogates),
            true,
            "chars around the surrogates",
        );
        // Three values, the sample's span too short for a margin.
        check(
            &draws(1 << 18, 7, |x| 5 + x % 3),
            true,
            "u64 of three values",
        );
        // One value most of the keys: its run crosses every part the fill writes.
        let mostly_one = |x| if x % 16 == 0 { x % 5000 } else { 2500 };
        check(
            &draws(1 << 18, 8, mostly_one),
            true,
            "u64 mostly of one value",
        );
    }

    #[test]
    fn keys_at_the_ends_of_their_types_are_counted_into_order() {
        check(
            &draws(1 << 18, 9, |x| u64::MAX - x % 5000),
            true,
            "u64 below its max",
        );
        check(
            &draws(1 << 17, 10, |x| u128::MAX - u128::from(x % 5000)),
            true,
            "u128",
        );
        check(
            &draws(1 << 18, 11, |x| i64::MIN + (x % 5000) as i64),
            true,
            "i64 at its min",
        );
        check(
            &draws(1 << 19, 12, |x| i32::MAX - (x % 5000) as i32),
            true,
            "i32 at its max",
        );
        // NaNs with the most payload bits: the highest and lowest keys in `total_cmp`'s
        // order, their order bits next to all ones and to zero.
        let highest_nans = |x| f64::from_bits(0x7FFF_FFFF_FFFF_FFFF - x % 5000);
        check(
            &draws(1 << 18, 13, highest_nans),
            true,
            "the highest f64 NaNs",
        );
        let lowest_nans = |x| f64::from_bits(u64::MAX - x % 5000);
        check(
            &draws(1 << 18, 14, lowest_nans),
            true,
            "the lowest f64 NaNs",
        );
        // NaNs of both signs are the two ends of the order: left to the splits.
        let nans = |x: u64| {
            let bits = 0x7FC0_0000 + (x >> 1) as u32 % 5000;
            f32::from_bits(if x & 1 == 0 { bits } else { bits | 1 << 31 })
        };
        check(&draws(1 << 19, 15, nans), false, "f32 NaNs of both signs");
    }

    #[test]
    fn keys_spanning_too_many_values_or_bytes_are_left_to_the_splits() {
        check(&draws(1 << 18, 16, |x| x), false, "random u64");
        // 2^18 values, more than the 200,000 items.
        check(
            &draws(200_000, 17, |x| x % (1 << 18)),
            false,
            "u64 over more values than items",
        );
        let few_bytes = FEWEST_BYTES / size_of::<u32>();
        check(
            &draws(few_bytes, 18, |x| (x % 16) as u32),
            false,
            "u32 in cache",
        );
    }

    #[test]
    fn a_key_outside_the_sampled_span_leaves_the_keys_to_the_splits() {
        let mut keys = draws(1 << 18, 19, |x| x % 1000);
        // Between the first two sampled places (every 1,028th item from the first).
        keys[1] = 1 << 40;
        check(&keys, false, "one key far above the rest");
        let mut same = vec![7u64; 1 << 18];
        same[1] = 8;
        check(&same, false, "every sampled key the same, one other");
    }

    #[test]
    fn keys_in_order_already_stay_as_they_are() {
        let in_order: Vec<u32> = (0..1u32 << 19).map(|i| i / 3).collect();
        check(&in_order, true, "in order");
    }
}
