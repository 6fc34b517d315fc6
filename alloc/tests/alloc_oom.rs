//! Out of memory: under `RLIMIT_AS`, a huge allocation returns null (no abort) and a later
//! small one succeeds. Runs in a child so the limit binds nothing else.

mod common;

use common::{is_child, run_child};
use rayforce_alloc::RayAlloc;
use std::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

#[test]
fn huge_allocation_is_null_then_small_succeeds() {
    if !is_child() {
        let out = run_child("huge_allocation_is_null_then_small_succeeds", &[]);
        assert!(out.contains("oom=null small=ok"), "{out}");
        return;
    }
    let limit = libc::rlimit {
        rlim_cur: 4 << 30,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain setrlimit on this (child) process.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
    let huge = Layout::from_size_align(64 << 30, 64).unwrap();
    // SAFETY: a valid non-zero layout; a non-null result is freed with it.
    let p = unsafe { ALLOC.alloc(huge) };
    let small = Layout::from_size_align(4096, 8).unwrap();
    // SAFETY: as above.
    let q = unsafe { ALLOC.alloc(small) };
    println!(
        "oom={} small={}",
        if p.is_null() { "null" } else { "non-null" },
        if q.is_null() { "null" } else { "ok" }
    );
    // SAFETY: each non-null block is freed once with its layout.
    unsafe {
        if !p.is_null() {
            ALLOC.dealloc(p, huge);
        }
        if !q.is_null() {
            ALLOC.dealloc(q, small);
        }
    }
}
