//! The radix sort (`par_radix_sort`, `par_radix_sort_by_key`): stable, by the key's bits.
//!
//! A part over 1 MiB in order already is left as it is (`in_order.rs`). A split first
//! counts, per block, which key bits vary (a sample of 256 keys guesses them, so the same
//! pass counts the first digit). Keys that vary in at most 20 bits are sorted by
//! least-significant-digit passes over all of the split's items, two digits of up to 10
//! bits (one if the keys vary in at most 11): each pass a count per block, an exclusive
//! scan of the counts into each block's write offsets, and a scatter between the slice and
//! a scratch buffer, blocks in parallel, each keeping its items' order, so the pass is
//! stable. Keys that vary in more bits are split by the top 8 that vary (up to 11 where the
//! sample crowds into one of those digits, so that its bucket would not fit in cache, and
//! spreads over the bits added: doubles in [0, 1)), by one such pass into the scratch; each
//! bucket then goes back to the slice sorted by its lower bits: one that fits in cache by
//! least-significant-digit passes on one thread (digits that do not vary in it skipped;
//! where many vary, only the highest, then an insertion sort), a larger one by this same
//! split again (in parallel when it holds more than its share of the work). The scratch is
//! advised into huge pages: a fault per 2 MiB written instead of per 4 KiB. Items move
//! bitwise; the key function may panic at any call and every item is still in the slice
//! exactly once.

use super::radix_key::sealed::Bits;
use super::radix_key::{BUCKETS, DIGIT_BITS};
use crate::iter::{IndexedParallelIterator, IntoParallelRefIterator, ParallelIterator};
use crate::ops::region::Disjoint;
use crate::slice::ChunksMut;
use std::mem::{size_of, MaybeUninit};
use std::ops::Range;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// A bucket of at most this many bytes is sorted by least-significant-digit passes on one
/// thread: it and its scratch stay in a core's cache between passes.
const IN_CACHE_BYTES: usize = 1 << 20;
/// A bucket of at most this many items is sorted by `std`'s stable sort on the key: below
/// it, clearing and scanning 256 counts a pass costs more than comparing.
const SMALL: usize = 128;
/// Blocks a split makes per thread: a thread slowed down holds back a quarter of its share.
const BLOCKS_PER_THREAD: usize = 4;
/// The fewest items a block of a split has.
const MIN_BLOCK: usize = 1 << 12;

/// Sorts `items` by `key`, stable, on the current pool.
pub(crate) fn sort_by_bits<T: Send, B: Bits>(items: &mut [T], key: &(impl Fn(&T) -> B + Sync)) {
    let n = items.len();
    if n < 2 || size_of::<T>() == 0 {
        return;
    }
    let mut scratch: Vec<T> = Vec::with_capacity(n);
    let scratch = &mut scratch.spare_capacity_mut()[..n];
    #[cfg(target_os = "linux")]
    super::huge_pages::advise_huge(scratch);
    let lent = Lent {
        items: Disjoint::new(items),
        scratch: Disjoint::new(scratch),
    };
    let whole = Part {
        range: 0..n,
        in_scratch: false,
        landed: None,
    };
    // SAFETY: the whole of both is lent to this call; the items are in the items.
    unsafe { split(&lent, whole, key, B::BITS, crate::current_num_threads()) };
}

/// A slice and its scratch (as long), lent in disjoint ranges to a split's tasks.
struct Lent<'a, T> {
    items: Disjoint<'a, T>,
    scratch: Disjoint<'a, MaybeUninit<T>>,
}

/// A range of a [`Lent`] to sort: its items in the items or in the scratch; if in the
/// scratch, `landed` is set once they are in the items (read by the split that made the
/// range, which moves them if it finds it unset).
struct Part<'a> {
    range: Range<usize>,
    in_scratch: bool,
    landed: Option<&'a AtomicBool>,
}

/// Sorts `part` of `lent` by `key`'s bits below `hint` (the ones above are equal in all
/// of them) into the items, on up to `width` threads.
///
/// # Safety
/// `part.range` is lent to this call alone, and its items are where `part` says.
unsafe fn split<T: Send, B: Bits>(
    lent: &Lent<'_, T>,
    part: Part<'_>,
    key: &(impl Fn(&T) -> B + Sync),
    hint: u32,
    width: usize,
) {
    let n = part.range.len();
    if in_cache::<T>(n) {
        // SAFETY: the part is this call's alone, its items where it says (contract).
        let mut bucket = unsafe { Bucket::new(lent, part) };
        bucket.sort_in_cache(key);
        return;
    }
    // SAFETY: the part's range is this call's alone, and its items are on that side.
    let (here, there) = unsafe { sides(lent, &part) };
    if super::in_order::holds(here, &|a, b| key(a) <= key(b)) {
        // SAFETY: the part's alone, its items where it says.
        drop(unsafe { Bucket::new(lent, part) });
        return;
    }
    let blocks = (width * BLOCKS_PER_THREAD).min(n / MIN_BLOCK).max(1);
    let block_len = n.div_ceil(blocks);
    let (first, sampled) = sample(here, key);
    let sampled_top = (sampled.iter().fold(B::ZERO, |mask, &k| mask.or(k)))
        .highest_bit()
        .map_or(1, |bit| bit + 1)
        .min(hint);
    let digit_of = |varying| {
        let bits = split_bits(&sampled, varying, n.saturating_mul(size_of::<T>()));
        Digit::first(varying, bits)
    };
    let guess = digit_of(sampled_top);
    let tallies: Vec<Tally<B>> = ChunksMut::new(here, block_len)
        .with_max_len(1)
        .map(|block| count(block, key, first, guess))
        .collect();
    let varying = tallies.iter().fold(B::ZERO, |mask, t| mask.or(t.varying));
    let Some(top) = varying.highest_bit() else {
        // Every key equal.
        // SAFETY: the part's alone, its items where it says.
        drop(unsafe { Bucket::new(lent, part) });
        return;
    };
    assert!(
        top < hint,
        "par_radix_sort: the key function gave an item another key than before \
         (expected the same key at every call)"
    );
    // The sample's guess of the varying bits is the usual case: its digit, worked out once.
    let digit = if top + 1 == sampled_top {
        guess
    } else {
        digit_of(top + 1)
    };
    #[cfg(test)]
    tests::WIDEST_SPLIT.fetch_max(digit.bits, Ordering::Relaxed);
    let counts: Vec<Vec<usize>> = if digit == guess {
        tallies.into_iter().map(|t| t.counts).collect()
    } else {
        count_blocks(here, block_len, key, digit)
    };
    if digit.shift == 0 {
        // SAFETY: the part is this call's alone, its items where it says (contract).
        unsafe { sort_by_passes(lent, part, key, counts, block_len, top + 1) };
        return;
    }
    let starts = scatter_blocks(here, there, block_len, &counts, key, digit);
    // Every item is on the other side now, in buckets at these bounds in the lent slices.
    let starts: Vec<usize> = starts.iter().map(|s| part.range.start + s).collect();
    let buckets_in_scratch = !part.in_scratch;
    if let Some(landed) = part.landed {
        // Read by the parent split, on this thread or after the region this runs in.
        landed.store(true, Ordering::Relaxed);
    }
    let landed: Vec<AtomicBool> = (0..digit.buckets())
        .map(|_| AtomicBool::new(false))
        .collect();
    // Made only when needed: a `Restore` dropped moves buckets.
    let restore = buckets_in_scratch.then(|| Restore {
        lent,
        starts: &starts,
        landed: &landed,
    });
    let bucket = |d: usize| Part {
        range: starts[d]..starts[d + 1],
        in_scratch: buckets_in_scratch,
        landed: buckets_in_scratch.then_some(&landed[d]),
    };
    let share = n / (2 * width);
    let mut rest = Vec::with_capacity(digit.buckets());
    for d in 0..digit.buckets() {
        let len = starts[d + 1] - starts[d];
        if width > 1 && len > share && len >= MIN_BLOCK {
            // SAFETY: bucket `d` is this call's alone, now and in the recursion.
            unsafe { split(lent, bucket(d), key, digit.shift, width) };
        } else {
            rest.push(d);
        }
    }
    rest.sort_unstable_by_key(|&d| std::cmp::Reverse(starts[d + 1] - starts[d]));
    let buffers = Buffers::default();
    rest.par_iter().with_max_len(1).for_each(|&d| {
        let part = bucket(d);
        if buckets_in_scratch && in_cache::<T>(part.range.len()) {
            let mut lease = buffers.lend(part.range.len());
            // SAFETY: bucket `d` is claimed by this task alone, its items in the scratch.
            let mut sorting = unsafe { Bucket::new(lent, part) }.with_buffer(lease.slots());
            sorting.sort_in_cache(key);
        } else {
            // SAFETY: bucket `d` is claimed by this task alone.
            unsafe { split(lent, part, key, digit.shift, 1) };
        }
    });
    drop(restore);
}

