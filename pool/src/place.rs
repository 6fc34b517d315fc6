//! Placement (`rayforce.pool.place`): pins each helper to its spot of the plan as it
//! starts, and moves the helpers when a re-check finds the process mask changed or a
//! helper moved (`taskset -a -p` sets every thread's mask). Off: no affinity call at all.
//! The caller is never pinned. Linux only; elsewhere the setting is accepted and helpers
//! float.

use crate::fork::PerProcess;
use crate::placed::{HelperPlacement, PlaceFailure};
use rayforce_tunables::cpu::{self, CpuSet, Place, Plan, SysRoot};
use std::sync::{Mutex, MutexGuard};

/// Called with (helper, memory node) whenever a helper is placed or moved: the runtime
/// points the helper's arena at its node's memory with it.
pub(crate) type PlaceHook = Box<dyn Fn(usize, Option<usize>) + Send + Sync>;

/// A pool's placement (never `Place::Off`: a pool that does not place has none): its mode,
/// its plan for the mask it last saw, and its helpers.
pub(crate) struct Placement {
    mode: Place,
    on_place: Option<PlaceHook>,
    /// This process's: a forked child starts with no plan and no helpers. The parent's
    /// thread ids name threads the child must never move, its plan was made for the
    /// parent's mask (a child narrowed to other CPUs plans from its own), and its lock may
    /// be held by a parent's thread that the child does not have.
    state: PerProcess<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// The process mask the plan was made for (boxed: 1 KiB).
    mask: Option<Box<CpuSet>>,
    plan: Option<Plan>,
    /// Helper k at `k - 1`: its thread id and where it is.
    helpers: Vec<Option<(libc::pid_t, HelperPlacement)>>,
}

impl Placement {
    pub(crate) fn new(mode: Place, on_place: Option<PlaceHook>) -> Placement {
        Placement {
            mode,
            on_place,
            state: PerProcess::new(Mutex::default()),
        }
    }

    /// The state, for this process (the field's note). A panic elsewhere while the lock
    /// was held leaves nothing half-written here.
    fn lock(&self) -> MutexGuard<'_, State> {
        let state = self.state.get(|_| Mutex::default());
        state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// On helper `index`'s own thread, as it starts: pins it to its spot, and returns where
    /// it is (for [`tell`](Self::tell), once its arena is bound).
    pub(crate) fn join(&self, index: usize) -> HelperPlacement {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
        let mut state = self.lock();
        if state.plan.is_none() {
            self.replan(&mut state, cpu::process_affinity());
        }
        let placed = apply(state.plan.as_ref(), index, tid);
        if state.helpers.len() < index {
            state.helpers.resize(index, None);
        }
        state.helpers[index - 1] = Some((tid, placed));
        placed
    }

    /// At a re-check: if the process mask changed, or any helper is no longer on its CPU
    /// alone, makes a new plan and moves every helper to its spot. Returns whether any
    /// helper moved.
    pub(crate) fn follow(&self) -> bool {
        let mask = cpu::process_affinity();
        let moved: Vec<HelperPlacement> = {
            let mut state = self.lock();
            let same_mask = state.mask.as_deref() == mask.as_ref();
            if same_mask
                && state
                    .helpers
                    .iter()
                    .flatten()
                    .all(|(tid, p)| in_place(*tid, p))
            {
                return false;
            }
            self.replan(&mut state, mask);
            let State { plan, helpers, .. } = &mut *state;
            helpers
                .iter_mut()
                .flatten()
                .map(|(tid, placed)| {
                    *placed = apply(plan.as_ref(), placed.helper, *tid);
                    *placed
                })
                .collect()
        };
        moved.iter().for_each(|placed| self.tell(placed));
        true
    }

    /// Where every started helper is, helper 1 first.
    pub(crate) fn report(&self) -> Vec<HelperPlacement> {
        let state = self.lock();
        state.helpers.iter().flatten().map(|(_, p)| *p).collect()
    }

    /// A new plan for `mask` (every allowed CPU gets a spot; helper k takes the k-th).
    fn replan(&self, state: &mut State, mask: Option<CpuSet>) {
        state.plan = mask
            .as_ref()
            .map(|mask| cpu::plan(SysRoot::SYSTEM, mask, self.mode, usize::MAX));
        state.mask = mask.map(Box::new);
    }

