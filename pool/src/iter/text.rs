//! The string sources of rayon's `ParallelString`: `text.par_chars()`,
//! `par_char_indices()`, `par_bytes()`, `par_encode_utf16()`, `par_split(sep)`,
//! `par_split_inclusive(sep)`, `par_split_terminator(sep)`, `par_lines()`,
//! `par_split_whitespace()`, `par_split_ascii_whitespace()`, `par_matches(pat)` and
//! `par_match_indices(pat)`. Positions are the text's bytes (one more for `par_split`,
//! whose last piece may start at the end); a range yields, in order, the items that start
//! in it, each whole (a piece may reach past the range: the text is shared), so every item
//! comes once and in `std`'s order. Only `par_bytes` is indexed: a byte is a position and
//! an item.

use super::drive::sealed::Drive;
use std::ops::Range;

/// Parallel iterators over a string's characters, bytes and pieces, as rayon's trait of
/// the same name (in the prelude; a `String` reaches it through its `str`). Each gives
/// what `std`'s method of the same name without `par_` gives, in the same order.
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

    /// The string's characters with the byte index each starts at, as `str::char_indices`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let min = "hello".par_char_indices().min_by_key(|&(_, c)| c);
    /// assert_eq!(min, Some((1, 'e')));
    /// let all: Vec<(usize, char)> = "añb".par_char_indices().collect();
    /// assert_eq!(all, [(0, 'a'), (1, 'ñ'), (3, 'b')]);
    /// ```
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices {
            text: self.as_parallel_string(),
        }
    }

    /// The string's bytes, as `str::bytes`: an indexed iterator, one position a byte (so,
    /// unlike rayon's, a range may end inside a multi-byte `char`).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!("hello".par_bytes().max(), Some(b'o'));
    /// assert_eq!("añ".par_bytes().len(), 3);
    /// let indexed: Vec<(usize, u8)> = "ab".par_bytes().enumerate().collect();
    /// assert_eq!(indexed, [(0, b'a'), (1, b'b')]);
    /// ```
    fn par_bytes(&self) -> Bytes<'_> {
        Bytes {
            text: self.as_parallel_string(),
        }
    }

    /// The string in UTF-16 code units, as `str::encode_utf16`: a `char` past U+FFFF gives
    /// its two surrogates, in order.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// assert_eq!("hello".par_encode_utf16().max(), Some(u16::from(b'o')));
    /// let units: Vec<u16> = "a€😀".par_encode_utf16().collect();
    /// assert_eq!(units, [0x61, 0x20AC, 0xD83D, 0xDE00]);
    /// ```
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        EncodeUtf16 {
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
            pattern: separator,
        }
    }

    /// The substrings of `par_split(separator)` each with the separator that ends it, as
    /// `str::split_inclusive`: no empty last piece after a final separator (none at all in
    /// an empty string).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let lines: Vec<&str> = "Mary had a little lamb\nlittle lamb\nlittle lamb."
    ///     .par_split_inclusive('\n')
    ///     .collect();
    /// assert_eq!(lines, ["Mary had a little lamb\n", "little lamb\n", "little lamb."]);
    /// assert_eq!("a,b,".par_split_inclusive(',').collect::<Vec<_>>(), ["a,", "b,"]);
    /// ```
    fn par_split_inclusive<P: Pattern>(&self, separator: P) -> SplitInclusive<'_, P> {
        SplitInclusive {
            text: self.as_parallel_string(),
            pattern: separator,
        }
    }

    /// The substrings of `par_split(terminator)` but an empty last one, as
    /// `str::split_terminator`: a final terminator ends the last piece instead of starting
    /// an empty one (and an empty string has none).
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let parts: Vec<&str> = "((1 + 3) * 2)"
    ///     .par_split_terminator(|c| c == '(' || c == ')')
    ///     .collect();
    /// assert_eq!(parts, ["", "", "1 + 3", " * 2"]);
    /// assert_eq!("A.B.".par_split_terminator('.').collect::<Vec<_>>(), ["A", "B"]);
    /// ```
    fn par_split_terminator<P: Pattern>(&self, terminator: P) -> SplitTerminator<'_, P> {
        SplitTerminator {
            text: self.as_parallel_string(),
            pattern: terminator,
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

    /// The substrings separated by any amount of ASCII whitespace
    /// (`char::is_ascii_whitespace`: not U+000B, nor whitespace past ASCII), as
    /// `str::split_ascii_whitespace`: none in an empty or all-ASCII-whitespace string.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words: Vec<&str> = " Mary   had\ta\u{2009}little  \n\t lamb"
    ///     .par_split_ascii_whitespace()
    ///     .collect();
    /// assert_eq!(words, ["Mary", "had", "a\u{2009}little", "lamb"]);
    /// assert_eq!(" \r\n".par_split_ascii_whitespace().count(), 0);
    /// ```
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        SplitAsciiWhitespace {
            text: self.as_parallel_string(),
        }
    }

    /// The matches of `pattern` (each one `char`: see [`Pattern`]), as `str::matches`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let total: i32 = "1, 2, buckle, 3, 4, door"
    ///     .par_matches(char::is_numeric)
    ///     .map(|s| s.parse::<i32>().unwrap())
    ///     .sum();
    /// assert_eq!(total, 10);
    /// assert_eq!("a€b€".par_matches('€').collect::<Vec<_>>(), ["€", "€"]);
    /// ```
    fn par_matches<P: Pattern>(&self, pattern: P) -> Matches<'_, P> {
        Matches {
            text: self.as_parallel_string(),
            pattern,
        }
    }

    /// The matches of `pattern` with the byte index each starts at, as
    /// `str::match_indices`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let digits: Vec<(usize, &str)> = "1, 2, buckle, 3, 4, door"
    ///     .par_match_indices(char::is_numeric)
    ///     .collect();
    /// assert_eq!(digits, [(0, "1"), (3, "2"), (14, "3"), (17, "4")]);
    /// ```
    fn par_match_indices<P: Pattern>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices {
            text: self.as_parallel_string(),
            pattern,
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
    /// patterns; and `std`'s splits at the matches.
    pub trait Sealed {
        /// What `str::split_terminator` by the pattern gives.
        type Terminated<'data, 'p>: Iterator<Item = &'data str>
        where
            Self: 'p;
        /// What `str::split_inclusive` by the pattern gives.
        type Inclusive<'data, 'p>: Iterator<Item = &'data str>
        where
            Self: 'p;

        /// The byte range of the first match in `haystack`.
        fn find_in(&self, haystack: &str) -> Option<Range<usize>>;
        /// Whether `c` is a match.
        fn is_match(&self, c: char) -> bool;
        /// `haystack.split_terminator(pattern)`.
        fn split_terminator<'data, 'p>(
            &'p self,
            haystack: &'data str,
        ) -> Self::Terminated<'data, 'p>;
        /// `haystack.split_inclusive(pattern)`.
        fn split_inclusive<'data, 'p>(&'p self, haystack: &'data str)
            -> Self::Inclusive<'data, 'p>;
    }
}

