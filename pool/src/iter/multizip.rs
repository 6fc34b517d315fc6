//! Tuples of up to 12 indexed parallel iterators zipped as one, as rayon's `MultiZip`:
//! `(a, b, c).into_par_iter()` yields `(a_i, b_i, c_i)` for each position of the shortest,
//! `(&a, &b).into_par_iter()` zips their `par_iter()`s and `(&mut a, &mut b)` their
//! `par_iter_mut()`s, as do `&(a, b)` and `&mut (a, b)`.

use super::drive::sealed::Drive;
use super::source::{IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator};
use super::IndexedParallelIterator;
use std::ops::Range;

/// A tuple of indexed parallel iterators zipped: each item a tuple of theirs, as many as the
/// shortest has; made by `into_par_iter()` on a tuple.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let (a, b) = (vec![1, 2, 3], vec![10, 20, 30, 40]);
/// let mut sums = vec![0; 3];
/// (&a, &b, &mut sums).into_par_iter().for_each(|(x, y, s)| *s = x + y);
/// assert_eq!(sums, [11, 22, 33]);
/// let pairs: Vec<(i32, char)> = (a, vec!['x', 'y']).into_par_iter().collect();
/// assert_eq!(pairs, [(1, 'x'), (2, 'y')]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct MultiZip<T> {
    tuple: T,
}

/// The items of one range of a [`MultiZip`]: a tuple of its iterators' ranges, stepped
/// together.
#[derive(Debug)]
pub struct ZippedSeqs<T>(T);

/// For each arity: `$T` the iterators' types, `$i` their indices in the tuple.
macro_rules! multizip {
    ($($T:ident $i:tt),+) => {
        impl<$($T: Drive),+> Drive for MultiZip<($($T,)+)> {
            type Item = ($($T::Item,)+);
            type Seq<'a>
                = ZippedSeqs<($($T::Seq<'a>,)+)>
            where
                Self: 'a;

            fn position_count(&self) -> usize {
                usize::MAX $(.min(self.tuple.$i.position_count()))+
            }

            fn exact(&self) -> bool {
                true
            }

            fn min_len(&self) -> usize {
                1 $(.max(self.tuple.$i.min_len()))+
            }

            fn max_len(&self) -> usize {
                usize::MAX $(.min(self.tuple.$i.max_len()))+
            }

            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's contract, passed on to each: a range below the
                // shortest's length is within every one.
                ZippedSeqs(($(unsafe { self.tuple.$i.seq(range.clone()) },)+))
            }
        }

        impl<$($T: Iterator),+> Iterator for ZippedSeqs<($($T,)+)> {
            type Item = ($($T::Item,)+);

            fn next(&mut self) -> Option<Self::Item> {
                // Each yields as many items as the others: their ranges are the same, and
                // every one is indexed.
                Some(($(self.0.$i.next()?,)+))
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                let sizes = [$(self.0.$i.size_hint()),+];
                let low = sizes.iter().map(|size| size.0).min().unwrap_or(0);
                let high = sizes.iter().filter_map(|size| size.1).min();
                (low, high)
            }
        }

        impl<$($T: IndexedParallelIterator),+> IndexedParallelIterator for MultiZip<($($T,)+)> {}

        impl<$($T),+> IntoParallelIterator for ($($T,)+)
        where
            $($T: IntoParallelIterator, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);

            fn into_par_iter(self) -> Self::Iter {
                MultiZip {
                    tuple: ($(self.$i.into_par_iter(),)+),
                }
            }
        }

        impl<'a, $($T),+> IntoParallelIterator for &'a ($($T,)+)
        where
            $($T: IntoParallelRefIterator<'a>, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);

            fn into_par_iter(self) -> Self::Iter {
                MultiZip {
                    tuple: ($(self.$i.par_iter(),)+),
                }
            }
        }

        impl<'a, $($T),+> IntoParallelIterator for &'a mut ($($T,)+)
        where
            $($T: IntoParallelRefMutIterator<'a>, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);

            fn into_par_iter(self) -> Self::Iter {
                MultiZip {
                    tuple: ($(self.$i.par_iter_mut(),)+),
                }
            }
        }
    };
}

multizip!(A 0);
multizip!(A 0, B 1);
multizip!(A 0, B 1, C 2);
multizip!(A 0, B 1, C 2, D 3);
multizip!(A 0, B 1, C 2, D 3, E 4);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
