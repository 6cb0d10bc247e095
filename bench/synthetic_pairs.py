"""Synthetic direction pairs for training (session 28), measured offline.

The largest kind of wrong mark left is the later post that adds a sentence to
the earlier one: both directions score as duplicates. The labelled pairs hold
few examples of "the same text and one more sentence" (a_in_b / b_in_a: 109 of
783), so this makes them from the unlabelled posts of each fold's own training
channels (never the held-out family's), with labels known by construction:

- ``sub``: E is a post with one of its sentences (not the first, at least
  --min-words words) left out, L the whole post: E adds nothing to L, L adds the
  sentence to E;
- ``add``: E is a post, L the same post and a sentence of another post of the
  same channel published more than a week away (another story);
- ``rew``: a labelled `mutual` pair of the fold's training channels (A, B), and L
  = B and a sentence of another post as in ``add``: A adds nothing to L, L adds
  the sentence to A (a rewrite and a new fact).

Each pair is compared both ways with `dedup.compare` under the training
collection's statistics (`rp_train`) and added to each held-out family's
training with weight --weight; the models are trained with scikit-learn as
bench/train_focus.py does (linear SVC, C 1, duplicates 3:1, the scaler of
src/svm.rs, `TRAIN`'s 20 features) and the stream is decided again with the
trigger's rule (after `bench/trigger_emulate.py`, whose --cache it reads).

    bench/.venv/bin/python bench/synthetic_pairs.py --host H --port P [--kinds sub,add,rew]
        [--per-fold N] [--weight W ...]
"""

from __future__ import annotations

import datetime
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import decision, vec  # noqa: E402
from stream_replay import DB, FAMILIES  # noqa: E402
from train_focus import fit  # noqa: E402  (`fit_scaled` with a training weight per pair)
from trigger_emulate import decide_stream, emulation_args, load_cache, score, show  # noqa: E402

SPLIT = re.compile(r"(?<=[.!?…])\s+|\n+")
WORD = re.compile(r"\w{3,}")


def sentences(body: str) -> list[str]:
    return [s for s in (x.strip() for x in SPLIT.split(body)) if s]


def long_sentence(s: str, m: int) -> bool:
    return len(WORD.findall(s)) >= m and "http" not in s and "Подпис" not in s


def run(tr, syn, data, weight) -> dict:
    marks = {}
    for fam, chans in FAMILIES.items():
        rows = [r for r in tr if r["set"] == "reuters" or not (r["ca"] in chans or r["cb"] in chans)]
        rows += [r for r in syn if r["fold"] == fam]
        m = fit(rows, lambda r: weight if r.get("syn") else 1.0, lambda r: None)
        marks[fam] = decide_stream(
            data[fam], lambda n, o, xno, xon, m=m: (decision(m, vec(xno, None)), decision(m, vec(xon, None)))
        )
    return marks