/// What [`ParallelString::par_split`], `par_split_inclusive`, `par_split_terminator`,
/// `par_matches` and `par_match_indices` look for, as rayon's (sealed) trait of the same
/// name: a `char`, a `&[char]`, `[char; N]` or `&[char; N]` (any of their characters), or
/// a closure `Fn(char) -> bool + Sync + Send` (the characters it holds for). Implemented
/// by those types only.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let text = "a-b_c d";
/// assert_eq!(text.par_split('-').count(), 2);
/// assert_eq!(text.par_split(&['-', '_'][..]).count(), 3);
/// assert_eq!(text.par_split(['-', '_', ' ']).count(), 4);
/// assert_eq!(text.par_matches(&['_', ' ']).count(), 2);
/// assert_eq!(text.par_matches(|c: char| !c.is_alphabetic()).count(), 3);
/// ```
pub trait Pattern: sealed::Sealed + Sync + Send {}

// Every sealed type: those below.
impl<T: sealed::Sealed + Sync + Send> Pattern for T {}

/// The `Sealed` impl of a pattern type by `std`'s pattern `$std` of `$self`, of type
/// `$std_ty` (what `str::split` takes for the same argument; `'p` is the borrow of
/// `$self`), and its test of one `char`.
macro_rules! patterns {
    ($(
        [$($generics:tt)*] $ty:ty => $std_ty:ty, |$self:ident, $c:ident| $std:expr, $test:expr;
    )*) => {$(
        impl<$($generics)*> sealed::Sealed for $ty {
            type Terminated<'data, 'p>
                = std::str::SplitTerminator<'data, $std_ty>
            where
                Self: 'p;
            type Inclusive<'data, 'p>
                = std::str::SplitInclusive<'data, $std_ty>
            where
                Self: 'p;

            fn find_in(&$self, haystack: &str) -> Option<Range<usize>> {
                let (at, matched) = haystack.match_indices($std).next()?;
                Some(at..at + matched.len())
            }

            fn is_match(&$self, $c: char) -> bool {
                $test
            }

            fn split_terminator<'data, 'p>(
                &'p $self,
                haystack: &'data str,
            ) -> Self::Terminated<'data, 'p> {
                haystack.split_terminator($std)
            }

            fn split_inclusive<'data, 'p>(
                &'p $self,
                haystack: &'data str,
            ) -> Self::Inclusive<'data, 'p> {
                haystack.split_inclusive($std)
            }
        }
    )*};
}

