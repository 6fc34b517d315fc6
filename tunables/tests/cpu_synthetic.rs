//! Synthetic sysfs/procfs trees for what the real dumps lack: SMT4 and SMT8, cgroup quotas,
//! split sibling pairs, missing and unreadable files; and a property test over random
//! topologies.
#![cfg(target_os = "linux")]

mod common;

use common::{adjacent, cgroup_v2, set, strided, Tree};
use proptest::prelude::*;
use rayforce_tunables::cpu::{CgroupVersion, CpuPolicy, CpuQuota, QuotaCap, Source};

#[test]
fn smt4_and_smt8_count_one_per_core() {
    let smt4 = Tree::new();
    smt4.smt(&strided(4, 4));
    let counts = smt4.read(None);
    assert_eq!((counts.online.value, counts.physical.value), (16, 4));

    let smt8 = Tree::new();
    smt8.smt(&adjacent(2, 8));
    let counts = smt8.read(None);
    assert_eq!((counts.online.value, counts.physical.value), (16, 2));
    assert_eq!(counts.physical.source, Source::CoreCpusList);
}

#[test]
fn affinity_that_splits_sibling_pairs() {
    let tree = Tree::new();
    tree.smt(&strided(4, 2)); // core c = CPUs c and c + 4
    let counts = tree.read(Some("0,1,4"));
    assert_eq!((counts.schedulable.value, counts.physical.value), (3, 2));
    let counts = tree.read(Some("0-3"));
    assert_eq!((counts.schedulable.value, counts.physical.value), (4, 4));
    let counts = tree.read(Some("2,6"));
    assert_eq!((counts.schedulable.value, counts.physical.value), (2, 1));
}

#[test]
fn no_topology_files_falls_back_to_schedulable_flagged() {
    let tree = Tree::new();
    tree.file("sys/devices/system/cpu/online", "0-5\n");
    let counts = tree.read(None);
    assert_eq!(counts.physical.value, 6);
    assert!(counts.physical.fallback);
    assert_eq!(counts.physical.source, Source::Substitute);
    assert!(!counts.online.fallback);
}

#[test]
fn core_ids_when_no_sibling_lists_with_ids_restarting_per_package() {
    let tree = Tree::new();
    tree.file("sys/devices/system/cpu/online", "0-7\n");
    for cpu in 0..8 {
        let topology = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        tree.file(
            &format!("{topology}/physical_package_id"),
            &format!("{}\n", cpu / 4),
        );
        tree.file(
            &format!("{topology}/core_id"),
            &format!("{}\n", (cpu % 4) / 2),
        );
    }
    let counts = tree.read(None);
    assert_eq!(
        counts.physical.value, 4,
        "2 packages x 2 cores, core ids 0 and 1 in each"
    );
    assert_eq!(counts.physical.source, Source::CoreIds);
}

#[test]
fn online_from_cpu_directories_when_no_online_file() {
    let tree = Tree::new();
    for cpu in 0..4 {
        tree.siblings(cpu, "core_cpus_list", &set([cpu]));
    }
    tree.file("sys/devices/system/cpu/cpu1/online", "0\n");
    tree.file("sys/devices/system/cpu/cpu2/online", "1\n");
    tree.unreadable("sys/devices/system/cpu/cpufreq");
    let counts = tree.read(None);
    assert_eq!(counts.online.source, Source::CpuDirectories);
    assert_eq!(
        counts.online.value, 3,
        "cpu1 is offline; cpu0 has no online file"
    );
    assert_eq!(counts.physical.value, 3);
}

#[test]
fn unreadable_or_malformed_files_fall_through() {
    let tree = Tree::new();
    tree.smt(&strided(2, 2));
    tree.file("sys/devices/system/cpu/online", "0-3,garbage\n");
    tree.unreadable("sys/devices/system/cpu/cpu0/topology/core_cpus_list");
    let counts = tree.read(None);
    assert_eq!(
        counts.online.source,
        Source::CpuDirectories,
        "malformed online list"
    );
    assert_eq!(counts.online.value, 4);
    assert_eq!(
        counts.physical.source,
        Source::ThreadSiblingsList,
        "core_cpus_list unreadable"
    );
    assert_eq!(counts.physical.value, 2);
}

#[test]
fn empty_tree_falls_back_to_sysconf() {
    let tree = Tree::new();
    let counts = tree.read(None);
    assert_eq!(counts.online.source, Source::Sysconf);
    assert!(counts.online.fallback);
    assert!(counts.is_valid());
}

#[test]
fn cgroup_v2_quota_tightest_ancestor_wins() {
    let tree = Tree::new();
    tree.smt(&strided(8, 1));
    cgroup_v2(
        &tree,
        &[
            ("app.slice/job", "350000 100000\n"),
            ("app.slice", "150000 100000\n"),
        ],
    );
    let counts = tree.read(None);
    let quota = counts.quota.expect("quota read");
    assert_eq!(
        (quota.quota_us, quota.period_us, quota.version),
        (150_000, 100_000, CgroupVersion::V2)
    );
    assert_eq!(quota.cap(), 2);
    assert_eq!(counts.count(CpuPolicy::Physical, QuotaCap::Apply), 2);
    assert_eq!(counts.count(CpuPolicy::Physical, QuotaCap::Ignore), 8);
}

#[test]
fn cgroup_v2_max_means_no_quota() {
    let tree = Tree::new();
    tree.smt(&strided(4, 1));
    cgroup_v2(&tree, &[("app.slice/job", "max 100000\n")]);
    assert_eq!(tree.read(None).quota, None);
}

