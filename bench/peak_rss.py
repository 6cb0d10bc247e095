"""Runs one SQL statement in a fresh backend and prints the backend's peak resident
memory (VmHWM from /proc, so run it on the database's machine, as root or the
server's user), its time and the first of its result or error.

    bench/.venv/bin/python bench/peak_rss.py --host DIR --port P "SELECT …"

What docs/security.md quotes for the document text form was measured so, e.g.
    "SELECT ('{\"v\":1,\"sentences\":[' || repeat('{\"h\":\"0\",\"t\":[]},', 1500000)
             || '{\"h\":\"0\",\"t\":[]}]}')::dedup.document IS NOT NULL"
"""

from __future__ import annotations

import argparse
import time

import psycopg


def peak_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return -1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sql")
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="postgres")
    a = ap.parse_args()
    conn = psycopg.connect(host=a.host, port=a.port, user="postgres", dbname=a.db, autocommit=True)
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    base = peak_mb(pid)
    t = time.perf_counter()
    try:
        row = conn.execute(a.sql).fetchone()
        out = str(row)[:80]
    except psycopg.Error as e:
        out = f"ERROR {str(e).splitlines()[0][:100]}"
    print(f"peak {peak_mb(pid)} MB (at connection {base} MB), {time.perf_counter() - t:.2f} s: {out}")


if __name__ == "__main__":
    main()
