//! The signal alone: a helper that blocks never misses a permit posted while it falls
//! asleep, nor one posted while it spins (when the caller counted it as a spinner and woke
//! nobody), withdrawing leaves no permit behind, and the caller wakes once the helper
//! detaches.

use crate::signal::{Signal, SignalState, Wait};
use crate::spin::{Gaps, SpinLimits};
use crate::stats::Counters;
use crate::sync::{thread, Arc, AtomicBool, Ordering};

/// Never spins: every wait blocks at once.
const BLOCK: SpinLimits = SpinLimits {
    ceiling_ns: 0,
    budget: 0,
};

/// Spins two clock readings (loom's clock: one microsecond per reading) with one spinner.
const SPIN: SpinLimits = SpinLimits {
    ceiling_ns: 2_000,
    budget: 1,
};

/// A helper's wait for a permit, with fresh gaps (so it spins when `limits` allow).
fn wait(signal: &Signal, counters: &Counters) -> Wait {
    signal.wait_for_permit(&mut Gaps::default(), counters)
}

/// One permit to one helper, which must take it (a lost wake-up leaves the caller waiting
/// for it forever, which loom reports), then the caller waits until quiet (the helper's
/// detach must wake it), then shutdown.
fn one_permit_is_never_missed(limits: SpinLimits) {
    loom::model(move || {
        let signal = Arc::new(Signal::new(limits));
        let counters = Arc::new(Counters::new());
        let attached = Arc::new(AtomicBool::new(false));
        let helper = {
            let (signal, counters) = (Arc::clone(&signal), Arc::clone(&counters));
            let attached = Arc::clone(&attached);
            thread::spawn(move || {
                assert_eq!(wait(&signal, &counters), Wait::Attached);
                attached.store(true, Ordering::Release);
                signal.detach();
                // The next wait ends only with the shutdown below.
                assert_eq!(wait(&signal, &counters), Wait::Shutdown);
            })
        };
        signal.post(1);
        // Acquire: pairs with the helper's Release store, after its attach.
        while !attached.load(Ordering::Acquire) {
            thread::yield_now();
        }
        // As the pool does: withdraw first (nothing is left), so `attached` can only fall.
        assert_eq!(signal.withdraw(), 0);
        signal.wait_until_quiet(&counters, || true);
        assert_eq!(signal.state(), SignalState::IDLE);
        signal.shut_down();
        helper.join().unwrap();
    });
}

#[test]
fn a_sleeping_helper_never_misses_a_permit() {
    one_permit_is_never_missed(BLOCK);
}

#[test]
fn a_spinning_helper_never_misses_a_permit() {
    one_permit_is_never_missed(SPIN);
}

#[test]
fn withdrawn_permits_are_never_taken() {
    loom::model(|| {
        let signal = Arc::new(Signal::new(BLOCK));
        let counters = Counters::new();
        let helper = {
            let signal = Arc::clone(&signal);
            thread::spawn(move || {
                if signal.try_attach() {
                    signal.detach();
                    true
                } else {
                    false
                }
            })
        };
        signal.post(1);
        let withdrawn = signal.withdraw();
        signal.wait_until_quiet(&counters, || true);
        let attached = helper.join().unwrap();
        assert_eq!(
            withdrawn == 1,
            !attached,
            "a permit is either taken or withdrawn"
        );
        assert_eq!(signal.state(), SignalState::IDLE);
    });
}
