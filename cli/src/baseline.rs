//! `compare`'s baselines: rayon on the system allocator, on raw mimalloc, and on the runtime
//! (its pool sized and bound by `Runtime::rayon_builder`), each in a process of its own (a
//! process has one global allocator), started once and driven line by line over its
//! standard input and output, so that its runs interleave with the runtime's.

use crate::engine::{Kind, ENGINE_VARIABLE};
use crate::failure::Failure;
use crate::workloads::{Exec, Sample, Sizes, Workload, Workloads};
use rayforce_rt::Runtime;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// The hidden subcommand a baseline process runs.
pub(crate) const SUBCOMMAND: &str = "compare-baseline";

/// The workload sizes, as `compare-baseline` takes them.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[arg(long)]
    rows: usize,
    #[arg(long)]
    repeat: usize,
    #[arg(long)]
    table_len: usize,
    #[arg(long)]
    steps: usize,
    #[arg(long)]
    group_rows: usize,
    #[arg(long)]
    queries: usize,
}

impl Args {
    fn sizes(&self) -> Sizes {
        Sizes {
            rows: self.rows,
            repeat: self.repeat,
            table_len: self.table_len,
            steps: self.steps,
            group_rows: self.group_rows,
            queries: self.queries,
        }
    }

    fn of(sizes: &Sizes) -> [String; 12] {
        [
            "--rows".into(),
            sizes.rows.to_string(),
            "--repeat".into(),
            sizes.repeat.to_string(),
            "--table-len".into(),
            sizes.table_len.to_string(),
            "--steps".into(),
            sizes.steps.to_string(),
            "--group-rows".into(),
            sizes.group_rows.to_string(),
            "--queries".into(),
            sizes.queries.to_string(),
        ]
    }
}

/// A running baseline process.
pub(crate) struct Baseline {
    kind: Kind,
    /// The width rayon's pool takes by default there (the runtime's width for rayon on the
    /// runtime, which runs at that width only; the others run at every width compared).
    default_width: usize,
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Baseline {
    /// Starts a process of this program on allocator `kind`, and waits until it has built
    /// the workloads.
    pub(crate) fn start(kind: Kind, sizes: &Sizes) -> Result<Baseline, Failure> {
        let failed = |err: &dyn std::fmt::Display| {
            Failure(format!(
                "cannot start the {} baseline: {err}",
                kind.rayon_label()
            ))
        };
        let exe = std::env::current_exe().map_err(|e| failed(&e))?;
        let mut child = Command::new(exe)
            .arg(SUBCOMMAND)
            .args(Args::of(sizes))
            .env(ENGINE_VARIABLE.to_str().expect("ASCII"), kind.as_str())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| failed(&e))?;
        let input = BufWriter::new(child.stdin.take().expect("piped"));
        let output = BufReader::new(child.stdout.take().expect("piped"));
        let mut baseline = Baseline {
            kind,
            default_width: 0,
            child,
            input,
            output,
        };
        let ready = baseline.reply()?;
        baseline.default_width = ready
            .strip_prefix(&format!("ready {} ", kind.as_str()))
            .and_then(|width| width.parse().ok())
            .ok_or_else(|| failed(&format!("it answered {ready:?}")))?;
        Ok(baseline)
    }

    /// The allocator this baseline runs on.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// The width rayon takes there when the program does not choose one.
    pub(crate) fn default_width(&self) -> usize {
        self.default_width
    }

    /// Runs `workload` once on a rayon pool of `width` threads in the baseline process.
    pub(crate) fn measure(&mut self, workload: Workload, width: usize) -> Result<Sample, Failure> {
        writeln!(self.input, "run {} {width}", workload.as_str())
            .and_then(|()| self.input.flush())
            .map_err(|e| self.lost(&e))?;
        let reply = self.reply()?;
        parse_sample(&reply).ok_or_else(|| self.lost(&format!("it answered {reply:?}")))
    }

    /// The next line the process wrote.
    fn reply(&mut self) -> Result<String, Failure> {
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) => Err(self.lost(&"it exited")),
            Ok(_) => Ok(line.trim_end().to_owned()),
            Err(err) => Err(self.lost(&err)),
        }
    }

    fn lost(&self, why: &dyn std::fmt::Display) -> Failure {
        Failure(format!(
            "the {} baseline failed: {why}",
            self.kind.rayon_label()
        ))
    }
}

impl Drop for Baseline {
    /// Ends the process: it holds nothing worth a graceful exit.
    fn drop(&mut self) {
        let _ = self.input.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ok <wall ns> <cpu ns> <checksum> <work>`.
fn parse_sample(line: &str) -> Option<Sample> {
    let mut fields = line.strip_prefix("ok ")?.split(' ');
    let mut next = || fields.next()?.parse::<u64>().ok();
    Some(Sample {
        wall: Duration::from_nanos(next()?),
        cpu: Duration::from_nanos(next()?),
        checksum: next()?,
        work: next()?,
    })
}

/// The baseline process: builds the workloads, says `ready <engine> <default width>`, then
/// runs each `run <workload> <width>` line it reads and answers `ok ...`, until its input
/// closes. On the runtime (`engine` `rayforce-rt`), rayon's pools come from
/// `Runtime::rayon_builder`: sized, named and bound by the runtime.
pub(crate) fn serve(args: &Args, engine: Kind, runtime: &'static Runtime) -> Result<(), Failure> {
    let variable = ENGINE_VARIABLE.to_str().expect("ASCII");
    if std::env::var_os(variable).is_none() {
        return Err(Failure(format!(
            "{SUBCOMMAND} runs only as compare's baseline process (set {variable} to system, \
             mimalloc or rayforce-rt)"
        )));
    }
    let builder = || match engine {
        Kind::Runtime => runtime.rayon_builder(),
        Kind::System | Kind::Mimalloc => rayon::ThreadPoolBuilder::new(),
    };
    let default_width = builder()
        .build()
        .map_err(|e| Failure(format!("{SUBCOMMAND}: {e}")))?
        .current_num_threads();
    let workloads = Workloads::new(&args.sizes());
    let mut pools: HashMap<usize, rayon::ThreadPool> = HashMap::new();
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| Failure(format!("{SUBCOMMAND}: {e}"));
    writeln!(out, "ready {} {default_width}", engine.as_str()).map_err(io)?;
    out.flush().map_err(io)?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(io)?;
        let mut words = line.split(' ');
        let (Some("run"), Some(workload), Some(width)) = (words.next(), words.next(), words.next())
        else {
            return Err(Failure(format!("{SUBCOMMAND}: unexpected line {line:?}")));
        };
        let workload = Workload::parse(workload)
            .ok_or_else(|| Failure(format!("{SUBCOMMAND}: no workload {workload:?}")))?;
        let width: usize = width
            .parse()
            .map_err(|_| Failure(format!("{SUBCOMMAND}: bad width {width:?}")))?;
        let pool = match pools.entry(width) {
            std::collections::hash_map::Entry::Occupied(pool) => pool.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => slot.insert(
                builder()
                    .num_threads(width)
                    .build()
                    .map_err(|e| Failure(format!("{SUBCOMMAND}: {e}")))?,
            ),
        };
        let sample = workloads.measure(workload, &Exec::Rayon(pool));
        writeln!(
            out,
            "ok {} {} {} {}",
            sample.wall.as_nanos(),
            sample.cpu.as_nanos(),
            sample.checksum,
            sample.work
        )
        .map_err(io)?;
        out.flush().map_err(io)?;
    }
    Ok(())
}
