//! `join`'s offer (README "Joining"): a half offered to an idle helper runs once, on one
//! thread, and the join returns only after it ran and its taker let go of the frame; an
//! offer's slot freed early (its half taken and run) is reused by a later offer; a joiner
//! blocked for its taken half wakes when its taker detaches, and may run the taker's own
//! offer meanwhile.

use super::pool;
use crate::sync::{AtomicUsize, Ordering};
use crate::Pool;

#[test]
fn an_offered_half_runs_once_and_the_join_returns_after_it() {
    crate::sync::model(|| {
        let pool = pool();
        let runs = AtomicUsize::new(0);
        let (a, b) = pool.join(
            || runs.fetch_add(1, Ordering::Relaxed),
            || {
                runs.fetch_add(10, Ordering::Relaxed);
                String::from("b")
            },
        );
        assert_eq!((a < 11, b.as_str()), (true, "b"));
        assert_eq!(runs.load(Ordering::Relaxed), 11, "each half once");
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}

#[test]
fn a_slot_freed_by_a_finished_offer_serves_the_next_offer() {
    crate::sync::model(|| {
        let pool = pool();
        // The outer join may offer its second half in the one slot; the inner join, inside
        // the first half, can offer only once that half ran and its slot was freed.
        let ((x, y), z) = pool.join(
            || crate::join(|| 1, || String::from("y")),
            || String::from("z"),
        );
        assert_eq!((x, y.as_str(), z.as_str()), (1, "y", "z"));
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}

#[test]
fn a_joiner_blocked_for_its_half_wakes_and_may_run_its_takers_offer() {
    // Four preemptions: the helper must take the outer half before the caller withdraws
    // it, and be preempted between its own offer and withdraw for the blocked caller to
    // take that (it does in some executions at four; at three, in none).
    crate::sync::model_at_least(4, || {
        // Two slots: the helper that takes the outer half can offer the inner one while the
        // caller, its own half done, blocks (no spinning) until that helper detaches.
        let pool = Pool::builder()
            .workers(2)
            .spin_us(0)
            .max_in_flight(2)
            .recheck_ms(0)
            .build()
            .unwrap();
        let runs = AtomicUsize::new(0);
        let (a, (x, y)) = pool.join(
            || runs.fetch_add(1, Ordering::Relaxed),
            || {
                crate::join(
                    || runs.fetch_add(10, Ordering::Relaxed),
                    || {
                        runs.fetch_add(100, Ordering::Relaxed);
                        String::from("y")
                    },
                )
            },
        );
        assert_eq!((a < 111, x < 111, y.as_str()), (true, true, "y"));
        assert_eq!(runs.load(Ordering::Relaxed), 111, "each half once");
        assert_eq!(pool.signal_state(), crate::SignalState::IDLE, "no drift");
    });
}
