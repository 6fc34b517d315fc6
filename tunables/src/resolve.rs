//! `Tunables`: every tunable's value and where it came from, resolved by precedence,
//! lowest first: built-in default < chosen in code < per-knob variable < `RAYFORCE_TUNABLES`.

use crate::cpu::{CpuPolicy, Place, QuotaCap};
use crate::diagnostic::{Diagnostic, Diagnostics, Origin, Problem};
use crate::env;
use crate::parse;
use crate::registry::{self, Id, COUNT};
use crate::setting::{Setting, ValueSource};
use core::fmt;

/// Whether the environment may tune the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Environment {
    /// Read `RAYFORCE_TUNABLES` and the per-knob variables (unless setuid/setgid).
    #[default]
    Read,
    /// Hermetic: only defaults and the program's choices.
    Ignore,
}

/// What the program chose in code; `const`, so a `static` runtime can hold it.
///
/// ```
/// use rayforce_tunables::{Choices, Environment, Tunables};
/// use rayforce_tunables::cpu::CpuPolicy;
/// static CHOICES: Choices = Choices::new().policy(CpuPolicy::Online).environment(Environment::Ignore);
/// assert_eq!(Tunables::resolve(&CHOICES).policy(), CpuPolicy::Online);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Choices {
    values: [Option<u64>; COUNT],
    environment: Environment,
    strict_aborts: bool,
}

/// Shows each chosen tunable by name, its value as an operator would write it.
impl fmt::Debug for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// One chosen value, written by its kind's rule.
        struct Chosen(Id, u64);
        impl fmt::Debug for Chosen {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.tunable().kind.format(self.1, f)
            }
        }
        let mut shown = f.debug_struct("Choices");
        for (id, value) in Id::ALL.into_iter().zip(self.values) {
            if let Some(value) = value {
                shown.field(id.tunable().name, &Chosen(id, value));
            }
        }
        shown
            .field("environment", &self.environment)
            .field("strict_aborts", &self.strict_aborts)
            .finish()
    }
}

impl Default for Choices {
    fn default() -> Self {
        Self::new()
    }
}

impl Choices {
    /// Nothing chosen: defaults, and the environment is read.
    pub const fn new() -> Choices {
        Choices {
            values: [None; COUNT],
            environment: Environment::Read,
            strict_aborts: true,
        }
    }

    /// Sets tunable `id` to `value` (a number, 0/1, or a word's index); an invalid value
    /// is reported as a diagnostic at resolution and the default kept.
    pub const fn set(mut self, id: Id, value: u64) -> Choices {
        self.values[id as usize] = Some(value);
        self
    }

    /// Chooses the CPU policy.
    pub const fn policy(self, policy: CpuPolicy) -> Choices {
        self.set(Id::CpuPolicy, policy as u64)
    }

    /// Chooses the helpers' placement (`rayforce.pool.place`; the environment can still
    /// change it, as every choice).
    pub const fn place(self, place: Place) -> Choices {
        self.set(Id::PoolPlace, place as u64)
    }

    /// Chooses whether the environment is read.
    pub const fn environment(mut self, environment: Environment) -> Choices {
        self.environment = environment;
        self
    }

    /// Whether strict mode (`rayforce.tunables.strict=1`) with any invalid tunable aborts
    /// the program (the default). A tool that reports tunables itself, such as
    /// `rayforce-rt tunables`, turns this off and exits with its own error instead.
    pub const fn strict_aborts(mut self, aborts: bool) -> Choices {
        self.strict_aborts = aborts;
        self
    }
}

/// Every tunable's resolved value and source, and every diagnostic.
#[derive(Clone, Copy, Debug)]
pub struct Tunables {
    settings: [Setting; COUNT],
    diagnostics: Diagnostics,
    environment: Environment,
    strict_aborts: bool,
    /// Whether start-up read strict mode's variable (so that it acts at the first
    /// allocation): the per-knob pass then leaves it.
    strict_variable_read: bool,
}

/// Strict mode is on and there are diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrictError {
    /// How many diagnostics there were.
    pub diagnostics: usize,
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "strict tunables (rayforce.tunables.strict=1): {} invalid tunable(s); fix them or turn strict mode off",
            self.diagnostics
        )
    }
}

impl std::error::Error for StrictError {}

