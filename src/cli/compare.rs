//! `rayforce-rt compare`: the built-in workloads under each policy, with `dispatch` and
//! `dispatch_wide`, run interleaved (A B C A B C ...) so every configuration sees the same
//! machine; medians and spreads of wall time, process CPU time and work per CPU-second.

use super::workloads::{HashJoin, Lookups, Mode};
use super::Failure;
use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::{process_cpu_time, Pool, Runtime};
use serde_json::json;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// A policy to compare (repeat the flag for several; default: all three).
    #[arg(long = "policy", value_name = "POLICY")]
    policies: Vec<CpuPolicy>,
    /// Probe-side rows of the hash join.
    #[arg(long, default_value_t = 130_000, value_parser = clap::value_parser!(u64).range(1..))]
    rows: u64,
    /// Probe dispatches per hash-join run.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    repeat: u64,
    /// Interleaved rounds (each runs every configuration once).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    rounds: u64,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    HashJoin,
    Lookups,
}

impl Workload {
    fn as_str(self) -> &'static str {
        match self {
            Workload::HashJoin => "hash_join",
            Workload::Lookups => "random_lookups",
        }
    }
}

struct Config {
    workload: Workload,
    policy: CpuPolicy,
    mode: Mode,
    width: usize,
    pool: usize,
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
    work: u64,
    checksum: Option<u64>,
}

/// The progress line on stderr: redrawn in place on a terminal, silent otherwise (the
/// caller then prints one line per round).
struct Progress(bool);

impl Progress {
    fn say(&self, line: std::fmt::Arguments<'_>) {
        if self.0 {
            eprint!("\r\x1b[K{line}");
        }
    }
}

/// (median, min, max) in milliseconds.
fn spread(samples: &[Duration]) -> (f64, f64, f64) {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[0], ms[ms.len() - 1])
}

/// Bytes of memory per probe-side row.
const ROW_BYTES: u64 = std::mem::size_of::<u64>() as u64;

/// `--rows` must fit in half of this machine's memory: a count that does not is refused
/// with one line, rather than aborting on a failed allocation.
fn check_rows(rows: u64) -> Result<(), Failure> {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let memory = u64::try_from(pages)
        .unwrap_or(0)
        .saturating_mul(u64::try_from(page).unwrap_or(0));
    let max_rows = (memory / 2 / ROW_BYTES).max(1);
    if rows > max_rows {
        return Err(Failure(format!(
            "--rows {rows}: the probe side would not fit in half of this machine's {} MiB \
             (expected at most {max_rows})",
            memory >> 20
        )));
    }
    Ok(())
}

