#!/usr/bin/env python3
"""Markdown tables of benches/sort.rs's results, from criterion's output under
target/criterion: the median point estimate of each row (new/estimates.json, named by the
benchmark.json beside it, as benches/medians.py reads them: criterion writes
`sort_wall/u64_uniform/rayforce_radix/10000000` under sort_wall/u64_uniform_rayforce_radix/
10000000/). One table for wall time (sort_wall), one for process CPU time (sort_cpu): rows
shape x n, a column per implementation, then the ratios.

    python3 benches/sort_table.py [CRITERION_DIR]     (default target/criterion)

With RAYFORCE_BENCH_ALLOC=runtime set, the tables are of the runs on the runtime's
allocator (groups sort_runtime_wall and sort_runtime_cpu), as the bench names them then.
"""
import os
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
IMPLS = ["serial", "rayon", "rayon_stable", "voracious", "rayforce", "rayforce_stable",
         "rayforce_radix"]
TYPES = ["u32", "u64", "f64", "record"]
DISTS = ["uniform", "skewed", "sorted"]
RATIOS = [("rayforce_radix", "rayon"), ("rayforce_radix", "voracious"), ("rayforce", "rayon"),
          ("rayforce_stable", "rayon_stable")]
# rayforce/serial only where the sort falls back to the calling thread.
SERIAL_RATIO_AT = 1000

medians = {}  # (group, shape, impl, n) -> ns
PREFIX = "sort_runtime" if os.environ.get("RAYFORCE_BENCH_ALLOC") == "runtime" else "sort"
for group in [f"{PREFIX}_wall", f"{PREFIX}_cpu"]:
    for estimates in (root / group).glob("**/new/estimates.json"):
        bench = json.loads((estimates.parent / "benchmark.json").read_text())
        shape, _, impl = bench["function_id"].rpartition("/")
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        medians[(bench["group_id"], shape, impl, int(float(bench["value_str"])))] = median


def duration(ns):
    if ns is None:
        return "–"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def ratio(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}"


def n_name(n):
    return f"1e{len(str(n)) - 1}" if str(n).strip("0") == "1" else str(n)


for group, what in [(f"{PREFIX}_wall", "Wall time"), (f"{PREFIX}_cpu", "Process CPU time")]:
    sizes = sorted({k[3] for k in medians if k[0] == group})
    if not sizes:
        print(f"No {group} results under {root}.\n")
        continue
    print(f"### {what} ({group}, median)\n")
    head = ["shape", "n"] + IMPLS + [f"{a}/{b}" for a, b in RATIOS] + ["rayforce/serial"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---", "--:"] + ["--:"] * (len(head) - 2)) + "|")
    for ty in TYPES:
        for dist in DISTS:
            shape = f"{ty}_{dist}"
            for n in sizes:
                got = {i: medians.get((group, shape, i, n)) for i in IMPLS}
                if all(v is None for v in got.values()):
                    continue
                cells = [shape, n_name(n)] + [duration(got[i]) for i in IMPLS]
                cells += [ratio(got[a], got[b]) for a, b in RATIOS]
                cells.append(ratio(got["rayforce"], got["serial"]) if n == SERIAL_RATIO_AT
                             else "")
                print("| " + " | ".join(cells) + " |")
    print()