impl Tunables {
    /// Defaults, then the program's choices; no environment.
    pub fn from_choices(choices: &Choices) -> Tunables {
        let mut tunables = Tunables {
            settings: registry::TABLE.map(|t| Setting {
                value: t.default,
                source: ValueSource::Default,
            }),
            diagnostics: Diagnostics::new(),
            environment: choices.environment,
            strict_aborts: choices.strict_aborts,
            strict_variable_read: false,
        };
        for (id, value) in Id::ALL.iter().zip(choices.values) {
            if let Some(value) = value {
                match parse::validate(*id, value) {
                    Ok(value) => tunables.apply(*id, value, ValueSource::Program),
                    Err(problem) => tunables.diagnostics.push(Diagnostic::new(
                        Origin::Program,
                        problem,
                        id.tunable().name.as_bytes(),
                    )),
                }
            }
        }
        tunables.settle();
        tunables
    }

    /// Start-up resolution: defaults < choices < `RAYFORCE_TUNABLES`, with strict mode's
    /// variable (`RAYFORCE_TUNABLES_STRICT`, below `RAYFORCE_TUNABLES`, so that it acts at the
    /// first allocation) and without the other per-knob variables. Allocation-free: the
    /// allocator calls it in its first allocation.
    pub fn at_startup(choices: &Choices) -> Tunables {
        let mut tunables = Tunables::from_choices(choices);
        if choices.environment == Environment::Read {
            let secure = env::is_secure();
            env::with_tunables_string(|string| match string {
                Some(string) if secure => tunables.diagnostics.push(Diagnostic::new(
                    Origin::TunablesString { offset: 0 },
                    Problem::SecureModeIgnored,
                    string,
                )),
                Some(string) => tunables.apply_string(string),
                None => {}
            });
            if !secure {
                env::with_strict_variable(|value| {
                    if let Some(value) = value {
                        tunables.apply_variable_bytes(Id::Strict, value);
                    }
                });
                tunables.strict_variable_read = true;
            }
        }
        tunables.settle();
        tunables
    }

    /// Adds the per-knob variables (`RAYFORCE_CORES`, ...), below `RAYFORCE_TUNABLES`.
    /// Allocates (it uses `envy`): call it after start-up.
    pub fn with_variables(self) -> Tunables {
        self.with_variables_except(&[])
    }

    /// Like [`with_variables`](Self::with_variables), but a variable for one of `fixed`
    /// (tunables that start-up already used) is not applied: a diagnostic tells the
    /// operator to set it in `RAYFORCE_TUNABLES`, which start-up reads.
    pub fn with_variables_except(mut self, fixed: &[Id]) -> Tunables {
        if self.environment == Environment::Read && !env::is_secure() {
            for (id, value) in env::knob_variables(&mut self.diagnostics) {
                if id == Id::Strict && self.strict_variable_read {
                    continue;
                }
                if fixed.contains(&id) {
                    let problem = Problem::ReadAfterStartup(id);
                    self.diagnostics
                        .push(Diagnostic::for_variable(id, value.as_bytes(), problem));
                } else {
                    self.apply_variable(id, &value);
                }
            }
        }
        self.settle();
        self
    }

    /// Full resolution: [`at_startup`](Self::at_startup), then [`with_variables`](Self::with_variables).
    pub fn resolve(choices: &Choices) -> Tunables {
        Tunables::at_startup(choices).with_variables()
    }

    /// Applies a `RAYFORCE_TUNABLES` value (source [`ValueSource::TunablesString`]).
    pub fn apply_string(&mut self, string: &[u8]) {
        let parsed = parse::parse(string);
        for (id, value) in Id::ALL.iter().zip(parsed.values) {
            if let Some(value) = value {
                self.apply(*id, value, ValueSource::TunablesString);
            }
        }
        self.diagnostics.append(&parsed.diagnostics);
        self.settle();
    }

    /// Applies one per-knob variable's value (source [`ValueSource::Variable`]).
    pub fn apply_variable(&mut self, id: Id, value: &str) {
        self.apply_variable_bytes(id, value.as_bytes());
    }

