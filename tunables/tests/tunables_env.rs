//! The environment layer: `RAYFORCE_TUNABLES` and the per-knob variables, their precedence,
//! hermetic mode, and variables that are not UTF-8 (which make `envy::from_env` panic).
//! One test, because the environment is global to the process.
#![cfg(unix)]

use rayforce_tunables::diagnostic::Problem;
use rayforce_tunables::registry::Id;
use rayforce_tunables::{Choices, Environment, Tunables, ValueSource};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

fn clear() {
    for (name, _) in std::env::vars_os() {
        if name.as_bytes().starts_with(b"RAYFORCE_") {
            std::env::remove_var(name);
        }
    }
}

#[test]
fn environment_precedence_and_hostile_variables() {
    clear();
    let program = Choices::new().set(Id::PoolWorkers, 2).set(Id::SpinUs, 10);

    // Per-knob variables beat the program.
    std::env::set_var("RAYFORCE_CORES", "3");
    let t = Tunables::resolve(&program);
    assert_eq!(
        (t.workers(), t.get(Id::PoolWorkers).source),
        (Some(3), ValueSource::Variable)
    );
    assert_eq!(
        (t.spin_us(), t.get(Id::SpinUs).source),
        (10, ValueSource::Program)
    );

    // RAYFORCE_TUNABLES beats the variable.
    std::env::set_var(
        "RAYFORCE_TUNABLES",
        "rayforce.pool.workers=4:rayforce.cpu.policy=online",
    );
    let t = Tunables::resolve(&program);
    assert_eq!(
        (t.workers(), t.get(Id::PoolWorkers).source),
        (Some(4), ValueSource::TunablesString)
    );
    assert_eq!(t.policy(), rayforce_tunables::cpu::CpuPolicy::Online);
    let startup = Tunables::at_startup(&program);
    assert_eq!(
        startup.workers(),
        Some(4),
        "start-up reads the string without the variables"
    );

    // Hermetic programs see neither.
    let hermetic = Tunables::resolve(&program.environment(Environment::Ignore));
    assert_eq!(
        (hermetic.workers(), hermetic.get(Id::PoolWorkers).source),
        (Some(2), ValueSource::Program)
    );
    assert!(hermetic.diagnostics().is_empty());

    // A bad variable names itself and its value; the default stays.
    std::env::remove_var("RAYFORCE_TUNABLES");
    std::env::set_var("RAYFORCE_CORES", "0");
    std::env::set_var("RAYFORCE_POOL_WIDE", "yes");
    let t = Tunables::resolve(&Choices::new());
    let messages: Vec<String> = t.diagnostics().iter().map(|d| d.to_string()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("RAYFORCE_CORES=0") && m.contains("below the minimum")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("RAYFORCE_POOL_WIDE=yes") && m.contains("not 0 or 1")),
        "{messages:?}"
    );
    assert_eq!((t.workers(), t.wide()), (None, true));

    // Not UTF-8: an unrelated variable is harmless, one of ours is reported, never a panic.
    std::env::set_var("RAYFORCE_POOL_WIDE", "0");
    std::env::set_var(
        OsStr::from_bytes(b"UNRELATED_BYTES"),
        OsStr::from_bytes(b"\xff\xfe"),
    );
    std::env::set_var("RAYFORCE_CORES", OsStr::from_bytes(b"4\xff"));
    let t = Tunables::resolve(&Choices::new());
    let d = t
        .diagnostics()
        .iter()
        .next()
        .expect("a diagnostic for RAYFORCE_CORES");
    assert_eq!(d.problem, Problem::NotUtf8(Id::PoolWorkers));
    assert_eq!(d.entry().to_string(), "RAYFORCE_CORES=4\\xff");
    assert_eq!(t.workers(), None);
    assert!(!t.wide(), "the valid variable beside it still applies");

    // Variables for what start-up fixed are refused, with a diagnostic, when asked.
    clear();
    std::env::set_var("RAYFORCE_ARENA_MAX", "4");
    std::env::set_var("RAYFORCE_CORES", "3");
    let t = Tunables::at_startup(&Choices::new()).with_variables_except(&[Id::ArenaMax]);
    assert_eq!((t.arena_max(), t.workers()), (None, Some(3)));
    let d = t
        .diagnostics()
        .iter()
        .next()
        .expect("a diagnostic for RAYFORCE_ARENA_MAX");
    assert_eq!(d.problem, Problem::ReadAfterStartup(Id::ArenaMax));
    assert!(d.to_string().contains("set it in RAYFORCE_TUNABLES"), "{d}");

    // A diagnostic names the value that stayed in force, not always the default.
    clear();
    std::env::set_var("RAYFORCE_CORES", "1");
    std::env::set_var(
        "RAYFORCE_TUNABLES",
        "rayforce.pool.workers=x:rayforce.malloc.arena_max=0",
    );
    let t = Tunables::resolve(&Choices::new().set(Id::ArenaMax, 4));
    let messages: Vec<String> = t.diagnostics().iter().map(|d| d.to_string()).collect();
    assert_eq!((t.workers(), t.arena_max()), (Some(1), Some(4)));
    assert!(
        messages[0].ends_with("; RAYFORCE_CORES=1 kept"),
        "{messages:?}"
    );
    assert!(
        messages[1].ends_with("; 4 (set in code) kept"),
        "{messages:?}"
    );

    // Per-knob variables are matched exactly, as RAYFORCE_TUNABLES names are: a variable
    // spelled in another case is reported, never applied, whatever the environment's order.
    clear();
    std::env::set_var("RAYFORCE_cores", "5");
    let t = Tunables::resolve(&Choices::new());
    assert_eq!(t.workers(), None);
    let d = t
        .diagnostics()
        .iter()
        .next()
        .expect("a misspelled variable");
    assert_eq!(d.problem, Problem::VariableCase(Id::PoolWorkers));
    assert!(d.to_string().contains("did you mean RAYFORCE_CORES"), "{d}");
    std::env::set_var("RAYFORCE_CORES", "2");
    assert_eq!(Tunables::resolve(&Choices::new()).workers(), Some(2));
    std::env::remove_var("RAYFORCE_CORES");
    std::env::set_var("RAYFORCE_CORES", "2"); // now after RAYFORCE_cores in the environment
    assert_eq!(Tunables::resolve(&Choices::new()).workers(), Some(2));
    clear();
    std::env::remove_var("UNRELATED_BYTES");

    // Strict mode's variable is read at start-up (so that it acts at the first allocation),
    // and not again with the other variables: one diagnostic for a bad value.
    std::env::set_var("RAYFORCE_TUNABLES_STRICT", "1");
    assert!(Tunables::at_startup(&Choices::new()).strict());
    std::env::set_var("RAYFORCE_TUNABLES_STRICT", "yes");
    let t = Tunables::resolve(&Choices::new());
    assert!(!t.strict());
    let problems: Vec<_> = t.diagnostics().iter().map(|d| d.problem).collect();
    assert_eq!(problems, [Problem::NotABool(Id::Strict)]);
    std::env::remove_var("RAYFORCE_TUNABLES_STRICT");

    // A variable close to a knob's (a typo, or the tunable's name spelled as a variable) is
    // reported with the one meant, and ignored; the program's own `RAYFORCE_` names are not.
    for (typo, meant) in [
        ("RAYFORCE_CORE", "RAYFORCE_CORES"),
        ("RAYFORCE_POOL_WORKERS", "RAYFORCE_CORES"),
    ] {
        std::env::set_var(typo, "3");
        std::env::set_var("RAYFORCE_MY_OWN_SETTING", "3");
        let t = Tunables::resolve(&Choices::new());
        assert_eq!(t.workers(), None);
        let problems: Vec<_> = t
            .diagnostics()
            .iter()
            .map(|d| (d.problem, d.to_string()))
            .collect();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, Problem::UnknownVariable(Id::PoolWorkers));
        assert!(problems[0].1.contains(&format!("{typo}=3")), "{problems:?}");
        assert!(
            problems[0].1.contains(&format!("did you mean {meant}")),
            "{problems:?}"
        );
        std::env::remove_var(typo);
        std::env::remove_var("RAYFORCE_MY_OWN_SETTING");
    }

    // A variable set twice (an environment built by hand for `execve`): its first value
    // counts, as `getenv` reads it, and the other variables still apply.
    let entries = [
        c"RAYFORCE_CORES=2",
        c"RAYFORCE_CORES=5",
        c"RAYFORCE_SPIN_US=7",
    ];
    let mut block: Vec<*const libc::c_char> = entries.iter().map(|e| e.as_ptr()).collect();
    block.push(std::ptr::null());
    extern "C" {
        static mut environ: *const *const libc::c_char;
    }
    // SAFETY: this is the file's only test, so no other thread reads the environment; the
    // block and its strings outlive the swap, and the process's own is put back after.
    let t = unsafe {
        let own = environ;
        environ = block.as_ptr();
        let t = Tunables::resolve(&Choices::new());
        environ = own;
        t
    };
    assert_eq!((t.workers(), t.spin_us()), (Some(2), 7));
}
