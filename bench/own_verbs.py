"""Would the verbs one post has and the other lacks help the held-out trigger?
Many wrong marks left are one story with another outcome: "парламент намерен
поставить на голосование" against "парламент проголосовал", "торги
приостановлены" against "торги возобновятся". The features count a's words
with a Russian verb ending (past, present, infinitive, reflexive; a suffix list,
no tagger) whose 5-letter prefix occurs nowhere in b, as ln(1 + n), in the whole
post and in its lead sentence.

Offline, on the emulation of bench/trigger_emulate.py (run it first), as
bench/novel_sentences.py: each held-out family's model is trained again with
scikit-learn with and without the features, and the stream decided again.

    bench/.venv/bin/python bench/own_verbs.py --host H --port P   # needs scikit-learn
"""

from __future__ import annotations

import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from novel_sentences import run, training_texts  # noqa: E402
from stream_replay import DB  # noqa: E402
from trigger_emulate import emulation_args, load_cache, score, show  # noqa: E402

WORD = re.compile(r"[^\W\d_]{3,}")
SENT = re.compile(r"(?<=[.!?…])\s+|\n+")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
VERB = re.compile(r"(ал|ял|ил|ел|ула|ала|яла|ила|ела|али|яли|или|ели|ули|ать|ять|ить|еть|уть|ется|ится|ются|ятся"
                  r"|ают|яют|ует|уют|ит|ят|ет|ют|лся|лась|лись|тся|ться)$")


def analyse(text: str) -> tuple:
    text = LINK.sub(r"\1", text or "")
    sents = [s for s in SENT.split(text) if WORD.search(s)]
    words = [w.lower() for w in WORD.findall(text)]
    lead = [w.lower() for w in WORD.findall(sents[0])] if sents else []
    return ({w[:5] for w in words}, {w[:5] for w in words if VERB.search(w)},
            {w[:5] for w in lead if VERB.search(w)})


def own_verbs(a, b) -> list[float]:
    return [math.log1p(len(a[1] - b[0])), math.log1p(len(a[2] - b[0]))]


def main() -> None:
    a = emulation_args().parse_args()
    data = load_cache(a.cache)
    tr, texts = training_texts(DB(a.host, a.port, a.db), analyse)
    show("20 features (scikit-learn)", score(data, run(tr, data, texts, lambda e: [], (), own_verbs)))
    show("20 + own verbs", score(data, run(tr, data, texts, lambda e: e[:1], (), own_verbs)))
    show("20 + own verbs of the lead", score(data, run(tr, data, texts, lambda e: e[1:], (), own_verbs)))
    show("20 + both", score(data, run(tr, data, texts, lambda e: e, (), own_verbs)))


if __name__ == "__main__":
    main()
