//! The string sources: `text.par_split(sep)`, `par_split_whitespace()`, `par_lines()` and
//! `par_chars()`, as rayon's `ParallelString`. Positions are the text's bytes (one more for
//! `par_split`, whose last piece may start at the end); a range yields, in order, the
//! pieces that start in it, each whole (the last may reach past the range: the text is
//! shared), so every piece comes once and in `std`'s order. Not indexed.

use super::drive::sealed::Drive;
use std::ops::Range;

/// Parallel iterators over a string's pieces and characters, as rayon's trait of the same
/// name (in the prelude; a `String` reaches it through its `str`). Each gives what `std`'s
/// method of the same name without `par_` gives, in the same order.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let text = String::from("3 apples\n4 pears\n");
/// let fruit: usize = text
///     .par_lines()
///     .filter_map(|line| line.split(' ').next()?.parse::<usize>().ok())
///     .sum();
/// assert_eq!(fruit, 7);
/// ```
pub trait ParallelString {
    /// The string.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!("abc".as_parallel_string(), "abc");
    /// ```
    fn as_parallel_string(&self) -> &str;

    /// The string's characters, as `str::chars`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let max = "hello, wörld".par_chars().max();
    /// assert_eq!(max, Some('ö'));
    /// assert_eq!("añb".par_chars().collect::<Vec<_>>(), ['a', 'ñ', 'b']);
    /// ```
    fn par_chars(&self) -> Chars<'_> {
        Chars {
            text: self.as_parallel_string(),
        }
    }

    /// The substrings between the matches of `separator` (a `char`, a slice or array of
    /// them, or a closure `Fn(char) -> bool`: see [`Pattern`]), as `str::split`: an empty
    /// string gives one empty piece, and adjacent, leading or trailing separators give
    /// empty pieces.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let total: i32 = "1, 2, buckle, 3, 4, door"
    ///     .par_split(',')
    ///     .filter_map(|s| s.trim().parse::<i32>().ok())
    ///     .sum();
    /// assert_eq!(total, 10);
    /// let pieces: Vec<&str> = ",a,,b,".par_split(',').collect();
    /// assert_eq!(pieces, ["", "a", "", "b", ""]);
    /// ```
    fn par_split<P: Pattern>(&self, separator: P) -> Split<'_, P> {
        Split {
            text: self.as_parallel_string(),
            separator,
        }
    }

    /// The lines, as `str::lines`: split at each `'\n'`, a `'\r'` before it dropped, and no
    /// empty last line after a final `'\n'` (none at all in an empty string).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let lengths: Vec<usize> = "hello world\r\nfizzbuzz\n".par_lines().map(str::len).collect();
    /// assert_eq!(lengths, [11, 8]);
    /// assert_eq!("".par_lines().count(), 0);
    /// ```
    fn par_lines(&self) -> Lines<'_> {
        Lines {
            text: self.as_parallel_string(),
        }
    }

    /// The substrings separated by any amount of whitespace (`char::is_whitespace`), as
    /// `str::split_whitespace`: none in an empty or all-whitespace string.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words: Vec<&str> = " Mary   had\ta\u{2009}little  \n\t lamb"
    ///     .par_split_whitespace()
    ///     .collect();
    /// assert_eq!(words, ["Mary", "had", "a", "little", "lamb"]);
    /// assert_eq!("   ".par_split_whitespace().count(), 0);
    /// ```
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        SplitWhitespace {
            text: self.as_parallel_string(),
        }
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}

/// The seal: [`Pattern`]'s methods live here, out of reach, so only this module's types
/// are patterns (as rayon's `Pattern`, which no other crate may implement).
mod sealed {
    use std::ops::Range;

    /// Which characters match: every match is one `char`, as in each of `std`'s char
    /// patterns.
    pub trait Sealed {
        /// The byte range of the first match in `haystack`.
        fn find_in(&self, haystack: &str) -> Option<Range<usize>>;
        /// Whether `c` is a match.
        fn is_match(&self, c: char) -> bool;
    }
}