def make(db: DB, a) -> list[dict]:
    rnd = random.Random(a.seed)
    posts = db.x("SELECT id, body, published_at, source FROM rp_posts ORDER BY seq")
    by_chan: dict = {}
    for p in posts:
        by_chan.setdefault(p[0].split(":")[0], []).append(p)
    mutual = db.x("""SELECT p.a_body, p.a_time, p.a_source, p.b_body, p.b_time, p.b_source,
                            split_part(substr(p.a_id, 4), ':', 1), split_part(substr(p.b_id, 4), ':', 1)
                     FROM rp_pairs p WHERE p.set = 'telegram' AND p.label = 'mutual'""")
    kinds = a.kinds.split(",")

    def foreign(chan, t):
        for _ in range(50):
            q = rnd.choice(by_chan[chan])
            if abs(q[2] - t) < datetime.timedelta(days=7):
                continue
            ss = [s for s in sentences(q[1])[1:] + sentences(q[1])[:1] if long_sentence(s, a.min_words)]
            if ss:
                return rnd.choice(ss)
        return None

    def insert(body: str, s: str) -> str:
        # before the post's last line when it is a footer (a link line), else at the end
        lines = body.rstrip().split("\n")
        if len(lines) > 1 and "](http" in lines[-1]:
            return "\n".join(lines[:-1]).rstrip() + " " + s + "\n\n" + lines[-1]
        return body.rstrip() + " " + s

    out = []
    for fam, chans in FAMILIES.items():
        train_chans = [c for c in by_chan if c not in chans]
        for kind in kinds:
            made, tries = 0, 0
            while made < a.per_fold and tries < a.per_fold * 50:
                tries += 1
                gap = datetime.timedelta(minutes=rnd.randint(5, 600))
                if kind == "rew":
                    r = rnd.choice(mutual)
                    if r[6] in chans or r[7] in chans:
                        continue
                    s = foreign(r[7], r[4])
                    if s is None:
                        continue
                    e, et, es, lb, lt, ls = r[0], r[1], r[2], insert(r[3], s), r[4], r[5]
                    if lt < et:
                        e, et, es, lb, lt, ls = r[3], r[4], r[5], insert(r[0], s), r[1], r[2]
                else:
                    c = rnd.choice(train_chans)
                    p = rnd.choice(by_chan[c])
                    ss = sentences(p[1])
                    if kind == "sub":
                        idx = [i for i in range(1, len(ss)) if long_sentence(ss[i], a.min_words)]
                        if len(ss) < 3 or not idx:
                            continue
                        drop = ss[rnd.choice(idx)]
                        e = p[1].replace(drop, "", 1)
                        lb = p[1]
                    else:
                        if len(WORD.findall(p[1])) < a.min_words:
                            continue
                        s = foreign(c, p[2])
                        if s is None:
                            continue
                        e, lb = p[1], insert(p[1], s)
                    et, lt = p[2], p[2] + gap
                    es = ls = p[3]
                    other = rnd.choice([x for x in train_chans if x != c])
                    if rnd.random() < 0.7:  # most labelled duplicates cross channels
                        ls = by_chan[other][0][3]
                out.append(dict(fold=fam, kind=kind, e=e, et=et, es=es, l=lb, lt=lt, ls=ls))
                made += 1
    db.x("DROP TABLE IF EXISTS syn_pairs")
    db.x("CREATE TABLE syn_pairs (n int, e text, et timestamptz, es text, l text, lt timestamptz, ls text)")
    db.copy(
        "syn_pairs",
        ("n", "e", "et", "es", "l", "lt", "ls"),
        ((i, r["e"], r["et"], r["es"], r["l"], r["lt"], r["ls"]) for i, r in enumerate(out)),
    )
    vecs = db.x("""SELECT n, dedup.compare(a, b, 'rp_train'), dedup.compare(b, a, 'rp_train') FROM (
                     SELECT n, dedup.to_document(e, NULL, et, es) a, dedup.to_document(l, NULL, lt, ls) b
                     FROM syn_pairs) s ORDER BY n""")
    rows = []
    for (n, xab, xba), r in zip(vecs, out):
        rows.append(dict(set="telegram", syn=True, fold=r["fold"], kind=r["kind"], ab=True, ba=False, xab=xab, xba=xba))
    return rows


def main() -> None:
    ap = emulation_args()
    ap.add_argument("--kinds", default="sub,add,rew")
    ap.add_argument("--per-fold", type=int, default=150)
    ap.add_argument("--min-words", type=int, default=6)
    ap.add_argument("--weight", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    ap.add_argument("--seed", type=int, default=28)
    a = ap.parse_args()
    data = load_cache(a.cache)
    db = DB(a.host, a.port, a.db)
    tr = []
    for st, ca, cb, ab, ba, xab, xba in db.x("""SELECT t.set, t.chan_a, t.chan_b, t.a_dup_b, t.b_dup_a,
                      dedup.compare(t.a, t.b, 'rp_train'), dedup.compare(t.b, t.a, 'rp_train')
               FROM rp_train_pairs t"""):
        tr.append(dict(set=st, ca=ca, cb=cb, ab=ab, ba=ba, xab=xab, xba=xba))
    syn = make(db, a)
    print(f"{len(syn)} synthetic pairs ({a.kinds}, {a.per_fold} per fold and kind)")
    show("labelled only", score(data, run(tr, [], data, 0)))
    for kind in a.kinds.split(","):
        for w in a.weight:
            show(f"+ {kind} weight {w}", score(data, run(tr, [r for r in syn if r["kind"] == kind], data, w)))
    if "," in a.kinds:
        for w in a.weight:
            show(f"+ all weight {w}", score(data, run(tr, syn, data, w)))


if __name__ == "__main__":
    main()
