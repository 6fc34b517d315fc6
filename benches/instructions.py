#!/usr/bin/env python3
"""Counts instructions under valgrind's callgrind (instructions are what this noisy
machine's clock cannot settle), for the allocator or for the pool's dispatch.

alloc: per allocation, free and realloc for RayAlloc, the Runtime over it, and raw mimalloc. Runs the alloc
bench's instruction-count child (`RAYFORCE_ALLOC_BENCH_INSTRUCTIONS`): single-threaded
larson steps over 1000 slots of 16..1024 B, each a free and an allocation (pair) or one
realloc, through `#[inline(never)]` functions whose inclusive cost callgrind reports.

pool: per empty two-task dispatch on the caller (`RAYFORCE_POOL_BENCH_INSTRUCTIONS`):
`counted_dispatch`'s inclusive cost, less what waiting costs, which depends on how
callgrind's one-thread-at-a-time scheduling interleaves the helper: the kernel wake-ups a
post pays (`notify_one`, and the lock it takes) and the caller's wait for its helper
(`wait_for_quiet`).

ops: per call of `map_slice` (1,000 u64, into a `Vec`) and `sum` (1,000 f32) on a pool of
one, the operation's own path (`RAYFORCE_OPS_BENCH_INSTRUCTIONS`): the pipeline's set-up,
the loop, combining, the result's allocation.

Each count is the difference between two runs (200,000 and 100,000 steps), over the
difference in steps, so set-up and tear-down cancel.

    python3 benches/instructions.py [alloc|pool|ops]   (needs valgrind; builds the bench first)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

STEPS = (100_000, 200_000)


def bench_binary(bench):
    out = subprocess.run(
        ["cargo", "bench", "--bench", bench, "--no-run", "--message-format=json"],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") \
                and message["target"]["name"] == bench:
            return message["executable"]
    sys.exit(f"no {bench} bench executable in cargo's output")


def inclusive(binary, env, patterns):
    """Inclusive instructions of the calls to each function whose name matches one of
    `patterns` (by the first group of the match; a pattern may name the caller too, as
    `caller>callee`), and the program total, read from callgrind's output file (each
    `calls=` line is followed by the call's cost)."""
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                        binary], check=True, env=dict(os.environ, **env), capture_output=True)
        with open(out_file) as out:
            lines = out.read().splitlines()
    names, caller, target, costs = {}, "", "", {}
    for i, line in enumerate(lines):
        named = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
        if named:
            if named.group(2):
                names[named.group(1)] = named.group(2)
            if line.startswith("cfn="):
                target = names.get(named.group(1), "")
            else:
                caller = names.get(named.group(1), "")
        elif line.startswith("calls="):
            cost = int(lines[i + 1].split()[1])
            for label, pattern in patterns.items():
                callee_pattern = pattern.split(">")[-1]
                if re.search(callee_pattern, target) and (
                        ">" not in pattern or re.search(pattern.split(">")[0], caller)):
                    costs[label] = costs.get(label, 0) + cost
        elif line.startswith("totals:") or line.startswith("summary:"):
            costs["PROGRAM TOTALS"] = int(line.split()[1])
    return costs


def per_step(binary, env_for, patterns):
    low, high = (inclusive(binary, env_for(steps), patterns) for steps in STEPS)
    span = STEPS[1] - STEPS[0]
    return {name: (high[name] - low.get(name, 0)) / span for name in high}


def pool():
    binary = bench_binary("pool")
    patterns = {
        "dispatch": r"counted_dispatch",
        "wake-ups": r"Signal::post>(notify_one|lock|futex|MutexGuard)",
        "waiting": r"Signal::wait_for_quiet",
    }
    env_for = lambda steps: {"RAYFORCE_POOL_BENCH_INSTRUCTIONS": str(steps)}
    steps = per_step(binary, env_for, patterns)
    caller = steps["dispatch"] - steps.get("wake-ups", 0) - steps.get("waiting", 0)
    print(f"caller, per empty two-task dispatch: {caller:.1f} instructions "
          f"(counted_dispatch {steps['dispatch']:.1f}, less kernel wake-ups "
          f"{steps.get('wake-ups', 0):.1f} and waiting for the helper "
          f"{steps.get('waiting', 0):.1f})")


def ops():
    binary = bench_binary("ops")
    patterns = {"map_slice": r"counted_map_slice", "sum": r"counted_sum"}
    env_for = lambda steps: {"RAYFORCE_OPS_BENCH_INSTRUCTIONS": str(steps // 100)}
    steps = per_step(binary, env_for, patterns)
    for name in patterns:
        print(f"{name}, per call on 1,000 items at width 1: {steps[name] * 100:.0f} instructions")


def alloc():
    binary = bench_binary("alloc")
    rows = [("allocation", "pair", "counted_alloc"), ("free", "pair", "counted_free"),
            ("allocate-and-free pair", "pair", "counted_pair"),
            ("realloc", "realloc", "counted_realloc")]
    counts = {}
    patterns = {name: name for name in ("counted_alloc", "counted_free", "counted_realloc")}
    for allocator in ("rayalloc", "runtime", "mimalloc"):
        for op in ("pair", "realloc"):
            env_for = lambda steps: {
                "RAYFORCE_ALLOC_BENCH_INSTRUCTIONS": f"{allocator}:{op}:{steps}"}
            steps = per_step(binary, env_for, patterns)
            if op == "pair":
                steps["counted_pair"] = steps["counted_alloc"] + steps["counted_free"]
            counts[allocator, op] = steps
    print("| operation | RayAlloc | Runtime | mimalloc | RayAlloc / mimalloc |")
    print("|---|---|---|---|---|")
    for label, op, function in rows:
        ray, raw = counts["rayalloc", op][function], counts["mimalloc", op][function]
        runtime = counts["runtime", op][function]
        print(f"| {label} | {ray:.1f} | {runtime:.1f} | {raw:.1f} | {ray / raw:.3f}x |")
    ray, raw = (counts[a, "pair"]["PROGRAM TOTALS"] for a in ("rayalloc", "mimalloc"))
    print(f"\nwhole larson step (the loop too): RayAlloc {ray:.1f}, mimalloc {raw:.1f}, "
          f"{ray / raw:.3f}x")


if __name__ == "__main__":
    {"alloc": alloc, "pool": pool, "ops": ops}[sys.argv[1] if len(sys.argv) > 1 else "alloc"]()
