//! The table of tunables: name, type and bounds, default, description, per-knob variable.
//!
//! Listing (`rayforce-rt tunables`), parsing (`parse.rs`), validation, the per-knob
//! variables (`env.rs`) and the README's table ([`markdown_table`]) all read [`TABLE`].

use crate::cpu::CpuPolicy;

/// Every tunable, in table order; `id as usize` indexes [`TABLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// `rayforce.cpu.policy`
    CpuPolicy,
    /// `rayforce.cpu.quota`
    CpuQuota,
    /// `rayforce.cpu.recheck_ms`
    RecheckMs,
    /// `rayforce.malloc.arena_max`
    ArenaMax,
    /// `rayforce.malloc.arenas_per_cpu`
    ArenasPerCpu,
    /// `rayforce.malloc.purge_delay_ms`
    PurgeDelayMs,
    /// `rayforce.malloc.thp`
    Thp,
    /// `rayforce.pool.workers`
    PoolWorkers,
    /// `rayforce.pool.spin_us`
    SpinUs,
    /// `rayforce.pool.wide`
    PoolWide,
    /// `rayforce.pool.place`
    PoolPlace,
    /// `rayforce.tunables.strict`
    Strict,
}

/// Number of tunables.
pub const COUNT: usize = 12;

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

/// The table.
pub static TABLE: [Tunable; COUNT] = [
    Tunable {
        id: Id::CpuPolicy,
        name: "rayforce.cpu.policy",
        kind: Kind::Words(&["online", "schedulable", "physical"]),
        default: Some(2),
        description: "the CPU count that sizes the arenas and the pool",
        variable: "RAYFORCE_CPU_POLICY",
    },
    Tunable {
        id: Id::CpuQuota,
        name: "rayforce.cpu.quota",
        kind: Kind::Bool,
        default: Some(1),
        description: "cap every count at the cgroup CPU quota, rounded up",
        variable: "RAYFORCE_CPU_QUOTA",
    },
    Tunable {
        id: Id::RecheckMs,
        name: "rayforce.cpu.recheck_ms",
        kind: Kind::Unsigned {
            min: 0,
            max: MAX_DELAY_MS,
        },
        default: Some(DEFAULT_RECHECK_MS),
        description: "re-read the CPUs at most this often, at dispatch start (0: never)",
        variable: "RAYFORCE_CPU_RECHECK_MS",
    },
    Tunable {
        id: Id::ArenaMax,
        name: "rayforce.malloc.arena_max",
        kind: Kind::Unsigned {
            min: 1,
            max: MAX_ARENAS,
        },
        default: None,
        description: "hard limit on allocator arenas (auto: arenas_per_cpu x count)",
        variable: "RAYFORCE_ARENA_MAX",
    },
    Tunable {
        id: Id::ArenasPerCpu,
        name: "rayforce.malloc.arenas_per_cpu",
        kind: Kind::Unsigned { min: 1, max: 64 },
        default: Some(DEFAULT_ARENAS_PER_CPU),
        description: "arenas per counted CPU when arena_max is unset",
        variable: "RAYFORCE_ARENAS_PER_CPU",
    },
    Tunable {
        id: Id::PurgeDelayMs,
        name: "rayforce.malloc.purge_delay_ms",
        kind: Kind::Unsigned {
            min: 0,
            max: MAX_DELAY_MS,
        },
        default: None,
        description: "return freed memory to the system after this many ms (lower: less resident memory, more page faults on reuse; auto: mimalloc's, 1000)",
        variable: "RAYFORCE_PURGE_DELAY_MS",
    },
    Tunable {
        id: Id::Thp,
        name: "rayforce.malloc.thp",
        kind: Kind::Bool,
        default: None,
        description: "ask for transparent huge pages (1: fewer TLB misses on big data, 0: less resident memory when small blocks churn; auto: mimalloc's, 1); the allocator's memory only, so under the kernel's THP mode always the kernel still gives them",
        variable: "RAYFORCE_THP",
    },
    Tunable {
        id: Id::PoolWorkers,
        name: "rayforce.pool.workers",
        kind: Kind::Unsigned {
            min: 1,
            max: MAX_WIDTH,
        },
        default: None,
        description: "pool width, the caller included (auto: the policy's count)",
        variable: "RAYFORCE_CORES",
    },
    Tunable {
        id: Id::SpinUs,
        name: "rayforce.pool.spin_us",
        kind: Kind::Unsigned {
            min: 0,
            max: MAX_SPIN_US,
        },
        default: Some(DEFAULT_SPIN_US),
        description: "ceiling of an idle pool thread's adaptive spin, in us (0: block at once); no spin outlasts a kernel wake-up's measured cost (50 us until measured)",
        variable: "RAYFORCE_SPIN_US",
    },
    Tunable {
        id: Id::PoolWide,
        name: "rayforce.pool.wide",
        kind: Kind::Bool,
        default: Some(1),
        description: "let latency-bound dispatches use the SMT siblings",
        variable: "RAYFORCE_POOL_WIDE",
    },
    Tunable {
        id: Id::PoolPlace,
        name: "rayforce.pool.place",
        kind: Kind::Words(&["off", "spread", "close"]),
        default: Some(0),
        description: "pin each pool helper to a CPU of a core of its own, cores taken across packages and NUMA nodes (spread) or one package first (close), its arena preferring its node's memory; off: helpers float",
        variable: "RAYFORCE_POOL_PLACE",
    },
    Tunable {
        id: Id::Strict,
        name: "rayforce.tunables.strict",
        kind: Kind::Bool,
        default: Some(0),
        description: "any invalid tunable aborts the program at start-up, after its message",
        variable: "RAYFORCE_TUNABLES_STRICT",
    },
];

