//! Diagnostics: what was wrong with a tunable entry and what was done about it, kept in
//! fixed-capacity storage so recording one never allocates.

use crate::registry::{Id, Kind};
use crate::setting::{Setting, ValueSource};
use core::fmt;

/// How many diagnostics are kept; later ones are only counted ([`Diagnostics::dropped`]).
pub const MAX_DIAGNOSTICS: usize = 16;

/// How many bytes of an entry a diagnostic keeps; longer entries are cut and marked.
pub const EXCERPT_BYTES: usize = 64;

/// Where the bad entry came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `RAYFORCE_TUNABLES`, at this byte offset.
    TunablesString {
        /// Byte offset of the problem in the string.
        offset: usize,
    },
    /// A per-knob environment variable (`RAYFORCE_CORES`, ...).
    Variable,
    /// A value the program chose in code.
    Program,
}

/// What was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// An entry without `=`.
    MissingEquals,
    /// `=4`: no name before `=`.
    EmptyName,
    /// `name=`: no value after `=`.
    EmptyValue(Id),
    /// A name outside `rayforce.` (e.g. a `glibc.` tunable).
    ForeignNamespace,
    /// A `rayforce.` name that is not in the table.
    UnknownName {
        /// The closest name, if one is close.
        suggestion: Option<Id>,
    },
    /// Not a number (sign, letters, stray `=`).
    NotANumber(Id),
    /// A number beyond `u64`.
    TooLarge(Id),
    /// A number below the tunable's minimum.
    BelowMinimum(Id, u64),
    /// A number above the tunable's maximum.
    AboveMaximum(Id, u64),
    /// Not 0 or 1.
    NotABool(Id),
    /// Not one of the tunable's words.
    UnknownWord {
        /// Which tunable.
        id: Id,
        /// The word meant, when only the case differs.
        suggestion: Option<&'static str>,
    },
    /// Entries joined by `,` or `;` instead of `:`.
    WrongSeparator(u8),
    /// `RAYFORCE_TUNABLES` ignored because the process is setuid or setgid (`AT_SECURE`).
    SecureModeIgnored,
    /// A per-knob variable whose name or value is not UTF-8.
    NotUtf8(Id),
    /// A per-knob variable for a tunable that start-up already fixed (it is read later).
    ReadAfterStartup(Id),
    /// A variable named like a per-knob variable in another case (`RAYFORCE_cores`).
    VariableCase(Id),
    /// A `RAYFORCE_` variable that names no knob but is close to one's variable or name
    /// (`RAYFORCE_CORE`, `RAYFORCE_POOL_WORKERS`): the knob it seems meant for.
    UnknownVariable(Id),
}

impl Problem {
    /// The tunable the bad entry was for, when it named one.
    pub fn tunable(self) -> Option<Id> {
        match self {
            Problem::EmptyValue(id)
            | Problem::NotANumber(id)
            | Problem::TooLarge(id)
            | Problem::BelowMinimum(id, _)
            | Problem::AboveMaximum(id, _)
            | Problem::NotABool(id)
            | Problem::UnknownWord { id, .. }
            | Problem::NotUtf8(id)
            | Problem::ReadAfterStartup(id)
            | Problem::VariableCase(id)
            | Problem::UnknownVariable(id) => Some(id),
            Problem::MissingEquals
            | Problem::EmptyName
            | Problem::ForeignNamespace
            | Problem::UnknownName { .. }
            | Problem::WrongSeparator(_)
            | Problem::SecureModeIgnored => None,
        }
    }
}

/// One diagnostic: where, which entry (an excerpt), what was wrong, and which value of the
/// tunable stayed in force instead.
#[derive(Clone, Copy)]
pub struct Diagnostic {
    /// Where the entry came from.
    pub origin: Origin,
    /// What was wrong.
    pub problem: Problem,
    /// The tunable's setting in force once every source was applied; `None` until a
    /// [`Tunables`](crate::Tunables) resolved it (a bare [`parse`](crate::parse::parse)).
    pub kept: Option<Setting>,
    excerpt: [u8; EXCERPT_BYTES],
    excerpt_len: u8,
    cut: bool,
}

impl Diagnostic {
    /// A diagnostic about `entry` (only its first [`EXCERPT_BYTES`] bytes are kept).
    pub fn new(origin: Origin, problem: Problem, entry: &[u8]) -> Diagnostic {
        Diagnostic::from_parts(origin, problem, &[entry])
    }

