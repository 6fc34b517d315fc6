//! The owned source: `vec.into_par_iter()` moves each item out of the `Vec` to the
//! participant whose range holds it; items no consumer took (a search stopped early, a
//! panic) are dropped with the iterator, each once.

use super::drive::sealed::Drive;
use super::IntoParallelIterator;
use crate::fork;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// A parallel iterator over the items of a `Vec`, by value: `vec.into_par_iter()`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let words = vec![String::from("par"), String::from("allel")];
/// let joined: String = words.into_par_iter().reduce(String::new, |a, b| a + &b);
/// assert_eq!(joined, "parallel");
/// ```
///
/// # Safety
/// `buffer` is the `Vec`'s storage with its length set to 0 (so that freeing it drops no
/// item) and `len` items in it; an item is moved out at most once, and then its bit in
/// `taken` is set (when `T` needs dropping) before the iterator is dropped.
#[must_use = "iterators do nothing until consumed"]
pub struct IntoIter<T> {
    buffer: ManuallyDrop<Vec<T>>,
    len: usize,
    /// One bit per item moved out, for `T`s that need dropping; empty otherwise.
    taken: Box<[AtomicU64]>,
    /// The fork generation the iterator was made in: a forked child leaks it.
    generation: u64,
}

impl<T> std::fmt::Debug for IntoIter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntoIter")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// `T: Sync` too: `IntoIter` is `Sync` for any `T: Send` (threads share it to move out
/// disjoint items), so two threads may clone one at once, each reading every item.
impl<T: Clone + Sync> Clone for IntoIter<T> {
    /// A copy of the items: all of them, since only a consumer, which takes the iterator,
    /// moves any out.
    fn clone(&self) -> Self {
        // SAFETY: the storage holds `len` initialised items (struct `# Safety`), none moved
        // out while the iterator can be borrowed outside a consumer.
        let items = unsafe { std::slice::from_raw_parts(self.buffer.as_ptr(), self.len) };
        IntoIter::new(items.to_vec())
    }
}

// SAFETY: each item goes to one thread, once (struct `# Safety`): `T: Send` suffices, as
// for `Vec<T>`.
unsafe impl<T: Send> Send for IntoIter<T> {}
// SAFETY: shared `&IntoIter`s move out disjoint items only (`Drive::seq`'s contract); the
// bitmap is atomic.
unsafe impl<T: Send> Sync for IntoIter<T> {}

impl<T> IntoIter<T> {
    /// The iterator over `items`.
    pub(crate) fn new(mut items: Vec<T>) -> IntoIter<T> {
        let len = items.len();
        // SAFETY: 0 is within the capacity; the items stay initialised in the storage,
        // owned by the iterator from here on (struct `# Safety`).
        unsafe { items.set_len(0) };
        let words = if std::mem::needs_drop::<T>() {
            len.div_ceil(64)
        } else {
            0
        };
        fork::watch();
        IntoIter {
            buffer: ManuallyDrop::new(items),
            len,
            taken: (0..words).map(|_| AtomicU64::new(0)).collect(),
            generation: fork::generation(),
        }
    }

    /// Notes that the items at `range` were moved out.
    fn mark_taken(&self, range: Range<usize>) {
        if self.taken.is_empty() || range.is_empty() {
            return;
        }
        let (first, last) = (range.start / 64, (range.end - 1) / 64);
        for word in first..=last {
            let from = if word == first { range.start % 64 } else { 0 };
            let to = if word == last {
                (range.end - 1) % 64 + 1
            } else {
                64
            };
            let bits = (u64::MAX >> (64 - (to - from))) << from;
            // Relaxed: read by `drop`, after the region that moved the items out ended
            // (the region's end orders every participant's writes before the caller goes on).
            self.taken[word].fetch_or(bits, Ordering::Relaxed);
        }
    }
}

