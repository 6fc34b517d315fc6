//! Hostile `RAYFORCE_TUNABLES` values: for each, the exact kind of diagnostic, the default
//! kept for that entry, and the valid entries around it applied.

use rayforce_tunables::diagnostic::Problem;
use rayforce_tunables::registry::Id;
use rayforce_tunables::{Choices, Tunables, ValueSource};

/// Parses `before:case:after` and returns the tunables, checking the neighbours applied.
fn around(case: &[u8]) -> Tunables {
    let mut string = b"rayforce.cpu.policy=online:".to_vec();
    string.extend_from_slice(case);
    string.extend_from_slice(b":rayforce.pool.wide=0");
    let mut tunables = Tunables::from_choices(&Choices::new());
    tunables.apply_string(&string);
    assert_eq!(
        tunables.get(Id::CpuPolicy).value,
        Some(0),
        "{:?}: entry before applied",
        String::from_utf8_lossy(case)
    );
    assert_eq!(
        tunables.get(Id::PoolWide).value,
        Some(0),
        "{:?}: entry after applied",
        String::from_utf8_lossy(case)
    );
    for d in tunables.diagnostics().iter() {
        let offset = d.offset().expect("from the string");
        assert!(
            offset < string.len(),
            "offset {offset} outside {} bytes",
            string.len()
        );
    }
    tunables
}

/// The single diagnostic's problem, with the spin count left at its default.
fn rejected(case: &[u8]) -> Problem {
    let tunables = around(case);
    let problems: Vec<_> = tunables.diagnostics().iter().map(|d| d.problem).collect();
    assert_eq!(
        problems.len(),
        1,
        "{:?}: {problems:?}",
        String::from_utf8_lossy(case)
    );
    let spin = tunables.get(Id::SpinUs);
    assert_eq!(
        (spin.value, spin.source),
        (Id::SpinUs.tunable().default, ValueSource::Default),
        "{:?}",
        String::from_utf8_lossy(case)
    );
    problems[0]
}

#[test]
fn empty_and_separator_only_strings_change_nothing() {
    for case in [&b""[..], b":", b":::"] {
        let tunables = around(case);
        assert!(
            tunables.diagnostics().is_empty(),
            "{:?}",
            tunables.diagnostics()
        );
        assert_eq!(tunables.get(Id::SpinUs).source, ValueSource::Default);
    }
}

#[test]
fn missing_names_and_values() {
    assert_eq!(rejected(b"="), Problem::EmptyName);
    assert_eq!(rejected(b"=4"), Problem::EmptyName);
    assert_eq!(rejected(b"rayforce.pool.spin_us"), Problem::MissingEquals);
    assert_eq!(
        rejected(b"rayforce.pool.spin_us="),
        Problem::EmptyValue(Id::SpinUs)
    );
    assert_eq!(
        rejected(b"rayforce.pool.spin_us=4=4"),
        Problem::NotANumber(Id::SpinUs)
    );
}

#[test]
fn malformed_numbers() {
    let not_a_number = Problem::NotANumber(Id::SpinUs);
    assert_eq!(rejected(b"rayforce.pool.spin_us=abc"), not_a_number);
    assert_eq!(rejected(b"rayforce.pool.spin_us=4abc"), not_a_number);
    assert_eq!(rejected(b"rayforce.pool.spin_us=-1"), not_a_number);
    assert_eq!(
        rejected(b"rayforce.pool.spin_us=18446744073709551616"),
        Problem::TooLarge(Id::SpinUs)
    );
    let mut huge = b"rayforce.pool.spin_us=".to_vec();
    huge.extend(std::iter::repeat_n(b'7', 10_000));
    assert_eq!(rejected(&huge), Problem::TooLarge(Id::SpinUs));
    assert_eq!(
        rejected(b"rayforce.pool.spin_us=100001"),
        Problem::AboveMaximum(Id::SpinUs, 100_001)
    );
}

#[test]
fn the_10000_digit_entry_is_cut_in_its_diagnostic() {
    let mut huge = b"rayforce.pool.spin_us=".to_vec();
    huge.extend(std::iter::repeat_n(b'7', 10_000));
    let tunables = around(&huge);
    let entry = tunables
        .diagnostics()
        .iter()
        .next()
        .unwrap()
        .entry()
        .to_string();
    assert!(entry.len() < 100 && entry.ends_with("..."), "{entry}");
}

#[test]
fn hex_and_whitespace_are_accepted() {
    let tunables = around(b"rayforce.pool.spin_us=0x10");
    assert_eq!(tunables.get(Id::SpinUs).value, Some(16));
    let tunables = around(b" rayforce.pool.spin_us = 7 ");
    assert!(tunables.diagnostics().is_empty());
    let spin = tunables.get(Id::SpinUs);
    assert_eq!(
        (spin.value, spin.source),
        (Some(7), ValueSource::TunablesString)
    );
}

#[test]
fn wrong_names() {
    assert_eq!(
        rejected(b"RAYFORCE.POOL.SPIN_US=7"),
        Problem::UnknownName {
            suggestion: Some(Id::SpinUs)
        }
    );
    assert_eq!(
        rejected(b"rayforce.pool.spin_usx=7"),
        Problem::UnknownName {
            suggestion: Some(Id::SpinUs)
        }
    );
    assert_eq!(
        rejected(b"rayforce.pool=7"),
        Problem::UnknownName { suggestion: None }
    );
    assert_eq!(
        rejected(b"glibc.malloc.arena_max=4"),
        Problem::ForeignNamespace
    );
}

