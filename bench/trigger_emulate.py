"""Emulates the trigger's choice on a replayed stream, so that decision rules can be
compared without a build: after `bash bench/stream_replay.sh` (held-out families),
every candidate pair of each replay table (the later row's signature `%` an
earlier one's) is compared through `dedup.compare` with the table's own
statistics, scored by the family's model in Python (the linear decision of
src/svm.rs), and the stream is decided again in publication order.

    python3 bench/trigger_emulate.py [--host H --port P --db DB]

Prints the benchmark's directional and any-direction P / R / F1 of the replay's
own marks, of the current rule emulated (within a few rows of the replay: the
replay weighs with the statistics of the moment, the emulation with the final
ones) and of the variants in RULES. The candidates and vectors are fetched once
into --cache (delete it after a new replay).
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_replay import DB, DUP, FAMILIES, prf  # noqa: E402


def decision(model: dict, x: list[float]) -> float:
    acc = model["bias"]
    for f, w, m, s in zip(model["features"], model["weights"], model["mean"], model["std"]):
        v = x[f]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            v = m
        elif math.isinf(v):
            v = 0.0
        acc += w * ((v - m) / s)
    return acc


def parse_model(hexbytes: str) -> dict:
    """The linear model of an exported model's bytes (src/codec.rs: a 6-byte header,
    then bincode 1 with varint integers, the fields of `svm::Model` in order)."""
    b = bytes.fromhex(hexbytes)[6:]
    pos = 0

    def uint() -> int:
        nonlocal pos
        t = b[pos]
        pos += 1
        if t < 251:
            return t
        n = {251: 2, 252: 4, 253: 8}[t]
        v = int.from_bytes(b[pos:pos + n], "little")
        pos += n
        return v

    def f64() -> float:
        nonlocal pos
        v = struct.unpack_from("<d", b, pos)[0]
        pos += 8
        return v

    feats = [uint() for _ in range(uint())]
    mean = [f64() for _ in range(uint())]
    std = [f64() for _ in range(uint())]
    assert uint() == 0, "linear kernel only"
    bias = f64()
    weights = [f64() for _ in range(uint())]
    return dict(features=feats, mean=mean, std=std, bias=bias, weights=weights)


def fetch(db: DB, fam: str) -> dict:
    tbl = f"rp_fold_{fam}"
    m = db.one("SELECT min_shared_keys FROM dedup.collection_limits(%s)", (tbl,))
    db.x("SELECT set_config('dedup.min_shared_keys', %s, false)", (str(m),))
    posts = db.x(f"SELECT r.id, e.seq, e.family FROM {tbl} r JOIN rp_posts e USING (id)")
    cands = db.x(f"""
        SELECT n.id, o.id, dedup.compare(n.dedup_doc, o.dedup_doc, '{tbl}'),
               dedup.compare(o.dedup_doc, n.dedup_doc, '{tbl}')
        FROM {tbl} n JOIN rp_posts en ON en.id = n.id, {tbl} o JOIN rp_posts eo ON eo.id = o.id
        WHERE eo.seq < en.seq AND n.dedup_sig OPERATOR(dedup.%) o.dedup_sig""")
    marks = dict(db.x(f"SELECT id, duplicate_of FROM {tbl}"))
    return dict(posts=posts, cands=cands, marks=marks, model=parse_model(db.one("SELECT dedup.export_model(%s)", (tbl,))["model"]))


def emulate(d: dict, rule) -> dict:
    """Decides every row of one replay table again, in publication order; returns
    {id: duplicate_of}."""
    model = d["model"]
    seq = {i: s for i, s, _ in d["posts"]}
    by_new: dict = {}
    for n, o, xno, xon in d["cands"]:
        by_new.setdefault(n, []).append((o, decision(model, xno), decision(model, xon), xno, xon))
    dup_of: dict = {}
    ctx = dict(seq=seq, root=lambda k: dup_of.get(k, k))
    for i in sorted(seq, key=lambda k: seq[k]):
        judged = by_new.get(i, [])
        o = (rule(judged, ctx) if getattr(rule, "with_ctx", False) else rule(judged)) if judged else None
        if o is not None:
            dup_of[i] = dup_of.get(o, o)
    return dup_of


def score(data: dict, marks_of: dict) -> dict:
    c = dict(tp=0, fp=0, fn=0, dtp=0, dfp=0, dfn=0)
    seq, fam_of = {}, {}
    for fam in FAMILIES:
        for i, s, f in data[fam]["posts"]:
            seq[i], fam_of[i] = s, f
    for label, a, b in data["pairs"]:
        a_first = seq[a] < seq[b]
        early, late = (a, b) if a_first else (b, a)
        fam = fam_of[late]
        if fam not in marks_of:
            continue
        m = marks_of[fam]
        marked = m.get(late) is not None and m.get(late) == m.get(early, early)
        truth_pair = label in DUP
        later_is_a = not a_first
        truth_dir = label == "mutual" or (label == "a_in_b" and later_is_a) or (label == "b_in_a" and not later_is_a)
        c["tp"] += marked and truth_pair
        c["fp"] += marked and not truth_pair
        c["fn"] += (not marked) and truth_pair
        c["dtp"] += marked and truth_dir
        c["dfp"] += marked and not truth_dir
        c["dfn"] += (not marked) and truth_dir
    return c


def show(tag: str, c: dict) -> None:
    p, r, f = prf(c["tp"], c["fp"], c["fn"])
    dp, dr, df = prf(c["dtp"], c["dfp"], c["dfn"])
    print(f"{tag:<40} any P {p:.3f} R {r:.3f} F1 {f:.3f}   directional P {dp:.3f} R {dr:.3f} F1 {df:.3f}", flush=True)


# A rule takes the judged candidates of a new row, [(key, score new→cand, score
# cand→new, vector new→cand, vector cand→new)], and returns the key it duplicates
# or None.


def current(j):
    """src/decide.rs `choose`: the candidate with the highest positive score."""
    best = max((t for t in j if t[1] > 0), key=lambda t: t[1], default=None)
    return best[0] if best else None


def fit_scaled(X, y, make=None) -> dict:
    """A linear model as the product trains one, in scikit-learn: the scaler of
    src/svm.rs (mean and population std, unknown values at the mean), then
    `make()` (default: linear SVC, C 1, duplicates weighted 3 : 1). Returns the
    mean, std, weights and bias that `linear_decision` reads."""
    import numpy as np
    from sklearn.svm import SVC

    X = np.array(X)
    mean, std = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
    std[std == 0] = 1
    z = np.where(np.isnan(X), 0, (X - mean) / std)
    clf = (make or (lambda: SVC(kernel="linear", C=1.0, class_weight={1: 3.0, 0: 1.0})))().fit(z, y)
    return dict(mean=mean, std=std, w=clf.coef_[0], b=clf.intercept_[0])


def linear_decision(m: dict, v) -> float:
    """`fit_scaled`'s model on one vector (NaN: unknown, at the mean)."""
    import numpy as np

    v = np.array(v, dtype=float)
    return float(np.where(np.isnan(v), 0, (v - m["mean"]) / m["std"]) @ m["w"] + m["b"])


