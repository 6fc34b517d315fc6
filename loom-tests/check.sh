#!/usr/bin/env bash
# Runs the pool's loom models (they must pass), then, against each deliberately broken
# pool, the one model `pool/src/broken.rs` names beside it (it must fail: a model that
# cannot fail proves nothing).
# loom aborts on #[should_panic], so a variant is judged by cargo's exit code.
#
#   loom-tests/check.sh            models, then every broken variant
#   LOOM_MAX_PREEMPTIONS=2 ...     a quicker, shallower search of the models (default 3)
#
# Each broken variant runs against the model `src/broken.rs` names beside it (a test name
# filter), at LOOM_VARIANT_PREEMPTIONS (default 2): each must be caught, and two
# preemptions catch every one of them; the models that do not catch a variant would only
# repeat their passing search once per variant (about 17 s each). A filter that matches no model
# runs none, so the variant reads as not caught. The variant is chosen as the models run
# (`RAYFORCE_LOOM_BROKEN`), so one build serves them all.
set -euo pipefail
cd "$(dirname "$0")/.."

export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
variant_preemptions="${LOOM_VARIANT_PREEMPTIONS:-2}"
# Debug assertions stay on in --release, so the pool's own invariant checks run too.
export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true
# The models only: the pool's own (in its library) and the public API's; the pool's other
# test binaries are empty under loom, and linking them once per variant costs minutes.
models=(cargo test -p rayforce-pool -p rayforce-loom-tests --release --lib --test pool_models
    --target-dir target/loom)

echo "loom: models (LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS)"
# The test binaries run at once (cargo would run them one after the other): the pool's and
# the public API's each end on one long model, which leaves the second core to the other.
# Built first, in an assignment that fails the script if the build fails (the compiler's
# messages shown as usual): the pool's library tests, the public API's models, and the
# loom-tests library's (empty) tests.
built=$(RUSTFLAGS="--cfg rayforce_loom" "${models[@]}" --no-run \
    --message-format=json-render-diagnostics)
mapfile -t binaries < <(python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable"):
        print(message["executable"])' <<<"$built")
if [ "${#binaries[@]}" -ne 3 ]; then
    echo "loom: expected the 3 model binaries, built ${#binaries[@]}"
    exit 1
fi
mkdir -p target/loom
pids=()
for binary in "${binaries[@]}"; do
    "$binary" >"target/loom/models-$(basename "$binary").log" 2>&1 &
    pids+=($!)
done
models_failed=0
for i in "${!binaries[@]}"; do
    wait "${pids[$i]}" || models_failed=1
    cat "target/loom/models-$(basename "${binaries[$i]}").log"
done
if [ "$models_failed" -ne 0 ]; then
    echo "loom: a model failed (above)"
    exit 1
fi

failed=0
# The variants and the models that catch them, as listed once in the pool's `src/broken.rs`.
mapfile -t variants < <(sed -n 's/^    ("\([a-z_]\{1,\}\)", "\([a-z_]\{1,\}\)"),$/\1 \2/p' pool/src/broken.rs)
listed=$(grep -c '^    ("' pool/src/broken.rs || true)
if [ "${#variants[@]}" -eq 0 ] || [ "${#variants[@]}" -ne "$listed" ]; then
    echo "loom: read ${#variants[@]} of $listed broken variants in pool/src/broken.rs"
    exit 1
fi
for entry in "${variants[@]}"; do
    variant=${entry%% *}
    model=${entry#* }
    log="target/loom/broken-$variant.log"
    mkdir -p target/loom
    if LOOM_MAX_PREEMPTIONS="$variant_preemptions" \
        RAYFORCE_LOOM_BROKEN="$variant" RUSTFLAGS="--cfg rayforce_loom" \
        "${models[@]}" -- "$model" >"$log" 2>&1; then
        echo "loom: broken variant '$variant' was NOT caught by '$model' (log: $log)"
        failed=1
    elif grep -q "could not compile" "$log"; then
        echo "loom: broken variant '$variant' did not build (log: $log)"
        failed=1
    else
        # A model fails with "... FAILED", or aborts the process mid-model (a panic during
        # a panic); either way the panicking model names itself.
        caught=$( (grep -oE "^thread '[a-z_:]+'" "$log" || true) | sort -u | sed "s/^thread //" | tr '\n' ' ')
        echo "loom: broken variant '$variant' caught by: ${caught:-a model that aborted the process (see $log)}"
    fi
done
exit "$failed"