    /// A diagnostic about per-knob variable `id` set to `value`: the entry is
    /// `VARIABLE=value`.
    pub fn for_variable(id: Id, value: &[u8], problem: Problem) -> Diagnostic {
        let name = id.tunable().variable.as_bytes();
        Diagnostic::from_parts(Origin::Variable, problem, &[name, b"=", value])
    }

    /// The entry is `parts` joined, cut at [`EXCERPT_BYTES`].
    fn from_parts(origin: Origin, problem: Problem, parts: &[&[u8]]) -> Diagnostic {
        let mut excerpt = [0u8; EXCERPT_BYTES];
        let mut kept = 0;
        let mut total = 0;
        for part in parts {
            let take = part.len().min(EXCERPT_BYTES - kept);
            excerpt[kept..kept + take].copy_from_slice(&part[..take]);
            kept += take;
            total += part.len();
        }
        Diagnostic {
            origin,
            problem,
            kept: None,
            excerpt,
            excerpt_len: kept as u8,
            cut: total > kept,
        }
    }

    /// The byte offset in `RAYFORCE_TUNABLES`, if it came from there.
    pub fn offset(&self) -> Option<usize> {
        match self.origin {
            Origin::TunablesString { offset } => Some(offset),
            Origin::Variable | Origin::Program => None,
        }
    }

    /// The entry, printable: invalid UTF-8 bytes escaped as `\xNN`, controls and invisible
    /// formatting characters as `\u{NNNN}`, a backslash as `\\`; a cut entry ends in `...`.
    pub fn entry(&self) -> impl fmt::Display + '_ {
        Escaped(&self.excerpt[..usize::from(self.excerpt_len)], self.cut)
    }

    /// What was wrong and what was done, as a sentence: implements `Display`.
    pub fn message(&self) -> impl fmt::Display + '_ {
        Message {
            problem: self.problem,
            kept: self.kept,
        }
    }
}

/// `at byte 12: `entry`: message` (or `RAYFORCE_CORES=x: message`).
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.origin {
            Origin::TunablesString { offset } => write!(f, "RAYFORCE_TUNABLES at byte {offset}: ")?,
            Origin::Variable => f.write_str("environment: ")?,
            Origin::Program => f.write_str("set in code: ")?,
        }
        write!(f, "`{}`: {}", self.entry(), self.message())
    }
}

impl fmt::Debug for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Diagnostic({:?}, {:?}, `{}`)",
            self.origin,
            self.problem,
            self.entry()
        )
    }
}

struct Escaped<'a>(&'a [u8], bool);

/// Characters that a terminal would not show as themselves: controls, and the invisible
/// formatting characters that can reorder or hide text (bidirectional overrides and
/// isolates, zero-width joiners, line separators, the byte-order mark).
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// An entry as printable text: an invalid UTF-8 byte as `\xNN`, a hidden character as
/// `\u{NNNN}`, a backslash as `\\`, so that no escape can be mistaken for another or for
/// the text itself.
impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '\\' => f.write_str("\\\\")?,
                    c if is_hidden(c) => write!(f, "\\u{{{:04x}}}", c as u32)?,
                    c => write!(f, "{c}")?,
                }
            }
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        if self.1 {
            f.write_str("...")?;
        }
        Ok(())
    }
}

