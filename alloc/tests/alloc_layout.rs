//! Layout conformance: sizes 1 B to 1 MiB by alignments 1 B to 2 MiB; zeroed memory is
//! zero; realloc grows and shrinks keeping contents and alignment.

use rayforce_alloc::RayAlloc;
use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

fn sizes() -> impl Iterator<Item = usize> {
    (0..=20).flat_map(|p| {
        let s = 1usize << p;
        [s, s + s / 2 + 1]
    })
}

fn alignments() -> impl Iterator<Item = usize> {
    (0..=21).map(|p| 1usize << p)
}

/// Fills `n` bytes at `p` with a pattern from `seed`.
fn fill(p: *mut u8, n: usize, seed: u8) {
    for i in 0..n {
        // SAFETY: `p` is valid for `n` bytes.
        unsafe { p.add(i).write(seed.wrapping_add(i as u8)) };
    }
}

fn check(p: *const u8, n: usize, seed: u8) {
    for i in 0..n {
        // SAFETY: `p` is valid for `n` bytes.
        let byte = unsafe { p.add(i).read() };
        assert_eq!(byte, seed.wrapping_add(i as u8), "byte {i} of {n}");
    }
}

#[test]
fn every_size_and_alignment() {
    for align in alignments() {
        for size in sizes() {
            let layout = Layout::from_size_align(size, align).unwrap();
            // SAFETY: non-zero size; freed with the same layout.
            unsafe {
                let p = alloc(layout);
                assert!(!p.is_null(), "{layout:?}");
                assert_eq!(p as usize % align, 0, "{layout:?}");
                fill(p, size, 7);
                check(p, size, 7);
                dealloc(p, layout);

                let z = alloc_zeroed(layout);
                assert!(!z.is_null() && z as usize % align == 0, "{layout:?}");
                assert!((0..size).all(|i| z.add(i).read() == 0), "zeroed {layout:?}");
                dealloc(z, layout);
            }
        }
    }
}

#[test]
fn realloc_keeps_contents_and_alignment() {
    for align in [1usize, 8, 64, 4096, 1 << 21] {
        for (from, to) in [
            (16usize, 4096usize),
            (4096, 16),
            (100, 1 << 20),
            (1 << 20, 3),
            (1, 1),
        ] {
            let layout = Layout::from_size_align(from, align).unwrap();
            // SAFETY: non-zero sizes; each block freed with its current layout.
            unsafe {
                let p = alloc(layout);
                fill(p, from, 3);
                let q = realloc(p, layout, to);
                assert!(!q.is_null());
                assert_eq!(q as usize % align, 0, "realloc {from} -> {to} at {align}");
                check(q, from.min(to), 3);
                dealloc(q, Layout::from_size_align(to, align).unwrap());
            }
        }
    }
}
