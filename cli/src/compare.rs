//! `rayforce-rt compare`: the built-in workloads on rayforce-rt (under each policy whose
//! count differs, with `dispatch` and `dispatch_wide`) and on the stack it replaces, rayon
//! on the system allocator and on raw mimalloc, run interleaved (A B C A B C ...) so every
//! configuration sees the same machine. A verdict per workload first, then medians and
//! spreads of wall time, process CPU time and work per CPU-second; `--plot` draws them.

use crate::baseline::Baseline;
use crate::engine::Kind;
use crate::failure::Failure;
use crate::plot;
use crate::spread::Spread;
use crate::workloads::{Exec, Mode, Sample, Sizes, Workload, Workloads};
use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::{Pool, Runtime};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// A policy to compare (repeat the flag for several; default: all three).
    #[arg(long = "policy", value_name = "POLICY")]
    policies: Vec<CpuPolicy>,
    /// Probe-side rows of the hash join (default 130000; 65000 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    rows: Option<u64>,
    /// Probe dispatches per hash-join run, at most 100000 (default 200; 50 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    repeat: Option<u64>,
    /// Interleaved rounds, each running every configuration once (default 7; 3 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    rounds: Option<u64>,
    /// Smaller workloads and fewer rounds: about 2 seconds.
    #[arg(long)]
    quick: bool,
    /// One JSON object instead of the verdict and the table.
    #[arg(long)]
    json: bool,
    /// Also write a bar chart of the results to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// Who runs a configuration.
#[derive(Clone, PartialEq, Eq)]
enum Runner {
    /// The runtime's pool `pool`, with `mode`; `variants` are every (policy, mode) whose
    /// width is this one (they run the same, so they run once).
    Rayforce {
        pool: usize,
        mode: Mode,
        variants: Vec<(CpuPolicy, Mode)>,
    },
    /// Rayon in the baseline process `baseline`, which allocates with `allocator`.
    Rayon { baseline: usize, allocator: Kind },
}

/// One configuration of one workload and its samples, one per round.
struct Config {
    workload: Workload,
    runner: Runner,
    label: String,
    width: usize,
    samples: Vec<Sample>,
}

impl Config {
    fn is_rayforce(&self) -> bool {
        matches!(self.runner, Runner::Rayforce { .. })
    }

    /// "rayon + mimalloc (2 threads)": the label and the width.
    fn name(&self) -> String {
        format!("{} ({} threads)", self.label, self.width)
    }

    fn wall(&self) -> Spread {
        Spread::of(self.samples.iter().map(|s| ms(s.wall)))
    }

