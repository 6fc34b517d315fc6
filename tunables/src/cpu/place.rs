//! `Place`: whether and how the pool pins its helpers (`rayforce.pool.place`).

use crate::words::word_enum;

word_enum! {
    /// Whether the pool pins each helper to a CPU of a core of its own, and in which order it
    /// takes the cores. Off by default: pinning helps some programs (steadier timings, memory
    /// on the helper's node) and hurts others (two pinned processes on the same CPUs collide).
    ///
    /// Written (and serialized, feature `serde`) as its word: `off`, `spread` or `close`.
    ///
    /// ```
    /// use rayforce_tunables::cpu::Place;
    /// assert_eq!("spread".parse::<Place>(), Ok(Place::Spread));
    /// assert!("numa".parse::<Place>().unwrap_err().to_string().contains("off, spread, close"));
    /// ```
    pub enum Place, unknown: UnknownPlace("placement") {
        /// Helpers float where the kernel puts them (no affinity call at all).
        #[default]
        Off = "off",
        /// Cores round-robin across packages and, within a package, across its NUMA nodes:
        /// the most memory bandwidth and cache for few helpers.
        Spread = "spread",
        /// One package's cores first, node by node: helpers share a last-level cache.
        Close = "close",
    }
}
