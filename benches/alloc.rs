//! RayAlloc against raw mimalloc (`mimalloc::MiMalloc`), the system allocator (glibc) and
//! jemalloc (`tikv-jemallocator`), each called as a `GlobalAlloc` value, in one run:
//! larson-like server churn, xmalloc-like producer/consumer, cache-thrash, glibc-thread-like
//! random sizes, at 1 and 2 threads (spawned before timing; time per operation). Then the
//! arena-count sweep (throughput by arena limit and thread count, thread t placed on arena
//! t), and resident memory after thread churn for every allocator and arena limit, each
//! churn in a child process of this binary (resident memory is per process). Instructions
//! per allocation, free and realloc are counted under callgrind by `benches/instructions.py`,
//! which runs this binary's instruction-count child. Results: BENCHMARKS.md.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{BenchmarkId, Criterion};
use rayforce_alloc::RayAlloc;
use rayforce_tunables::cpu::CpuPolicy;
use rayforce_tunables::registry::Id;
use rayforce_tunables::{Choices, Environment};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

static RAY: RayAlloc = RayAlloc::new();
/// The runtime's allocation path (RayAlloc's, with the hook that offers its pool), counted
/// by `instructions.py alloc` only.
static RUNTIME: rayforce_rt::Runtime = rayforce_rt::Runtime::new(CpuPolicy::Physical);
static MIMALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
static JEMALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Arena limits of the sweep; `usize::MAX` stands for one per thread.
const SWEEP_LIMITS: [usize; 5] = [1, 2, 4, 0, usize::MAX];
const SWEEP_THREADS: [usize; 3] = [2, 4, 8];

/// The sweep's allocators: arena_max 1, 2, 4; one per CPU (the policy's count); one per
/// thread (8 arenas for at most 8 threads).
static SWEEP: [RayAlloc; 5] = [
    RayAlloc::with_choices(
        Choices::new()
            .environment(Environment::Ignore)
            .set(Id::ArenaMax, 1),
    ),
    RayAlloc::with_choices(
        Choices::new()
            .environment(Environment::Ignore)
            .set(Id::ArenaMax, 2),
    ),
    RayAlloc::with_choices(
        Choices::new()
            .environment(Environment::Ignore)
            .set(Id::ArenaMax, 4),
    ),
    RayAlloc::with_choices(
        Choices::new()
            .environment(Environment::Ignore)
            .set(Id::ArenasPerCpu, 1),
    ),
    RayAlloc::with_choices(
        Choices::new()
            .environment(Environment::Ignore)
            .set(Id::ArenaMax, 8),
    ),
];

/// A small, fast, fixed-seed generator (xorshift64*), so every allocator sees the same sizes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size.max(1), 8).unwrap()
}

