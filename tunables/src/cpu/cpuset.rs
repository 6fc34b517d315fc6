//! A fixed-size CPU set (the kernel's 8192-CPU limit) and the kernel's CPU-list syntax
//! (`0-3,8,10-11`), both without allocating.

use core::fmt;

/// The largest CPU count the Linux kernel supports (`CONFIG_NR_CPUS` tops out at 8192).
pub const MAX_CPUS: usize = 8192;

const WORD_BITS: usize = u64::BITS as usize;
const WORDS: usize = MAX_CPUS / WORD_BITS;

/// A set of CPU ids `0..MAX_CPUS`, 1 KiB, laid out as the kernel's affinity mask.
///
/// The layout (`u64` words, bit `n % 64` of word `n / 64` is CPU `n`) is the one
/// `sched_getaffinity` writes, so the set can be handed to it directly.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct CpuSet {
    words: [u64; WORDS],
}

/// Why a CPU list did not parse; `offset` is the byte where parsing stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListError {
    /// Byte offset of the offending character in the input.
    pub offset: usize,
    /// What was wrong there.
    pub kind: ListErrorKind,
}

/// The kinds of [`ListError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListErrorKind {
    /// A CPU number was expected (digit missing, or a stray character).
    ExpectedNumber,
    /// A number is at or above [`MAX_CPUS`].
    TooLarge,
    /// A range `a-b` with `a > b`.
    ReversedRange,
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ListErrorKind::ExpectedNumber => "expected a CPU number",
            ListErrorKind::TooLarge => "CPU number is 8192 or more",
            ListErrorKind::ReversedRange => "range end is below its start",
        };
        write!(
            f,
            "{what} at byte {} (expected a kernel CPU list such as 0-3,8)",
            self.offset
        )
    }
}

impl std::error::Error for ListError {}

impl Default for CpuSet {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuSet {
    /// The empty set.
    pub const fn new() -> Self {
        Self { words: [0; WORDS] }
    }

    /// Adds `cpu`; returns `false` (and changes nothing) when `cpu >= MAX_CPUS`.
    pub fn insert(&mut self, cpu: usize) -> bool {
        if cpu >= MAX_CPUS {
            return false;
        }
        self.words[cpu / WORD_BITS] |= 1 << (cpu % WORD_BITS);
        true
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.words[cpu / WORD_BITS] & (1 << (cpu % WORD_BITS)) != 0
    }

    /// Number of CPUs in the set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Keeps only the CPUs also in `other`.
    pub fn intersect_with(&mut self, other: &CpuSet) {
        for (w, o) in self.words.iter_mut().zip(other.words.iter()) {
            *w &= o;
        }
    }

    /// Adds every CPU of `other`.
    pub fn union_with(&mut self, other: &CpuSet) {
        for (w, o) in self.words.iter_mut().zip(other.words.iter()) {
            *w |= o;
        }
    }

    /// The CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            core::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(i * WORD_BITS + bit)
            })
        })
    }

    /// The raw mask, laid out as the kernel's (for `sched_setaffinity`).
    pub fn as_words(&self) -> &[u64; WORDS] {
        &self.words
    }

    /// The raw mask, writable, laid out as the kernel's (for `sched_getaffinity`).
    pub fn as_mut_words(&mut self) -> &mut [u64; WORDS] {
        &mut self.words
    }

    /// Parses the kernel's list syntax: comma-separated `n` or `a-b`, surrounding
    /// whitespace, newlines and NUL bytes ignored; an empty list is the empty set.
    ///
    /// ```
    /// use rayforce_tunables::cpu::CpuSet;
    /// let set = CpuSet::parse_list(b"0-2,8\n\0").unwrap();
    /// assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 2, 8]);
    /// assert!(CpuSet::parse_list(b"3-1").is_err());
    /// ```
    pub fn parse_list(bytes: &[u8]) -> Result<CpuSet, ListError> {
        let core::ops::Range { start, end } = crate::number::trimmed_range(bytes);
        let mut set = CpuSet::new();
        let mut pos = start;
        while pos < end {
            let (first, after_first) = parse_cpu(bytes, pos, end)?;
            let (last, after_range) = if after_first < end && bytes[after_first] == b'-' {
                let (last, after_last) = parse_cpu(bytes, after_first + 1, end)?;
                if last < first {
                    return Err(ListError {
                        offset: after_first + 1,
                        kind: ListErrorKind::ReversedRange,
                    });
                }
                (last, after_last)
            } else {
                (first, after_first)
            };
            for cpu in first..=last {
                set.insert(cpu);
            }
            pos = after_range;
            if pos < end {
                if bytes[pos] != b',' {
                    return Err(ListError {
                        offset: pos,
                        kind: ListErrorKind::ExpectedNumber,
                    });
                }
                pos += 1;
                if pos == end {
                    return Err(ListError {
                        offset: pos,
                        kind: ListErrorKind::ExpectedNumber,
                    });
                }
            }
        }
        Ok(set)
    }
}

