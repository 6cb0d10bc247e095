"""Training pairs implied by the labels (session 27), measured offline.

Posts that occur in several labelled pairs imply labels for pairs nobody judged:
if x adds nothing to b and b adds nothing to c, x adds nothing to c; if x and b
are the same item (`mutual`) and b and c are `related` or `different`, so are x
and c. Those implied pairs (146 on the public Telegram pairs) are added to each
held-out family's training (the directions an implication decides), as
bench/train_focus.py retrains it: scikit-learn linear SVC, C 1, duplicates 3:1,
the scaler of src/svm.rs, `TRAIN`'s 20 features; the stream is decided again
with the trigger's rule.

    bench/.venv/bin/python bench/implied_pairs.py --host H --port P [--mode all|pos|neg]
"""

import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import decision, vec  # noqa: E402
from stream_replay import DB, FAMILIES  # noqa: E402
from trigger_emulate import decide_stream, emulation_args, load_cache, score, show  # noqa: E402


def fit(rows):
    import numpy as np
    from sklearn.svm import SVC

    X, y = [], []
    for r in rows:
        for x, lab in ((r["xab"], r["ab"]), (r["xba"], r["ba"])):
            if lab is None:
                continue
            X.append(vec(x, None))
            y.append(1 if lab else 0)
    X = np.array(X)
    mean, std = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
    std[std == 0] = 1
    z = np.where(np.isnan(X), 0, (X - mean) / std)
    clf = SVC(kernel="linear", C=1.0, class_weight={1: 3.0, 0: 1.0}).fit(z, y)
    return dict(mean=mean, std=std, w=clf.coef_[0], b=clf.intercept_[0])


def run(tr, data):
    marks = {}
    for fam, chans in FAMILIES.items():
        rows = [r for r in tr if r["set"] == "reuters" or not (r["ca"] in chans or r["cb"] in chans)]
        m = fit(rows)
        marks[fam] = decide_stream(
            data[fam], lambda n, o, xno, xon, m=m: (decision(m, vec(xno, None)), decision(m, vec(xon, None)))
        )
    return marks


ap = emulation_args()
ap.add_argument("--mode", default="all", help="all, pos (only implied duplicates) or neg")
a = ap.parse_args()
data = load_cache(a.cache)
db = DB(a.host, a.port, a.db)
tr, known = [], set()
rows = db.x("""SELECT t.set, p.a_id, p.b_id, t.chan_a, t.chan_b, t.a_dup_b, t.b_dup_a, t.label,
               dedup.compare(t.a, t.b, 'rp_train'), dedup.compare(t.b, t.a, 'rp_train')
        FROM rp_train_pairs t JOIN rp_pairs p USING (pair_id)""")
adj = collections.defaultdict(dict)
for st, pa, pb, ca, cb, ab, ba, lab, xab, xba in rows:
    tr.append(dict(set=st, ca=ca, cb=cb, ab=ab, ba=ba, xab=xab, xba=xba))
    if st == "telegram":
        known.add(frozenset((pa, pb)))
        adj[pa][pb] = (ab, ba, lab)
        adj[pb][pa] = (ba, ab, lab)
chan = lambda i: i.split(":")[1]
imp = {}
for b in adj:
    for x, (xb, bx, l1) in adj[b].items():
        for c, (bc, cb_, l2) in adj[b].items():
            if x >= c or frozenset((x, c)) in known:
                continue
            # D(x,c) if D(x,b) and D(b,c); D(c,x) if D(c,b) and D(b,x)
            xc = True if (xb and bc) else None
            cx = True if (cb_ and bx) else None
            if l1 == "mutual" and l2 in ("related", "different"):
                xc, cx = False, False
            if l2 == "mutual" and l1 in ("related", "different"):
                xc, cx = False, False
            if xc is None and cx is None:
                continue
            if a.mode == "pos" and not (xc or cx):
                continue
            if a.mode == "neg" and (xc or cx):
                continue
            if a.mode == "both" and (xc is None or cx is None):
                continue
            imp[(x, c)] = (xc, cx)
print("implied", len(imp), collections.Counter(imp.values()))
for (x, c), (xc, cx) in imp.items():
    ((xa, xb2),) = db.x(
        """SELECT dedup.compare(a.d, b.d, 'rp_train'), dedup.compare(b.d, a.d, 'rp_train') FROM
        (SELECT CASE WHEN p.a_id = %s THEN t.a ELSE t.b END d FROM rp_train_pairs t JOIN rp_pairs p USING (pair_id) WHERE %s IN (p.a_id, p.b_id) LIMIT 1) a,
        (SELECT CASE WHEN p.a_id = %s THEN t.a ELSE t.b END d FROM rp_train_pairs t JOIN rp_pairs p USING (pair_id) WHERE %s IN (p.a_id, p.b_id) LIMIT 1) b""",
        (x, x, c, c),
    )
    tr.append(dict(set="telegram", ca=chan(x), cb=chan(c), ab=xc, ba=cx, xab=xa, xba=xb2, implied=True))
base = [r for r in tr if not r.get("implied")]
show("labelled only", score(data, run(base, data)))
show(f"with implied ({a.mode})", score(data, run(tr, data)))