    /// [`apply_variable`](Self::apply_variable) on bytes, allocation-free.
    fn apply_variable_bytes(&mut self, id: Id, value: &[u8]) {
        let blank = |b: &u8| *b == b' ' || *b == b'\t';
        let start = value.iter().position(|b| !blank(b)).unwrap_or(value.len());
        let end = value
            .iter()
            .rposition(|b| !blank(b))
            .map_or(start, |i| i + 1);
        match parse::parse_value(id, &value[start..end]) {
            Ok(parsed) => self.apply(id, parsed, ValueSource::Variable),
            Err((_, problem)) => self
                .diagnostics
                .push(Diagnostic::for_variable(id, value, problem)),
        }
        self.settle();
    }

    /// Tells each diagnostic which value of its tunable is in force now, so that it says
    /// what was kept instead of the bad entry (the default, the program's, a variable's).
    fn settle(&mut self) {
        let settings = self.settings;
        for diagnostic in self.diagnostics.iter_mut() {
            diagnostic.kept = diagnostic.problem.tunable().map(|id| settings[id as usize]);
        }
    }

    /// Sets `id` unless a higher-precedence source already did.
    fn apply(&mut self, id: Id, value: u64, source: ValueSource) {
        let setting = &mut self.settings[id as usize];
        if source >= setting.source {
            *setting = Setting {
                value: Some(value),
                source,
            };
        }
    }

    /// One tunable's setting.
    pub fn get(&self, id: Id) -> Setting {
        self.settings[id as usize]
    }

    /// Every diagnostic, in the order found.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// `Err` when strict mode is on and anything was invalid.
    pub fn check_strict(&self) -> Result<(), StrictError> {
        if self.strict() && !self.diagnostics.is_empty() {
            return Err(StrictError {
                diagnostics: self.diagnostics.len() + self.diagnostics.dropped(),
            });
        }
        Ok(())
    }

    fn number(&self, id: Id) -> Option<u64> {
        self.get(id).value
    }

    /// `rayforce.cpu.policy`.
    pub fn policy(&self) -> CpuPolicy {
        self.number(Id::CpuPolicy)
            .and_then(CpuPolicy::from_index)
            .unwrap_or_default()
    }

    /// `rayforce.cpu.quota`.
    pub fn quota_cap(&self) -> QuotaCap {
        match self.number(Id::CpuQuota) {
            Some(0) => QuotaCap::Ignore,
            _ => QuotaCap::Apply,
        }
    }

    /// `rayforce.cpu.recheck_ms`: how often the pool re-reads the CPUs (0: never).
    pub fn recheck_ms(&self) -> u32 {
        self.number(Id::RecheckMs).map_or(0, |n| n as u32)
    }

    /// `rayforce.malloc.arena_max`; `None` is auto.
    pub fn arena_max(&self) -> Option<usize> {
        self.number(Id::ArenaMax).map(|n| n as usize)
    }

    /// `rayforce.malloc.arenas_per_cpu`.
    pub fn arenas_per_cpu(&self) -> usize {
        self.number(Id::ArenasPerCpu).map_or(1, |n| n as usize)
    }

    /// `rayforce.malloc.purge_delay_ms`: how long freed memory stays resident; `None` is
    /// mimalloc's own setting.
    pub fn purge_delay_ms(&self) -> Option<u64> {
        self.number(Id::PurgeDelayMs)
    }

    /// `rayforce.malloc.thp`: whether memory may be backed by transparent huge pages;
    /// `None` is mimalloc's own setting.
    pub fn thp(&self) -> Option<bool> {
        self.number(Id::Thp).map(|n| n != 0)
    }

    /// `rayforce.pool.workers`; `None` is auto.
    pub fn workers(&self) -> Option<usize> {
        self.number(Id::PoolWorkers).map(|n| n as usize)
    }

    /// `rayforce.pool.spin_us`: the ceiling of the pool's spin window, in microseconds.
    pub fn spin_us(&self) -> u32 {
        self.number(Id::SpinUs).map_or(0, |n| n as u32)
    }

    /// `rayforce.pool.wide`.
    pub fn wide(&self) -> bool {
        self.number(Id::PoolWide) != Some(0)
    }

    /// `rayforce.pool.place`.
    pub fn place(&self) -> Place {
        self.number(Id::PoolPlace)
            .and_then(Place::from_index)
            .unwrap_or_default()
    }

    /// Whether strict mode aborts this program (see [`Choices::strict_aborts`]).
    pub fn strict_aborts(&self) -> bool {
        self.strict_aborts
    }

    /// `rayforce.tunables.strict`.
    pub fn strict(&self) -> bool {
        self.number(Id::Strict) == Some(1)
    }
}
