//! What `inspect` shows of the machine's NUMA nodes and of placement: each node's CPUs,
//! cores and whether its memory is allowed, and for a placement mode the CPU and node each
//! helper gets (planned, for a dump or another mask) or got (this process's pool, with why a
//! helper is not placed).

use rayforce_rt::cpu::{self, Affinity, CpuSet, Place, SysRoot};
use serde::Serialize;
use std::fmt;

/// One NUMA node among the CPUs read.
#[derive(Clone, Debug, Serialize)]
pub struct NodeReport {
    /// The node's id (a label: ids may be sparse).
    pub node: usize,
    /// Its CPUs among those read, in kernel list syntax.
    pub cpus: String,
    /// Physical cores among them.
    pub cores: usize,
    /// Whether the process may use its memory (the cpuset's `mems`).
    pub memory_allowed: bool,
}

impl NodeReport {
    /// The nodes among `cpus` on the machine under `root` (one node, 0, without node files).
    pub fn read(root: SysRoot<'_>, cpus: &CpuSet) -> Vec<NodeReport> {
        let nodes = cpu::read_nodes(root, cpus);
        nodes
            .ids()
            .map(|node| {
                let node_cpus = nodes.cpus(node);
                NodeReport {
                    node,
                    cpus: node_cpus.to_string(),
                    cores: cpu::read_at(root, Affinity::Given(&node_cpus))
                        .physical
                        .value,
                    memory_allowed: nodes.memory_allowed(node),
                }
            })
            .collect()
    }
}

/// Where each helper goes under one placement mode.
#[derive(Clone, Debug, Serialize)]
pub struct PlacementReport {
    /// `spread` or `close`.
    pub mode: Place,
    /// Helper 1 first.
    pub helpers: Vec<HelperReport>,
}

/// One helper's CPU and node, or why it has none.
#[derive(Clone, Debug, Serialize)]
pub struct HelperReport {
    /// 1-based (the caller, worker 0, is never pinned).
    pub helper: usize,
    /// Its CPU.
    pub cpu: Option<usize>,
    /// That CPU's node.
    pub node: Option<usize>,
    /// The node whose memory its arena prefers (several nodes only).
    pub memory_node: Option<usize>,
    /// Why it is not placed, if it is not.
    pub not_placed: Option<String>,
}

impl PlacementReport {
    /// The plan for `helpers` helpers inside `mask` on the machine under `root`; `None`
    /// when `mode` is off.
    pub fn planned(
        root: SysRoot<'_>,
        mask: &CpuSet,
        mode: Place,
        helpers: usize,
    ) -> Option<PlacementReport> {
        if mode == Place::Off {
            return None;
        }
        let plan = cpu::plan(root, mask, mode, helpers);
        let helpers = (1..=helpers)
            .map(|helper| match plan.spot(helper) {
                Some(spot) => HelperReport {
                    helper,
                    cpu: Some(spot.cpu),
                    node: spot.node,
                    memory_node: spot.memory_node,
                    not_placed: None,
                },
                None => unplaced(helper, rayforce_pool::PlaceFailure::NoCpu.to_string()),
            })
            .collect();
        Some(PlacementReport { mode, helpers })
    }

    /// Where a running pool's helpers are; `None` when `mode` is off.
    pub fn of(mode: Place, placed: &[rayforce_pool::HelperPlacement]) -> Option<PlacementReport> {
        if mode == Place::Off {
            return None;
        }
        let helpers = placed
            .iter()
            .map(|p| match p.failure {
                None => HelperReport {
                    helper: p.helper,
                    cpu: p.cpu,
                    node: p.node,
                    memory_node: p.memory_node,
                    not_placed: None,
                },
                Some(failure) => unplaced(p.helper, failure.to_string()),
            })
            .collect();
        Some(PlacementReport { mode, helpers })
    }
}

fn unplaced(helper: usize, why: String) -> HelperReport {
    HelperReport {
        helper,
        cpu: None,
        node: None,
        memory_node: None,
        not_placed: Some(why),
    }
}

/// The node lines of `inspect`.
pub(crate) fn write_nodes(f: &mut fmt::Formatter<'_>, nodes: &[NodeReport]) -> fmt::Result {
    write!(f, "\nnodes: {}", nodes.len())?;
    for n in nodes {
        let memory = if n.memory_allowed {
            "memory allowed"
        } else {
            "memory not allowed (cpuset mems)"
        };
        let cores = if n.cores == 1 { "core" } else { "cores" };
        write!(
            f,
            "\n  node {}: CPUs {} ({} {cores}), {memory}",
            n.node, n.cpus, n.cores
        )?;
    }
    Ok(())
}

impl fmt::Display for PlacementReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "placement: {} (the caller floats)", self.mode)?;
        for h in &self.helpers {
            write!(f, "\n  helper {}: ", h.helper)?;
            match (h.cpu, &h.not_placed) {
                (Some(cpu), None) => {
                    write!(f, "CPU {cpu}")?;
                    match (h.node, h.memory_node) {
                        (Some(node), Some(memory)) => {
                            write!(f, " (node {node}, memory from node {memory})")?
                        }
                        (Some(node), None) => write!(f, " (node {node})")?,
                        (None, _) => {}
                    }
                }
                (_, why) => write!(f, "not placed: {}", why.as_deref().unwrap_or("unknown"))?,
            }
        }
        Ok(())
    }
}