/// Whether `len` items fit in [`IN_CACHE_BYTES`]: sorted on one thread by passes over them.
fn in_cache<T>(len: usize) -> bool {
    len.saturating_mul(size_of::<T>()) <= IN_CACHE_BYTES
}

/// Buffers the buckets of a split sorted in cache pass their items through, each lent to one
/// bucket at a time and kept for the next while the split lasts, so that it stays in its
/// core's cache: at most one a thread.
///
/// Each buffer is an empty `Vec` (its items are never its own), its capacity the slots.
struct Buffers<T>(Mutex<Vec<Vec<T>>>);

impl<T> Default for Buffers<T> {
    fn default() -> Self {
        Buffers(Mutex::new(Vec::new()))
    }
}

impl<T> Buffers<T> {
    /// A buffer of at least `len` slots, the one last given back if any.
    fn lend(&self, len: usize) -> Lease<'_, T> {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut buffer = kept.unwrap_or_default();
        buffer.reserve(len);
        Lease {
            buffers: self,
            buffer,
            len,
        }
    }
}

/// A buffer lent by [`Buffers`], given back when dropped.
struct Lease<'a, T> {
    buffers: &'a Buffers<T>,
    buffer: Vec<T>,
    len: usize,
}

impl<T> Lease<'_, T> {
    /// The `len` slots asked for.
    fn slots(&mut self) -> &mut [MaybeUninit<T>] {
        &mut self.buffer.spare_capacity_mut()[..self.len]
    }
}

impl<T> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        let mut kept = self
            .buffers
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        kept.push(buffer);
    }
}

/// Keys a split samples to guess which digit to count first, and how wide it is.
const SAMPLES: usize = 256;

/// The first item's key, and the bits in which [`SAMPLES`] keys evenly spaced from the
/// first item to the last (some twice in fewer items) differ from it. `items` is not empty.
pub(crate) fn sample<T, B: Bits>(items: &[T], key: impl Fn(&T) -> B) -> (B, [B; SAMPLES]) {
    let n = items.len();
    let first = key(&items[0]);
    let sampled = std::array::from_fn(|i| {
        let at = (n - 1) as u128 * i as u128 / (SAMPLES - 1) as u128;
        key(&items[at as usize]).xor(first)
    });
    (first, sampled)
}

/// A split whose keys vary in at most this many bits sorts them by least-significant-digit
/// passes over all its items, [`LSD_DIGIT_BITS`] bits or fewer a pass: two passes finish
/// it, where a split by the top 8 bits leaves each bucket to sort by more passes. Two
/// passes of 10 bits, not 11: keys of 21 or 22 bits took longer by two passes of 11
/// (1,024 places a scatter writes to against 2,048) than by a split (22 bits: 117 ms
/// against 78 for 1e7 `u64`s, 12.5 against 7.8 at 1e6; 21 bits: 97 against 76 at 1e7).
const LSD_MOST_BITS: u32 = 20;
/// The widest digit of a pass over a whole part: 2,048 counts a block, and as many places
/// a scatter writes to at once.
const LSD_DIGIT_BITS: u32 = 11;
/// The widest digit a split by its top varying bits takes (as many places as
/// [`LSD_DIGIT_BITS`]), where [`split_bits`] says its buckets would not fit in cache.
const WIDEST_SPLIT_BITS: u32 = LSD_DIGIT_BITS;
/// The fewest of the [`SAMPLES`] sampled keys sharing one top digit that make a split
/// take a wider digit: uniform keys (one in 256 a digit, 1 of the sample on average) put
/// this many into one digit less than once in a million splits; doubles in [0, 1), whose
/// exponent puts half of them into eight digits, 16 on average into each of those.
const CROWDED_SAMPLES: usize = 12;

