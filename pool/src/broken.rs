//! The deliberately broken pools that show the loom models catch what they claim to: each
//! variant below breaks one rule of the protocol at one marked place (`broken::variant!`),
//! run under `--cfg rayforce_loom` with `RAYFORCE_LOOM_BROKEN=<name>`. This table is the
//! one list of them: `loom-tests/check.sh` reads the names from it, and a name missing from
//! it does not compile.

/// Every variant, each under the rule it breaks, with the model that catches it: a test name
/// filter, by which `loom-tests/check.sh` runs only that model against the variant. One
/// line a variant, as `check.sh` reads them.
#[rustfmt::skip]
pub(crate) const VARIANTS: [(&str, &str); 29] = [
    // A dispatch posts a permit for every helper, not only those that can find a task.
    ("signal_all", "narrow_then_wide_then_narrow_runs_every_task_once"),
    // The caller never withdraws untaken permits: they drift into the next dispatch.
    ("no_withdraw", "two_callers_share_one_helper"),
    // The caller returns once no permit is left, not once every helper detached.
    ("complete_on_signal", "no_helper_touches_a_dispatch_after_it_returned"),
    // Claiming reads and then writes the cursor: two participants run one chunk.
    ("racy_claim", "chunked_claims_run_every_task_once"),
    // A participant claims from its own home only: the others' tasks are lost when their
    // owners never come.
    ("own_home_only", "claims_from_homes_run_every_task_once"),
    // After a spin a helper blocks without looking for a permit again.
    ("spin_without_recheck", "a_spinning_helper_never_misses_a_permit"),
    // A helper runs a job kept from an earlier dispatch in the same slot.
    ("stale_job", "narrow_then_wide_then_narrow_runs_every_task_once"),
    // Withdrawing clears every slot's permits, other dispatches' too.
    ("withdraw_all", "two_callers_share_one_helper"),
    // A resize wakes parked helpers without the lock: one between its check and its wait misses
    // it.
    ("resize_unlocked", "a_resize_during_and_between_dispatches_keeps_every_task_once"),
    // `ForkOnceCell` reads its ready flag Relaxed: the value's writes may not be seen.
    ("once_relaxed", "racing_callers_build_once_and_both_see_the_whole_value"),
    // Participants claim on after an operation's stop flag is set.
    ("claim_after_stop", "no_range_is_claimed_after_the_stop_flag_was_seen"),
    // Participants claiming from homes claim on after the job's stop flag is set.
    ("homes_claim_after_stop", "no_range_is_claimed_from_homes_after_the_stop_flag_was_seen"),
    // Every participant of a fold works on the caller's state.
    ("shared_state", "each_participant_folds_into_its_own_state_made_once"),
    // The first task of one untaken permit is never run.
    ("untaken_lost", "two_callers_share_one_helper"),
    // A helper above the posted helper limit takes a permit.
    ("attach_above_limit", "a_helper_resized_away_takes_no_later_permit"),
    // A scan reads a block's announced prefix Relaxed: before it is written.
    ("look_back_relaxed", "a_scan_finds_each_block_prefix"),
    // A dispatch that finds every slot taken runs its tasks inline, though they may wait for each
    // other.
    ("inline_when_full", "a_caller_that_finds_every_slot_taken_waits_for_one"),
    // A join whose offered half was taken returns without waiting for its taker to detach.
    ("join_skip_wait", "an_offered_half_runs_once_and_the_join_returns_after_it"),
    // A joiner whose half was taken blocks without first checking whether its taker detached.
    ("joiner_blocks_unchecked", "a_slot_freed_by_a_finished_offer_serves_the_next_offer"),
    // A scope returns once its queue is empty, without waiting for the helpers running its tasks.
    ("scope_skip_wait", "spawned_tasks_run_once_and_the_scope_returns_after_them"),
    // A spawn never wakes its scope's owner: a task waiting for one it spawned while every helper
    // is busy waits for ever.
    ("scope_no_owner_wake", "a_task_waiting_for_one_it_spawned_finishes"),
    // A spawn trusts the helpers it counted before its post: after a resize meanwhile, its task
    // waits for a helper that parked.
    ("spawn_unchecked", "a_task_spawned_as_the_pool_narrows_starts"),
    // A helper resized away parks without taking a permit posted before the resize.
    ("park_unscanned", "a_task_spawned_as_the_pool_narrows_starts"),
    // A spawn posts its permit without waking a sleeping helper: no owner ever runs a task of
    // the pool's detached scope, so it waits for ever.
    ("spawn_no_wake", "spawned_tasks_run_once_with_nobody_waiting_on_the_pool"),
    // A spinning helper stops at shutdown after polling the dispatches' slots alone: a spawned
    // task still queued in the slot kept for them is lost.
    ("stop_before_scan", "a_task_spawned_before_the_drop_runs"),
    // A helper resized away stops at shutdown before it scans: a task spawned before the resize,
    // whose permit only it may take, is lost.
    ("park_stops_unscanned", "a_task_spawned_before_the_pool_narrows_runs_after_its_drop"),
    // A broadcast posts its letters without waking the helpers: one asleep never opens its
    // letter.
    ("mail_unwoken", "a_broadcast_runs_once_on_the_caller_and_once_on_the_helper"),
    // A parked helper never reads its mailbox: a letter posted before the pool narrowed waits
    // for ever.
    ("park_ignores_mail", "a_letter_posted_before_the_pool_narrows_is_opened_by_the_parked_helper"),
    // A helper waiting for its own broadcast opens no letters meanwhile: two helpers
    // broadcasting to each other wait for ever.
    ("deaf_broadcaster", "broadcasts_from_the_helpers_into_each_others_mailboxes_finish"),
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
        if same(VARIANTS[index].0, name) {
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
                 (expected a first name of {VARIANTS:?})"
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
