//! Every real sysfs dump in the repository's `fixtures/topology/` against its row of
//! `EXPECTED.tsv`.
#![cfg(target_os = "linux")]

mod common;

use common::fixtures;

use rayforce_tunables::cpu::{self, Affinity, CpuPolicy, CpuSet, QuotaCap, Source, SysRoot};

/// (name, online, physical) rows of EXPECTED.tsv.
fn expected() -> Vec<(String, usize, usize)> {
    common::table_rows("EXPECTED.tsv", 8)
        .into_iter()
        .map(|cols| {
            (
                cols[0].clone(),
                cols[1].parse().unwrap(),
                cols[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_fixture_matches_expected_counts() {
    for (name, online, physical) in expected() {
        let dir = fixtures().join(&name);
        let counts = cpu::read_at(SysRoot::new(&dir), Affinity::AllOnline);
        assert_eq!(counts.online.value, online, "{name}: online");
        assert_eq!(
            counts.schedulable.value, online,
            "{name}: schedulable = all online"
        );
        assert_eq!(
            counts.physical.value, physical,
            "{name}: physical ({:?})",
            counts.physical
        );
        assert!(
            !counts.online.fallback && !counts.physical.fallback,
            "{name}: {counts:?}"
        );
        assert_eq!(counts.quota, None, "{name}: dumps carry no cgroup");
        assert_eq!(counts.count(CpuPolicy::Physical, QuotaCap::Apply), physical);
    }
}

#[test]
fn sources_follow_the_documented_order() {
    let read = |name: &str| cpu::read_at(SysRoot::new(&fixtures().join(name)), Affinity::AllOnline);
    assert_eq!(
        read("intel-raptorlake-hybrid").physical.source,
        Source::CoreCpusList
    );
    assert_eq!(
        read("intel-xeon-ht-1c2t").physical.source,
        Source::ThreadSiblingsList
    );
    assert_eq!(
        read("ps3-cell-no-ids").physical.source,
        Source::ThreadSiblingsList
    );
    assert_eq!(
        read("intel-silver4108-2p8c2t").online.source,
        Source::OnlineList
    );
}

#[test]
fn physical_counts_only_schedulable_cores() {
    let dir = fixtures().join("intel-silver4108-2p8c2t"); // siblings are N and N+16
    let read = |list: &str| {
        let set = CpuSet::parse_list(list.as_bytes()).unwrap();
        cpu::read_at(SysRoot::new(&dir), Affinity::Given(&set))
    };
    let pair = read("0,16");
    assert_eq!((pair.schedulable.value, pair.physical.value), (2, 1));
    let split = read("0-1");
    assert_eq!((split.schedulable.value, split.physical.value), (2, 2));
    let offline_too = read("0,200-300");
    assert_eq!(
        offline_too.schedulable.value, 1,
        "CPUs not online are not schedulable"
    );
    let none_online = read("200");
    assert!(none_online.schedulable.fallback, "{none_online:?}");
    assert_eq!(none_online.schedulable.value, 32);
}

#[test]
fn offline_cpu0_is_not_counted() {
    let dir = fixtures().join("intel-haswell-offline-cpu0");
    let set = CpuSet::parse_list(b"0-5").unwrap();
    let counts = cpu::read_at(SysRoot::new(&dir), Affinity::Given(&set));
    assert_eq!(counts.schedulable.value, 2, "CPUs 0-3 are offline");
    assert_eq!(counts.physical.value, 2);
}
