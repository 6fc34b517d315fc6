//! The clock the pool's policies read several times a region, by the time-stamp counter
//! where the kernel itself keeps time by it: `rdtsc` takes 12 ns on this project's VM
//! where a `CLOCK_MONOTONIC` reading takes 30. The counter's rate is measured once against
//! `CLOCK_MONOTONIC`, over the first `CALIBRATION_CYCLES` after the process's first
//! reading; until then, and where the kernel's clock source is not the counter (which it
//! then judged unsynchronised or unstable), readings are `CLOCK_MONOTONIC`'s. No reading
//! waits for another thread, so none hangs in a child forked while one was calibrating.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// The counter ticks over which its rate is measured: 7 ms at 2.4 GHz, so the two
/// readings' own skew (tens of ns) moves the rate by a few parts per million.
const CALIBRATION_CYCLES: u64 = 1 << 24;

/// Where the process is: nothing known; one thread checking the clock source; the counter
/// unusable; its first reading taken; one thread writing the rate; the rate known. Each
/// step is taken by one thread, by compare-and-swap, and nobody waits for it: meanwhile
/// readings are `CLOCK_MONOTONIC`'s. So a child forked in the middle of a step (the thread
/// taking it left behind) reads `CLOCK_MONOTONIC` for ever, and never waits.
static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const CHECKING: u8 = 1;
const UNUSABLE: u8 = 2;
const FIRST_TAKEN: u8 = 3;
const SCALING: u8 = 4;
const SCALED: u8 = 5;

/// Both clocks at the first reading, then at the second: the rate's line passes through
/// the second, `NS_PER_CYCLE_Q32` (nanoseconds per tick, 32.32 fixed point) its slope.
/// Written only by the thread that took the step, before `STATE` says so.
static AT_CYCLES: AtomicU64 = AtomicU64::new(0);
static AT_NS: AtomicU64 = AtomicU64::new(0);
static NS_PER_CYCLE_Q32: AtomicU64 = AtomicU64::new(0);

/// Monotonic time in nanoseconds (since boot, as `CLOCK_MONOTONIC`, within microseconds
/// of it: the counter's rate is not slewed as the kernel's clock may be).
#[inline]
pub(crate) fn now_ns(monotonic_ns: fn() -> u64) -> u64 {
    // Acquire: pairs with the Release store of SCALED, after the line's values.
    match STATE.load(Ordering::Acquire) {
        SCALED => {}
        // Where the counter is not the kernel's clock, no reading of it at all.
        UNUSABLE => return monotonic_ns(),
        _ => return calibrating(monotonic_ns),
    }
    // Relaxed: ordered by the Acquire load above.
    let at_cycles = AT_CYCLES.load(Ordering::Relaxed);
    let ticks = u128::from(cycles().saturating_sub(at_cycles));
    let ns = (ticks * u128::from(NS_PER_CYCLE_Q32.load(Ordering::Relaxed))) >> 32;
    AT_NS
        .load(Ordering::Relaxed)
        .saturating_add(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// `now_ns` before the rate is known: `CLOCK_MONOTONIC`, taking the next step if it is due
/// and no other thread has it.
#[cold]
#[inline(never)]
fn calibrating(monotonic_ns: fn() -> u64) -> u64 {
    // The counter first: the line through two such pairs runs a few ns ahead of the
    // kernel's clock, never behind, so no reading steps back at the switch.
    let at = cycles();
    let ns = monotonic_ns();
    // Acquire: pairs with the Release stores of each state, after the values it announces.
    match STATE.load(Ordering::Acquire) {
        UNKNOWN if take(UNKNOWN, CHECKING) => {
            if counter_keeps_time() {
                // Relaxed: published by the Release store below.
                AT_CYCLES.store(at, Ordering::Relaxed);
                AT_NS.store(ns, Ordering::Relaxed);
                // Release: pairs with the Acquire loads of STATE.
                STATE.store(FIRST_TAKEN, Ordering::Release);
            } else {
                STATE.store(UNUSABLE, Ordering::Relaxed);
            }
        }
        FIRST_TAKEN => {
            // Relaxed: ordered by the Acquire load of FIRST_TAKEN.
            let (first_cycles, first_ns) = (
                AT_CYCLES.load(Ordering::Relaxed),
                AT_NS.load(Ordering::Relaxed),
            );
            let ticks = at.saturating_sub(first_cycles);
            if ticks >= CALIBRATION_CYCLES && ns > first_ns && take(FIRST_TAKEN, SCALING) {
                let ns_per_cycle_q32 = (u128::from(ns - first_ns) << 32) / u128::from(ticks);
                // Relaxed: published by the Release store below.
                AT_CYCLES.store(at, Ordering::Relaxed);
                AT_NS.store(ns, Ordering::Relaxed);
                NS_PER_CYCLE_Q32.store(
                    u64::try_from(ns_per_cycle_q32).unwrap_or(u64::MAX),
                    Ordering::Relaxed,
                );
                // Release: pairs with the Acquire load in `now_ns`.
                STATE.store(SCALED, Ordering::Release);
            }
        }
        _ => {}
    }
    ns
}

/// Takes the step from `from` to `to` if no other thread has: whether this one did.
fn take(from: u8, to: u8) -> bool {
    // Relaxed: the step's values are written after, and published by the next state's
    // Release store.
    STATE
        .compare_exchange(from, to, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

/// The time-stamp counter.
#[inline]
fn cycles() -> u64 {
    // SAFETY: `rdtsc` exists on every x86_64 CPU and reads a register; no memory is touched.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Whether the kernel keeps time by the counter: it then found it constant-rate and in step
/// across CPUs (else it falls back to another source, and so does this clock).
fn counter_keeps_time() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|source| source.trim() == "tsc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaled_counter_never_steps_back_and_keeps_the_kernels_time() {
        let monotonic = crate::sync::monotonic_ns;
        let began = (now_ns(monotonic), monotonic());
        let mut last = began.0;
        // Past the calibration (7 ms at 2.4 GHz; at most 50 ms here), readings never step
        // back, across the switch from the kernel's clock to the counter.
        while began.1 + 50_000_000 > monotonic() {
            let now = now_ns(monotonic);
            assert!(now >= last, "stepped back from {last} to {now}");
            last = now;
        }
        if counter_keeps_time() {
            assert_eq!(
                STATE.load(Ordering::Relaxed),
                SCALED,
                "calibrated within 50 ms"
            );
        }
        // Over 20 ms more, both clocks tell the same time within 1%.
        let (ours, theirs) = (now_ns(monotonic), monotonic());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let ours = now_ns(monotonic) - ours;
        let theirs = monotonic() - theirs;
        assert!(
            ours.abs_diff(theirs) < theirs / 100,
            "{ours} ns by the counter, {theirs} ns by CLOCK_MONOTONIC"
        );
    }
}