/// How many bits a split of `part_bytes` by its top `varying` bits orders by:
/// [`DIGIT_BITS`], unless the sampled keys (each xored with the part's first) crowd into
/// one digit, so that its bucket, at their share of the part, would be over
/// [`IN_CACHE_BYTES`] and split again on one thread, a pass more over it: then a bit more
/// for each time it would be twice that, up to [`WIDEST_SPLIT_BITS`], if the crowd spreads
/// over the bits added (a quarter of it or more leaves its digit). A crowd of one key
/// (zeros among uniform keys) stays one bucket at any width, and every item would pay the
/// wider scatter for nothing.
fn split_bits<B: Bits>(sampled: &[B; SAMPLES], varying: u32, part_bytes: usize) -> u32 {
    if Digit::first(varying, DIGIT_BITS).shift == 0 {
        // Least-significant-digit passes: their width is `Digit::first`'s.
        return DIGIT_BITS;
    }
    // The most sampled keys in one digit of `bits` (at most the widest): counted, a
    // fraction of a microsecond where sorting the sample's digits took a few.
    let crowd_at = |bits| {
        let digit = Digit::first(varying, bits);
        let mut counts = [0u16; 1 << WIDEST_SPLIT_BITS];
        let mut most = 0u16;
        for &key in sampled {
            let count = &mut counts[digit.of(key)];
            *count += 1;
            most = most.max(*count);
        }
        usize::from(most)
    };
    let crowd = crowd_at(DIGIT_BITS);
    if crowd < CROWDED_SAMPLES {
        return DIGIT_BITS;
    }
    let bucket_bytes = part_bytes / SAMPLES * crowd;
    let over = bucket_bytes
        .div_ceil(IN_CACHE_BYTES)
        .next_power_of_two()
        .trailing_zeros();
    let bits = DIGIT_BITS + over.min(WIDEST_SPLIT_BITS - DIGIT_BITS);
    // Spread: the bits added leave at most three quarters of the crowd in one digit.
    if 4 * crowd_at(bits) <= 3 * crowd {
        bits
    } else {
        DIGIT_BITS
    }
}

/// The bits a split or pass orders by: `bits` bits from bit `shift` up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Digit {
    shift: u32,
    bits: u32,
}

impl Digit {
    /// The first digit to sort keys that vary in their lowest `varying` bits (at least
    /// one) by: the lowest of the fewest equal digits that cover them if they are at most
    /// [`LSD_MOST_BITS`], else the top `split_bits` of them.
    fn first(varying: u32, split_bits: u32) -> Digit {
        debug_assert!(varying > 0, "no bits vary: nothing to sort by");
        if varying <= LSD_MOST_BITS {
            let passes = varying.div_ceil(LSD_DIGIT_BITS);
            Digit {
                shift: 0,
                bits: varying.div_ceil(passes),
            }
        } else {
            Digit {
                shift: varying - split_bits,
                bits: split_bits,
            }
        }
    }

    /// How many values the digit has.
    fn buckets(self) -> usize {
        1 << self.bits
    }

    /// The digit of `key`.
    #[inline(always)]
    fn of<B: Bits>(self, key: B) -> usize {
        key.bits_from(self.shift) & (self.buckets() - 1)
    }
}

/// Sorts `part` of `lent`, whose keys agree above their lowest `varying` bits (at most
/// [`LSD_MOST_BITS`]), into the items by one pass over all of it per digit from the
/// lowest (the digits of [`Digit::first`]), each pass counted and scattered by blocks of
/// `block_len` in parallel; `counts` are the blocks' counts of the first digit.
///
/// # Safety
/// `part.range` is lent to this call alone, and its items are where `part` says.
unsafe fn sort_by_passes<T: Send, B: Bits>(
    lent: &Lent<'_, T>,
    part: Part<'_>,
    key: &(impl Fn(&T) -> B + Sync),
    mut counts: Vec<Vec<usize>>,
    block_len: usize,
    varying: u32,
) {
    let mut digit = Digit::first(varying, DIGIT_BITS);
    let n = part.range.len();
    // SAFETY: the part is this call's alone, its items where it says (contract). Dropped,
    // also on unwinding, the bucket moves its items to the items from the side they are.
    let mut bucket = unsafe { Bucket::new(lent, part) };
    loop {
        let (here, there) = bucket.here_and_there();
        // SAFETY: the bucket's `n` items are at `here`, its other `n` slots at `there`,
        // both its own (`Bucket::new`).
        let (here, there) = unsafe {
            (
                std::slice::from_raw_parts_mut(here, n),
                std::slice::from_raw_parts_mut(there.cast::<MaybeUninit<T>>(), n),
            )
        };
        scatter_blocks(here, there, block_len, &counts, key, digit);
        bucket.in_scratch = !bucket.in_scratch;
        digit.shift += digit.bits;
        if digit.shift >= varying {
            break;
        }
        let (here, _) = bucket.here_and_there();
        // SAFETY: as above, the items now at the other side: the scatter wrote each of
        // its places once (`scatter_blocks`).
        counts = count_blocks(
            unsafe { std::slice::from_raw_parts_mut(here, n) },
            block_len,
            key,
            digit,
        );
    }
    if bucket.in_scratch {
        // SAFETY: the bucket's `n` items are in the scratch now, and both sides are its
        // own (`Bucket::new`).
        let (from, to) = unsafe {
            (
                Disjoint::new(std::slice::from_raw_parts_mut(bucket.scratch, n)),
                std::slice::from_raw_parts_mut(bucket.items, n),
            )
        };
        ChunksMut::new(to, block_len)
            .with_max_len(1)
            .enumerate()
            .for_each(|(b, block)| {
                // SAFETY: block `b`'s items are at the same offsets of the scratch, read
                // by this task alone.
                unsafe {
                    ptr::copy_nonoverlapping(
                        from.as_mut_ptr().add(b * block_len),
                        block.as_mut_ptr(),
                        block.len(),
                    )
                };
            });
        bucket.in_scratch = false;
    }
}

/// Each block's (of `block_len` items of `items`) counts of `digit`, counted in parallel.
fn count_blocks<T: Send, B: Bits>(
    items: &mut [T],
    block_len: usize,
    key: &(impl Fn(&T) -> B + Sync),
    digit: Digit,
) -> Vec<Vec<usize>> {
    ChunksMut::new(items, block_len)
        .with_max_len(1)
        .map(|block| {
            let first = key(&block[0]);
            count(block, key, first, digit).counts
        })
        .collect()
}