def decide_stream(d: dict, score) -> dict:
    """One replay table decided again with the current rule, in publication order,
    each candidate pair scored by `score(new, cand, x new→cand, x cand→new)` ->
    (score new→cand, score cand→new); returns {id: duplicate_of}."""
    seq = {i: s for i, s, _ in d["posts"]}
    by_new: dict = {}
    for n, o, xno, xon in d["cands"]:
        sno, son = score(n, o, xno, xon)
        by_new.setdefault(n, []).append((o, sno, son, xno, xon))
    dup_of: dict = {}
    for i in sorted(seq, key=lambda k: seq[k]):
        o = current(by_new[i]) if i in by_new else None
        if o is not None:
            dup_of[i] = dup_of.get(o, o)
    return dup_of


def run_rules(data: dict) -> None:
    actual = {fam: {k: v for k, v in data[fam]["marks"].items() if v is not None} for fam in FAMILIES}
    show("actual replay marks", score(data, actual))
    emu = {fam: emulate(data[fam], current) for fam in FAMILIES}
    agree = sum(emu[f].get(k) == actual[f].get(k) for f in FAMILIES for k, _, _ in data[f]["posts"])
    total = sum(len(data[f]["posts"]) for f in FAMILIES)
    print(f"emulation agrees with the replay on {agree} of {total} rows")
    show("emulated, current rule", score(data, emu))
    for name, rule in RULES.items():
        show(name, score(data, {fam: emulate(data[fam], rule) for fam in FAMILIES}))


def margin_rule(delta):
    """Also asks that the new row not be much more contained in the candidate than
    the candidate in it (the later post that adds a sentence)."""

    def r(j):
        ok = [t for t in j if t[1] > 0 and t[1] >= t[2] - delta]
        best = max(ok, key=lambda t: t[1], default=None)
        return best[0] if best else None
    return r


def thr_rule(t0):
    """Another decision threshold than 0."""

    def r(j):
        best = max((t for t in j if t[1] > t0), key=lambda t: t[1], default=None)
        return best[0] if best else None
    return r


def earliest_root(delta):
    """Among the candidates the new row duplicates (score > 0) whose score is within
    delta of the best, the one whose group's original came first: the original a
    group's rule (`groups`: earliest first) would pick."""

    def r(j, ctx):
        pos = [t for t in j if t[1] > 0]
        if not pos:
            return None
        top = max(t[1] for t in pos)
        ok = [t for t in pos if t[1] >= top - delta]
        best = min(ok, key=lambda t: (ctx["seq"][ctx["root"](t[0])], -t[1]))
        return best[0]
    r.with_ctx = True
    return r


RULES = {}
for dlt in (0.5, 1.0, 2.0, 1e9):
    RULES[f"earliest root within {dlt} of best"] = earliest_root(dlt)
for dlt in (0.0, 0.25, 0.5, 1.0, 1.5, 2.0):
    RULES[f"new score >= cand score - {dlt}"] = margin_rule(dlt)
for t0 in (-0.3, -0.2, -0.1, 0.1, 0.2, 0.3):
    RULES[f"threshold {t0}"] = thr_rule(t0)


def emulation_args() -> argparse.ArgumentParser:
    """The options every script reading the emulation takes: the bench cluster's
    replay database and this script's --cache."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="dedup_replay")
    ap.add_argument("--cache", default="/tmp/trigger_emulate.pickle", help="trigger_emulate.py's cache")
    return ap


def load_cache(path: str) -> dict:
    """The candidates and vectors this script fetched (run it first)."""
    with open(path, "rb") as f:
        return pickle.load(f)


def main() -> None:
    a = emulation_args().parse_args()
    if os.path.exists(a.cache):
        data = load_cache(a.cache)
    else:
        db = DB(a.host, a.port, a.db)
        data = {fam: fetch(db, fam) for fam in FAMILIES}
        data["pairs"] = db.x("""
            SELECT p.label, ea.id, eb.id FROM rp_pairs p
            JOIN rp_posts ea ON 'tg:' || ea.id = p.a_id JOIN rp_posts eb ON 'tg:' || eb.id = p.b_id
            WHERE p.set = 'telegram'""")
        with open(a.cache, "wb") as f:
            pickle.dump(data, f)
    run_rules(data)


if __name__ == "__main__":
    main()
