//! The built-in workloads of `compare`, two shapes from the field: a hash-join probe
//! (compute- and bandwidth-bound) and dependent random lookups into a table far larger than
//! the last-level cache (latency-bound). Each returns a checksum that does not depend on
//! how many workers ran it, and the units of work it did.

use rayforce_rt::Pool;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which dispatch a run uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Dispatch,
    Wide,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Dispatch => "dispatch",
            Mode::Wide => "dispatch_wide",
        }
    }

    fn run(self, pool: &Pool, tasks: usize, f: impl Fn(usize) + Sync) {
        match self {
            Mode::Dispatch => pool.dispatch(tasks, f),
            Mode::Wide => pool.dispatch_wide(tasks, f),
        }
    }
}

/// A stateless mixer (splitmix64's finaliser).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A probe side of `rows` keys against a 3-key build side (an 8-slot open-addressing table).
pub(crate) struct HashJoin {
    probe: Vec<u64>,
    slots: [(u64, u64); 8],
    repeat: usize,
}

/// Chunks per probe dispatch: enough to balance, few enough to keep dispatches cheap.
const PROBE_TASKS: usize = 64;

impl HashJoin {
    pub(crate) fn new(rows: usize, repeat: usize) -> HashJoin {
        let mut slots = [(u64::MAX, 0); 8];
        for (key, payload) in [(1u64, 10u64), (2, 20), (3, 30)] {
            let mut slot = (mix(key) % 8) as usize;
            while slots[slot].0 != u64::MAX {
                slot = (slot + 1) % 8;
            }
            slots[slot] = (key, payload);
        }
        // Keys 0..5: three in five rows match.
        let probe = (0..rows as u64).map(|i| mix(i) % 5).collect();
        HashJoin {
            probe,
            slots,
            repeat,
        }
    }

    fn lookup(&self, key: u64) -> u64 {
        let mut slot = (mix(key) % 8) as usize;
        loop {
            match self.slots[slot] {
                (k, payload) if k == key => return payload,
                (u64::MAX, _) => return 0,
                _ => slot = (slot + 1) % 8,
            }
        }
    }

    /// `repeat` probe dispatches; (checksum, rows probed).
    pub(crate) fn run(&self, pool: &Pool, mode: Mode) -> (u64, u64) {
        let total = AtomicU64::new(0);
        let chunk = self.probe.len().div_ceil(PROBE_TASKS).max(1);
        for _ in 0..self.repeat {
            mode.run(pool, PROBE_TASKS, |task| {
                let rows = self.probe.chunks(chunk).nth(task).unwrap_or(&[]);
                let sum: u64 = rows.iter().map(|&key| self.lookup(key)).sum();
                total.fetch_add(sum, Ordering::Relaxed);
            });
        }
        (total.into_inner(), (self.probe.len() * self.repeat) as u64)
    }
}

/// A table of 32M `u64` (256 MiB) walked by dependent random loads: each step's address
/// depends on the value the previous step loaded, so only memory latency limits it.
pub(crate) struct Lookups {
    table: Vec<u64>,
}

/// Chains per dispatch and steps per chain.
const CHAINS: usize = 64;
const STEPS: usize = 20_000;
const TABLE_LEN: usize = 32 << 20;

impl Lookups {
    pub(crate) fn new() -> Lookups {
        Lookups {
            table: (0..TABLE_LEN as u64).map(mix).collect(),
        }
    }

    /// One dispatch of `CHAINS` chains; (checksum, loads).
    pub(crate) fn run(&self, pool: &Pool, mode: Mode) -> (u64, u64) {
        let total = AtomicU64::new(0);
        mode.run(pool, CHAINS, |chain| {
            let mut at = mix(chain as u64);
            for _ in 0..STEPS {
                at = mix(at ^ self.table[(at % TABLE_LEN as u64) as usize]);
            }
            total.fetch_add(at, Ordering::Relaxed);
        });
        (total.into_inner(), (CHAINS * STEPS) as u64)
    }
}
