//! Per-participant state and reductions: the engine pattern of one local state per
//! participant, made when it takes its first range and folded into through every range it
//! claims, then the states combined once each on the caller (DuckDB's local sink and
//! `Combine`; oneTBB's `parallel_reduce`). Unlike a state per split, `init` runs at most
//! once per participant of a region, whatever the number of ranges.

use super::pipeline::{self, OnFork};
use super::region::{Drain, Runs};
use crate::region::Claims;
use std::iter::Sum;
use std::ops::Range;

/// Reductions with state per participant: `fold`, and `reduce_with`, `sum`,
/// `position_min_by_key`, `position_max_by_key` over it. Run on a [`Pool`](crate::Pool) or on
/// [`pool.wide()`](crate::Pool::wide).
pub trait ParallelFold: Runs {
    /// Folds every index of `0..n` into state made by `init`, one state per participant
    /// that takes work (at most once each, however many ranges it claims), then combines
    /// the states with `combine`, once each, in participant order. With `n == 0`, `init()`.
    /// Which indices share a state depends on the run: `combine` should not care (an
    /// associative, commutative merge).
    ///
    /// A group-by with one hash map per participant:
    /// ```
    /// use rayforce_pool::prelude::*;
    /// use std::collections::HashMap;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let keys: Vec<u32> = (0..10_000).map(|i| i % 7).collect();
    /// let counts = pool.fold(
    ///     keys.len(),
    ///     HashMap::<u32, u64>::new,
    ///     |map, i| *map.entry(keys[i]).or_default() += 1,
    ///     |mut a, b| {
    ///         for (k, v) in b {
    ///             *a.entry(k).or_default() += v;
    ///         }
    ///         a
    ///     },
    /// );
    /// assert_eq!(counts[&0], 1429);
    /// ```
    fn fold<S, I, F, C>(&self, n: usize, init: I, fold: F, combine: C) -> S
    where
        S: Send,
        I: Fn() -> S + Sync,
        F: Fn(&mut S, usize) + Sync,
        C: Fn(S, S) -> S,
    {
        let fold_range = |state: &mut S, range: Range<usize>| range.for_each(|i| fold(state, i));
        pipeline::run_any_state(
            self,
            n,
            Claims::FromHomes(None),
            &init,
            fold_range,
            OnFork::Panic,
            |states| states.reduce(combine).unwrap_or_else(&init),
        )
    }

    /// `op` over `map(i)` for every index, in an unspecified grouping (so `op` should be
    /// associative and commutative); `None` when `n == 0`. As rayon's `reduce_with` over
    /// the mapped items.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(pool.reduce_with(100, |i| i as u64, u64::max), Some(99));
    /// ```
    fn reduce_with<T, M, O>(&self, n: usize, map: M, op: O) -> Option<T>
    where
        T: Send,
        M: Fn(usize) -> T + Sync,
        O: Fn(T, T) -> T + Sync,
    {
        let fold_range = |state: &mut Option<T>, range: Range<usize>| {
            for i in range {
                let value = map(i);
                *state = Some(match state.take() {
                    Some(acc) => op(acc, value),
                    None => value,
                });
            }
        };
        from_none(self, n, fold_range, |states| states.flatten().reduce(&op))
    }

    /// The sum of `f(i)` for every index (`T::sum` of nothing when `n == 0`). Each range is
    /// one `Iterator::sum`, which the compiler vectorises where it can.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let xs: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    /// let squares: f32 = pool.sum(xs.len(), |i| xs[i] * xs[i]);
    /// assert!((squares - 332_833_500.0).abs() < 1e3);
    /// ```
    fn sum<T, F>(&self, n: usize, f: F) -> T
    where
        T: Send + Sum<T>,
        F: Fn(usize) -> T + Sync,
    {
        let fold_range = |state: &mut Option<T>, range: Range<usize>| {
            let part: T = range.map(&f).sum();
            *state = Some(match state.take() {
                Some(acc) => [acc, part].into_iter().sum(),
                None => part,
            });
        };
        from_none(self, n, fold_range, |states| states.flatten().sum())
    }

    /// The index whose `key` is least (the lowest such index on ties, as
    /// `Iterator::min_by_key`); `None` when `n == 0`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let xs = [5, 3, 9, 3, 7];
    /// assert_eq!(pool.position_min_by_key(xs.len(), |i| xs[i]), Some(1));
    /// ```
    fn position_min_by_key<K, F>(&self, n: usize, key: F) -> Option<usize>
    where
        K: Ord + Send,
        F: Fn(usize) -> K + Sync,
    {
        // (key, index) pairs compare by key, then index: the least is the lowest index.
        self.reduce_with(n, |i| (key(i), i), std::cmp::min)
            .map(|(_, i)| i)
    }

    /// The index whose `key` is greatest (the highest such index on ties, as
    /// `Iterator::max_by_key`); `None` when `n == 0`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
    /// let xs = [5, 9, 2, 9, 7];
    /// assert_eq!(pool.position_max_by_key(xs.len(), |i| xs[i]), Some(3));
    /// ```
    fn position_max_by_key<K, F>(&self, n: usize, key: F) -> Option<usize>
    where
        K: Ord + Send,
        F: Fn(usize) -> K + Sync,
    {
        self.reduce_with(n, |i| (key(i), i), std::cmp::max)
            .map(|(_, i)| i)
    }
}

impl<R: Runs + ?Sized> ParallelFold for R {}

/// The pipeline over states that start as `None`, for the operations that have no
/// identity; a forked child panics (nothing of the caller's is written in place).
fn from_none<R, T, F, U>(
    runs: &R,
    n: usize,
    fold_range: F,
    combine: impl FnOnce(Drain<'_, Option<T>>) -> U,
) -> U
where
    R: Runs + ?Sized,
    T: Send,
    F: Fn(&mut Option<T>, Range<usize>) + Sync,
{
    pipeline::run_any_state(
        runs,
        n,
        Claims::FromHomes(None),
        &|| None,
        fold_range,
        OnFork::Panic,
        combine,
    )
}