/// What [`ParallelString::par_split`] splits at, as rayon's (sealed) trait of the same
/// name: a `char`, a `&[char]`, `[char; N]` or `&[char; N]` (any of their characters), or a
/// closure `Fn(char) -> bool + Sync + Send` (the characters it holds for). Implemented by
/// those types only.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let text = "a-b_c d";
/// assert_eq!(text.par_split('-').count(), 2);
/// assert_eq!(text.par_split(&['-', '_'][..]).count(), 3);
/// assert_eq!(text.par_split(['-', '_', ' ']).count(), 4);
/// assert_eq!(text.par_split(&['_', ' ']).count(), 3);
/// assert_eq!(text.par_split(|c: char| !c.is_alphabetic()).count(), 4);
/// ```
pub trait Pattern: sealed::Sealed + Sync + Send {}

/// The `Sealed` and [`Pattern`] impls of a pattern type by `std`'s pattern `$std` of
/// `$self` (what `str::split` takes for the same argument) and its test of one `char`.
macro_rules! patterns {
    ($([$($generics:tt)*] $ty:ty, |$self:ident, $c:ident| $std:expr, $test:expr;)*) => {$(
        impl<$($generics)*> sealed::Sealed for $ty {
            fn find_in(&$self, haystack: &str) -> Option<Range<usize>> {
                let (at, matched) = haystack.match_indices($std).next()?;
                Some(at..at + matched.len())
            }

            fn is_match(&$self, $c: char) -> bool {
                $test
            }
        }

        impl<$($generics)*> Pattern for $ty {}
    )*};
}

patterns! {
    [] char, |self, c| *self, c == *self;
    ['s] &'s [char], |self, c| *self, self.contains(&c);
    [const N: usize] [char; N], |self, c| *self, self.contains(&c);
    ['s, const N: usize] &'s [char; N], |self, c| *self, self.contains(&c);
    [F: Fn(char) -> bool + Sync + Send] F, |self, c| self, self(c);
}

/// Whitespace, `char::is_whitespace`: what [`SplitWhitespace`] splits at.
#[derive(Debug, Clone, Copy)]
struct Whitespace;

impl sealed::Sealed for Whitespace {
    fn find_in(&self, haystack: &str) -> Option<Range<usize>> {
        let (at, matched) = haystack.match_indices(char::is_whitespace).next()?;
        Some(at..at + matched.len())
    }

    fn is_match(&self, c: char) -> bool {
        c.is_whitespace()
    }
}

/// The first char boundary of `text` at or after `at` (its length for any `at` past it).
fn boundary_from(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Where the first piece of `text` split at `separator` that starts at or after
/// `range.start` starts, if it is found before `range.end` (else none starts in `range`,
/// or the one returned starts at or past its end). A piece starts at 0 and right after
/// each match: a match is one `char`, so only char boundaries are looked at, and the
/// `char` that ends at the first boundary from `range.start` is the only match before it
/// that matters. Looks at `range`'s bytes only.
fn first_piece<P: sealed::Sealed>(text: &str, separator: &P, range: Range<usize>) -> Option<usize> {
    if range.is_empty() {
        return None;
    }
    let from = boundary_from(text, range.start);
    let Some(before) = text[..from].chars().next_back() else {
        return Some(0);
    };
    if separator.is_match(before) {
        return Some(from);
    }
    // A match that is not within the range ends past it, as every later one does.
    let to = boundary_from(text, range.end).max(from);
    separator
        .find_in(&text[from..to])
        .map(|found| from + found.end)
}

/// The piece of `text` split at `separator` that starts at `start`, and where the next
/// one starts (`None` after the last).
fn piece_at<'data, P: sealed::Sealed>(
    text: &'data str,
    separator: &P,
    start: usize,
) -> (&'data str, Option<usize>) {
    let rest = &text[start..];
    match separator.find_in(rest) {
        Some(found) => (&rest[..found.start], Some(start + found.end)),
        None => (rest, None),
    }
}

/// The pieces of `text` split at `separator` that start in a range, in order: the items
/// of a range of [`Split`] and the base of those of [`Lines`] and [`SplitWhitespace`].
#[derive(Debug, Clone)]
pub struct Pieces<'data, 'p, P> {
    text: &'data str,
    separator: &'p P,
    /// Where the next piece starts; `None` after the last.
    next: Option<usize>,
    /// Pieces that start here or later are a later range's.
    end: usize,
}

impl<'data, 'p, P: sealed::Sealed> Pieces<'data, 'p, P> {
    /// The pieces that start in `range`.
    fn new(text: &'data str, separator: &'p P, range: Range<usize>) -> Self {
        Pieces {
            text,
            separator,
            next: first_piece(text, separator, range.clone()),
            end: range.end,
        }
    }

    /// The next piece, and whether a separator ends it (it is not the text's last).
    fn next_piece(&mut self) -> Option<(&'data str, bool)> {
        let start = self.next.filter(|&start| start < self.end)?;
        let (piece, next) = piece_at(self.text, self.separator, start);
        self.next = next;
        Some((piece, next.is_some()))
    }
}

impl<'data, P: sealed::Sealed> Iterator for Pieces<'data, '_, P> {
    type Item = &'data str;

    fn next(&mut self) -> Option<&'data str> {
        self.next_piece().map(|(piece, _)| piece)
    }
}

