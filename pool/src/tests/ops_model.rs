//! The operations' own synchronisation: state kept per participant (each participant alone
//! on its cell, made at most once, every state combined), early exit (once a participant
//! has seen the stop flag, none claims another range) and a scan's look-back (a block's
//! published total or prefix read only once written). The rest is the pool's.

use super::pool;
use crate::ops::ParallelFold;
use crate::sync::{AtomicBool, AtomicUsize, Ordering};
use crate::tasks::Participant;

#[test]
fn each_participant_folds_into_its_own_state_made_once() {
    crate::sync::model(|| {
        let pool = pool();
        let inits = AtomicUsize::new(0);
        let sum = pool.fold(
            3,
            || {
                inits.fetch_add(1, Ordering::Relaxed);
                0usize
            },
            |state, i| *state += i + 1,
            |a, b| a + b,
        );
        assert_eq!(sum, 6, "every index folded once, every state combined");
        let inits = inits.load(Ordering::Relaxed);
        assert!(
            (1..=2).contains(&inits),
            "{inits} states for two participants"
        );
    });
}

#[test]
fn no_range_is_claimed_after_the_stop_flag_was_seen() {
    crate::sync::model(|| {
        let pool = pool();
        let stop = AtomicBool::new(false);
        let late = AtomicUsize::new(0);
        // Task 0 (the caller's) sets the flag; task 1 (the helper's, or the caller's if no
        // helper came) sees it before returning; tasks 2 and 3 must then never run.
        let outcome = pool.run_chunks(
            4,
            false,
            (usize::MAX, usize::MAX),
            Some(&stop),
            &|_: Participant, range| {
                for task in range {
                    match task {
                        0 => stop.store(true, Ordering::Release),
                        1 => {
                            while !stop.load(Ordering::Acquire) {
                                loom::thread::yield_now();
                            }
                        }
                        _ => {
                            late.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            },
        );
        assert!(outcome.is_ok(), "no fork under loom");
        assert_eq!(late.load(Ordering::Relaxed), 0, "claimed after the stop");
    });
}

#[test]
fn a_scan_finds_each_block_prefix_from_what_the_blocks_before_it_published() {
    crate::sync::model(|| {
        let pool = pool();
        // Three blocks of one item: block 1 and 2 look back over what blocks 0 and 1
        // published (or compute it themselves), whichever participant ran them.
        let input = [1u64, 2, 4];
        let mut output = [0u64; 3];
        crate::ops::scan::scan_in_blocks(&pool, &input, &mut output, None, &|a, b| a + b, 1);
        assert_eq!(output, [1, 3, 7]);
    });
}