struct Message {
    problem: Problem,
    kept: Option<Setting>,
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |id: Id| id.tunable().name;
        // What stays in force: the value another source gave, else the default.
        let default = |f: &mut fmt::Formatter<'_>, id: Id| -> fmt::Result {
            let t = id.tunable();
            let Some(kept) = self.kept else {
                return f.write_str("; entry ignored");
            };
            let value = |f: &mut fmt::Formatter<'_>| match kept.value {
                Some(value) => t.kind.format(value, f),
                None => f.write_str("(auto)"),
            };
            f.write_str("; ")?;
            match kept.source {
                ValueSource::Default => {
                    f.write_str("default ")?;
                    value(f)?;
                }
                ValueSource::Program => {
                    value(f)?;
                    f.write_str(" (set in code)")?;
                }
                ValueSource::Variable => {
                    write!(f, "{}=", t.variable)?;
                    value(f)?;
                }
                ValueSource::TunablesString => {
                    value(f)?;
                    f.write_str(" (from RAYFORCE_TUNABLES)")?;
                }
            }
            f.write_str(" kept")
        };
        let expected = |f: &mut fmt::Formatter<'_>, id: Id| -> fmt::Result {
            f.write_str(" (expected ")?;
            if let Kind::Unsigned { .. } = id.tunable().kind {
                f.write_str("decimal or 0x hex in ")?;
            }
            id.tunable().kind.describe(f)?;
            f.write_str(")")
        };
        match self.problem {
            Problem::MissingEquals => f.write_str("expected name=value; entry ignored"),
            Problem::EmptyName => f.write_str("no tunable name before `=`; entry ignored"),
            Problem::EmptyValue(id) => {
                write!(f, "no value for {}", name(id))?;
                expected(f, id)?;
                default(f, id)
            }
            Problem::ForeignNamespace => {
                f.write_str("not a rayforce tunable (names start with `rayforce.`); entry ignored")
            }
            Problem::UnknownName {
                suggestion: Some(id),
            } => {
                write!(
                    f,
                    "unknown tunable; did you mean `{}`? entry ignored",
                    name(id)
                )
            }
            Problem::UnknownName { suggestion: None } => {
                f.write_str("unknown tunable (`rayforce-rt tunables` lists them); entry ignored")
            }
            Problem::NotANumber(id) => {
                write!(f, "not a number for {}", name(id))?;
                expected(f, id)?;
                default(f, id)
            }
            Problem::TooLarge(id) => {
                write!(f, "number too large for {}", name(id))?;
                expected(f, id)?;
                default(f, id)
            }
            Problem::BelowMinimum(id, value) => {
                write!(f, "{value} is below the minimum of {}", name(id))?;
                expected(f, id)?;
                default(f, id)
            }
            Problem::AboveMaximum(id, value) => {
                write!(f, "{value} is above the maximum of {}", name(id))?;
                expected(f, id)?;
                default(f, id)
            }
            Problem::NotABool(id) => {
                write!(f, "not 0 or 1 for {}", name(id))?;
                default(f, id)
            }
            Problem::UnknownWord { id, suggestion } => {
                write!(f, "not a value of {}", name(id))?;
                expected(f, id)?;
                if let Some(word) = suggestion {
                    write!(f, "; values are lower case: did you mean `{word}`?")?;
                }
                default(f, id)
            }
            Problem::WrongSeparator(sep) => write!(
                f,
                "entries are separated by ':' not '{}'; this entry and those joined to it ignored",
                char::from(sep)
            ),
            Problem::SecureModeIgnored => f.write_str(
                "ignored: the process is setuid or setgid (AT_SECURE); all defaults kept",
            ),
            Problem::NotUtf8(id) => {
                write!(f, "not UTF-8; {} ignored", id.tunable().variable)?;
                default(f, id)
            }
            Problem::ReadAfterStartup(id) => {
                write!(
                    f,
                    "{} is fixed by the first allocation, before per-knob variables are \
                     read; set it in RAYFORCE_TUNABLES instead; ignored",
                    name(id)
                )?;
                default(f, id)
            }
            Problem::VariableCase(id) => {
                write!(
                    f,
                    "variable names are exact (upper case): did you mean {}? ignored",
                    id.tunable().variable
                )?;
                default(f, id)
            }
            Problem::UnknownVariable(id) => {
                write!(
                    f,
                    "no knob reads this variable: did you mean {} ({})? ignored",
                    id.tunable().variable,
                    name(id)
                )?;
                default(f, id)
            }
        }
    }
}

/// Up to [`MAX_DIAGNOSTICS`] diagnostics in order, and a count of those that did not fit.
#[derive(Clone, Copy)]
pub struct Diagnostics {
    items: [Diagnostic; MAX_DIAGNOSTICS],
    len: usize,
    dropped: usize,
}

impl Default for Diagnostics {
    fn default() -> Self {
        Self::new()
    }
}

impl Diagnostics {
    /// No diagnostics.
    pub const fn new() -> Diagnostics {
        const BLANK: Diagnostic = Diagnostic {
            origin: Origin::Program,
            problem: Problem::MissingEquals,
            kept: None,
            excerpt: [0; EXCERPT_BYTES],
            excerpt_len: 0,
            cut: false,
        };
        Diagnostics {
            items: [BLANK; MAX_DIAGNOSTICS],
            len: 0,
            dropped: 0,
        }
    }

    /// Records `diagnostic`, or counts it as dropped when full.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = diagnostic;
                self.len += 1;
            }
            None => self.dropped += 1,
        }
    }

    /// Records all of `other`'s diagnostics, kept and dropped.
    pub fn append(&mut self, other: &Diagnostics) {
        other.iter().for_each(|d| self.push(*d));
        self.dropped += other.dropped;
    }

    /// The kept diagnostics, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items[..self.len].iter()
    }

    /// The kept diagnostics, to settle what each left in force.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Diagnostic> {
        self.items[..self.len].iter_mut()
    }

    /// Number kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none at all (kept or dropped).
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.dropped == 0
    }

    /// How many did not fit.
    pub fn dropped(&self) -> usize {
        self.dropped
    }
}

