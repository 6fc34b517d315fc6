//! The string sources give what `std`'s `chars`, `char_indices`, `bytes`, `encode_utf16`,
//! `split`, `split_inclusive`, `split_terminator`, `lines`, `split_whitespace`,
//! `split_ascii_whitespace`, `matches` and `match_indices` give, in order, as rayon's
//! `ParallelString` does: on edge cases (empty text, leading, trailing and adjacent
//! separators, `"\r"` with and without `"\n"`), on every short text over a mixed alphabet,
//! and on generated texts of about 1e6 bytes of ASCII and multi-byte characters, with
//! `char`, slice, array and closure patterns of 1 to 4 bytes; on the default pool and inside
//! `install`; collected, counted, and under `map` and `filter`.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;
use std::fmt::Debug;

const WIDTH: usize = 3;

/// A number made of an item, for `map` and `filter` to work on.
trait Key {
    fn key(&self) -> usize;
}

impl Key for char {
    fn key(&self) -> usize {
        u32::from(*self) as usize
    }
}

impl Key for u8 {
    fn key(&self) -> usize {
        usize::from(*self)
    }
}

impl Key for u16 {
    fn key(&self) -> usize {
        usize::from(*self)
    }
}

impl Key for &str {
    fn key(&self) -> usize {
        self.len() + self.chars().next().map_or(0, |c| c.key())
    }
}

impl<T: Key> Key for (usize, T) {
    fn key(&self) -> usize {
        self.0 ^ self.1.key()
    }
}

/// The items of `par()` against `serial`'s: collected, counted, mapped and filtered.
fn agrees<P, S>(what: &str, par: impl Fn() -> P, serial: S)
where
    P: ParallelIterator,
    S: Iterator<Item = P::Item>,
    P::Item: Key + Copy + PartialEq + Debug,
{
    let serial: Vec<P::Item> = serial.collect();
    assert_eq!(par().collect::<Vec<_>>(), serial, "{what}");
    assert_eq!(par().count(), serial.len(), "count, {what}");
    let keys: Vec<usize> = serial.iter().map(Key::key).collect();
    assert_eq!(
        par().map(|x| x.key()).collect::<Vec<_>>(),
        keys,
        "map, {what}"
    );
    let kept: Vec<P::Item> = serial
        .iter()
        .copied()
        .filter(|x| x.key() % 3 == 0)
        .collect();
    let par_kept: Vec<P::Item> = par().filter(|x| x.key() % 3 == 0).collect();
    assert_eq!(par_kept, kept, "filter, {what}");
}

/// `split` by the pattern `$pattern` in `$text` against `std`'s, and where `$every`, the
/// other searches too; each search is a `std` method and its `par_` twin.
macro_rules! check_searches {
    ($every:expr, $text:expr, $pattern:expr) => {{
        let (text, pattern): (&str, _) = ($text, $pattern);
        let what = |method| format!("{method}({}) of {:?}", stringify!($pattern), Short(text));
        check_searches!(text, pattern, what; split par_split);
        if $every {
            check_searches!(
                text, pattern, what;
                split_inclusive par_split_inclusive,
                split_terminator par_split_terminator,
                matches par_matches,
                match_indices par_match_indices
            );
        }
    }};
    ($text:ident, $pattern:ident, $what:ident; $($method:ident $par:ident),*) => {$(
        agrees(&$what(stringify!($method)), || $text.$par($pattern), $text.$method($pattern));
    )*};
}

/// A text in an assertion's message: its length and ends, not a megabyte of it.
struct Short<'a>(&'a str);

impl std::fmt::Debug for Short<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.len() <= 64 {
            return write!(f, "{:?}", self.0);
        }
        let head: String = self.0.chars().take(16).collect();
        let tail: String = self
            .0
            .chars()
            .rev()
            .take(16)
            .collect::<Vec<_>>()
            .iter()
            .rev()
            .collect();
        write!(f, "{head:?}..{tail:?} ({} bytes)", self.0.len())
    }
}

/// Every string source against `std` on `text`.
fn check(text: &str) {
    let what = |method| format!("{method} of {:?}", Short(text));
    agrees(&what("chars"), || text.par_chars(), text.chars());
    agrees(
        &what("char_indices"),
        || text.par_char_indices(),
        text.char_indices(),
    );
    agrees(&what("bytes"), || text.par_bytes(), text.bytes());
    agrees(
        &what("encode_utf16"),
        || text.par_encode_utf16(),
        text.encode_utf16(),
    );
    agrees(&what("lines"), || text.par_lines(), text.lines());
    agrees(
        &what("split_whitespace"),
        || text.par_split_whitespace(),
        text.split_whitespace(),
    );
    agrees(
        &what("split_ascii_whitespace"),
        || text.par_split_ascii_whitespace(),
        text.split_ascii_whitespace(),
    );

    // Patterns of 1, 2, 3 and 4 bytes, alone and in sets, and predicates. In a long text
    // (a megabyte: each search of each pattern takes a while) `split` is searched by each,
    // and the other searches by a `char` of 1, 2 and 4 bytes.
    let short = text.len() < 10_000;
    check_searches!(true, text, ',');
    check_searches!(true, text, 'é');
    check_searches!(short, text, '€');
    check_searches!(true, text, '😀');
    check_searches!(short, text, '\n');
    check_searches!(short, text, &[',', '€'][..]);
    check_searches!(short, text, ['\n', 'é', '😀']);
    check_searches!(short, text, &[' ', '\r']);
    check_searches!(short, text, |c: char| c.is_ascii_digit() || c == '€');
    check_searches!(short, text, char::is_whitespace);
}

