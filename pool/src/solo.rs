//! Regions too small to share (README "Regions too small to share"): an operation's region
//! whose call site's remembered rate puts its whole work under [`SOLO_NS`] runs on its
//! caller alone, nothing posted. About one such region in [`TIMED_EVERY`] on a thread
//! (drawn; a thread's first always), and as many of the regions priced from `SOLO_NS` up
//! to [`PROBED_BELOW_NS`], run timed: their first part (a sixteenth of one participant's
//! share) and, if the whole would take twice `SOLO_NS` at its rate, a second part as long:
//! if the whole would at the second part's rate too, the rest is shared, else the whole
//! region's time teaches the site its rate. The others run untimed: the clock reads and the
//! first part apart were a third to half of a small region's cost alone.

use crate::current;
use crate::in_task::as_task;
use crate::panics::Panics;
use crate::shared::Shared;
use crate::site_rate::Site;
use crate::stats::Counters;
use crate::sync::{self, AtomicBool, Ordering};
use crate::tasks;
use std::cell::Cell;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};

/// The work under which a region shared by two participants ends no sooner than on its
/// caller alone: a shared region costs 0.6-0.8 us more than its share of the work on this
/// project's 2-core machine (posting, the helper's claims, the wait for it, its results'
/// cache lines moving back), so below about twice that, sharing loses (BENCHMARKS
/// "Regions too small to share").
pub(crate) const SOLO_NS: u64 = 1_500;

/// A region alone is timed with chance one in this many, a thread's first always; the
/// others run untimed on their site's last price. Drawn, not counted: a thread that
/// alternates sites in a fixed pattern would otherwise time the same ones every time, and
/// never see another's tasks grow. A site whose tasks grew runs alone on its stale price
/// for `TIMED_EVERY` regions on average, more than 48 with chance under 5%.
pub(crate) const TIMED_EVERY: u32 = 16;

/// A region its site prices from [`SOLO_NS`] up to this is timed alone with the same
/// chance as one below it, and shared otherwise. A shared region teaches its site its
/// caller's rate, which sharing's own costs can raise (a collection's allocations
/// contending with a helper's): without these draws, a region that runs faster alone
/// could be priced above the bound by its shared runs and be shared at every call.
const PROBED_BELOW_NS: u64 = 16 * SOLO_NS;

/// The fewest tasks a region drawn above the bound has: its two timed parts, a task each
/// at the least, are then at most a sixteenth of it, 1.5 us of a region priced just under
/// [`PROBED_BELOW_NS`], if it is worth sharing after all.
const PROBED_FROM_TASKS: usize = 32;

/// The first state of a thread's draws: any but 0, which marks a thread that drew none.
const FIRST_DRAW: u32 = 0x9E37_79B9;

sync::const_thread_local! {
    /// This thread's last draw (xorshift32), 0 before its first region alone.
    static DRAW: Cell<u32> = Cell::new(0);
}

/// Whether this thread's next region alone is timed: its first, then one in
/// `TIMED_EVERY` by a pseudo-random draw.
#[inline]
fn timed_now() -> bool {
    DRAW.with(|draw| {
        let mut x = draw.get();
        if x == 0 {
            draw.set(FIRST_DRAW);
            return true;
        }
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        draw.set(x);
        x % TIMED_EVERY == 0
    })
}

/// How a region would run alone: its call site, the positions a task covers (`unit`: the
/// timed first part ends on a task's end), the most positions one range may have (as a
/// claim's bound), and the flag that ends it early, if any.
#[derive(Clone, Copy)]
pub(crate) struct Alone<'a> {
    pub(crate) site: Site,
    pub(crate) unit: usize,
    pub(crate) most: usize,
    pub(crate) stop: Option<&'a AtomicBool>,
}

/// How a region runs, by its site's rate and this thread's draw: shared, or on its caller
/// alone, timed or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The region is empty, its site unknown, or its rate puts it at [`SOLO_NS`] or more
    /// (and it was not drawn to be timed alone below [`PROBED_BELOW_NS`]).
    Share,
    /// Alone, on the site's last price.
    Untimed,
    /// Alone, its first parts timed ([`TIMED_EVERY`]), then alone or shared: priced under
    /// [`SOLO_NS`], or drawn below [`PROBED_BELOW_NS`].
    Timed,
}

