"""Writes the Telegram stream and its labelled pairs as TSV for bench/filter_stream.sql.

usage: python3 bench/filter_stream.py DATA_DIR OUT_DIR
"""
import csv
import glob
import json
import os
import sys


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
    csv.field_size_limit(10**9)
    p = 0
    with open(os.path.join(out, "pairs.tsv"), "w") as f, \
            open(os.path.join(data, "telegram_ru/labelled_pairs.tsv")) as src:
        for row in csv.DictReader(src, delimiter="\t", quoting=csv.QUOTE_NONE):
            f.write(f"{row['id_a']}\t{row['id_b']}\t{row['label']}\n")
            p += 1
    print(f"{n} posts, {p} labelled pairs")


if __name__ == "__main__":
    main()
