"""Corpus builders for the pg_dedup benchmark.

Three sources, all read-only and never copied into the repository:

* ``news_stream(data)``: real posts in publication order, Telegram (ru) then
  Reuters-21578 (en), as dicts ``{id, title, body, published_at, source}``.
* ``labelled_pairs(data)``: the hand-labelled pairs of ``telegram_ru`` and
  ``reuters_en`` as ``{pair_id, a_*, b_*, label}``.
* ``scaled_stream(paragraphs, titles, n, seed)``: synthetic 200-1,500-word
  documents sampled from real paragraphs, with injected reprints and hard
  negatives, deterministic for a seed.

Without the data folder, ``fallback_paragraphs()`` reads Debian's fortunes
(``%``-separated) so the throughput benches still run.
"""

from __future__ import annotations

import csv
import datetime as dt
import glob
import html
import json
import os
import random
import re
from typing import Iterator

csv.field_size_limit(1 << 30)

UTC = dt.timezone.utc


# ---- real news -------------------------------------------------------------------


def _reuters_paragraphs(text: str) -> str:
    """Reuters bodies mark a paragraph by a newline plus indentation and wrap
    lines at ~65 columns; turn that into blank-line paragraphs, one line each."""
    text = text.replace("\r", "")
    paras = re.split(r"\n[ \t]{2,}", text)
    paras = [re.sub(r"\s*\n\s*", " ", p).strip() for p in paras]
    return "\n\n".join(p for p in paras if p)


def _reuters_date(s: str) -> dt.datetime | None:
    s = s.strip()
    for fmt in ("%d-%b-%Y %H:%M:%S.%f", "%d-%b-%Y %H:%M:%S"):
        try:
            return dt.datetime.strptime(s, fmt).replace(tzinfo=UTC)
        except ValueError:
            pass
    return None


def telegram_posts(data: str) -> list[dict]:
    out = []
    for path in sorted(glob.glob(os.path.join(data, "telegram_ru", "raw", "*_messages.json"))):
        chan_file = os.path.basename(path).split("_")[0]
        with open(path, encoding="utf-8") as f:
            for m in json.load(f):
                text = (m.get("text") or "").strip()
                if not text:
                    continue
                out.append({
                    "id": f"{chan_file}:{m['message_id']}",
                    "title": None,
                    "body": text,
                    "published_at": dt.datetime.fromisoformat(m["date"]),
                    "source": m.get("channel") or chan_file,
                })
    out.sort(key=lambda d: (d["published_at"], d["id"]))
    return out


_REUTERS = re.compile(r"<REUTERS[^>]*NEWID=\"(\d+)\"[^>]*>(.*?)</REUTERS>", re.S)


def _tag(block: str, name: str) -> str:
    m = re.search(rf"<{name}>(.*?)</{name}>", block, re.S)
    return html.unescape(m.group(1)) if m else ""


def reuters_stories(data: str) -> list[dict]:
    out = []
    for path in sorted(glob.glob(os.path.join(data, "reuters_en", "reut2-*.sgm"))):
        with open(path, encoding="latin-1") as f:
            raw = f.read()
        for m in _REUTERS.finditer(raw):
            block = m.group(2)
            body = _reuters_paragraphs(_tag(block, "BODY"))
            if not body:
                continue
            out.append({
                "id": m.group(1),
                "title": _tag(block, "TITLE").strip() or None,
                "body": body,
                "published_at": _reuters_date(_tag(block, "DATE")),
                "source": "reuters",
            })
    out.sort(key=lambda d: (d["published_at"] or dt.datetime.min.replace(tzinfo=UTC), int(d["id"])))
    return out


def news_stream(data: str) -> list[dict]:
    """Telegram posts then Reuters stories, each in publication order."""
    return telegram_posts(data) + reuters_stories(data)


def _unescape_tsv(s: str) -> str:
    return s.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")


