#!/usr/bin/env python3
"""Fails if a cross-reference in the docs or the code's comments names nothing that exists.

    python3 .ci/doc_refs.py          # from anywhere; checks the repository this file is in

Two kinds of reference are checked, and each broken one is printed as `file:line: reference`
(exit code 1; 0 when every one resolves):

- **Files**: a path-like name ending in .rs, .sh, .py, .md or .toml (`pool/src/slot.rs`,
  `loom-tests/check.sh`, `Cargo.toml`), in every *.md file of the repository (not under
  target/, and not CHANGELOG.md, which is history) and in every comment line (`//`, `///`,
  `//!`) of the *.rs files under the source, test and bench folders (`RS_ROOTS`). A name
  resolves if it exists relative to the referring file's folder, its crate's root (the
  nearest folder above it with a Cargo.toml), that crate's src/, or the repository's root.
  A bare file name (no `/`) that resolves nowhere of those is also accepted if a file of
  that name exists anywhere in the repository: text that names `look_back.rs` beside a
  mention of the pool means the pool's. URLs are skipped, and so are fenced code blocks in
  Markdown except the command lines of shell blocks (output names files of other machines),
  and the few files of other projects listed in `EXTERNAL`.
- **Sections**: `README "Section"`, `README.md "Section"`, `BENCHMARKS.md, "Section"` and
  `CHANGELOG.md "Section"` (a path before the name, a backtick or a comma after it, several
  names in a row as `"A", "B"`, a line break anywhere, even inside a name) must name a
  heading, of any level, of the file meant: the path if one is given, else BENCHMARKS.md or
  CHANGELOG.md at the root, and for a bare README: pool/src/README.md (the pool's protocol)
  from files under pool/ or loom-tests/, else the root README.md (in a root Markdown file,
  either of the two). A heading matches the name case-insensitively, with backticks
  dropped, also when it goes on with " (...)" or ":" after it.
"""
import os
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
# Folders whose *.rs comments are checked (those that do not exist are skipped).
RS_ROOTS = [
    "src", "pool/src", "pool/tests", "alloc/src", "alloc/tests", "tunables/src",
    "tunables/tests", "tunables/fuzz", "loom-tests", "benches", "tests", "examples", "cli",
]
SKIP_DIRS = {"target", ".git", "node_modules"}
EXTENSIONS = ("rs", "sh", "py", "md", "toml")
# Files of other projects, named as theirs: not this repository's to resolve.
EXTERNAL = {
    "scripts/nbody.rs",  # fork_union's N-body benchmark (benches/common/nbody.rs)
    "src/iter/test.rs",  # rayon's iterator unit tests (README "Coming from rayon")
}

# A path-like name: segments of word characters, dots and dashes, joined by `/`, ending in
# one of the extensions; not part of a longer word, path or URL.
PATH = re.compile(
    r"(?<![\w/.\-:~<>$*])"
    r"((?:\.\.?/)*[\w.\-]*\w(?:/[\w.\-]*\w)*\.(?:" + "|".join(EXTENSIONS) + r"))"
    r"(?![\w/\-]|\.\w)"
)
URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://\S+", re.I)
# A section citation: the file, then one or more quoted names.
CITE = re.compile(
    r"(?<![\w/.\-])((?:[\w.\-]+/)*(?:README(?:\.md)?|BENCHMARKS\.md|CHANGELOG\.md))`?,?"
    r"\s+((?:\"[^\"]{1,100}\"(?:,\s*|\s+and\s+)?)+)"
)
QUOTED = re.compile(r"\"([^\"]{1,100})\"")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+\-]*)")
SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh"}
# A command line in a shell block (its output is skipped).
COMMAND = re.compile(
    r"^\s*(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?:cargo|python3?|bash|sh|valgrind|git|rustup|sudo|\./|\.ci/|loom-tests/|benches/)"
)
COMMENT = re.compile(r"^\s*//[/!]?\s?(.*)$")


def walk(root):
    """Every file under `root`, not descending into the skipped folders."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            yield pathlib.Path(folder) / name


def files_under(root, suffix):
    """Every file under `root` ending in `suffix`, outside the skipped folders."""
    return [p for p in walk(root) if p.name.endswith(suffix)] if root.is_dir() else []


def rel(path):
    return path.relative_to(REPO).as_posix()


def crate_root(path):
    """The nearest folder at or above `path`'s folder that holds a Cargo.toml."""
    folder = path.parent
    while folder != REPO and not (folder / "Cargo.toml").exists():
        folder = folder.parent
    return folder


def bases(path):
    """Where a reference from `path` may be relative to."""
    crate = crate_root(path)
    return [path.parent, crate, crate / "src", REPO]


ALL_NAMES = None


def exists_anywhere(name):
    global ALL_NAMES
    if ALL_NAMES is None:
        ALL_NAMES = {p.name for p in walk(REPO)}
    return name in ALL_NAMES


