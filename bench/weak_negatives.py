"""Weak negatives from time (session 22, a measured idea that loses): after `bash
bench/stream_replay.sh`, each held-out fold's model is trained again with extra
negatives: candidate pairs of its replay table (signature match) published more
than GAP apart, both outside the held-out family, not exact copies, that the
fold's model takes for duplicates, moved to within an hour of each other. The
stream is replayed with that model and scored as stream_replay.py does.

    bench/.venv/bin/python bench/weak_negatives.py [LIMIT per fold, default 600] [GAP, default '30 days']
        [--host H --port P]   (the bench cluster: BENCH_CLUSTER / BENCH_PORT of the replay)

Result (docs/quality.md): directional F1 0.792 with 100 per fold, 0.590 with 600,
against 0.856 without.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_replay import DB, FAMILIES, TRAIN, marks, replay, report, score  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("limit", nargs="?", type=int, default=600)
ap.add_argument("gap", nargs="?", default="30 days")
ap.add_argument("--host", default="/tmp/pg_dedup_bench")
ap.add_argument("--port", type=int, default=54331)
ap.add_argument("--db", default="dedup_replay")
a = ap.parse_args()
limit, gap = a.limit, a.gap
db = DB(a.host, a.port, a.db)
db.x("SELECT setseed(0.22)")  # which far pairs are drawn
total = dict.fromkeys(("tp", "fp", "fn", "dtp", "dfp", "dfn", "dup", "passed", "n"), 0)
for fam, chans in FAMILIES.items():
    fold = f"rp_fold_{fam}"
    m = db.one("SELECT min_shared_keys FROM dedup.collection_limits(%s)", (fold,))
    db.x("SELECT set_config('dedup.min_shared_keys', %s, false)", (str(m),))
    db.x(f"DROP TABLE IF EXISTS weak_{fam}")
    # far candidate pairs (signature match), both posts outside the held-out family,
    # not exact copies, that the fold's model takes for duplicates: weak negatives,
    # moved to within an hour of each other
    db.x(f"""CREATE TABLE weak_{fam} AS
      SELECT * FROM (
        SELECT dedup.to_document(pn.body, NULL, po.published_at + interval '1 hour', pn.source) AS a,
               dedup.to_document(po.body, NULL, po.published_at, po.source) AS b,
               false AS a_dup_b, false AS b_dup_a, random() AS r
        FROM {fold} n JOIN rp_posts pn ON pn.id = n.id, {fold} o JOIN rp_posts po ON po.id = o.id
        WHERE n.dedup_sig OPERATOR(dedup.%%) o.dedup_sig AND pn.published_at - po.published_at > interval '{gap}'
          AND pn.family <> %s AND po.family <> %s
          AND dedup.fingerprint(pn.body) <> dedup.fingerprint(po.body)
          AND greatest(dedup.pair_score(%s, n.dedup_doc, o.dedup_doc), dedup.pair_score(%s, o.dedup_doc, n.dedup_doc)) > 0) s
      ORDER BY r LIMIT {limit}""", (fam, fam, fold, fold))
    nweak = db.one(f"SELECT count(*) FROM weak_{fam}")
    q = ("SELECT a, b, a_dup_b, b_dup_a FROM rp_train_pairs WHERE set = 'reuters' OR NOT "
         f"(chan_a IN ({','.join(repr(c) for c in chans)}) OR chan_b IN ({','.join(repr(c) for c in chans)}))"
         f" UNION ALL SELECT a, b, a_dup_b, b_dup_a FROM weak_{fam}")
    mm = db.one("SELECT dedup.train(%s, 'rp_train', %s, %s::jsonb)", (f"wk_{fam}", q, json.dumps(TRAIN)))
    print(f"fold {fam}: {nweak} weak negatives, trained on {mm.get('pairs')}", flush=True)
    rate = replay(db, f"wk_{fam}", f"wk_{fam}", {})
    c = score(db, f"rp_wk_{fam}", fam)
    report(f"weak {fam}", c)
    marks(db, f"rp_wk_{fam}")
    for k in total:
        total[k] += c[k]
report("all families (weak)", total)