patterns! {
    [] char => char, |self, c| *self, c == *self;
    ['s] &'s [char] => &'s [char], |self, c| *self, self.contains(&c);
    [const N: usize] [char; N] => [char; N], |self, c| *self, self.contains(&c);
    ['s, const N: usize] &'s [char; N] => &'s [char; N], |self, c| *self, self.contains(&c);
    [F: Fn(char) -> bool + Sync + Send] F => &'p F, |self, c| self, self(c);
}

/// The first char boundary of `text` at or after `at` (its length for any `at` past it).
fn boundary_from(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The `char`s of `text` that start in `range`, and where the first of them starts.
fn chars_in(text: &str, range: Range<usize>) -> (usize, &str) {
    let from = boundary_from(text, range.start);
    let to = boundary_from(text, range.end).max(from);
    (from, &text[from..to])
}

/// Whether a piece of `text` split at `separator` starts at the char boundary `at`: at 0
/// and right after each match (the text's end included).
fn starts_piece<P: sealed::Sealed>(text: &str, separator: &P, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|before| separator.is_match(before))
}

/// Where the first piece of `text` split at `separator` that starts at or after
/// `range.start` starts, if it is found before `range.end` (else none starts in `range`,
/// or the one returned starts at or past its end). A match is one `char`, so only char
/// boundaries are looked at, and the `char` that ends at the first boundary from
/// `range.start` is the only match before it that matters. Looks at `range`'s bytes only.
fn first_piece<P: sealed::Sealed>(text: &str, separator: &P, range: Range<usize>) -> Option<usize> {
    if range.is_empty() {
        return None;
    }
    let from = boundary_from(text, range.start);
    if starts_piece(text, separator, from) {
        return Some(from);
    }
    // A match that is not within the range ends past it, as every later one does.
    let (at, matched) = Matched::new(text, separator, range).next()?;
    Some(at + matched.len())
}

/// The pieces of `text` split at `separator` that start in `range`, whole, as one slice of
/// it: from the first one's start to the start of the first piece after them (right after
/// the match that ends the last one), or to the text's end; empty where none starts in
/// `range`. Split at `separator`, the slice gives those pieces, then an empty one where it
/// ends right after a match: the next piece's start, not this range's (or the empty last
/// piece after a final match, which the caller decides on). Looks at `range`'s bytes and
/// the last piece's only.
fn span<'data, P: sealed::Sealed>(
    text: &'data str,
    separator: &P,
    range: Range<usize>,
) -> &'data str {
    match first_piece(text, separator, range.clone()) {
        Some(start) if start < range.end => {
            let end = first_piece(text, separator, range.end..text.len());
            &text[start..end.unwrap_or(text.len())]
        }
        _ => "",
    }
}

/// The matches of a pattern that start in a range, in order, with the byte index each
/// starts at: the items of a range of [`MatchIndices`] (and, without the indices, of
/// [`Matches`]).
#[derive(Debug, Clone)]
pub struct Matched<'data, 'p, P> {
    /// The `char`s of the range not searched yet.
    rest: &'data str,
    /// Where `rest` starts in the text.
    at: usize,
    pattern: &'p P,
}

impl<'data, 'p, P: sealed::Sealed> Matched<'data, 'p, P> {
    /// The matches in `text` that start in `range`.
    fn new(text: &'data str, pattern: &'p P, range: Range<usize>) -> Self {
        let (at, rest) = chars_in(text, range);
        Matched { rest, at, pattern }
    }
}

impl<'data, P: sealed::Sealed> Iterator for Matched<'data, '_, P> {
    type Item = (usize, &'data str);

    fn next(&mut self) -> Option<(usize, &'data str)> {
        let found = self.pattern.find_in(self.rest)?;
        let matched = (self.at + found.start, &self.rest[found.clone()]);
        self.rest = &self.rest[found.end..];
        self.at += found.end;
        Some(matched)
    }
}

