#!/usr/bin/env python3
"""Checks that the imports between the modules of src/pg form no cycle (the glue's
layers call downwards only; see ARCHITECTURE.md) and that the pure modules of src/
never use pgrx or src/pg. Run by the lint tier of scripts/test.sh.

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


def main() -> int:
    mods = sorted(f[:-3] for f in os.listdir(PG) if f.endswith(".rs") and f != "mod.rs")
    graph = {}
    for m in mods:
        s = code(os.path.join(PG, m + ".rs"))
        graph[m] = {d for d in mods if d != m and (
            re.search(r"crate::pg::" + d + r"\b", s)
            or re.search(r"use crate::pg::\{[^}]*\b" + d + r"\b", s))}
    state, cycles = {}, []

    def visit(v, path):
        state[v] = 1
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                cycles.append(path[path.index(w):] + [w])
            elif w not in state:
                visit(w, path + [w])
        state[v] = 2

    for v in mods:
        if v not in state:
            visit(v, [v])
    bad = 0
    for c in cycles:
        print("import cycle in src/pg: " + " -> ".join(c))
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
        print(f"imports: {len(mods)} glue modules without a cycle; pure modules free of pgrx")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