impl Alone<'_> {
    /// How a region of `n` positions of this site runs. Decided before anything else of
    /// the region is made: an untimed region alone needs neither the pool's width nor a
    /// state per participant.
    #[inline]
    pub(crate) fn verdict(&self, n: usize) -> Verdict {
        let tasks = self.tasks(n);
        let priced_ns = match self.site.recalled() {
            Some(rate) if n > 0 => rate.ns_for(tasks),
            _ => return Verdict::Share,
        };
        if priced_ns < SOLO_NS {
            if timed_now() {
                Verdict::Timed
            } else {
                Verdict::Untimed
            }
        } else if priced_ns < PROBED_BELOW_NS && tasks >= PROBED_FROM_TASKS && timed_now() {
            Verdict::Timed
        } else {
            Verdict::Share
        }
    }

    /// The tasks of `unit` positions that `positions` make; no division for the
    /// operations' own grain of one.
    #[inline]
    fn tasks(&self, positions: usize) -> usize {
        match self.unit {
            1 => positions,
            unit => positions.div_ceil(unit),
        }
    }
}

/// Runs positions `0..n` by `run`, in ranges of at most `alone.most`, on the caller alone,
/// as a task of `shared`'s pool, unless `verdict` is to share. If the region is timed and
/// the whole would take twice [`SOLO_NS`] at the rate its first part (a sixteenth of one
/// participant's share, the region `width` wide) ran at, a second part as long runs; if
/// the whole would at that part's rate too (or at the first's, where a second part would
/// reach the end), only those parts ran, and the site learns the deciding part's rate;
/// else a timed region teaches the site the whole's. `None` once every
/// position ran (or the stop flag was set), resuming the first panic (a range that panics
/// stops no other range); else the first position that did not run, to be shared (0 if
/// none ran).
#[inline]
pub(crate) fn run(
    shared: &Shared,
    n: usize,
    (alone, verdict): (Alone<'_>, Verdict),
    width: usize,
    mut run: impl FnMut(Range<usize>),
) -> Option<usize> {
    if verdict == Verdict::Share {
        return Some(0);
    }
    let stopped = || alone.stop.is_some_and(|stop| stop.load(Ordering::Relaxed));
    let panics = Panics::new();
    let mut run_all = |positions: Range<usize>| {
        tasks::in_ranges(positions, alone.most, stopped, |range| {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| run(range))) {
                panics.keep_first(payload);
            }
        });
    };
    let timed = verdict == Verdict::Timed;
    let shared_from = current::with(shared, || {
        as_task(|| {
            if !timed {
                run_all(0..n);
                return None;
            }
            // A sixteenth of one participant's share: a region that turns out worth
            // sharing loses at most an eighth of its shared time (two such parts).
            let part = 16 * width.max(1);
            let first = match alone.unit {
                1 => (n / part).max(1),
                unit => (n / part / unit).max(1).saturating_mul(unit).min(n),
            };
            let began = sync::now_ns();
            run_all(0..first);
            // A search that found what it looked for ran fewer positions than it counts:
            // its time teaches nothing.
            if stopped() {
                return None;
            }
            let first_ended = sync::now_ns();
            let first_ns = first_ended.saturating_sub(began);
            let mut ran = first;
            if first < n && worth_sharing(first_ns, first, n) && !panics.any() {
                // The first part's time holds its start-up costs (a state's first
                // allocations, lines not yet in cache), which a small part's rate would
                // charge to the whole: the next part, as long, shows the rate the rest
                // runs at, and it decides; where it would reach the end (too few tasks
                // for two parts and a rest), the first decides.
                let second = first.saturating_mul(2).min(n);
                let (deciding_ns, deciding) = if second < n {
                    run_all(first..second);
                    if stopped() {
                        return None;
                    }
                    ran = second;
                    (sync::now_ns().saturating_sub(first_ended), second - first)
                } else {
                    (first_ns, first)
                };
                if worth_sharing(deciding_ns, deciding, n) && !panics.any() {
                    alone.site.learn(deciding_ns, alone.tasks(deciding));
                    return Some(ran);
                }
            }
            run_all(ran..n);
            // The whole teaches the site, not a part alone: tasks that grow along the
            // region would otherwise keep it alone at every call.
            if !stopped() {
                alone
                    .site
                    .learn(sync::now_ns().saturating_sub(began), alone.tasks(n));
            }
            None
        })
    });
    if shared_from.is_none() {
        Counters::bump(&shared.counters.callers().regions_alone);
        panics.resume();
    }
    shared_from
}

