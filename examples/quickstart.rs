//! Quickstart: the Runtime as the global allocator, and data-parallel operations on its
//! pool. A histogram of 10 million pseudo-random bytes (one histogram per participant,
//! combined once), checked against a serial count, then its busiest byte and the offsets
//! of each byte's run in a sorted copy (a prefix sum).

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::prelude::*;
use rayforce_rt::Runtime;

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

fn main() {
    let pool = RT.pool(); // built on first use, sized like the allocator's arenas
    let data: Vec<u8> = pool.map(10_000_000, |i| {
        ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
    });

    let histogram = pool.fold(
        data.len(),
        || [0u64; 256],
        |counts, i| counts[data[i] as usize] += 1,
        |mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        },
    );

    let mut serial = [0u64; 256];
    data.iter().for_each(|&b| serial[b as usize] += 1);
    assert_eq!(
        histogram, serial,
        "the parallel histogram matches the serial one"
    );

    let busiest = pool.position_max_by_key(256, |b| histogram[b]).unwrap_or(0);
    let mut offsets = [0u64; 256];
    pool.scan_exclusive(&histogram, &mut offsets, 0, |a, b| a + b);
    println!(
        "histogram of {} bytes on {} workers: most common byte {busiest:#04x} ({} times); \
         in sorted order it starts at {}",
        data.len(),
        pool.width(),
        histogram[busiest],
        offsets[busiest]
    );
    let sizing = RT.sizing();
    println!(
        "policy {}: {} CPUs, arena limit {}, pool width {}",
        sizing.policy,
        sizing.cpu_count,
        sizing.limit,
        pool.width()
    );
}