impl Id {
    /// Every id, in table order.
    pub const ALL: [Id; COUNT] = [
        Id::CpuPolicy,
        Id::CpuQuota,
        Id::RecheckMs,
        Id::ArenaMax,
        Id::ArenasPerCpu,
        Id::PurgeDelayMs,
        Id::Thp,
        Id::PoolWorkers,
        Id::SpinUs,
        Id::PoolWide,
        Id::PoolPlace,
        Id::Strict,
    ];

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

/// The policy word at `index` of `rayforce.cpu.policy`'s words.
pub(crate) fn policy_from_index(index: u64) -> CpuPolicy {
    match index {
        0 => CpuPolicy::Online,
        1 => CpuPolicy::Schedulable,
        _ => CpuPolicy::Physical,
    }
}

/// The index of `policy` among `rayforce.cpu.policy`'s words.
pub(crate) const fn policy_index(policy: CpuPolicy) -> u64 {
    match policy {
        CpuPolicy::Online => 0,
        CpuPolicy::Schedulable => 1,
        CpuPolicy::Physical => 2,
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
    fn place_words_match_the_place_type() {
        let Kind::Words(words) = Id::PoolPlace.tunable().kind else {
            panic!("rayforce.pool.place takes words")
        };
        for place in crate::cpu::Place::ALL {
            assert_eq!(words[place as usize], place.as_str());
            let chosen = crate::Choices::new()
                .environment(crate::Environment::Ignore)
                .place(place);
            assert_eq!(crate::Tunables::from_choices(&chosen).place(), place);
        }
        assert_eq!(Id::PoolPlace.tunable().default, Some(0), "off by default");
    }

    #[test]
    fn policy_words_match_the_policy_type() {
        let Kind::Words(words) = Id::CpuPolicy.tunable().kind else {
            panic!("rayforce.cpu.policy takes words")
        };
        for policy in CpuPolicy::ALL {
            let index = policy_index(policy);
            assert_eq!(words[index as usize], policy.as_str());
            assert_eq!(policy_from_index(index), policy);
        }
        assert_eq!(
            Id::CpuPolicy.tunable().default,
            Some(policy_index(CpuPolicy::Physical))
        );
    }
}
