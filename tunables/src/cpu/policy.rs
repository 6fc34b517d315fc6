//! `CpuPolicy`: which CPU count sizes the arenas and the pool.

use crate::words::word_enum;

word_enum! {
    /// Which CPU count sizes the allocator's arenas and the pool's width.
    ///
    /// The default, [`Physical`](CpuPolicy::Physical), leaves SMT siblings idle: they re-run the
    /// same instruction stream at about half the IPC, so a pool sized by logical CPUs burns
    /// about a third more cycles for no wall-time gain on compute-bound work.
    ///
    /// Written (and serialized, feature `serde`) as its word: `online`, `schedulable` or
    /// `physical`.
    ///
    /// ```
    /// use rayforce_tunables::cpu::CpuPolicy;
    /// assert_eq!("physical".parse::<CpuPolicy>(), Ok(CpuPolicy::Physical));
    /// let err = "numa".parse::<CpuPolicy>().unwrap_err();
    /// assert!(err.to_string().contains("`numa`; expected one of online, schedulable, physical"));
    /// ```
    pub enum CpuPolicy, unknown: UnknownPolicy("CPU policy") {
        /// Every CPU online in the system, whether or not this process may run on it.
        /// Too high under `taskset`, cpusets and containers.
        Online = "online",
        /// The CPUs this process may run on (affinity mask intersected with online).
        /// Counts SMT siblings as full CPUs, so it is too high for compute-bound work on SMT.
        Schedulable = "schedulable",
        /// Distinct physical cores among the schedulable CPUs. Too low only for
        /// latency-bound work that hides memory stalls on the siblings.
        #[default]
        Physical = "physical",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_by_text_and_index_and_are_case_sensitive() {
        for (index, policy) in CpuPolicy::ALL.into_iter().enumerate() {
            assert_eq!(policy.to_string().parse::<CpuPolicy>(), Ok(policy));
            assert_eq!(CpuPolicy::from_index(index as u64), Some(policy));
        }
        assert_eq!(CpuPolicy::from_index(CpuPolicy::ALL.len() as u64), None);
        assert!("PHYSICAL".parse::<CpuPolicy>().is_err());
        assert!("".parse::<CpuPolicy>().is_err());
        assert_eq!(CpuPolicy::default(), CpuPolicy::Physical);
    }
}
