//! `Setting`: one tunable's value and the source it came from, ordered by precedence.

/// Where a value came from, in precedence order: a later source overrides an earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ValueSource {
    /// The table's default.
    Default,
    /// Chosen by the program in code ([`Choices`](crate::Choices)).
    Program,
    /// A per-knob environment variable (`RAYFORCE_CORES`, ...).
    Variable,
    /// `RAYFORCE_TUNABLES`.
    TunablesString,
}

impl ValueSource {
    /// A short word for listings.
    pub const fn as_str(self) -> &'static str {
        match self {
            ValueSource::Default => "default",
            ValueSource::Program => "program",
            ValueSource::Variable => "variable",
            ValueSource::TunablesString => "RAYFORCE_TUNABLES",
        }
    }
}

/// One tunable's value (`None`: auto, derived from the CPU count) and its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The value; `None` means auto.
    pub value: Option<u64>,
    /// Where it came from.
    pub source: ValueSource,
}
