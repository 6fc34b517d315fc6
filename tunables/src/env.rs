//! The only module that reads the environment: `RAYFORCE_TUNABLES` with libc `getenv`
//! (allocation-free, for the allocator's first call), the per-knob variables with `envy`
//! (after start-up), and whether the process runs setuid or setgid.

use crate::diagnostic::{Diagnostic, Diagnostics, Origin, Problem};
use crate::parse;
use crate::registry::{Id, KnobVariables, TABLE};

/// The variable holding the tunables string.
pub const TUNABLES_VARIABLE: &str = "RAYFORCE_TUNABLES";

/// The prefix of every per-knob variable.
const KNOB_PREFIX: &str = "RAYFORCE_";

/// Whether the process is setuid or setgid (`AT_SECURE`): then, as glibc does with
/// `GLIBC_TUNABLES`, the environment must not tune it.
pub(crate) fn is_secure() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getauxval has no preconditions; it returns 0 for a missing entry.
        unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
    }
    #[cfg(target_os = "macos")]
    {
        // SAFETY: issetugid has no preconditions.
        unsafe { libc::issetugid() != 0 }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        false
    }
}

/// Calls `f` with the bytes of `RAYFORCE_TUNABLES`, or `None` if it is unset. No allocation.
pub(crate) fn with_tunables_string<R>(f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    with_variable(c"RAYFORCE_TUNABLES", f)
}

/// Calls `f` with the bytes of `RAYFORCE_TUNABLES_STRICT` (strict mode's variable, which
/// start-up reads so that it acts at the first allocation), or `None` if it is unset. No
/// allocation.
pub(crate) fn with_strict_variable<R>(f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    with_variable(c"RAYFORCE_TUNABLES_STRICT", f)
}

/// Calls `f` with the bytes of variable `name`, or `None` if it is unset. No allocation.
///
/// Like every `getenv` caller, this races with a concurrent `setenv` in another thread;
/// it runs at start-up, before a program would change its environment.
fn with_variable<R>(name: &core::ffi::CStr, f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    // SAFETY: the name is NUL-terminated; the returned pointer, if not null, points to a
    // NUL-terminated string that stays valid until the environment is modified.
    let value = unsafe { libc::getenv(name.as_ptr()) };
    if value.is_null() {
        return f(None);
    }
    // SAFETY: non-null `getenv` results are NUL-terminated strings (see above).
    let bytes = unsafe { core::ffi::CStr::from_ptr(value) }.to_bytes();
    f(Some(bytes))
}

/// The per-knob variables that are set, with their values. Names match exactly, as
/// `RAYFORCE_TUNABLES` names do: one in another case (`RAYFORCE_cores`), or one close to a
/// knob's variable or name (`RAYFORCE_CORE`, `RAYFORCE_POOL_WORKERS`), is reported and
/// ignored; other `RAYFORCE_` names are left to the program (envy folds case, so it would otherwise be applied, or not, by the environment's
/// order). A value that is not UTF-8 is skipped with a diagnostic (envy would panic on it).
/// A variable set twice (an environment built by hand for `execve`) counts once, its first
/// value, as `getenv` reads it: envy would reject the pair and lose every variable.
pub(crate) fn knob_variables(diagnostics: &mut Diagnostics) -> Vec<(Id, String)> {
    let mut utf8: Vec<(String, String)> = Vec::new();
    for (name, value) in std::env::vars_os() {
        let name_bytes = name.as_encoded_bytes();
        if !name_bytes.starts_with(KNOB_PREFIX.as_bytes()) {
            continue;
        }
        let Some(t) = TABLE
            .iter()
            .find(|t| t.variable.as_bytes().eq_ignore_ascii_case(name_bytes))
        else {
            if let Some(id) = parse::knob_variable_like(name_bytes)
                .filter(|_| name_bytes != TUNABLES_VARIABLE.as_bytes())
            {
                let entry = [name_bytes, b"=", value.as_encoded_bytes()].concat();
                let problem = Problem::UnknownVariable(id);
                diagnostics.push(Diagnostic::new(Origin::Variable, problem, &entry));
            }
            continue;
        };
        if t.variable.as_bytes() != name_bytes {
            let entry = [name_bytes, b"=", value.as_encoded_bytes()].concat();
            let problem = Problem::VariableCase(t.id);
            diagnostics.push(Diagnostic::new(Origin::Variable, problem, &entry));
            continue;
        }
        if utf8.iter().any(|(seen, _)| seen == t.variable) {
            continue;
        }
        match value.to_str() {
            Some(value) => utf8.push((t.variable.to_owned(), value.to_owned())),
            None => {
                let problem = Problem::NotUtf8(t.id);
                diagnostics.push(Diagnostic::for_variable(
                    t.id,
                    value.as_encoded_bytes(),
                    problem,
                ));
            }
        }
    }
    // envy strips the prefix and lower-cases the rest (RAYFORCE_CORES -> `cores`, the field
    // `CORES`). It cannot fail: every field is an optional string, set at most once (each
    // name is kept once, above), and variables that name no knob are left out.
    let knobs: KnobVariables = envy::prefixed(KNOB_PREFIX)
        .from_iter(utf8)
        .unwrap_or_default();
    Id::ALL
        .into_iter()
        .zip(knobs.into_values())
        .filter_map(|(id, value)| Some((id, value?)))
        .collect()
}
