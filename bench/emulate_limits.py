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

import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import decision, vec  # noqa: E402
from stream_replay import DB, FAMILIES  # noqa: E402
from trigger_emulate import current, decide_stream, emulate, emulation_args, fit_scaled, load_cache, score, show  # noqa: E402


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

    def run(make) -> dict:
        marks = {}
        for fam, chans in FAMILIES.items():
            X, y = [], []
            for st, ca, cb, ab, ba, xab, xba in tr:
                if st == "reuters" or not (ca in chans or cb in chans):
                    for x, lab in ((xab, ab), (xba, ba)):
                        X.append(vec(x, None))
                        y.append(1 if lab else 0)
            m = fit_scaled(X, y, make)
            marks[fam] = decide_stream(
                data[fam], lambda n, o, xno, xon, m=m: (decision(m, vec(xno, None)), decision(m, vec(xon, None))))
        return marks

    for c in (0.03, 0.1, 0.3, 1.0, 3.0, 10.0):
        for cw in (2.0, 3.0, 4.0):
            show(f"linear SVC, C {c}, {cw:g} : 1",
                 score(data, run(lambda: SVC(kernel="linear", C=c, class_weight={1: cw, 0: 1.0}))))
    for c in (0.1, 1.0, 10.0):
        show(f"logistic regression, C {c}, 3 : 1",
             score(data, run(lambda: LogisticRegression(C=c, class_weight={1: 3.0, 0: 1.0}, max_iter=5000))))


def main() -> None:
    ap = emulation_args()
    ap.add_argument("check", choices=["filter", "constants"])
    a = ap.parse_args()
    data = load_cache(a.cache)
    db = DB(a.host, a.port, a.db)
    (all_labelled if a.check == "filter" else constants)(db, data)


if __name__ == "__main__":
    main()
