"""Term associations learned from the training pairs (session 27), measured offline.

The paraphrases the features miss share few words ("ЦБ" for "Банк России"). A
model could learn such pairs of terms from the labelled pairs it is trained on:
for each training pair, every term a has and b lacks against every term b has and
a lacks; a term pair counts as associated when it occurs in at least --min-pos
paraphrase pairs and in paraphrase pairs at least --min-prec of the times it
occurs. One feature per direction: the idf share of a's terms that b lacks but
covers through an associated term (training pairs leave their own counts out).

Both corpora as bench/short_texts.py reads them (ParaPhraser strict and loose
against not; MSRP), one collection each, exported once through dedup.compare and
dedup.terms; then 5-fold cross-validation in scikit-learn (linear SVC, classes
balanced, the scaler of src/svm.rs, both directions trained, a pair scored by the
larger direction) over the 22 features of short_texts.sh with and without the
association feature. Folds are drawn per pair (as the benchmark does) and per
connected group of pairs that share a text (`--grouped`): ParaPhraser repeats
1,452 of its 12,033 texts, up to 76 times, so per-pair folds let an association
learned from one pair of a headline score another pair of the same headline.

    bench/.venv/bin/python bench/term_associations.py ../shared/data --host H --port P [--grouped]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import NAMES  # noqa: E402
from short_texts import SHORT_FEATURES, msrp, paraphraser  # noqa: E402
from stream_replay import DB  # noqa: E402

USED = [NAMES.index(n) for n in SHORT_FEATURES]


def export(db: DB, name: str, lang: str, pairs) -> tuple[list, dict]:
    coll = f"ta_{name}"
    db.x(f"DROP TABLE IF EXISTS {coll}_pairs, {coll}_docs")
    db.x(f"SELECT dedup.drop_collection('{coll}') FROM dedup.collections WHERE name = '{coll}'")
    db.x(f"CREATE TABLE {coll}_pairs (id int PRIMARY KEY, a_text text, b_text text, dup bool)")
    db.copy(f"{coll}_pairs", ("id", "a_text", "b_text", "dup"), ((i, a, b, y) for i, (a, b, y) in enumerate(pairs)))
    db.x(f"ALTER TABLE {coll}_pairs ADD COLUMN a dedup.document, ADD COLUMN b dedup.document")
    db.x(f"UPDATE {coll}_pairs SET a = dedup.to_document(a_text, lang => %s), b = dedup.to_document(b_text, lang => %s)",
         (lang, lang))
    db.x(f"CREATE TABLE {coll}_docs AS SELECT a AS doc FROM {coll}_pairs UNION ALL SELECT b FROM {coll}_pairs")
    db.x(f"SELECT dedup.create_collection('{coll}', lang => %s)", (lang,))
    db.x(f"SELECT dedup.recompute('{coll}_docs'::regclass, 'doc', '{coll}')")
    rows = db.x(f"""SELECT dup, dedup.compare(a, b, '{coll}'), dedup.compare(b, a, '{coll}'),
        (SELECT array_agg(term) FROM dedup.terms(a)), (SELECT array_agg(term) FROM dedup.terms(b)),
        similarity(a_text, b_text), a_text, b_text FROM {coll}_pairs ORDER BY id""")
    idf = dict(db.x(f"""SELECT t.term, ln(s.n_docs::float8 / t.df) FROM dedup.term_stats t
        JOIN dedup.collections c ON c.id = t.collection_id JOIN dedup.collection_stats s ON s.collection_id = c.id
        WHERE c.name = '{coll}'"""))
    return rows, idf


def crosses(ta, tb):
    a, b = set(ta or []), set(tb or [])
    return a - b, b - a, {(min(u, v), max(u, v)) for u in a - b for v in b - a}


def feature(ta, tb, pos, neg, idf, min_pos, min_prec, own=None, dup=None):
    """(a→b, b→a): the idf share of a's terms that b lacks but covers through an
    associated term. `own`: the pair's own term pairs, left out of the counts."""
    only_a, only_b, cr = crosses(ta, tb)

    def ok(k):
        p, n = pos.get(k, 0), neg.get(k, 0)
        if own is not None and k in own:
            p, n = (p - 1, n) if dup else (p, n - 1)
        return p >= min_pos and p / (p + n) >= min_prec

    good = {k for k in cr if ok(k)}

    def side(own_terms, all_terms, other):
        tot = sum(idf.get(t, 5.0) for t in all_terms)
        cov = sum(idf.get(u, 5.0) for u in own_terms if any((min(u, v), max(u, v)) in good for v in other))
        return cov / tot if tot else 0.0

    return side(only_a, set(ta or []), only_b), side(only_b, set(tb or []), only_a)


