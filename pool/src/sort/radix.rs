//! The radix sort (`par_radix_sort`, `par_radix_sort_by_key`): stable, by the key's bits.
//!
//! One most-significant-digit pass splits the items into 256 buckets by the highest 8 bits
//! that vary (a count per block, an exclusive scan of the counts into each block's write
//! offsets, a scatter into a scratch buffer: blocks run in parallel, each keeping its
//! items' order, so the pass is stable); each bucket then goes back to the slice sorted by
//! its lower bits: one that fits in cache by least-significant-digit passes on one thread
//! (digits that do not vary in it skipped; where many vary, only the highest, then an
//! insertion sort), a larger one by this same split again (in parallel when it holds more
//! than its share of the work). Items move bitwise; the key
//! function may panic at any call and every item is still in the slice exactly once.

use super::radix_key::sealed::Bits;
use super::radix_key::{BUCKETS, DIGIT_BITS};
use crate::iter::{ChunksMut, IndexedParallelIterator, IntoParallelRefIterator, ParallelIterator};
use crate::ops::region::Disjoint;
use std::mem::{size_of, MaybeUninit};
use std::ops::Range;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The count of each digit in one block.
type Counts = [usize; BUCKETS];

/// Sorts `items` by `key`, stable, on the current pool.
pub(crate) fn sort_by_bits<T: Send, B: Bits>(items: &mut [T], key: &(impl Fn(&T) -> B + Sync)) {
    let n = items.len();
    if n < 2 || size_of::<T>() == 0 {
        return;
    }
    let mut scratch: Vec<T> = Vec::with_capacity(n);
    let lent = Lent {
        items: Disjoint::new(items),
        scratch: Disjoint::new(&mut scratch.spare_capacity_mut()[..n]),
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
    if n.saturating_mul(size_of::<T>()) <= IN_CACHE_BYTES {
        // SAFETY: the part is this call's alone, its items where it says (contract).
        let mut bucket = unsafe { Bucket::new(lent, part) };
        bucket.sort_in_cache(key);
        return;
    }
    // SAFETY: the part's range is this call's alone, and its items are on that side.
    let (here, there) = unsafe { sides(lent, &part) };
    let blocks = (width * BLOCKS_PER_THREAD).min(n / MIN_BLOCK).max(1);
    let block_len = n.div_ceil(blocks);
    let first = key(&here[0]);
    let guess = hint.saturating_sub(DIGIT_BITS);
    let tallies: Vec<Tally<B>> = ChunksMut::new(here, block_len)
        .with_max_len(1)
        .map(|block| count(block, key, first, guess))
        .collect();
    let varying = tallies.iter().fold(B::ZERO, |mask, t| mask.or(t.varying));
    let in_order = tallies.iter().all(|t| t.ordered)
        && tallies
            .windows(2)
            .all(|pair| pair[0].ends.1 <= pair[1].ends.0);
    let top = varying.highest_bit().filter(|_| !in_order);
    let Some(top) = top else {
        // Every key equal, or the keys in order already.
        // SAFETY: the part's alone, its items where it says.
        drop(unsafe { Bucket::new(lent, part) });
        return;
    };
    assert!(
        top < hint,
        "par_radix_sort: the key function gave an item another key than before \
         (expected the same key at every call)"
    );
    let shift = (top + 1).saturating_sub(DIGIT_BITS);
    let counts: Vec<Counts> = if shift == guess {
        tallies.into_iter().map(|t| t.counts).collect()
    } else {
        ChunksMut::new(here, block_len)
            .with_max_len(1)
            .map(|block| count(block, key, first, shift).counts)
            .collect()
    };
    let (offsets, starts) = scan_counts(&counts);
    let to = Disjoint::new(&mut *there);
    ChunksMut::new(here, block_len)
        .with_max_len(1)
        .enumerate()
        .for_each(|(b, block)| {
            let mut at = offsets[b];
            let end = std::array::from_fn(|d| at[d] + counts[b][d]);
            // SAFETY: block `b`'s items of digit `d` go to `at[d]..end[d]` of the other
            // side, a range no other block writes (`scan_counts`).
            unsafe { scatter(block, to.as_mut_ptr().cast(), &mut at, &end, key, shift) }
        });
    // Every item is on the other side now, in buckets at these bounds in the lent slices.
    let starts: Vec<usize> = starts.iter().map(|s| part.range.start + s).collect();
    let buckets_in_scratch = !part.in_scratch;
    if let Some(landed) = part.landed {
        // Read by the parent split, on this thread or after the region this runs in.
        landed.store(true, Ordering::Relaxed);
    }
    let landed: Vec<AtomicBool> = (0..BUCKETS).map(|_| AtomicBool::new(false)).collect();
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
    let mut rest = Vec::with_capacity(BUCKETS);
    for d in 0..BUCKETS {
        let len = starts[d + 1] - starts[d];
        if width > 1 && len > share && len >= MIN_BLOCK {
            // SAFETY: bucket `d` is this call's alone, now and in the recursion.
            unsafe { split(lent, bucket(d), key, shift, width) };
        } else {
            rest.push(d);
        }
    }
    rest.sort_unstable_by_key(|&d| std::cmp::Reverse(starts[d + 1] - starts[d]));
    rest.par_iter().with_max_len(1).for_each(|&d| {
        // SAFETY: bucket `d` is claimed by this task alone.
        unsafe { split(lent, bucket(d), key, shift, 1) };
    });
    drop(restore);
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
    /// How many items have each digit at the pass's shift.
    counts: Counts,
    /// Whether the keys never decrease along the block, and its first and last key.
    ordered: bool,
    ends: (B, B),
}

/// One pass over `block`: its [`Tally`] at `shift`, against the part's `first` key. Four
/// counts, summed at the end: runs of one digit (skewed keys) would otherwise make each
/// increment wait for the one before.
fn count<T, B: Bits>(block: &mut [T], key: &impl Fn(&T) -> B, first: B, shift: u32) -> Tally<B> {
    let mut varying = B::ZERO;
    let mut tallies = [[0; BUCKETS]; 4];
    let ends = (key(&block[0]), key(&block[block.len() - 1]));
    let mut previous = ends.0;
    let mut ordered = true;
    let mut quads = block.chunks_exact(4);
    for quad in &mut quads {
        let keys = [key(&quad[0]), key(&quad[1]), key(&quad[2]), key(&quad[3])];
        for (tally, &k) in tallies.iter_mut().zip(&keys) {
            varying = varying.or(k.xor(first));
            tally[k.digit(shift)] += 1;
        }
        ordered &= previous <= keys[0] && keys[0] <= keys[1] && keys[1] <= keys[2];
        ordered &= keys[2] <= keys[3];
        previous = keys[3];
    }
    for item in quads.remainder() {
        let k = key(item);
        varying = varying.or(k.xor(first));
        ordered &= previous <= k;
        previous = k;
        tallies[0][k.digit(shift)] += 1;
    }
    Tally {
        varying,
        counts: std::array::from_fn(|d| tallies.iter().map(|tally| tally[d]).sum()),
        ordered,
        ends,
    }
}

/// Each block's write offsets (digit-major: every block's items of digit 0, in block
/// order, then digit 1, ...: an exclusive scan of the counts), and the buckets' bounds.
/// A few thousand additions: below what a region costs, so on this thread.
fn scan_counts(counts: &[Counts]) -> (Vec<Counts>, Vec<usize>) {
    let mut offsets: Vec<Counts> = vec![[0; BUCKETS]; counts.len()];
    let mut starts = Vec::with_capacity(BUCKETS + 1);
    let mut sum = 0;
    for d in 0..BUCKETS {
        starts.push(sum);
        for (at, counts) in offsets.iter_mut().zip(counts) {
            at[d] = sum;
            sum += counts[d];
        }
    }
    starts.push(sum);
    (offsets, starts)
}

/// Copies each of `items` (bitwise) to `to + at[digit]`, advancing `at[digit]`.
///
/// # Panics
/// If a digit has more items than `end` leaves room for: `key` gave an item another key
/// than when it was counted. Every item is still where it was.
///
/// # Safety
/// For each digit `d`, `to + at[d]..to + end[d]` is valid for writes, and nobody else
/// reads or writes there meanwhile.
#[inline]
unsafe fn scatter<T, B: Bits>(
    items: &[T],
    to: *mut T,
    at: &mut Counts,
    end: &Counts,
    key: &impl Fn(&T) -> B,
    shift: u32,
) {
    for item in items {
        let digit = key(item).digit(shift);
        let slot = &mut at[digit];
        assert!(
            *slot < end[digit],
            "par_radix_sort: the key function gave an item another key than before \
             (expected the same key at every call)"
        );
        // SAFETY: below `end[digit]` (checked), in the range this digit may write (this
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

/// A bucket being sorted in cache: its items in the items or in the scratch. Dropped, on
/// return or unwinding, it moves them to the items and marks them landed.
struct Bucket<'a, T> {
    items: *mut T,
    scratch: *mut T,
    len: usize,
    in_scratch: bool,
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
            landed: part.landed,
        }
    }

    /// Where the items are, and where they go next.
    fn here_and_there(&self) -> (*mut T, *mut T) {
        if self.in_scratch {
            (self.scratch, self.items)
        } else {
            (self.items, self.scratch)
        }
    }

    /// Moves the items to the items, if in the scratch.
    fn move_to_items(&mut self) {
        if self.in_scratch {
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
        let mut counts = vec![[0u32; BUCKETS]; digits.len()];
        for item in items {
            let k = key(item);
            for (&shift, counts) in digits.iter().zip(&mut counts) {
                counts[k.digit(shift)] += 1;
            }
        }
        for (&shift, counts) in digits.iter().zip(&counts).rev() {
            let mut at = [0; BUCKETS];
            let mut end = [0; BUCKETS];
            let mut sum = 0;
            for ((at, end), &count) in at.iter_mut().zip(&mut end).zip(counts) {
                *at = sum;
                sum += count as usize;
                *end = sum;
            }
            let (here, there) = self.here_and_there();
            // SAFETY: `len` items at `here`; `there` is the bucket's other `len` slots,
            // the digits' ranges in it disjoint (`at..end`, an exclusive scan).
            unsafe {
                scatter(
                    std::slice::from_raw_parts(here, self.len),
                    there,
                    &mut at,
                    &end,
                    key,
                    shift,
                )
            };
            self.in_scratch = !self.in_scratch;
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

/// Moves an insertion sort may make per item before a bucket is handed to `std`'s sort.
const INSERTION_MOVES: usize = 4;

/// The shifts of the digits to sort a bucket of `len` items by, highest first, and whether
/// they are all that vary: every varying digit if there are at most [`EXACT_DIGITS`];
/// else the varying digits from the top, until they hold at least `log2(len)` varying
/// bits.
fn digits_to_sort<B: Bits>(varying: B, len: usize) -> (Vec<u32>, bool) {
    let all: Vec<u32> = (0..B::BITS.div_ceil(DIGIT_BITS))
        .rev()
        .map(|d| d * DIGIT_BITS)
        .filter(|&shift| varying.digit(shift) != 0)
        .collect();
    if all.len() <= EXACT_DIGITS {
        return (all, true);
    }
    let wanted = len.next_power_of_two().trailing_zeros();
    let mut bits = 0;
    let taken = all
        .iter()
        .take_while(|&&shift| {
            let enough = bits >= wanted;
            bits += varying.digit(shift).count_ones();
            !enough
        })
        .count();
    (all[..taken].to_vec(), taken == all.len())
}

/// Up to this many varying digits, a bucket is sorted by a pass over each: an insertion
/// sort after fewer passes pays off only when it saves several, and keys with few varying
/// bits (a skewed spread) leave it much to do.
const EXACT_DIGITS: usize = 3;

/// Sorts `items` by `key`, stable, by insertion, unless that takes more than `budget`
/// moves: then returns `false`, the items a permutation of what they were, equal keys
/// still in their order.
fn insertion_sort<T, B: Bits>(items: &mut [T], key: &impl Fn(&T) -> B, budget: usize) -> bool {
    let mut moves = 0;
    for i in 1..items.len() {
        let k = key(&items[i]);
        let mut j = i;
        while j > 0 && key(&items[j - 1]) > k {
            j -= 1;
        }
        if j < i {
            moves += i - j;
            if moves > budget {
                return false;
            }
            let base = items.as_mut_ptr();
            // SAFETY: `j < i < len`: item `i` is read out, items `j..i` move up one (an
            // overlapping copy within the slice), and item `i` is written at `j`; nothing
            // between can panic, so every item is in the slice once after.
            unsafe {
                let moving = ptr::read(base.add(i));
                ptr::copy(base.add(j), base.add(j + 1), i - j);
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