/// Parses one CPU number starting at `pos`; returns it and the position after it.
fn parse_cpu(bytes: &[u8], pos: usize, end: usize) -> Result<(usize, usize), ListError> {
    let mut value = 0usize;
    let mut at = pos;
    while at < end && bytes[at].is_ascii_digit() {
        value = value * 10 + usize::from(bytes[at] - b'0');
        if value >= MAX_CPUS {
            return Err(ListError {
                offset: pos,
                kind: ListErrorKind::TooLarge,
            });
        }
        at += 1;
    }
    if at == pos {
        return Err(ListError {
            offset: pos,
            kind: ListErrorKind::ExpectedNumber,
        });
    }
    Ok((value, at))
}

/// Prints the set in the kernel's list syntax, ranges collapsed: `0-3,8`.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut cpus = self.iter().peekable();
        let mut first_range = true;
        while let Some(start) = cpus.next() {
            let mut end = start;
            while cpus.peek() == Some(&(end + 1)) {
                end = cpus.next().unwrap_or(end);
            }
            if !first_range {
                f.write_str(",")?;
            }
            first_range = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cpus(list: &str) -> Vec<usize> {
        CpuSet::parse_list(list.as_bytes())
            .unwrap()
            .iter()
            .collect()
    }

    #[test]
    fn parses_ranges_gaps_and_padding() {
        assert_eq!(cpus("0-3,8"), [0, 1, 2, 3, 8]);
        assert_eq!(
            cpus("0-15,88-90\n"),
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 88, 89, 90]
        );
        assert_eq!(cpus("0,64\n\0"), [0, 64]);
        assert_eq!(cpus("8191"), [8191]);
        assert!(cpus("").is_empty());
        assert!(cpus("\n").is_empty());
    }

    #[test]
    fn rejects_malformed_lists_with_the_offset() {
        let err = |s: &str| CpuSet::parse_list(s.as_bytes()).unwrap_err();
        assert_eq!(err("0-").kind, ListErrorKind::ExpectedNumber);
        assert_eq!(err("0,,1").offset, 2);
        assert_eq!(err("0,").kind, ListErrorKind::ExpectedNumber);
        assert_eq!(err("a").offset, 0);
        assert_eq!(err("1 2").offset, 1);
        assert_eq!(err("5-2").kind, ListErrorKind::ReversedRange);
        assert_eq!(err("8192").kind, ListErrorKind::TooLarge);
        assert_eq!(err("99999999999999999999999").kind, ListErrorKind::TooLarge);
        assert_eq!(err("-1").kind, ListErrorKind::ExpectedNumber);
    }

    #[test]
    fn set_operations() {
        let mut a = CpuSet::parse_list(b"0-7").unwrap();
        let b = CpuSet::parse_list(b"4-11").unwrap();
        a.intersect_with(&b);
        assert_eq!(a.to_string(), "4-7");
        a.union_with(&CpuSet::parse_list(b"100").unwrap());
        assert_eq!(a.count(), 5);
        assert!(!a.insert(MAX_CPUS));
        assert!(!a.contains(MAX_CPUS));
    }

    proptest! {
        #[test]
        fn display_round_trips(ids in proptest::collection::vec(0usize..MAX_CPUS, 0..64)) {
            let mut set = CpuSet::new();
            for id in &ids {
                set.insert(*id);
            }
            let printed = set.to_string();
            prop_assert_eq!(CpuSet::parse_list(printed.as_bytes()).unwrap(), set);
            prop_assert_eq!(set.count(), set.iter().count());
        }

        #[test]
        fn arbitrary_bytes_parse_to_a_set_or_an_offset_inside(
            bytes in proptest::collection::vec(any::<u8>(), 0..64)
        ) {
            match CpuSet::parse_list(&bytes) {
                Ok(set) => prop_assert_eq!(CpuSet::parse_list(set.to_string().as_bytes()).unwrap(), set),
                Err(err) => prop_assert!(err.offset <= bytes.len()),
            }
        }
    }
}
