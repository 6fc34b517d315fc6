#!/usr/bin/env python3
"""Counts instructions per allocation, free and realloc for RayAlloc and raw mimalloc under
valgrind's callgrind (instructions are what this noisy machine's clock cannot settle).

Runs the alloc bench's instruction-count child (`RAYFORCE_ALLOC_BENCH_INSTRUCTIONS`):
single-threaded larson steps over 1000 slots of 16..1024 B, each a free and an allocation
(pair) or one realloc, through `#[inline(never)]` functions whose inclusive cost callgrind
reports. Each count is the difference between 200,000 and 100,000 steps, over 100,000, so
set-up and tear-down cancel.

    python3 benches/instructions.py          (needs valgrind; builds the bench first)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

STEPS = (100_000, 200_000)


def bench_binary():
    out = subprocess.run(
        ["cargo", "bench", "--bench", "alloc", "--no-run", "--message-format=json"],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") \
                and message["target"]["name"] == "alloc":
            return message["executable"]
    sys.exit("no alloc bench executable in cargo's output")


def inclusive(binary, allocator, op, steps):
    """Inclusive instructions of the calls to each counted function, and the program total,
    read from callgrind's output file (each `calls=` line is followed by the call's cost)."""
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ, RAYFORCE_ALLOC_BENCH_INSTRUCTIONS=f"{allocator}:{op}:{steps}")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                        binary], check=True, env=env, capture_output=True)
        with open(out_file) as out:
            lines = out.read().splitlines()
    names, target, costs = {}, "", {}
    for i, line in enumerate(lines):
        named = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
        if named:
            if named.group(2):
                names[named.group(1)] = named.group(2)
            if line.startswith("cfn="):
                target = names.get(named.group(1), "")
        elif line.startswith("calls="):
            counted = re.search(r"counted_\w+", target)
            if counted:
                cost = int(lines[i + 1].split()[1])
                costs[counted.group(0)] = costs.get(counted.group(0), 0) + cost
        elif line.startswith("totals:") or line.startswith("summary:"):
            costs["PROGRAM TOTALS"] = int(line.split()[1])
    return costs


def per_step(binary, allocator, op):
    low, high = (inclusive(binary, allocator, op, steps) for steps in STEPS)
    span = STEPS[1] - STEPS[0]
    return {name: (high[name] - low.get(name, 0)) / span for name in high}


def main():
    binary = bench_binary()
    rows = [("allocation", "pair", "counted_alloc"), ("free", "pair", "counted_free"),
            ("allocate-and-free pair", "pair", "counted_pair"),
            ("realloc", "realloc", "counted_realloc")]
    counts = {}
    for allocator in ("rayalloc", "mimalloc"):
        for op in ("pair", "realloc"):
            steps = per_step(binary, allocator, op)
            if op == "pair":
                steps["counted_pair"] = steps["counted_alloc"] + steps["counted_free"]
            counts[allocator, op] = steps
    print("| operation | RayAlloc | mimalloc | RayAlloc / mimalloc |")
    print("|---|---|---|---|")
    for label, op, function in rows:
        ray, raw = counts["rayalloc", op][function], counts["mimalloc", op][function]
        print(f"| {label} | {ray:.1f} | {raw:.1f} | {ray / raw:.3f}x |")
    ray, raw = (counts[a, "pair"]["PROGRAM TOTALS"] for a in ("rayalloc", "mimalloc"))
    print(f"\nwhole larson step (the loop too): RayAlloc {ray:.1f}, mimalloc {raw:.1f}, "
          f"{ray / raw:.3f}x")


if __name__ == "__main__":
    main()