def labelled_pairs(data: str) -> list[dict]:
    """Both labelled sets. Telegram posts have no title; a Reuters text's first
    line is its title."""
    pairs = []
    p = os.path.join(data, "telegram_ru", "labelled_pairs.tsv")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                pair = {"pair_id": r["pair"], "set": "telegram", "label": r["label"]}
                for side in ("a", "b"):
                    pair[f"{side}_id"] = "tg:" + r[f"id_{side}"]
                    pair[f"{side}_body"] = _unescape_tsv(r[f"text_{side}"])
                    pair[f"{side}_title"] = None
                    pair[f"{side}_time"] = dt.datetime.fromisoformat(r[f"date_{side}"])
                    pair[f"{side}_source"] = r[f"channel_{side}"]
                pairs.append(pair)
    p = os.path.join(data, "reuters_en", "labelled_pairs.tsv")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                pair = {"pair_id": r["pair"], "set": "reuters", "label": r["label"]}
                for side in ("a", "b"):
                    text = _unescape_tsv(r[f"text_{side}"])
                    title, _, body = text.partition("\n")
                    body = re.sub(r"\s*Reuter\s*$", "", body)
                    pair[f"{side}_id"] = "rt:" + r[f"newid_{side}"]
                    pair[f"{side}_body"] = _reuters_paragraphs(body) or title
                    pair[f"{side}_title"] = title.strip() or None
                    pair[f"{side}_time"] = _reuters_date(r[f"date_{side}"])
                    pair[f"{side}_source"] = "reuters"
                pairs.append(pair)
    return pairs


# ---- paragraph pools --------------------------------------------------------------


def _split_paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.split()) >= 5]


def paragraph_pool(stream: list[dict]) -> tuple[dict, dict]:
    """Paragraphs and titles per language ('ru', 'en') from the real stream."""
    paras: dict[str, list[str]] = {"ru": [], "en": []}
    titles: dict[str, list[str]] = {"ru": [], "en": []}
    for d in stream:
        lang = "en" if d["source"] == "reuters" else "ru"
        ps = _split_paragraphs(d["body"])
        paras[lang].extend(ps)
        if d["title"]:
            titles[lang].append(d["title"])
        elif ps:
            titles[lang].append(ps[0].split("\n")[0][:120])
    return paras, titles


def fallback_paragraphs() -> tuple[dict, dict]:
    """Debian fortunes as the paragraph pool when ../shared/data is missing."""
    paras: dict[str, list[str]] = {"ru": [], "en": []}
    files = {"ru": sorted(glob.glob("/usr/share/games/fortunes/ru/*")),
             "en": ["/usr/share/games/fortunes/fortunes"]}
    for lang, paths in files.items():
        for path in paths:
            if path.endswith((".dat", ".u8")) or not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for chunk in f.read().split("\n%\n"):
                    chunk = re.sub(r"\s+", " ", chunk).strip()
                    if len(chunk.split()) >= 5:
                        paras[lang].append(chunk)
    titles = {lang: [p[:80] for p in ps[:5000]] for lang, ps in paras.items()}
    return paras, titles


def fallback_stream() -> list[dict]:
    """A small 'news stream' of fortunes, for to_document/add_document benches."""
    paras, _ = fallback_paragraphs()
    out, t0 = [], dt.datetime(2024, 1, 1, tzinfo=UTC)
    for lang in ("ru", "en"):
        for i, p in enumerate(paras[lang]):
            out.append({"id": f"{lang}{i}", "title": None, "body": p,
                        "published_at": t0 + dt.timedelta(minutes=len(out)), "source": f"fortunes-{lang}"})
    return out


# ---- scaled synthetic stream --------------------------------------------------------

BOILERPLATE = {
    "ru": ["Подписывайтесь на наш канал, чтобы не пропустить главное.",
           "Фото: пресс-служба. Читайте также другие новости дня на нашем сайте.",
           "Если вы стали свидетелем происшествия, пишите в наш бот обратной связи."],
    "en": ["Reuter. Copyright Reuters 1987. All rights reserved.",
           "For more news, visit our website and subscribe to the daily newsletter.",
           "Editing by the news desk; additional reporting by staff correspondents."],
}
_NUM = re.compile(r"\d+(?:[.,]\d+)?")


def _edit_words(text: str, rnd: random.Random, rate: float) -> str:
    """Light edits: drop or duplicate a few words."""
    words = text.split(" ")
    out = []
    for w in words:
        r = rnd.random()
        if r < rate / 2:
            continue
        out.append(w)
        if r > 1 - rate / 2:
            out.append(w)
    return " ".join(out)