pub(crate) fn run(args: &Args, runtime: &'static Runtime) -> Result<(), Failure> {
    check_rows(args.rows)?;
    let policies = if args.policies.is_empty() {
        CpuPolicy::ALL.to_vec()
    } else {
        args.policies.clone()
    };
    let sizing = runtime.sizing();
    let tunables = sizing.tunables.with_variables();
    let pools = policies
        .iter()
        .map(|&p| {
            Pool::builder()
                .policy(p)
                .cpu_counts(sizing.counts)
                .tunables(&tunables)
                .build()
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure(e.to_string()))?;
    let progress = Progress(std::io::stderr().is_terminal());
    progress.say(format_args!("compare: building the workloads"));
    let join = HashJoin::new(args.rows as usize, args.repeat as usize);
    let lookups = Lookups::new();
    let mut configs = Vec::new();
    for workload in [Workload::HashJoin, Workload::Lookups] {
        for (i, &policy) in policies.iter().enumerate() {
            for mode in [Mode::Dispatch, Mode::Wide] {
                let width = match mode {
                    Mode::Dispatch => pools[i].width(),
                    Mode::Wide => pools[i].wide_width(),
                };
                configs.push(Config {
                    workload,
                    policy,
                    mode,
                    width,
                    pool: i,
                    wall: vec![],
                    cpu: vec![],
                    work: 0,
                    checksum: None,
                });
            }
        }
    }
    for round in 1..=args.rounds {
        if !progress.0 {
            eprintln!("compare: round {round}/{}", args.rounds);
        }
        for config in &mut configs {
            progress.say(format_args!(
                "compare: round {round}/{}: {} {} {}",
                args.rounds,
                config.workload.as_str(),
                config.policy,
                config.mode.as_str()
            ));
            let pool = &pools[config.pool];
            let (cpu0, wall0) = (process_cpu_time(), Instant::now());
            let (checksum, work) = match config.workload {
                Workload::HashJoin => join.run(pool, config.mode),
                Workload::Lookups => lookups.run(pool, config.mode),
            };
            config.wall.push(wall0.elapsed());
            config.cpu.push(process_cpu_time() - cpu0);
            config.work = work;
            if config.checksum.is_some_and(|c| c != checksum) {
                return Err(Failure(format!(
                    "checksum changed between rounds for {}",
                    config.workload.as_str()
                )));
            }
            config.checksum = Some(checksum);
        }
    }
    progress.say(format_args!(
        "compare: {} rounds of {} configurations done\n",
        args.rounds,
        configs.len()
    ));
    for workload in [Workload::HashJoin, Workload::Lookups] {
        let sums: Vec<_> = configs
            .iter()
            .filter(|c| c.workload == workload)
            .map(|c| c.checksum)
            .collect();
        if sums.windows(2).any(|w| w[0] != w[1]) {
            return Err(Failure(format!(
                "{}: checksums differ between configurations: {sums:?}",
                workload.as_str()
            )));
        }
    }
    if args.json {
        print_json(&configs);
    } else {
        print_table(&configs);
    }
    Ok(())
}

/// "same width as P" when an earlier policy ran the same workload and mode at this width.
fn note(configs: &[Config], i: usize) -> String {
    let c = &configs[i];
    configs[..i]
        .iter()
        .find(|o| o.workload == c.workload && o.mode == c.mode && o.width == c.width)
        .map_or_else(String::new, |o| {
            format!("same width as {}: differences are noise", o.policy)
        })
}

fn print_table(configs: &[Config]) {
    println!(
        "{:<15} {:<12} {:<14} {:>5}  {:>22}  {:>22}  {:>12}  note",
        "workload",
        "policy",
        "mode",
        "width",
        "wall ms (min-max)",
        "cpu ms (min-max)",
        "Mwork/cpu-s"
    );
    for (i, c) in configs.iter().enumerate() {
        let (wall, wall_lo, wall_hi) = spread(&c.wall);
        let (cpu, cpu_lo, cpu_hi) = spread(&c.cpu);
        println!(
            "{:<15} {:<12} {:<14} {:>5}  {:>8.1} ({:>5.1}-{:>5.1})  {:>8.1} ({:>5.1}-{:>5.1})  {:>12.1}  {}",
            c.workload.as_str(),
            c.policy.as_str(),
            c.mode.as_str(),
            c.width,
            wall,
            wall_lo,
            wall_hi,
            cpu,
            cpu_lo,
            cpu_hi,
            c.work as f64 / (cpu / 1e3) / 1e6,
            note(configs, i)
        );
    }
}

fn print_json(configs: &[Config]) {
    let rows: Vec<_> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (wall, wall_lo, wall_hi) = spread(&c.wall);
            let (cpu, cpu_lo, cpu_hi) = spread(&c.cpu);
            json!({
                "workload": c.workload.as_str(),
                "policy": c.policy.as_str(),
                "mode": c.mode.as_str(),
                "width": c.width,
                "wall_ms": {"median": wall, "min": wall_lo, "max": wall_hi},
                "cpu_ms": {"median": cpu, "min": cpu_lo, "max": cpu_hi},
                "work": c.work,
                "work_per_cpu_second": c.work as f64 / (cpu / 1e3),
                "checksum": c.checksum,
                "note": note(configs, i),
            })
        })
        .collect();
    println!("{}", json!({ "configurations": rows }));
}
