//! `Job`: what a participant needs to run one dispatch's tasks (the type-erased closure, the
//! task count and the bounds on claiming them), copied into the dispatch's slot so that a
//! helper reads it from the line it attached on. How its tasks are claimed: `claim.rs`.

use crate::panics::Panics;
use crate::region::Claims;
use crate::sync::{self, AtomicBool, Ordering};
use crate::tasks::{self, Participant, Tasks};
use std::ops::Range;
use std::ptr;

/// The most homes a job's tasks are split into (README "Claiming"): a region of more
/// participants claims in index order. Each home's cursor takes a cache line in every slot.
pub(crate) const MAX_HOMES: usize = 8;

/// Runs a range of tasks of the closure behind the pointer as a participant, handing panics
/// to `Panics` (`tasks::run_erased`).
pub(crate) type RunRange = unsafe fn(*const (), Participant, Range<usize>, &Panics);

/// One dispatch's tasks, as every participant sees them.
///
/// # Safety
/// `data` points to the caller's closure, valid until the dispatch returns. A participant
/// dereferences it only to run tasks it claimed, while attached to the dispatch's slot, and
/// the caller returns only after every helper detached (README "Completion"), so no helper
/// sees a dangling `data`.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    pub(crate) run: RunRange,
    pub(crate) data: *const (),
    pub(crate) n_tasks: usize,
    /// Participants the dispatch may have: the caller and the helpers it posted permits to.
    pub(crate) participants: usize,
    /// The largest chunk: the cursor, which each participant's last claim may carry past
    /// `n_tasks`, then stays below `usize::MAX`.
    pub(crate) max_chunk: usize,
    /// Set when no more tasks need to run (an operation found what it looked for): no
    /// participant claims another chunk. Null for a dispatch that runs every task. On the
    /// caller's stack, valid as `data` is.
    pub(crate) stop: *const AtomicBool,
    /// Whether the tasks are split into one home per participant, claimed by their owner
    /// first (README "Claiming"); else the tasks beyond the first ones are claimed in order.
    pub(crate) homed: bool,
    /// Whether sleeping helpers are woken at the post, not late
    /// (`Claims::FromHomesWakingAtPost`).
    pub(crate) wakes_at_post: bool,
    /// Under loom: the caller's liveness cell (see [`Liveness`]).
    #[cfg(rayforce_loom)]
    pub(crate) alive: *const Liveness,
}

/// Under loom, a cell on the dispatching caller's stack that the caller writes when the
/// dispatch returns and every participant reads before each claim, so a helper touching a
/// finished dispatch is a detected data race. Nothing outside loom.
pub(crate) struct Liveness {
    #[cfg(rayforce_loom)]
    alive: loom::cell::UnsafeCell<bool>,
}

impl Liveness {
    pub(crate) fn new() -> Liveness {
        Liveness {
            #[cfg(rayforce_loom)]
            alive: loom::cell::UnsafeCell::new(true),
        }
    }

    /// The dispatch returns: under loom, the write every late read races with.
    pub(crate) fn end(&self) {
        // SAFETY: every helper has detached (README "Completion"); loom checks that.
        #[cfg(rayforce_loom)]
        self.alive.with_mut(|alive| unsafe { *alive = false });
    }
}

// SAFETY: `data` points to a `T: Tasks`, which is `Sync`, only ever called through `&T`, and
// `stop` to an atomic; lifetimes are enforced by the protocol (see the struct's `# Safety`).
unsafe impl Send for Job {}

impl Job {
    /// A job of `n_tasks` tasks of `closure`, for up to `participants` participants, claimed
    /// as `claims` says (from homes, or in order until its stop flag is set); `closure`, the
    /// stop flag and `alive` are the caller's, on its stack for the dispatch's length.
    pub(crate) fn new<T: Tasks>(
        closure: &T,
        n_tasks: usize,
        participants: usize,
        claims: Claims<'_>,
        alive: &Liveness,
    ) -> Job {
        let data = (closure as *const T).cast();
        let stop = claims.stop();
        Job {
            stop: stop.map_or(ptr::null(), |stop| stop as *const AtomicBool),
            ..Job::erased(tasks::run_erased::<T>, data, n_tasks, participants, alive)
        }
        .claimed(claims)
    }

    /// As [`new`](Self::new), for a closure already erased: `data` points to the closure
    /// that `run` runs, live as long as the job.
    #[inline]
    pub(crate) fn erased(
        run: RunRange,
        data: *const (),
        n_tasks: usize,
        participants: usize,
        #[cfg_attr(not(rayforce_loom), allow(unused_variables))] alive: &Liveness,
    ) -> Job {
        Job {
            run,
            data,
            n_tasks,
            participants: participants.max(1),
            max_chunk: max_chunk(n_tasks, participants.max(1)),
            stop: ptr::null(),
            homed: false,
            wakes_at_post: false,
            #[cfg(rayforce_loom)]
            alive,
        }
    }