/// One thread's share of a workload: thread `t` of `threads`, `ops` operations with
/// allocator `a`; `together` is a barrier of all the workload's threads.
type Work<A> = fn(a: &'static A, t: usize, threads: usize, ops: u64, together: &Barrier);

/// Runs `work` on `threads` threads, spawned before timing; returns the wall time from the
/// release of all threads to the last one finishing.
fn timed<A: GlobalAlloc + Sync>(
    a: &'static A,
    threads: usize,
    ops: u64,
    work: Work<A>,
) -> Duration {
    let start = Arc::new(Barrier::new(threads + 1));
    let together = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (start, together) = (Arc::clone(&start), Arc::clone(&together));
            std::thread::spawn(move || {
                start.wait();
                work(a, t, threads, ops, &together);
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    handles.into_iter().for_each(|h| h.join().unwrap());
    began.elapsed()
}

/// larson-like: a working set of 1000 blocks of 16..1024 B; each op frees a random one and
/// allocates a new random size in its place.
fn larson<A: GlobalAlloc>(a: &'static A, t: usize, _: usize, ops: u64, _: &Barrier) {
    let mut rng = Rng(0x9e37_79b9 + t as u64);
    let mut slots: Vec<(*mut u8, usize)> = (0..1000)
        .map(|_| {
            let size = 16 + rng.below(1009);
            // SAFETY: non-zero size.
            (unsafe { a.alloc(layout(size)) }, size)
        })
        .collect();
    for _ in 0..ops {
        let i = rng.below(1000);
        let size = 16 + rng.below(1009);
        // SAFETY: each slot holds a live block of its recorded size.
        unsafe {
            a.dealloc(slots[i].0, layout(slots[i].1));
            let p = a.alloc(layout(size));
            p.write(1);
            slots[i] = (p, size);
        }
    }
    for (p, size) in slots {
        // SAFETY: live blocks of their recorded sizes.
        unsafe { a.dealloc(p, layout(size)) };
    }
}

/// xmalloc-like: thread 0 allocates batches of 64 B blocks and hands them over a bounded
/// queue to thread 1, which frees them (a single thread frees its own batches).
fn xmalloc<A: GlobalAlloc>(a: &'static A, t: usize, threads: usize, ops: u64, _: &Barrier) {
    use std::sync::Mutex;
    static QUEUE: Mutex<Vec<Vec<usize>>> = Mutex::new(Vec::new());
    const BATCH: u64 = 256;
    const QUEUE_BOUND: usize = 8;
    let batches = (ops / BATCH).max(1);
    let free = |batch: Vec<usize>| {
        // SAFETY: blocks allocated below with this layout, each freed once.
        batch
            .into_iter()
            .for_each(|p| unsafe { a.dealloc(p as *mut u8, layout(64)) });
    };
    if t % 2 == 1 {
        let mut freed = 0;
        while freed < batches {
            match QUEUE.lock().unwrap().pop() {
                Some(batch) => {
                    free(batch);
                    freed += 1;
                }
                None => std::thread::yield_now(),
            }
        }
        return;
    }
    for _ in 0..batches {
        // SAFETY: non-zero size; freed by `free`.
        let mut batch: Vec<usize> = (0..BATCH)
            .map(|_| unsafe { a.alloc(layout(64)) } as usize)
            .collect();
        if threads == 1 {
            free(batch);
            continue;
        }
        loop {
            let mut queue = QUEUE.lock().unwrap();
            if queue.len() < QUEUE_BOUND {
                queue.push(std::mem::take(&mut batch));
                break;
            }
            drop(queue);
            std::thread::yield_now();
        }
    }
}

/// cache-thrash: each op allocates an 8 B block, writes it 100 times, frees it; blocks of
/// different threads must not share cache lines.
fn cache_thrash<A: GlobalAlloc>(a: &'static A, _: usize, _: usize, ops: u64, _: &Barrier) {
    for _ in 0..ops {
        // SAFETY: non-zero size, freed at once.
        unsafe {
            let p = a.alloc(layout(8));
            for k in 0..100u8 {
                std::ptr::write_volatile(p, k);
            }
            a.dealloc(p, layout(8));
        }
    }
}

/// glibc bench-malloc-thread-like: a working set of 4000 blocks, sizes mostly small with a
/// tail to 32 KiB.
fn glibc_thread<A: GlobalAlloc>(a: &'static A, t: usize, _: usize, ops: u64, _: &Barrier) {
    let mut rng = Rng(0x5eed + t as u64);
    let size_of = |rng: &mut Rng| match rng.below(100) {
        0..=79 => 1 + rng.below(128),
        80..=97 => 129 + rng.below(4096),
        _ => 4225 + rng.below(28_000),
    };
    let mut slots: Vec<(*mut u8, usize)> = vec![(std::ptr::null_mut(), 0); 4000];
    for _ in 0..ops {
        let i = rng.below(4000);
        let size = size_of(&mut rng);
        // SAFETY: a slot is null or holds a live block of its recorded size.
        unsafe {
            if !slots[i].0.is_null() {
                a.dealloc(slots[i].0, layout(slots[i].1));
            }
            slots[i] = (a.alloc(layout(size)), size);
        }
    }
    for (p, size) in slots.into_iter().filter(|(p, _)| !p.is_null()) {
        // SAFETY: live blocks of their recorded sizes.
        unsafe { a.dealloc(p, layout(size)) };
    }
}

macro_rules! each_allocator {
    ($group:expr, $name:expr, $threads:expr, $work:ident) => {{
        let threads = $threads;
        $group.bench_function(
            BenchmarkId::new(format!("rayalloc/{}", $name), threads),
            |b| b.iter_custom(|ops| timed(&RAY, threads, ops, $work)),
        );
        $group.bench_function(
            BenchmarkId::new(format!("mimalloc/{}", $name), threads),
            |b| b.iter_custom(|ops| timed(&MIMALLOC, threads, ops, $work)),
        );
        $group.bench_function(
            BenchmarkId::new(format!("system/{}", $name), threads),
            |b| b.iter_custom(|ops| timed(&System, threads, ops, $work)),
        );
        $group.bench_function(
            BenchmarkId::new(format!("jemalloc/{}", $name), threads),
            |b| b.iter_custom(|ops| timed(&JEMALLOC, threads, ops, $work)),
        );
    }};
}

fn workloads(c: &mut Criterion) {
    let mut group = c.benchmark_group("alloc");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for threads in [1, 2] {
        each_allocator!(group, "larson", threads, larson);
        each_allocator!(group, "xmalloc", threads, xmalloc);
        each_allocator!(group, "cache_thrash", threads, cache_thrash);
        each_allocator!(group, "glibc_thread", threads, glibc_thread);
    }
    group.finish();
}

fn sweep_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("arena_sweep");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for threads in SWEEP_THREADS {
        for (label, alloc) in sweep_configs() {
            group.bench_function(BenchmarkId::new(label, threads), |b| {
                b.iter_custom(|ops| timed(alloc, threads, ops, placed_larson))
            });
        }
    }
    group.finish();
}

/// larson on thread `t` placed on arena `t` (modulo the limit), as the pool places helpers:
/// a thread that is not placed shares arena 0.
fn placed_larson(a: &'static RayAlloc, t: usize, threads: usize, ops: u64, together: &Barrier) {
    a.bind_current_thread(t);
    larson(a, t, threads, ops, together);
}

/// (label, allocator) for each arena limit at `threads` threads.
fn sweep_configs() -> Vec<(String, &'static RayAlloc)> {
    SWEEP_LIMITS
        .iter()
        .map(|&limit| match limit {
            0 => ("per_cpu".to_owned(), &SWEEP[3]),
            usize::MAX => ("per_thread".to_owned(), &SWEEP[4]),
            n => (
                format!("arenas_{n}"),
                &SWEEP[[1, 2, 4].iter().position(|&l| l == n).unwrap()],
            ),
        })
        .collect()
}

/// Child for `benches/instructions.py`: `ops` larson steps (1000 slots of 16..1024 B) on `a`,
/// each a free and an allocation, or one realloc, through the `counted_*` functions, whose
/// inclusive instructions callgrind reports per call.
fn instructions_child<A: GlobalAlloc>(a: &A, realloc: bool, ops: u64) {
    let mut rng = Rng(0x9e37_79b9);
    let mut slots: Vec<(*mut u8, usize)> = (0..1000)
        .map(|_| {
            let size = 16 + rng.below(1009);
            (counted_alloc(a, layout(size)), size)
        })
        .collect();
    for _ in 0..ops {
        let slot = &mut slots[rng.below(1000)];
        let size = 16 + rng.below(1009);
        let fresh = if realloc {
            counted_realloc(a, slot.0, layout(slot.1), size)
        } else {
            counted_free(a, slot.0, layout(slot.1));
            counted_alloc(a, layout(size))
        };
        // SAFETY: a live block of at least `size` bytes.
        unsafe { fresh.write(1) };
        *slot = (fresh, size);
    }
    for (p, size) in slots {
        counted_free(a, p, layout(size));
    }
}

#[inline(never)]
fn counted_alloc<A: GlobalAlloc>(a: &A, layout: Layout) -> *mut u8 {
    // SAFETY: the callers pass non-zero sizes.
    unsafe { a.alloc(layout) }
}

#[inline(never)]
fn counted_free<A: GlobalAlloc>(a: &A, p: *mut u8, layout: Layout) {
    // SAFETY: `p` is a live block of `layout` from `a`.
    unsafe { a.dealloc(p, layout) }
}

#[inline(never)]
fn counted_realloc<A: GlobalAlloc>(a: &A, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
    // SAFETY: `p` is a live block of `layout` from `a`; `size` is non-zero.
    unsafe { a.realloc(p, layout, size) }
}

/// Child: 40 waves of `threads` short-lived threads (1% of objects outlive them) on
/// allocator `a`, each thread first running `place` with its index; prints resident KiB and
/// the waves' wall time.
fn churn_child<A: GlobalAlloc + Sync>(a: &'static A, threads: usize, place: fn(usize)) {
    let survivors = std::sync::Mutex::new(Vec::new());
    let began = Instant::now();
    for wave in 0..40 {
        std::thread::scope(|s| {
            for t in 0..threads {
                let survivors = &survivors;
                s.spawn(move || {
                    place(t);
                    let mut rng = Rng((wave * 1000 + t) as u64 + 1);
                    let mut kept = Vec::new();
                    for i in 0..2000 {
                        let size = 16 + rng.below(4000);
                        // SAFETY: non-zero size; freed at once or kept (leaked on purpose).
                        unsafe {
                            let p = a.alloc(layout(size));
                            p.write(1);
                            if i % 100 == 0 {
                                kept.push(p as usize);
                            } else {
                                a.dealloc(p, layout(size));
                            }
                        }
                    }
                    survivors.lock().unwrap().extend(kept);
                });
            }
        });
    }
    let micros = began.elapsed().as_micros();
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    println!("resident_kib={} churn_us={micros}", pages * 4);
}

/// What churn children reported: the mean resident KiB (it moves in whole 2 MiB huge pages
/// from run to run, for every allocator, so a median of few runs flips between two values)
/// and the median wall time of the waves.
struct Churn {
    resident_kib: u64,
    micros: u64,
}

impl std::fmt::Display for Churn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.micros as f64 / 1000.0;
        write!(f, "{} KiB in {ms:.1} ms", self.resident_kib)
    }
}