#[test]
fn cgroup_without_any_cpu_max_ends_the_walk_with_no_quota() {
    let tree = Tree::new();
    tree.smt(&strided(2, 1));
    cgroup_v2(&tree, &[]);
    tree.unreadable("sys/fs/cgroup/app.slice/job");
    assert_eq!(tree.read(None).quota, None);
}

#[test]
fn cgroup_v1_quota_and_minus_one() {
    let tree = Tree::new();
    tree.smt(&strided(8, 1));
    tree.file("proc/self/cgroup", "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/x\n")
        .file(
            "proc/self/mountinfo",
            "40 30 0:35 / /sys/fs/cgroup/cpu\\040acct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n",
        )
        .file("sys/fs/cgroup/cpu acct/docker/abc/cpu.cfs_quota_us", "250000\n")
        .file("sys/fs/cgroup/cpu acct/docker/abc/cpu.cfs_period_us", "100000\n");
    let quota = tree
        .read(None)
        .quota
        .expect("v1 quota read through an escaped mount point");
    assert_eq!(
        quota,
        CpuQuota {
            quota_us: 250_000,
            period_us: 100_000,
            version: CgroupVersion::V1
        }
    );
    assert_eq!(quota.cap(), 3);

    tree.file("sys/fs/cgroup/cpu acct/docker/abc/cpu.cfs_quota_us", "-1\n");
    assert_eq!(tree.read(None).quota, None);
}

#[test]
fn cgroup_namespace_mount_root_is_stripped() {
    let tree = Tree::new();
    tree.smt(&strided(4, 1));
    tree.file("proc/self/cgroup", "0::/kubepods/pod1/ctr\n")
        .file(
            "proc/self/mountinfo",
            "30 22 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        )
        .file("sys/fs/cgroup/ctr/cpu.max", "50000 100000\n");
    let counts = tree.read(None);
    assert_eq!(counts.quota.map(|q| q.cap()), Some(1));
    assert_eq!(counts.count(CpuPolicy::Online, QuotaCap::Apply), 1);
}

#[test]
fn cgroup_mounts_that_do_not_hold_the_process_are_passed_over() {
    // A monitoring agent's bind mount of another subtree, listed first, hides nothing: the
    // mount that holds the process's cgroup gives the quota.
    let tree = Tree::new();
    tree.smt(&strided(4, 1));
    tree.file("proc/self/cgroup", "0::/app.slice/job\n")
        .file(
            "proc/self/mountinfo",
            "29 22 0:26 /other.slice /host/cgroup rw - cgroup2 cgroup2 rw\n\
             30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        )
        .file("sys/fs/cgroup/app.slice/job/cpu.max", "150000 100000\n");
    assert_eq!(tree.read(None).quota.map(|q| q.cap()), Some(2));

    // A path that climbs out of the namespace's root (`..`) has no quota under the mount:
    // the root's own must not be taken for it.
    tree.file("proc/self/cgroup", "0::/../elsewhere\n")
        .file("sys/fs/cgroup/cpu.max", "50000 100000\n");
    assert_eq!(tree.read(None).quota, None);
}

/// A random machine: sibling groups of 1-4 CPUs, some CPUs offline, a random affinity.
fn topology() -> impl Strategy<Value = (Vec<usize>, bool, Vec<bool>, Vec<bool>)> {
    (proptest::collection::vec(1usize..=4, 1..=12), any::<bool>()).prop_flat_map(
        |(widths, strided)| {
            let cpus: usize = widths.iter().sum();
            (
                Just(widths),
                Just(strided),
                proptest::collection::vec(proptest::bool::weighted(0.85), cpus),
                proptest::collection::vec(any::<bool>(), cpus),
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn counts_are_ordered_and_exact((widths, strided, online, affinity) in topology()) {
        // Lay the groups out, either adjacent or interleaved by thread index.
        let cpus = online.len();
        let mut groups: Vec<Vec<usize>> = vec![Vec::new(); widths.len()];
        if strided {
            let mut next = 0;
            for thread in 0..4 {
                for (core, width) in widths.iter().enumerate() {
                    if thread < *width {
                        groups[core].push(next);
                        next += 1;
                    }
                }
            }
        } else {
            let mut next = 0;
            for (core, width) in widths.iter().enumerate() {
                groups[core].extend(next..next + width);
                next += width;
            }
        }
        let tree = Tree::new();
        tree.smt(&groups.iter().map(|g| set(g.iter().copied())).collect::<Vec<_>>());
        let online_cpus: Vec<usize> = (0..cpus).filter(|&c| online[c]).collect();
        prop_assume!(!online_cpus.is_empty());
        tree.file("sys/devices/system/cpu/online", &format!("{}\n", set(online_cpus.iter().copied())));
        let allowed: Vec<usize> = (0..cpus).filter(|&c| affinity[c]).collect();
        let list = set(allowed.iter().copied()).to_string();
        let counts = tree.read(Some(&list));

        prop_assert!(counts.is_valid(), "{:?}", counts);
        for policy in CpuPolicy::ALL {
            prop_assert!(counts.count(policy, QuotaCap::Apply) >= 1);
        }
        let schedulable: Vec<usize> = allowed.iter().copied().filter(|&c| online[c]).collect();
        prop_assert_eq!(counts.online.value, online_cpus.len());
        if schedulable.is_empty() {
            prop_assert!(counts.schedulable.fallback);
        } else {
            prop_assert_eq!(counts.schedulable.value, schedulable.len());
            let cores = groups.iter().filter(|g| g.iter().any(|c| schedulable.contains(c))).count();
            prop_assert_eq!(counts.physical.value, cores);
        }
    }
}
