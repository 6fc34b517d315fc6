//! The deliberately broken pools that show the loom models catch what they claim to: each
//! variant below breaks one rule of the protocol at one marked place (`broken::variant`),
//! built under `--cfg rayforce_loom` with `RAYFORCE_LOOM_BROKEN=<name>`. This table is the
//! one list of them: `loom-tests/check.sh` reads the names from it, and a name missing from
//! it does not compile.

/// Every variant, each under the rule it breaks.
pub(crate) const VARIANTS: [&str; 20] = [
    // A dispatch posts a permit for every helper, not only those that can find a task.
    "signal_all",
    // The caller never withdraws untaken permits: they drift into the next dispatch.
    "no_withdraw",
    // The caller returns once no permit is left, not once every helper detached.
    "complete_on_signal",
    // Claiming reads and then writes the cursor: two participants run one chunk.
    "racy_claim",
    // A participant claims from its own home only: the others' tasks are lost when their
    // owners never come.
    "own_home_only",
    // After a spin a helper blocks without looking for a permit again.
    "spin_without_recheck",
    // A helper runs a job kept from an earlier dispatch in the same slot.
    "stale_job",
    // Withdrawing clears every slot's permits, other dispatches' too.
    "withdraw_all",
    // A resize wakes parked helpers without the lock: one between its check and its wait misses
    // it.
    "resize_unlocked",
    // `ForkOnceCell` reads its ready flag Relaxed: the value's writes may not be seen.
    "once_relaxed",
    // Participants claim on after an operation's stop flag is set.
    "claim_after_stop",
    // Every participant of a fold works on the caller's state.
    "shared_state",
    // The first task of one untaken permit is never run.
    "untaken_lost",
    // A helper above the posted helper limit takes a permit.
    "attach_above_limit",
    // A scan reads a block's announced prefix Relaxed: before it is written.
    "look_back_relaxed",
    // A dispatch that finds every slot taken runs its tasks inline, though they may wait for each
    // other.
    "inline_when_full",
    // A join whose offered half was taken returns without waiting for its taker to detach.
    "join_skip_wait",
    // A joiner whose half was taken blocks without first checking whether its taker detached.
    "joiner_blocks_unchecked",
    // A scope returns once its queue is empty, without waiting for the helpers running its tasks.
    "scope_skip_wait",
    // A spawn never wakes its scope's owner: a task waiting for one it spawned while every helper
    // is busy waits for ever.
    "scope_no_owner_wake",
];

/// Whether this build is the broken pool `name`: under `--cfg rayforce_loom` only, with
/// `RAYFORCE_LOOM_BROKEN=name` at build time. An environment variable rather than a second
/// cfg, so each variant rebuilds only this crate and its dependents (cargo tracks the
/// variable), not every dependency as a change of `RUSTFLAGS` does. Always false outside
/// loom builds. Call it in `const { }`: a name not in [`VARIANTS`] fails to compile.
pub(crate) const fn variant(name: &str) -> bool {
    let mut listed = 0;
    while listed < VARIANTS.len() && !same(VARIANTS[listed], name) {
        listed += 1;
    }
    assert!(
        listed < VARIANTS.len(),
        "not a broken variant listed in VARIANTS"
    );
    if !cfg!(rayforce_loom) {
        return false;
    }
    match option_env!("RAYFORCE_LOOM_BROKEN") {
        Some(built) => same(built, name),
        None => false,
    }
}

/// `a == b`, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