/// A parallel iterator over a string's characters: `text.par_chars()`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let vowels = "parallel façade".par_chars().filter(|c| "aeiouç".contains(*c)).count();
/// assert_eq!(vowels, 7);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Chars<'data> {
    text: &'data str,
}

impl<'data> Drive for Chars<'data> {
    type Item = char;
    type Seq<'a>
        = std::str::Chars<'data>
    where
        Self: 'a;

    fn positions(&self) -> usize {
        self.text.len()
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // The chars that start in the range.
        let (from, to) = (range.start, range.end.max(range.start));
        self.text[boundary_from(self.text, from)..boundary_from(self.text, to)].chars()
    }
}

/// A parallel iterator over the substrings of a string between a pattern's matches:
/// `text.par_split(separator)`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let fields: Vec<&str> = "name;age;;city".par_split(';').collect();
/// assert_eq!(fields, ["name", "age", "", "city"]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Split<'data, P> {
    text: &'data str,
    separator: P,
}

impl<'data, P: Pattern> Drive for Split<'data, P> {
    type Item = &'data str;
    type Seq<'a>
        = Pieces<'data, 'a, P>
    where
        Self: 'a;

    /// One more than the bytes: the last piece may start at the end (after a final
    /// separator, or the empty text's one piece).
    fn positions(&self) -> usize {
        self.text.len() + 1
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        Pieces::new(self.text, &self.separator, range)
    }
}

/// A parallel iterator over a string's lines: `text.par_lines()`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let lines: Vec<&str> = "one\r\ntwo\n\nthree\n".par_lines().collect();
/// assert_eq!(lines, ["one", "two", "", "three"]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct Lines<'data> {
    text: &'data str,
}

/// The lines that start in a range: the pieces split at `'\n'`, less a `'\r'` before it.
#[derive(Debug, Clone)]
pub struct LinePieces<'data> {
    pieces: Pieces<'data, 'static, char>,
}

impl<'data> Iterator for LinePieces<'data> {
    type Item = &'data str;

    fn next(&mut self) -> Option<&'data str> {
        let (line, ended) = self.pieces.next_piece()?;
        // As `str::lines`: a `'\r'` goes with the `'\n'` after it, not at the text's end.
        Some(if ended {
            line.strip_suffix('\r').unwrap_or(line)
        } else {
            line
        })
    }
}

