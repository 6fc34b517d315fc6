//! `interleave`, `interleave_shortest` and `intersperse`, as rayon's: adaptors whose
//! positions alternate between two sources (one of which may be a separator), each range
//! of positions mapped to one range of each source. `interleave` takes indexed iterators;
//! `intersperse` any, an unindexed one's items gathered in order when first consumed.

use super::collect::append;
use super::computed::{sealed::Make, Computed};
use super::drive::positions_of_base;
use super::drive::sealed::Drive;
use super::identity::sealed::Identity;
use super::identity::CloneOf;
use super::owned::Drain;
use super::reshape::Chain;
use super::{Either, ParallelIterator};
use std::ops::Range;

/// `a.interleave(b)`: `a`'s first item, `b`'s first, `a`'s second, ..., then the rest of
/// the longer one.
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Interleave<A, B> {
    /// Both sources: as many positions, each as long, as their chain.
    base: Chain<A, B>,
}

impl<A, B> Interleave<A, B> {
    /// Both sources (their positions together checked to fit a `usize` when counted).
    pub(crate) fn new(a: A, b: B) -> Self {
        Interleave {
            base: Chain::new(a, b, "interleave"),
        }
    }
}

/// The range of one source's positions that `range` of the interleaving covers: the source
/// of parity `odd` (`b`, on odd positions while they alternate), `longer` if its items
/// continue past `alternating`.
fn source_range(range: &Range<usize>, alternating: usize, odd: bool, longer: bool) -> Range<usize> {
    let shared = alternating / 2;
    let at = |position: usize| {
        if position <= alternating {
            (position + usize::from(!odd)) / 2
        } else if longer {
            shared + (position - alternating)
        } else {
            shared
        }
    };
    at(range.start)..at(range.end)
}

impl<A, B> Drive for Interleave<A, B>
where
    A: Drive,
    B: Drive<Item = A::Item>,
{
    type Item = A::Item;
    type Seq<'a>
        = Alternate<A::Seq<'a>, B::Seq<'a>>
    where
        Self: 'a;

    positions_of_base!(exact: base);

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let Chain { a, b, .. } = &self.base;
        let (na, nb) = (a.position_count(), b.position_count());
        // The positions where the two alternate: twice the shorter's length.
        let alternating = 2 * na.min(nb);
        let in_a = source_range(&range, alternating, false, na > nb);
        let in_b = source_range(&range, alternating, true, nb > na);
        Alternate {
            // SAFETY: disjoint ranges of positions cover disjoint ranges of each source
            // (each source position is one interleaved position), within its positions.
            a: unsafe { a.seq(in_a) },
            // SAFETY: as above.
            b: unsafe { b.seq(in_b) },
            at: range.start,
            end: range.end,
            alternating,
            tail_from_a: na > nb,
        }
    }
}

/// One range of an [`Interleave`]'s items: from `a` on even positions and `b` on odd ones
/// below `alternating`, then from whichever has items left.
#[derive(Debug)]
pub struct Alternate<SA, SB> {
    a: SA,
    b: SB,
    at: usize,
    end: usize,
    alternating: usize,
    /// Whether the items past `alternating` are `a`'s (else `b`'s).
    tail_from_a: bool,
}

impl<T, SA: Iterator<Item = T>, SB: Iterator<Item = T>> Iterator for Alternate<SA, SB> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.at >= self.end {
            return None;
        }
        let at = self.at;
        self.at += 1;
        if at >= self.alternating {
            // Past the shorter's end: only the longer's range has items left.
            if self.tail_from_a {
                self.a.next()
            } else {
                self.b.next()
            }
        } else if at % 2 == 1 {
            self.b.next()
        } else {
            self.a.next()
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.end.saturating_sub(self.at);
        (left, Some(left))
    }
}

/// `a.interleave_shortest(b)`: as [`Interleave`] until either runs out (one more of `a`
/// if `a` is the longer).
pub type InterleaveShortest<A, B> = Interleave<super::Take<A>, super::Take<B>>;

/// `iter.intersperse(separator)`: the items with a clone of `separator` between each two.
#[derive(Debug)]
#[must_use = "iterators do nothing until consumed"]
pub struct Intersperse<I: ParallelIterator> {
    items: Items<I>,
    /// Behind a lock, so that the item need only be `Send`, as rayon asks.
    separator: CloneOf<I::Item>,
}

