"""The trigger's own contract, measured: replay the public Telegram stream in
publication order through an enabled table and score the marks against the
labelled pairs. Run through bench/stream_replay.sh.

For a labelled pair (earlier E, later L), the trigger is right when it marks L as a
duplicate of E's group (`L.duplicate_of` is E, or E's own original: a duplicate of a
duplicate points at the first original) exactly when L adds nothing to E. A mark of
L as a copy of some third, unrelated row says nothing about (E, L) and counts as no
mark:
- directional truth: label `mutual`, or `a_in_b` with A = L, or `b_in_a` with B = L;
- pair truth (any direction): label `mutual`, `a_in_b` or `b_in_a`; predicted when
  L is marked.

Models (``--model``):
- ``default``: ``dedup.enable`` without ``model``, one replay (what a DBA gets);
  the default model was trained on these very pairs, so this is not a held-out score.
- ``threshold``: the threshold rule, one replay.
- ``grouped`` (default): channel-grouped cross-validation. The channels fall into four
  families (Moscow city news, the Топор family, IT, Naked Science). For each family F a
  linear model is trained on the labelled pairs that touch no channel of F (Telegram)
  plus all Reuters pairs, the whole stream is replayed with it, and the pairs whose
  later post is in F are scored. Every pair is scored once, by a model that never saw it.

Filter recall is printed too: the share of labelled duplicate pairs whose later row
had the earlier one among its candidates (`%` of the two stored signatures, under
the collection's own options).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

FAMILIES = {
    "moscow": ["1001003313758", "1001125816841", "1001288481277", "1001326203371", "1001699803165",
               "1001747110091"],
    "topor": ["1001237513492", "1001288489154", "1001754252633", "1001966291562"],
    "it": ["1001032086354", "1001039626561", "1001044298783", "1001138587070", "1001465826763"],
    "science": ["1001000724666"],
}
FAMILY_OF = {c: f for f, cs in FAMILIES.items() for c in cs}
DUP = ("mutual", "a_in_b", "b_in_a")
# How the built-in model and the grouped models are trained: a linear SVM (so the
# trigger's bounds can rule candidates out before weighing), duplicates weighted 3:1
# against the labelled set's surplus of hard negatives, over every feature but
# `images`, `authority_a` and `authority_b` (constant in these pairs: no Telegram
# post has an image, no source an authority) and `numbers_conflict` (which
# `numbers_clash` extends to numbers written as words).
FEATURES = ["text", "title", "numbers_inclusion", "numbers_sequence", "sentences_inclusion",
            "paragraphs_inclusion", "links", "time", "missing", "unique_peak", "lead_missing",
            "length_ratio", "time_gap", "prefixes", "own_weight", "unique_top", "missing_prefixes",
            "lead_shingles", "numbers_own", "numbers_clash"]
BUILTIN_REVISION = 2
# Unrelated pairs (rp_random_pairs) trained on as `different`: Telegram ones, and
# half as many Reuters ones.
RANDOM_NEGATIVES = 0
TRAIN = {"kernel": "linear", "class_weights": [3, 1], "folds": 0, "seed": 1, "features": FEATURES}


def log(msg: str) -> None:
    print(f"[replay] {msg}", file=sys.stderr, flush=True)


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


class DB:
    def __init__(self, host: str, port: int, dbname: str):
        self.conn = psycopg.connect(host=host, port=port, user="postgres", dbname=dbname, autocommit=True)
        self.conn.add_notice_handler(lambda d: None)

    def x(self, sql: str, params=None):
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else None

    def one(self, sql: str, params=None):
        r = self.x(sql, params)
        return r[0][0] if r else None

    def copy(self, table: str, cols: tuple, rows) -> None:
        with self.conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r)


def load(db: DB, data: str) -> None:
    posts = corpus.telegram_posts(data)
    db.x("DROP TABLE IF EXISTS rp_posts, rp_pairs, rp_train_pairs, rp_train_docs, rp_random_pairs CASCADE")
    db.x("CREATE TABLE rp_posts (id text PRIMARY KEY, family text, seq int, body text, published_at timestamptz, "
         "source text)")
    db.copy("rp_posts", ("id", "family", "seq", "body", "published_at", "source"),
            ((p["id"], FAMILY_OF.get(p["id"].split(":")[0], "other"), i, p["body"], p["published_at"], p["source"])
             for i, p in enumerate(posts)))
    pairs = corpus.labelled_pairs(data)
    db.x("""CREATE TABLE rp_pairs (pair_id text PRIMARY KEY, set text, a_id text, a_body text, a_title text,
            a_time timestamptz, a_source text, b_id text, b_body text, b_title text, b_time timestamptz,
            b_source text, label text)""")
    cols = ("pair_id", "set", "a_id", "a_body", "a_title", "a_time", "a_source",
            "b_id", "b_body", "b_title", "b_time", "b_source", "label")
    db.copy("rp_pairs", cols, ([p[c] for c in cols] for p in pairs))
    # Training documents: every Telegram post and every Reuters text of a pair, in
    # one collection, so the weights the model learns from are a real stream's.
    db.x("""CREATE TABLE rp_train_docs AS
            SELECT 'tg:' || id AS id, dedup.to_document(body, NULL, published_at, source) AS doc FROM rp_posts
            UNION ALL
            SELECT DISTINCT ON (id) id, doc FROM (
              SELECT a_id AS id, dedup.to_document(a_body, a_title, a_time, a_source) AS doc FROM rp_pairs
               WHERE set = 'reuters'
              UNION ALL
              SELECT b_id, dedup.to_document(b_body, b_title, b_time, b_source) FROM rp_pairs WHERE set = 'reuters') s""")
    db.x("DELETE FROM rp_train_docs a USING rp_train_docs b WHERE a.id = b.id AND a.ctid < b.ctid")
    db.x("ALTER TABLE rp_train_docs ADD PRIMARY KEY (id)")
    db.x("""CREATE TABLE rp_train_pairs AS
            SELECT p.pair_id, p.set, p.label,
                   split_part(substr(p.a_id, 4), ':', 1) AS chan_a, split_part(substr(p.b_id, 4), ':', 1) AS chan_b,
                   coalesce(ta.doc, dedup.to_document(p.a_body, p.a_title, p.a_time, p.a_source)) AS a,
                   coalesce(tb.doc, dedup.to_document(p.b_body, p.b_title, p.b_time, p.b_source)) AS b,
                   p.label IN ('mutual', 'a_in_b') AS a_dup_b, p.label IN ('mutual', 'b_in_a') AS b_dup_a
            FROM rp_pairs p LEFT JOIN rp_train_docs ta ON ta.id = p.a_id LEFT JOIN rp_train_docs tb ON tb.id = p.b_id""")
    # Unrelated pairs, to see what a model makes of texts that share next to
    # nothing (the labelled pairs were drawn from cosine 0.1 up, so a model never
    # sees such a pair in training unless given some): Telegram posts more than 30
    # days apart, Reuters texts more than 7 days apart with other titles, each
    # paired with the post its random rank puts 7,000 (Reuters: 300) places on.
    db.x("""CREATE TABLE rp_random_pairs AS
            WITH t AS (SELECT id, published_at, split_part(id, ':', 1) AS chan,
                              row_number() OVER (ORDER BY md5(id)) AS n FROM rp_posts),
                 r AS (SELECT id, min(t) AS t, min(title) AS title, row_number() OVER (ORDER BY md5(id)) AS n FROM (
                         SELECT a_id AS id, a_time AS t, a_title AS title FROM rp_pairs WHERE set = 'reuters'
                         UNION ALL SELECT b_id, b_time, b_title FROM rp_pairs WHERE set = 'reuters') x GROUP BY id)
            SELECT 'tg:' || x.id || '/' || y.id AS pair_id, 'random' AS set, x.chan AS chan_a, y.chan AS chan_b,
                   da.doc AS a, db.doc AS b, row_number() OVER (ORDER BY md5(x.id)) AS rank
            FROM t x JOIN t y ON y.n = x.n + 7000
            JOIN rp_train_docs da ON da.id = 'tg:' || x.id JOIN rp_train_docs db ON db.id = 'tg:' || y.id
            WHERE abs(extract(epoch FROM x.published_at - y.published_at)) > 30 * 86400
            UNION ALL
            SELECT x.id || '/' || y.id, 'random_reuters', 'reuters', 'reuters', da.doc, db.doc,
                   row_number() OVER (ORDER BY md5(x.id))
            FROM r x JOIN r y ON y.n = x.n + 300
            JOIN rp_train_docs da ON da.id = x.id JOIN rp_train_docs db ON db.id = y.id
            WHERE abs(extract(epoch FROM x.t - y.t)) > 7 * 86400 AND x.title IS DISTINCT FROM y.title""")
    log(f"{len(posts)} posts, {len(pairs)} labelled pairs, "
        f"{db.one('SELECT count(*) FROM rp_random_pairs')} unrelated pairs")


def add_random_negatives(db: DB, n: int) -> None:
    """The first n unrelated Telegram pairs and n / 2 Reuters ones (by rank) join the
    training pairs as `different`; the others stay for `unrelated_called`."""
    db.x("DELETE FROM rp_train_pairs WHERE set IN ('random', 'random_reuters')")
    db.x("""INSERT INTO rp_train_pairs (pair_id, set, label, chan_a, chan_b, a, b, a_dup_b, b_dup_a)
            SELECT pair_id, set, 'different', chan_a, chan_b, a, b, false, false FROM rp_random_pairs
            WHERE rank <= CASE WHEN set = 'random' THEN %s ELSE %s END""", (n, n // 2))


def unrelated_called(db: DB, model: str, family: str | None) -> tuple[int, int]:
    """Of the unrelated pairs no model was trained on that touch ``family`` (all, for
    None; Reuters ones too), how many ``model`` calls duplicates either way."""
    chans = FAMILIES.get(family, [])
    return db.x("""
        SELECT count(*) FILTER (WHERE greatest(dedup.pair_score(%s, r.a, r.b), dedup.pair_score(%s, r.b, r.a)) > 0),
               count(*)
        FROM rp_random_pairs r
        WHERE NOT EXISTS (SELECT 1 FROM rp_train_pairs t WHERE t.pair_id = r.pair_id)
          AND (%s::text[] IS NULL OR r.chan_a = ANY(%s::text[]) OR r.chan_b = ANY(%s::text[]))""",
                  (model, model, None if family is None else chans, chans, chans))[0]


def train_collection(db: DB, weighting: str) -> None:
    """The collection the models are trained under (its statistics weigh the pairs'
    documents), with the replay tables' term weighting. The models trained under it
    before go with it, and the replay tables that use them."""
    for fam in FAMILIES:
        db.x(f"DROP TABLE IF EXISTS rp_fold_{fam} CASCADE")
    db.x("DELETE FROM dedup.models WHERE collection = 'rp_train'")
    db.x("SELECT dedup.drop_collection('rp_train') FROM dedup.collections WHERE name = 'rp_train'")
    db.x("SELECT dedup.create_collection('rp_train', weighting => %s, k1 => 2.0)", (weighting,))
    db.x("SELECT dedup.recompute('rp_train_docs'::regclass, 'doc', 'rp_train')")


def replay(db: DB, name: str, model: str | None, options: dict, window: str | None = None,
           weighting: str = "bm25") -> float:
    """Replays the whole stream into rp_<name> through one INSERT ... SELECT (with a
    time window when ``window``, an interval); returns docs/s."""
    tbl = f"rp_{name}"
    db.x(f"DROP TABLE IF EXISTS {tbl} CASCADE")
    db.x(f"SELECT dedup.drop_collection(name) FROM dedup.collections WHERE name = '{tbl}'")
    db.x(f"CREATE TABLE {tbl} (id text PRIMARY KEY, body text, published_at timestamptz, source text)")
    if options or weighting != "bm25":
        db.x("SELECT dedup.create_collection(%s, weighting => %s, options => %s::jsonb)",
             (tbl, weighting, json.dumps(options)))
    db.x(f"SELECT dedup.enable('{tbl}', 'body', published_at => 'published_at', source => 'source', "
         f"collection => '{tbl}', model => %s, time_window => %s::interval)", (model, window))
    t = time.perf_counter()
    n = db.x(f"INSERT INTO {tbl} SELECT id, body, published_at, source FROM rp_posts ORDER BY seq")
    dt = time.perf_counter() - t
    rows = db.one(f"SELECT count(*) FROM {tbl}")
    return rows / dt


def score(db: DB, tbl: str, family: str | None) -> dict:
    """Counts over the Telegram pairs whose later post is in ``family`` (all if None)."""
    # The `%` operator reads min_shared_keys from the session; the trigger reads its
    # collection's: make them agree.
    m = db.one("SELECT min_shared_keys FROM dedup.collection_limits(%s)", (tbl,))
    db.x("SELECT set_config('dedup.min_shared_keys', %s, false)", (str(m),))
    rows = db.x(f"""
        SELECT p.label, (ea.seq < eb.seq) AS a_first,
               CASE WHEN ea.seq < eb.seq THEN rb.duplicate_of IS NOT NULL
                         AND rb.duplicate_of = coalesce(ra.duplicate_of, ra.id)
                    ELSE ra.duplicate_of IS NOT NULL AND ra.duplicate_of = coalesce(rb.duplicate_of, rb.id) END,
               CASE WHEN ea.seq < eb.seq THEN eb.family ELSE ea.family END,
               ra.dedup_sig OPERATOR(dedup.%) rb.dedup_sig
        FROM rp_pairs p
        JOIN rp_posts ea ON 'tg:' || ea.id = p.a_id JOIN rp_posts eb ON 'tg:' || eb.id = p.b_id
        JOIN {tbl} ra ON ra.id = ea.id JOIN {tbl} rb ON rb.id = eb.id
        WHERE p.set = 'telegram'""")
    c = dict(tp=0, fp=0, fn=0, dtp=0, dfp=0, dfn=0, dup=0, passed=0, n=0)
    for label, a_first, marked, fam, cand in rows:
        if family and fam != family:
            continue
        c["n"] += 1
        later_is_a = not a_first
        truth_pair = label in DUP
        truth_dir = label == "mutual" or (label == "a_in_b" and later_is_a) or (label == "b_in_a" and not later_is_a)
        if truth_pair:
            c["dup"] += 1
            c["passed"] += int(bool(cand))
        c["tp"] += int(marked and truth_pair)
        c["fp"] += int(marked and not truth_pair)
        c["fn"] += int(not marked and truth_pair)
        c["dtp"] += int(marked and truth_dir)
        c["dfp"] += int(marked and not truth_dir)
        c["dfn"] += int(not marked and truth_dir)
    return c


def marks(db: DB, tbl: str) -> None:
    """All the marks of a replay table, labelled or not: how many, and how many name an
    original published more than 7 and 30 days before (different stories of a
    recurring topic, which the labelled pairs, published within days, do not show)."""
    n, week, month = db.one(f"""
        SELECT (count(*), count(*) FILTER (WHERE c.published_at - o.published_at > interval '7 days'),
                count(*) FILTER (WHERE c.published_at - o.published_at > interval '30 days'))::text
        FROM {tbl} c JOIN {tbl} o ON o.id = c.duplicate_of""").strip("()").split(",")
    print(f"{'':<22} marks {n}, of them naming an original over 7 days older {week}, over 30 days {month}",
          flush=True)


def roc_auc(scores: list[tuple[float, bool]]) -> float:
    pos = sum(1 for _, y in scores if y)
    neg = len(scores) - pos
    if not pos or not neg:
        return float("nan")
    ranked = sorted(scores, key=lambda t: t[0])
    rank_sum, i = 0.0, 0
    while i < len(ranked):  # average ranks over ties
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        rank_sum += (i + j + 1) / 2 * sum(1 for t in ranked[i:j] if t[1])
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def pair_scores(db: DB, model: str, family: str) -> list[tuple[float, float, bool, bool, str]]:
    """(score(a, b), score(b, a), a_dup_b, b_dup_a, label) of the Telegram pairs whose
    later post is in ``family``, scored one by one with ``model``."""
    return db.x("""
        SELECT dedup.pair_score(%s, t.a, t.b), dedup.pair_score(%s, t.b, t.a), t.a_dup_b, t.b_dup_a, t.label
        FROM rp_train_pairs t JOIN rp_pairs p USING (pair_id)
        JOIN rp_posts ea ON 'tg:' || ea.id = p.a_id JOIN rp_posts eb ON 'tg:' || eb.id = p.b_id
        WHERE t.set = 'telegram' AND CASE WHEN ea.seq < eb.seq THEN eb.family ELSE ea.family END = %s""",
                (model, model, family))


def report_pairs(tag: str, rows: list) -> None:
    """Pair classification, one pair at a time: any direction (max of the two scores
    > 0 against a duplicate label) and per direction."""
    any_scores = [(max(sab, sba), ab or ba) for sab, sba, ab, ba, _ in rows]
    dir_scores = [(sab, ab) for sab, _, ab, _, _ in rows] + [(sba, ba) for _, sba, _, ba, _ in rows]
    for name, sc in (("any direction", any_scores), ("directional", dir_scores)):
        tp = sum(1 for s, y in sc if s > 0 and y)
        fp = sum(1 for s, y in sc if s > 0 and not y)
        fn = sum(1 for s, y in sc if s <= 0 and y)
        p, r, f = prf(tp, fp, fn)
        print(f"{tag:<22} pair classification {name:<13} P {p:.3f} R {r:.3f} F1 {f:.3f} ROC-AUC {roc_auc(sc):.3f}",
              flush=True)


def report(tag: str, c: dict) -> None:
    p, r, f = prf(c["tp"], c["fp"], c["fn"])
    dp, dr, df = prf(c["dtp"], c["dfp"], c["dfn"])
    fr = c["passed"] / c["dup"] if c["dup"] else float("nan")
    print(f"{tag:<22} pairs {c['n']:4d}  any direction P {p:.3f} R {r:.3f} F1 {f:.3f}   "
          f"directional P {dp:.3f} R {dr:.3f} F1 {df:.3f}   filter recall {fr:.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="dedup_replay")
    ap.add_argument("--model", choices=("grouped", "default", "threshold"), default="grouped")
    ap.add_argument("--options", default="{}", help="collection options (JSON) for the replay tables")
    ap.add_argument("--train", default=json.dumps(TRAIN), help="dedup.train options (JSON) for the grouped models")
    ap.add_argument("--train-default", metavar="FILE",
                    help="train the built-in model on every public labelled pair and write its export to FILE")
    ap.add_argument("--skip-load", action="store_true")
    ap.add_argument("--pairs-only", action="store_true", help="pair classification only, no replay")
    ap.add_argument("--window", default=None, help="time_window of the replay tables (an interval, e.g. '3 days')")
    ap.add_argument("--random-negatives", type=int, default=RANDOM_NEGATIVES, metavar="N",
                    help="unrelated Telegram pairs (and N / 2 Reuters ones) trained on as `different`")
    ap.add_argument("--weighting", choices=("bm25", "tf_ridf"), default="bm25",
                    help="term weighting of the training collection and the replay tables")
    a = ap.parse_args()
    db = DB(a.host, a.port, a.db)
    if not a.skip_load:
        load(db, a.data)
    train_collection(db, a.weighting)
    add_random_negatives(db, a.random_negatives)
    if a.train_default:
        opts = dict(TRAIN, folds=5)
        m = db.one("SELECT dedup.train('default', 'rp_train', 'SELECT a, b, a_dup_b, b_dup_a FROM rp_train_pairs', "
                   "%s::jsonb)", (json.dumps(opts),))
        e = db.one("SELECT dedup.export_model('default')")
        e.pop("trained_at", None)
        e["collection"] = "default"
        # The built-in model's revision: raise it whenever what it is trained on or
        # how changes (1: 18 features; 2: 24 features, issue 21).
        e["version"] = BUILTIN_REVISION
        e["trained_on"] = ("every labelled pair of ../shared/data telegram_ru (783) and reuters_en (344); "
                           "bench/stream_replay.py --train-default")
        with open(a.train_default, "w") as f:
            json.dump(e, f, indent=1, sort_keys=True)
            f.write("\n")
        log(f"wrote {a.train_default}: {m.get('pairs')} pairs, 5-fold CV {m.get('cv')}")
        return
    options = json.loads(a.options)
    print(f"collection options {json.dumps(options)}; weighting {a.weighting}; model: {a.model}; "
          f"time window: {a.window}", flush=True)
    if a.model in ("default", "threshold"):
        model = None if a.model == "default" else "threshold"
        rate = replay(db, a.model, model, options, a.window, a.weighting)
        c = score(db, f"rp_{a.model}", None)
        report(f"{a.model} ({rate:,.0f} docs/s)", c)
        marks(db, f"rp_{a.model}")
        return
    total = dict.fromkeys(("tp", "fp", "fn", "dtp", "dfp", "dfn", "dup", "passed", "n"), 0)
    unrelated = [0, 0]
    all_pairs = []
    for fam, chans in FAMILIES.items():
        q = ("SELECT a, b, a_dup_b, b_dup_a FROM rp_train_pairs WHERE set = 'reuters' OR NOT "
             f"(chan_a IN ({','.join(repr(c) for c in chans)}) OR chan_b IN ({','.join(repr(c) for c in chans)}))")
        m = db.one("SELECT dedup.train(%s, 'rp_train', %s, %s::jsonb)", (f"rp_fold_{fam}", q, a.train))
        log(f"fold {fam}: trained on {m.get('pairs')} pairs")
        k, n = unrelated_called(db, f"rp_fold_{fam}", fam)
        unrelated[0] += k
        unrelated[1] += n
        all_pairs += pair_scores(db, f"rp_fold_{fam}", fam)
        if a.pairs_only:
            continue
        rate = replay(db, f"fold_{fam}", f"rp_fold_{fam}", options, a.window, a.weighting)
        c = score(db, f"rp_fold_{fam}", fam)
        report(f"held out {fam} ({rate:,.0f}/s)", c)
        marks(db, f"rp_fold_{fam}")
        for k in total:
            total[k] += c[k]
    report_pairs("all families", all_pairs)
    print(f"{'all families':<22} unrelated pairs called duplicates {unrelated[0]} of {unrelated[1]}", flush=True)
    if not a.pairs_only:
        report("all families", total)


if __name__ == "__main__":
    main()
