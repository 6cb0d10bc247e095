"""Would a `same_source` pair feature (1 when both posts come from one channel)
help the held-out trigger? In the labelled Telegram pairs, 17 of the 153 pairs
within one channel are duplicates against 385 of the 630 across channels: a
channel re-posting its own story is mostly an update.

Offline, on the emulation of bench/trigger_emulate.py (run it first, after
`bash bench/stream_replay.sh`, so that its --cache exists): each held-out
family's model is trained again with scikit-learn (linear SVC, C 1, duplicates
weighted 3:1, the scaler of src/svm.rs, `TRAIN`'s 20 features), once as it is
and once with the new feature, and the stream is decided again with the trigger's
rule. The Reuters pairs (all from one source, a wire) count the feature as
unknown, or as 1 with --reuters-same.

    bench/.venv/bin/python bench/same_source.py --host H --port P   # needs scikit-learn
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_replay import DB, FAMILIES, FEATURES  # noqa: E402
from trigger_emulate import decide_stream, emulation_args, fit_scaled, linear_decision, load_cache, score, show  # noqa: E402

NAMES = ["text", "title", "numbers_inclusion", "numbers_sequence", "sentences_inclusion",
         "paragraphs_inclusion", "images", "links", "time", "authority_a", "authority_b", "missing",
         "unique_peak", "lead_missing", "numbers_conflict", "length_ratio", "time_gap", "prefixes",
         "own_weight", "unique_top", "missing_prefixes", "lead_shingles", "numbers_own", "numbers_clash",
         "trigrams", "word_order"]
USED = [NAMES.index(n) for n in FEATURES]


def vec(x, extra) -> list[float]:
    v = [float("nan") if x[i] is None else float(x[i]) for i in USED]
    return v + ([extra] if extra is not None else [])


def train(rows, with_same: bool, reuters_same: float) -> dict:
    X, y = [], []
    for st, ca, cb, ab, ba, xab, xba in rows:
        same = (1.0 if ca == cb else 0.0) if st == "telegram" else reuters_same
        for x, lab in ((xab, ab), (xba, ba)):
            X.append(vec(x, same if with_same else None))
            y.append(1 if lab else 0)
    return fit_scaled(X, y)


def decision(m: dict, v: list[float]) -> float:
    return linear_decision(m, v)


def run(tr, data, with_same: bool, reuters_same: float) -> dict:
    marks = {}
    for fam, chans in FAMILIES.items():
        m = train([r for r in tr if r[0] == "reuters" or not (r[1] in chans or r[2] in chans)],
                  with_same, reuters_same)
        if with_same:
            print(f"  {fam}: weight of same_source {m['w'][-1]:+.3f}")

        def score(n, o, xno, xon, m=m):
            e = (1.0 if n.split(":")[0] == o.split(":")[0] else 0.0) if with_same else None
            return decision(m, vec(xno, e)), decision(m, vec(xon, e))
        marks[fam] = decide_stream(data[fam], score)
    return marks


def main() -> None:
    ap = emulation_args()
    ap.add_argument("--reuters-same", action="store_true", help="Reuters pairs count as one source")
    a = ap.parse_args()
    data = load_cache(a.cache)
    tr = DB(a.host, a.port, a.db).x("""
        SELECT set, chan_a, chan_b, a_dup_b, b_dup_a, dedup.compare(a, b, 'rp_train'), dedup.compare(b, a, 'rp_train')
        FROM rp_train_pairs""")
    rs = 1.0 if a.reuters_same else float("nan")
    show("20 features (scikit-learn)", score(data, run(tr, data, False, rs)))
    show("20 + same_source", score(data, run(tr, data, True, rs)))


if __name__ == "__main__":
    main()