impl<T> Drop for IntoIter<T> {
    /// Drops the items no consumer moved out, then frees the storage. In a forked child it
    /// leaks both: a helper of the parent may have been moving items out at the fork.
    fn drop(&mut self) {
        if self.generation != fork::generation() {
            return;
        }
        let base = self.buffer.as_mut_ptr();
        // Dropped last, also while an item's drop unwinds: frees the storage.
        let _storage = FreeStorage(&mut self.buffer);
        if !self.taken.is_empty() {
            let mut rest = DropUntaken {
                base,
                len: self.len,
                taken: &self.taken,
                next: 0,
            };
            rest.drop_each();
        }
    }
}

/// Frees an [`IntoIter`]'s storage when dropped.
struct FreeStorage<'a, T>(&'a mut ManuallyDrop<Vec<T>>);

impl<T> Drop for FreeStorage<'_, T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here; its length is 0, so this frees the storage only.
        unsafe { ManuallyDrop::drop(self.0) };
    }
}

/// The items of an [`IntoIter`] from `next` on that no consumer moved out, dropped in
/// order; if one's drop unwinds, dropping this drops the rest (a second unwind aborts, as
/// `std`'s containers do).
struct DropUntaken<'a, T> {
    base: *mut T,
    len: usize,
    taken: &'a [AtomicU64],
    next: usize,
}

impl<T> DropUntaken<'_, T> {
    fn drop_each(&mut self) {
        while self.next < self.len {
            let index = self.next;
            // Relaxed: as in `IntoIter::mark_taken`.
            let bits = self.taken[index / 64].load(Ordering::Relaxed);
            if bits == u64::MAX {
                self.next = (index / 64 + 1) * 64; // all 64 moved out
                continue;
            }
            self.next += 1;
            if bits & (1 << (index % 64)) == 0 {
                // SAFETY: in the storage, initialised and not moved out (its bit is clear),
                // and `next` is past it before it drops: dropped here once.
                unsafe { std::ptr::drop_in_place(self.base.add(index)) };
            }
        }
    }
}

impl<T> Drop for DropUntaken<'_, T> {
    fn drop(&mut self) {
        self.drop_each();
    }
}

/// The items of one range of an [`IntoIter`], moved out as they are yielded; on drop, the
/// ones yielded are marked taken and the rest left for the iterator to drop.
pub struct Drain<'a, T> {
    source: &'a IntoIter<T>,
    start: usize,
    next: usize,
    end: usize,
}

impl<T> std::fmt::Debug for Drain<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drain")
            .field("start", &self.start)
            .field("next", &self.next)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.next == self.end {
            return None;
        }
        // SAFETY: within the storage and not yet moved out (`Drive::seq`'s contract: no
        // other range holds it, and this one yields it once).
        let item = unsafe { self.source.buffer.as_ptr().add(self.next).read() };
        self.next += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.end - self.next;
        (left, Some(left))
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        self.source.mark_taken(self.start..self.next);
    }
}

impl<T: Send> Drive for IntoIter<T> {
    type Item = T;
    type Seq<'a>
        = Drain<'a, T>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        self.len
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Drain<'_, T> {
        assert!(range.start <= range.end && range.end <= self.len);
        Drain {
            source: self,
            start: range.start,
            next: range.start,
            end: range.end,
        }
    }
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::IntoIter;
    use std::cell::Cell;
    use std::marker::PhantomData;

    /// Whether `T` is `Clone`, told by method resolution: the inherent method applies only
    /// where `T: Clone`, the trait's otherwise.
    struct Probe<T>(PhantomData<T>);

    trait NotClone {
        fn is_clone(&self) -> bool {
            false
        }
    }

    impl<T> NotClone for Probe<T> {}

    impl<T: Clone> Probe<T> {
        fn is_clone(&self) -> bool {
            true
        }
    }

    #[test]
    fn an_owned_source_clones_only_items_that_threads_may_share() {
        assert!(
            Probe::<Cell<u64>>(PhantomData).is_clone(),
            "the probe tells"
        );
        assert!(Probe::<IntoIter<u64>>(PhantomData).is_clone());
        assert!(!Probe::<IntoIter<Cell<u64>>>(PhantomData).is_clone());
        assert!(!Probe::<crate::iter::Once<Cell<u64>>>(PhantomData).is_clone());
    }
}
