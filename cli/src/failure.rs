//! `Failure`: what a subcommand reports when it stops (one line, exit code 2), and the
//! strict-mode check every subcommand makes.

use rayforce_rt::Tunables;

/// A failure to report: one line, exit code 2.
pub(crate) struct Failure(pub String);

/// With `rayforce.tunables.strict=1` and any invalid tunable: every diagnostic on stderr,
/// and the strict-mode failure. Every subcommand stops on it (`tunables` after its listing,
/// the others before they run).
pub(crate) fn refuse_if_strict(tunables: &Tunables) -> Result<(), Failure> {
    tunables.check_strict().map_err(|err| {
        for d in tunables.diagnostics().iter() {
            eprintln!("rayforce-rt: {d}");
        }
        Failure(err.to_string())
    })
}