impl<'data> Drive for Lines<'data> {
    type Item = &'data str;
    type Seq<'a>
        = LinePieces<'data>
    where
        Self: 'a;

    /// The bytes: a line starts before the end (a final `'\n'` ends the last one).
    fn positions(&self) -> usize {
        self.text.len()
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        LinePieces {
            pieces: Pieces::new(self.text, &'\n', range),
        }
    }
}

/// A parallel iterator over the substrings of a string separated by whitespace:
/// `text.par_split_whitespace()`.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let longest = "which is the longest word?".par_split_whitespace().max_by_key(|w| w.len());
/// assert_eq!(longest, Some("longest"));
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing until consumed"]
pub struct SplitWhitespace<'data> {
    text: &'data str,
}

/// The words that start in a range: the non-empty pieces split at whitespace.
#[derive(Debug, Clone)]
pub struct WordPieces<'data> {
    pieces: Pieces<'data, 'static, Whitespace>,
}

impl<'data> Iterator for WordPieces<'data> {
    type Item = &'data str;

    fn next(&mut self) -> Option<&'data str> {
        self.pieces.find(|word| !word.is_empty())
    }
}

impl<'data> Drive for SplitWhitespace<'data> {
    type Item = &'data str;
    type Seq<'a>
        = WordPieces<'data>
    where
        Self: 'a;

    /// The bytes: a word starts at a non-whitespace `char`.
    fn positions(&self) -> usize {
        self.text.len()
    }

    fn exact(&self) -> bool {
        false
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        WordPieces {
            pieces: Pieces::new(self.text, &Whitespace, range),
        }
    }
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    /// The items of `iter`'s ranges `0..i`, `i..j` and `j..positions()`, one after another.
    fn in_three<I: Drive>(iter: &I, i: usize, j: usize) -> Vec<I::Item> {
        let n = iter.positions();
        // SAFETY: disjoint ranges within the positions.
        unsafe { iter.seq(0..i).chain(iter.seq(i..j)).chain(iter.seq(j..n)) }.collect()
    }

    /// Whether every cut of `iter`'s positions into three ranges (some empty, some starting
    /// inside a `char` or a separator) yields `expected`.
    fn every_cut_yields<I>(iter: &I, expected: &[I::Item])
    where
        I: Drive,
        I::Item: PartialEq + std::fmt::Debug,
    {
        let n = iter.positions();
        for i in 0..=n {
            for j in i..=n {
                assert_eq!(in_three(iter, i, j), expected, "cut at {i} and {j}");
            }
        }
    }

    #[test]
    fn every_cut_of_every_short_text_yields_std_pieces() {
        let tokens = ["a", "é", "€", "😀", ",", "\n", "\r", " ", "\u{2009}"];
        let mut texts = vec![String::new()];
        let mut last = texts.clone();
        for _ in 0..3 {
            last = last
                .iter()
                .flat_map(|text| tokens.iter().map(move |token| format!("{text}{token}")))
                .collect();
            texts.extend(last.iter().cloned());
        }
        for text in &texts {
            let text = text.as_str();
            every_cut_yields(&text.par_chars(), &text.chars().collect::<Vec<_>>());
            every_cut_yields(&text.par_lines(), &text.lines().collect::<Vec<_>>());
            let words: Vec<&str> = text.split_whitespace().collect();
            every_cut_yields(&text.par_split_whitespace(), &words);
            every_cut_yields(&text.par_split(','), &text.split(',').collect::<Vec<_>>());
            every_cut_yields(&text.par_split('€'), &text.split('€').collect::<Vec<_>>());
            let set = ['😀', 'é', '\r'];
            every_cut_yields(&text.par_split(&set), &text.split(&set).collect::<Vec<_>>());
            let odd = |c: char| u32::from(c) % 2 == 1;
            every_cut_yields(&text.par_split(odd), &text.split(odd).collect::<Vec<_>>());
        }
    }
}
