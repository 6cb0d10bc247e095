"""Would the trigger do better without the channels' recurring lines? Telegram posts
end in a channel's own call to action ("Подписаться | Прислать новость"), which the
analyser takes for words of the story. This replays the stream as
bench/stream_replay.py does, with each post's lines dropped when the same line
(lower-cased, links and punctuation removed, digits kept) already ended --n earlier
posts of the same channel, in publication order (what a trigger could know), and
only when at least --min-words words remain.

    bench/.venv/bin/python bench/boilerplate.py DATA --host H --port P --db DB [--n 5] [--min-words 0]

DB must exist with pg_dedup and pg_trgm (bench/stream_replay.sh makes
dedup_replay); the other options are stream_replay.py's.
"""

from __future__ import annotations

import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import stream_replay  # noqa: E402

URL = re.compile(r"\(?https?://\S+\)?")


def norm(line: str) -> str:
    line = re.sub(r"[^\w ]+", " ", URL.sub(" ", line.lower()))
    return " ".join(line.split())


def cleaner(posts_of, n: int, min_words: int):
    def cleaned(data: str) -> list[dict]:
        posts = posts_of(data)
        seen: collections.Counter = collections.Counter()
        dropped = 0
        for p in posts:
            lines = p["body"].split("\n")
            keys = [norm(x) for x in lines]
            keep = [x for x, k in zip(lines, keys) if not k or seen[(p["source"], k)] < n]
            if len(" ".join(norm(x) for x in keep).split()) >= max(min_words, 1):
                dropped += len(lines) - len(keep)
                p["body"] = "\n".join(keep).strip()
            for k in set(keys):
                if k:
                    seen[(p["source"], k)] += 1
        print(f"recurring lines dropped: {dropped} (n {n}, min words {min_words})", flush=True)
        return posts
    return cleaned


def main() -> None:
    args, n, min_words = [], 5, 0
    it = iter(sys.argv[1:])
    for x in it:
        if x == "--n":
            n = int(next(it))
        elif x == "--min-words":
            min_words = int(next(it))
        else:
            args.append(x)
    corpus.telegram_posts = cleaner(corpus.telegram_posts, n, min_words)
    stream_replay.corpus.telegram_posts = corpus.telegram_posts
    sys.argv = [sys.argv[0]] + args
    stream_replay.main()


if __name__ == "__main__":
    main()