/// Copies each block (of `block_len` items of `here`, whose `digit` counts are `counts`)
/// to `there`, in parallel: digit-major, every block's items of digit 0 in block order,
/// then digit 1, ..., each block keeping its order (stable). Returns the digits' bounds in
/// `there`; every place of `there[..here.len()]` is written once.
///
/// # Panics
/// If the counts are not the blocks' (their total not `here`'s length, or a digit of a
/// block with more items than counted: the key function gave an item another key than
/// when it was counted), or `there` is shorter than `here`. Nothing is written out of
/// `there`'s bounds first.
fn scatter_blocks<T: Send, B: Bits>(
    here: &mut [T],
    there: &mut [MaybeUninit<T>],
    block_len: usize,
    counts: &[Vec<usize>],
    key: &(impl Fn(&T) -> B + Sync),
    digit: Digit,
) -> Vec<usize> {
    let (offsets, starts) = scan_counts(counts, digit.buckets());
    assert!(
        here.len() <= there.len(),
        "par_radix_sort: a scatter with too few places"
    );
    // With each block's digits bounded by their counts (`scatter`), a total of `here`'s
    // length leaves each block's counts summing to its length: every place gets an item.
    assert_eq!(
        starts[digit.buckets()],
        here.len(),
        "par_radix_sort: counts of another number of items than the scatter's"
    );
    let to = Disjoint::new(there);
    ChunksMut::new(here, block_len)
        .with_max_len(1)
        .enumerate()
        .for_each(|(b, block)| {
            let mut at = offsets[b].clone();
            let end: Vec<usize> = at.iter().zip(&counts[b]).map(|(at, n)| at + n).collect();
            // SAFETY: block `b`'s items of digit `d` go to `at[d]..end[d]` of `there`, a
            // range no other block writes (`scan_counts`), inside it (the total asserted
            // above, the sums checked).
            unsafe {
                scatter(
                    block,
                    to.as_mut_ptr().cast(),
                    &mut at,
                    &end,
                    key,
                    move |k| digit.of(k),
                )
            }
        });
    starts
}

/// The part's items (on its side) and the other side's range, as slices of items.
///
/// # Safety
/// `part.range` is lent to the caller alone, and its items are on its side.
#[allow(clippy::mut_from_ref)] // the point: disjoint parts of the lent slices
unsafe fn sides<'a, T>(
    lent: &'a Lent<'_, T>,
    part: &Part<'_>,
) -> (&'a mut [T], &'a mut [MaybeUninit<T>]) {
    // SAFETY: the range is the caller's alone (contract).
    let (items, scratch) = unsafe {
        (
            lent.items.range(part.range.clone()),
            lent.scratch.range(part.range.clone()),
        )
    };
    if part.in_scratch {
        // SAFETY: the items are in the scratch (contract), so it holds initialised `T`s;
        // the items' side is free to be written, and `MaybeUninit<T>` has `T`'s layout.
        unsafe {
            let here = &mut *(scratch as *mut [MaybeUninit<T>] as *mut [T]);
            let there = &mut *(items as *mut [T] as *mut [MaybeUninit<T>]);
            (here, there)
        }
    } else {
        (items, scratch)
    }
}

/// What a pass over a block found.
struct Tally<B> {
    /// The key bits that differ from the part's first key in some item.
    varying: B,
    /// How many items have each value of the pass's digit.
    counts: Vec<usize>,
}

/// One pass over `block`: its [`Tally`] of `digit`, against the part's `first` key. Four
/// counts, summed at the end: runs of one digit (skewed keys) would otherwise make each
/// increment wait for the one before.
fn count<T, B: Bits>(block: &mut [T], key: &impl Fn(&T) -> B, first: B, digit: Digit) -> Tally<B> {
    let buckets = digit.buckets();
    let mut varying = B::ZERO;
    let mut tallies = vec![0; 4 * buckets];
    let (t0, rest) = tallies.split_at_mut(buckets);
    let (t1, rest) = rest.split_at_mut(buckets);
    let (t2, t3) = rest.split_at_mut(buckets);
    let mut quads = block.chunks_exact(4);
    for quad in &mut quads {
        let keys = [key(&quad[0]), key(&quad[1]), key(&quad[2]), key(&quad[3])];
        varying = varying.or(keys[0].xor(first)).or(keys[1].xor(first));
        varying = varying.or(keys[2].xor(first)).or(keys[3].xor(first));
        t0[digit.of(keys[0])] += 1;
        t1[digit.of(keys[1])] += 1;
        t2[digit.of(keys[2])] += 1;
        t3[digit.of(keys[3])] += 1;
    }
    for item in quads.remainder() {
        let k = key(item);
        varying = varying.or(k.xor(first));
        t0[digit.of(k)] += 1;
    }
    for ((t0, t1), (t2, t3)) in t0.iter_mut().zip(&*t1).zip(t2.iter().zip(&*t3)) {
        *t0 += t1 + t2 + t3;
    }
    tallies.truncate(buckets);
    Tally {
        varying,
        counts: tallies,
    }
}

/// Each block's write offsets (digit-major: every block's items of digit 0, in block
/// order, then digit 1, ...: an exclusive scan of the counts), and the buckets' bounds.
/// A few thousand additions: below what a region costs, so on this thread.
fn scan_counts(counts: &[Vec<usize>], buckets: usize) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut offsets: Vec<Vec<usize>> = vec![vec![0; buckets]; counts.len()];
    let mut starts = Vec::with_capacity(buckets + 1);
    let mut sum = 0;
    for d in 0..buckets {
        starts.push(sum);
        for (at, counts) in offsets.iter_mut().zip(counts) {
            at[d] = sum;
            sum = usize::checked_add(sum, counts[d]).expect("par_radix_sort: counts overflow");
        }
    }
    starts.push(sum);
    (offsets, starts)
}

/// Copies each of `items` (bitwise) to `to + at[d]` for its digit `d`, advancing `at[d]`.
///
/// # Panics
/// If a digit has more items than `end` leaves room for (`key` gave an item another key
/// than when it was counted), or `digit` gives a digit outside `at`. Every item is still
/// where it was.
///
/// # Safety
/// For each digit `d`, `to + at[d]..to + end[d]` is valid for writes, and nobody else
/// reads or writes there meanwhile.
#[inline]
unsafe fn scatter<T, B: Bits>(
    items: &[T],
    to: *mut T,
    at: &mut [usize],
    end: &[usize],
    key: &impl Fn(&T) -> B,
    digit: impl Fn(B) -> usize,
) {
    for item in items {
        let d = digit(key(item));
        let slot = &mut at[d];
        assert!(
            *slot < end[d],
            "par_radix_sort: the key function gave an item another key than before \
             (expected the same key at every call)"
        );
        // SAFETY: below `end[d]` (checked), in the range this digit may write (this
        // function's contract).
        unsafe { ptr::copy_nonoverlapping(item, to.add(*slot), 1) };
        *slot += 1;
    }
}

/// On the way out of a split, normal or unwinding, moves every bucket not landed from
/// the scratch back to the items.
struct Restore<'a, 'b, T> {
    lent: &'a Lent<'b, T>,
    starts: &'a [usize],
    landed: &'a [AtomicBool],
}

