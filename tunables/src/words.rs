//! `word_enum!`: an enum whose values an operator writes as words (`physical`, `spread`),
//! with its word list, parsing, `Display`, `FromStr` and an error that lists the words.

/// Declares a `Copy` enum from `Variant = "word"` lines (the first listed after
/// `#[default]` is the default), and an error type for unknown words:
///
/// - `ALL` (every variant, in word order) and `WORDS` (their words; `variant as usize`
///   indexes both), `as_str`, `from_bytes` (exact, lower case, allocation-free) and
///   `from_index` (the tunables store a word as its index);
/// - `Display` (the word), `FromStr` (failing with the error type, whose message names the
///   bad word and lists the allowed ones), and `serde::Serialize` as the word under the
///   crate's `serde` feature.
macro_rules! word_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident, unknown: $error:ident ($what:literal) {
            $( $(#[$variant_meta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        pub enum $name {
            $(
                $(#[$variant_meta])*
                #[cfg_attr(feature = "serde", serde(rename = $word))]
                $variant,
            )+
        }

        impl $name {
            /// Every value, in word order.
            pub const ALL: [$name; $name::WORDS.len()] = [$($name::$variant),+];

            /// The words, in order: `WORDS[value as usize]` is `value`'s.
            pub const WORDS: [&'static str; [$($word),+].len()] = [$($word),+];

            /// This value's word.
            pub const fn as_str(self) -> &'static str {
                $name::WORDS[self as usize]
            }

            /// The value whose word is exactly `word` (lower case); allocation-free, for
            /// the tunables parser.
            pub fn from_bytes(word: &[u8]) -> Option<$name> {
                $name::ALL
                    .into_iter()
                    .find(|value| value.as_str().as_bytes() == word)
            }

            /// The value at `index` in word order (how a tunable stores a word).
            pub const fn from_index(index: u64) -> Option<$name> {
                if index < $name::ALL.len() as u64 {
                    Some($name::ALL[index as usize])
                } else {
                    None
                }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #[doc = concat!("An unknown ", $what, " word (the one given); its message lists the allowed words.")]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $error(pub String);

        impl core::fmt::Display for $error {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(
                    f,
                    "unknown {} `{}`; expected one of {}",
                    $what,
                    self.0.escape_debug(),
                    $name::WORDS.join(", ")
                )
            }
        }

        impl std::error::Error for $error {}

        impl core::str::FromStr for $name {
            type Err = $error;

            fn from_str(s: &str) -> Result<$name, $error> {
                $name::from_bytes(s.as_bytes()).ok_or_else(|| $error(s.to_owned()))
            }
        }
    };
}

pub(crate) use word_enum;