def resolves(ref, path):
    if any((base / ref).exists() for base in bases(path)):
        return True
    return "/" not in ref and exists_anywhere(ref)


def resolve_file(ref, path):
    """The file `ref` names from `path`, or None."""
    for base in bases(path):
        if (base / ref).is_file():
            return (base / ref).resolve()
    return None


HEADINGS = {}


def normal(text):
    return " ".join(text.replace("`", "").split()).lower()


def headings(md):
    """The normalised headings of the Markdown file `md`, outside fenced code blocks."""
    if md not in HEADINGS:
        found, fence = [], None
        for line in md.read_text(encoding="utf-8").splitlines():
            opened = FENCE.match(line)
            if opened:
                fence = None if fence and opened.group(1).startswith(fence) else (
                    fence or opened.group(1))
                continue
            if fence is None:
                heading = HEADING.match(line)
                if heading:
                    found.append(normal(heading.group(1)))
        HEADINGS[md] = found
    return HEADINGS[md]


def has_heading(md, section):
    want = normal(section)
    return any(
        h == want or h.startswith(want + " (") or h.startswith(want + ":")
        for h in headings(md)
    )


def meant(cited, path, markdown):
    """The files a citation of `cited` (a path ending in README, README.md, ...) from `path`
    may mean, first the one reported."""
    pool_readme = REPO / "pool/src/README.md"
    root_readme = REPO / "README.md"
    if "/" in cited:
        target = resolve_file(cited, path)
        return [target] if target else [REPO / cited]
    if cited in ("BENCHMARKS.md", "CHANGELOG.md"):
        return [REPO / cited]
    # A bare README or README.md.
    where = rel(path)
    if markdown:
        if path.name == "README.md" and where == "pool/src/README.md":
            return [pool_readme]
        if where.startswith("pool/"):
            return [pool_readme, REPO / "pool/README.md"]
        if where.count("/") == 0:
            return [root_readme, pool_readme]
        return [path.parent / "README.md", root_readme]
    if where.startswith(("pool/", "loom-tests/")):
        return [pool_readme]
    return [root_readme]


def check_citations(text, line_of, path, markdown, broken):
    """Citations in `text`, whose offsets `line_of` maps to line numbers."""
    for cite in CITE.finditer(text):
        cited = cite.group(1)
        targets = meant(cited, path, markdown)
        for name in QUOTED.finditer(cite.group(2)):
            section = name.group(1)
            if not any(t.is_file() and has_heading(t, section) for t in targets):
                where = rel(targets[0]) if targets[0].is_relative_to(REPO) else targets[0]
                broken.append((
                    rel(path), line_of(cite.start()),
                    f'{cited} "{" ".join(section.split())}" (no such heading in {where})',
                ))


def check_paths(line, number, path, broken):
    line = URL.sub(" ", line)
    for ref in PATH.finditer(line):
        name = ref.group(1)
        if name not in EXTERNAL and not resolves(name, path):
            broken.append((rel(path), number, name))


def joined(lines):
    """The lines as one text, and a map from an offset in it to a 1-based line number."""
    starts, text = [], []
    offset = 0
    for number, line in lines:
        starts.append((offset, number))
        text.append(line)
        offset += len(line) + 1

    def line_of(at):
        found = starts[0][1]
        for start, number in starts:
            if start > at:
                break
            found = number
        return found

    return "\n".join(text), line_of


def check_markdown(md, broken):
    prose, fence, shell = [], None, False
    for number, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        opened = FENCE.match(line)
        if opened:
            if fence and opened.group(1).startswith(fence):
                fence = None
            elif fence is None:
                fence, shell = opened.group(1), opened.group(2).lower() in SHELL_LANGS
            continue
        if fence is not None:
            if shell and COMMAND.match(line):
                check_paths(line.split("#")[0], number, md, broken)
            continue
        check_paths(line, number, md, broken)
        prose.append((number, line))
    if prose:
        check_citations(*joined(prose), md, True, broken)


def check_rust(rs, broken):
    """Comment lines only; consecutive ones form one text for citations."""
    runs, run = [], []
    for number, line in enumerate(rs.read_text(encoding="utf-8").splitlines(), 1):
        comment = COMMENT.match(line)
        if comment:
            check_paths(comment.group(1), number, rs, broken)
            run.append((number, comment.group(1)))
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    for run in runs:
        check_citations(*joined(run), rs, False, broken)


def main():
    broken = []
    for md in files_under(REPO, ".md"):
        if rel(md) != "CHANGELOG.md":
            check_markdown(md, broken)
    seen = set()
    for root in RS_ROOTS:
        for rs in files_under(REPO / root, ".rs"):
            if rs not in seen:
                seen.add(rs)
                check_rust(rs, broken)
    for file, line, ref in sorted(set(broken), key=lambda b: (b[0], b[1], b[2])):
        print(f"{file}:{line}: {ref}")
    if broken:
        print(f"doc_refs: {len(set(broken))} broken reference(s)", file=sys.stderr)
        return 1
    print("doc_refs: every file and section reference resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
