//! The signal alone: a helper that blocks never misses a permit posted while it falls
//! asleep, withdrawing leaves no permit behind, and the caller wakes once the helper
//! detaches.

use crate::signal::{Signal, SignalState, Wait};
use crate::sync::{thread, Arc};

#[test]
fn a_sleeping_helper_never_misses_a_permit() {
    loom::model(|| {
        let signal = Arc::new(Signal::new());
        let helper = {
            let signal = Arc::clone(&signal);
            thread::spawn(move || {
                let got = signal.wait_for_permit(0);
                assert!(matches!(got, Wait::Attached { .. }), "{got:?}");
                signal.detach();
                // The next wait ends only with the shutdown below.
                assert_eq!(signal.wait_for_permit(0), Wait::Shutdown);
            })
        };
        signal.post(1);
        signal.wait_until_quiet(0, || signal.state().permits == 0);
        assert_eq!(signal.state(), SignalState::IDLE);
        signal.shut_down();
        helper.join().unwrap();
    });
}

#[test]
fn withdrawn_permits_are_never_taken() {
    loom::model(|| {
        let signal = Arc::new(Signal::new());
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
        signal.wait_until_quiet(0, || true);
        let attached = helper.join().unwrap();
        assert_eq!(
            withdrawn == 1,
            !attached,
            "a permit is either taken or withdrawn"
        );
        assert_eq!(signal.state(), SignalState::IDLE);
    });
}