    /// This job, its tasks split into homes if `claims` asks for it and the job is long
    /// enough to size chunks by the clock (each home then has at least three tasks), two to
    /// [`MAX_HOMES`] participants share it. No cursor can overflow: a home's runs past its
    /// end by a chunk per participant at most, so below `n_tasks + participants *
    /// max_chunk`, which `max_chunk` keeps within `usize::MAX`; where no chunk is left
    /// (`max_chunk == 0`), a claim takes one task by CAS, below its home's end.
    #[inline]
    fn claimed(mut self, claims: Claims<'_>) -> Job {
        self.wakes_at_post = matches!(claims, Claims::FromHomesWakingAtPost(_));
        self.homed = matches!(
            claims,
            Claims::FromHomes(_) | Claims::FromHomesWakingAtPost(_)
        ) && (2..=MAX_HOMES).contains(&self.participants)
            && self.sized_by_clock();
        self
    }

    /// How many homes the tasks are split into: one per participant if homed, else one,
    /// the tasks beyond the participants' first ones.
    #[inline]
    pub(crate) fn homes(&self) -> usize {
        if self.homed {
            self.participants
        } else {
            1
        }
    }

    /// The first task of the participant of rank `rank`: its home's first if homed, else
    /// the rank.
    #[inline]
    pub(crate) fn first_task(&self, rank: usize) -> usize {
        if self.homed {
            self.home_start(rank)
        } else {
            rank
        }
    }

    /// The tasks of home `home` that are claimed, not handed out as a first task.
    #[inline]
    pub(crate) fn claimable(&self, home: usize) -> Range<usize> {
        if self.homed {
            self.home_start(home) + 1..self.home_start(home + 1)
        } else {
            self.participants..self.n_tasks
        }
    }

    /// Where home `home` of a homed job begins (`n_tasks` for `home == participants`): the
    /// tasks split as evenly as they go, the first homes one longer.
    #[inline]
    fn home_start(&self, home: usize) -> usize {
        let (base, longer) = (
            self.n_tasks / self.participants,
            self.n_tasks % self.participants,
        );
        home * base + home.min(longer)
    }

    /// Runs the first tasks of the participants of `ranks`, as `who`: those of permits no
    /// helper took, which the caller runs; panics go to `panics`.
    #[inline]
    pub(crate) fn run_first_tasks(&self, who: Participant, ranks: Range<usize>, panics: &Panics) {
        if self.homed {
            for rank in ranks {
                let task = self.first_task(rank);
                self.run(who, task..task + 1, panics);
            }
        } else {
            self.run(who, ranks, panics);
        }
    }

    /// Runs `tasks`, which this participant owns (its first task, or every task of an
    /// inline dispatch), as `who`; panics go to `panics`.
    #[inline]
    pub(crate) fn run(&self, who: Participant, tasks: Range<usize>, panics: &Panics) {
        #[cfg(rayforce_loom)]
        self.assert_alive();
        // SAFETY: the closure is live while a participant holds tasks of it (struct
        // `# Safety`; for the caller, its caller holds it).
        unsafe { (self.run)(self.data, who, tasks, panics) };
    }

    /// Whether the job's stop flag is set (no more chunks to claim).
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        if crate::broken::variant!("claim_after_stop") {
            return false; // deliberately broken: participants claim on after the stop
        }
        // SAFETY: `stop` is null or the caller's flag, live as the job (struct `# Safety`).
        // Relaxed: the flag publishes nothing; what the task that set it found reaches the
        // caller through the detach's Release and the quiet check's Acquire.
        !self.stop.is_null() && unsafe { &*self.stop }.load(Ordering::Relaxed)
    }

    /// What a participant reads before its first task, for `work`: the clock, if this job
    /// sizes chunks by it (else 0: no decision needs it).
    #[inline]
    pub(crate) fn first_task_began(&self) -> u64 {
        if self.sized_by_clock() {
            sync::now_ns()
        } else {
            0
        }
    }

    /// Whether `work` sizes chunks by the clock: only with more than two claimable tasks
    /// per participant can a chunk be more than one task (`claim`'s cap); below that,
    /// chunks are single tasks and no decision needs the clock.
    #[inline]
    pub(crate) fn sized_by_clock(&self) -> bool {
        self.n_tasks.saturating_sub(self.participants) > 2 * self.participants
    }

    /// Under loom: a read of the caller's liveness cell, which races with `Liveness::end`
    /// if this participant touches the job after its dispatch returned.
    #[cfg(rayforce_loom)]
    pub(crate) fn assert_alive(&self) {
        // SAFETY: the cell is on the caller's stack; loom checks this read against `end`'s
        // write, and a race is the bug sought.
        let alive = unsafe { &(*self.alive).alive };
        // SAFETY: as above.
        alive.with(|alive| assert!(unsafe { *alive }, "job touched after its dispatch returned"));
    }
}

/// The largest chunk a dispatch of `n_tasks` on `participants` may claim, so that the
/// cursor, which each participant's last claim may carry past `n_tasks`, stays below
/// `usize::MAX`. Below `usize::MAX >> 14` tasks no claim can carry it that far (a claim is
/// at most `n_tasks`, and participants are at most `MAX_WIDTH`, 2^13, so the cursor stays
/// below `n_tasks * (1 + 2^13)`): no limit, and no division on the dispatch's path.
pub(crate) fn max_chunk(n_tasks: usize, participants: usize) -> usize {
    if n_tasks < usize::MAX >> 14 {
        usize::MAX
    } else {
        (usize::MAX - n_tasks) / participants
    }
}