def folds(rows, grouped: bool) -> list[int]:
    rnd = random.Random(1)
    if not grouped:
        return [rnd.randrange(5) for _ in rows]
    parent: dict = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in rows:
        parent[find(r[6])] = find(r[7])
    comp: dict = {}
    return [comp.setdefault(find(r[6]), rnd.randrange(5)) for r in rows]


def cross_validate(rows, idf, grouped, min_pos, min_prec) -> tuple[float, float, float]:
    import numpy as np
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import LinearSVC

    def vec(x):
        return [np.nan if x[i] is None else float(x[i]) for i in USED]

    fold = folds(rows, grouped)
    y = [r[0] for r in rows]
    out = {"base": np.zeros(len(rows)), "assoc": np.zeros(len(rows))}
    for k in range(5):
        tr = [i for i in range(len(rows)) if fold[i] != k]
        te = [i for i in range(len(rows)) if fold[i] == k]
        pos, neg, own = collections.Counter(), collections.Counter(), {}
        for i in tr:
            own[i] = crosses(rows[i][3], rows[i][4])[2]
            (pos if rows[i][0] else neg).update(own[i])
        for variant in out:
            def x2(i, training):
                xa, xb = vec(rows[i][1]), vec(rows[i][2])
                if variant == "assoc":
                    fa, fb = feature(rows[i][3], rows[i][4], pos, neg, idf, min_pos, min_prec,
                                     own[i] if training else None, rows[i][0])
                    xa, xb = xa + [fa], xb + [fb]
                return xa, xb

            X, Y = [], []
            for i in tr:
                X += list(x2(i, True))
                Y += [rows[i][0]] * 2
            X = np.array(X)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mean, std = np.nanmean(X, 0), np.nanstd(X, 0)
            mean, std = np.nan_to_num(mean), np.nan_to_num(std)
            std[std == 0] = 1
            clf = LinearSVC(C=1.0, class_weight="balanced", max_iter=20000)
            clf.fit(np.where(np.isnan(X), 0, (X - mean) / std), Y)
            for i in te:
                z = np.array(x2(i, False))
                out[variant][i] = clf.decision_function(np.where(np.isnan(z), 0, (z - mean) / std)).max()
    return (roc_auc_score(y, [r[5] for r in rows]), roc_auc_score(y, out["base"]), roc_auc_score(y, out["assoc"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="dedup_short")
    ap.add_argument("--grouped", action="store_true", help="folds by groups of pairs that share a text")
    ap.add_argument("--min-pos", type=int, default=2)
    ap.add_argument("--min-prec", type=float, default=0.7)
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.data, "paraphraser_ru")):
        sys.exit(f"{a.data}: no paraphraser_ru here (../shared/data is not in the repository)")
    db = DB(a.host, a.port, a.db)
    db.x("CREATE EXTENSION IF NOT EXISTS pg_dedup")
    db.x("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, lang, pairs in (("paraphraser", "russian", paraphraser(a.data, "binary")),
                              ("msrp", "english", msrp(a.data))):
        rows, idf = export(db, name, lang, pairs)
        trgm, base, assoc = cross_validate(rows, idf, a.grouped, a.min_pos, a.min_prec)
        print(f"{name:<12} folds {'grouped' if a.grouped else 'per pair'}: pg_trgm {trgm:.3f}   "
              f"22 features {base:.3f} ({base - trgm:+.3f})   with associations {assoc:.3f} ({assoc - trgm:+.3f})",
              flush=True)


if __name__ == "__main__":
    main()
