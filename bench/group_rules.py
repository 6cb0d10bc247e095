"""Would the trigger mark better if it looked at the whole group a candidate
belongs to? Half of the held-out wrong marks come through a group: the new post
duplicates one member, and the labelled pair is with another member (often the
group's original) that the new post adds something to.

Offline, on the emulation of bench/trigger_emulate.py (run it first, after
`bash bench/stream_replay.sh`, so that its --cache exists), with the held-out
families' stored models. Each rule groups the new post's candidates by the group
they belong to and admits a group only if:
  - `min`: no candidate of the group scores at or below -tau against the new post
    (complete linkage over the candidates);
  - `mean`: the candidates of the group score above tau on average;
  - `frac`: at most a share tau of them score at or below zero;
  - `root`: the group's original, compared with the new post through
    `dedup.compare` even when it is no candidate, scores above -tau; `root-skip`
    passes over that group to the next, `root-none` marks nothing.
The best-scoring candidate of the admitted groups decides, as src/decide.rs does.
First it prints the current rule's directional figures by the labels' confidence.

    bench/.venv/bin/python bench/group_rules.py --host H --port P
"""

from __future__ import annotations

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_replay import DB, DUP, FAMILIES, prf  # noqa: E402
from trigger_emulate import current, decision, emulate, emulation_args, load_cache, score, show  # noqa: E402


def linkage(tau: float, mode: str):
    """A rule of trigger_emulate's form that admits a group by its candidates."""

    def r(j, ctx):
        groups: dict = {}
        for t in j:
            groups.setdefault(ctx["root"](t[0]), []).append(t)
        best = None
        for ts in groups.values():
            top = max(ts, key=lambda t: t[1])
            scores = [t[1] for t in ts]
            if top[1] <= 0:
                continue
            if mode == "min" and min(scores) <= -tau:
                continue
            if mode == "mean" and sum(scores) / len(scores) <= tau:
                continue
            if mode == "frac" and sum(s <= 0 for s in scores) / len(scores) > tau:
                continue
            if best is None or top[1] > best[1]:
                best = top
        return best[0] if best else None
    r.with_ctx = True
    return r


def root_check(db: DB, d: dict, fam: str, tau: float, skip: bool, known_vectors: dict) -> dict:
    """The stream decided again, each chosen group's original compared with the new
    post first; returns {id: duplicate_of}."""
    model = d["model"]
    seq = {i: s for i, s, _ in d["posts"]}
    vectors, by_new = {}, {}
    for n, o, xno, xon in d["cands"]:
        vectors[(n, o)], vectors[(o, n)] = xno, xon
        by_new.setdefault(n, []).append((o, decision(model, xno)))

    def vector(n, o):
        if (n, o) not in vectors:
            if (fam, n, o) not in known_vectors:
                tbl = f"rp_fold_{fam}"
                known_vectors[(fam, n, o)] = db.one(
                    f"SELECT dedup.compare(n.dedup_doc, o.dedup_doc, '{tbl}') FROM {tbl} n, {tbl} o "
                    "WHERE n.id = %s AND o.id = %s", (n, o))
            return known_vectors[(fam, n, o)]
        return vectors[(n, o)]

    dup_of: dict = {}
    for i in sorted(seq, key=lambda k: seq[k]):
        for o, s in sorted((t for t in by_new.get(i, []) if t[1] > 0), key=lambda t: -t[1]):
            root = dup_of.get(o, o)
            if root != o and decision(model, vector(i, root)) <= -tau:
                if skip:
                    continue
                break
            dup_of[i] = root
            break
    return dup_of


def by_confidence(data: dict, marks_of: dict, path: str) -> None:
    """Directional P / R / F1 of the marks over the labelled pairs of each confidence."""
    with open(path, newline="") as f:
        conf = {(r["id_a"], r["id_b"]): r["confidence"] for r in csv.DictReader(f, delimiter="\t")}
    seq, fam_of = {}, {}
    for fam in FAMILIES:
        for i, s, f in data[fam]["posts"]:
            seq[i], fam_of[i] = s, f
    counts: dict = {}
    for label, a, b in data["pairs"]:
        early, late = (a, b) if seq[a] < seq[b] else (b, a)
        m = marks_of[fam_of[late]]
        marked = m.get(late) is not None and m.get(late) == m.get(early, early)
        truth = label == "mutual" or (label in DUP and (label == "a_in_b") == (late == a))
        c = counts.setdefault(conf.get((a, b), "?"), [0, 0, 0, 0])
        c[0] += 1
        c[1] += marked and truth
        c[2] += marked and not truth
        c[3] += truth and not marked
    for k, (n, tp, fp, fn) in sorted(counts.items()):
        p, r, f1 = prf(tp, fp, fn)
        print(f"  confidence {k:<6} {n:>4} pairs: directional P {p:.3f} R {r:.3f} F1 {f1:.3f}")


def main() -> None:
    ap = emulation_args()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/data"))
    a = ap.parse_args()
    data = load_cache(a.cache)
    emulated = {f: emulate(data[f], current) for f in FAMILIES}
    by_confidence(data, emulated, os.path.join(a.data, "telegram_ru", "labelled_pairs.tsv"))
    show("emulated, current rule", score(data, emulated))
    for mode, taus in (("min", (0, 1, 2, 3, 4)), ("mean", (-1, -0.5, 0, 0.5)), ("frac", (0.25, 0.5, 0.75))):
        for tau in taus:
            rule = linkage(tau, mode)
            show(f"{mode} tau {tau}", score(data, {f: emulate(data[f], rule) for f in FAMILIES}))
    db = DB(a.host, a.port, a.db)
    known: dict = {}
    for skip in (True, False):
        for tau in (0, 1, 2, 3, 5):
            name = f"root-{'skip' if skip else 'none'} tau {tau}"
            show(name, score(data, {f: root_check(db, data[f], f, tau, skip, known) for f in FAMILIES}))


if __name__ == "__main__":
    main()