impl<T> Drop for Restore<'_, '_, T> {
    fn drop(&mut self) {
        for (d, landed) in self.landed.iter().enumerate() {
            // Stored on this thread, or by a region that has ended (see `Bucket`'s drop).
            if !landed.load(Ordering::Relaxed) {
                let part = Part {
                    range: self.starts[d]..self.starts[d + 1],
                    in_scratch: true,
                    landed: Some(landed),
                };
                // SAFETY: no task holds the bucket any more (the region ended, or never
                // ran), and it never landed: its items are in the scratch. Dropped, it
                // moves them to the items and marks them landed.
                drop(unsafe { Bucket::new(self.lent, part) });
            }
        }
    }
}

/// A bucket (sorted in cache) or a part (sorted by passes over all of it) being sorted:
/// its items in the items, in the scratch, or in a buffer lent to it. Dropped, on return
/// or unwinding, it moves them to the items and marks them landed.
struct Bucket<'a, T> {
    items: *mut T,
    scratch: *mut T,
    len: usize,
    in_scratch: bool,
    /// `len` slots lent to the bucket ([`with_buffer`](Self::with_buffer)), or null.
    buffer: *mut T,
    /// Whether the items are in the buffer (then not in the scratch).
    in_buffer: bool,
    landed: Option<&'a AtomicBool>,
}

impl<'a, T> Bucket<'a, T> {
    /// `part` of `lent`.
    ///
    /// # Safety
    /// `part.range` is lent to this bucket alone while it lives, its items where `part`
    /// says.
    unsafe fn new(lent: &Lent<'_, T>, part: Part<'a>) -> Bucket<'a, T> {
        Bucket {
            items: lent.items.as_mut_ptr().wrapping_add(part.range.start),
            scratch: lent
                .scratch
                .as_mut_ptr()
                .cast::<T>()
                .wrapping_add(part.range.start),
            len: part.range.len(),
            in_scratch: part.in_scratch,
            buffer: ptr::null_mut(),
            in_buffer: false,
            landed: part.landed,
        }
    }

    /// The bucket, with `buffer` (at least as long) to pass its items through.
    fn with_buffer(self, buffer: &'a mut [MaybeUninit<T>]) -> Bucket<'a, T> {
        assert!(buffer.len() >= self.len, "a buffer as long as the bucket");
        Bucket {
            buffer: buffer.as_mut_ptr().cast(),
            ..self
        }
    }

    /// Where the items are, and where they go next.
    fn here_and_there(&self) -> (*mut T, *mut T) {
        if self.in_buffer {
            (self.buffer, self.items)
        } else if self.in_scratch {
            (self.scratch, self.items)
        } else {
            (self.items, self.scratch)
        }
    }

    /// Moves the items to the items, if in the buffer or the scratch.
    fn move_to_items(&mut self) {
        if self.in_buffer {
            // SAFETY: the bucket's `len` items are in the buffer, lent to it alone
            // (`with_buffer`), and its range in the items is its own (`new`).
            unsafe { ptr::copy_nonoverlapping(self.buffer, self.items, self.len) };
            self.in_buffer = false;
        } else if self.in_scratch {
            // SAFETY: the bucket's `len` items are in the scratch, and both ranges are
            // this bucket's alone (`new`).
            unsafe { ptr::copy_nonoverlapping(self.scratch, self.items, self.len) };
            self.in_scratch = false;
        }
    }

    /// The bucket's items, moved to the items if in the scratch.
    fn items_in_place(&mut self) -> &mut [T] {
        self.move_to_items();
        // SAFETY: the bucket's own range (`new`), its items there now.
        unsafe { std::slice::from_raw_parts_mut(self.items, self.len) }
    }

    /// Sorts the bucket by `key` into the items: `std`'s stable sort if small; else one
    /// least-significant-digit pass per digit that varies in it, if it has few; else, as
    /// diverting LSD sorts do, passes over only the highest varying digits, enough of them
    /// to tell about as many keys apart as there are items, then an insertion sort for
    /// the little disorder left (or `std`'s stable sort, if it turns out not little).
    fn sort_in_cache<B: Bits>(&mut self, key: &impl Fn(&T) -> B) {
        if self.len <= SMALL {
            self.items_in_place().sort_by_key(key);
            return;
        }
        let (here, _) = self.here_and_there();
        // SAFETY: `len` items at `here` (the bucket's own range, `new`).
        let items = unsafe { std::slice::from_raw_parts(here, self.len) };
        let first = key(&items[0]);
        let (mut varying, mut previous, mut in_order) = (B::ZERO, first, true);
        for item in items {
            let k = key(item);
            varying = varying.or(k.xor(first));
            in_order &= previous <= k;
            previous = k;
        }
        if in_order {
            return; // dropped, the bucket moves to the items if it is not there
        }
        let (digits, exact) = digits_to_sort(varying, self.len);
        let counts = count_bytes(items, key, &digits);
        // With a buffer and an even number of passes from the scratch, the passes write
        // the buffer and the items in turn: the items end in place with no copy back, and
        // the scratch's range, whose lines would go back to memory for nothing, is not
        // written (1e7 `(u64, u64)` records: 83.9-105.6 ms against 90.7-122.8 in two
        // rounds of the sort bench; `u64`s and `f64`s within their noise).
        let through_buffer = !self.buffer.is_null() && self.in_scratch && digits.len() % 2 == 0;
        for (&digit, counts) in digits.iter().zip(&counts).rev() {
            let mut at = [0; BUCKETS];
            let mut end = [0; BUCKETS];
            let mut sum = 0;
            for ((at, end), &count) in at.iter_mut().zip(&mut end).zip(counts) {
                *at = sum;
                sum += count as usize;
                *end = sum;
            }
            let (here, there) = self.here_and_there();
            let there = if through_buffer && !self.in_buffer {
                self.buffer
            } else {
                there
            };
            // SAFETY: `len` items at `here`; `there` is another `len` slots of the
            // bucket's, the digits' ranges in it disjoint (`at..end`, an exclusive scan).
            unsafe {
                scatter(
                    std::slice::from_raw_parts(here, self.len),
                    there,
                    &mut at,
                    &end,
                    key,
                    move |k| usize::from(digit.of(k)),
                )
            };
            if through_buffer {
                self.in_buffer = !self.in_buffer;
                self.in_scratch = false;
            } else {
                self.in_scratch = !self.in_scratch;
            }
        }
        if !exact {
            let budget = INSERTION_MOVES * self.len;
            let items = self.items_in_place();
            if !insertion_sort(items, key, budget) {
                items.sort_by_key(key);
            }
        }
    }
}

