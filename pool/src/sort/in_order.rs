//! Whether a slice is in order already: one pass, shared among the threads where it is
//! long enough to pay for that, so a sort handed sorted input returns at a fraction of a
//! serial pass's cost.

use crate::iter::{IndexedParallelIterator, ParallelIterator};
use crate::slice::ChunksMut;
use crate::sync;

/// Items the first look checks on the caller, before any region: input out of order
/// almost always shows it there, at no region's cost.
const FIRST_LOOK: usize = 64;
/// Pairs the caller checks next, timed, to tell what the rest would cost it alone.
const TIMED_PAIRS: usize = 1 << 12;
/// The rest is shared among the threads if the caller alone would take longer than this
/// on it: about twice what waking a sleeping helper for it costs here (20-30 us), so a
/// shared check ends sooner even then. 1e5 sorted `u32`s (16 us) stay on the caller,
/// `f64`s by `total_cmp` (80 us) are shared.
const SHARED_FROM_NS: u64 = 50_000;

/// Whether `in_order(a, b)` holds for every two neighbouring items of `items`: the first
/// [`FIRST_LOOK`] on the caller; up to twice [`TIMED_PAIRS`] items, the rest on the caller
/// too; else [`TIMED_PAIRS`] more, timed, then the rest on the caller if it would take it
/// less than [`SHARED_FROM_NS`] at that pace, else one chunk per thread in parallel (each
/// stops after its first run with a pair out of order) and the pairs across chunks.
pub(crate) fn holds<T: Send>(items: &mut [T], in_order: &(impl Fn(&T, &T) -> bool + Sync)) -> bool {
    let n = items.len();
    if !items[..n.min(FIRST_LOOK)].is_sorted_by(in_order) {
        return false;
    }
    // The last item looked at: the pairs after it are left.
    let looked = n.min(FIRST_LOOK).saturating_sub(1);
    if n <= 2 * TIMED_PAIRS {
        return each_in_order(&items[looked..], in_order);
    }
    let timed = looked + TIMED_PAIRS;
    let start = sync::now_ns();
    if !each_in_order(&items[looked..=timed], in_order) {
        return false;
    }
    let took_ns = sync::now_ns().saturating_sub(start);
    let rest = &mut items[timed..];
    let n = rest.len();
    if !worth_sharing(took_ns, n) {
        return each_in_order(rest, in_order);
    }
    let chunk = n.div_ceil(crate::current_num_threads()).max(1);
    ChunksMut::new(&mut *rest, chunk)
        .with_max_len(1)
        .all(|chunk| each_in_order(chunk, in_order))
        && (chunk..n)
            .step_by(chunk)
            .all(|i| in_order(&rest[i - 1], &rest[i]))
}

/// Whether the caller, having checked [`TIMED_PAIRS`] pairs in `took_ns`, would take
/// [`SHARED_FROM_NS`] or longer on `rest` more.
fn worth_sharing(took_ns: u64, rest: usize) -> bool {
    took_ns.saturating_mul(rest as u64) / TIMED_PAIRS as u64 >= SHARED_FROM_NS
}

/// Pairs [`each_in_order`] checks between two looks at the answer.
const RUN: usize = 64;