def _new_numbers(text: str, rnd: random.Random) -> str:
    def repl(m: re.Match) -> str:
        s = m.group(0)
        digits = "".join(str(rnd.randint(0, 9)) for _ in s if _.isdigit())
        it = iter(digits)
        return "".join(next(it) if ch.isdigit() else ch for ch in s)
    return _NUM.sub(repl, text)


def scaled_stream(paras: dict, titles: dict, n: int, seed: int = 20240601,
                  reprint_rate: float = 0.10, negative_rate: float = 0.05,
                  min_words: int = 200, max_words: int = 1500,
                  t0: dt.datetime = dt.datetime(2024, 1, 1, tzinfo=UTC)) -> Iterator[dict]:
    """Yields n documents ``{id, kind, origin, title, body, published_at, source, lang}``.

    kind is 'original', 'reprint' (of ``origin``: new title, paragraphs dropped,
    truncated or reordered, boilerplate added, light word edits) or 'negative'
    (``origin``'s template with different numbers and one paragraph replaced).
    """
    rnd = random.Random(seed)
    langs = [l for l in ("ru", "en") if paras[l]]
    weights = [len(paras[l]) for l in langs]
    recent: list[tuple[int, str, list[str], str]] = []  # (id, lang, paragraphs, source)
    for i in range(n):
        published = t0 + dt.timedelta(seconds=30 * i + rnd.randint(0, 29))
        r = rnd.random()
        if recent and r < reprint_rate:
            oid, lang, ps, src = recent[rnd.randrange(len(recent))]
            ps = list(ps)
            if len(ps) > 3 and rnd.random() < 0.5:  # drop paragraphs
                for _ in range(rnd.randint(1, max(1, len(ps) // 4))):
                    ps.pop(rnd.randrange(len(ps)))
            if len(ps) > 3 and rnd.random() < 0.3:  # truncate
                ps = ps[: max(2, int(len(ps) * rnd.uniform(0.6, 0.9)))]
            if len(ps) > 2 and rnd.random() < 0.3:  # reorder the tail
                tail = ps[1:]
                rnd.shuffle(tail)
                ps = ps[:1] + tail
            ps = [_edit_words(p, rnd, 0.02) for p in ps]
            if rnd.random() < 0.6:
                ps.append(rnd.choice(BOILERPLATE[lang]))
            yield {"id": i, "kind": "reprint", "origin": oid, "title": rnd.choice(titles[lang]) if titles[lang] else None,
                   "body": "\n\n".join(ps), "published_at": published, "source": f"{lang}-reprinter-{rnd.randint(1, 20)}",
                   "lang": lang}
            continue
        if recent and r < reprint_rate + negative_rate:
            oid, lang, ps, src = recent[rnd.randrange(len(recent))]
            ps = [_new_numbers(p, rnd) for p in ps]
            ps[rnd.randrange(len(ps))] = rnd.choice(paras[lang])
            yield {"id": i, "kind": "negative", "origin": oid, "title": rnd.choice(titles[lang]) if titles[lang] else None,
                   "body": "\n\n".join(ps), "published_at": published, "source": src, "lang": lang}
            continue
        lang = rnd.choices(langs, weights)[0]
        pool = paras[lang]
        target = rnd.randint(min_words, max_words)
        ps, words = [], 0
        while words < target:
            p = pool[rnd.randrange(len(pool))]
            ps.append(p)
            words += p.count(" ") + 1
        src = f"{lang}-outlet-{rnd.randint(1, 50)}"
        recent.append((i, lang, ps, src))
        if len(recent) > 2000:
            recent.pop(rnd.randrange(len(recent)))
        yield {"id": i, "kind": "original", "origin": None, "title": rnd.choice(titles[lang]) if titles[lang] else None,
               "body": "\n\n".join(ps), "published_at": published, "source": src, "lang": lang}


def news_texts(paras: dict, n: int, seed: int, min_words: int = 300, max_words: int = 500) -> Iterator[str]:
    """n plain 300-500-word texts (for add_document), sampled like scaled_stream."""
    rnd = random.Random(seed)
    langs = [l for l in ("ru", "en") if paras[l]]
    for _ in range(n):
        lang = rnd.choice(langs)
        target, ps, words = rnd.randint(min_words, max_words), [], 0
        while words < target:
            p = paras[lang][rnd.randrange(len(paras[lang]))]
            take = p.split(" ")[: target - words]
            ps.append(" ".join(take))
            words += len(take)
        yield "\n\n".join(ps)
