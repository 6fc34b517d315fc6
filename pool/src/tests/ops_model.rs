//! The operations' own synchronisation: claims from homes (every task run once, whoever
//! came), state kept per participant (each participant alone on its cell, made at most
//! once, every state combined), early exit (once a participant has seen the stop flag, none
//! claims another range, in order or from homes) and a scan's look-back (a block's published total or prefix read
//! only once written). The rest is the pool's.

use super::pool;
use crate::ops::ParallelFold;
use crate::region::Claims;
use crate::sync::{AtomicBool, AtomicUsize, Ordering};
use crate::tasks::Participant;

#[test]
fn claims_from_homes_run_every_task_once() {
    crate::sync::model(|| {
        let pool = pool();
        // Seven tasks on two participants: homes 0..4 and 4..7, the first task of each
        // handed out, the rest claimed by its owner first, then by the other participant,
        // or all by the caller if no helper came.
        let runs: [AtomicUsize; 7] = std::array::from_fn(|_| AtomicUsize::new(0));
        let outcome = pool.run_chunks(
            7,
            false,
            (usize::MAX, usize::MAX),
            (Claims::FromHomes(None), None),
            &|_: Participant, range| {
                for task in range {
                    runs[task].fetch_add(1, Ordering::Relaxed);
                }
            },
        );
        assert!(outcome.is_ok(), "no fork under loom");
        let runs = runs.map(|r| r.load(Ordering::Relaxed));
        assert_eq!(runs, [1; 7], "each task once");
    });
}

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
            (Claims::InOrder(Some(&stop)), None),
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
fn no_range_is_claimed_from_homes_after_the_stop_flag_was_seen() {
    crate::sync::model(|| {
        let pool = pool();
        let stop = AtomicBool::new(false);
        let late = AtomicUsize::new(0);
        // Homes 0..4 and 4..7 (an iterator whose source ended: `while_some`'s flag). Task 0
        // (the caller's first) sets the flag; task 4 (the helper's first, if it came
        // before the caller found the flag) sees it before returning; no participant may
        // then claim another task.
        let outcome = pool.run_chunks(
            7,
            false,
            (usize::MAX, usize::MAX),
            (Claims::FromHomes(Some(&stop)), None),
            &|_: Participant, range| {
                for task in range {
                    match task {
                        0 => stop.store(true, Ordering::Release),
                        4 => {
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
