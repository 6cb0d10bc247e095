"""Writes the Telegram stream and its labelled pairs as TSV for bench/filter_stream.sql.

usage: python3 bench/filter_stream.py DATA_DIR OUT_DIR
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402  (the one reader of the labelled pairs)


def esc(x: str) -> str:
    return x.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def main() -> None:
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    n = 0
    with open(os.path.join(out, "stream.tsv"), "w") as f:
        for path in sorted(glob.glob(os.path.join(data, "telegram_ru/raw/*_messages.json"))):
            channel = os.path.basename(path).split("_")[0]
            for m in json.load(open(path)):
                text = m.get("text") or ""
                if text.strip():
                    f.write(f"{channel}:{m['message_id']}\t{esc(text)}\n")
                    n += 1
    p = 0
    with open(os.path.join(out, "pairs.tsv"), "w") as f:
        for pair in corpus.labelled_pairs(data):
            if pair["set"] == "telegram":
                # corpus names Telegram posts "tg:channel:message_id"
                f.write(f"{pair['a_id'][3:]}\t{pair['b_id'][3:]}\t{pair['label']}\n")
                p += 1
    print(f"{n} posts, {p} labelled pairs")


if __name__ == "__main__":
    main()