/// A match without its index: how [`Matches`] yields [`Matched`]'s items.
type MatchOnly<'data> = fn((usize, &'data str)) -> &'data str;

/// The `char`s that start in a range, with the byte index each starts at in the text: the
/// items of a range of [`CharIndices`].
#[derive(Debug, Clone)]
pub struct IndexedChars<'data> {
    /// Where the range's first `char` starts.
    base: usize,
    chars: std::str::CharIndices<'data>,
}

impl Iterator for IndexedChars<'_> {
    type Item = (usize, char);

    fn next(&mut self) -> Option<(usize, char)> {
        let (at, c) = self.chars.next()?;
        Some((self.base + at, c))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chars.size_hint()
    }
}

/// The string sources: each `$name` a struct of the `text` it reads (and the `pattern` it
/// looks for, of type `$p`, where it has one), documented by `$attr`, whose iterator has
/// `text.len() + $extra` positions (each one item where `$exact`) and yields `$item`s, the
/// items of a range `$range` being the `$seq` that `$make` makes of the source `$s`.
macro_rules! sources {
    ($(
        $(#[$attr:meta])*
        $name:ident<'data $(, $p:ident)?> -> $item:ty,
        positions + $extra:literal, exact $exact:literal,
        $seq:ty = |$s:ident, $range:ident| $make:expr;
    )*) => {$(
        $(#[$attr])*
        #[derive(Debug, Clone)]
        #[must_use = "iterators do nothing until consumed"]
        pub struct $name<'data $(, $p)?> {
            text: &'data str,
            $(pattern: $p,)?
        }

        impl<'data $(, $p: Pattern)?> Drive for $name<'data $(, $p)?> {
            type Item = $item;
            type Seq<'a>
                = $seq
            where
                Self: 'a;

            fn position_count(&self) -> usize {
                self.text.len() + $extra
            }

            fn exact(&self) -> bool {
                $exact
            }

            unsafe fn seq(&self, $range: Range<usize>) -> Self::Seq<'_> {
                let $s = self;
                $make
            }
        }
    )*};
}

