//! `CpuPolicy`: which CPU count sizes the arenas and the pool.

use core::fmt;
use core::str::FromStr;

/// Which CPU count sizes the allocator's arenas and the pool's width.
///
/// The default, [`Physical`](CpuPolicy::Physical), leaves SMT siblings idle: they re-run the
/// same instruction stream at about half the IPC, so a pool sized by logical CPUs burns
/// about a third more cycles for no wall-time gain on compute-bound work.
///
/// Serialized (feature `serde`) as its word: `online`, `schedulable` or `physical`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum CpuPolicy {
    /// Every CPU online in the system, whether or not this process may run on it.
    /// Too high under `taskset`, cpusets and containers.
    Online,
    /// The CPUs this process may run on (affinity mask intersected with online).
    /// Counts SMT siblings as full CPUs, so it is too high for compute-bound work on SMT.
    Schedulable,
    /// Distinct physical cores among the schedulable CPUs. Too low only for
    /// latency-bound work that hides memory stalls on the siblings.
    #[default]
    Physical,
}

impl CpuPolicy {
    /// Every policy, in the order tables print them.
    pub const ALL: [CpuPolicy; 3] = [
        CpuPolicy::Online,
        CpuPolicy::Schedulable,
        CpuPolicy::Physical,
    ];

    /// The policy's word: `online`, `schedulable` or `physical`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CpuPolicy::Online => "online",
            CpuPolicy::Schedulable => "schedulable",
            CpuPolicy::Physical => "physical",
        }
    }

    /// Parses the exact, lower-case word; allocation-free, for the tunables parser.
    pub fn from_bytes(word: &[u8]) -> Option<CpuPolicy> {
        CpuPolicy::ALL
            .into_iter()
            .find(|p| p.as_str().as_bytes() == word)
    }
}

impl fmt::Display for CpuPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown policy word; its message lists the allowed words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown CPU policy `{}`; expected one of online, schedulable, physical",
            self.0.escape_debug()
        )
    }
}

impl std::error::Error for UnknownPolicy {}

impl FromStr for CpuPolicy {
    type Err = UnknownPolicy;

    /// ```
    /// use rayforce_tunables::cpu::CpuPolicy;
    /// assert_eq!("physical".parse::<CpuPolicy>(), Ok(CpuPolicy::Physical));
    /// let err = "numa".parse::<CpuPolicy>().unwrap_err();
    /// assert!(err.to_string().contains("online, schedulable, physical"));
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuPolicy::from_bytes(s.as_bytes()).ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_are_case_sensitive() {
        for policy in CpuPolicy::ALL {
            assert_eq!(policy.to_string().parse::<CpuPolicy>(), Ok(policy));
        }
        assert!("PHYSICAL".parse::<CpuPolicy>().is_err());
        assert!("".parse::<CpuPolicy>().is_err());
        assert_eq!(CpuPolicy::default(), CpuPolicy::Physical);
    }
}
