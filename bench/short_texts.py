"""Short texts: pg_dedup's pair score against pg_trgm ``similarity()`` on the
paraphrase corpora of ../shared/data (ParaPhraser, Russian headlines; MSRP, English
news sentences), by ROC-AUC.

For each corpus: every text becomes a document of one collection (its own
statistics), the labelled pairs are split into 5 folds (seeded), and a linear model
(``dedup.train``, the built-in model's settings but with the classes weighted
to balance, over the built-in model's 20 features and the two of the surface words,
``trigrams`` and ``word_order``; ``--features`` names others) is trained on 2,500 pairs of four
folds (``dedup.train`` takes at most 3,000) and scores the fifth. A pair's score is the larger of its two directions
(paraphrase is symmetric). The same pairs are scored by pg_trgm ``similarity()``
and by the built-in model ``default`` (trained on news, not on these corpora).

Labels: MSRP 1 = paraphrase. ParaPhraser: 1 strict, 0 loose, -1 not a paraphrase.
By default strict and loose are the paraphrases (the corpus's binary task, what
`class >= 0` means there); ``--strict`` counts only strict ones (loose count as
not); ``--drop-loose`` scores strict against not and leaves the loose pairs out,
the easiest reading (pg_trgm 0.918 against 0.862 by default).

    python3 bench/short_texts.py DATA_DIR [--host H --port P --db DB] [--features a,b,...] [--strict | --drop-loose]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_replay import DB, FEATURES, TRAIN, log, roc_auc  # noqa: E402

FOLDS = 5
TRAIN_PAIRS = 2500
# The built-in model's features and the two that compare surface words
# (`trigrams`, `word_order`), which the built-in model does not use.
SHORT_FEATURES = FEATURES + ["trigrams", "word_order"]


def paraphraser(data: str, labels: str) -> list[tuple[str, str, bool]]:
    """labels: "binary" (1 and 0 against -1), "strict" (1 against 0 and -1) or
    "drop-loose" (1 against -1, class 0 left out)."""
    out = []
    with open(os.path.join(data, "paraphraser_ru", "derived_paraphrases_train.tsv"), encoding="utf-8") as f:
        for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            c = int(r["class"])
            if labels == "drop-loose" and c == 0:
                continue
            out.append((r["text_1"], r["text_2"], c >= 0 if labels == "binary" else c == 1))
    return out


def msrp(data: str) -> list[tuple[str, str, bool]]:
    out = []
    with open(os.path.join(data, "msrp_en", "msr_paraphrase_train.txt"), encoding="utf-8-sig") as f:
        next(f)
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) == 5:
                out.append((p[3], p[4], p[0] == "1"))
    return out


def run(db: DB, name: str, lang: str, pairs: list[tuple[str, str, bool]], features: list[str]) -> None:
    coll = f"st_{name}"
    db.x(f"DROP TABLE IF EXISTS {coll}_pairs, {coll}_docs")
    db.x(f"SELECT dedup.drop_collection('{coll}') FROM dedup.collections WHERE name = '{coll}'")
    db.x(f"CREATE TABLE {coll}_pairs (id int PRIMARY KEY, fold int, a_text text, b_text text, dup bool)")
    rnd = random.Random(1)
    db.copy(f"{coll}_pairs", ("id", "fold", "a_text", "b_text", "dup"),
            ((i, rnd.randrange(FOLDS), a, b, y) for i, (a, b, y) in enumerate(pairs)))
    db.x(f"ALTER TABLE {coll}_pairs ADD COLUMN a dedup.document, ADD COLUMN b dedup.document")
    db.x(f"UPDATE {coll}_pairs SET a = dedup.to_document(a_text, lang => %s), b = dedup.to_document(b_text, lang => %s)",
         (lang, lang))
    db.x(f"CREATE TABLE {coll}_docs AS SELECT a AS doc FROM {coll}_pairs UNION ALL SELECT b FROM {coll}_pairs")
    db.x(f"SELECT dedup.create_collection('{coll}', lang => %s)", (lang,))
    db.x(f"SELECT dedup.recompute('{coll}_docs'::regclass, 'doc', '{coll}')")
    # Classes weighted to balance (these corpora are two-thirds paraphrases).
    npos = sum(1 for *_, y in pairs if y)
    train = dict(TRAIN, class_weights=[(len(pairs) - npos) / max(npos, 1), 1.0], features=features)
    scores: list[tuple[float, bool]] = []
    for k in range(FOLDS):
        # dedup.train takes at most 3,000 pairs: a fixed sample of the other folds.
        q = f"SELECT a, b, dup, dup FROM {coll}_pairs WHERE fold <> {k} ORDER BY md5(id::text) LIMIT {TRAIN_PAIRS}"
        db.one("SELECT dedup.train(%s, %s, %s, %s::jsonb)", (f"{coll}_fold", coll, q, json.dumps(train)))
        scores += db.x(f"""SELECT greatest(dedup.pair_score('{coll}_fold', a, b), dedup.pair_score('{coll}_fold', b, a)),
                                  dup FROM {coll}_pairs WHERE fold = {k}""")
    trgm = db.x(f"SELECT similarity(a_text, b_text), dup FROM {coll}_pairs")
    builtin = db.x(f"SELECT greatest(dedup.pair_score('default', a, b), dedup.pair_score('default', b, a)), dup "
                   f"FROM {coll}_pairs")
    pos = sum(1 for _, y in trgm if y)
    ours, theirs = roc_auc(scores), roc_auc(trgm)
    print(f"{name:<12} {len(pairs):5} pairs ({pos} paraphrases)  ROC-AUC: pg_dedup {FOLDS}-fold {ours:.3f}   "
          f"pg_trgm similarity {theirs:.3f}   difference {ours - theirs:+.3f}   built-in model {roc_auc(builtin):.3f}",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="dedup_short")
    ap.add_argument("--features", help="comma-separated feature names to train on "
                    "(default: the built-in model's, trigrams and word_order)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--strict", action="store_true", help="ParaPhraser: only class 1 is a paraphrase")
    g.add_argument("--drop-loose", action="store_true", help="ParaPhraser: class 1 against -1, class 0 left out")
    a = ap.parse_args()
    labels = "strict" if a.strict else "drop-loose" if a.drop_loose else "binary"
    features = a.features.split(",") if a.features else SHORT_FEATURES
    db = DB(a.host, a.port, a.db)
    log(f"ParaPhraser ({labels}), {len(features)} features")
    run(db, "paraphraser", "russian", paraphraser(a.data, labels), features)
    log("MSRP")
    run(db, "msrp", "english", msrp(a.data), features)


if __name__ == "__main__":
    main()
