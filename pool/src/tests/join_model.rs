//! `join`'s offer (README "Joining"): a half offered to an idle helper runs once, on one
//! thread, and the join returns only after it ran and its taker let go of the frame; an
//! offer's slot freed early (its half taken and run) is reused by a later offer.

use super::pool;
use crate::sync::{AtomicUsize, Ordering};

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
