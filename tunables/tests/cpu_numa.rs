//! NUMA nodes and placement plans on the repository's real sysfs dumps: every node of
//! `EXPECTED-numa.tsv` with its CPUs, cores and allowed flag; plans for every helper count
//! on every dump, in both modes, against the mask, the cores, the packages and the cpuset.
#![cfg(target_os = "linux")]

mod common;

use common::fixtures;
use rayforce_tunables::cpu::{self, Affinity, CpuSet, NodeSource, Place, SysRoot};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// (fixture, node, cpus, cores, allowed) rows of EXPECTED-numa.tsv.
fn expected_nodes() -> Vec<(String, usize, CpuSet, usize, bool)> {
    common::table_rows("EXPECTED-numa.tsv", 20)
        .into_iter()
        .map(|cols| {
            (
                cols[0].clone(),
                cols[1].parse().unwrap(),
                CpuSet::parse_list(cols[2].as_bytes()).unwrap(),
                cols[3].parse().unwrap(),
                cols[4] == "1",
            )
        })
        .collect()
}

/// Every fixture directory (those with NUMA files and those without).
fn all_fixtures() -> Vec<String> {
    common::table_rows("EXPECTED.tsv", 8)
        .into_iter()
        .map(|cols| cols[0].clone())
        .collect()
}

fn online(dir: &Path) -> CpuSet {
    let list = std::fs::read(dir.join("sys/devices/system/cpu/online")).unwrap();
    CpuSet::parse_list(&list).unwrap()
}

/// A CPU's topology file, if the dump has it.
fn topology(dir: &Path, cpu: usize, file: &str) -> Option<String> {
    let path = dir.join(format!("sys/devices/system/cpu/cpu{cpu}/topology/{file}"));
    std::fs::read_to_string(path).ok()
}

/// The lowest CPU of `cpu`'s core (its sibling list), as the dump says it.
fn core_of(dir: &Path, cpu: usize) -> usize {
    ["core_cpus_list", "thread_siblings_list"]
        .iter()
        .find_map(|file| CpuSet::parse_list(topology(dir, cpu, file)?.as_bytes()).ok())
        .and_then(|siblings| siblings.iter().next())
        .unwrap_or(cpu)
}

fn package_of(dir: &Path, cpu: usize) -> u64 {
    topology(dir, cpu, "physical_package_id").map_or(0, |id| id.trim().parse().unwrap_or(0))
}

#[test]
fn every_node_of_every_numa_dump_has_its_cpus_cores_and_allowed_flag() {
    let rows = expected_nodes();
    let mut by_fixture: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (fixture, node, _, _, _) in &rows {
        by_fixture.entry(fixture).or_default().insert(*node);
    }
    for (fixture, node, cpus, cores, allowed) in &rows {
        let dir = fixtures().join(fixture);
        let root = SysRoot::new(&dir);
        let nodes = cpu::read_nodes(root, &online(&dir));
        assert_eq!(nodes.source(), NodeSource::NodeDirectory, "{fixture}");
        let ids: BTreeSet<usize> = nodes.ids().collect();
        assert_eq!(&ids, &by_fixture[fixture.as_str()], "{fixture}: node ids");
        let read = nodes.cpus(*node);
        assert_eq!(
            read.iter().collect::<Vec<_>>(),
            cpus.iter().collect::<Vec<_>>(),
            "{fixture}: node {node}'s CPUs"
        );
        for cpu in cpus.iter() {
            assert_eq!(nodes.node_of(cpu), Some(*node), "{fixture}: CPU {cpu}");
        }
        let counted = cpu::read_at(root, Affinity::Given(&read)).physical.value;
        assert_eq!(counted, *cores, "{fixture}: node {node}'s cores");
        let mut allowed_cpus = read;
        if let Some(cpuset) = nodes.cpuset_cpus() {
            allowed_cpus.intersect_with(cpuset);
        }
        assert_eq!(
            nodes.memory_allowed(*node) && !allowed_cpus.is_empty(),
            *allowed,
            "{fixture}: node {node} allowed"
        );
    }
}