impl fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()?;
        if self.dropped > 0 {
            write!(f, " (+{} dropped)", self.dropped)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_escaped_and_cut() {
        let d = Diagnostic::new(Origin::Variable, Problem::MissingEquals, b"a\xffb\x01");
        assert_eq!(d.entry().to_string(), "a\\xffb\\u{0001}");
        // A right-to-left override would reverse what follows it on a terminal.
        let spoof = "rayforce.pool.workers=\u{202e}4\u{2066}".as_bytes();
        let d = Diagnostic::new(Origin::Variable, Problem::MissingEquals, spoof);
        assert_eq!(
            d.entry().to_string(),
            "rayforce.pool.workers=\\u{202e}4\\u{2066}"
        );
        // An escaped byte, an escaped character and the same text typed literally differ.
        let d = Diagnostic::new(Origin::Variable, Problem::MissingEquals, b"\xe9|\\xe9");
        assert_eq!(d.entry().to_string(), "\\xe9|\\\\xe9");
        let d = Diagnostic::new(
            Origin::Variable,
            Problem::MissingEquals,
            "\u{e9}".as_bytes(),
        );
        assert_eq!(
            d.entry().to_string(),
            "\u{e9}",
            "printable text is kept as is"
        );
        let long = [b'x'; 100];
        let d = Diagnostic::new(Origin::Variable, Problem::MissingEquals, &long);
        assert_eq!(
            d.entry().to_string(),
            format!("{}...", "x".repeat(EXCERPT_BYTES))
        );
    }

    #[test]
    fn variable_entries_are_name_equals_value() {
        let d =
            Diagnostic::for_variable(Id::PoolWorkers, b"4\xff", Problem::NotUtf8(Id::PoolWorkers));
        assert_eq!(d.entry().to_string(), "RAYFORCE_CORES=4\\xff");
        assert_eq!(d.origin, Origin::Variable);
        let long = [b'9'; 100];
        let d =
            Diagnostic::for_variable(Id::PoolWorkers, &long, Problem::TooLarge(Id::PoolWorkers));
        assert!(d.entry().to_string().ends_with("9..."), "{}", d.entry());
    }

    #[test]
    fn storage_is_bounded_and_counts_the_rest() {
        let mut all = Diagnostics::new();
        assert!(all.is_empty());
        for _ in 0..MAX_DIAGNOSTICS + 3 {
            all.push(Diagnostic::new(Origin::Program, Problem::EmptyName, b"=1"));
        }
        assert_eq!((all.len(), all.dropped()), (MAX_DIAGNOSTICS, 3));
        assert!(!all.is_empty());
    }

    #[test]
    fn messages_say_what_to_do() {
        let text = |problem| {
            let mut d = Diagnostic::new(Origin::Program, problem, b"e");
            d.kept = problem.tunable().map(|id| Setting {
                value: id.tunable().default,
                source: ValueSource::Default,
            });
            d.to_string()
        };
        assert!(text(Problem::BelowMinimum(Id::ArenaMax, 0))
            .contains("0 is below the minimum of rayforce.malloc.arena_max (expected decimal or 0x hex in 1..=1024); default (auto) kept"));
        assert!(text(Problem::UnknownName {
            suggestion: Some(Id::SpinUs)
        })
        .contains("did you mean `rayforce.pool.spin_us`?"));
        assert!(text(Problem::WrongSeparator(b',')).contains("separated by ':' not ','"));
        let default = Id::SpinUs.tunable().default.unwrap();
        assert!(text(Problem::NotANumber(Id::SpinUs)).contains(&format!("default {default} kept")));
    }

    #[test]
    fn the_value_kept_is_the_one_in_force() {
        let mut d = Diagnostic::new(
            Origin::TunablesString { offset: 0 },
            Problem::NotANumber(Id::PoolWorkers),
            b"rayforce.pool.workers=x",
        );
        assert!(d.to_string().ends_with("; entry ignored"), "{d}");
        d.kept = Some(Setting {
            value: Some(1),
            source: ValueSource::Variable,
        });
        assert!(d.to_string().ends_with("; RAYFORCE_CORES=1 kept"), "{d}");
        d.kept = Some(Setting {
            value: Some(10),
            source: ValueSource::Program,
        });
        assert!(d.to_string().ends_with("; 10 (set in code) kept"), "{d}");
    }
}
