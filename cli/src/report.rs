//! `Report`: what `rayforce-rt inspect` prints, as a table or as JSON: the CPU reading (the
//! counts per policy with their sources, the quota), the chosen policy's count, what it sizes
//! (arena limit, pool widths), and for this process how its pool follows the machine. The
//! JSON is the library's own types serialized (its `serde` feature).

#[cfg(target_os = "linux")]
use crate::topology_report::{write_nodes, NodeReport, PlacementReport};
use rayforce_pool::Stats;
#[cfg(target_os = "linux")]
use rayforce_rt::cpu::{self, Affinity, SysRoot};
use rayforce_rt::cpu::{CgroupVersion, CpuCounts, CpuPolicy, QuotaCap};
use rayforce_rt::{Runtime, Tunables};
use serde::Serialize;
use std::fmt;

/// The CPU reading and what it sizes.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Counts per policy, where each came from, whether it fell back, and the cgroup quota.
    pub counts: CpuCounts,
    /// Whether the quota caps the counts (tunable `rayforce.cpu.quota`).
    pub quota_cap: QuotaCap,
    /// The chosen policy.
    pub policy: CpuPolicy,
    /// The chosen policy's count, capped by the quota when the cap applies.
    pub count: usize,
    /// The allocator's arena limit.
    pub arena_limit: usize,
    /// The pool's width (`dispatch`), the caller included.
    pub pool_width: usize,
    /// The pool's `dispatch_wide` width.
    pub pool_wide_width: usize,
    /// This process's pool: how old its reading is, the changes it applied, the helpers it
    /// could not start and why (absent for a predicted report).
    pub pool: Option<Stats>,
    /// The width of rayon's global pool, when the runtime built it
    /// (`Runtime::init_rayon_global`); absent otherwise.
    pub rayon_threads: Option<usize>,
    /// The NUMA nodes among the schedulable CPUs (one node without node files).
    #[cfg(target_os = "linux")]
    pub nodes: Vec<NodeReport>,
    /// Where the helpers go under `rayforce.pool.place` (or `inspect --place`); absent
    /// when placement is off.
    #[cfg(target_os = "linux")]
    pub placement: Option<PlacementReport>,
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
            counts: *counts,
            quota_cap: tunables.quota_cap(),
            policy,
            count: counts.count(policy, tunables.quota_cap()),
            arena_limit,
            pool_width,
            pool_wide_width,
            pool: None,
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

    /// This process, as `runtime` sized it: its latest CPU reading, the arena limit in force,
    /// the pool's widths and how it follows the machine, rayon's global pool if the runtime
    /// built it, the NUMA nodes, and where the helpers are placed.
    pub fn of_runtime(runtime: &'static Runtime) -> Report {
        let sizing = runtime.sizing();
        let pool = runtime.pool();
        let mut report = Report::new(
            &runtime.reading(),
            &sizing.tunables,
            sizing.policy,
            runtime.alloc_stats().limit,
            (pool.width(), pool.wide_width()),
        );
        report.pool = Some(pool.stats());
        report.rayon_threads = runtime.rayon_threads();
        #[cfg(target_os = "linux")]
        {
            let cpus = cpu::schedulable_cpus(SysRoot::SYSTEM, Affinity::Process);
            report.nodes = NodeReport::read(SysRoot::SYSTEM, &cpus);
            report.placement = PlacementReport::of(runtime.tunables().place(), &pool.placement());
        }
        report
    }

    /// The counts per policy with their sources, the quota, and the chosen count.
    fn write_counts(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<12} {:>5}  {:<32} fallback",
            "policy", "count", "source"
        )?;
        for policy in CpuPolicy::ALL {
            let count = self.counts.get(policy);
            let fallback = if count.fallback { "yes" } else { "no" };
            writeln!(
                f,
                "{:<12} {:>5}  {:<32} {fallback}",
                policy.as_str(),
                count.value,
                count.source.as_str()
            )?;
        }
        match &self.counts.quota {
            None => writeln!(f, "\ncgroup quota: none")?,
            Some(q) => writeln!(
                f,
                "\ncgroup quota: {:.2} CPUs ({} us per {} us, cgroup {}), cap {}{}",
                q.quota_us as f64 / q.period_us as f64,
                q.quota_us,
                q.period_us,
                match q.version {
                    CgroupVersion::V1 => "v1",
                    CgroupVersion::V2 => "v2",
                },
                q.cap(),
                match self.quota_cap {
                    QuotaCap::Apply => "",
                    QuotaCap::Ignore => " (ignored: rayforce.cpu.quota=0)",
                }
            )?,
        }
        write!(f, "chosen policy: {} -> {} CPUs", self.policy, self.count)
    }
}

/// The human-readable table.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_counts(f)?;
        writeln!(f)?;
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
        if let Some(stats) = &self.pool {
            write!(
                f,
                "\nreading: {:.1} s old, {} change(s) applied",
                stats.reading_age.as_secs_f64(),
                stats.resizes
            )?;
            if let Some(error) = &stats.start_error {
                write!(
                    f,
                    "\nhelpers: {} could not be started: {error}",
                    stats.missing_helpers
                )?;
            }
        }
        Ok(())
    }
}
