//! The table of tunables: name, type and bounds, default, description, per-knob variable.
//!
//! Listing (`rayforce-rt tunables`), parsing (`parse.rs`), validation, the per-knob
//! variables (`env.rs`) and the README's table ([`markdown_table`]) all read [`TABLE`].

use crate::cpu::{CpuPolicy, Place};

/// Declares every tunable once, as `Id: "name", field = "VARIABLE", kind, default,
/// "description";` and derives from that list the [`Id`] enum, [`COUNT`], [`Id::ALL`],
/// [`TABLE`] and the struct envy fills from the per-knob variables (`KnobVariables`: the
/// field is the variable's name as envy passes it, without `RAYFORCE_`, in lower case).
macro_rules! tunables {
    ($(
        $id:ident: $name:literal, $field:ident = $variable:literal,
            $kind:expr, $default:expr, $description:literal;
    )+) => {
        /// Every tunable, in table order; `id as usize` indexes [`TABLE`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Id {
            $( #[doc = concat!("`", $name, "`: ", $description)] $id, )+
        }

        /// Number of tunables.
        pub const COUNT: usize = [$($name),+].len();

        impl Id {
            /// Every id, in table order.
            pub const ALL: [Id; COUNT] = [$(Id::$id),+];
        }

        /// The table.
        pub static TABLE: [Tunable; COUNT] = [$(
            Tunable {
                id: Id::$id,
                name: $name,
                kind: $kind,
                default: $default,
                description: $description,
                variable: $variable,
            },
        )+];

        /// The per-knob variables that are set, as envy deserializes them (names without
        /// the `RAYFORCE_` prefix, lower case). Values stay text: the tunables' own parser
        /// checks them, so that a bad one gets the same diagnostic wherever it was written.
        #[derive(Debug, Default, serde::Deserialize)]
        pub(crate) struct KnobVariables {
            $( $field: Option<String>, )+
        }

        impl KnobVariables {
            /// The values, indexed by [`Id`].
            pub(crate) fn into_values(self) -> [Option<String>; COUNT] {
                [$(self.$field),+]
            }
        }
    };
}

tunables! {
    CpuPolicy: "rayforce.cpu.policy", cpu_policy = "RAYFORCE_CPU_POLICY",
        Kind::Words(&CpuPolicy::WORDS), Some(CpuPolicy::Physical as u64),
        "the CPU count that sizes the arenas and the pool";
    CpuQuota: "rayforce.cpu.quota", cpu_quota = "RAYFORCE_CPU_QUOTA",
        Kind::Bool, Some(1),
        "cap every count at the cgroup CPU quota, rounded up";
    RecheckMs: "rayforce.cpu.recheck_ms", cpu_recheck_ms = "RAYFORCE_CPU_RECHECK_MS",
        Kind::Unsigned { min: 0, max: MAX_DELAY_MS }, Some(DEFAULT_RECHECK_MS),
        "re-read the CPUs at most this often, at dispatch start (0: never)";
    ArenaMax: "rayforce.malloc.arena_max", arena_max = "RAYFORCE_ARENA_MAX",
        Kind::Unsigned { min: 1, max: MAX_ARENAS }, None,
        "hard limit on allocator arenas (auto: arenas_per_cpu x count)";
    ArenasPerCpu: "rayforce.malloc.arenas_per_cpu", arenas_per_cpu = "RAYFORCE_ARENAS_PER_CPU",
        Kind::Unsigned { min: 1, max: 64 }, Some(DEFAULT_ARENAS_PER_CPU),
        "arenas per counted CPU when arena_max is unset";
    PurgeDelayMs: "rayforce.malloc.purge_delay_ms", purge_delay_ms = "RAYFORCE_PURGE_DELAY_MS",
        Kind::Unsigned { min: 0, max: MAX_DELAY_MS }, None,
        "return freed memory to the system after this many ms (lower: less resident memory, more page faults on reuse; auto: mimalloc's, 1000)";
    Thp: "rayforce.malloc.thp", thp = "RAYFORCE_THP",
        Kind::Bool, None,
        "ask for transparent huge pages (1: fewer TLB misses on big data, 0: less resident memory when small blocks churn; auto: mimalloc's, 1); the allocator's memory only, so under the kernel's THP mode always the kernel still gives them";
    PoolWorkers: "rayforce.pool.workers", cores = "RAYFORCE_CORES",
        Kind::Unsigned { min: 1, max: MAX_WIDTH }, None,
        "pool width, the caller included (auto: the policy's count)";
    SpinUs: "rayforce.pool.spin_us", spin_us = "RAYFORCE_SPIN_US",
        Kind::Unsigned { min: 0, max: MAX_SPIN_US }, Some(DEFAULT_SPIN_US),
        "ceiling of an idle pool thread's adaptive spin, in us (0: block at once); no spin outlasts a kernel wake-up's measured cost (50 us until measured)";
    PoolWide: "rayforce.pool.wide", pool_wide = "RAYFORCE_POOL_WIDE",
        Kind::Bool, Some(1),
        "let latency-bound dispatches use the SMT siblings";
    PoolPlace: "rayforce.pool.place", pool_place = "RAYFORCE_POOL_PLACE",
        Kind::Words(&Place::WORDS), Some(Place::Off as u64),
        "pin each pool helper to a CPU of a core of its own, cores taken across packages and NUMA nodes (spread) or one package first (close), its arena preferring its node's memory; off: helpers float";
    Strict: "rayforce.tunables.strict", tunables_strict = "RAYFORCE_TUNABLES_STRICT",
        Kind::Bool, Some(0),
        "any invalid tunable aborts the program at start-up, after its message";
}

