#!/usr/bin/env python3
"""Checks that the workspace's `rust-version` is true for what a user builds: every
normal or build dependency (not dev ones, not loom) of the published crates and of the
command line (`rayforce-cli`, not published, built from the repository), as resolved in
Cargo.lock, declares a rust-version no newer than ours. The crates' own code is
held to it by clippy's `incompatible_msrv` lint (std APIs newer than rust-version are
errors under `-D warnings`). Exits 1 naming each dependency that needs a newer Rust."""
import json
import subprocess
import sys

meta = json.loads(
    subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--locked"])
)
packages = {p["id"]: p for p in meta["packages"]}


def version(text):
    return tuple(int(part) for part in text.split(".")[:3])


published = [
    p
    for p in meta["packages"]
    if p["id"] in meta["workspace_members"]
    and (p["publish"] != [] or p["name"] == "rayforce-cli")
]
ours = version(published[0]["rust_version"])
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
seen, todo = set(), [p["id"] for p in published]
while todo:
    node = nodes[todo.pop()]
    for dep in node["deps"]:
        # Normal and build dependencies; not dev ones, nor loom (only under --cfg rayforce_loom).
        kinds = {
            k["kind"] for k in dep["dep_kinds"] if k.get("target") != "cfg(rayforce_loom)"
        }
        if (None in kinds or "build" in kinds) and dep["pkg"] not in seen:
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])
too_new = [
    (packages[d]["name"], packages[d]["version"], packages[d]["rust_version"])
    for d in sorted(seen)
    if packages[d].get("rust_version") and version(packages[d]["rust_version"]) > ours
]
for name, ver, needs in too_new:
    print(f"msrv: {name} {ver} needs Rust {needs}, above rust-version {published[0]['rust_version']}")
print(f"msrv: {len(seen)} normal dependencies checked against rust-version {published[0]['rust_version']}")
sys.exit(1 if too_new else 0)
