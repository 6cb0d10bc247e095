"""Two training ideas for the held-out trigger, measured offline (session 26):

- **Train where the trigger decides.** The labelled pairs were sampled across the
  whole similarity range, while the trigger only ever weighs candidates (pairs
  that pass the signature filter). Labelled Telegram pairs that are no candidate
  in the replayed stream get training weight --weights (0 leaves them out).
- **How crowded the story is.** A post with many candidates is more often an
  update of a running story than a reprint: the later post's number of
  candidates in the replayed stream, as ln(1 + n), added as a feature (unknown
  for the Reuters pairs).

Offline, on the emulation of bench/trigger_emulate.py (run it first, after
`bash bench/stream_replay.sh`, so that its --cache exists), like
bench/same_source.py: each held-out family's model is trained again with
scikit-learn (linear SVC, C 1, duplicates weighted 3:1, the scaler of
src/svm.rs, `TRAIN`'s 20 features) and the stream is decided again with the
trigger's rule.

    bench/.venv/bin/python bench/train_focus.py --host H --port P   # needs scikit-learn
"""

from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import decision, vec  # noqa: E402
from stream_replay import DB, FAMILIES  # noqa: E402
from trigger_emulate import decide_stream, emulation_args, load_cache, score, show  # noqa: E402


def fit(rows, weight, extra) -> dict:
    """`fit_scaled` with a training weight per pair."""
    import numpy as np
    from sklearn.svm import SVC

    X, y, w = [], [], []
    for r in rows:
        wt = weight(r)
        if wt <= 0:
            continue
        for x, lab in ((r["xab"], r["ab"]), (r["xba"], r["ba"])):
            X.append(vec(x, extra(r)))
            y.append(1 if lab else 0)
            w.append(wt)
    X = np.array(X)
    mean, std = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
    std[std == 0] = 1
    z = np.where(np.isnan(X), 0, (X - mean) / std)
    clf = SVC(kernel="linear", C=1.0, class_weight={1: 3.0, 0: 1.0}).fit(z, y, sample_weight=w)
    return dict(mean=mean, std=std, w=clf.coef_[0], b=clf.intercept_[0])


def run(tr, data, weight, crowd) -> dict:
    marks = {}
    for fam, chans in FAMILIES.items():
        rows = [r for r in tr if r["set"] == "reuters" or not (r["ca"] in chans or r["cb"] in chans)]
        m = fit(rows, weight, lambda r: r["crowd"] if crowd else None)

        def sc(n, o, xno, xon, m=m):
            e = crowd(n) if crowd else None
            return decision(m, vec(xno, e)), decision(m, vec(xon, e))
        marks[fam] = decide_stream(data[fam], sc)
    return marks


def main() -> None:
    ap = emulation_args()
    ap.add_argument("--weights", default="0,0.25,0.5", help="weights tried for labelled pairs that are no candidate")
    a = ap.parse_args()
    data = load_cache(a.cache)
    fam0 = next(iter(FAMILIES))
    seq = {i: s for i, s, _ in data[fam0]["posts"]}
    cand, ncand = set(), {}
    for fam in FAMILIES:
        for n, o, *_ in data[fam]["cands"]:
            cand.add(frozenset((n, o)))
    for n, *_ in data[fam0]["cands"]:
        ncand[n] = ncand.get(n, 0) + 1
    tr = []
    for st, pa, pb, ca, cb, ab, ba, xab, xba in DB(a.host, a.port, a.db).x("""
            SELECT t.set, p.a_id, p.b_id, t.chan_a, t.chan_b, t.a_dup_b, t.b_dup_a,
                   dedup.compare(t.a, t.b, 'rp_train'), dedup.compare(t.b, t.a, 'rp_train')
            FROM rp_train_pairs t JOIN rp_pairs p USING (pair_id)"""):
        r = dict(set=st, ca=ca, cb=cb, ab=ab, ba=ba, xab=xab, xba=xba, cand=True, crowd=float("nan"))
        if st == "telegram":
            ia, ib = pa[3:], pb[3:]
            r["cand"] = frozenset((ia, ib)) in cand
            r["crowd"] = math.log1p(ncand.get(ia if seq[ia] > seq[ib] else ib, 0))
        tr.append(r)
    n_tg = sum(r["set"] == "telegram" for r in tr)
    print(f"labelled Telegram pairs that are candidates: {sum(r['set'] == 'telegram' and r['cand'] for r in tr)} "
          f"of {n_tg}")
    show("20 features (scikit-learn)", score(data, run(tr, data, lambda r: 1.0, None)))
    for w in (float(x) for x in a.weights.split(",")):
        show(f"no-candidate pairs weighted {w:g}",
             score(data, run(tr, data, lambda r, w=w: 1.0 if r["cand"] else w, None)))
    show("20 + ln(1 + candidates)", score(data, run(tr, data, lambda r: 1.0, lambda i: math.log1p(ncand.get(i, 0)))))


if __name__ == "__main__":
    main()