/// Where an [`Intersperse`]'s items come from: an indexed base, each of whose positions is
/// an item, or any other base's items gathered in order when first counted.
#[derive(Debug)]
enum Items<I: ParallelIterator> {
    Indexed(I),
    Gathered(Computed<Gathering<I>>),
}

/// How an unindexed base's items are gathered: in order, as `collect` into a `Vec`
/// gathers them.
#[derive(Clone)]
pub struct Gathering<I> {
    base: I,
}

impl<I: ParallelIterator> Make for Gathering<I> {
    type Item = I::Item;

    fn make(self) -> Vec<I::Item> {
        let mut gathered = Vec::new();
        append(&mut gathered, &self.base);
        gathered
    }
}

impl<I: ParallelIterator> Intersperse<I>
where
    I::Item: Clone,
{
    /// `base`'s items with `separator` between. An indexed base's positions are checked to
    /// fit a `usize` with their separators now (counting them makes nothing); another
    /// base's items are gathered when first counted.
    pub(crate) fn new(base: I, separator: I::Item) -> Self {
        let items = if base.exact() {
            let n = base.position_count();
            assert!(
                n.checked_add(n.saturating_sub(1)).is_some(),
                "intersperse: {n} items and their separators are more than a usize counts"
            );
            Items::Indexed(base)
        } else {
            Items::Gathered(Computed::new(Gathering { base }))
        };
        Intersperse {
            items,
            separator: CloneOf::new(separator),
        }
    }

    /// How many items there are (gathering them, the first time, for an unindexed base).
    fn item_count(&self) -> usize {
        match &self.items {
            Items::Indexed(base) => base.position_count(),
            Items::Gathered(gathered) => gathered.position_count(),
        }
    }
}

/// An unindexed base is cloned before its items are gathered, and its gathered items are
/// copied after (as [`Computed`]'s clone does): they are `Sync` here, since two threads
/// may clone one iterator at once.
impl<I: ParallelIterator + Clone> Clone for Intersperse<I>
where
    I::Item: Clone + Sync,
{
    fn clone(&self) -> Self {
        let items = match &self.items {
            Items::Indexed(base) => Items::Indexed(base.clone()),
            Items::Gathered(gathered) => Items::Gathered(gathered.clone()),
        };
        Intersperse {
            items,
            separator: self.separator.clone(),
        }
    }
}

impl<I> Drive for Intersperse<I>
where
    I: ParallelIterator,
    I::Item: Clone,
{
    type Item = I::Item;
    type Seq<'a>
        = Alternate<Either<I::Seq<'a>, Drain<'a, I::Item>>, std::iter::RepeatN<I::Item>>
    where
        Self: 'a;

    fn position_count(&self) -> usize {
        // Checked in `new` for an indexed base, here for gathered items (zero-sized ones
        // may be more than half a `usize`'s range).
        let n = self.item_count();
        n.checked_add(n.saturating_sub(1)).unwrap_or_else(|| {
            panic!("intersperse: {n} items and their separators are more than a usize counts")
        })
    }

    /// An indexed base's adaptor is indexed; a gathered one is not, so that asking
    /// (`opt_len`, or an `intersperse` over it) gathers nothing.
    fn exact(&self) -> bool {
        matches!(self.items, Items::Indexed(_))
    }

    fn min_len(&self) -> usize {
        match &self.items {
            Items::Indexed(base) => base.min_len(),
            Items::Gathered(_) => 1,
        }
    }

    fn max_len(&self) -> usize {
        match &self.items {
            Items::Indexed(base) => base.max_len(),
            Items::Gathered(_) => usize::MAX,
        }
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let alternating = self.position_count();
        let items = range.start.div_ceil(2)..range.end.div_ceil(2);
        let separators = range.end / 2 - range.start / 2;
        // SAFETY: disjoint ranges of positions cover disjoint ranges of items (each item
        // one even position), within the items' positions.
        let a = unsafe {
            match &self.items {
                Items::Indexed(base) => Either::Left(base.seq(items)),
                Items::Gathered(gathered) => Either::Right(gathered.seq(items)),
            }
        };
        Alternate {
            a,
            b: std::iter::repeat_n(self.separator.make(), separators),
            at: range.start,
            end: range.end,
            alternating,
            // Never reached: every position alternates.
            tail_from_a: true,
        }
    }
}
