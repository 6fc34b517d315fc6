//! When a thread's joins offer work (README "Joining"): a pure policy. An offer costs the
//! joiner a post and a withdraw (about a dispatch's round trip) if a thread spins, and a
//! kernel wake-up if only sleeping helpers are idle; a half taken by a thread that had to
//! be woken pays only if it runs longer than that. So a thread looks at most every
//! `JOINS_PER_LOOK` joins (the look costs three loads), and offers at most once per
//! interval: short while a thread spins, several block costs while only sleepers are idle.
//! A taken offer makes the next join look again at once. Joins far apart (a leaf of real
//! work between them) look more often while a thread is idle: about every `LOOK_SPINNING_NS`
//! of the joiner's time if one spins, so an idle thread waits microseconds for work, not
//! sixteen leaves. While nobody is idle, a frame that outlived a look is offered standing
//! (`joins.rs`): a post that wakes nobody, so a thread that runs out of work finds it.

/// The most joins between two looks (each look loads the idle counts, and reads the clock
/// if any thread is idle). Every join under loom, whose models are a few joins long.
pub(crate) const JOINS_PER_LOOK: u32 = if cfg!(rayforce_loom) { 1 } else { 16 };

/// While a thread spins idle, a joiner looks about this often (a look that finds one idle
/// reads the clock, ~33 ns: about 3% of the joiner's time, only while a thread idles).
const LOOK_SPINNING_NS: u64 = 1_000;

/// While only sleeping helpers are idle, about this often: offers to them go out at most
/// every 100 us.
const LOOK_SLEEPING_NS: u64 = 10_000;

/// The shortest interval between two offers to a spinning thread: an offer's round trip
/// is about 0.2 us, so at most a few percent of a joiner's time goes to offers nobody takes.
const TO_SPINNERS_NS: u64 = 5_000;

/// Offers to sleeping helpers are this many block costs apart, at least
/// `TO_SLEEPERS_MIN_NS`: a wake-up in vain then costs the joiner at most an eighth of it.
const TO_SLEEPERS_BLOCK_COSTS: u64 = 8;
const TO_SLEEPERS_MIN_NS: u64 = 100_000;

/// Who is idle in the pool, as `Signal::idle` tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Idle {
    /// Nobody: no offer.
    Nobody,
    /// A helper spins, or a joiner waits taking offers: a handoff without the kernel.
    Spinning,
    /// Only sleeping helpers, or joiners blocked for their taken halves: an offer wakes one.
    Sleeping,
}

/// How long after an offer the next one may go out, given who is idle and what a kernel
/// wake-up costs (`None`: nobody to offer to). Under loom, at once: its clock is a counter.
pub(crate) fn interval_ns(idle: Idle, block_cost_ns: u64) -> Option<u64> {
    let interval = match idle {
        Idle::Nobody => return None,
        Idle::Spinning => TO_SPINNERS_NS,
        Idle::Sleeping => (TO_SLEEPERS_BLOCK_COSTS * block_cost_ns).max(TO_SLEEPERS_MIN_NS),
    };
    Some(if cfg!(rayforce_loom) { 0 } else { interval })
}

/// Joins between looks, for a joiner whose joins came `ns_per_join` apart while `idle`
/// threads waited: as many as fit in the look interval, 1 to `JOINS_PER_LOOK`.
pub(crate) fn joins_per_look(idle: Idle, ns_per_join: u64) -> u32 {
    let interval = match idle {
        Idle::Nobody => return JOINS_PER_LOOK,
        Idle::Spinning => LOOK_SPINNING_NS,
        Idle::Sleeping => LOOK_SLEEPING_NS,
    };
    (interval / ns_per_join.max(1)).clamp(1, u64::from(JOINS_PER_LOOK)) as u32
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn offers_to_sleepers_are_rarer_than_to_spinners_and_never_below_the_floor() {
        assert_eq!(interval_ns(Idle::Nobody, 40_000), None);
        let spinning = interval_ns(Idle::Spinning, 40_000).unwrap();
        let sleeping = interval_ns(Idle::Sleeping, 40_000).unwrap();
        assert!(spinning < sleeping, "{spinning} {sleeping}");
        assert_eq!(sleeping, 320_000, "eight block costs");
        // No measured block cost (spinning off): the floor.
        assert_eq!(interval_ns(Idle::Sleeping, 0), Some(100_000));
    }

    #[test]
    fn joins_far_apart_look_more_often_while_a_thread_is_idle() {
        // Joins 14 ns apart (fib): the most joins between looks, whoever idles.
        assert_eq!(joins_per_look(Idle::Spinning, 14), JOINS_PER_LOOK);
        assert_eq!(joins_per_look(Idle::Nobody, 7_000), JOINS_PER_LOOK);
        // A leaf of 7 us between joins: every join while a thread spins.
        assert_eq!(joins_per_look(Idle::Spinning, 7_000), 1);
        assert_eq!(joins_per_look(Idle::Spinning, 200), 5);
        // Sleepers are offered to rarely, so looked for less often.
        assert_eq!(joins_per_look(Idle::Sleeping, 1_000), 10);
        assert_eq!(joins_per_look(Idle::Sleeping, 0), JOINS_PER_LOOK);
    }
}
