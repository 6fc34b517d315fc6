//! The signal alone: a helper that blocks never misses a permit posted while it falls
//! asleep, nor one posted while it spins (when the caller counted it as a spinner and woke
//! nobody), withdrawing leaves no permit behind, the caller wakes once the helper detaches,
//! and a helper resized away takes no permit posted after the resize.

use crate::mail::Mailbox;
use crate::signal::{Left, Signal, SlotCounts, Wait};
use crate::slot::SignalState;
use crate::spin::{Gaps, SpinLimits};
use crate::stats::Counters;
use crate::sync::{thread, Arc, Condvar, Mutex};

/// One slot, for dispatches.
const ONE_SLOT: SlotCounts = SlotCounts {
    dispatches: 1,
    joins: 0,
    spawn: false,
};

/// Never spins: every wait blocks at once.
const BLOCK: SpinLimits = SpinLimits {
    ceiling_ns: 0,
    cpus: 1,
};

/// Spins two clock readings (loom's clock: one microsecond per reading) with one spinner.
const SPIN: SpinLimits = SpinLimits {
    ceiling_ns: 2_000,
    cpus: 2,
};

/// Helper 1's wait for a permit (the one active helper), with fresh gaps (so it spins when
/// `limits` allow).
fn wait(signal: &Signal, counters: &Counters) -> Wait {
    let no_mail = Mailbox::new(1);
    signal.wait_for_permit(
        1,
        &no_mail,
        &mut Gaps::default(),
        &mut 0,
        counters,
        Left::Nothing,
    )
}

/// Whether a helper took the permit of slot 0: the helper sets the flag after attaching.
#[derive(Default)]
struct Taken {
    slots: Mutex<[bool; 1]>,
    changed: Condvar,
}

impl Taken {
    fn set(&self, slot: usize, taken: bool) {
        self.slots.lock().unwrap()[slot] = taken;
        self.changed.notify_all();
    }

    /// Blocks until `slot`'s permit was taken: if it never is (a lost wake-up), every
    /// thread ends up blocked, which loom reports as a deadlock.
    fn wait(&self, slot: usize) {
        let mut slots = self.slots.lock().unwrap();
        while !slots[slot] {
            slots = self.changed.wait(slots).unwrap();
        }
    }
}

/// A helper that takes `permits` permits, one at a time, then waits for shutdown.
fn helper(signal: &Signal, counters: &Counters, taken: &Taken, permits: usize) {
    for _ in 0..permits {
        match wait(signal, counters) {
            Wait::Attached { slot, spun, .. } => {
                taken.set(slot, true);
                if let Some(spun) = spun {
                    signal.end_spin(spun, &mut Gaps::default(), counters);
                }
                signal.detach(slot);
            }
            Wait::Shutdown => panic!("shut down with a permit left"),
            Wait::Mail => unreachable!("nothing is broadcast here"),
        }
    }
    assert_eq!(wait(signal, counters), Wait::Shutdown);
}

/// A caller's whole dispatch of one permit, without tasks: own a slot, post, wait until
/// a helper took the permit, withdraw, wait until quiet, release.
fn dispatch_one_permit(signal: &Signal, counters: &Counters, taken: &Taken) {
    let slot = signal.own_slot().expect("a free slot");
    taken.set(slot, false); // the slot's earlier dispatch was taken: not this one
    signal.post(slot, 1, 1, true);
    taken.wait(slot);
    // As the pool does: withdraw first (nothing is left), so `attached` can only fall.
    assert_eq!(signal.withdraw(slot), 0);
    signal.wait_until_quiet(slot, counters);
    assert_eq!(signal.slot(slot).state(), SignalState::IDLE);
    signal.slot(slot).release();
}

/// One permit to one helper, which must take it (a lost wake-up leaves the caller waiting
/// for it forever, which loom reports), then the caller waits until quiet (the helper's
/// detach must wake it), then shutdown.
fn one_permit_is_never_missed(limits: SpinLimits) {
    crate::sync::model(move || {
        let signal = Arc::new(Signal::new(limits, ONE_SLOT, 1));
        let counters = Arc::new(Counters::new());
        let taken = Arc::new(Taken::default());
        let helper = {
            let (signal, counters, taken) = (signal.clone(), counters.clone(), taken.clone());
            thread::spawn(move || self::helper(&signal, &counters, &taken, 1))
        };
        dispatch_one_permit(&signal, &counters, &taken);
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
    crate::sync::model(|| {
        let signal = Arc::new(Signal::new(BLOCK, ONE_SLOT, 1));
        let counters = Counters::new();
        let helper = {
            let signal = Arc::clone(&signal);
            thread::spawn(move || {
                if signal.slot(0).try_attach(1).is_some() {
                    signal.detach(0);
                    true
                } else {
                    false
                }
            })
        };
        assert_eq!(signal.own_slot(), Some(0));
        signal.post(0, 1, 1, true);
        let withdrawn = signal.withdraw(0);
        signal.wait_until_quiet(0, &counters);
        let attached = helper.join().unwrap();
        assert_eq!(
            withdrawn == 1,
            !attached,
            "a permit is either taken or withdrawn"
        );
        assert_eq!(signal.state(), SignalState::IDLE);
    });
}

#[test]
fn a_helper_resized_away_takes_no_later_permit() {
    // Helper 2 spins for a permit while the caller narrows the pool to one helper and then
    // posts: a spin that read the old width must not attach (its check of its index and
    // its taking the permit are one step), and it parks until shutdown.
    crate::sync::model(|| {
        let signal = Arc::new(Signal::new(SPIN, ONE_SLOT, 2));
        let helper = {
            let signal = Arc::clone(&signal);
            thread::spawn(move || {
                let counters = Counters::new();
                let wait = signal.wait_for_permit(
                    2,
                    &Mailbox::new(2),
                    &mut Gaps::default(),
                    &mut 0,
                    &counters,
                    Left::Nothing,
                );
                assert_eq!(
                    wait,
                    Wait::Shutdown,
                    "helper 2 joined after it was resized away"
                );
            })
        };
        // The yields let the helper run (into its spin, then at the posted permit) without
        // spending the search's preemptions on it.
        thread::yield_now();
        assert!(signal.resize(|| Some((1, SPIN.cpus))));
        assert_eq!(signal.own_slot(), Some(0));
        signal.post(0, 1, 1, true);
        thread::yield_now();
        assert_eq!(signal.withdraw(0), 1, "nobody may take the permit");
        signal.wait_until_quiet(0, &Counters::new());
        signal.slot(0).release();
        signal.shut_down();
        helper.join().unwrap();
    });
}