#[test]
fn the_cpuset_dump_reads_its_cpus_and_mems() {
    let dir = fixtures().join("amd-opteron-8n2c-cpusets");
    let nodes = cpu::read_nodes(SysRoot::new(&dir), &online(&dir));
    let cpus: Vec<usize> = nodes
        .cpuset_cpus()
        .expect("the dump's cpuset")
        .iter()
        .collect();
    assert_eq!(cpus, [0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 15]);
    let mems: Vec<usize> = nodes.ids().filter(|&n| nodes.memory_allowed(n)).collect();
    assert_eq!(
        mems,
        [1, 2, 3, 4],
        "hwloc's rule: a node is allowed when in mems"
    );
}

#[test]
fn a_dump_without_node_files_is_one_node_with_every_cpu() {
    for name in [
        "intel-raptorlake-hybrid",
        "intel-silver4108-2p8c2t",
        "power9-smt4-holes",
    ] {
        let dir = fixtures().join(name);
        assert!(!dir.join("sys/devices/system/node").exists(), "{name}");
        let cpus = online(&dir);
        let nodes = cpu::read_nodes(SysRoot::new(&dir), &cpus);
        assert_eq!(nodes.source(), NodeSource::OneNode, "{name}");
        assert_eq!(nodes.ids().collect::<Vec<_>>(), [0], "{name}");
        assert_eq!(nodes.cpus(0), cpus, "{name}");
        assert!(
            nodes.memory_allowed(0) && nodes.cpuset_cpus().is_none(),
            "{name}"
        );
    }
}

#[test]
fn cpus_of_an_offline_node_belong_to_no_node() {
    let dir = fixtures().join("intel-haswell-offline-node0");
    let nodes = cpu::read_nodes(SysRoot::new(&dir), &online(&dir));
    assert_eq!(nodes.ids().collect::<Vec<_>>(), [1]);
    assert_eq!(nodes.node_of(4), None, "even CPUs are node 0's, offline");
    assert_eq!(nodes.node_of(5), Some(1));
}

/// Checks the plans for every helper count from 1 to the cores allowed on one dump.
fn check_plans(name: &str, mask: &CpuSet) {
    let dir = fixtures().join(name);
    let root = SysRoot::new(&dir);
    let nodes = cpu::read_nodes(root, mask);
    let mut allowed = *mask;
    if let Some(cpuset) = nodes.cpuset_cpus() {
        allowed.intersect_with(cpuset);
    }
    let cores = cpu::plan(root, mask, Place::Spread, usize::MAX).cores();
    let distinct_cores: BTreeSet<usize> = allowed.iter().map(|c| core_of(&dir, c)).collect();
    assert_eq!(cores, distinct_cores.len(), "{name}: allowed cores");
    // Cores per package, for the spread check.
    let mut package_cores: BTreeMap<u64, usize> = BTreeMap::new();
    for core in &distinct_cores {
        *package_cores.entry(package_of(&dir, *core)).or_default() += 1;
    }
    for place in [Place::Spread, Place::Close] {
        for helpers in 1..=cores {
            let plan = cpu::plan(root, mask, place, helpers);
            let what = format!("{name}, {place}, {helpers} helpers");
            assert_eq!(plan.spots().len(), helpers, "{what}");
            let mut used_cores = BTreeSet::new();
            let mut per_package: BTreeMap<u64, usize> = BTreeMap::new();
            for spot in plan.spots() {
                assert!(
                    allowed.contains(spot.cpu),
                    "{what}: CPU {} outside",
                    spot.cpu
                );
                assert!(
                    used_cores.insert(core_of(&dir, spot.cpu)),
                    "{what}: two helpers on CPU {}'s core",
                    spot.cpu
                );
                assert_eq!(spot.node, nodes.node_of(spot.cpu), "{what}");
                if let Some(memory) = spot.memory_node {
                    assert!(
                        nodes.memory_allowed(memory),
                        "{what}: node {memory}'s memory"
                    );
                    assert_eq!(Some(memory), spot.node, "{what}");
                }
                *per_package.entry(package_of(&dir, spot.cpu)).or_default() += 1;
            }
            if place == Place::Spread {
                // Within one helper of each other, except packages already full.
                let (most, least) =
                    package_cores
                        .iter()
                        .fold((0, usize::MAX), |(m, l), (p, &n)| {
                            let used = per_package.get(p).copied().unwrap_or(0);
                            (m.max(used), if used < n { l.min(used) } else { l })
                        });
                assert!(
                    least == usize::MAX || most <= least + 1,
                    "{what}: {per_package:?}"
                );
            } else {
                // One package fills before the next: at most one package partly used.
                let partial = per_package
                    .iter()
                    .filter(|(p, &used)| used < package_cores[p])
                    .count();
                assert!(partial <= 1, "{what}: {per_package:?}");
            }
        }
    }
}

