//! NUMA nodes: which online nodes hold the CPUs read, each one's CPUs, and whether the
//! process may use its memory (the cpuset's `mems`), from `sys/devices/system/node/`, read
//! without allocating. A machine or dump without that directory, or whose nodes hold none
//! of the CPUs, is one node (node 0).

use super::cpuset_limits::{self, CpusetLimits};
use super::fs::{self, StackPath};
use super::{CpuSet, SysRoot, MAX_CPUS};
use crate::number;

/// Node ids the reading keeps: Linux's `MAX_NUMNODES` at its largest (`NODES_SHIFT` 10).
pub const MAX_NODES: usize = 1024;

/// `node_of` for a CPU that belongs to no online node (an offline node's CPUs).
const NO_NODE: u16 = u16::MAX;

/// A node's `cpulist`, or its `cpumap` (8192 CPUs as hex words is about 2.3 KiB).
const LIST_BUFFER_BYTES: usize = 8192;

/// Where the nodes came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeSource {
    /// `sys/devices/system/node/`: its `online` list (else its `nodeN` directories) and
    /// each node's `cpulist` (else `cpumap`).
    NodeDirectory,
    /// No node directory, or no node holds any of the CPUs: one node, 0, with every CPU.
    OneNode,
}

/// The NUMA nodes among a set of CPUs (about 19 KiB, on the stack).
#[derive(Clone)]
pub struct Nodes {
    /// The node of each CPU read; [`NO_NODE`] for CPUs in no online node.
    node_of: [u16; MAX_CPUS],
    /// The nodes that hold at least one of the CPUs read (a `CpuSet` of node ids).
    ids: CpuSet,
    /// Nodes whose memory the process may use: the cpuset's `mems`, else every node.
    mems: Option<CpuSet>,
    /// The CPUs the cpuset allows, where it could be read.
    cpuset_cpus: Option<CpuSet>,
    source: NodeSource,
}

impl Nodes {
    /// No node yet.
    fn new(limits: CpusetLimits, source: NodeSource) -> Nodes {
        Nodes {
            node_of: [NO_NODE; MAX_CPUS],
            ids: CpuSet::new(),
            mems: limits.mems,
            cpuset_cpus: limits.cpus,
            source,
        }
    }

    /// One node, 0, with every CPU of `cpus`.
    fn one_node(cpus: &CpuSet, limits: CpusetLimits) -> Nodes {
        let mut nodes = Nodes::new(limits, NodeSource::OneNode);
        nodes.ids.insert(0);
        cpus.iter().for_each(|cpu| nodes.node_of[cpu] = 0);
        nodes
    }

    /// The node ids, ascending (sparse: ids are labels, such as 0-2, 33, 72).
    pub fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.ids.iter()
    }

    /// How many nodes hold any of the CPUs read.
    pub fn count(&self) -> usize {
        self.ids.count()
    }

    /// The CPUs read that belong to `node`.
    pub fn cpus(&self, node: usize) -> CpuSet {
        let mut set = CpuSet::new();
        for (cpu, &of) in self.node_of.iter().enumerate() {
            if usize::from(of) == node {
                set.insert(cpu);
            }
        }
        set
    }

    /// The node of `cpu`, if it is one of the CPUs read and in an online node.
    pub fn node_of(&self, cpu: usize) -> Option<usize> {
        match self.node_of.get(cpu) {
            Some(&NO_NODE) | None => None,
            Some(&node) => Some(usize::from(node)),
        }
    }

    /// Whether the process may use `node`'s memory (the cpuset's `mems`; every node when
    /// that cannot be read).
    pub fn memory_allowed(&self, node: usize) -> bool {
        self.mems.as_ref().is_none_or(|mems| mems.contains(node))
    }

    /// The CPUs the process's cpuset allows, where it could be read (on a live system the
    /// affinity mask says the same; a dump of another machine says it only here).
    pub fn cpuset_cpus(&self) -> Option<&CpuSet> {
        self.cpuset_cpus.as_ref()
    }

    /// Where the nodes came from.
    pub fn source(&self) -> NodeSource {
        self.source
    }
}

