//! Linux: online CPUs and SMT topology from sysfs, the affinity mask from
//! `sched_getaffinity`, the quota from the cgroup filesystem (`cgroup.rs`).
//!
//! Stack use: a few 1 KiB CPU sets, one 8 KiB list buffer and 4 KiB paths, about 24 KiB.

use super::fs::{self, StackPath};
use super::{cgroup, Affinity, Count, CpuCounts, CpuSet, Source, SysRoot};
use crate::number;

/// The sysfs CPU directory, under the root.
const CPU_DIR: &[u8] = b"/sys/devices/system/cpu";

/// One CPU list file. The kernel collapses runs into ranges, so even 8192 CPUs with holes
/// fit; a list that does not fit counts as unreadable rather than being cut short.
const LIST_BUFFER_BYTES: usize = 8192;

/// Distinct cores the core-id method can tell apart (8 KiB of keys); beyond it, fall back.
const MAX_CORE_KEYS: usize = 1024;

pub(super) fn read(root: SysRoot<'_>, affinity: Affinity<'_>) -> CpuCounts {
    let (online_set, online) = read_online(root);
    let (schedulable_set, schedulable) = read_schedulable(online_set.as_ref(), &online, affinity);
    let physical = read_physical(root, &schedulable_set, &schedulable);
    CpuCounts {
        online,
        schedulable,
        physical,
        quota: cgroup::read_quota(root),
    }
}

/// The schedulable set alone: the affinity intersected with online.
pub(super) fn schedulable_cpus(root: SysRoot<'_>, affinity: Affinity<'_>) -> CpuSet {
    let (online_set, online) = read_online(root);
    read_schedulable(online_set.as_ref(), &online, affinity).0
}

/// A path to `/sys/devices/system/cpu` under the root.
fn cpu_dir(root: SysRoot<'_>) -> StackPath {
    let mut path = StackPath::new(root.as_bytes());
    path.push(CPU_DIR);
    path
}

/// Online CPUs: the `online` list, else the `cpuN` directories, else `sysconf` (no set).
fn read_online(root: SysRoot<'_>) -> (Option<CpuSet>, Count) {
    let mut buf = [0u8; LIST_BUFFER_BYTES];
    let mut path = cpu_dir(root);
    path.push(b"/online");
    if let Some(Ok(set)) = fs::read_file(&mut path, &mut buf).map(CpuSet::parse_list) {
        if !set.is_empty() {
            return (Some(set), Count::exact(set.count(), Source::OnlineList));
        }
    }
    if let Some(set) = online_from_cpu_directories(root) {
        return (Some(set), Count::exact(set.count(), Source::CpuDirectories));
    }
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let value = usize::try_from(n).unwrap_or(1).max(1);
    (
        None,
        Count {
            value,
            source: Source::Sysconf,
            fallback: true,
        },
    )
}

/// Every `cpuN` directory whose `online` file is missing (always-online CPUs) or not `0`.
fn online_from_cpu_directories(root: SysRoot<'_>) -> Option<CpuSet> {
    let mut set = CpuSet::new();
    let mut online_file = cpu_dir(root);
    online_file.push(b"/cpu");
    let base = online_file.len();
    let mut dir = cpu_dir(root);
    fs::for_each_dir_entry(&mut dir, |name| {
        let Some(digits) = name.strip_prefix(b"cpu") else {
            return;
        };
        if !digits.iter().all(u8::is_ascii_digit) {
            return; // `cpufreq`, `cpuidle`
        }
        let Some(id) = number::parse_u64(digits)
            .ok()
            .and_then(|id| usize::try_from(id).ok())
        else {
            return;
        };
        online_file.truncate(base);
        online_file.push_number(id).push(b"/online");
        let mut buf = [0u8; 8];
        let offline =
            fs::read_file(&mut online_file, &mut buf).is_some_and(|b| number::trim(b) == b"0");
        if !offline {
            set.insert(id);
        }
    });
    (!set.is_empty()).then_some(set)
}

/// The schedulable set and count: the affinity intersected with online.
fn read_schedulable(
    online_set: Option<&CpuSet>,
    online: &Count,
    affinity: Affinity<'_>,
) -> (CpuSet, Count) {
    let all_online = || {
        online_set.copied().unwrap_or_else(|| {
            let mut set = CpuSet::new();
            (0..online.value).for_each(|cpu| {
                set.insert(cpu);
            });
            set
        })
    };
    let (mut set, source) = match affinity {
        Affinity::Process => match process_affinity() {
            Some(mask) => (mask, Source::ProcessAffinity),
            None => return (all_online(), Count::substitute(online)),
        },
        Affinity::Given(mask) => (*mask, Source::GivenAffinity),
        Affinity::AllOnline => (all_online(), Source::AllOnline),
    };
    if let Some(online_set) = online_set {
        set.intersect_with(online_set);
    }
    if set.is_empty() {
        return (all_online(), Count::substitute(online));
    }
    let value = set.count().min(online.value);
    (set, Count::exact(value, source))
}

