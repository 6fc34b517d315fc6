//! The fork-aware once-cell: of two threads racing for an empty cell, one builds and both
//! return its value, whole (loom checks every read of the value against its write).
//! Forks themselves are outside loom: `tests/runtime_fork.rs` forks during a real build.

use crate::fork_once::ForkOnceCell;
use crate::sync::{thread, Arc, AtomicUsize, Ordering};

#[test]
fn racing_callers_build_once_and_both_see_the_whole_value() {
    crate::sync::model(|| {
        let cell = Arc::new(ForkOnceCell::new());
        let builds = Arc::new(AtomicUsize::new(0));
        let build = |builds: &AtomicUsize| {
            builds.fetch_add(1, Ordering::Relaxed);
            [7u64, 11]
        };
        let other = {
            let (cell, builds) = (Arc::clone(&cell), Arc::clone(&builds));
            thread::spawn(move || *cell.get_or_init(|| build(&builds)))
        };
        let mine = *cell.get_or_init(|| build(&builds));
        assert_eq!(mine, [7, 11]);
        assert_eq!(other.join().unwrap(), [7, 11]);
        assert_eq!(builds.load(Ordering::Relaxed), 1, "built once");
        assert_eq!(cell.get(), Some(&[7, 11]));
    });
}
