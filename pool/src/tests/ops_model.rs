//! The operations' own synchronisation: claims from homes (every task run once, whoever
//! came), state kept per participant (each participant alone on its cell, made at most
//! once, every state combined), early exit (once a participant has seen the stop flag, none
//! claims another range, in order or from homes) and a scan's look-back (a block's
//! published total or prefix read only once written). The rest is the pool's.

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

/// How many of `n` tasks ran after the stop flag was seen, claimed as `claims` (given the
/// flag) says. Task 0 (the caller's first) sets the flag; task `waiter` (the helper's
/// first, or the caller's if no helper came in time) sees it before returning; no other
/// task may then run.
fn tasks_run_after_the_stop(
    n: usize,
    waiter: usize,
    claims: impl for<'a> Fn(&'a AtomicBool) -> Claims<'a>,
) -> usize {
    let pool = pool();
    let stop = AtomicBool::new(false);
    let late = AtomicUsize::new(0);
    let outcome = pool.run_chunks(
        n,
        false,
        (usize::MAX, usize::MAX),
        (claims(&stop), None),
        &|_: Participant, range| {
            for task in range {
                if task == 0 {
                    stop.store(true, Ordering::Release);
                } else if task == waiter {
                    while !stop.load(Ordering::Acquire) {
                        loom::thread::yield_now();
                    }
                } else {
                    late.fetch_add(1, Ordering::Relaxed);
                }
            }
        },
    );
    assert!(outcome.is_ok(), "no fork under loom");
    late.load(Ordering::Relaxed)
}

#[test]
fn no_range_is_claimed_after_the_stop_flag_was_seen() {
    crate::sync::model(|| {
        // In order: tasks 2 and 3 never run.
        let late = tasks_run_after_the_stop(4, 1, |stop| Claims::InOrder(Some(stop)));
        assert_eq!(late, 0, "claimed after the stop");
    });
}

#[test]
fn no_range_is_claimed_from_homes_after_the_stop_flag_was_seen() {
    crate::sync::model(|| {
        // Homes 0..4 and 4..7 (a search for any match that found one, or an iterator whose
        // source ended: `while_some`'s flag).
        let late = tasks_run_after_the_stop(7, 4, |stop| Claims::FromHomes(Some(stop)));
        assert_eq!(late, 0, "claimed after the stop");
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
