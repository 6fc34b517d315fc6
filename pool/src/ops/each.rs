//! Mutable output, safely: every item of a slice, or every chunk of it, handed to a closure
//! by `&mut` on whichever participant claimed it. An output written from inputs of the same
//! length is a `for_each_mut` over the output that reads the inputs by index.

use super::pipeline::{self, OnFork};
use super::region::{span, Disjoint, Runs};
use crate::panics::Panics;
use crate::region::Claims;
use crate::tasks;
use std::ops::Range;

/// Mutable output: `for_each_mut`, `parts_mut` and `chunks_mut`. Run on a
/// [`Pool`](crate::Pool) or on [`pool.wide()`](crate::Pool::wide).
pub trait ParallelEach: Runs {
    /// Calls `f(index, &mut item)` for every item of `items`, in parallel. If calls panic,
    /// the others still run, and the first panic resumes here afterwards.
    ///
    /// Writing an output from inputs of the same length:
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let (a, b) = (vec![1.0f32; 1000], vec![2.0f32; 1000]);
    /// let mut out = vec![0.0f32; 1000];
    /// pool.for_each_mut(&mut out, |i, o| *o = a[i] + b[i]);
    /// assert!(out.iter().all(|&x| x == 3.0));
    /// ```
    fn for_each_mut<T, F>(&self, items: &mut [T], f: F)
    where
        T: Send,
        F: Fn(usize, &mut T) + Sync,
    {
        let n = items.len();
        let items = Disjoint::new(items);
        pipeline::run(
            self,
            n,
            (Claims::FromHomes(None), None),
            &Panics::new,
            |panics, range| {
                // SAFETY: claimed ranges are disjoint.
                let part = unsafe { items.range(range.clone()) };
                each_item(part, range.start, panics, &f);
            },
            OnFork::Abort("for_each_mut"),
            |panics| resume_first(panics),
        );
    }

    /// Calls `f(offset, part)` on consecutive parts of `items` that together cover it once,
    /// in parallel, `part` being `items[offset..offset + part.len()]`. The parts are the
    /// ranges the pool claims (large for cheap items, smaller toward the end), so the loop
    /// over a part is the caller's own: zip it with the same range of the inputs and the
    /// compiler vectorises it, where `for_each_mut`'s call per index cannot be. If a call
    /// panics, the other parts still run, and the first panic resumes here afterwards.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let (a, b) = (vec![1u32; 10_000], vec![2u32; 10_000]);
    /// let mut out = vec![0u32; 10_000];
    /// pool.parts_mut(&mut out, |offset, part| {
    ///     let (a, b) = (&a[offset..][..part.len()], &b[offset..][..part.len()]);
    ///     for ((o, x), y) in part.iter_mut().zip(a).zip(b) {
    ///         *o = x + y;
    ///     }
    /// });
    /// assert!(out.iter().all(|&x| x == 3));
    /// ```
    fn parts_mut<T, F>(&self, items: &mut [T], f: F)
    where
        T: Send,
        F: Fn(usize, &mut [T]) + Sync,
    {
        let n = items.len();
        let items = Disjoint::new(items);
        // A panic is caught where the part ran (the hook's) and resumes once the region
        // is over.
        let part = |(): &mut (), range: Range<usize>| {
            let offset = range.start;
            // SAFETY: claimed ranges are disjoint.
            f(offset, unsafe { items.range(range) });
        };
        pipeline::run(
            self,
            n,
            (Claims::FromHomes(None), None),
            &|| (),
            part,
            OnFork::Abort("parts_mut"),
            |_| (),
        );
    }

    /// Calls `f(chunk_index, chunk)` for consecutive chunks of `size` items of `items` (the
    /// last may be shorter), in parallel. If calls panic, the others still run, and the
    /// first panic resumes here afterwards.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let mut rows = vec![0u32; 10];
    /// pool.chunks_mut(&mut rows, 4, |chunk, row| row.fill(chunk as u32));
    /// assert_eq!(rows, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
    /// ```
    fn chunks_mut<T, F>(&self, items: &mut [T], size: usize, f: F)
    where
        T: Send,
        F: Fn(usize, &mut [T]) + Sync,
    {
        assert!(
            size > 0,
            "chunks_mut: a chunk size of 0 (expected at least 1)"
        );
        let len = items.len();
        let items = Disjoint::new(items);
        let chunks = len.div_ceil(size);
        pipeline::run(
            self,
            chunks,
            (Claims::FromHomes(None), None),
            &Panics::new,
            |panics, chunks| {
                tasks::each(chunks, panics, |chunk| {
                    // Below `len`: `chunk` is below `len.div_ceil(size)`.
                    let start = chunk * size;
                    // SAFETY: claimed chunk indices are disjoint, and so are their items.
                    let part = unsafe { items.range(span(start, size, len)) };
                    f(chunk, part);
                });
            },
            OnFork::Abort("chunks_mut"),
            |panics| resume_first(panics),
        );
    }
}

impl<R: Runs + ?Sized> ParallelEach for R {}

/// Resumes the first panic of the participants' (in participant order), if any; the others'
/// are discarded.
fn resume_first(participants: impl Iterator<Item = Panics>) {
    let mut first = None;
    for panics in participants {
        first = first.or(panics.take());
    }
    crate::panics::resume(first);
}

/// `f(start + k, &mut part[k])` for every item of `part`, as `tasks::each` runs tasks. The
/// part arrives as a parameter, so the compiler knows that nothing `f` reads (the inputs
/// behind its captures) is written through it, and keeps those in registers.
fn each_item<T, F>(part: &mut [T], start: usize, panics: &Panics, f: &F)
where
    F: Fn(usize, &mut T),
{
    let len = part.len();
    tasks::each(0..len, panics, |k| f(start + k, &mut part[k]));
}
