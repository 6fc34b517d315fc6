//! `fold_chunks(n, identity, op)` and `fold_chunks_with(n, init, op)`: each run of `n`
//! items (the last may be shorter) folded into one value, an indexed iterator of them.

use super::chunks::items_of;
use super::drive::sealed::Drive;
use super::identity::sealed::Identity;
use super::identity::CloneOf;
use std::ops::Range;

/// `iter.fold_chunks(n, identity, op)`: one value per chunk of `n` items, in order.
#[derive(Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct FoldChunks<I, ID, F> {
    base: I,
    size: usize,
    identity: ID,
    op: F,
}

/// `iter.fold_chunks_with(n, init, op)`: [`FoldChunks`] with clones of `init` for identity.
pub type FoldChunksWith<I, T, F> = FoldChunks<I, CloneOf<T>, F>;

impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for FoldChunks<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunks")
            .field("base", &self.base)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl<I, ID, F> FoldChunks<I, ID, F> {
    /// # Panics
    /// If `size` is 0.
    pub(crate) fn new(base: I, size: usize, identity: ID, op: F) -> Self {
        assert!(size != 0, "fold_chunks: chunk_size must not be zero");
        FoldChunks {
            base,
            size,
            identity,
            op,
        }
    }
}

impl<I, ID, F> Drive for FoldChunks<I, ID, F>
where
    I: Drive,
    ID: Identity,
    ID::Accumulator: Send,
    F: Fn(ID::Accumulator, I::Item) -> ID::Accumulator + Sync,
{
    type Item = ID::Accumulator;
    type Seq<'a>
        = Folded<'a, I, ID, F>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.base.position_count().div_ceil(self.size)
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        Folded {
            chunks: range,
            of: self,
        }
    }
}

/// The folded chunks of one range of chunk positions.
pub struct Folded<'a, I, ID, F> {
    chunks: Range<usize>,
    of: &'a FoldChunks<I, ID, F>,
}

impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for Folded<'_, I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folded")
            .field("chunks", &self.chunks)
            .field("of", &self.of)
            .finish()
    }
}

impl<I, ID, F> Iterator for Folded<'_, I, ID, F>
where
    I: Drive,
    ID: Identity,
    F: Fn(ID::Accumulator, I::Item) -> ID::Accumulator,
{
    type Item = ID::Accumulator;

    fn next(&mut self) -> Option<ID::Accumulator> {
        let chunk = self.chunks.next()?;
        let of = self.of;
        let items = items_of(chunk..chunk + 1, of.size, of.base.position_count());
        // SAFETY: chunks of disjoint ranges of chunk positions are disjoint ranges of the
        // base's positions, within them (`Drive::seq`'s contract, passed on).
        let items = unsafe { of.base.seq(items) };
        Some(items.fold(of.identity.make(), &of.op))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}
