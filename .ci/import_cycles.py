#!/usr/bin/env python3
"""Fails if the files of a crate import each other in a circle.

    python3 .ci/import_cycles.py pool/src

Each file is a module (`ops/map.rs` is `ops::map`, `ops/mod.rs` is `ops`); it depends on
every module a `crate::` or `super::` path in its code names (outside comments and its
`#[cfg(test)]` module; `crate::Name` through the root's `pub use` counts as that module).
The crate root (`lib.rs`), which declares and re-exports every module, and `tests/` are
left out.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "pool/src")
modules = {}
for path in root.rglob("*.rs"):
    rel = path.relative_to(root)
    if rel.parts[0] == "tests" or rel.name in ("lib.rs", "main.rs"):
        continue
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    modules["::".join(parts)] = path


def without_tests(text):
    """The file's code up to its unit-test module, if any, without comments."""
    cut = re.search(r"#\[cfg\((?:all\()?test[^\n]*\n\s*mod tests", text)
    text = text[: cut.start()] if cut else text
    # Comments (doc links name modules they do not import).
    return re.sub(r"//[^\n]*", "", text)


def named(module, text):
    """The modules `text` (in `module`) names by `crate::` and `super::` paths."""
    found = set()
    paths = re.findall(r"\b(crate|super)::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", text)
    # `use crate::{a, b::c}` groups; a capitalised item is a re-export (`through_root`).
    for prefix, group in re.findall(r"\b(crate|super)::\{([^}]*)\}", text):
        paths += [(prefix, item.strip().split(" as ")[0]) for item in group.split(",")
                  if item.strip()[:1].islower()]
    for prefix, path in paths:
        parts = [p for p in path.split("::") if p and p != "self"]
        if prefix == "super":
            parent = module.split("::")[:-1]
            parts = parent + parts
        # The longest prefix of the path that is a module.
        for end in range(len(parts), 0, -1):
            candidate = "::".join(parts[:end])
            if candidate in modules and candidate != module:
                found.add(candidate)
                break
    return found


# Names the crate root re-exports (`pub use pool::Pool;`) stand for their modules.
reexports = {}
lib = root / "lib.rs"
if lib.exists():
    for module, names in re.findall(r"pub use ([a-z_:]+)::\{?([^;}]*)\}?;", lib.read_text()):
        for name in names.split(","):
            name = name.strip().split(" as ")[-1]
            if module in modules:
                reexports[name] = module


def through_root(text):
    """The modules of the root's re-exports that `text` names as `crate::Name` (a path that
    goes on, `crate::scope::scope_in`, names the module, not a re-export of that name)."""
    return {reexports[n] for n in re.findall(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)\b(?!::)", text)
            if n in reexports}


graph = {}
for m, p in modules.items():
    text = without_tests(p.read_text())
    graph[m] = (named(m, text) | through_root(text)) - {m}
# A submodule's parent (`ops` for `ops::map`) declares it; that is not an import.
for m in graph:
    graph[m] = {d for d in graph[m] if not d.startswith(m + "::")}

cycles = []
state = {}


def visit(node, stack):
    state[node] = "open"
    stack.append(node)
    for dep in sorted(graph[node]):
        if state.get(dep) == "open":
            cycles.append(stack[stack.index(dep):] + [dep])
        elif dep not in state:
            visit(dep, stack)
    stack.pop()
    state[node] = "done"


for node in sorted(graph):
    if node not in state:
        visit(node, [])
for cycle in cycles:
    print(f"{root}: import circle: {' -> '.join(cycle)}")
sys.exit(1 if cycles else 0)
