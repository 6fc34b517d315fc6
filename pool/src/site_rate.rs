//! What an operation's call site paid per task last time it ran, remembered per process, so
//! that its next region can be judged too small to share before anything is posted (README
//! "Regions too small to share").

use crate::sync::unmodeled::AtomicU64;
use crate::sync::Ordering;

/// Sites remembered at once: a direct-mapped table, one word each. A site that another
/// pushed out is unknown again, and shares its next region as if never seen.
const ENTRIES: usize = 64;

/// The process's sites' rates.
static RATES: Rates = Rates([const { AtomicU64::new(0) }; ENTRIES]);

/// A table of sites' rates. Each entry: the site's tag in the high half, its rate
/// (picoseconds a task) in the low. Zero, never a tag, is empty.
struct Rates([AtomicU64; ENTRIES]);

/// An operation's call site: a key that tells one site's tasks from another's (the address
/// of code made for its closures alone), hashed to its entry and tag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site {
    entry: usize,
    tag: u32,
}

/// What a site's tasks cost, in picoseconds a task (at most `u32::MAX`, 4.3 ms: a task
/// costlier than that is shared whatever its count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rate(u32);

impl Site {
    /// The site whose closures' code is at `code`, its tasks `unit` positions each.
    #[inline]
    pub(crate) fn new(code: usize, unit: usize) -> Site {
        let key = code as u64 ^ (unit as u64).rotate_left(32);
        let hash = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Site {
            entry: (hash >> (64 - ENTRIES.trailing_zeros())) as usize,
            // Bits below the entry's; never zero.
            tag: (hash >> 26) as u32 | 1,
        }
    }

    /// The rate this site last ran at, if it is remembered. Never under loom: its models
    /// must not depend on what an earlier execution left in a process-wide table.
    #[inline]
    pub(crate) fn recalled(self) -> Option<Rate> {
        if cfg!(rayforce_loom) {
            return None;
        }
        RATES.recalled(self)
    }

    /// Remembers that `tasks` of this site took `took_ns` (nothing under loom).
    #[inline]
    pub(crate) fn learn(self, took_ns: u64, tasks: usize) {
        if !cfg!(rayforce_loom) {
            RATES.learn(self, took_ns, tasks);
        }
    }
}

impl Rates {
    #[inline]
    fn recalled(&self, site: Site) -> Option<Rate> {
        // Relaxed: a hint for a policy; no access depends on it.
        let word = self.0[site.entry].load(Ordering::Relaxed);
        ((word >> 32) as u32 == site.tag).then_some(Rate(word as u32))
    }

    /// The entry is written only when the rate moved by more than an eighth (or the entry
    /// held another site), so that callers of one site on several threads do not pass its
    /// line back and forth.
    #[inline]
    fn learn(&self, site: Site, took_ns: u64, tasks: usize) {
        if tasks == 0 {
            return;
        }
        let took_ps = u128::from(took_ns) * 1000;
        if let Some(Rate(old)) = self.recalled(site) {
            // Within an eighth of `old` a task, compared without dividing (the common case).
            let at_old = u128::from(old) * tasks as u128;
            if took_ps.abs_diff(at_old) <= at_old / 8 {
                return;
            }
        }
        let rate = u32::try_from(took_ps / tasks as u128).unwrap_or(u32::MAX);
        // Relaxed: as `recalled`. Two sites sharing the entry overwrite each other, whole.
        self.0[site.entry].store(
            u64::from(site.tag) << 32 | u64::from(rate),
            Ordering::Relaxed,
        );
    }
}

impl Rate {
    /// What `tasks` tasks take at this rate, in nanoseconds (saturating).
    #[inline]
    pub(crate) fn ns_for(self, tasks: usize) -> u64 {
        u64::from(self.0).saturating_mul(tasks as u64) / 1000
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_site_recalls_what_it_learnt_and_another_does_not() {
        // A table of its own: the process's is the other tests' operations' too.
        let rates = Rates([const { AtomicU64::new(0) }; ENTRIES]);
        let site = Site::new(0x5555_1230, 1);
        let sites = || (0..).map(|k| Site::new(0x7777_0000 + 16 * k, 1));
        let same_entry = sites().find(|s| s.entry == site.entry).unwrap();
        let other_entry = sites().find(|s| s.entry != site.entry).unwrap();
        assert_eq!(rates.recalled(site), None);
        rates.learn(site, 1_500, 1_000);
        assert_eq!(rates.recalled(site), Some(Rate(1_500)));
        assert_eq!(rates.recalled(site).unwrap().ns_for(2_000), 3_000);
        assert_eq!(rates.recalled(other_entry), None);
        assert_eq!(rates.recalled(same_entry), None, "another tag");
        // Within an eighth: kept; beyond it: replaced.
        rates.learn(site, 1_600, 1_000);
        assert_eq!(rates.recalled(site), Some(Rate(1_500)));
        rates.learn(site, 3_000, 1_000);
        assert_eq!(rates.recalled(site), Some(Rate(3_000)));
        // A site on the same entry pushes it out, whole.
        rates.learn(same_entry, 10, 1);
        assert_eq!(rates.recalled(same_entry), Some(Rate(10_000)));
        assert_eq!(rates.recalled(site), None);
        // A task dearer than a rate can say saturates, and so do the times it predicts.
        rates.learn(site, u64::MAX, 1);
        assert_eq!(rates.recalled(site), Some(Rate(u32::MAX)));
        assert_eq!(
            rates.recalled(site).unwrap().ns_for(usize::MAX),
            u64::MAX / 1000
        );
    }
}
