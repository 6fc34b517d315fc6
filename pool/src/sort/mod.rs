//! Sorting on the pool: rayon's comparison sorts (`unstable.rs` by medians and `join`,
//! `stable.rs` by runs and parallel merges, `cached_key.rs`), and a radix sort
//! (`radix.rs`, over the keys of `radix_key.rs`, its scratch in `huge_pages.rs`; plain
//! keys spanning few values by `counting.rs`), all
//! behind the slice methods of [`ParallelSliceMut`](crate::slice::ParallelSliceMut), each
//! first checking for input in order already (`in_order.rs`).

pub(crate) mod cached_key;
pub(crate) mod counting;
#[cfg(target_os = "linux")]
mod huge_pages;
mod in_order;
pub(crate) mod radix;
pub(crate) mod radix_key;
pub(crate) mod stable;
pub(crate) mod unstable;

/// `n` xorshift draws from `seed`, the same at every call: the sorts' tests' inputs.
#[cfg(test)]
fn xorshift(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed;
    (0..n).map(move |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    })
}
