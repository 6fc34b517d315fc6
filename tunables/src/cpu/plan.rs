//! The placement plan: which CPU each helper of a pool gets, computed from the affinity
//! mask (never from CPU ids `0..n`: a mask may start anywhere and have holes), the cores
//! (SMT sibling lists) with their packages, and the NUMA nodes. Allocates: it is computed
//! when a pool starts helpers or follows a new mask, never inside the allocator.

use super::fs::{self, StackPath};
use super::nodes::Nodes;
use super::{CpuSet, Place, SysRoot};
use crate::number;

/// A sibling list or an id file.
const LIST_BUFFER_BYTES: usize = 8192;

/// Where one helper goes: a CPU, its node, and the node whose memory its arena should
/// prefer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Spot {
    /// The CPU the helper is pinned to (the lowest allowed sibling of its core, for the
    /// first helper on a core).
    pub cpu: usize,
    /// The CPU's NUMA node, if it is in an online node.
    pub node: Option<usize>,
    /// The node whose memory the helper's arena prefers: its own node when the plan spans
    /// two or more nodes and the cpuset allows that node's memory; otherwise none (one node
    /// has nothing to prefer, and a forbidden node's memory is never asked for).
    pub memory_node: Option<usize>,
}

/// Which CPU each helper gets: helper `k` (1-based) the `k`-th spot. Helpers beyond the
/// allowed CPUs get none and float.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    spots: Vec<Spot>,
    cores: usize,
}

impl Plan {
    /// Helper `helper`'s spot (1-based, as pool helpers are numbered); `None` beyond the
    /// allowed CPUs.
    pub fn spot(&self, helper: usize) -> Option<Spot> {
        helper
            .checked_sub(1)
            .and_then(|k| self.spots.get(k))
            .copied()
    }

    /// Every spot, helper 1 first.
    pub fn spots(&self) -> &[Spot] {
        &self.spots
    }

    /// The allowed cores the plan chose from: helpers up to this many get a core each;
    /// later ones (a wide dispatch's) get the remaining siblings.
    pub fn cores(&self) -> usize {
        self.cores
    }
}

/// One core: its allowed CPUs (ascending), package and node.
struct Core {
    cpus: Vec<usize>,
    package: u64,
    node: Option<usize>,
}

/// The plan for `helpers` helpers on the machine under `root`, with the process allowed on
/// `mask` (also limited by the cpuset, where `root` says one). `Place::Off` plans nothing.
pub fn plan(root: SysRoot<'_>, mask: &CpuSet, place: Place, helpers: usize) -> Plan {
    let nodes = super::read_nodes(root, mask);
    let mut allowed = *mask;
    if let Some(cpuset) = nodes.cpuset_cpus() {
        allowed.intersect_with(cpuset);
    }
    if place == Place::Off || allowed.is_empty() {
        return Plan {
            spots: Vec::new(),
            cores: 0,
        };
    }
    let cores = ordered(read_cores(root, &allowed, &nodes), place);
    let mut cpus = Vec::with_capacity(helpers.min(allowed.count()));
    // First one CPU of every core, then the second siblings, and so on.
    for round in 0.. {
        let before = cpus.len();
        cpus.extend(
            cores
                .iter()
                .filter_map(|core| core.cpus.get(round).copied()),
        );
        if cpus.len() == before || cpus.len() >= helpers {
            break;
        }
    }
    cpus.truncate(helpers);
    let mut used = CpuSet::new();
    cpus.iter()
        .filter_map(|&cpu| nodes.node_of(cpu))
        .for_each(|node| {
            used.insert(node);
        });
    let several_nodes = used.count() >= 2;
    let spots = cpus
        .into_iter()
        .map(|cpu| {
            let node = nodes.node_of(cpu);
            let memory_node = node.filter(|&n| several_nodes && nodes.memory_allowed(n));
            Spot {
                cpu,
                node,
                memory_node,
            }
        })
        .collect();
    Plan {
        spots,
        cores: cores.len(),
    }
}

/// The cores among `allowed`: sibling groups from `core_cpus_list` (else
/// `thread_siblings_list`), else every CPU a core of its own; each with its package.
fn read_cores(root: SysRoot<'_>, allowed: &CpuSet, nodes: &Nodes) -> Vec<Core> {
    let mut buf = [0u8; LIST_BUFFER_BYTES];
    let mut path = StackPath::new(root.as_bytes());
    path.push(b"/sys/devices/system/cpu/cpu");
    let base = path.len();
    let mut read = |cpu: usize, file: &[u8], buf: &mut [u8]| -> Option<Vec<u8>> {
        path.truncate(base);
        path.push_number(cpu).push(b"/topology/").push(file);
        fs::read_file(&mut path, buf).map(<[u8]>::to_vec)
    };
    let mut seen = CpuSet::new();
    let mut cores = Vec::new();
    for cpu in allowed.iter() {
        if seen.contains(cpu) {
            continue;
        }
        let siblings = [b"core_cpus_list".as_slice(), b"thread_siblings_list"]
            .iter()
            .find_map(|file| {
                let list = CpuSet::parse_list(&read(cpu, file, &mut buf)?).ok()?;
                list.contains(cpu).then_some(list)
            });
        let mut core_cpus = CpuSet::new();
        core_cpus.insert(cpu);
        if let Some(siblings) = siblings {
            core_cpus.union_with(&siblings);
        }
        core_cpus.intersect_with(allowed);
        seen.union_with(&core_cpus);
        let package = read(cpu, b"physical_package_id", &mut buf)
            .and_then(|id| number::parse_u64(number::trim(&id)).ok())
            .unwrap_or(0);
        cores.push(Core {
            cpus: core_cpus.iter().collect(),
            package,
            node: nodes.node_of(cpu),
        });
    }
    cores
}

/// The cores in the order helpers take them. Both modes group them by package (ascending
/// id) and, within a package, by node. `Close` then takes a package's cores node by node
/// before the next package's; `Spread` takes one core of each package in turn, and within
/// a package one of each node in turn, so packages (and nodes) stay within one helper of
/// each other until one runs out of cores.
fn ordered(mut cores: Vec<Core>, place: Place) -> Vec<Core> {
    cores.sort_by_key(|c| (c.package, c.node.unwrap_or(usize::MAX), c.cpus[0]));
    if place != Place::Spread {
        return cores;
    }
    // Per package, its cores round-robin over its nodes; then the packages round-robin.
    let mut packages: Vec<Vec<Core>> = Vec::new();
    for core in cores {
        match packages.last_mut() {
            Some(package) if package[0].package == core.package => package.push(core),
            _ => packages.push(vec![core]),
        }
    }
    let packages: Vec<Vec<Core>> = packages.into_iter().map(round_robin_by_node).collect();
    interleave(packages)
}

/// One package's cores (sorted by node), taking one core of each node in turn.
fn round_robin_by_node(cores: Vec<Core>) -> Vec<Core> {
    let mut nodes: Vec<Vec<Core>> = Vec::new();
    for core in cores {
        match nodes.last_mut() {
            Some(node) if node[0].node == core.node => node.push(core),
            _ => nodes.push(vec![core]),
        }
    }
    interleave(nodes)
}

/// The first element of each group, then the second of each, and so on.
fn interleave(groups: Vec<Vec<Core>>) -> Vec<Core> {
    let total = groups.iter().map(Vec::len).sum();
    let mut iters: Vec<_> = groups.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::with_capacity(total);
    while out.len() < total {
        out.extend(iters.iter_mut().filter_map(Iterator::next));
    }
    out
}