/// The largest item the insertion sort swaps with the one before it by index, whatever
/// their order: a radix sort of 1e6 64-byte records took 30.2 ms so against 25.5 by the
/// branch (medians of eight, the same quiet round; `callgrind`, 3e5 records sorted twice:
/// 144.3M instructions against 125.9M).
const SWAP_BY_INDEX_BYTES: usize = 16;

/// Places an insertion sort may move items beyond the one before them, per item, before a
/// bucket is handed to `std`'s sort.
const INSERTION_MOVES: usize = 4;

/// The digits (bytes) to sort a bucket of `len` items by, highest first, and
/// whether they are all that vary: every varying digit if there are at most
/// [`EXACT_DIGITS`]; else the varying digits from the top, until they hold at least
/// `log2(len)` varying bits.
fn digits_to_sort<B: Bits>(varying: B, len: usize) -> (Vec<Byte>, bool) {
    let all: Vec<Byte> = (0..B::BITS.div_ceil(DIGIT_BITS))
        .rev()
        .map(|d| Byte {
            shift: d * DIGIT_BITS,
        })
        .filter(|digit| digit.of(varying) != 0)
        .collect();
    if all.len() <= EXACT_DIGITS {
        return (all, true);
    }
    let wanted = len.next_power_of_two().trailing_zeros();
    let mut bits = 0;
    let taken = all
        .iter()
        .take_while(|digit| {
            let enough = bits >= wanted;
            bits += digit.of(varying).count_ones();
            !enough
        })
        .count();
    (all[..taken].to_vec(), taken == all.len())
}

/// A byte of a key, from bit `shift` up: the digit of a pass over a bucket in cache, read
/// with no mask to compute, and indexing an array of its 256 counts with no bound check.
#[derive(Clone, Copy, Debug)]
struct Byte {
    shift: u32,
}

const _: () = assert!(DIGIT_BITS == u8::BITS, "an in-cache digit is a byte");

impl Byte {
    /// The byte of `key`.
    #[inline(always)]
    fn of<B: Bits>(self, key: B) -> u8 {
        key.bits_from(self.shift) as u8
    }
}

/// How many of `items` have each value of each of `bytes`: a pass over them for up to
/// [`EXACT_DIGITS`] bytes at once, a pass per byte where there are more.
fn count_bytes<T, B: Bits>(
    items: &[T],
    key: &impl Fn(&T) -> B,
    bytes: &[Byte],
) -> Vec<[u32; BUCKETS]> {
    let mut counts = vec![[0; BUCKETS]; bytes.len()];
    match bytes.len() {
        1 => count_at_once::<1, _, _>(items, key, bytes, &mut counts),
        2 => count_at_once::<2, _, _>(items, key, bytes, &mut counts),
        3 => count_at_once::<3, _, _>(items, key, bytes, &mut counts),
        _ => {
            for (byte, counts) in bytes.chunks(1).zip(counts.chunks_mut(1)) {
                count_at_once::<1, _, _>(items, key, byte, counts);
            }
        }
    }
    counts
}

/// [`count_bytes`] of `N` bytes (`bytes` and `counts` as long) in one pass.
#[inline(always)]
fn count_at_once<const N: usize, T, B: Bits>(
    items: &[T],
    key: &impl Fn(&T) -> B,
    bytes: &[Byte],
    counts: &mut [[u32; BUCKETS]],
) {
    let bytes: &[Byte; N] = bytes.try_into().expect("one byte per count");
    let counts: &mut [[u32; BUCKETS]; N] = counts.try_into().expect("one count per byte");
    for item in items {
        let k = key(item);
        for (byte, counts) in bytes.iter().zip(counts.iter_mut()) {
            counts[usize::from(byte.of(k))] += 1;
        }
    }
}

/// Up to this many varying digits, a bucket is sorted by a pass over each: an insertion
/// sort after fewer passes pays off only when it saves several, and keys with few varying
/// bits (a skewed spread) leave it much to do.
const EXACT_DIGITS: usize = 3;

/// Sorts `items` by `key`, stable, by insertion, unless items move more than `budget`
/// places in all beyond the one before them: then returns `false`, the items a permutation
/// of what they were, equal keys still in their order. Each item is swapped with the one
/// before it or not by its index: a branch would fail to predict, as in a bucket of
/// uniform keys sorted by its top bytes up to one item in five is out of place, at random
/// (one in eight for 1e7 `u64`s). Only an item that goes further takes the branch. Items
/// over [`SWAP_BY_INDEX_BYTES`] branch on their order instead: writing both back costs them
/// more than the branch.
fn insertion_sort<T, B: Bits>(items: &mut [T], key: &impl Fn(&T) -> B, budget: usize) -> bool {
    let Some(first) = items.first() else {
        return true;
    };
    // The key of the item at `i - 1`: the largest so far.
    let mut last = key(first);
    let len = items.len();
    let base = items.as_mut_ptr();
    let mut moves = 0;
    for i in 1..len {
        // SAFETY: `i < len`, and every item is in place while the reference lives.
        let k = key(unsafe { &*base.add(i) });
        let swap = k < last;
        if size_of::<T>() > SWAP_BY_INDEX_BYTES && !swap {
            last = k;
            continue;
        }
        // SAFETY: `i - 1` and `i` are below `len`; both items are read out and written
        // back to the two places, swapped or not, with nothing between that can panic.
        unsafe {
            let earlier = ptr::read(base.add(i - 1));
            let item = ptr::read(base.add(i));
            ptr::write(base.add(i - usize::from(swap)), item);
            ptr::write(base.add(i - 1 + usize::from(swap)), earlier);
        }
        last = last.max(k);
        // The items before `i - 1` are in order: one of them above `k` means `k` goes
        // further down (and that `swap` held).
        // SAFETY: `i - 2 < len`, and every item is in place while the reference lives.
        if i >= 2 && key(unsafe { &*base.add(i - 2) }) > k {
            let mut j = i - 2;
            // SAFETY: `j - 1 < len`, and every item is in place while the reference lives.
            while j > 0 && key(unsafe { &*base.add(j - 1) }) > k {
                j -= 1;
            }
            moves += i - 1 - j;
            if moves > budget {
                return false;
            }
            // SAFETY: `j < i - 1 < len`: the item at `i - 1` is read out, items
            // `j..i - 1` move up one (an overlapping copy within the slice), and it is
            // written at `j`; nothing between can panic.
            unsafe {
                let moving = ptr::read(base.add(i - 1));
                ptr::copy(base.add(j), base.add(j + 1), i - 1 - j);
                ptr::write(base.add(j), moving);
            }
        }
    }
    true
}

