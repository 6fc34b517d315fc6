//! Prefix sums, blocked, in one region. Participants claim runs of consecutive blocks (the
//! pool's chunks). A block whose predecessor has published its prefix (the block before
//! it in the same run, mostly) is scanned from there in one pass; any other block is
//! totalled first (a pass over its items), publishes the total, finds what the blocks
//! before it add up to from what they published (`look_back.rs`), then is scanned from
//! there while its items are still in cache. The result is the serial scan's whenever `op`
//! is associative (bit for bit for integers); the blocks only change the grouping of
//! floating-point sums.

use super::look_back::Blocks;
use super::pipeline::{self, OnFork};
use super::region::{span, Disjoint, Runs};
use crate::region::Claims;
use std::ops::Range;

/// A block's size in bytes: its items stay in a core's L1 cache between the two passes.
const BLOCK_BYTES: usize = 32 * 1024;

/// The fewest items a block has, whatever their size.
const MIN_BLOCK: usize = 1024;

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
    /// `identity`), for an associative `op` of which `identity` is the identity. It must
    /// be one: each block starts from it, so a starting offset passed as `identity` would
    /// be added once per block, as many times as the blocks' timing makes (add it after).
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
    let block_len = (BLOCK_BYTES / size_of::<T>().max(1)).max(MIN_BLOCK);
    scan_in_blocks(runs, input, output, identity, op, block_len);
}

/// `scan` in blocks of `block_len` items (the loom model's blocks are a few items).
pub(crate) fn scan_in_blocks<R, T, F>(
    runs: &R,
    input: &[T],
    output: &mut [T],
    identity: Option<T>,
    op: &F,
    block_len: usize,
) where
    R: Runs + ?Sized,
    T: Clone + Send + Sync,
    F: Fn(&T, &T) -> T + Sync,
{
    let n = input.len();
    let kind = identity_kind(&identity);
    let blocks = n.div_ceil(block_len);
    // Where a block's scan starts when nothing comes before it: the identity, or (an
    // inclusive scan) its first item.
    let start = || identity.clone();
    if blocks <= 1 {
        return scan_block(input, output, start(), op, kind);
    }
    let block = |b: usize| span(b * block_len, block_len, n);
    let total_of = |b: usize| {
        let items = &input[block(b)];
        items[1..]
            .iter()
            .fold(items[0].clone(), |acc, x| op(&acc, x))
    };
    let published = Blocks::new(blocks);
    let outputs = Disjoint::new(output);
    let scan_blocks = |(): &mut (), range: Range<usize>| {
        for b in range {
            // SAFETY: blocks of distinct indices are disjoint.
            let out = unsafe { outputs.range(block(b)) };
            let items = &input[block(b)];
            let known = match b {
                0 => Some(None),
                _ => published.prefix_through(b - 1).map(Some),
            };
            if let Some(before) = known {
                // What comes before is known: one pass.
                let carry = carry_from(start(), before, op);
                scan_block(items, out, carry, op, kind);
                published.publish_prefix(b, sum_through_last(items, out, op, kind));
                continue;
            }
            // Total the block, publish the total, find what comes before it, then scan
            // the block from there (its items still in cache).
            let total = total_of(b);
            published.publish_total(b, total.clone());
            let before = published
                .prefix_before(b, op, total_of)
                .expect("a block after the first has blocks before it");
            published.publish_prefix(b, op(&before, &total));
            scan_block(items, out, carry_from(start(), Some(before), op), op, kind);
        }
    };
    // In a forked child this aborts before anything the blocks published is dropped.
    pipeline::run(
        runs,
        blocks,
        (Claims::InOrder(None), None),
        &|| (),
        scan_blocks,
        OnFork::Abort("scan"),
        |_| (),
    );
}

/// Where a block's scan starts: `start` (the identity, or none) after what the blocks
/// before it add up to.
fn carry_from<T, F: Fn(&T, &T) -> T>(start: Option<T>, before: Option<T>, op: &F) -> Option<T> {
    match (start, before) {
        (Some(start), Some(before)) => Some(op(&start, &before)),
        (start, None) => start,
        (None, before) => before,
    }
}

/// What the items add up to through a block's last, from its scan's output (its last,
/// and for an exclusive scan the last item after it). The block is not empty.
fn sum_through_last<T: Clone, F: Fn(&T, &T) -> T>(items: &[T], out: &[T], op: &F, kind: Kind) -> T {
    let last = out.last().expect("a block is not empty").clone();
    match kind {
        Kind::Inclusive => last,
        Kind::Exclusive => op(&last, items.last().expect("as above")),
    }
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
