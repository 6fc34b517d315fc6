//! Quickstart: the Runtime as the global allocator, and a parallel job on its pool.
//! A parallel histogram of 10 million pseudo-random bytes, checked against a serial count.

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;
use std::sync::atomic::{AtomicU64, Ordering};

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

fn main() {
    let data: Vec<u8> = (0u64..10_000_000)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8)
        .collect();

    let pool = RT.pool(); // built on first use, sized like the allocator's arenas
    let histogram: Vec<AtomicU64> = (0..256).map(|_| AtomicU64::new(0)).collect();
    let chunk = data.len().div_ceil(64);
    pool.dispatch(64, |task| {
        let mut local = [0u64; 256];
        for &byte in data.chunks(chunk).nth(task).unwrap_or(&[]) {
            local[byte as usize] += 1;
        }
        for (bin, count) in histogram.iter().zip(local) {
            bin.fetch_add(count, Ordering::Relaxed);
        }
    });

    let mut serial = [0u64; 256];
    data.iter().for_each(|&b| serial[b as usize] += 1);
    let parallel: Vec<u64> = histogram.into_iter().map(AtomicU64::into_inner).collect();
    assert_eq!(
        parallel, serial,
        "the parallel histogram matches the serial one"
    );

    let busiest = (0..256).max_by_key(|&b| parallel[b]).unwrap_or(0);
    println!(
        "histogram of {} bytes on {} workers: most common byte {busiest:#04x} ({} times)",
        data.len(),
        pool.width(),
        parallel[busiest]
    );
    println!("{}", RT.report());
}
