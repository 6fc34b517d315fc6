//! `Place`: whether and how the pool pins its helpers (`rayforce.pool.place`).

use core::fmt;
use core::str::FromStr;

/// Whether the pool pins each helper to a CPU of a core of its own, and in which order it
/// takes the cores. Off by default: pinning helps some programs (steadier timings, memory
/// on the helper's node) and hurts others (two pinned processes on the same CPUs collide).
///
/// Serialized (feature `serde`) as its word: `off`, `spread` or `close`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum Place {
    /// Helpers float where the kernel puts them (no affinity call at all).
    #[default]
    Off,
    /// Cores round-robin across packages and, within a package, across its NUMA nodes:
    /// the most memory bandwidth and cache for few helpers.
    Spread,
    /// One package's cores first, node by node: helpers share a last-level cache.
    Close,
}

impl Place {
    /// Every mode, in the tunable's word order.
    pub const ALL: [Place; 3] = [Place::Off, Place::Spread, Place::Close];

    /// The mode's word: `off`, `spread` or `close`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Place::Off => "off",
            Place::Spread => "spread",
            Place::Close => "close",
        }
    }

    /// Parses the exact, lower-case word.
    pub fn from_bytes(word: &[u8]) -> Option<Place> {
        Place::ALL
            .into_iter()
            .find(|p| p.as_str().as_bytes() == word)
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown placement word; its message lists the allowed words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPlace(pub String);

impl fmt::Display for UnknownPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown placement `{}`; expected one of off, spread, close",
            self.0.escape_debug()
        )
    }
}

impl std::error::Error for UnknownPlace {}

impl FromStr for Place {
    type Err = UnknownPlace;

    /// ```
    /// use rayforce_tunables::cpu::Place;
    /// assert_eq!("spread".parse::<Place>(), Ok(Place::Spread));
    /// assert!("numa".parse::<Place>().unwrap_err().to_string().contains("off, spread, close"));
    /// ```
    fn from_str(s: &str) -> Result<Place, UnknownPlace> {
        Place::from_bytes(s.as_bytes()).ok_or_else(|| UnknownPlace(s.to_owned()))
    }
}