impl<T> Drop for Bucket<'_, T> {
    fn drop(&mut self) {
        self.move_to_items();
        if let Some(landed) = self.landed {
            // Read by `Restore`, on this thread or after the region this runs in ends.
            landed.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WIDEST_SPLIT_BITS;
    use super::{count_bytes, insertion_sort, split_bits, Byte, SAMPLES};
    use super::{CROWDED_SAMPLES, DIGIT_BITS, IN_CACHE_BYTES, SWAP_BY_INDEX_BYTES};
    use crate::sort::radix_key::sealed::Sealed;
    use std::sync::atomic::AtomicU32;

    /// The widest digit any split of this test process took.
    pub(super) static WIDEST_SPLIT: AtomicU32 = AtomicU32::new(0);

    /// `n` pairs of a key below `keys` and the pair's place in the input, from `seed`.
    fn pairs(n: usize, keys: u64, seed: u64) -> Vec<(u64, usize)> {
        crate::sort::xorshift(n, seed)
            .enumerate()
            .map(|(i, draw)| (draw % keys, i))
            .collect()
    }

    /// Whether the pairs' places in the input are each there once.
    fn every_item_once(items: &[(u64, usize)]) -> bool {
        let mut seen: Vec<usize> = items.iter().map(|p| p.1).collect();
        seen.sort_unstable();
        seen.iter().enumerate().all(|(i, &s)| i == s)
    }

    /// `SAMPLES` keys from `make` of xorshift draws, xored with the first, as a split's
    /// sample is; and how many bits they vary in.
    fn sample(make: impl Fn(u64) -> u64) -> ([u64; SAMPLES], u32) {
        let mut draws = crate::sort::xorshift(SAMPLES, 0x2545_f491_4f6c_dd1d);
        let keys: [u64; SAMPLES] = std::array::from_fn(|_| make(draws.next().unwrap()));
        let sampled = keys.map(|k| k ^ keys[0]);
        let varying = sampled.iter().fold(0, |mask, k| mask | k).ilog2() + 1;
        (sampled, varying)
    }

    #[test]
    fn a_split_whose_sampled_keys_crowd_into_one_digit_takes_a_wider_one_if_its_bucket_would_not_fit_in_cache(
    ) {
        let bytes = |n: usize| n * size_of::<u64>();
        // Doubles in [0, 1): half of them share their exponent. A part of millions holds
        // some below 2^-15, so its keys vary from the exponent's fifth bit (bit 56) down,
        // and the top digit holds three bits of the fraction besides: eight digits hold a
        // sixteenth each.
        let unit = |draw: u64| ((draw >> 11) as f64 / (1u64 << 53) as f64).order_bits();
        let (doubles, sampled_varying) = sample(unit);
        let varying = 57;
        assert!(sampled_varying <= varying);
        // A sixteenth of 1e6 fits in cache; of 2.5e6, up to twice over (a bit); of 1e7,
        // five times (three bits); 1e9 would want more than the widest.
        assert_eq!(split_bits(&doubles, varying, bytes(1_000_000)), DIGIT_BITS);
        assert_eq!(
            split_bits(&doubles, varying, bytes(2_500_000)),
            DIGIT_BITS + 1
        );
        assert!(bytes(10_000_000) / 16 > 4 * IN_CACHE_BYTES);
        assert_eq!(
            split_bits(&doubles, varying, bytes(10_000_000)),
            DIGIT_BITS + 3
        );
        assert_eq!(
            split_bits(&doubles, varying, bytes(1 << 30)),
            WIDEST_SPLIT_BITS
        );
        // Uniform keys never crowd, whatever the part's size.
        let (uniform, varying) = sample(|draw| draw);
        assert_eq!(split_bits(&uniform, varying, bytes(1 << 30)), DIGIT_BITS);
        // One in ten of them zero: a crowd of one key, which no width spreads.
        let (zeros, varying) = sample(|draw| if draw % 10 == 0 { 0 } else { draw });
        let most_of_one = zeros
            .iter()
            .map(|k| zeros.iter().filter(|&x| x == k).count());
        assert!(most_of_one.max() >= Some(CROWDED_SAMPLES));
        assert_eq!(split_bits(&zeros, varying, bytes(1 << 30)), DIGIT_BITS);
        // Keys in 20 bits take least-significant-digit passes, their width their own.
        let (narrow, varying) = sample(|draw| draw >> 44);
        assert!(varying <= super::LSD_MOST_BITS);
        assert_eq!(split_bits(&narrow, varying, bytes(1 << 30)), DIGIT_BITS);
    }

    #[test]
    #[cfg(not(rayforce_loom))] // a pool of real threads
    fn doubles_in_the_unit_interval_split_by_a_digit_wider_than_a_byte_and_sort_like_std() {
        use super::sort_by_bits;
        use std::sync::atomic::Ordering;
        let mut doubles: Vec<f64> = crate::sort::xorshift(3_000_000, 0x9E37_79B9_7F4A_7C15)
            .map(|draw| (draw >> 11) as f64 / (1u64 << 53) as f64)
            .collect();
        let mut expected = doubles.clone();
        expected.sort_by(f64::total_cmp);
        let pool = crate::Pool::builder().workers(2).build().unwrap();
        pool.install(|| sort_by_bits(&mut doubles, &|x: &f64| x.order_bits()));
        // No other test here sorts keys that crowd a split's top byte.
        assert!(WIDEST_SPLIT.load(Ordering::Relaxed) > DIGIT_BITS);
        assert!(doubles
            .iter()
            .map(|x| x.to_bits())
            .eq(expected.iter().map(|x| x.to_bits())));
    }

    #[test]
    fn the_insertion_sort_is_stable_and_moves_items_as_far_as_they_go() {
        // Few keys: many equal ones (stability), and items that go many places down.
        for (n, keys) in [
            (1, 4),
            (2, 2),
            (3, 3),
            (100, 4),
            (1_000, 50),
            (1_000, 1 << 40),
        ] {
            let mut items = pairs(n, keys, 0x9E37_79B9_7F4A_7C15 ^ n as u64);
            let mut expected = items.clone();
            expected.sort_by_key(|p| p.0);
            // Items over `SWAP_BY_INDEX_BYTES` take the branch on their order.
            let mut wide: Vec<(u64, usize, [u64; 2])> =
                items.iter().map(|&(k, i)| (k, i, [k; 2])).collect();
            assert!(insertion_sort(&mut items, &|p| p.0, usize::MAX));
            assert_eq!(items, expected, "{n} items of {keys} keys");
            assert!(insertion_sort(&mut wide, &|p| p.0, usize::MAX));
            let wide: Vec<(u64, usize)> = wide.iter().map(|&(k, i, _)| (k, i)).collect();
            assert_eq!(wide, expected, "{n} wide items of {keys} keys");
        }
        for n in 1..6 {
            let mut reversed: Vec<(u64, usize)> =
                (0..n).map(|i| (n as u64 - i as u64, i)).collect();
            assert!(insertion_sort(&mut reversed, &|p| p.0, usize::MAX));
            assert!(
                reversed.iter().rev().enumerate().all(|(i, p)| p.1 == i),
                "{reversed:?}"
            );
        }
    }

    #[test]
    fn the_insertion_sort_over_its_budget_stops_with_every_item_once_and_equal_keys_in_order() {
        let mut items: Vec<(u64, usize)> =
            (0..1_000).map(|i| ((1_000 - i as u64) / 3, i)).collect();
        let budget = 4 * items.len();
        assert!(!insertion_sort(&mut items, &|p| p.0, budget));
        assert!(every_item_once(&items), "not a permutation");
        for keys in items.windows(2).filter(|w| w[0].0 == w[1].0) {
            assert!(
                keys[0].1 < keys[1].1,
                "equal keys out of their order: {keys:?}"
            );
        }
    }

    #[test]
    fn bytes_are_counted_alike_one_pass_for_up_to_three_and_one_a_pass_beyond() {
        let keys: Vec<u64> = pairs(5_000, u64::MAX, 7).iter().map(|p| p.0).collect();
        for taken in 1..=8 {
            let bytes: Vec<Byte> = (0..taken).map(|b| Byte { shift: 8 * b }).collect();
            let counts = count_bytes(&keys, &|&k| k, &bytes);
            assert_eq!(counts.len(), bytes.len());
            for (byte, counts) in bytes.iter().zip(&counts) {
                let mut expected = [0u32; 256];
                for &k in &keys {
                    expected[((k >> byte.shift) & 0xFF) as usize] += 1;
                }
                assert_eq!(
                    counts, &expected,
                    "{taken} bytes, the one from bit {}",
                    byte.shift
                );
            }
        }
    }

    #[test]
    fn a_key_function_panicking_in_the_insertion_sort_leaves_every_item_once() {
        for panic_at in [1, 2, 3, 10, 100, 500, 1_500] {
            let mut items = pairs(1_000, 1 << 20, 11);
            let calls = std::cell::Cell::new(0);
            let key = |p: &(u64, usize)| {
                calls.set(calls.get() + 1);
                assert!(calls.get() != panic_at, "the key function's planned panic");
                p.0
            };
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                insertion_sort(&mut items, &key, usize::MAX)
            }));
            assert!(unwound.is_err(), "no panic at call {panic_at}");
            assert!(
                every_item_once(&items),
                "not a permutation after a panic at call {panic_at}"
            );
        }
    }

    #[test]
    fn the_insertion_sort_budget_counts_the_places_beyond_the_first() {
        // The last item goes three places down: one swap, then two places beyond it.
        let input: Vec<(u64, usize)> = [1, 2, 3, 0].into_iter().zip(0..).collect();
        let mut enough = input.clone();
        assert!(insertion_sort(&mut enough, &|p| p.0, 2));
        assert_eq!(enough, [(0, 3), (1, 0), (2, 1), (3, 2)]);
        let mut short = input;
        assert!(!insertion_sort(&mut short, &|p| p.0, 1));
        // Items that each go one place down cost nothing.
        let mut pairs: Vec<(u64, usize)> = [1, 0, 3, 2, 5, 4].into_iter().zip(0..).collect();
        assert!(size_of::<(u64, usize)>() <= SWAP_BY_INDEX_BYTES);
        assert!(insertion_sort(&mut pairs, &|p| p.0, 0));
        assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0), "{pairs:?}");
    }

    #[test]
    fn a_bucket_whose_key_function_panics_in_its_pass_out_of_the_buffer_lands_every_item() {
        use super::{Bucket, Lent, Part};
        use crate::ops::region::Disjoint;
        use std::mem::MaybeUninit;
        use std::panic::{catch_unwind, AssertUnwindSafe};
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Random keys: the bucket is sorted by its two highest bytes, a pass each, the first
        // from the scratch into the buffer, the second from the buffer into the items.
        let n = 5000;
        let input = pairs(n, u64::MAX, 3);
        let mut items = vec![(0, usize::MAX); n];
        let mut scratch: Vec<MaybeUninit<(u64, usize)>> =
            input.iter().map(|&p| MaybeUninit::new(p)).collect();
        let mut buffer = vec![MaybeUninit::uninit(); n];
        let lent = Lent {
            items: Disjoint::new(&mut items),
            scratch: Disjoint::new(&mut scratch),
        };
        // Calls: a pass for the varying bits, one counting both bytes, one per byte.
        let calls = AtomicUsize::new(0);
        let key = |p: &(u64, usize)| {
            assert!(
                calls.fetch_add(1, Ordering::Relaxed) != 3 * n + n / 2,
                "key"
            );
            p.0
        };
        let part = Part {
            range: 0..n,
            in_scratch: true,
            landed: None,
        };
        let sorted = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the whole of both is lent to this bucket; its items are in the scratch.
            let mut bucket = unsafe { Bucket::new(&lent, part) }.with_buffer(&mut buffer);
            bucket.sort_in_cache(&key);
        }));
        assert!(
            sorted.is_err(),
            "the key function panicked in the second pass"
        );
        assert!(every_item_once(&items));
        // Without a panic, the items end sorted in place and the scratch is not written.
        let mut scratch: Vec<MaybeUninit<(u64, usize)>> =
            input.iter().map(|&p| MaybeUninit::new(p)).collect();
        let lent = Lent {
            items: Disjoint::new(&mut items),
            scratch: Disjoint::new(&mut scratch),
        };
        let part = Part {
            range: 0..n,
            in_scratch: true,
            landed: None,
        };
        // SAFETY: as above.
        let mut bucket = unsafe { Bucket::new(&lent, part) }.with_buffer(&mut buffer);
        bucket.sort_in_cache(&|p: &(u64, usize)| p.0);
        drop(bucket);
        let mut expected = input.clone();
        expected.sort_by_key(|p| p.0);
        assert_eq!(items, expected);
        // SAFETY: every slot was written from `input`, and only read since.
        let scratch: Vec<(u64, usize)> =
            scratch.iter().map(|p| unsafe { p.assume_init() }).collect();
        assert_eq!(scratch, input, "the passes went through the buffer");
    }
}
