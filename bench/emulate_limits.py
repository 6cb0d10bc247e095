"""What limits the held-out trigger: two checks on the emulation of
bench/trigger_emulate.py (run it first, after `bash bench/stream_replay.sh`, so
that its --cache exists).

- ``filter``: every labelled Telegram pair is made a candidate too (compared with
  the replay table's statistics), as if the filter kept them all, and the stream
  is decided again with the stored models;
- ``constants``: each held-out family's model is trained again with scikit-learn
  (the scaler of src/svm.rs, the 20 features of `TRAIN`) for a grid of C and
  class weights, and logistic regression, and the stream is decided again.

    bench/.venv/bin/python bench/emulate_limits.py filter|constants --host H --port P   # constants: scikit-learn
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import decision, vec  # noqa: E402
from stream_replay import DB, FAMILIES  # noqa: E402
from trigger_emulate import current, emulate, score, show  # noqa: E402


def all_labelled(db: DB, data: dict) -> None:
    show("emulated", score(data, {f: emulate(data[f], current) for f in FAMILIES}))
    for fam in FAMILIES:
        tbl = f"rp_fold_{fam}"
        have = {(n, o) for n, o, _, _ in data[fam]["cands"]}
        rows = db.x(f"""
          SELECT l.id, e.id, dedup.compare(l.dedup_doc, e.dedup_doc, '{tbl}'),
                 dedup.compare(e.dedup_doc, l.dedup_doc, '{tbl}')
          FROM rp_pairs p JOIN rp_posts ea ON 'tg:' || ea.id = p.a_id JOIN rp_posts eb ON 'tg:' || eb.id = p.b_id,
               LATERAL (SELECT CASE WHEN ea.seq > eb.seq THEN ea.id ELSE eb.id END AS late,
                               CASE WHEN ea.seq > eb.seq THEN eb.id ELSE ea.id END AS early) o
          JOIN {tbl} l ON l.id = o.late JOIN {tbl} e ON e.id = o.early
          WHERE p.set = 'telegram'""")
        add = [r for r in rows if (r[0], r[1]) not in have]
        print(f"  {fam}: {len(add)} labelled pairs added as candidates")
        data[fam]["cands"] = data[fam]["cands"] + add
    show("every labelled pair a candidate", score(data, {f: emulate(data[f], current) for f in FAMILIES}))


def constants(db: DB, data: dict) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    tr = db.x("""SELECT set, chan_a, chan_b, a_dup_b, b_dup_a, dedup.compare(a, b, 'rp_train'),
                        dedup.compare(b, a, 'rp_train') FROM rp_train_pairs""")

    def fit(rows, mk) -> dict:
        X, y = [], []
        for _, _, _, ab, ba, xab, xba in rows:
            for x, lab in ((xab, ab), (xba, ba)):
                X.append(vec(x, None))
                y.append(1 if lab else 0)
        X = np.array(X)
        mean, std = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
        std[std == 0] = 1
        clf = mk().fit(np.where(np.isnan(X), 0, (X - mean) / std), y)
        return dict(mean=mean, std=std, w=clf.coef_[0], b=clf.intercept_[0])

    def run(mk) -> dict:
        marks = {}
        for fam, chans in FAMILIES.items():
            m = fit([r for r in tr if r[0] == "reuters" or not (r[1] in chans or r[2] in chans)], mk)
            seq = {i: s for i, s, _ in data[fam]["posts"]}
            by_new: dict = {}
            for n, o, xno, xon in data[fam]["cands"]:
                by_new.setdefault(n, []).append((o, decision(m, vec(xno, None)), decision(m, vec(xon, None)), xno, xon))
            dup_of: dict = {}
            for i in sorted(seq, key=lambda k: seq[k]):
                o = current(by_new[i]) if i in by_new else None
                if o is not None:
                    dup_of[i] = dup_of.get(o, o)
            marks[fam] = dup_of
        return marks

    for c in (0.03, 0.1, 0.3, 1.0, 3.0, 10.0):
        for cw in (2.0, 3.0, 4.0):
            show(f"linear SVC, C {c}, {cw:g} : 1",
                 score(data, run(lambda: SVC(kernel="linear", C=c, class_weight={1: cw, 0: 1.0}))))
    for c in (0.1, 1.0, 10.0):
        show(f"logistic regression, C {c}, 3 : 1",
             score(data, run(lambda: LogisticRegression(C=c, class_weight={1: 3.0, 0: 1.0}, max_iter=5000))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["filter", "constants"])
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="dedup_replay")
    ap.add_argument("--cache", default="/tmp/trigger_emulate.pickle", help="trigger_emulate.py's cache")
    a = ap.parse_args()
    with open(a.cache, "rb") as f:
        data = pickle.load(f)
    db = DB(a.host, a.port, a.db)
    (all_labelled if a.check == "filter" else constants)(db, data)


if __name__ == "__main__":
    main()
