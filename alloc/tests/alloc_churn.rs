//! Thread churn: 2,000 short-lived threads (40 waves of 50), 1% of their objects outliving
//! them. Arenas never exceed the limit, and resident memory after the churn stays within
//! `2 x raw mimalloc + 16 MiB`, both measured in this test (each in a child process of the
//! same binary, one using `RayAlloc`, one `mimalloc::MiMalloc`). Peaks swing up to 2x
//! between runs, hence the loose factor; a heap per thread would be about 3x here.

mod common;

use common::{child_value, is_child, resident_bytes, run_child};
use rayforce_alloc::RayAlloc;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// `RayAlloc`, or raw mimalloc when `RAYFORCE_CHURN_RAW` is set, decided on the first call.
struct Switch;

static RAY: RayAlloc = RayAlloc::new();
static RAW: mimalloc::MiMalloc = mimalloc::MiMalloc;
static MODE: AtomicU8 = AtomicU8::new(0);
const USE_RAY: u8 = 1;
const USE_RAW: u8 = 2;

fn use_raw() -> bool {
    let mode = match MODE.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: the name is NUL-terminated; getenv does not allocate.
            let raw = !unsafe { libc::getenv(c"RAYFORCE_CHURN_RAW".as_ptr()) }.is_null();
            let mode = if raw { USE_RAW } else { USE_RAY };
            MODE.store(mode, Ordering::Relaxed);
            mode
        }
        mode => mode,
    };
    mode == USE_RAW
}

// SAFETY: forwards every call unchanged to one of two conforming allocators, the same one
// for the whole process (both free with `mi_free`, so even a mix would be sound).
unsafe impl GlobalAlloc for Switch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract passes through.
        unsafe {
            if use_raw() {
                RAW.alloc(layout)
            } else {
                RAY.alloc(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe {
            if use_raw() {
                RAW.dealloc(ptr, layout)
            } else {
                RAY.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe {
            if use_raw() {
                RAW.realloc(ptr, layout, new_size)
            } else {
                RAY.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[global_allocator]
static GLOBAL: Switch = Switch;

/// Objects that outlive their threads.
static SURVIVORS: Mutex<Vec<Box<[u8]>>> = Mutex::new(Vec::new());

fn churn() {
    for wave in 0..40 {
        let threads: Vec<_> = (0..50)
            .map(|t| {
                std::thread::spawn(move || {
                    let mut seed = (wave * 50 + t) as u64 * 0x9e37_79b9 + 1;
                    let mut objects = Vec::with_capacity(2_000);
                    for i in 0..2_000 {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        objects
                            .push(vec![i as u8; 16 + (seed % 4_000) as usize].into_boxed_slice());
                    }
                    let keep: Vec<_> = objects.into_iter().step_by(100).collect();
                    SURVIVORS.lock().unwrap().extend(keep);
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        if !use_raw() {
            let stats = RAY.stats();
            assert!(
                stats.arenas_created <= stats.limit,
                "wave {wave}: {stats:?}"
            );
        }
    }
    println!("resident={}", resident_bytes());
    println!("survivors={}", SURVIVORS.lock().unwrap().len());
}

#[test]
fn churn_2000_threads() {
    if is_child() {
        return churn();
    }
    let ray = run_child("churn_2000_threads", &[]);
    let raw = run_child("churn_2000_threads", &[("RAYFORCE_CHURN_RAW", "1")]);
    assert_eq!(child_value(&ray, "survivors"), "40000");
    let ray_rss: usize = child_value(&ray, "resident").parse().unwrap();
    let raw_rss: usize = child_value(&raw, "resident").parse().unwrap();
    eprintln!(
        "resident after churn: RayAlloc {} MiB, raw mimalloc {} MiB",
        ray_rss >> 20,
        raw_rss >> 20
    );
    assert!(
        ray_rss <= 2 * raw_rss + (16 << 20),
        "RayAlloc {ray_rss} B vs raw mimalloc {raw_rss} B"
    );
}
