//! `Report`: what `rayforce-rt inspect` prints, as a table or as JSON: the CPU counts per
//! policy with their sources (`CpuReport`), and what they size (arena limit, pool width).

#[cfg(target_os = "linux")]
use crate::topology_report::{write_nodes, NodeReport, PlacementReport};
use rayforce_tunables::cpu::{CgroupVersion, Count, CpuCounts, CpuPolicy, QuotaCap};
use rayforce_tunables::Tunables;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// The counts per policy, where each came from, the quota, and the chosen policy's count.
#[derive(Clone, Debug, Serialize)]
pub struct CpuReport {
    /// CPUs online.
    pub online: usize,
    /// CPUs this process may run on.
    pub schedulable: usize,
    /// Physical cores among the schedulable CPUs.
    pub physical: usize,
    /// Where each count came from, by policy word.
    pub sources: BTreeMap<&'static str, &'static str>,
    /// Whether each count fell back, by policy word.
    pub fallback: BTreeMap<&'static str, bool>,
    /// The cgroup CPU quota, if any.
    pub quota: Option<QuotaReport>,
    /// The chosen policy.
    #[serde(serialize_with = "policy_word")]
    pub policy: CpuPolicy,
    /// The chosen policy's count, capped by the quota when the cap applies.
    pub count: usize,
}

/// A cgroup CPU quota as reported.
#[derive(Clone, Debug, Serialize)]
pub struct QuotaReport {
    /// CPU time per period, microseconds.
    pub quota_us: u64,
    /// Period, microseconds.
    pub period_us: u64,
    /// `ceil(quota / period)`: the cap on every count.
    pub cap: usize,
    /// Whether the cap applies (tunable `rayforce.cpu.quota`).
    pub applied: bool,
    /// `v1` or `v2`.
    pub cgroup: &'static str,
}

fn policy_word<S: serde::Serializer>(policy: &CpuPolicy, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(policy.as_str())
}

/// `f` of each policy's count, keyed by the policy's word.
fn per_policy<T>(counts: &CpuCounts, f: impl Fn(&Count) -> T) -> BTreeMap<&'static str, T> {
    CpuPolicy::ALL
        .map(|p| (p.as_str(), f(counts.get(p))))
        .into()
}

impl CpuReport {
    /// The report of `counts` for `policy`.
    pub fn new(counts: &CpuCounts, policy: CpuPolicy, cap: QuotaCap) -> CpuReport {
        CpuReport {
            online: counts.online.value,
            schedulable: counts.schedulable.value,
            physical: counts.physical.value,
            sources: per_policy(counts, |c| c.source.as_str()),
            fallback: per_policy(counts, |c| c.fallback),
            quota: counts.quota.map(|q| QuotaReport {
                quota_us: q.quota_us,
                period_us: q.period_us,
                cap: q.cap(),
                applied: cap == QuotaCap::Apply,
                cgroup: match q.version {
                    CgroupVersion::V1 => "v1",
                    CgroupVersion::V2 => "v2",
                },
            }),
            policy,
            count: counts.count(policy, cap),
        }
    }
}

/// The human-readable table.
impl fmt::Display for CpuReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<12} {:>5}  {:<32} fallback",
            "policy", "count", "source"
        )?;
        for (policy, value) in [
            (CpuPolicy::Online, self.online),
            (CpuPolicy::Schedulable, self.schedulable),
            (CpuPolicy::Physical, self.physical),
        ] {
            let name = policy.as_str();
            let fallback = if self.fallback[name] { "yes" } else { "no" };
            writeln!(
                f,
                "{name:<12} {value:>5}  {:<32} {fallback}",
                self.sources[name]
            )?;
        }
        match &self.quota {
            None => writeln!(f, "\ncgroup quota: none")?,
            Some(q) => writeln!(
                f,
                "\ncgroup quota: {:.2} CPUs ({} us per {} us, cgroup {}), cap {}{}",
                q.quota_us as f64 / q.period_us as f64,
                q.quota_us,
                q.period_us,
                q.cgroup,
                q.cap,
                if q.applied {
                    ""
                } else {
                    " (ignored: rayforce.cpu.quota=0)"
                }
            )?,
        }
        write!(f, "chosen policy: {} -> {} CPUs", self.policy, self.count)
    }
}