/// One churn configuration: the allocator (`rayalloc`, `rayalloc_spread`, `mimalloc`,
/// `system`, `jemalloc`), the threads a wave, `RAYFORCE_TUNABLES`, and further environment
/// (`MIMALLOC_` options for mimalloc).
struct ChurnConfig<'a> {
    allocator: &'a str,
    threads: usize,
    tunables: &'a str,
    env: &'a [(&'a str, &'a str)],
}

fn config<'a>(
    allocator: &'a str,
    threads: usize,
    tunables: &'a str,
    env: &'a [(&'a str, &'a str)],
) -> ChurnConfig<'a> {
    ChurnConfig {
        allocator,
        threads,
        tunables,
        env,
    }
}

impl ChurnConfig<'_> {
    /// Runs one child; returns (resident KiB, wall-time µs).
    fn run_child(&self) -> (u64, u64) {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env(
                "RAYFORCE_ALLOC_BENCH_CHURN",
                format!("{}:{}", self.allocator, self.threads),
            )
            .env("RAYFORCE_TUNABLES", self.tunables)
            .envs(self.env.iter().copied())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |key: &str| -> u64 {
            text.split(key)
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("child said: {text}"))
        };
        (field("resident_kib="), field("churn_us="))
    }
}

/// 9 child processes per configuration, taking turns (how many huge pages the kernel hands
/// out drifts over a run, so configurations compared must run interleaved).
fn churn(configs: &[ChurnConfig]) -> Vec<Churn> {
    const RUNS: usize = 9;
    let mut samples = vec![Vec::with_capacity(RUNS); configs.len()];
    for _ in 0..RUNS {
        for (config, samples) in configs.iter().zip(&mut samples) {
            samples.push(config.run_child());
        }
    }
    samples
        .into_iter()
        .map(|samples| {
            let mut micros: Vec<u64> = samples.iter().map(|s| s.1).collect();
            micros.sort_unstable();
            Churn {
                resident_kib: samples.iter().map(|s| s.0).sum::<u64>() / RUNS as u64,
                micros: micros[RUNS / 2],
            }
        })
        .collect()
}

