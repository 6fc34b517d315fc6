//! The deliberately broken pools that show the loom models catch what they claim to: each
//! variant below breaks one rule of the protocol at one marked place (`broken::variant!`),
//! run under `--cfg rayforce_loom` with `RAYFORCE_LOOM_BROKEN=<name>`. This table is the
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

/// Whether the running pool is the broken variant `$name`: under `--cfg rayforce_loom`
/// only, when `RAYFORCE_LOOM_BROKEN=$name` is set as the models run. Chosen at run time, so
/// one loom build serves the models and every variant; a constant `false` outside loom
/// builds, so the broken branch folds away there. A name not in [`VARIANTS`] fails to
/// compile.
macro_rules! variant {
    ($name:literal) => {{
        const {
            assert!(
                $crate::broken::listed($name),
                "not a broken variant listed in VARIANTS"
            )
        };
        $crate::broken::selected($name)
    }};
}
pub(crate) use variant;

/// Whether `name` is in [`VARIANTS`].
pub(crate) const fn listed(name: &str) -> bool {
    let mut index = 0;
    while index < VARIANTS.len() {
        if same(VARIANTS[index], name) {
            return true;
        }
        index += 1;
    }
    false
}

/// Outside loom builds no variant runs.
#[cfg(not(rayforce_loom))]
#[inline(always)]
pub(crate) const fn selected(_name: &str) -> bool {
    false
}

/// Whether `RAYFORCE_LOOM_BROKEN` names `name`, read once per process.
///
/// # Panics
/// When the variable names no listed variant: a misspelt variant would otherwise run the
/// sound pool, and its models would pass for the wrong reason.
#[cfg(rayforce_loom)]
pub(crate) fn selected(name: &str) -> bool {
    // A std cell, not a modelled one: the variable is read-only configuration, outside
    // what the models explore.
    static CHOSEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        let chosen = std::env::var("RAYFORCE_LOOM_BROKEN").ok();
        if let Some(chosen) = &chosen {
            assert!(
                listed(chosen),
                "RAYFORCE_LOOM_BROKEN={chosen:?} names no variant in pool/src/broken.rs \
                 (expected one of {VARIANTS:?})"
            );
        }
        chosen
    });
    chosen.as_deref() == Some(name)
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