/// The CPU report and what it sizes.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Counts, sources, quota, policy.
    #[serde(flatten)]
    pub cpu: CpuReport,
    /// The allocator's arena limit.
    pub arena_limit: usize,
    /// The pool's width (`dispatch`), the caller included.
    pub pool_width: usize,
    /// The pool's `dispatch_wide` width.
    pub pool_wide_width: usize,
    /// How this process's pool follows the machine (absent for a predicted report).
    #[serde(flatten)]
    pub follow: Option<FollowReport>,
    /// The width of rayon's global pool, when the runtime built it
    /// (`Runtime::init_rayon_global`, feature `rayon`); absent otherwise.
    pub rayon_threads: Option<usize>,
    /// The NUMA nodes among the schedulable CPUs (one node without node files).
    #[cfg(target_os = "linux")]
    pub nodes: Vec<NodeReport>,
    /// Where the helpers go under `rayforce.pool.place` (or `inspect --place`); absent
    /// when placement is off.
    #[cfg(target_os = "linux")]
    pub placement: Option<PlacementReport>,
}

/// How a running pool follows the machine, and what it could not start.
#[derive(Clone, Debug, Serialize)]
pub struct FollowReport {
    /// How long ago the CPUs were last read, in milliseconds.
    pub reading_age_ms: f64,
    /// Readings that changed the pool's widths or spin budget.
    pub resizes: u64,
    /// Helpers the widths call for that could not be started.
    pub missing_helpers: usize,
    /// Why, when some could not be started.
    pub start_error: Option<String>,
}

impl FollowReport {
    /// The report of a pool's statistics.
    pub fn of(stats: &rayforce_pool::Stats) -> FollowReport {
        FollowReport {
            reading_age_ms: stats.reading_age.as_secs_f64() * 1e3,
            resizes: stats.resizes,
            missing_helpers: stats.missing_helpers,
            start_error: stats.start_error.map(|failure| failure.to_string()),
        }
    }
}

impl Report {
    /// The report of `counts` under `policy` (quota cap from `tunables`), with the sizes
    /// they gave.
    pub fn new(
        counts: &CpuCounts,
        tunables: &Tunables,
        policy: CpuPolicy,
        arena_limit: usize,
        (pool_width, pool_wide_width): (usize, usize),
    ) -> Report {
        Report {
            cpu: CpuReport::new(counts, policy, tunables.quota_cap()),
            arena_limit,
            pool_width,
            pool_wide_width,
            follow: None,
            rayon_threads: None,
            #[cfg(target_os = "linux")]
            nodes: Vec::new(),
            #[cfg(target_os = "linux")]
            placement: None,
        }
    }

    /// What `counts`, `tunables` and `policy` would size, without building anything (for a
    /// reading of another machine, or another policy).
    pub fn predicted(counts: &CpuCounts, tunables: &Tunables, policy: CpuPolicy) -> Report {
        let cpu_count = counts.count(policy, tunables.quota_cap());
        let arena_limit = rayforce_alloc::arena_limit(tunables, cpu_count);
        let widths = rayforce_pool::widths(tunables, policy, counts);
        Report::new(counts, tunables, policy, arena_limit, widths)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.cpu)?;
        writeln!(f, "arena limit: {}", self.arena_limit)?;
        write!(
            f,
            "pool width: {} (wide: {})",
            self.pool_width, self.pool_wide_width
        )?;
        #[cfg(target_os = "linux")]
        {
            write_nodes(f, &self.nodes)?;
            if let Some(placement) = &self.placement {
                write!(f, "\n{placement}")?;
            }
        }
        if let Some(threads) = self.rayon_threads {
            write!(f, "\nrayon: {threads} threads (built by the runtime)")?;
        }
        if let Some(follow) = &self.follow {
            write!(
                f,
                "\nreading: {:.1} s old, {} change(s) applied",
                follow.reading_age_ms / 1e3,
                follow.resizes
            )?;
            if let Some(error) = &follow.start_error {
                write!(
                    f,
                    "\nhelpers: {} could not be started: {error}",
                    follow.missing_helpers
                )?;
            }
        }
        Ok(())
    }
}