/// This process's affinity mask: its main thread's (`taskset -p PID` sets it, and threads
/// inherit it), read the same from every thread, so that one thread pinning itself changes
/// no count. The calling thread's if the main thread's cannot be read (it exited); `None`
/// if the kernel refused both.
pub(super) fn process_affinity() -> Option<CpuSet> {
    // SAFETY: getpid has no preconditions; the process id is its main thread's id.
    let main_thread = unsafe { libc::getpid() };
    thread_affinity(main_thread).or_else(|| thread_affinity(0))
}

/// Thread `tid`'s affinity mask (0: the calling thread's).
pub(super) fn thread_affinity(tid: libc::pid_t) -> Option<CpuSet> {
    let mut mask = CpuSet::new();
    let words = mask.as_mut_words();
    // SAFETY: `words` is a writable buffer of exactly the size we pass, laid out as the
    // kernel's mask (an array of machine words, CPU n at bit n % 64 of word n / 64).
    let rc = unsafe {
        libc::sched_getaffinity(
            tid,
            core::mem::size_of_val(words),
            words.as_mut_ptr().cast::<libc::cpu_set_t>(),
        )
    };
    (rc == 0 && !mask.is_empty()).then_some(mask)
}

/// Physical cores among `schedulable`: sibling lists, then core ids, then the schedulable
/// count flagged as a fallback.
fn read_physical(root: SysRoot<'_>, schedulable: &CpuSet, count: &Count) -> Count {
    type CoreCounter = fn(SysRoot<'_>, &CpuSet) -> Option<usize>;
    let methods: [(Source, CoreCounter); 3] = [
        (Source::CoreCpusList, |root, set| {
            count_sibling_groups(root, set, b"core_cpus_list")
        }),
        (Source::ThreadSiblingsList, |root, set| {
            count_sibling_groups(root, set, b"thread_siblings_list")
        }),
        (Source::CoreIds, count_distinct_core_ids),
    ];
    methods
        .iter()
        .find_map(|(source, method)| {
            method(root, schedulable).map(|n| Count::exact(n.clamp(1, count.value), *source))
        })
        .unwrap_or_else(|| Count::substitute(count))
}

/// Distinct sibling groups (from `topology/<file>`) among `cpus`; `None` if any needed file
/// is missing or malformed.
fn count_sibling_groups(root: SysRoot<'_>, cpus: &CpuSet, file: &[u8]) -> Option<usize> {
    let mut buf = [0u8; LIST_BUFFER_BYTES];
    let mut path = cpu_dir(root);
    path.push(b"/cpu");
    let base = path.len();
    let mut seen = CpuSet::new();
    let mut groups = 0;
    for cpu in cpus.iter() {
        if seen.contains(cpu) {
            continue;
        }
        path.truncate(base);
        path.push_number(cpu).push(b"/topology/").push(file);
        let siblings = CpuSet::parse_list(fs::read_file(&mut path, &mut buf)?).ok()?;
        if !siblings.contains(cpu) {
            return None; // inconsistent topology: let a coarser method decide
        }
        seen.union_with(&siblings);
        groups += 1;
    }
    Some(groups)
}

/// Distinct (package, die, core) triples among `cpus`. `core_id` restarts in every die or
/// package on many machines, so all three are needed. `None` if a file is missing, an id
/// too large, or more than [`MAX_CORE_KEYS`] cores.
fn count_distinct_core_ids(root: SysRoot<'_>, cpus: &CpuSet) -> Option<usize> {
    let mut keys = [0u64; MAX_CORE_KEYS];
    let mut distinct = 0;
    let mut path = cpu_dir(root);
    path.push(b"/cpu");
    let base = path.len();
    for cpu in cpus.iter() {
        path.truncate(base);
        path.push_number(cpu).push(b"/topology/");
        let topology = path.len();
        let mut id = |file: &[u8], bits: u32, required: bool| -> Option<u64> {
            path.truncate(topology);
            path.push(file);
            let mut buf = [0u8; 32];
            match fs::read_file(&mut path, &mut buf) {
                Some(bytes) => parse_id(number::trim(bytes), bits),
                None if required => None,
                None => Some(0),
            }
        };
        let package = id(b"physical_package_id", 22, true)?;
        let die = id(b"die_id", 20, false)?;
        let core = id(b"core_id", 22, true)?;
        let key = package << 42 | die << 22 | core;
        if !keys[..distinct].contains(&key) {
            *keys.get_mut(distinct)? = key;
            distinct += 1;
        }
    }
    Some(distinct)
}

/// A topology id as a `bits`-wide label: `-1` (which some kernels write) becomes all ones;
/// `None` if it is not a number or does not fit.
fn parse_id(bytes: &[u8], bits: u32) -> Option<u64> {
    let all_ones = (1u64 << bits) - 1;
    if bytes == b"-1" {
        return Some(all_ones);
    }
    number::parse_u64(bytes).ok().filter(|&v| v < all_ones)
}
