//! The string sources give what `std`'s `split`, `split_whitespace`, `lines` and `chars`
//! give, in order, as rayon's `ParallelString` does: on edge cases (empty text, leading,
//! trailing and adjacent separators, `"\r"` with and without `"\n"`), on every short text
//! over a mixed alphabet, and on generated texts of about 1e6 bytes of ASCII and multi-byte
//! characters, with `char`, slice, array and closure separators of 1 to 4 bytes; on the
//! default pool and inside `install`; collected, counted, and under `map` and `filter`.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::Pool;

const WIDTH: usize = 3;

/// `text.par_split(sep)` against `text.split(sep)`: collected, counted, mapped, filtered.
macro_rules! check_split {
    ($text:expr, $sep:expr) => {{
        let text: &str = $text;
        let serial: Vec<&str> = text.split($sep).collect();
        let what = format!("split({}) of {:?}", stringify!($sep), Short(text));
        assert_eq!(text.par_split($sep).collect::<Vec<_>>(), serial, "{what}");
        assert_eq!(text.par_split($sep).count(), serial.len(), "count, {what}");
        let lengths: Vec<usize> = serial.iter().map(|p| p.len()).collect();
        let par_lengths: Vec<usize> = text.par_split($sep).map(str::len).collect();
        assert_eq!(par_lengths, lengths, "map, {what}");
        let filled: Vec<&str> = serial.iter().copied().filter(|p| !p.is_empty()).collect();
        let par_filled: Vec<&str> = text.par_split($sep).filter(|p| !p.is_empty()).collect();
        assert_eq!(par_filled, filled, "filter, {what}");
    }};
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
    let what = Short(text);

    let chars: Vec<char> = text.chars().collect();
    assert_eq!(
        text.par_chars().collect::<Vec<_>>(),
        chars,
        "chars of {what:?}"
    );
    assert_eq!(text.par_chars().count(), chars.len(), "{what:?}");
    let upper: Vec<u32> = chars.iter().map(|&c| u32::from(c)).collect();
    assert_eq!(text.par_chars().map(u32::from).collect::<Vec<_>>(), upper);
    let wide = chars.iter().filter(|c| c.len_utf8() > 1).count();
    assert_eq!(text.par_chars().filter(|c| c.len_utf8() > 1).count(), wide);

    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        text.par_lines().collect::<Vec<_>>(),
        lines,
        "lines of {what:?}"
    );
    assert_eq!(text.par_lines().count(), lines.len(), "{what:?}");
    let line_lengths: Vec<usize> = lines.iter().map(|l| l.len()).collect();
    assert_eq!(
        text.par_lines().map(str::len).collect::<Vec<_>>(),
        line_lengths
    );
    let blank = lines.iter().filter(|l| l.is_empty()).count();
    assert_eq!(text.par_lines().filter(|l| l.is_empty()).count(), blank);

    let words: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(
        text.par_split_whitespace().collect::<Vec<_>>(),
        words,
        "split_whitespace of {what:?}"
    );
    assert_eq!(text.par_split_whitespace().count(), words.len(), "{what:?}");
    let word_chars: Vec<usize> = words.iter().map(|w| w.chars().count()).collect();
    let par_word_chars: Vec<usize> = text
        .par_split_whitespace()
        .map(|w| w.chars().count())
        .collect();
    assert_eq!(par_word_chars, word_chars);
    let ascii: Vec<&str> = words.iter().copied().filter(|w| w.is_ascii()).collect();
    let par_ascii: Vec<&str> = text
        .par_split_whitespace()
        .filter(|w| w.is_ascii())
        .collect();
    assert_eq!(par_ascii, ascii);

    // Separators of 1, 2, 3 and 4 bytes, alone and in sets, and predicates.
    check_split!(text, ',');
    check_split!(text, 'é');
    check_split!(text, '€');
    check_split!(text, '😀');
    check_split!(text, '\n');
    check_split!(text, &[',', '€'][..]);
    check_split!(text, ['\n', 'é', '😀']);
    check_split!(text, &[' ', '\r']);
    check_split!(text, |c: char| c.is_ascii_digit() || c == '€');
    check_split!(text, char::is_whitespace);
}

/// `check` on the default pool and inside a pool of `WIDTH` workers.
fn check_everywhere(texts: &[String]) {
    let pool = Pool::builder().workers(WIDTH).build().unwrap();
    for text in texts {
        check(text);
        pool.install(|| check(text));
    }
}

/// Pieces the texts are made of: ASCII, 2-, 3- and 4-byte characters, each separator, and
/// whitespace that is not ASCII (U+2009, U+3000).
const TOKENS: [&str; 14] = [
    "a", "xyz", "7", "é", "€", "😀", ",", "\n", "\r", "\r\n", " ", "\t", "\u{2009}", "\u{3000}",
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
        "1,2€3😀4é5",
        "ééé€€€😀😀😀",
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
    assert_eq!(texts.len(), 1 + 14 + 14 * 14 + 14 * 14 * 14);
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
    assert_eq!(owned.as_parallel_string(), "a,b\nc d");
}
