//! `rayforce-rt inspect`: the counts per policy, their sources and fallbacks, the quota, the
//! arena limit and pool width they give, the NUMA nodes, and where placement puts helpers.

use crate::failure::Failure;
use crate::report::Report;
use crate::topology_report::{NodeReport, PlacementReport};
use rayforce_rt::cpu::{self, Affinity, CpuPolicy, CpuSet, Place, Source, SysRoot};
use rayforce_rt::Runtime;
use std::path::PathBuf;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Read every sysfs and procfs file under DIR (a dump laid out like /); the affinity
    /// then defaults to all online CPUs of DIR.
    #[arg(long, value_name = "DIR")]
    sysfs_root: Option<PathBuf>,
    /// The affinity, in kernel list syntax (0-3,8), instead of this process's.
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    cpus: Option<Box<CpuSet>>,
    /// The policy whose count is chosen (default: rayforce.cpu.policy, physical).
    #[arg(long, value_name = "POLICY")]
    policy: Option<CpuPolicy>,
    /// The placement to show (off, spread or close; default: rayforce.pool.place): which
    /// CPU and node each helper would get.
    #[arg(long, value_name = "PLACE")]
    place: Option<Place>,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

fn parse_cpu_list(list: &str) -> Result<Box<CpuSet>, String> {
    let set = CpuSet::parse_list(list.as_bytes()).map_err(|e| e.to_string())?;
    if set.is_empty() {
        return Err("the list is empty (expected at least one CPU, such as 0-3,8)".into());
    }
    Ok(Box::new(set))
}

pub(crate) fn run(args: &Args, runtime: &'static Runtime) -> Result<(), Failure> {
    crate::failure::refuse_if_strict(runtime.tunables())?;
    if let Some(dir) = &args.sysfs_root {
        let cpu_dir = dir.join("sys/devices/system/cpu");
        if !dir.is_dir() {
            let what = if dir.exists() {
                "not a directory (expected a directory laid out like /)"
            } else {
                "no such directory"
            };
            return Err(Failure(format!("--sysfs-root {}: {what}", dir.display())));
        }
        if !cpu_dir.is_dir() {
            return Err(Failure(format!(
                "--sysfs-root {}: no sys/devices/system/cpu under it (expected a directory laid out like /)",
                dir.display()
            )));
        }
    }
    let root = args
        .sysfs_root
        .as_deref()
        .map_or(SysRoot::SYSTEM, SysRoot::new);
    let affinity = match (&args.cpus, &args.sysfs_root) {
        (Some(set), _) => Affinity::Given(set),
        (None, Some(_)) => Affinity::AllOnline,
        (None, None) => Affinity::Process,
    };
    let this_process = args.sysfs_root.is_none() && args.cpus.is_none() && args.policy.is_none();
    let report = if this_process && args.place.is_none() {
        Report::of_runtime(runtime) // this process, as its own Runtime sized it, placed as it is
    } else {
        let counts = cpu::read_at(root, affinity);
        if let (Some(dir), Source::Sysconf) = (&args.sysfs_root, counts.online.source) {
            // Its online count would be this machine's, not the dump's.
            return Err(Failure(format!(
                "--sysfs-root {}: no readable CPU list under sys/devices/system/cpu (expected \
                 its `online` file or cpuN directories)",
                dir.display()
            )));
        }
        if let Some(set) = &args.cpus {
            if counts.schedulable.fallback {
                return Err(Failure(format!(
                    "--cpus {set}: none of these CPUs is online (expected CPUs from the online list)"
                )));
            }
        }
        let tunables = runtime.tunables();
        let policy = args.policy.unwrap_or_else(|| tunables.policy());
        let mut report = Report::predicted(&counts, tunables, policy);
        let cpus = cpu::schedulable_cpus(root, affinity);
        report.nodes = NodeReport::read(root, &cpus);
        let place = args.place.unwrap_or_else(|| tunables.place());
        let helpers = report.pool_wide_width - 1;
        report.placement = PlacementReport::planned(root, &cpus, place, helpers);
        report
    };
    if args.json {
        let json = serde_json::to_string(&report).map_err(|e| Failure(e.to_string()))?;
        println!("{json}");
    } else {
        println!("{report}");
    }
    Ok(())
}
