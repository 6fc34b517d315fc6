//! The built-in workloads of `compare`, four shapes from the field: a hash-join probe
//! (compute- and bandwidth-bound), dependent random lookups into a table far larger than the
//! last-level cache (latency-bound), a group-by on string keys whose tasks build hash maps
//! (allocation-bound: the allocator shows, not only the pool), and many short queries back
//! to back (dispatch-bound: a region of a few microseconds each). Each returns a checksum
//! that does not depend on how many workers ran it, and the units of work it did.

use rayforce_rt::prelude::{ParallelEach, ParallelFold};
use rayforce_rt::Pool;
use rayon::prelude::*;
use std::collections::HashMap;
use std::iter::Sum;
use std::num::Wrapping;

/// Which dispatch a run on the pool uses.
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
}

/// What runs a workload's tasks: the pool, or a rayon pool (the baselines).
pub(crate) enum Exec<'a> {
    Pool(&'a Pool, Mode),
    Rayon(&'a rayon::ThreadPool),
}

impl Exec<'_> {
    /// The sum of `f(task)` over `0..tasks`, as each side's users write it.
    fn sum<T, F>(&self, tasks: usize, f: F) -> T
    where
        T: Send + Sum<T>,
        F: Fn(usize) -> T + Sync + Send,
    {
        match self {
            Exec::Pool(pool, Mode::Dispatch) => pool.sum(tasks, f),
            Exec::Pool(pool, Mode::Wide) => pool.wide().sum(tasks, f),
            Exec::Rayon(pool) => pool.install(|| (0..tasks).into_par_iter().map(f).sum()),
        }
    }

    /// `fold` into one state per participant (rayon: per split), combined.
    fn fold<S, I, F, C>(&self, tasks: usize, init: I, fold: F, combine: C) -> S
    where
        S: Send,
        I: Fn() -> S + Sync + Send,
        F: Fn(&mut S, usize) + Sync + Send,
        C: Fn(S, S) -> S + Sync + Send,
    {
        match self {
            Exec::Pool(pool, Mode::Dispatch) => pool.fold(tasks, init, fold, combine),
            Exec::Pool(pool, Mode::Wide) => pool.wide().fold(tasks, init, fold, combine),
            Exec::Rayon(pool) => pool.install(|| {
                let folded = (0..tasks).into_par_iter().fold(&init, |mut state, i| {
                    fold(&mut state, i);
                    state
                });
                folded.reduce(&init, &combine)
            }),
        }
    }

    /// `f(index, &mut item)` for every item.
    fn for_each_mut<T, F>(&self, items: &mut [T], f: F)
    where
        T: Send,
        F: Fn(usize, &mut T) + Sync + Send,
    {
        match self {
            Exec::Pool(pool, Mode::Dispatch) => pool.for_each_mut(items, f),
            Exec::Pool(pool, Mode::Wide) => pool.wide().for_each_mut(items, f),
            Exec::Rayon(pool) => pool.install(|| {
                items.par_iter_mut().enumerate().for_each(|(i, x)| f(i, x));
            }),
        }
    }
}

/// A workload of `compare`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Workload {
    HashJoin,
    RandomLookups,
    GroupBy,
    ShortQueries,
}

impl Workload {
    pub(crate) const ALL: [Workload; 4] = [
        Workload::HashJoin,
        Workload::RandomLookups,
        Workload::GroupBy,
        Workload::ShortQueries,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Workload::HashJoin => "hash_join",
            Workload::RandomLookups => "random_lookups",
            Workload::GroupBy => "group_by",
            Workload::ShortQueries => "short_queries",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.as_str() == name)
    }
}

/// How big each workload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// Probe-side rows of the hash join, and probe dispatches per run.
    pub(crate) rows: usize,
    pub(crate) repeat: usize,
    /// Entries of the lookup table, and steps per chain.
    pub(crate) table_len: usize,
    pub(crate) steps: usize,
    /// Rows of the group-by.
    pub(crate) group_rows: usize,
    /// Short queries per run.
    pub(crate) queries: usize,
}

impl Sizes {
    /// About 10-20 s for the whole comparison on 2 cores.
    pub(crate) const DEFAULT: Sizes = Sizes {
        rows: 130_000,
        repeat: 200,
        table_len: 32 << 20,
        steps: 20_000,
        group_rows: 1_000_000,
        queries: 20_000,
    };

