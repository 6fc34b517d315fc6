//! Prefix sums, blocked in two passes: each block's total in parallel, the totals' prefix
//! on the caller (a handful of values), then each block's scan from its offset in parallel.
//! The result is the serial scan's whenever `op` is associative (bit for bit for integers);
//! the blocks only change the grouping of floating-point sums.

use super::region::{complete, Disjoint, Runs};

/// The fewest items a block has: smaller inputs scan on the caller alone.
const MIN_BLOCK: usize = 4096;

/// Blocks per participant of a region: a few, so that a participant slowed down by the
/// machine hands its share to the others.
const BLOCKS_PER_PARTICIPANT: usize = 4;

/// Prefix sums: `scan_inclusive`, `scan_exclusive`. Run on a [`Pool`](crate::Pool) or on
/// [`pool.wide()`](crate::Pool::wide).
pub trait ParallelScan: Runs {
    /// `output[i] = input[0] op input[1] op ... op input[i]`, for an associative `op`.
    ///
    /// # Panics
    /// If `input` and `output` differ in length.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let input: Vec<u64> = (1..=100_000).collect();
    /// let mut output = vec![0; input.len()];
    /// pool.scan_inclusive(&input, &mut output, |a, b| a + b);
    /// assert_eq!(output[99_999], 100_000 * 100_001 / 2);
    /// ```
    fn scan_inclusive<T, F>(&self, input: &[T], output: &mut [T], op: F)
    where
        T: Clone + Send + Sync,
        F: Fn(&T, &T) -> T + Sync,
    {
        scan(self, input, output, None, &op);
    }

    /// `output[i] = identity op input[0] op ... op input[i - 1]` (so `output[0]` is
    /// `identity`), for an associative `op` of which `identity` is the identity.
    ///
    /// # Panics
    /// If `input` and `output` differ in length.
    ///
    /// Offsets of variable-sized parts, as radix partitioning and compaction use them:
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let sizes = [3u32, 0, 5, 2];
    /// let mut offsets = [0; 4];
    /// pool.scan_exclusive(&sizes, &mut offsets, 0, |a, b| a + b);
    /// assert_eq!(offsets, [0, 3, 3, 8]);
    /// ```
    fn scan_exclusive<T, F>(&self, input: &[T], output: &mut [T], identity: T, op: F)
    where
        T: Clone + Send + Sync,
        F: Fn(&T, &T) -> T + Sync,
    {
        scan(self, input, output, Some(identity), &op);
    }
}

impl<R: Runs + ?Sized> ParallelScan for R {}

/// The scan of `input` into `output`: inclusive without `identity`, exclusive with it.
fn scan<R, T, F>(runs: &R, input: &[T], output: &mut [T], identity: Option<T>, op: &F)
where
    R: Runs + ?Sized,
    T: Clone + Send + Sync,
    F: Fn(&T, &T) -> T + Sync,
{
    assert_eq!(
        input.len(),
        output.len(),
        "scan: an input of {} items and an output of {} (expected the same length)",
        input.len(),
        output.len()
    );
    let n = input.len();
    let kind = identity_kind(&identity);
    let blocks = (BLOCKS_PER_PARTICIPANT * runs.region_width())
        .min(n / MIN_BLOCK)
        .max(1);
    if blocks == 1 {
        return scan_block(input, output, identity, op, kind);
    }
    let block = |b: usize| n * b / blocks..n * (b + 1) / blocks;
    // Pass one: every block's total but the last's (nothing follows it).
    let mut totals: Vec<Option<T>> = vec![None; blocks - 1];
    let slots = Disjoint::new(&mut totals);
    let ran = runs.run_region(blocks - 1, usize::MAX, None, &|_, range| {
        // SAFETY: claimed ranges are disjoint.
        let part = unsafe { slots.range(range.clone()) };
        for (b, total) in range.zip(part) {
            let items = &input[block(b)];
            let first = items[0].clone();
            *total = Some(items[1..].iter().fold(first, |acc, x| op(&acc, x)));
        }
    });
    complete(ran);
    // On the caller: each block's carry, the totals of the blocks before it.
    let mut carries = Vec::with_capacity(blocks);
    carries.push(identity);
    for total in totals {
        let total = total.expect("pass one totals every block but the last");
        let next = match carries.last().expect("the first carry") {
            Some(carry) => op(carry, &total),
            None => total,
        };
        carries.push(Some(next));
    }
    // Pass two: each block from its carry.
    let outputs = Disjoint::new(output);
    let ran = runs.run_region(blocks, usize::MAX, None, &|_, range| {
        for b in range {
            // SAFETY: blocks of distinct indices are disjoint.
            let out = unsafe { outputs.range(block(b)) };
            scan_block(&input[block(b)], out, carries[b].clone(), op, kind);
        }
    });
    complete(ran);
}

/// Whether a scan is exclusive (it has an identity) or inclusive.
#[derive(Clone, Copy)]
enum Kind {
    Inclusive,
    Exclusive,
}

fn identity_kind<T>(identity: &Option<T>) -> Kind {
    match identity {
        Some(_) => Kind::Exclusive,
        None => Kind::Inclusive,
    }
}

/// The serial scan of one block from `carry` (what the blocks before it add up to; `None`
/// for an inclusive scan's first block, never for an exclusive scan).
fn scan_block<T: Clone, F: Fn(&T, &T) -> T>(
    input: &[T],
    output: &mut [T],
    carry: Option<T>,
    op: &F,
    kind: Kind,
) {
    match kind {
        Kind::Inclusive => {
            let Some((first, rest)) = input.split_first() else {
                return;
            };
            let mut acc = match carry {
                Some(carry) => op(&carry, first),
                None => first.clone(),
            };
            output[0] = acc.clone();
            for (x, out) in rest.iter().zip(&mut output[1..]) {
                acc = op(&acc, x);
                *out = acc.clone();
            }
        }
        Kind::Exclusive => {
            let mut acc = carry.expect("an exclusive scan carries its identity");
            for (x, out) in input.iter().zip(output) {
                let next = op(&acc, x);
                *out = std::mem::replace(&mut acc, next);
            }
        }
    }
}