/// Whether `part` positions that took `part_ns` put the region's `n` at twice
/// [`SOLO_NS`] or more: a region near the bound neither pays for posting halfway nor flips
/// between the two ways from one call to the next.
fn worth_sharing(part_ns: u64, part: usize, n: usize) -> bool {
    u128::from(part_ns) * n as u128 >= u128::from(2 * SOLO_NS) * part as u128
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;
    use crate::sync::AtomicUsize;
    use crate::Pool;
    use std::cell::RefCell;
    use std::thread;
    use std::time::Duration;

    /// How `site` runs `0..n` alone, tasks of `unit` positions, in ranges of at most
    /// `most`, stopped by `stop`, and its verdict (drawn now).
    fn alone(
        site: Site,
        n: usize,
        (unit, most): (usize, usize),
        stop: Option<&AtomicBool>,
    ) -> (Alone<'_>, Verdict) {
        let alone = Alone {
            site,
            unit,
            most,
            stop,
        };
        (alone, alone.verdict(n))
    }

    /// Runs `0..n` as [`run`] does with `site` priced at one picosecond a task (again
    /// before each of up to 100 tries, as another test's site may push it out of its
    /// entry), until `done` accepts the outcome; returns the outcome and the ranges run.
    fn priced_cheap(
        pool: &Pool,
        site: Site,
        n: usize,
        (unit, most, stop): (usize, usize, Option<&AtomicBool>),
        task: impl Fn(&Range<usize>),
        done: impl Fn(Option<usize>) -> bool,
    ) -> (Option<usize>, Vec<Range<usize>>) {
        for _ in 0..100 {
            site.learn(1, 1000);
            let ranges = RefCell::new(Vec::with_capacity(n.min(1 << 16)));
            let outcome = run(
                pool.shared(),
                n,
                alone(site, n, (unit, most), stop),
                1,
                |range| {
                    ranges.borrow_mut().push(range.clone());
                    task(&range);
                },
            );
            if done(outcome) {
                return (outcome, ranges.into_inner());
            }
        }
        panic!("no try of 100 ended as asked");
    }

    #[test]
    fn a_region_of_a_site_unknown_or_priced_high_runs_nothing_alone() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let site = Site::new(0x0101_0000, 1);
        let ran = AtomicBool::new(false);
        let mark = |_: Range<usize>| ran.store(true, Ordering::Relaxed);
        assert_eq!(
            run(
                pool.shared(),
                10,
                alone(site, 10, (1, usize::MAX), None),
                1,
                mark
            ),
            Some(0)
        );
        // 100 us a position: ten of them are worth sharing, too many to time alone.
        site.learn(100_000, 1);
        assert_eq!(
            run(
                pool.shared(),
                10,
                alone(site, 10, (1, usize::MAX), None),
                1,
                mark
            ),
            Some(0)
        );
        assert!(!ran.into_inner());
    }

    #[test]
    fn a_region_priced_small_runs_on_its_caller_alone_every_position_once() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let n = 1_000_000;
        let before = pool.stats();
        // Two tasks of half the positions each: the first part is one task, a call that
        // predicts the whole at twice its time, under the bound even unoptimised and busy.
        let (outcome, ranges) = priced_cheap(
            &pool,
            Site::new(0x0102_0000, n / 2),
            n,
            (n / 2, usize::MAX, None),
            |_| {},
            |outcome| outcome.is_none(),
        );
        assert_eq!(outcome, None);
        // Timed, its first part apart; untimed, one range.
        assert!(
            ranges == [0..n / 2, n / 2..n] || ranges == std::slice::from_ref(&(0..n)),
            "{ranges:?}"
        );
        let after = pool.stats();
        assert!(after.dispatches > before.dispatches);
        assert_eq!(
            after.dispatches - before.dispatches,
            after.inline_dispatches - before.inline_dispatches,
            "counted as run on the caller alone"
        );
    }

    #[test]
    fn a_region_slower_than_its_site_said_runs_two_parts_and_learns() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let site = Site::new(0x0103_0000, 1);
        let slow = |_: &Range<usize>| thread::sleep(Duration::from_micros(200));
        let (outcome, ranges) =
            priced_cheap(&pool, site, 1600, (1, usize::MAX, None), slow, |outcome| {
                outcome.is_some_and(|from| from > 0)
            });
        assert_eq!(outcome, Some(200));
        assert_eq!(ranges, [0..100, 100..200]);
        // 200 us for 100 positions at least: 2 us each.
        let rate = site.recalled().expect("learnt");
        assert!(rate.ns_for(1000) >= 2_000_000, "{rate:?}");
        // Two positions: a second part would reach the end, so the first decides.
        let (outcome, ranges) =
            priced_cheap(&pool, site, 2, (1, usize::MAX, None), slow, |outcome| {
                outcome.is_some_and(|from| from > 0)
            });
        assert_eq!((outcome, ranges.len(), &ranges[0]), (Some(1), 1, &(0..1)));
    }

    /// `run` of `0..n` positions of `site` on a thread of its own, whose first region alone
    /// is timed, the site priced at `price_ns` for the whole first: the outcome and the
    /// ranges run.
    fn first_on_a_thread(
        pool: &Pool,
        site: Site,
        (n, price_ns): (usize, u64),
        task: impl Fn(&Range<usize>) + Sync,
    ) -> (Option<usize>, Vec<Range<usize>>) {
        thread::scope(|scope| {
            scope
                .spawn(|| {
                    site.learn(price_ns, n);
                    // Made before the region: an allocation in its timed parts would price
                    // them (in a debug build, above the bound).
                    let ranges = RefCell::new(Vec::with_capacity(64));
                    let outcome = run(
                        pool.shared(),
                        n,
                        alone(site, n, (1, usize::MAX), None),
                        1,
                        |range| {
                            task(&range);
                            ranges.borrow_mut().push(range);
                        },
                    );
                    (outcome, ranges.into_inner())
                })
                .join()
                .unwrap()
        })
    }

    #[test]
    fn a_slow_start_alone_does_not_share_a_region_whose_rest_is_fast() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let site = Site::new(0x0107_0000, 1);
        // Three positions: a part is one, and the second keeps the region alone unless it
        // takes a microsecond. Only the first is slow (start-up costs): the region stays
        // alone. A try that a busy machine held up in its second part, or whose site
        // another test pushed out, tries again.
        let slow_start = |range: &Range<usize>| {
            if range.start == 0 {
                thread::sleep(Duration::from_micros(200));
            }
        };
        let alone_after_two_parts = (0..100).any(|_| {
            first_on_a_thread(&pool, site, (3, 1), slow_start) == (None, vec![0..1, 1..2, 2..3])
        });
        assert!(alone_after_two_parts, "no try of 100 ran its rest alone");
    }

    #[test]
    fn a_region_priced_a_little_above_the_bound_is_sometimes_timed_alone() {
        let (probed, beyond) = (Site::new(0x0108_0000, 1), Site::new(0x0109_0000, 1));
        // Each verdict just after its site's price is learnt; one whose site another test
        // pushed out meanwhile (shared, no draw taken) is left out.
        let verdicts = |site: Site, n: usize, price_ns: u64| -> Vec<Verdict> {
            // A thread of its own: its first draw times its region.
            thread::scope(|scope| {
                scope
                    .spawn(|| {
                        (0..64)
                            .filter_map(|_| {
                                site.learn(price_ns, n);
                                let verdict = alone(site, n, (1, usize::MAX), None).1;
                                site.recalled().map(|_| verdict)
                            })
                            .collect()
                    })
                    .join()
                    .unwrap()
            })
        };
        let near = verdicts(probed, 1000, 2 * SOLO_NS);
        assert_eq!(
            near.first(),
            Some(&Verdict::Timed),
            "a thread's first: {near:?}"
        );
        assert!(!near.contains(&Verdict::Untimed), "{near:?}");
        assert!(near[1..].contains(&Verdict::Share), "{near:?}");
        let far = verdicts(beyond, 1000, PROBED_BELOW_NS);
        assert!(far.iter().all(|&v| v == Verdict::Share), "{far:?}");
        // Too few tasks for two small parts: shared, even on a thread's first draw.
        let few = verdicts(probed, PROBED_FROM_TASKS - 1, 2 * SOLO_NS);
        assert!(few.iter().all(|&v| v == Verdict::Share), "{few:?}");
    }

    #[test]
    #[cfg_attr(
        debug_assertions,
        ignore = "an unoptimised build's own code prices each timed part at 300-500 ns, \
                  above the 94 ns the bound leaves it: run with `--release`"
    )]
    fn a_region_drawn_above_the_bound_that_runs_fast_alone_stays_alone_and_learns_it() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let site = Site::new(0x010A_0000, 1);
        // Priced at twice the bound by (say) a shared run, its 1,600 empty positions run
        // alone in the three clock readings' time: the site learns it is small.
        let learnt_small = (0..100).any(|_| {
            let (outcome, ranges) = first_on_a_thread(&pool, site, (1600, 2 * SOLO_NS), |_| {});
            outcome.is_none()
                && ranges.first() == Some(&(0..100))
                && site
                    .recalled()
                    .is_some_and(|rate| rate.ns_for(1600) < SOLO_NS)
        });
        assert!(learnt_small, "no try of 100 ran alone and learnt its rate");
    }

    #[test]
    fn a_thread_s_first_region_alone_is_timed_then_about_one_in_timed_every() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let site = Site::new(0x0106_0000, 1);
        let slow = |_: Range<usize>| thread::sleep(Duration::from_micros(200));
        let rounds = 8 * TIMED_EVERY as usize;
        // A thread of its own: its first region alone is timed.
        let outcomes: Vec<Option<usize>> = thread::scope(|scope| {
            let outcomes = scope.spawn(|| {
                (0..rounds)
                    .map(|_| {
                        site.learn(1, 1000);
                        run(
                            pool.shared(),
                            1600,
                            alone(site, 1600, (1, usize::MAX), None),
                            1,
                            slow,
                        )
                    })
                    .collect()
            });
            outcomes.join().unwrap()
        });
        // `Some(0)`: another test's site took the entry between pricing and running; no
        // region alone, no draw. Timed, a region's two first parts show the whole is worth
        // sharing (`Some(200)`); untimed, it runs whole (`None`).
        let timed: Vec<bool> = outcomes
            .iter()
            .filter(|&&outcome| outcome != Some(0))
            .map(|outcome| {
                assert!(matches!(outcome, None | Some(200)), "{outcomes:?}");
                outcome.is_some()
            })
            .collect();
        assert!(timed.len() > rounds / 2, "{outcomes:?}");
        assert!(timed[0], "a thread's first: {outcomes:?}");
        let later = timed[1..].iter().filter(|&&timed| timed).count();
        // The draws from the first state time 7 of the next 127 (about one in 16).
        assert!(
            (1..timed.len() / 4).contains(&later),
            "{later}: {outcomes:?}"
        );
    }

    #[test]
    fn a_region_alone_stops_at_its_flag_and_runs_a_panicking_range_s_neighbours() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let stop = AtomicBool::new(false);
        let stop_at_50 = |range: &Range<usize>| {
            if range.contains(&50) {
                stop.store(true, Ordering::Relaxed);
            }
        };
        let (outcome, ranges) = priced_cheap(
            &pool,
            Site::new(0x0104_0000, 1),
            1600,
            (1, 10, Some(&stop)),
            stop_at_50,
            |outcome| outcome.is_none(),
        );
        assert_eq!(outcome, None);
        assert_eq!(ranges.last(), Some(&(50..60)), "no range after the flag's");
        // Ranges of one position; the second panics: every other still runs, then the
        // panic resumes, and the region was not shared on the way.
        let ran = AtomicUsize::new(0);
        let site = Site::new(0x0105_0000, 1);
        let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            priced_cheap(
                &pool,
                site,
                64,
                (1, 1, None),
                |range| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    assert_ne!(range.start, 1, "the task at 1 panics");
                },
                |_| true,
            )
        }));
        let payload = panicked.expect_err("the panic resumed");
        assert!(crate::unwind::message(&payload).contains("the task at 1 panics"));
        assert_eq!(ran.into_inner(), 64);
    }
}