/// Resident memory and wall time of thread churn: the four allocators, RayAlloc and mimalloc
/// by purge delay, both without huge pages and at their most eager (huge pages off, purge
/// delay 0), then RayAlloc with thread t placed on arena t, by arena limit. Each group runs
/// interleaved.
fn resident() {
    println!("\nthread churn, mean resident memory and median wall time of 9 child processes:");
    const NO_THP: &str = "rayforce.malloc.thp=0";
    const EAGER: &str = "rayforce.malloc.thp=0:rayforce.malloc.purge_delay_ms=0";
    const MI_NO_THP: &[(&str, &str)] = &[("MIMALLOC_ALLOW_THP", "0")];
    const MI_EAGER: &[(&str, &str)] = &[("MIMALLOC_ALLOW_THP", "0"), ("MIMALLOC_PURGE_DELAY", "0")];
    for threads in [8, 64] {
        let allocators = ["rayalloc", "mimalloc", "system", "jemalloc"];
        let configs: Vec<_> = allocators
            .iter()
            .map(|a| config(a, threads, "", &[]))
            .collect();
        for (allocator, churn) in allocators.iter().zip(churn(&configs)) {
            println!("resident/{allocator}/{threads}: {churn}");
        }
        for ms in ["0", "10", "100", "1000"] {
            let tunables = format!("rayforce.malloc.purge_delay_ms={ms}");
            let purge = [("MIMALLOC_PURGE_DELAY", ms)];
            let pair = churn(&[
                config("rayalloc", threads, &tunables, &[]),
                config("mimalloc", threads, "", &purge),
            ]);
            let (ray, raw) = (&pair[0], &pair[1]);
            println!("purge_sweep/resident/{ms}ms/{threads}: rayalloc {ray}, mimalloc {raw}");
        }
        let modes = churn(&[
            config("rayalloc", threads, NO_THP, &[]),
            config("mimalloc", threads, "", MI_NO_THP),
            config("rayalloc", threads, EAGER, &[]),
            config("mimalloc", threads, "", MI_EAGER),
            config("system", threads, "", &[]),
        ]);
        println!(
            "no_thp/resident/{threads}: rayalloc {}, mimalloc {}",
            modes[0], modes[1]
        );
        println!(
            "eager/resident/{threads}: rayalloc {}, mimalloc {}, glibc {}",
            modes[2], modes[3], modes[4]
        );
        let limits = [("1", "1"), ("2", "2"), ("4", "4"), ("per_thread", "1024")];
        let tunables: Vec<String> = limits
            .iter()
            .map(|(_, max)| format!("rayforce.malloc.arena_max={max}"))
            .collect();
        let configs: Vec<_> = tunables
            .iter()
            .map(|t| config("rayalloc_spread", threads, t, &[]))
            .collect();
        for ((label, _), churn) in limits.iter().zip(churn(&configs)) {
            println!("arena_sweep/resident/spread/{label}/{threads}: {churn}");
        }
    }
}

