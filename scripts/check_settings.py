#!/usr/bin/env python3
"""Checks README.md's settings table against src/gucs.rs.

src/gucs.rs opens with a doc-comment table `| setting | default | range | what |`
listing every `dedup.*` setting. README.md must hold exactly one table with the same
header, and the two must list the same settings with the same defaults and ranges
(the `what` column may be worded differently). The settings gucs.rs registers
(`c"dedup.…"` in `init()`) must be the ones its table lists.

Exit 0 with a one-line summary when everything agrees, 1 with one line per problem.
Standard library only. Usage: python3 scripts/check_settings.py [REPO_ROOT]
"""

import os
import re
import sys

HEADER = ["setting", "default", "range", "what"]


def split_row(line):
    """Cells of a markdown table row; `\\|` inside a cell is not a separator."""
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return None
    cells = re.split(r"(?<!\\)\|", line[1:-1])
    return [c.strip().replace("\\|", "|") for c in cells]


def is_separator(cells):
    return cells is not None and all(re.fullmatch(r":?-{3,}:?", c) for c in cells)


def tables(lines, where):
    """Every `| setting | default | range | what |` table in lines: a list of
    (first line number, {name: (default, range)}, problems)."""
    found = []
    i = 0
    while i < len(lines):
        cells = split_row(lines[i])
        if cells is not None and [c.lower() for c in cells] == HEADER:
            start = i + 1
            problems = []
            rows = {}
            i += 1
            if i >= len(lines) or not is_separator(split_row(lines[i])):
                problems.append(f"{where}:{start}: settings table header is not followed by a |---| row")
            else:
                i += 1
            while i < len(lines):
                row = split_row(lines[i])
                if row is None:
                    break
                if len(row) != len(HEADER):
                    problems.append(f"{where}:{i + 1}: expected {len(HEADER)} cells, found {len(row)}")
                else:
                    name = row[0].strip("`").strip()
                    if name in rows:
                        problems.append(f"{where}:{i + 1}: {name} is listed twice")
                    rows[name] = (norm(row[1]), norm(row[2]), i + 1)
                i += 1
            found.append((start, rows, problems))
        else:
            i += 1
    return found


def norm(cell):
    """A default or range as compared: no backticks, single spaces."""
    return " ".join(cell.replace("`", "").split())


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    gucs_path = os.path.join(root, "src", "gucs.rs")
    readme_path = os.path.join(root, "README.md")
    problems = []

    with open(gucs_path, encoding="utf-8") as f:
        gucs_src = f.read()
    doc = [ln[3:] for ln in gucs_src.splitlines() if ln.startswith("//!")]
    gucs_tables = tables(doc, "src/gucs.rs (doc comment)")
    with open(readme_path, encoding="utf-8") as f:
        readme_tables = tables(f.read().splitlines(), "README.md")

    if len(gucs_tables) != 1:
        print(f"check_settings: src/gucs.rs's doc comment has {len(gucs_tables)} "
              f"'| setting | default | range | what |' tables, expected 1")
        return 1
    if len(readme_tables) != 1:
        lines = ", ".join(str(t[0]) for t in readme_tables) or "none"
        print(f"check_settings: README.md has {len(readme_tables)} "
              f"'| setting | default | range | what |' tables (at lines {lines}), expected exactly 1")
        return 1
    _, code, p1 = gucs_tables[0]
    _, readme, p2 = readme_tables[0]
    problems += p1 + p2

    registered = set(re.findall(r'define_\w+_guc\(\s*c"(dedup\.[a-z_]+)"', gucs_src))
    for name in sorted(registered - code.keys()):
        problems.append(f"src/gucs.rs: {name} is registered in init() but missing from its doc table")
    for name in sorted(code.keys() - registered):
        problems.append(f"src/gucs.rs: {name} is in its doc table but not registered in init()")

    for name in sorted(code.keys() - readme.keys()):
        problems.append(f"README.md: setting {name} (src/gucs.rs) is missing from the settings table")
    for name in sorted(readme.keys() - code.keys()):
        problems.append(f"README.md:{readme[name][2]}: setting {name} is not in src/gucs.rs's doc table")
    for name in sorted(code.keys() & readme.keys()):
        (cd, cr, _), (rd, rr, line) = code[name], readme[name]
        if cd != rd:
            problems.append(f"README.md:{line}: {name} default is '{rd}', src/gucs.rs says '{cd}'")
        if cr != rr:
            problems.append(f"README.md:{line}: {name} range is '{rr}', src/gucs.rs says '{cr}'")

    if problems:
        for p in problems:
            print(f"check_settings: {p}")
        print(f"check_settings: {len(problems)} problem(s); README.md's settings table must match src/gucs.rs")
        return 1
    print(f"check_settings: {len(code)} settings agree between src/gucs.rs and README.md (names, defaults, ranges)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
