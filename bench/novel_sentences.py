"""Would a "new sentences" pair feature help the held-out trigger? The largest
kind of wrong mark left is the later post that adds a sentence (labelled
`a_in_b` the other way): `sentences_inclusion` matches whole sentences by hash,
and `own_weight` / `missing` count words, so a rephrased old sentence and a
really new one look alike. The feature counts a's sentences whose words b
mostly lacks: a sentence of at least --min-words words of 3+ letters, less than
--cover of whose 5-letter prefixes occur anywhere in b.

Offline, on the emulation of bench/trigger_emulate.py (run it first, after
`bash bench/stream_replay.sh`, so that its --cache exists), like
bench/same_source.py: each held-out family's model is trained again with
scikit-learn (linear SVC, C 1, duplicates weighted 3:1, the scaler of
src/svm.rs, `TRAIN`'s 20 features), once as it is and once with the new
feature(s), and the stream is decided again with the trigger's rule.

    bench/.venv/bin/python bench/novel_sentences.py --host H --port P   # needs scikit-learn
"""

from __future__ import annotations

import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_source import decision, vec  # noqa: E402
from stream_replay import DB, FAMILIES  # noqa: E402
from trigger_emulate import decide_stream, emulation_args, fit_scaled, load_cache, score, show  # noqa: E402


SENT = re.compile(r"(?<=[.!?…])\s+|\n+")
WORD = re.compile(r"[^\W\d_]{3,}")


def analyse(text: str) -> tuple[set, list]:
    text = text or ""
    sents = []
    for s in SENT.split(text):
        ws = [w.lower()[:5] for w in WORD.findall(s)]
        if ws:
            sents.append(ws)
    return {w for s in sents for w in s}, sents


def novel(a, b, min_words: int, cover: float) -> list[float]:
    _, sa = a
    pb, _ = b
    n = words = 0
    for s in sa:
        if len(s) < min_words:
            continue
        c = sum(w in pb for w in s) / len(s)
        if c < cover:
            n += 1
            words += len(s)
    return [math.log1p(n), math.log1p(words)]


def train(rows, pick) -> dict:
    X, y = [], []
    for xab, xba, eab, eba, ab, ba in rows:
        for x, e, lab in ((xab, eab, ab), (xba, eba, ba)):
            X.append(vec(x, None) + pick(e))
            y.append(1 if lab else 0)
    return fit_scaled(X, y)


def run(tr, data, texts, pick, opts, feature=novel) -> dict:
    """Each held-out family's model trained with `pick(feature(a, b, *opts))` added
    to the 20 features, and its replay table decided again."""
    marks = {}
    for fam, chans in FAMILIES.items():
        rows = [(xab, xba, feature(ta, tb, *opts), feature(tb, ta, *opts), ab, ba)
                for st, ca, cb, ab, ba, xab, xba, ta, tb in tr
                if st == "reuters" or not (ca in chans or cb in chans)]
        m = train(rows, pick)
        if pick([0.0] * 8):
            print(f"  {fam}: weights of the new features {', '.join(f'{w:+.3f}' for w in m['w'][20:])}")

        def score(n, o, xno, xon, m=m):
            eno, eon = feature(texts[n], texts[o], *opts), feature(texts[o], texts[n], *opts)
            return decision(m, vec(xno, None) + pick(eno)), decision(m, vec(xon, None) + pick(eon))
        marks[fam] = decide_stream(data[fam], score)
    return marks


def training_texts(db: DB, analyse) -> tuple[list, dict]:
    """The training pairs (set, channels, labels, both directions' vectors, both
    texts through `analyse`) and every replayed post's text through `analyse`."""
    tr = db.x("""
        SELECT t.set, t.chan_a, t.chan_b, t.a_dup_b, t.b_dup_a,
               dedup.compare(t.a, t.b, 'rp_train'), dedup.compare(t.b, t.a, 'rp_train'), p.a_body, p.b_body
        FROM rp_train_pairs t JOIN rp_pairs p USING (pair_id)""")
    tr = [r[:7] + (analyse(r[7]), analyse(r[8])) for r in tr]
    return tr, {i: analyse(body) for i, body in db.x("SELECT id, body FROM rp_posts")}


def main() -> None:
    ap = emulation_args()
    ap.add_argument("--min-words", type=int, default=4)
    ap.add_argument("--cover", type=float, default=0.5)
    a = ap.parse_args()
    data = load_cache(a.cache)
    tr, texts = training_texts(DB(a.host, a.port, a.db), analyse)
    opts = (a.min_words, a.cover)
    show("20 features (scikit-learn)", score(data, run(tr, data, texts, lambda e: [], opts)))
    show("20 + novel sentences (count)", score(data, run(tr, data, texts, lambda e: e[:1], opts)))
    show("20 + novel sentences (words)", score(data, run(tr, data, texts, lambda e: e[1:], opts)))
    show("20 + both", score(data, run(tr, data, texts, lambda e: e, opts)))


if __name__ == "__main__":
    main()
