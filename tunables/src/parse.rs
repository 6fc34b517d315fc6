//! `RAYFORCE_TUNABLES` parsing: `name=value` entries separated by `:`, as `GLIBC_TUNABLES`.
//!
//! One pass over the bytes, linear time, no allocation, no buffer sized from the input
//! (glibc's parser once overflowed exactly such a buffer, CVE-2023-4911). Rules:
//! - Empty entries (`a=1::b=2`, a trailing `:`) are skipped silently, as glibc does.
//! - Spaces, tabs and newlines around names and values are trimmed.
//! - Numbers: decimal or `0x` hex, the whole value consumed, no sign, no wrap-around.
//! - An invalid entry is ignored with a [`Diagnostic`]; an earlier valid entry for the same
//!   tunable stands. Duplicate valid entries: the last wins (one slot per tunable).

use crate::diagnostic::{Diagnostic, Diagnostics, Origin, Problem};
use crate::number::{self, NumberError};
use crate::registry::{Id, Kind, COUNT, NAMESPACE, TABLE};
use core::fmt;

/// The accepted values (one slot per tunable, in table order) and the diagnostics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Parsed {
    /// `values[id as usize]`: the last valid value given for that tunable.
    pub values: [Option<u64>; COUNT],
    /// What was wrong with the rest.
    pub diagnostics: Diagnostics,
}

/// Parses a `RAYFORCE_TUNABLES` value.
///
/// ```
/// use rayforce_tunables::parse::parse;
/// use rayforce_tunables::registry::Id;
/// let parsed = parse(b"rayforce.pool.spin_us=0x10:rayforce.pool.spinn=3");
/// assert_eq!(parsed.values[Id::SpinUs as usize], Some(16));
/// let diagnostic = parsed.diagnostics.iter().next().unwrap();
/// assert!(diagnostic.to_string().contains("did you mean `rayforce.pool.spin_us`?"));
/// ```
pub fn parse(bytes: &[u8]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut start = 0;
    while start < bytes.len() {
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b':')
            .map_or(bytes.len(), |i| start + i);
        if let Err(diagnostic) = parse_entry(&bytes[start..end], start, &mut parsed.values) {
            parsed.diagnostics.push(diagnostic);
        }
        start = end + 1;
    }
    parsed
}

/// One entry at byte `offset`: stores its value, or explains why not.
#[allow(clippy::result_large_err)] // returned by value: the parser never allocates
fn parse_entry(
    raw: &[u8],
    offset: usize,
    values: &mut [Option<u64>; COUNT],
) -> Result<(), Diagnostic> {
    let range = number::trimmed_range(raw);
    if range.is_empty() {
        return Ok(());
    }
    let (entry, entry_offset) = (&raw[range.clone()], offset + range.start);
    let fail = |at: usize, problem: Problem| {
        Diagnostic::new(Origin::TunablesString { offset: at }, problem, entry)
    };
    let Some(eq) = entry.iter().position(|&b| b == b'=') else {
        return Err(fail(entry_offset, Problem::MissingEquals));
    };
    let name = number::trim(&entry[..eq]);
    if name.is_empty() {
        return Err(fail(entry_offset, Problem::EmptyName));
    }
    let id = identify(name).map_err(|problem| fail(entry_offset, problem))?;
    let value_range = number::trimmed_range(&entry[eq + 1..]);
    let value_offset = entry_offset + eq + 1 + value_range.start;
    let value = &entry[eq + 1..][value_range];
    if value.is_empty() {
        return Err(fail(entry_offset + eq, Problem::EmptyValue(id)));
    }
    if let Some(sep) = swallowed_separator(value) {
        return Err(fail(value_offset, Problem::WrongSeparator(sep)));
    }
    let parsed =
        parse_value(id, value).map_err(|(at, problem)| fail(value_offset + at, problem))?;
    values[id as usize] = Some(parsed);
    Ok(())
}

/// The tunable a name refers to, or why it refers to none.
fn identify(name: &[u8]) -> Result<Id, Problem> {
    if let Some(id) = Id::from_name(name) {
        return Ok(id);
    }
    let ours = name.len() >= NAMESPACE.len()
        && name[..NAMESPACE.len()].eq_ignore_ascii_case(NAMESPACE.as_bytes());
    if ours {
        Err(Problem::UnknownName {
            suggestion: suggest(name),
        })
    } else {
        Err(Problem::ForeignNamespace)
    }
}

