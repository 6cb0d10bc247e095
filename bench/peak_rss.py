"""Runs one SQL statement in a fresh backend and prints the backend's peak resident
memory (VmHWM from /proc, so run it on the database's machine, as root or the
server's user), its time and the first of its result or error. VmHWM counts the
shared buffers the backend touched too; `--private` samples its own memory
(RssAnon) every 20 ms instead, which is what a statement over a large table
allocates.

    bench/.venv/bin/python bench/peak_rss.py --host DIR --port P [--private] "SELECT …"

What docs/security.md quotes for the document text form was measured so, e.g.
    "SELECT ('{\"v\":1,\"sentences\":[' || repeat('{\"h\":\"0\",\"t\":[]},', 1500000)
             || '{\"h\":\"0\",\"t\":[]}]}')::dedup.document IS NOT NULL"
"""

from __future__ import annotations

import argparse
import threading
import time

import psycopg


def status_mb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return -1


def peak_mb(pid: int) -> int:
    return status_mb(pid, "VmHWM")


class PrivatePeak(threading.Thread):
    """The highest RssAnon of a backend, sampled until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, status_mb(pid, "RssAnon"), threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.peak = max(self.peak, status_mb(self.pid, "RssAnon"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sql")
    ap.add_argument("--host", default="/tmp/pg_dedup_bench")
    ap.add_argument("--port", type=int, default=54331)
    ap.add_argument("--db", default="postgres")
    ap.add_argument("--private", action="store_true", help="peak RssAnon, not VmHWM")
    a = ap.parse_args()
    conn = psycopg.connect(host=a.host, port=a.port, user="postgres", dbname=a.db, autocommit=True)
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    sampler = PrivatePeak(pid) if a.private else None
    base = sampler.peak if sampler else peak_mb(pid)
    if sampler:
        sampler.start()
    t = time.perf_counter()
    try:
        row = conn.execute(a.sql).fetchone()
        out = str(row)[:80]
    except psycopg.Error as e:
        out = f"ERROR {str(e).splitlines()[0][:100]}"
    elapsed = time.perf_counter() - t
    if sampler:
        sampler.done.set()
        sampler.join()
    peak = sampler.peak if sampler else peak_mb(pid)
    kind = "private" if sampler else "peak"
    print(f"{kind} {peak} MB (at connection {base} MB), {elapsed:.2f} s: {out}")


if __name__ == "__main__":
    main()