fn main() {
    if let Ok(child) = std::env::var("RAYFORCE_ALLOC_BENCH_INSTRUCTIONS") {
        let mut fields = child.split(':');
        let (allocator, op, ops) = (fields.next(), fields.next(), fields.next());
        let realloc = op == Some("realloc");
        let ops = ops
            .and_then(|n| n.parse().ok())
            .expect("allocator:pair|realloc:ops");
        return match allocator {
            Some("rayalloc") => instructions_child(&RAY, realloc, ops),
            Some("runtime") => instructions_child(&RUNTIME, realloc, ops),
            _ => instructions_child(&MIMALLOC, realloc, ops),
        };
    }
    if let Ok(child) = std::env::var("RAYFORCE_ALLOC_BENCH_CHURN") {
        let (allocator, threads) = child.split_once(':').expect("allocator:threads");
        let threads = threads.parse().expect("a thread count");
        let unplaced: fn(usize) = |_| {};
        return match allocator {
            "rayalloc" => churn_child(&RAY, threads, unplaced),
            // Thread t on arena t: spreading threads over the arenas, as glibc does.
            "rayalloc_spread" => churn_child(&RAY, threads, |t| RAY.bind_current_thread(t)),
            "mimalloc" => churn_child(&MIMALLOC, threads, unplaced),
            "system" => churn_child(&System, threads, unplaced),
            _ => churn_child(&JEMALLOC, threads, unplaced),
        };
    }
    // A criterion filter (the first free argument) also selects the resident-memory runs.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut c = Criterion::default().configure_from_args();
    workloads(&mut c);
    sweep_throughput(&mut c);
    c.final_summary();
    if filter.is_none_or(|f| "resident".contains(&f)) {
        resident();
    }
}
