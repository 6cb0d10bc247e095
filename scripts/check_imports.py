#!/usr/bin/env python3
"""Checks that the imports between the modules of src/pg form no cycle (the glue's
layers call downwards only; see ARCHITECTURE.md), that the pure modules of src/
never use pgrx or src/pg, and that they form no cycle among themselves either (a
directory module such as src/text counts as one; test modules are left out). Run
by the lint tier of scripts/test.sh.

    python3 scripts/check_imports.py
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PG = os.path.join(ROOT, "src", "pg")


def code(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return re.sub(r"//[^\n]*", "", f.read())


def without_tests(s: str) -> str:
    """The code before a file's `#[cfg(test)] mod …` (the tests come last)."""
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", s)
    return s[: m.start()] if m else s


def find_cycles(graph: dict) -> list:
    state, cycles = {}, []

    def visit(v, path):
        state[v] = 1
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                cycles.append(path[path.index(w):] + [w])
            elif w not in state:
                visit(w, path + [w])
        state[v] = 2

    for v in sorted(graph):
        if v not in state:
            visit(v, [v])
    return cycles


def pure_graph() -> dict:
    """Top-level pure modules (src/X.rs, or src/X/ as one) and the others each uses."""
    src = os.path.join(ROOT, "src")
    files = {}
    for f in sorted(os.listdir(src)):
        p = os.path.join(src, f)
        if f.endswith(".rs") and f != "lib.rs":
            files.setdefault(f[:-3], []).append(p)
        elif os.path.isdir(p) and f != "pg":
            files.setdefault(f, []).extend(
                os.path.join(p, x) for x in sorted(os.listdir(p))
                if x.endswith(".rs") and x != "tests.rs" and not x.endswith("_tests.rs"))
    text = {m: "".join(without_tests(code(p)) for p in ps) for m, ps in files.items()}
    return {m: {d for d in files if d != m and (
        re.search(r"crate::" + d + r"\b", s) or re.search(r"use crate::\{[^}]*\b" + d + r"\b", s))}
        for m, s in text.items()}


def main() -> int:
    mods = sorted(f[:-3] for f in os.listdir(PG) if f.endswith(".rs") and f != "mod.rs")
    graph = {}
    for m in mods:
        s = code(os.path.join(PG, m + ".rs"))
        graph[m] = {d for d in mods if d != m and (
            re.search(r"crate::pg::" + d + r"\b", s)
            or re.search(r"use crate::pg::\{[^}]*\b" + d + r"\b", s))}
    bad = 0
    for c in find_cycles(graph):
        print("import cycle in src/pg: " + " -> ".join(c))
        bad += 1
    pure = pure_graph()
    for c in find_cycles(pure):
        print("import cycle among the pure modules: " + " -> ".join(c))
        bad += 1
    # The pure modules: every .rs under src/ outside src/pg, except the crate root.
    for dirpath, _, files in os.walk(os.path.join(ROOT, "src")):
        if os.path.abspath(dirpath).startswith(os.path.abspath(PG)):
            continue
        for f in files:
            p = os.path.join(dirpath, f)
            rel = os.path.relpath(p, ROOT)
            if not f.endswith(".rs") or rel in ("src/lib.rs", "src/gucs.rs"):
                continue
            s = code(p)
            if re.search(r"\bpgrx\b|crate::pg::", s):
                print(f"{rel}: a pure module uses pgrx or src/pg")
                bad += 1
    if not bad:
        print(f"imports: {len(mods)} glue modules and {len(pure)} pure modules without a cycle; "
              "pure modules free of pgrx")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