/// Whether `in_order` holds for every two neighbouring items of `items`: the pairs in
/// order counted by runs of [`RUN`], without a branch on each pair, so that a check of
/// plain keys vectorizes, ending after the first run with a pair out of order. On 1e5
/// sorted items by `Ord::cmp`, against `slice::is_sorted_by` (which stops at each pair):
/// `u32` 15.7 us against 29, `u64` 24 against 42, `(u64, u64)` by key 27 against 33 (a
/// `bool` folded by `&` instead: `u64` 31 us; counted in `usize`: `u32` 31 us).
fn each_in_order<T>(items: &[T], in_order: &impl Fn(&T, &T) -> bool) -> bool {
    let pairs = items.len().saturating_sub(1);
    (0..pairs).step_by(RUN).all(|start| {
        let end = (start + RUN).min(pairs);
        let ordered = items[start..=end]
            .windows(2)
            .map(|pair| u32::from(in_order(&pair[0], &pair[1])))
            .sum::<u32>();
        ordered as usize == end - start
    })
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::{self, ThreadId};
    use std::time::{Duration, Instant};

    /// What `holds` answers for `items` whose every comparison takes `each`, on a pool of
    /// two, and the threads that ran it.
    fn threads_checking(mut items: Vec<u32>, each: Duration) -> (bool, HashSet<ThreadId>) {
        let pool = crate::Pool::builder().workers(2).build().unwrap();
        let seen = Mutex::new(HashSet::new());
        let in_order = |a: &u32, b: &u32| {
            let start = Instant::now();
            while start.elapsed() < each {
                std::hint::spin_loop();
            }
            seen.lock().unwrap().insert(thread::current().id());
            a <= b
        };
        let answer = pool.install(|| holds(&mut items, &in_order));
        (answer, seen.into_inner().unwrap())
    }

    #[test]
    fn a_check_the_caller_would_take_long_on_is_shared() {
        // 20,000 comparisons of 5 us: 100 ms alone, far over `SHARED_FROM_NS`; the helper
        // wakes and takes the second chunk long before the caller ends the first.
        let sorted: Vec<u32> = (0..20_000).collect();
        let (answer, threads) = threads_checking(sorted, Duration::from_micros(5));
        assert!(answer);
        assert_eq!(threads.len(), 2);
    }

    #[test]
    fn a_shared_check_finds_the_pair_across_its_chunks_out_of_order() {
        // As above, with the two items across the chunks' boundary swapped: each chunk is
        // in order, the pair across them is not.
        let len = 20_000;
        let timed = FIRST_LOOK - 1 + TIMED_PAIRS;
        let across = timed + (len - timed).div_ceil(2);
        let mut items: Vec<u32> = (0..len as u32).collect();
        items.swap(across - 1, across);
        let (answer, threads) = threads_checking(items, Duration::from_micros(5));
        assert!(!answer);
        assert_eq!(threads.len(), 2, "the check was shared");
    }

    #[test]
    fn the_rest_is_shared_from_what_it_would_cost_the_caller() {
        // 1e5 sorted `u32`s by `Ord::cmp`: about 0.16 ns a pair.
        assert!(!worth_sharing(650, 100_000 - TIMED_PAIRS));
        // `f64`s by `total_cmp`: about 0.8 ns a pair.
        assert!(worth_sharing(3_300, 100_000 - TIMED_PAIRS));
        // Ten times the timed pairs left, at a tenth of the bound or just under.
        let tenth = SHARED_FROM_NS / 10;
        assert!(worth_sharing(tenth, 10 * TIMED_PAIRS));
        assert!(!worth_sharing(tenth - 1, 10 * TIMED_PAIRS));
        assert!(worth_sharing(u64::MAX, usize::MAX), "no overflow");
    }

    #[test]
    fn holds_finds_a_pair_out_of_order_at_each_boundary_of_its_parts() {
        let timed = FIRST_LOOK - 1 + TIMED_PAIRS;
        for len in [
            FIRST_LOOK + 1,
            2 * TIMED_PAIRS,
            2 * TIMED_PAIRS + 1,
            5 * TIMED_PAIRS,
        ] {
            let sorted: Vec<u32> = (0..len as u32).collect();
            assert!(holds(&mut sorted.clone(), &|a, b| a <= b), "{len} in order");
            let firsts = [1, FIRST_LOOK - 1, FIRST_LOOK, FIRST_LOOK + 1];
            for i in firsts
                .into_iter()
                .chain([timed, timed + 1, timed + 2, len - 1])
            {
                if i >= len {
                    continue;
                }
                let mut items = sorted.clone();
                items.swap(i - 1, i);
                assert!(
                    !holds(&mut items, &|a, b| a <= b),
                    "{len}, pair {i} swapped"
                );
            }
        }
    }

    #[test]
    fn each_in_order_finds_the_one_pair_out_of_order_anywhere() {
        let in_order = |a: &u32, b: &u32| a <= b;
        for len in [0, 1, 2, RUN, RUN + 1, RUN + 2, 3 * RUN + 5] {
            let sorted: Vec<u32> = (0..len as u32).collect();
            assert!(each_in_order(&sorted, &in_order), "{len} in order");
            for i in 1..len {
                let mut items = sorted.clone();
                items.swap(i - 1, i);
                assert!(!each_in_order(&items, &in_order), "{len}, pair {i} swapped");
            }
        }
    }
}