/// `check` on the default pool and inside a pool of `WIDTH` workers, each text on one of
/// them, alternately.
fn check_everywhere(texts: &[String]) {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for (i, text) in texts.iter().enumerate() {
        if i % 2 == 0 {
            check(text);
        } else {
            pool.install(|| check(text));
        }
    }
}

/// Pieces the texts are made of: ASCII, 2-, 3- and 4-byte characters, each separator,
/// whitespace that is not ASCII (U+2009, U+3000), and ASCII whitespace that `std`'s ASCII
/// split does (U+000C) and does not (U+000B) split at.
const TOKENS: [&str; 16] = [
    "a", "xyz", "7", "é", "€", "😀", ",", "\n", "\r", "\r\n", " ", "\t", "\u{2009}", "\u{3000}",
    "\u{b}", "\u{c}",
];

#[test]
fn edge_cases_match_std() {
    let texts = [
        "",
        ",",
        ",,",
        "a",
        "a,",
        ",a",
        "a,,b",
        ",a,",
        "é",
        "éé",
        "é,é",
        "€",
        "a€b€",
        "😀",
        "😀😀",
        "a😀",
        "😀a",
        "\n",
        "\n\n",
        "a\n",
        "\na",
        "a\nb",
        "\r",
        "\r\n",
        "a\r",
        "a\r\n",
        "a\r\nb\r",
        "\r\r\n",
        "\n\r",
        "a\n\r\nb",
        " ",
        "   ",
        " a",
        "a ",
        " a  b ",
        "\u{2009}",
        "a\u{2009}b",
        "\u{3000}é\u{3000}",
        "\t\n\r ",
        "\u{b}",
        "a\u{c}b\u{b}c",
        " \u{b} ",
        "1,2€3😀4é5",
        "ééé€€€😀😀😀",
        // Lines ended by `"\r\n"`, by `'\n'` and by nothing, around multi-byte characters.
        "é\r\n€\r\n",
        "é\r\n€\r\n😀",
        "a\n\n",
        "\r\n\r\n",
        // Whitespace of 2 bytes (U+0085, U+00A0), and U+000B and U+000C at either end.
        "\u{85}a\u{a0}b\u{85}",
        "\u{b}a\u{b}",
        "\u{c}a\u{c}",
        "a\u{b}b\u{c}c\n",
    ];
    check_everywhere(&texts.map(String::from));
}

#[test]
fn every_short_text_over_a_mixed_alphabet_matches_std() {
    let mut texts = vec![String::new()];
    let mut last = texts.clone();
    for _ in 0..3 {
        last = last
            .iter()
            .flat_map(|text| TOKENS.iter().map(move |token| format!("{text}{token}")))
            .collect();
        texts.extend(last.iter().cloned());
    }
    assert_eq!(texts.len(), 1 + 16 + 16 * 16 + 16 * 16 * 16);
    check_everywhere(&texts);
}

/// A text of about `bytes` bytes of `tokens`, picked at random by `seed`.
fn generated(bytes: usize, tokens: &[&str], seed: u64) -> String {
    let mut state = seed | 1;
    let mut text = String::with_capacity(bytes + 8);
    while text.len() < bytes {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let pick = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
        text.push_str(tokens[pick as usize % tokens.len()]);
    }
    text
}

#[test]
fn generated_megabyte_texts_match_std() {
    const BYTES: usize = 1_000_000;
    let texts = [
        // Every token equally often: short pieces, many separators.
        generated(BYTES, &TOKENS, 1),
        // Long pieces: separators rare among words of multi-byte text.
        generated(
            BYTES,
            &[
                "word", "wörd", "€uro", "😀😀", "ab", "cd", "ef", "gh", "ij", "kl", "mn", "op",
                "qr", "st", "uv", "wx", "yz", "ÀÉÎ", "ß", "ünd", ",", " ", "\n",
            ],
            2,
        ),
        // Runs of separators and whitespace.
        generated(
            BYTES,
            &[",", ",,", "\n", "\r\n", "  ", "\u{3000}", "é", "a"],
            3,
        ),
        // Whole lines of text.
        generated(
            BYTES,
            &[
                "the quick brown fox\n",
                "jumps over\r\n",
                "\n",
                "😀 é € 7\n",
            ],
            4,
        ),
    ];
    check_everywhere(&texts);
}