    /// Runs the placement hook for a helper placed or moved.
    pub(crate) fn tell(&self, placed: &HelperPlacement) {
        if let Some(hook) = &self.on_place {
            hook(placed.helper, placed.memory_node);
        }
    }
}

/// Pins thread `tid` (helper `helper`) to its spot of `plan`; a helper without a spot (or a
/// refused one) gets the plan's whole mask back, so it floats where the process may run.
fn apply(plan: Option<&Plan>, helper: usize, tid: libc::pid_t) -> HelperPlacement {
    let unplaced = |failure| HelperPlacement {
        helper,
        cpu: None,
        node: None,
        memory_node: None,
        failure: Some(failure),
    };
    let Some(plan) = plan else {
        return unplaced(PlaceFailure::NoMask);
    };
    let Some(spot) = plan.spot(helper) else {
        set_affinity(tid, &plan_mask(plan)).ok();
        return unplaced(PlaceFailure::NoCpu);
    };
    let mut only = CpuSet::new();
    only.insert(spot.cpu);
    match set_affinity(tid, &only) {
        Ok(()) => HelperPlacement {
            helper,
            cpu: Some(spot.cpu),
            node: spot.node,
            memory_node: spot.memory_node,
            failure: None,
        },
        Err(errno) => {
            set_affinity(tid, &plan_mask(plan)).ok();
            unplaced(PlaceFailure::Os {
                cpu: spot.cpu,
                errno,
            })
        }
    }
}

/// Every CPU the plan chose from.
fn plan_mask(plan: &Plan) -> CpuSet {
    let mut mask = CpuSet::new();
    plan.spots().iter().for_each(|s| {
        mask.insert(s.cpu);
    });
    mask
}

/// Whether thread `tid` is where `placed` says (pinned to its CPU alone, if placed).
fn in_place(tid: libc::pid_t, placed: &HelperPlacement) -> bool {
    let Some(cpu) = placed.cpu else {
        return true; // floating: nothing to keep
    };
    cpu::thread_affinity(tid).is_some_and(|mask| mask.count() == 1 && mask.contains(cpu))
}

/// `sched_setaffinity(tid, mask)`; the `errno` on failure.
fn set_affinity(tid: libc::pid_t, mask: &CpuSet) -> Result<(), i32> {
    let words = mask.as_words();
    // SAFETY: `words` is a readable buffer of exactly the size passed, laid out as the
    // kernel's mask.
    let rc = unsafe {
        libc::sched_setaffinity(
            tid,
            core::mem::size_of_val(words),
            words.as_ptr().cast::<libc::cpu_set_t>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    fn own_mask() -> CpuSet {
        cpu::thread_affinity(0).expect("this thread's mask")
    }

    #[test]
    fn a_refused_cpu_leaves_the_helper_unpinned_and_says_why() {
        // A CPU that exists on no machine this runs on: the kernel refuses it (EINVAL).
        let empty = std::path::Path::new("/nonexistent-rayforce-root");
        let mut mask = CpuSet::new();
        mask.insert(8000);
        let plan = cpu::plan(SysRoot::new(empty), &mask, Place::Spread, 1);
        assert_eq!(plan.spot(1).map(|s| s.cpu), Some(8000));
        let before = own_mask();
        let placed = std::thread::spawn(move || {
            let placed = apply(Some(&plan), 1, 0);
            (placed, own_mask())
        })
        .join()
        .unwrap();
        let (placed, mask_after) = placed;
        assert_eq!(
            placed.failure,
            Some(PlaceFailure::Os {
                cpu: 8000,
                errno: libc::EINVAL
            })
        );
        assert_eq!(placed.cpu, None);
        assert_eq!(mask_after, before, "the thread keeps the mask it had");
    }

    #[test]
    fn no_plan_or_no_spot_floats() {
        assert_eq!(apply(None, 1, 0).failure, Some(PlaceFailure::NoMask));
        let mut mask = own_mask();
        let first = mask.iter().next().unwrap();
        mask = CpuSet::new();
        mask.insert(first);
        let plan = cpu::plan(SysRoot::SYSTEM, &mask, Place::Spread, 1);
        let placed = std::thread::spawn(move || apply(Some(&plan), 2, 0))
            .join()
            .unwrap();
        assert_eq!(
            placed.failure,
            Some(PlaceFailure::NoCpu),
            "one CPU, helper 2"
        );
    }
}