/// What values a tunable takes. Every value is stored as a `u64`: numbers as themselves,
/// booleans as 0 or 1, words as their index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An unsigned integer in `min..=max`, decimal or `0x` hex.
    Unsigned {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// `0` or `1`.
    Bool,
    /// One of these words, exactly (lower case).
    Words(&'static [&'static str]),
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Tunable {
    /// Which tunable.
    pub id: Id,
    /// The full name, `rayforce.<area>.<knob>`.
    pub name: &'static str,
    /// Its type and bounds.
    pub kind: Kind,
    /// The built-in default; `None` means derived at start-up from the CPU count ("auto").
    pub default: Option<u64>,
    /// One line for listings and docs.
    pub description: &'static str,
    /// The per-knob environment variable that sets it too (below `RAYFORCE_TUNABLES`).
    pub variable: &'static str,
}

/// The namespace every name starts with.
pub const NAMESPACE: &str = "rayforce.";

/// The most participants a pool can have, the caller included: the kernel's CPU limit.
pub const MAX_WIDTH: u64 = crate::cpu::MAX_CPUS as u64;

/// The longest spin window, in microseconds: a tenth of a second of one core.
pub const MAX_SPIN_US: u64 = 100_000;

/// The longest re-check period and purge delay, in milliseconds: an hour.
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// The most allocator arenas: the allocator keeps a fixed table of this many (no
/// allocation to grow it), and more than a thousand heaps only strand memory.
pub const MAX_ARENAS: u64 = 1024;

/// The ceiling of the pool's adaptive spin window, in microseconds. The pool's sweep
/// (BENCHMARKS.md, "spin_us sweep") chose it; windows are also capped by the measured cost of a
/// kernel wake-up, and learned from each waiter's recent idle gaps.
const DEFAULT_SPIN_US: u64 = 50;

/// How often the pool re-reads the CPUs (affinity and quota change while programs run):
/// once a second is Go's choice for GOMAXPROCS; the check at dispatch start is one load and
/// one comparison, 0.4% of the empty round trip (BENCHMARKS.md, "Following the machine").
const DEFAULT_RECHECK_MS: u64 = 1_000;

/// Arenas per counted CPU when `arena_max` is unset. The allocator's sweep (BENCHMARKS.md,
/// "Arena-count sweep"): more arenas cost up to 23% more resident memory for no throughput
/// gain here; one per CPU keeps about one running thread per heap on any core count.
const DEFAULT_ARENAS_PER_CPU: u64 = 1;