/// A text with no separator, whitespace or newline is one piece of each.
fn one_piece(text: &str) {
    assert_eq!(text.par_split(',').collect::<Vec<_>>(), [text]);
    assert_eq!(text.par_lines().collect::<Vec<_>>(), [text]);
    assert_eq!(text.par_split_whitespace().collect::<Vec<_>>(), [text]);
    assert_eq!(
        text.par_split_ascii_whitespace().collect::<Vec<_>>(),
        [text]
    );
    assert_eq!(text.par_split_inclusive(',').collect::<Vec<_>>(), [text]);
    assert_eq!(text.par_split_terminator(',').collect::<Vec<_>>(), [text]);
    assert_eq!(text.par_matches(',').count(), 0);
    assert_eq!(text.par_match_indices(['a', ',']).count(), 0);
    assert_eq!(text.par_chars().count(), text.chars().count());
}

#[test]
fn a_text_with_no_separator_is_one_piece() {
    // About 1e6 bytes of 2-byte characters: every range but the first finds no piece
    // start, looking at its own bytes only.
    let text = "é".repeat(500_000);
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    one_piece(&text);
    pool.install(|| one_piece(&text));
}

#[test]
fn consumers_over_text_iterators_keep_std_order() {
    let text = generated(200_000, &TOKENS, 5);
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    let check_consumers = || {
        let longest = text.split(',').max_by_key(|p| p.len());
        assert_eq!(text.par_split(',').max_by_key(|p| p.len()), longest);
        let first_long = text.split_whitespace().find(|w| w.len() > 12);
        assert_eq!(
            text.par_split_whitespace().find_first(|w| w.len() > 12),
            first_long
        );
        let total: usize = text.lines().map(|l| l.chars().count()).sum();
        assert_eq!(
            text.par_lines().map(|l| l.chars().count()).sum::<usize>(),
            total
        );
        let joined = text.split('€').fold(String::new(), |a, b| a + b);
        let par_joined = text
            .par_split('€')
            .map(String::from)
            .reduce(String::new, |a, b| a + &b);
        assert_eq!(par_joined, joined);
        assert_eq!(text.par_chars().min(), text.chars().min());
        assert_eq!(text.par_chars().max(), text.chars().max());
        let digits: Vec<char> = text.chars().filter(char::is_ascii_digit).collect();
        let par_digits: Vec<char> = text.par_chars().filter(char::is_ascii_digit).collect();
        assert_eq!(par_digits, digits);

        let first_euro = text.match_indices('€').find(|(i, _)| *i > 1000);
        assert_eq!(
            text.par_match_indices('€').find_first(|(i, _)| *i > 1000),
            first_euro
        );
        let last_wide = text.char_indices().rfind(|(_, c)| c.len_utf8() == 4);
        let par_last_wide = text
            .par_char_indices()
            .filter(|(_, c)| c.len_utf8() == 4)
            .max_by_key(|(i, _)| *i);
        assert_eq!(par_last_wide, last_wide);
        let units: u64 = text.encode_utf16().map(u64::from).sum();
        assert_eq!(text.par_encode_utf16().map(u64::from).sum::<u64>(), units);
        let rows = text
            .split_inclusive('\n')
            .filter(|r| r.ends_with("\r\n"))
            .count();
        let par_rows = text
            .par_split_inclusive('\n')
            .filter(|r| r.ends_with("\r\n"));
        assert_eq!(par_rows.count(), rows);
        let fields = text.split_terminator([',', '\n']).map(str::len).max();
        let par_fields = text.par_split_terminator([',', '\n']).map(str::len).max();
        assert_eq!(par_fields, fields);

        // The bytes are indexed: a byte's index is its position.
        assert_eq!(text.par_bytes().len(), text.len());
        let comma = text.bytes().position(|b| b == b',');
        assert_eq!(text.par_bytes().position_first(|b| b == b','), comma);
        let odd: Vec<usize> = (text.bytes().enumerate())
            .filter(|&(_, b)| b % 2 == 1)
            .map(|(i, _)| i)
            .collect();
        let par_odd: Vec<usize> = (text.par_bytes().enumerate())
            .filter(|&(_, b)| b % 2 == 1)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(par_odd, odd);
        let same = text.par_bytes().zip(text.as_bytes().par_iter());
        assert!(same.all(|(a, &b)| a == b));
    };
    check_consumers();
    pool.install(check_consumers);
}

#[test]
fn a_string_reaches_the_trait_through_its_str() {
    let owned = String::from("a,b\nc d");
    assert_eq!(owned.par_split(',').count(), 2);
    assert_eq!(owned.par_lines().count(), 2);
    assert_eq!(owned.par_split_whitespace().count(), 3);
    assert_eq!(owned.par_chars().count(), 7);
    assert_eq!(owned.par_char_indices().count(), 7);
    assert_eq!(owned.par_bytes().len(), 7);
    assert_eq!(owned.par_encode_utf16().count(), 7);
    assert_eq!(owned.par_split_inclusive(',').count(), 2);
    assert_eq!(owned.par_split_terminator('d').count(), 1);
    assert_eq!(owned.par_split_ascii_whitespace().count(), 3);
    assert_eq!(owned.par_matches(' ').count(), 1);
    assert_eq!(
        owned.par_match_indices('\n').collect::<Vec<_>>(),
        [(3, "\n")]
    );
    assert_eq!(owned.as_parallel_string(), "a,b\nc d");
}