/// The nodes among `cpus` on the machine whose files lie under `root`. Allocation-free.
pub(super) fn read(root: SysRoot<'_>, cpus: &CpuSet) -> Nodes {
    let limits = cpuset_limits::read(root);
    let mut dir = StackPath::new(root.as_bytes());
    dir.push(b"/sys/devices/system/node");
    let Some(online) = online_nodes(&mut dir) else {
        return Nodes::one_node(cpus, limits);
    };
    let mut nodes = Nodes::new(limits, NodeSource::NodeDirectory);
    let base = dir.len();
    let mut buf = [0u8; LIST_BUFFER_BYTES];
    for node in online.iter().take_while(|&n| n < MAX_NODES) {
        dir.truncate(base);
        dir.push(b"/node").push_number(node);
        let Some(mut node_cpus) = node_cpus(&mut dir, &mut buf) else {
            continue;
        };
        node_cpus.intersect_with(cpus);
        for cpu in node_cpus.iter() {
            if nodes.node_of[cpu] == NO_NODE {
                nodes.node_of[cpu] = node as u16;
                nodes.ids.insert(node);
            }
        }
    }
    if nodes.ids.is_empty() {
        let limits = CpusetLimits {
            cpus: nodes.cpuset_cpus,
            mems: nodes.mems,
        };
        return Nodes::one_node(cpus, limits);
    }
    nodes
}

/// The online nodes: the `online` list, else the `nodeN` directories; `None` when there is
/// no node directory.
fn online_nodes(dir: &mut StackPath) -> Option<CpuSet> {
    let len = dir.len();
    dir.push(b"/online");
    let mut buf = [0u8; 4096];
    let listed = fs::read_file(dir, &mut buf).and_then(|b| CpuSet::parse_list(b).ok());
    dir.truncate(len);
    if let Some(set) = listed.filter(|s| !s.is_empty()) {
        return Some(set);
    }
    let mut set = CpuSet::new();
    let opened = fs::for_each_dir_entry(dir, |name| {
        let id = name
            .strip_prefix(b"node")
            .filter(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
            .and_then(|d| number::parse_u64(d).ok());
        if let Some(id) = id {
            set.insert(id as usize);
        }
    });
    opened.then_some(set)
}

/// The CPUs of the node whose directory is `dir`: `cpulist`, else the `cpumap` mask.
fn node_cpus(dir: &mut StackPath, buf: &mut [u8]) -> Option<CpuSet> {
    let len = dir.len();
    dir.push(b"/cpulist");
    let listed = fs::read_file(dir, buf).and_then(|b| CpuSet::parse_list(b).ok());
    dir.truncate(len);
    if listed.is_some() {
        return listed;
    }
    dir.push(b"/cpumap");
    let mask = fs::read_file(dir, buf).and_then(parse_mask);
    dir.truncate(len);
    mask
}

/// The kernel's hex mask syntax (`ff,00000003`: 32-bit words, most significant first).
fn parse_mask(bytes: &[u8]) -> Option<CpuSet> {
    let bytes = number::trim(bytes);
    let mut set = CpuSet::new();
    for (word_index, word) in bytes.rsplit(|&b| b == b',').enumerate() {
        if word.is_empty() || word.len() > 8 {
            return None;
        }
        let mut value = 0u32;
        for &digit in word {
            value = value << 4 | (digit as char).to_digit(16)?;
        }
        for bit in 0..32 {
            if value & (1 << bit) != 0 && !set.insert(word_index * 32 + bit) {
                return None;
            }
        }
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::parse_mask;

    #[test]
    fn masks_are_hex_words_most_significant_first() {
        let set = parse_mask(b"00000001,80000003\n").unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 31, 32]);
        assert!(parse_mask(b"xyz").is_none());
        assert!(parse_mask(b"1,,2").is_none());
    }
}