impl Id {
    /// This tunable's row.
    pub fn tunable(self) -> &'static Tunable {
        &TABLE[self as usize]
    }

    /// The tunable with exactly this name.
    pub fn from_name(name: &[u8]) -> Option<Id> {
        TABLE
            .iter()
            .find(|t| t.name.as_bytes() == name)
            .map(|t| t.id)
    }
}

impl Kind {
    /// The value written as an operator would write it: a word, `0`/`1`, or a number.
    pub fn format(self, value: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        match self {
            Kind::Words(words) => out.write_str(words.get(value as usize).copied().unwrap_or("?")),
            Kind::Bool | Kind::Unsigned { .. } => write!(out, "{value}"),
        }
    }

    /// The range or the allowed words, for listings: `1..=8192`, `0|1`, `online|physical`.
    pub fn describe(self, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        match self {
            Kind::Unsigned { min, max } => write!(out, "{min}..={max}"),
            Kind::Bool => out.write_str("0|1"),
            Kind::Words(words) => {
                for (i, word) in words.iter().enumerate() {
                    if i > 0 {
                        out.write_str("|")?;
                    }
                    out.write_str(word)?;
                }
                Ok(())
            }
        }
    }
}

/// The table as Markdown, as the README shows it (a test keeps the two equal).
pub fn markdown_table() -> String {
    use core::fmt::Write;
    let mut out =
        String::from("| name | values | default | variable | meaning |\n|---|---|---|---|---|\n");
    for t in &TABLE {
        let mut values = String::new();
        let _ = t.kind.describe(&mut values);
        let mut default = String::new();
        match t.default {
            Some(v) => {
                let _ = t.kind.format(v, &mut default);
            }
            None => default.push_str("auto"),
        }
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | `{}` | {} |",
            t.name,
            values.replace('|', "\\|"),
            default,
            t.variable,
            t.description
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_id_and_well_formed() {
        for (i, id) in Id::ALL.iter().enumerate() {
            let t = id.tunable();
            assert_eq!(t.id as usize, i, "{}", t.name);
            assert!(t.name.starts_with(NAMESPACE), "{}", t.name);
            assert!(t.variable.starts_with("RAYFORCE_"), "{}", t.variable);
            assert_eq!(Id::from_name(t.name.as_bytes()), Some(*id));
            if let (Some(d), Kind::Unsigned { min, max }) = (t.default, t.kind) {
                assert!(
                    (min..=max).contains(&d),
                    "{} default {d} outside {min}..={max}",
                    t.name
                );
            }
            if let (Some(d), Kind::Words(words)) = (t.default, t.kind) {
                assert!((d as usize) < words.len(), "{}", t.name);
            }
        }
    }

    #[test]
    fn words_chosen_in_code_resolve_to_themselves() {
        for place in Place::ALL {
            let chosen = crate::Choices::new()
                .environment(crate::Environment::Ignore)
                .place(place);
            assert_eq!(crate::Tunables::from_choices(&chosen).place(), place);
        }
        for policy in CpuPolicy::ALL {
            let chosen = crate::Choices::new()
                .environment(crate::Environment::Ignore)
                .policy(policy);
            assert_eq!(crate::Tunables::from_choices(&chosen).policy(), policy);
        }
        let defaults = crate::Tunables::from_choices(&crate::Choices::new());
        assert_eq!(
            (defaults.policy(), defaults.place()),
            (CpuPolicy::Physical, Place::Off)
        );
    }

    #[test]
    fn every_knob_variable_is_a_field_envy_fills() {
        let values = TABLE
            .iter()
            .map(|t| (t.variable.to_owned(), t.name.to_owned()));
        let knobs: KnobVariables = envy::prefixed("RAYFORCE_").from_iter(values).unwrap();
        for (t, value) in TABLE.iter().zip(knobs.into_values()) {
            assert_eq!(value.as_deref(), Some(t.name), "{}", t.variable);
        }
    }
}