/// A `,` or `;` followed later by `=`: entries joined with the wrong separator.
fn swallowed_separator(value: &[u8]) -> Option<u8> {
    let at = value.iter().position(|&b| b == b',' || b == b';')?;
    value[at..].contains(&b'=').then_some(value[at])
}

/// Validates `value` for tunable `id`: `Err((offset within value, problem))`.
pub(crate) fn parse_value(id: Id, value: &[u8]) -> Result<u64, (usize, Problem)> {
    let number = match id.tunable().kind {
        Kind::Unsigned { .. } => number::parse_u64(value).map_err(|e| match e {
            NumberError::Overflow => (0, Problem::TooLarge(id)),
            NumberError::InvalidDigit(at) => (at, Problem::NotANumber(id)),
            NumberError::Empty => (0, Problem::NotANumber(id)),
        })?,
        Kind::Bool => match value {
            b"0" => 0,
            b"1" => 1,
            _ => return Err((0, Problem::NotABool(id))),
        },
        Kind::Words(words) => match words.iter().position(|w| w.as_bytes() == value) {
            Some(index) => index as u64,
            None => {
                let suggestion = words
                    .iter()
                    .copied()
                    .find(|w| w.as_bytes().eq_ignore_ascii_case(value));
                return Err((0, Problem::UnknownWord { id, suggestion }));
            }
        },
    };
    validate(id, number).map_err(|problem| (0, problem))
}

/// Whether `value` (a number, 0/1, or a word's index) is within `id`'s bounds.
pub(crate) fn validate(id: Id, value: u64) -> Result<u64, Problem> {
    match id.tunable().kind {
        Kind::Unsigned { min, .. } if value < min => Err(Problem::BelowMinimum(id, value)),
        Kind::Unsigned { max, .. } if value > max => Err(Problem::AboveMaximum(id, value)),
        Kind::Bool if value > 1 => Err(Problem::NotABool(id)),
        Kind::Words(words) if value as usize >= words.len() => Err(Problem::UnknownWord {
            id,
            suggestion: None,
        }),
        _ => Ok(value),
    }
}

/// The closest tunable name: same letters in another case, a small edit distance, or
/// a shared prefix reaching at least three bytes into the knob's last segment.
fn suggest(name: &[u8]) -> Option<Id> {
    if let Some(t) = TABLE
        .iter()
        .find(|t| t.name.as_bytes().eq_ignore_ascii_case(name))
    {
        return Some(t.id);
    }
    let by_distance = TABLE
        .iter()
        .filter_map(|t| edit_distance(name, t.name.as_bytes()).map(|d| (d, t.id)))
        .filter(|&(d, _)| d <= 2)
        .min_by_key(|&(d, _)| d);
    if let Some((_, id)) = by_distance {
        return Some(id);
    }
    TABLE
        .iter()
        .filter(|t| {
            let candidate = t.name.as_bytes();
            let shared = candidate
                .iter()
                .zip(name)
                .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
                .count();
            let knob_start = candidate
                .iter()
                .rposition(|&b| b == b'.')
                .map_or(0, |i| i + 1);
            shared >= knob_start + 3
        })
        .map(|t| t.id)
        .next()
}

/// The knob a variable named `RAYFORCE_...` that names none seems meant for: one whose
/// variable is within two edits of `name` (`RAYFORCE_CORE`), or whose tunable is within two
/// edits of the name `name` spells (`RAYFORCE_POOL_WORKERS`: `rayforce.pool.workers`).
/// Other names are the program's own business.
pub(crate) fn knob_variable_like(name: &[u8]) -> Option<Id> {
    const PREFIX: &[u8] = b"RAYFORCE_";
    let close = |d: Option<usize>| d.is_some_and(|d| d <= 2);
    if let Some(t) = TABLE
        .iter()
        .find(|t| close(edit_distance(name, t.variable.as_bytes())))
    {
        return Some(t.id);
    }
    let rest = name.strip_prefix(PREFIX)?;
    let mut spelled = [0u8; 64];
    let len = b"rayforce.".len() + rest.len();
    if len > spelled.len() {
        return None;
    }
    spelled[..9].copy_from_slice(b"rayforce.");
    spelled[9..len].copy_from_slice(rest);
    if let Some(dot) = spelled[9..len].iter().position(|&b| b == b'_') {
        spelled[9 + dot] = b'.';
    }
    TABLE
        .iter()
        .find(|t| close(edit_distance(&spelled[..len], t.name.as_bytes())))
        .map(|t| t.id)
}

