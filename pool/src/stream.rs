//! `Stream`: whether a caller's operation regions come back to back, so that regions each
//! too short to wake a sleeping helper for their own sake wake it for the ones that follow
//! (README "Streams of short regions").

use crate::sync::unmodeled::AtomicU64;
use crate::sync::Ordering;

/// A region counts toward a stream only once its caller has worked this long in it alone:
/// sharing a shorter one with a spinning helper gains little over its round trip and the
/// lines the helper's half moves, and a helper kept spinning for it costs a core.
const MIN_REGION_NS: u64 = 2_000;

/// Each stream wake-up after which no helper joined doubles the work alone the next one
/// needs, up to this many doublings (64 wake-ups' time between wake-ups).
const MAX_BACKOFF: u64 = 6;

/// One slot's recent operation regions, written only by the caller that owns the slot (so
/// Relaxed throughout, and unmodeled: nothing here orders anything).
pub(crate) struct Stream {
    /// When the last region's first task began, in ns.
    last_began_ns: AtomicU64,
    /// Work the caller did alone, in regions of at least `MIN_REGION_NS`, since the stream
    /// began or last woke its helpers.
    alone_ns: AtomicU64,
    /// Doublings of the work alone the next wake-up needs: one more for each wake-up after
    /// which no helper joined, none once one did.
    backoff: AtomicU64,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream {
            last_began_ns: AtomicU64::new(0),
            alone_ns: AtomicU64::new(0),
            backoff: AtomicU64::new(0),
        }
    }

    /// For a region beginning at `began_ns` that found helpers asleep: whether to wake them
    /// now. Yes once the stream (regions beginning within `block_ns`, a wake-up's cost, of
    /// each other) has kept the caller working alone for a wake-up's time, doubled for each
    /// wake-up since that no helper answered: the ski-rental rule, over the stream instead of
    /// one region.
    pub(crate) fn wakes(&self, began_ns: u64, block_ns: u64) -> bool {
        let gap = began_ns.saturating_sub(self.last_began_ns.load(Ordering::Relaxed));
        if gap > block_ns {
            self.alone_ns.store(0, Ordering::Relaxed); // an idle spell: a new stream
            return false;
        }
        let backoff = self.backoff.load(Ordering::Relaxed);
        if self.alone_ns.load(Ordering::Relaxed) < block_ns << backoff {
            return false;
        }
        self.alone_ns.store(0, Ordering::Relaxed);
        self.backoff
            .store((backoff + 1).min(MAX_BACKOFF), Ordering::Relaxed);
        true
    }

    /// A region that began at `began_ns` ended, with `worked_ns` of work on the caller by
    /// its last clock reading; `joined`: a helper took part.
    pub(crate) fn ran(&self, began_ns: u64, worked_ns: u64, joined: bool) {
        self.last_began_ns.store(began_ns, Ordering::Relaxed);
        if joined {
            self.alone_ns.store(0, Ordering::Relaxed);
            self.backoff.store(0, Ordering::Relaxed);
        } else if worked_ns >= MIN_REGION_NS {
            let alone = self.alone_ns.load(Ordering::Relaxed);
            self.alone_ns
                .store(alone.saturating_add(worked_ns), Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    const BLOCK: u64 = 30_000;

    /// `regions` regions of `worked` each, back to back from `start`, alone; how many woke.
    fn stream_of(stream: &Stream, start: u64, regions: u64, worked: u64) -> u64 {
        (0..regions)
            .filter(|k| {
                let began = start + k * worked;
                let woke = stream.wakes(began, BLOCK);
                stream.ran(began, worked, false);
                woke
            })
            .count() as u64
    }

    #[test]
    fn back_to_back_regions_wake_once_they_kept_the_caller_alone_a_wake_ups_time() {
        let stream = Stream::new();
        // 9 us regions: the fourth, after 27 us alone, does not; the fifth, after 36, does.
        assert_eq!(stream_of(&stream, 1_000_000, 4, 9_000), 0);
        assert!(stream.wakes(1_000_000 + 4 * 9_000, BLOCK));
        // A helper joined: the next wake-up needs a wake-up's time alone again, no more.
        stream.ran(1_000_000 + 4 * 9_000, 9_000, true);
        assert_eq!(stream_of(&stream, 1_045_000, 5, 9_000), 1);
    }

    #[test]
    fn wake_ups_no_helper_answers_come_ever_more_rarely() {
        let stream = Stream::new();
        // 10,000 regions of 9 us alone (90 ms): wake-ups after 30 us, then 60, 120, ... of
        // work alone, up to 64 wake-ups' time apart.
        let woke = stream_of(&stream, 1_000_000, 10_000, 9_000);
        let bound = 7 + 90_000_000 / (BLOCK << MAX_BACKOFF);
        assert!((7..=bound).contains(&woke), "{woke} wake-ups");
    }

    #[test]
    fn short_regions_and_idle_spells_do_not_make_a_stream() {
        let stream = Stream::new();
        // Regions of 1 us never count, however many.
        assert_eq!(stream_of(&stream, 1_000_000, 1_000, 1_000), 0);
        // 20 us regions, each after an idle spell longer than a wake-up: never a stream.
        let woke = (0..100u64)
            .filter(|k| {
                let began = 2_000_000 + k * 100_000;
                let woke = stream.wakes(began, BLOCK);
                stream.ran(began, 20_000, false);
                woke
            })
            .count();
        assert_eq!(woke, 0);
    }
}