    fn cpu(&self) -> Spread {
        Spread::of(self.samples.iter().map(|s| ms(s.cpu)))
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
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

impl Drop for Progress {
    /// Clears the line it left, so that what follows (a failure's message) starts clean.
    fn drop(&mut self) {
        if self.0 {
            eprint!("\r\x1b[K");
        }
    }
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

impl Args {
    fn sizes(&self) -> Sizes {
        let base = if self.quick {
            Sizes::QUICK
        } else {
            Sizes::DEFAULT
        };
        Sizes {
            rows: self.rows.map_or(base.rows, |r| r as usize),
            repeat: self.repeat.map_or(base.repeat, |r| r as usize),
            ..base
        }
    }

    fn rounds(&self) -> u64 {
        self.rounds.unwrap_or(if self.quick { 3 } else { 7 })
    }
}

/// "(any policy, either dispatch)", "(physical/online, dispatch)" when the variants are every
/// pairing of their policies and modes; else each "policy mode", joined by " = ".
fn variants_label(variants: &[(CpuPolicy, Mode)]) -> String {
    let mut policies: Vec<CpuPolicy> = Vec::new();
    let mut modes: Vec<Mode> = Vec::new();
    for &(policy, mode) in variants {
        if !policies.contains(&policy) {
            policies.push(policy);
        }
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    if policies.len() * modes.len() == variants.len() {
        let policies = if policies.len() == CpuPolicy::ALL.len() {
            "any policy".to_owned()
        } else {
            let names: Vec<_> = policies.iter().map(|p| p.as_str()).collect();
            names.join("/")
        };
        let modes = match modes[..] {
            [mode] => mode.as_str(),
            _ => "either dispatch",
        };
        format!("({policies}, {modes})")
    } else {
        let v: Vec<_> = variants
            .iter()
            .map(|(p, m)| format!("{} {}", p.as_str(), m.as_str()))
            .collect();
        v.join(" = ")
    }
}

/// The configurations of every workload: one per distinct width of the runtime's pools,
/// then the baselines: rayon on the system allocator and on mimalloc at each of those widths,
/// rayon on the runtime at the width the runtime gives it (what a program that swaps two
/// lines gets).
fn configurations(pools: &[(CpuPolicy, Pool)], baselines: &[Baseline]) -> Vec<Config> {
    // (width, runner) of the runtime, one per distinct width.
    let mut runtime: Vec<(usize, Runner)> = Vec::new();
    for (i, (policy, pool)) in pools.iter().enumerate() {
        for (mode, width) in [
            (Mode::Dispatch, pool.width()),
            (Mode::Wide, pool.wide_width()),
        ] {
            let same_width = runtime.iter_mut().find(|(w, _)| *w == width);
            if let Some((_, Runner::Rayforce { variants, .. })) = same_width {
                variants.push((*policy, mode));
            } else {
                let variants = vec![(*policy, mode)];
                runtime.push((
                    width,
                    Runner::Rayforce {
                        pool: i,
                        mode,
                        variants,
                    },
                ));
            }
        }
    }
    let baseline_runners = |own_width: bool| {
        baselines
            .iter()
            .enumerate()
            .filter(move |(_, b)| (b.kind() == Kind::Runtime) == own_width)
            .map(|(baseline, b)| {
                let runner = Runner::Rayon {
                    baseline,
                    allocator: b.kind(),
                };
                (b.default_width(), runner)
            })
    };
    let mut configs = Vec::new();
    for workload in Workload::ALL {
        let runners =
            runtime
                .iter()
                .cloned()
                .chain(runtime.iter().flat_map(|(width, _)| {
                    baseline_runners(false).map(|(_, runner)| (*width, runner))
                }))
                .chain(baseline_runners(true));
        for (width, runner) in runners {
            let label = match &runner {
                Runner::Rayforce { variants, .. } => {
                    format!("rayforce-rt {}", variants_label(variants))
                }
                Runner::Rayon { allocator, .. } => allocator.rayon_label(),
            };
            configs.push(Config {
                workload,
                runner,
                label,
                width,
                samples: vec![],
            });
        }
    }
    configs
}

pub(crate) fn run(args: &Args, runtime: &'static Runtime) -> Result<(), Failure> {
    crate::failure::refuse_if_strict(runtime.tunables())?;
    if let Some(rows) = args.rows {
        check_rows(rows)?;
    }
    if let Some(path) = &args.plot {
        plot::check_writable(path)
            .map_err(|e| Failure(format!("--plot {}: {e}", path.display())))?;
    }
    let sizes = args.sizes();
    let rounds = args.rounds();
    let mut policies = Vec::new();
    for &policy in &args.policies {
        if !policies.contains(&policy) {
            policies.push(policy); // a repeated flag names the same configuration
        }
    }
    if policies.is_empty() {
        policies = CpuPolicy::ALL.to_vec();
    }
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
                .map(|pool| (p, pool))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure(e.to_string()))?;
    let progress = Progress(std::io::stderr().is_terminal());
    progress.say(format_args!("compare: building the workloads"));
    let mut baselines = [Kind::System, Kind::Mimalloc, Kind::Runtime]
        .into_iter()
        .map(|kind| Baseline::start(kind, &sizes))
        .collect::<Result<Vec<_>, _>>()?;
    let workloads = Workloads::new(&sizes);
    let mut configs = configurations(&pools, &baselines);
    for round in 1..=rounds {
        if !progress.0 {
            eprintln!("compare: round {round}/{rounds}");
        }
        for config in &mut configs {
            progress.say(format_args!(
                "compare: round {round}/{rounds}: {} {}",
                config.workload.as_str(),
                config.label
            ));
            let sample = match &config.runner {
                Runner::Rayforce { pool, mode, .. } => {
                    workloads.measure(config.workload, &Exec::Pool(&pools[*pool].1, *mode))
                }
                Runner::Rayon { baseline, .. } => {
                    baselines[*baseline].measure(config.workload, config.width)?
                }
            };
            config.samples.push(sample);
        }
    }
    drop(baselines);
    progress.say(format_args!(
        "compare: {rounds} rounds of {} configurations done\n",
        configs.len()
    ));
    check_checksums(&configs)?;
    let verdicts: Vec<Verdict> = Workload::ALL
        .into_iter()
        .map(|w| Verdict::of(w, &configs))
        .collect();
    if args.json {
        print_json(&configs, &verdicts);
    } else {
        print_verdicts(&verdicts);
        println!();
        print_table(&configs);
    }
    if let Some(path) = &args.plot {
        let bars: Vec<plot::Bar<'_>> = configs
            .iter()
            .map(|c| plot::Bar {
                workload: c.workload.as_str(),
                name: c.name(),
                baseline: !c.is_rayforce(),
                wall: c.wall(),
                cpu: c.cpu(),
            })
            .collect();
        plot::write(path, &bars).map_err(|e| Failure(format!("--plot {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Every configuration of a workload returned the same checksum in every round.
fn check_checksums(configs: &[Config]) -> Result<(), Failure> {
    for workload in Workload::ALL {
        let mut seen: Option<(u64, &str)> = None;
        for config in configs.iter().filter(|c| c.workload == workload) {
            for sample in &config.samples {
                match seen {
                    Some((sum, who)) if sum != sample.checksum => {
                        return Err(Failure(format!(
                            "{}: checksums differ: {sum} ({who}), {} ({})",
                            workload.as_str(),
                            sample.checksum,
                            config.label
                        )))
                    }
                    Some(_) => {}
                    None => seen = Some((sample.checksum, &config.label)),
                }
            }
        }
    }
    Ok(())
}

/// A workload's result: the runtime's best configuration against each baseline's best,
/// the best baseline first.
struct Verdict {
    workload: Workload,
    rayforce: String,
    against: Vec<Against>,
    /// Where the runtime's configurations differ: which won, and its wall time against the
    /// runner-up's.
    policy_winner: Option<(String, f64)>,
}

/// The runtime against one baseline: per-round ratios, rayforce-rt over the baseline.
struct Against {
    baseline: String,
    wall: Spread,
    cpu: Spread,
}

impl Verdict {
    fn of(workload: Workload, configs: &[Config]) -> Verdict {
        let fastest_first = |keep: &dyn Fn(&Config) -> bool| {
            let mut them: Vec<&Config> = configs
                .iter()
                .filter(|c| c.workload == workload && keep(c))
                .collect();
            them.sort_by(|a, b| a.wall().median.total_cmp(&b.wall().median));
            them
        };
        let ours = fastest_first(&Config::is_rayforce);
        let mut against: Vec<Against> = Vec::new();
        let mut compared: Vec<&str> = Vec::new();
        for theirs in fastest_first(&|c: &Config| !c.is_rayforce()) {
            if compared.contains(&theirs.label.as_str()) {
                continue; // a slower width of a baseline already compared
            }
            compared.push(&theirs.label);
            let ratio = |f: fn(&Sample) -> Duration| {
                Spread::of(
                    ours[0]
                        .samples
                        .iter()
                        .zip(&theirs.samples)
                        .map(|(a, b)| f(a).as_secs_f64() / f(b).as_secs_f64()),
                )
            };
            against.push(Against {
                baseline: theirs.name(),
                wall: ratio(|s| s.wall),
                cpu: ratio(|s| s.cpu),
            });
        }
        Verdict {
            workload,
            rayforce: ours[0].label.clone(),
            against,
            policy_winner: ours.get(1).map(|second| {
                (
                    ours[0].label.clone(),
                    ours[0].wall().median / second.wall().median,
                )
            }),
        }
    }

    /// `less` or `more` when every round's ratio is below or above 1, else `level`.
    fn word(
        spread: Spread,
        less: &'static str,
        more: &'static str,
        level: &'static str,
    ) -> &'static str {
        if spread.max < 1.0 {
            less
        } else if spread.min > 1.0 {
            more
        } else {
            level
        }
    }
}

fn print_verdicts(verdicts: &[Verdict]) {
    println!(
        "verdict: rayforce-rt's best against each baseline's best, the best baseline first \
         (ratios per round, median (min-max); below 1 is rayforce-rt ahead)"
    );
    for v in verdicts {
        for (i, a) in v.against.iter().enumerate() {
            println!(
                "  {:<15} {} {}: wall {}; CPU {}, {}",
                if i == 0 { v.workload.as_str() } else { "" },
                Verdict::word(a.wall, "faster than", "slower than", "level with"),
                a.baseline,
                a.wall.ratio_text(),
                a.cpu.ratio_text(),
                Verdict::word(a.cpu, "less", "more", "level"),
            );
        }
        match &v.policy_winner {
            Some((winner, ratio)) => println!(
                "  {:<15} best policy: {winner} ({ratio:.2}x the runner-up's wall time)",
                ""
            ),
            None => println!(
                "  {:<15} the policies compared have one width here: one configuration ({})",
                "", v.rayforce
            ),
        }
    }
}

fn print_table(configs: &[Config]) {
    let label = configs.iter().map(|c| c.label.len()).max().unwrap_or(0);
    println!(
        "{:<15} {:<label$} {:>5}  {:>22}  {:>22}  {:>12}",
        "workload",
        "configuration",
        "width",
        "wall ms (min-max)",
        "cpu ms (min-max)",
        "Mwork/cpu-s"
    );
    for c in configs {
        let (wall, cpu) = (c.wall(), c.cpu());
        println!(
            "{:<15} {:<label$} {:>5}  {:>8.1} ({:>5.1}-{:>5.1})  {:>8.1} ({:>5.1}-{:>5.1})  {:>12.1}",
            c.workload.as_str(),
            c.label,
            c.width,
            wall.median,
            wall.min,
            wall.max,
            cpu.median,
            cpu.min,
            cpu.max,
            c.samples[0].work as f64 / (cpu.median / 1e3) / 1e6,
        );
    }
}

fn print_json(configs: &[Config], verdicts: &[Verdict]) {
    let rows: Vec<Value> = configs
        .iter()
        .map(|c| {
            let (wall, cpu) = (c.wall(), c.cpu());
            let (implementation, allocator, variants) = match &c.runner {
                Runner::Rayforce { variants, .. } => (
                    "rayforce-rt",
                    "rayforce-rt",
                    variants
                        .iter()
                        .map(|(p, m)| json!({"policy": p.as_str(), "mode": m.as_str()}))
                        .collect(),
                ),
                Runner::Rayon { allocator, .. } => ("rayon", allocator.as_str(), vec![]),
            };
            json!({
                "workload": c.workload.as_str(),
                "label": c.label,
                "implementation": implementation,
                "allocator": allocator,
                "variants": variants,
                "width": c.width,
                "wall_ms": wall.json(),
                "cpu_ms": cpu.json(),
                "work": c.samples[0].work,
                "work_per_cpu_second": c.samples[0].work as f64 / (cpu.median / 1e3),
                "checksum": c.samples[0].checksum,
            })
        })
        .collect();
    let summary: Vec<Value> = verdicts
        .iter()
        .map(|v| {
            let against: Vec<Value> = v
                .against
                .iter()
                .map(|a| {
                    json!({"baseline": a.baseline, "wall_ratio": a.wall.json(), "cpu_ratio": a.cpu.json()})
                })
                .collect();
            let best = &v.against[0];
            json!({
                "workload": v.workload.as_str(),
                "rayforce": v.rayforce,
                "baseline": best.baseline,
                "wall_ratio": best.wall.json(),
                "cpu_ratio": best.cpu.json(),
                "against": against,
                "policy_winner": v.policy_winner.as_ref().map(|(w, r)| json!({"label": w, "wall_vs_runner_up": r})),
            })
        })
        .collect();
    println!("{}", json!({ "summary": summary, "configurations": rows }));
}
