#!/usr/bin/env python3
"""Prints criterion's median per benchmark, from target/criterion, as tab-separated
`group/function/parameter  median` rows (time in microseconds of wall or CPU time, as the
group measured it). BENCHMARKS.md's ratios are computed from these, within one run.

    python3 benches/medians.py [FILTER]      e.g. FILTER=task_size_wall
"""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
wanted = sys.argv[1] if len(sys.argv) > 1 else ""
rows = []
for estimates in root.glob("**/new/estimates.json"):
    bench = json.loads((estimates.parent / "benchmark.json").read_text())
    if wanted in bench["full_id"]:
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        rows.append((bench["full_id"], median / 1000))
for name, micros in sorted(rows):
    print(f"{name}\t{micros:.2f}")