#[test]
fn out_of_range_and_unknown_words() {
    let tunables = around(b"rayforce.malloc.arena_max=0");
    let d = tunables.diagnostics().iter().next().unwrap();
    assert_eq!(d.problem, Problem::BelowMinimum(Id::ArenaMax, 0));
    assert!(
        d.to_string()
            .contains("0 is below the minimum of rayforce.malloc.arena_max"),
        "{d}"
    );
    assert_eq!(tunables.get(Id::ArenaMax).value, None, "auto kept");

    let mut t = Tunables::from_choices(&Choices::new());
    t.apply_string(b"rayforce.cpu.policy=PHYSICAL");
    let d = *t.diagnostics().iter().next().unwrap();
    assert_eq!(
        d.problem,
        Problem::UnknownWord {
            id: Id::CpuPolicy,
            suggestion: Some("physical")
        }
    );
    assert_eq!(t.get(Id::CpuPolicy).source, ValueSource::Default);

    let mut t = Tunables::from_choices(&Choices::new());
    t.apply_string(b"rayforce.cpu.policy=numa");
    let d = *t.diagnostics().iter().next().unwrap();
    assert_eq!(
        d.problem,
        Problem::UnknownWord {
            id: Id::CpuPolicy,
            suggestion: None
        }
    );
    assert!(d.to_string().contains("online|schedulable|physical"), "{d}");
}

#[test]
fn bytes_that_are_not_utf8() {
    let in_name = rejected(b"rayforce.pool.spin\xff_count=7");
    assert!(
        matches!(in_name, Problem::UnknownName { .. }),
        "{in_name:?}"
    );
    assert_eq!(
        rejected(b"rayforce.pool.spin_us=7\xff"),
        Problem::NotANumber(Id::SpinUs)
    );
    let t = around(b"rayforce.pool.spin_us=\xfe\xff");
    let entry = t.diagnostics().iter().next().unwrap().entry().to_string();
    assert_eq!(entry, "rayforce.pool.spin_us=\\xfe\\xff");
}

#[test]
fn wrong_separator_is_named() {
    let mut t = Tunables::from_choices(&Choices::new());
    t.apply_string(b"rayforce.pool.spin_us=7,rayforce.cpu.policy=online");
    let d = *t.diagnostics().iter().next().unwrap();
    assert_eq!(d.problem, Problem::WrongSeparator(b','));
    assert!(d.to_string().contains("separated by ':' not ','"));
    assert_eq!(t.get(Id::SpinUs).source, ValueSource::Default);
}

#[test]
fn duplicates_last_valid_wins() {
    let mut t = Tunables::from_choices(&Choices::new());
    t.apply_string(b"rayforce.pool.spin_us=5:rayforce.pool.spin_us=9");
    assert_eq!(t.get(Id::SpinUs).value, Some(9));
    t.apply_string(b"rayforce.pool.spin_us=3:rayforce.pool.spin_us=x");
    assert_eq!(
        t.get(Id::SpinUs).value,
        Some(3),
        "an invalid later entry is ignored"
    );
}

#[test]
fn diagnostics_beyond_capacity_are_counted() {
    let string = "x:".repeat(40);
    let mut t = Tunables::from_choices(&Choices::new());
    t.apply_string(string.as_bytes());
    let d = t.diagnostics();
    assert_eq!(d.len() + d.dropped(), 40);
    assert!(d.dropped() > 0);
}

#[test]
fn strict_mode_turns_diagnostics_into_an_error() {
    let mut t = Tunables::from_choices(&Choices::new());
    t.apply_string(b"rayforce.tunables.strict=1:rayforce.pool.spinn=3");
    let err = t.check_strict().unwrap_err();
    assert_eq!(err.diagnostics, 1);
    let mut lenient = Tunables::from_choices(&Choices::new());
    lenient.apply_string(b"rayforce.pool.spinn=3");
    assert!(lenient.check_strict().is_ok());
    let mut strict_clean = Tunables::from_choices(&Choices::new().set(Id::Strict, 1));
    strict_clean.apply_string(b"rayforce.pool.spin_us=3");
    assert!(strict_clean.check_strict().is_ok());
}

#[test]
fn program_choices_are_validated_and_ranked() {
    let choices = Choices::new().set(Id::PoolWorkers, 3).set(Id::ArenaMax, 0);
    let mut t = Tunables::from_choices(&choices);
    assert_eq!(
        t.get(Id::PoolWorkers),
        rayforce_tunables::Setting {
            value: Some(3),
            source: ValueSource::Program
        }
    );
    assert_eq!(
        t.get(Id::ArenaMax).value,
        None,
        "invalid choice keeps the default"
    );
    assert_eq!(
        t.diagnostics().iter().next().unwrap().problem,
        Problem::BelowMinimum(Id::ArenaMax, 0)
    );
    t.apply_variable(Id::PoolWorkers, "5");
    assert_eq!(t.workers(), Some(5), "a variable beats the program");
    t.apply_string(b"rayforce.pool.workers=7");
    t.apply_variable(Id::PoolWorkers, "6");
    assert_eq!(
        t.workers(),
        Some(7),
        "the string beats a variable, whatever the order"
    );
    t.apply_variable(Id::SpinUs, "lots");
    let d = t.diagnostics().iter().last().unwrap().to_string();
    assert!(
        d.contains("RAYFORCE_SPIN_US=lots") && d.contains("not a number"),
        "{d}"
    );
}
