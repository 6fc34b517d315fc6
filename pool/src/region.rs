//! `Region`: how one dispatch runs (narrow or wide, on how many participants, in what order
//! its tasks are claimed, whether they may wait for each other), and `Forked`, a region cut
//! short by a fork from inside one of its tasks.

use crate::site_rate::Site;
use crate::sync::AtomicBool;
use crate::unwind::Panic;

/// A region cut short by a fork from inside one of its tasks, seen from the child (README
/// "Fork"), with the first panic its participants caught there, if any.
pub(crate) struct Forked(pub(crate) Option<Panic>);

impl Forked {
    /// Panics, saying that the operation's results are missing here. The payload kept is
    /// leaked, not dropped: a helper of the parent may have made it.
    pub(crate) fn panic_in_child(self) -> ! {
        std::mem::forget(self.0);
        panic!(
            "a task forked inside a data-parallel operation: in the child, the results of the \
             parent's helpers are missing"
        )
    }
}

/// In what order a region's tasks beyond the participants' first ones are claimed (README
/// "Claiming").
#[derive(Clone, Copy)]
pub(crate) enum Claims<'a> {
    /// Each participant claims first from its home, a contiguous share of the tasks of its
    /// own, then from the others': what it touches stays in its cache from one region over
    /// the same data to the next. For independent tasks that need no order. None once the
    /// flag (if any) is set: a search for any match found one, or a source ended
    /// (`while_some` past a `None`).
    FromHomes(Option<&'a AtomicBool>),
    /// As `FromHomes`, with sleeping helpers woken at the post, not late (README "Waking
    /// late"): a search over coarse positions (`Drive::coarse`), whose caller's first task
    /// may not end before another participant's match, so may never reach the tick that
    /// wakes them.
    FromHomesWakingAtPost(Option<&'a AtomicBool>),
    /// In index order, none once the flag (if any) is set (a source that ended): an ordered
    /// search skips the ranges past its best match, and a scan's blocks find the blocks
    /// before them published.
    InOrder(Option<&'a AtomicBool>),
}

impl<'a> Claims<'a> {
    /// The flag that stops the claims, if any.
    pub(crate) fn stop(self) -> Option<&'a AtomicBool> {
        match self {
            Claims::FromHomes(stop)
            | Claims::FromHomesWakingAtPost(stop)
            | Claims::InOrder(stop) => stop,
        }
    }
}

/// How a region runs: narrow or wide, on how many participants at most, below what worker
/// index, in what order its tasks are claimed, and whether they may wait for each other.
#[derive(Clone, Copy)]
pub(crate) struct Region<'a> {
    pub(crate) wide: bool,
    pub(crate) participants: usize,
    /// Every participant's worker index is below this (`dispatch_with_worker`'s bound).
    pub(crate) workers: usize,
    pub(crate) claims: Claims<'a>,
    /// Whether its tasks never wait for one another, as an operation's items: then sleeping
    /// helpers are woken only once the caller has worked as long as a wake-up takes (README
    /// "Waking late"), and with every slot taken the tasks run inline. `dispatch`'s tasks
    /// may wait for each other: it wakes at once, and waits for a slot.
    pub(crate) independent: bool,
    /// The most tasks one claim takes (an iterator's `with_max_len`), at least 1.
    pub(crate) most_per_claim: usize,
    /// An operation's call site, whose remembered rate may run the region on its caller
    /// alone (README "Regions too small to share"), and which learns the rate it ran at.
    pub(crate) site: Option<Site>,
}

impl Region<'_> {
    /// As `dispatch`: up to the pool's width, every task.
    pub(crate) const NARROW: Region<'static> = Region {
        wide: false,
        participants: usize::MAX,
        workers: usize::MAX,
        claims: Claims::InOrder(None),
        independent: false,
        most_per_claim: usize::MAX,
        site: None,
    };
    /// As `dispatch_wide`: up to the pool's wide width, every task.
    pub(crate) const WIDE: Region<'static> = Region {
        wide: true,
        ..Region::NARROW
    };
}
