//! Where a pool's helpers are, as [`Pool::placement`](crate::Pool::placement) reports it
//! (`rayforce.pool.place`; pinning itself is `place.rs`, Linux only: elsewhere no helper is
//! placed and the report is empty).

/// Why a helper is not where the plan wants it; it then runs unpinned, and nothing aborts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum PlaceFailure {
    /// `sched_setaffinity` refused `cpu` with this `errno` (`EINVAL`: the CPU is no longer
    /// allowed; `EPERM`).
    Os {
        /// The CPU the plan chose.
        cpu: usize,
        /// The error code.
        errno: i32,
    },
    /// More helpers than allowed CPUs: this one has no CPU of its own and floats.
    NoCpu,
    /// The process mask could not be read: no plan.
    NoMask,
}

impl std::fmt::Display for PlaceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            PlaceFailure::Os { cpu, errno } => write!(
                f,
                "pinning it to CPU {cpu} failed: {}; it runs unpinned",
                std::io::Error::from_raw_os_error(errno)
            ),
            PlaceFailure::NoCpu => f.write_str("no allowed CPU left for it: it floats"),
            PlaceFailure::NoMask => f.write_str("the process mask could not be read: it floats"),
        }
    }
}

/// Where one helper is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct HelperPlacement {
    /// The helper's index (1-based: the caller is worker 0).
    pub helper: usize,
    /// The CPU it is pinned to, if placed.
    pub cpu: Option<usize>,
    /// That CPU's NUMA node.
    pub node: Option<usize>,
    /// The node whose memory its arena prefers (only when the plan spans several nodes).
    pub memory_node: Option<usize>,
    /// Why it is not placed, if it is not.
    pub failure: Option<PlaceFailure>,
}
