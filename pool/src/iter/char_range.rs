//! `char` ranges as sources (`('a'..='z').into_par_iter()`), indexed as rayon's and std's
//! are: position `i` is the range's `i`-th `char`, the surrogate gap `U+D800..=U+DFFF`
//! (which holds no `char`) skipped.

use super::drive::sealed::Drive;
use super::ranges::{RangeInclusiveIter, RangeIter};
use super::source::IntoParallelIterator;
use std::ops::{Range, RangeInclusive};

/// The first surrogate: no `char` from here up to [`GAP_END`].
const GAP_START: u32 = 0xD800;
/// How many code points the gap holds.
const GAP_LEN: u32 = 0x800;
/// The first code point past the gap.
const GAP_END: u32 = GAP_START + GAP_LEN;

/// Where `c` stands among all `char`s: its code point, less the gap when past it.
fn dense(c: char) -> u32 {
    let code = u32::from(c);
    if code >= GAP_END {
        code - GAP_LEN
    } else {
        code
    }
}

/// The `char` at `dense` (as [`dense`] numbers them).
fn char_at(dense: u32) -> char {
    let code = if dense >= GAP_START {
        dense + GAP_LEN
    } else {
        dense
    };
    char::from_u32(code).expect("a position within a char range is a char")
}

/// The `char` `offset` positions past `start`.
fn offset(start: char, offset: usize) -> char {
    // Offsets within a range of `char`s: below 0x110000, so the conversion and the sum fit.
    char_at(dense(start) + offset as u32)
}

impl Drive for RangeIter<char> {
    type Item = char;
    type Seq<'a> = Range<char>;

    fn position_count(&self) -> usize {
        let Range { start, end } = self.range;
        dense(end).saturating_sub(dense(start)) as usize
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> Range<char> {
        let start = self.range.start;
        offset(start, range.start)..offset(start, range.end)
    }
}

impl IntoParallelIterator for Range<char> {
    type Iter = RangeIter<char>;
    type Item = char;

    fn into_par_iter(self) -> RangeIter<char> {
        RangeIter { range: self }
    }
}

impl Drive for RangeInclusiveIter<char> {
    type Item = char;
    type Seq<'a> = RangeInclusive<char>;

    fn position_count(&self) -> usize {
        if self.range.is_empty() {
            return 0;
        }
        (dense(*self.range.end()) - dense(*self.range.start())) as usize + 1
    }

    fn exact(&self) -> bool {
        true
    }

    unsafe fn seq(&self, range: Range<usize>) -> RangeInclusive<char> {
        let start = *self.range.start();
        if range.is_empty() {
            let mut none = start..=start;
            none.next();
            return none;
        }
        offset(start, range.start)..=offset(start, range.end - 1)
    }
}

impl IntoParallelIterator for RangeInclusive<char> {
    type Iter = RangeInclusiveIter<char>;
    type Item = char;

    fn into_par_iter(self) -> RangeInclusiveIter<char> {
        RangeInclusiveIter { range: self }
    }
}