#[test]
fn every_plan_puts_helpers_on_distinct_allowed_cores_and_balances_packages() {
    for name in all_fixtures() {
        let dir = fixtures().join(&name);
        check_plans(&name, &online(&dir));
    }
}

#[test]
fn plans_follow_a_mask_that_does_not_start_at_zero() {
    let name = "intel-silver4108-2p8c2t"; // siblings are N and N+16
    let mask = CpuSet::parse_list(b"9-12,25-28").unwrap();
    check_plans(name, &mask);
    let plan = cpu::plan(
        SysRoot::new(&fixtures().join(name)),
        &mask,
        Place::Spread,
        8,
    );
    let cpus: Vec<usize> = plan.spots().iter().map(|s| s.cpu).collect();
    assert_eq!(
        &cpus[..4].iter().copied().collect::<BTreeSet<_>>(),
        &BTreeSet::from([9, 10, 11, 12])
    );
    assert_eq!(
        cpus[4..].iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([25, 26, 27, 28]),
        "a wide dispatch's helpers get the remaining siblings"
    );
}

#[test]
fn the_cpuset_keeps_helpers_off_forbidden_cpus_and_memory() {
    let name = "amd-opteron-8n2c-cpusets";
    let dir = fixtures().join(name);
    let plan = cpu::plan(SysRoot::new(&dir), &online(&dir), Place::Spread, usize::MAX);
    let cpus: BTreeSet<usize> = plan.spots().iter().map(|s| s.cpu).collect();
    assert_eq!(cpus, BTreeSet::from([0, 1, 2, 3, 5, 6, 12, 13, 14, 15]));
    for spot in plan.spots() {
        assert!(
            spot.memory_node.is_none_or(|n| (1..=4).contains(&n)),
            "{spot:?}: memory the cpuset forbids"
        );
    }
    let on_node0 = plan.spots().iter().find(|s| s.cpu == 0).unwrap();
    assert_eq!((on_node0.node, on_node0.memory_node), (Some(0), None));
    let on_node1 = plan.spots().iter().find(|s| s.cpu == 2).unwrap();
    assert_eq!(
        on_node1.memory_node,
        Some(1),
        "several nodes: prefer its own"
    );
}

#[test]
fn one_node_plans_prefer_no_memory_and_off_plans_nothing() {
    let dir = fixtures().join("intel-silver4108-2p8c2t");
    let root = SysRoot::new(&dir);
    let plan = cpu::plan(root, &online(&dir), Place::Close, 4);
    assert!(plan
        .spots()
        .iter()
        .all(|s| s.node == Some(0) && s.memory_node.is_none()));
    assert!(cpu::plan(root, &online(&dir), Place::Off, 4)
        .spots()
        .is_empty());
    let numa = fixtures().join("amd-bulldozer-4p8n-numa");
    let one_node = cpu::plan(
        SysRoot::new(&numa),
        &CpuSet::parse_list(b"0-7").unwrap(),
        Place::Spread,
        4,
    );
    assert!(one_node
        .spots()
        .iter()
        .all(|s| s.node == Some(0) && s.memory_node.is_none()));
}
