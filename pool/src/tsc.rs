//! The clock the pool's policies read several times a region, by the time-stamp counter
//! where the kernel itself keeps time by it: `rdtsc` takes 12 ns on this project's VM
//! where a `CLOCK_MONOTONIC` reading takes 30. The counter's rate is measured once against
//! `CLOCK_MONOTONIC`, over the first `CALIBRATION_CYCLES` after the process's first
//! reading; until then, and where the kernel's clock source is not the counter (which it
//! then judged unsynchronised or unstable), readings are `CLOCK_MONOTONIC`'s.

use std::sync::OnceLock;

/// The counter ticks over which its rate is measured: 7 ms at 2.4 GHz, so the two
/// readings' own skew (tens of ns) moves the rate by a few parts per million.
const CALIBRATION_CYCLES: u64 = 1 << 24;

/// Nanoseconds at a counter value: a line through two readings of both clocks.
#[derive(Clone, Copy, Debug)]
struct Scale {
    at_cycles: u64,
    at_ns: u64,
    /// Nanoseconds per tick, in 32.32 fixed point.
    ns_per_cycle_q32: u64,
}

impl Scale {
    #[inline]
    fn ns(self, cycles: u64) -> u64 {
        let ticks = u128::from(cycles.saturating_sub(self.at_cycles));
        let ns = (ticks * u128::from(self.ns_per_cycle_q32)) >> 32;
        self.at_ns
            .saturating_add(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

/// The process's first reading of both clocks, if the counter is the kernel's clock source.
static FIRST: OnceLock<Option<(u64, u64)>> = OnceLock::new();
/// The counter's measured rate, once `CALIBRATION_CYCLES` passed since `FIRST`.
static SCALE: OnceLock<Scale> = OnceLock::new();

/// Monotonic time in nanoseconds (since boot, as `CLOCK_MONOTONIC`, within microseconds
/// of it: the counter's rate is not slewed as the kernel's clock may be).
#[inline]
pub(crate) fn now_ns(monotonic_ns: fn() -> u64) -> u64 {
    match SCALE.get() {
        Some(scale) => scale.ns(cycles()),
        None => calibrating(monotonic_ns),
    }
}

/// `now_ns` before the rate is known: `CLOCK_MONOTONIC`, and a second reading of both once
/// the counter has run long enough to give the rate.
#[cold]
#[inline(never)]
fn calibrating(monotonic_ns: fn() -> u64) -> u64 {
    // The counter first: the line through two such pairs runs a few ns ahead of the
    // kernel's clock, never behind, so no reading steps back at the switch.
    let at = cycles();
    let ns = monotonic_ns();
    let first = FIRST.get_or_init(|| counter_keeps_time().then_some((at, ns)));
    if let &Some((first_cycles, first_ns)) = first {
        let ticks = at.saturating_sub(first_cycles);
        if ticks >= CALIBRATION_CYCLES && ns > first_ns {
            let ns_per_cycle_q32 = (u128::from(ns - first_ns) << 32) / u128::from(ticks);
            SCALE.get_or_init(|| Scale {
                at_cycles: at,
                at_ns: ns,
                ns_per_cycle_q32: u64::try_from(ns_per_cycle_q32).unwrap_or(u64::MAX),
            });
        }
    }
    ns
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
            assert!(SCALE.get().is_some(), "calibrated within 50 ms");
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