sources! {
    /// A parallel iterator over a string's characters: `text.par_chars()`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let vowels = "parallel façade".par_chars().filter(|c| "aeiouç".contains(*c)).count();
    /// assert_eq!(vowels, 7);
    /// ```
    Chars<'data> -> char, positions + 0, exact false,
        std::str::Chars<'data> = |s, range| chars_in(s.text, range).1.chars();

    /// A parallel iterator over a string's characters with their byte indices:
    /// `text.par_char_indices()`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let wide: Vec<usize> = "añb€"
    ///     .par_char_indices()
    ///     .filter_map(|(i, c)| (!c.is_ascii()).then_some(i))
    ///     .collect();
    /// assert_eq!(wide, [1, 4]);
    /// ```
    CharIndices<'data> -> (usize, char), positions + 0, exact false,
        IndexedChars<'data> = |s, range| {
            let (base, chars) = chars_in(s.text, range);
            IndexedChars { base, chars: chars.char_indices() }
        };

    /// A parallel iterator over a string's bytes: `text.par_bytes()`, indexed.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let text = "añb";
    /// assert_eq!(text.par_bytes().filter(u8::is_ascii).count(), 2);
    /// let upper: Vec<u8> = text.par_bytes().map(|b| b.to_ascii_uppercase()).collect();
    /// assert_eq!(upper, "AñB".as_bytes());
    /// let same = text.par_bytes().zip(text.as_bytes().par_iter());
    /// assert!(same.all(|(a, &b)| a == b));
    /// ```
    Bytes<'data> -> u8, positions + 0, exact true,
        std::iter::Copied<std::slice::Iter<'data, u8>> = |s, range| {
            s.text.as_bytes()[range].iter().copied()
        };

    /// A parallel iterator over a string's UTF-16 code units: `text.par_encode_utf16()`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let text = "Zażółć gęślą jaźń 😀";
    /// assert_eq!(text.par_encode_utf16().count(), text.encode_utf16().count());
    /// assert!(text.par_encode_utf16().count() < text.len());
    /// ```
    EncodeUtf16<'data> -> u16, positions + 0, exact false,
        std::str::EncodeUtf16<'data> = |s, range| chars_in(s.text, range).1.encode_utf16();

    /// A parallel iterator over the substrings of a string between a pattern's matches:
    /// `text.par_split(separator)`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let fields: Vec<&str> = "name;age;;city".par_split(';').collect();
    /// assert_eq!(fields, ["name", "age", "", "city"]);
    /// ```
    // One more position than bytes: the last piece may start at the end (after a final
    // separator, or the empty text's one piece), and `split_terminator` leaves it out.
    Split<'data, P> -> &'data str, positions + 1, exact false,
        std::iter::Chain<
            <P as sealed::Sealed>::Terminated<'data, 'a>,
            std::option::IntoIter<&'data str>,
        > = |s, range| {
            let end = s.text.len();
            let last = range.contains(&end) && starts_piece(s.text, &s.pattern, end);
            let pieces = s.pattern.split_terminator(span(s.text, &s.pattern, range));
            pieces.chain(last.then_some(&s.text[end..]))
        };

    /// A parallel iterator over the substrings of a string each ended by a pattern's
    /// match, the match kept: `text.par_split_inclusive(separator)`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let rows: Vec<&str> = "a;b;;c".par_split_inclusive(';').collect();
    /// assert_eq!(rows, ["a;", "b;", ";", "c"]);
    /// ```
    SplitInclusive<'data, P> -> &'data str, positions + 0, exact false,
        <P as sealed::Sealed>::Inclusive<'data, 'a> = |s, range| {
            s.pattern.split_inclusive(span(s.text, &s.pattern, range))
        };

    /// A parallel iterator over the substrings of a string ended by a pattern's matches:
    /// `text.par_split_terminator(terminator)`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let statements: Vec<&str> = "x = 1; y = 2;".par_split_terminator(';').collect();
    /// assert_eq!(statements, ["x = 1", " y = 2"]);
    /// ```
    // A piece that starts at the end is the empty one after a final terminator.
    SplitTerminator<'data, P> -> &'data str, positions + 0, exact false,
        <P as sealed::Sealed>::Terminated<'data, 'a> = |s, range| {
            s.pattern.split_terminator(span(s.text, &s.pattern, range))
        };

    /// A parallel iterator over a string's lines: `text.par_lines()`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let lines: Vec<&str> = "one\r\ntwo\n\nthree\n".par_lines().collect();
    /// assert_eq!(lines, ["one", "two", "", "three"]);
    /// ```
    // A line starts before the end (a final `'\n'` ends the last one).
    Lines<'data> -> &'data str, positions + 0, exact false,
        std::str::Lines<'data> = |s, range| span(s.text, &'\n', range).lines();

    /// A parallel iterator over the substrings of a string separated by whitespace:
    /// `text.par_split_whitespace()`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let longest = "which is the longest word?".par_split_whitespace().max_by_key(|w| w.len());
    /// assert_eq!(longest, Some("longest"));
    /// ```
    // A word is a piece of the split at each whitespace `char`, not empty.
    SplitWhitespace<'data> -> &'data str, positions + 0, exact false,
        std::str::SplitWhitespace<'data> = |s, range| {
            span(s.text, &char::is_whitespace, range).split_whitespace()
        };

    /// A parallel iterator over the substrings of a string separated by ASCII whitespace:
    /// `text.par_split_ascii_whitespace()`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let words = "which is the\u{3000}longest word?".par_split_ascii_whitespace();
    /// assert_eq!(words.max_by_key(|w| w.len()), Some("the\u{3000}longest"));
    /// ```
    SplitAsciiWhitespace<'data> -> &'data str, positions + 0, exact false,
        std::str::SplitAsciiWhitespace<'data> = |s, range| {
            span(s.text, &|c: char| c.is_ascii_whitespace(), range).split_ascii_whitespace()
        };

    /// A parallel iterator over a pattern's matches in a string: `text.par_matches(pattern)`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let vowels: String = "parallel façade".par_matches(['a', 'e']).collect();
    /// assert_eq!(vowels, "aaeaae");
    /// ```
    // A match starts at its `char`.
    Matches<'data, P> -> &'data str, positions + 0, exact false,
        std::iter::Map<Matched<'data, 'a, P>, MatchOnly<'data>> = |s, range| {
            let only: MatchOnly<'data> = |(_, matched)| matched;
            Matched::new(s.text, &s.pattern, range).map(only)
        };

    /// A parallel iterator over a pattern's matches in a string with their byte indices:
    /// `text.par_match_indices(pattern)`.
    ///
    /// ```
    /// use rayforce_pool::prelude::*;
    /// let euros: Vec<usize> = "1€, 2€".par_match_indices('€').map(|(i, _)| i).collect();
    /// assert_eq!(euros, [1, 7]);
    /// ```
    MatchIndices<'data, P> -> (usize, &'data str), positions + 0, exact false,
        Matched<'data, 'a, P> = |s, range| Matched::new(s.text, &s.pattern, range);
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    /// The items of `iter`'s ranges `0..i`, `i..j` and `j..position_count()`, one after another.
    fn in_three<I: Drive>(iter: &I, i: usize, j: usize) -> Vec<I::Item> {
        let n = iter.position_count();
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
        let n = iter.position_count();
        for i in 0..=n {
            for j in i..=n {
                assert_eq!(in_three(iter, i, j), expected, "cut at {i} and {j}");
            }
        }
    }

    /// Whether each range of `iter`'s positions (empty, or starting or ending inside a
    /// `char`, a piece or a `"\r\n"`) yields the pieces of `expected`, slices of `text`,
    /// that start in it, each where it is in `text`: so every cut yields `expected`.
    fn every_range_yields_its_pieces<'t, I>(text: &'t str, iter: &I, expected: &[&'t str])
    where
        I: Drive<Item = &'t str>,
    {
        let placed = |piece: &'t str| (piece.as_ptr() as usize - text.as_ptr() as usize, piece);
        let expected: Vec<(usize, &str)> = expected.iter().map(|&piece| placed(piece)).collect();
        let n = iter.position_count();
        for a in 0..=n {
            for b in a..=n {
                let own: Vec<(usize, &str)> = (expected.iter().copied())
                    .filter(|(at, _)| (a..b).contains(at))
                    .collect();
                // SAFETY: one range within the positions.
                let got: Vec<(usize, &str)> = unsafe { iter.seq(a..b) }.map(placed).collect();
                assert_eq!(got, own, "range {a}..{b} of {text:?}");
            }
        }
    }

    /// Each search by the pattern `$pattern` in `$text`, cut every way, against `std`'s.
    macro_rules! every_cut_searches {
        ($text:expr, $pattern:expr) => {{
            let (text, pattern): (&str, _) = ($text, $pattern);
            let split: Vec<&str> = text.split(pattern).collect();
            every_range_yields_its_pieces(text, &text.par_split(pattern), &split);
            let inclusive: Vec<&str> = text.split_inclusive(pattern).collect();
            every_range_yields_its_pieces(text, &text.par_split_inclusive(pattern), &inclusive);
            let terminated: Vec<&str> = text.split_terminator(pattern).collect();
            every_range_yields_its_pieces(text, &text.par_split_terminator(pattern), &terminated);
            let matches: Vec<&str> = text.matches(pattern).collect();
            every_range_yields_its_pieces(text, &text.par_matches(pattern), &matches);
            let indexed: Vec<(usize, &str)> = text.match_indices(pattern).collect();
            every_cut_yields(&text.par_match_indices(pattern), &indexed);
        }};
    }

    #[test]
    fn every_cut_of_every_short_text_yields_std_pieces() {
        // Whitespace of 1, 2 and 3 bytes (U+0085, U+2009), and U+000B, which
        // `split_ascii_whitespace` does not split at.
        let tokens = [
            "a", "é", "€", "😀", ",", "\n", "\r", " ", "\u{85}", "\u{2009}", "\u{b}", "\u{c}",
        ];
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
            let indexed: Vec<(usize, char)> = text.char_indices().collect();
            every_cut_yields(&text.par_char_indices(), &indexed);
            every_cut_yields(&text.par_bytes(), text.as_bytes());
            let units: Vec<u16> = text.encode_utf16().collect();
            every_cut_yields(&text.par_encode_utf16(), &units);
            let lines: Vec<&str> = text.lines().collect();
            every_range_yields_its_pieces(text, &text.par_lines(), &lines);
            let words: Vec<&str> = text.split_whitespace().collect();
            every_range_yields_its_pieces(text, &text.par_split_whitespace(), &words);
            let ascii_words: Vec<&str> = text.split_ascii_whitespace().collect();
            every_range_yields_its_pieces(text, &text.par_split_ascii_whitespace(), &ascii_words);
            every_cut_searches!(text, ',');
            every_cut_searches!(text, '€');
            every_cut_searches!(text, &['😀', 'é', '\r']);
            every_cut_searches!(text, |c: char| u32::from(c) % 2 == 1);
        }
    }
}