/// Levenshtein distance, case-insensitive, in a fixed row; `None` for names over 64 bytes.
fn edit_distance(a: &[u8], b: &[u8]) -> Option<usize> {
    const MAX: usize = 64;
    if a.len() > MAX || b.len() > MAX {
        return None;
    }
    let mut row = [0usize; MAX + 1];
    for (j, cell) in row.iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(!ca.eq_ignore_ascii_case(cb));
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    Some(row[b.len()])
}

/// Writes `values` back as a tunables string (`name=value:...`), in table order.
pub fn write_values(values: &[Option<u64>; COUNT], out: &mut dyn fmt::Write) -> fmt::Result {
    let mut first = true;
    for (t, value) in TABLE.iter().zip(values) {
        if let Some(value) = value {
            if !first {
                out.write_str(":")?;
            }
            first = false;
            write!(out, "{}=", t.name)?;
            t.kind.format(*value, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let s = |name: &str| suggest(name.as_bytes()).map(|id| id.tunable().name);
        assert_eq!(s("rayforce.pool.spinn"), Some("rayforce.pool.spin_us"));
        assert_eq!(s("rayforce.pool.spin_usx"), Some("rayforce.pool.spin_us"));
        assert_eq!(s("RAYFORCE.POOL.SPIN_US"), Some("rayforce.pool.spin_us"));
        assert_eq!(
            s("rayforce.malloc.arena_mx"),
            Some("rayforce.malloc.arena_max")
        );
        assert_eq!(s("rayforce.pool"), None);
        assert_eq!(s("rayforce.something.else"), None);
    }

    #[test]
    fn variables_like_a_knobs_are_told_from_the_programs_own() {
        let like = |name: &str| knob_variable_like(name.as_bytes()).map(|id| id.tunable().name);
        assert_eq!(like("RAYFORCE_CORE"), Some("rayforce.pool.workers"));
        assert_eq!(like("RAYFORCE_SPINUS"), Some("rayforce.pool.spin_us"));
        assert_eq!(like("RAYFORCE_POOL_WORKERS"), Some("rayforce.pool.workers"));
        assert_eq!(
            like("RAYFORCE_MALLOC_ARENA_MAX"),
            Some("rayforce.malloc.arena_max")
        );
        assert_eq!(like("RAYFORCE_CPU_POLICYS"), Some("rayforce.cpu.policy"));
        for own in [
            "RAYFORCE_LOOM_BROKEN",
            "RAYFORCE_TEST_CHILD",
            "RAYFORCE_COMPARE_ENGINE",
            "RAYFORCE_CHURN_RAW",
            "RAYFORCE_POOL_BENCH_INSTRUCTIONS",
            "RAYFORCE_SPIN_COUNT",
            "RAYFORCE_OPS_BENCH_INSTRUCTIONS",
            "RAYFORCE_ALLOC_BENCH_INSTRUCTIONS",
            "RAYFORCE_ALLOC_BENCH_CHURN",
            "RAYFORCE_TEST_PIDS_GROUP",
            "RAYFORCE_ALLOC_TEST_CHILD",
        ] {
            assert_eq!(like(own), None, "{own}");
        }
        assert_eq!(like("RAYFORCE_"), None);
        assert_eq!(like(&format!("RAYFORCE_{}", "X".repeat(80))), None);
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance(b"kitten", b"sitting"), Some(3));
        assert_eq!(edit_distance(b"", b"abc"), Some(3));
        assert_eq!(edit_distance(b"same", b"SAME"), Some(0));
        assert_eq!(edit_distance(&[b'a'; 65], b"a"), None);
    }
}