    /// About 2 s: a table still larger than most last-level caches (32 MiB).
    pub(crate) const QUICK: Sizes = Sizes {
        rows: 65_000,
        repeat: 50,
        table_len: 4 << 20,
        steps: 5_000,
        group_rows: 200_000,
        queries: 5_000,
    };
}

/// Every workload, built once per process.
pub(crate) struct Workloads {
    join: HashJoin,
    lookups: Lookups,
    group_by: GroupBy,
    queries: ShortQueries,
}

impl Workloads {
    pub(crate) fn new(sizes: &Sizes) -> Workloads {
        Workloads {
            join: HashJoin::new(sizes.rows, sizes.repeat),
            lookups: Lookups::new(sizes.table_len, sizes.steps),
            group_by: GroupBy::new(sizes.group_rows),
            queries: ShortQueries::new(sizes.queries),
        }
    }

    /// Runs `workload` once; (checksum, units of work).
    pub(crate) fn run(&self, workload: Workload, exec: &Exec<'_>) -> (u64, u64) {
        match workload {
            Workload::HashJoin => self.join.run(exec),
            Workload::RandomLookups => self.lookups.run(exec),
            Workload::GroupBy => self.group_by.run(exec),
            Workload::ShortQueries => self.queries.run(exec),
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
    pub(crate) fn run(&self, exec: &Exec<'_>) -> (u64, u64) {
        let chunk = self.probe.len().div_ceil(PROBE_TASKS).max(1);
        let total: u64 = (0..self.repeat)
            .map(|_| {
                exec.sum(PROBE_TASKS, |task| {
                    let rows = self.probe.chunks(chunk).nth(task).unwrap_or(&[]);
                    rows.iter().map(|&key| self.lookup(key)).sum::<u64>()
                })
            })
            .sum();
        (total, (self.probe.len() * self.repeat) as u64)
    }
}

/// A table of `u64` (256 MiB by default) walked by dependent random loads: each step's
/// address depends on the value the previous step loaded, so only memory latency limits it.
pub(crate) struct Lookups {
    table: Vec<u64>,
    steps: usize,
}

/// Chains per dispatch.
const CHAINS: usize = 64;

impl Lookups {
    /// A table of `len` entries, walked `steps` steps per chain.
    pub(crate) fn new(len: usize, steps: usize) -> Lookups {
        Lookups {
            table: (0..len as u64).map(mix).collect(),
            steps,
        }
    }

    /// One dispatch of `CHAINS` chains; (checksum, loads).
    pub(crate) fn run(&self, exec: &Exec<'_>) -> (u64, u64) {
        let len = self.table.len() as u64;
        let Wrapping(total) = exec.sum(CHAINS, |chain| {
            let mut at = mix(chain as u64);
            for _ in 0..self.steps {
                at = mix(at ^ self.table[(at % len) as usize]);
            }
            Wrapping(at)
        });
        (total, (CHAINS * self.steps) as u64)
    }
}

/// Rows of (string key, value), summed per key in two parallel phases, as query engines do:
/// each task aggregates its rows into one hash map per partition of the keys (allocating a
/// `String` per new key), then each partition's maps are merged by one task (freeing keys
/// that other threads allocated).
pub(crate) struct GroupBy {
    keys: Vec<String>,
    values: Vec<u64>,
}

/// Tasks of the first phase, partitions of the second, and distinct keys.
const GROUP_TASKS: usize = 64;
const PARTITIONS: usize = 16;
const DISTINCT_KEYS: u64 = 50_000;

/// FNV-1a: a hash of a key's bytes that is the same in every process.
fn fnv(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl GroupBy {
    pub(crate) fn new(rows: usize) -> GroupBy {
        GroupBy {
            keys: (0..rows as u64)
                .map(|i| format!("customer-{:08x}", mix(i) % DISTINCT_KEYS))
                .collect(),
            values: (0..rows as u64).map(|i| mix(!i) % 1000).collect(),
        }
    }

    /// One group-by of every row; (checksum, rows aggregated).
    pub(crate) fn run(&self, exec: &Exec<'_>) -> (u64, u64) {
        let rows = self.keys.len();
        let chunk = rows.div_ceil(GROUP_TASKS).max(1);
        // Phase one: each participant's own maps, one per partition; combining them only
        // gathers the maps (one list per participant, in partition order).
        let maps = exec.fold(
            GROUP_TASKS,
            Vec::new,
            |maps: &mut Vec<HashMap<String, u64>>, task| {
                if maps.is_empty() {
                    maps.resize_with(PARTITIONS, HashMap::new);
                }
                for row in (task * chunk).min(rows)..((task + 1) * chunk).min(rows) {
                    let key = &self.keys[row];
                    let map = &mut maps[(fnv(key) % PARTITIONS as u64) as usize];
                    match map.get_mut(key.as_str()) {
                        Some(sum) => *sum += self.values[row],
                        None => {
                            map.insert(key.clone(), self.values[row]);
                        }
                    }
                }
            },
            |mut a, b| {
                a.extend(b);
                a
            },
        );
        // Phase two: each partition's maps merged by one participant (freeing keys that
        // other threads allocated), into its checksum.
        let mut partitions: Vec<(Vec<HashMap<String, u64>>, u64)> =
            (0..PARTITIONS).map(|_| (Vec::new(), 0)).collect();
        for (i, map) in maps.into_iter().enumerate() {
            partitions[i % PARTITIONS].0.push(map);
        }
        exec.for_each_mut(&mut partitions, |_, (maps, checksum)| {
            let mut merged: HashMap<String, u64> = HashMap::new();
            for (key, sum) in std::mem::take(maps).into_iter().flatten() {
                *merged.entry(key).or_insert(0) += sum;
            }
            *checksum = merged.iter().fold(0u64, |acc, (key, &sum)| {
                acc.wrapping_add(mix(fnv(key) ^ sum))
            });
        });
        let total = partitions
            .iter()
            .fold(0u64, |acc, &(_, checksum)| acc.wrapping_add(checksum));
        (total, rows as u64)
    }
}

/// Many short queries back to back, as a database serves small requests: each query is one
/// parallel region that filters a batch of `QUERY_ROWS` rows against a threshold and sums
/// what passed, the batches of a 4 MiB table taken in turn. A few microseconds of work per
/// region, so what the region costs to start and end shows.
pub(crate) struct ShortQueries {
    table: Vec<u32>,
    queries: usize,
}

/// Rows per query, tasks per query, and rows of the table the batches come from.
const QUERY_ROWS: usize = 4096;
const QUERY_TASKS: usize = 4;
const QUERY_TABLE_ROWS: usize = 1 << 20;

impl ShortQueries {
    pub(crate) fn new(queries: usize) -> ShortQueries {
        ShortQueries {
            table: (0..QUERY_TABLE_ROWS as u64)
                .map(|i| mix(i) as u32)
                .collect(),
            queries,
        }
    }

    /// `queries` regions; (checksum, rows scanned).
    pub(crate) fn run(&self, exec: &Exec<'_>) -> (u64, u64) {
        let batches = QUERY_TABLE_ROWS / QUERY_ROWS;
        let total: u64 = (0..self.queries)
            .map(|query| {
                let batch = &self.table[(query % batches) * QUERY_ROWS..][..QUERY_ROWS];
                let threshold = (query % 100) as u32;
                exec.sum(QUERY_TASKS, |task| {
                    let rows = batch
                        .chunks(QUERY_ROWS / QUERY_TASKS)
                        .nth(task)
                        .unwrap_or(&[]);
                    let passed = rows.iter().filter(|&&v| v % 100 >= threshold);
                    passed.map(|&v| u64::from(v)).sum::<u64>()
                })
            })
            .sum();
        (total, (self.queries * QUERY_ROWS) as u64)
    }
}

/// One timed run: wall time, this process's CPU time, and what the run returned.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub(crate) wall: std::time::Duration,
    pub(crate) cpu: std::time::Duration,
    pub(crate) checksum: u64,
    pub(crate) work: u64,
}

impl Workloads {
    /// Runs `workload` once on `exec`, timed.
    pub(crate) fn measure(&self, workload: Workload, exec: &Exec<'_>) -> Sample {
        let (cpu0, wall0) = (rayforce_rt::process_cpu_time(), std::time::Instant::now());
        let (checksum, work) = self.run(workload, exec);
        Sample {
            wall: wall0.elapsed(),
            cpu: rayforce_rt::process_cpu_time() - cpu0,
            checksum,
            work,
        }
    }
}
