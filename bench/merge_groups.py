"""Would the trigger mark better if a new post that duplicates candidates of two
groups joined the groups? 11-13 of the held-out directional errors are posts
marked into one group of a story while the labelled pair is with a post of
another group of the same story, which the stream never linked.

Offline, on the emulation of bench/trigger_emulate.py (run it first, after
`bash bench/stream_replay.sh`, so that its --cache exists), with the held-out
families' stored models. Each post is marked as src/decide.rs marks it (the
candidate with the highest positive score); then the group of every other
candidate it duplicates with a score above tau (`one`), or that also duplicates
it above tau (`both`), is joined to that group under the earlier original, as a
trigger would have to do by re-marking the rows already stored. The final groups
are scored.

    bench/.venv/bin/python bench/merge_groups.py [--cache FILE]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_replay import FAMILIES  # noqa: E402
from trigger_emulate import current, decision, emulate, emulation_args, load_cache, score, show  # noqa: E402


def emulate_merge(d: dict, tau: float, mode: str) -> dict:
    """One replay table decided again, joining groups as above; {id: original}."""
    model = d["model"]
    seq = {i: s for i, s, _ in d["posts"]}
    by_new: dict = {}
    for n, o, xno, xon in d["cands"]:
        by_new.setdefault(n, []).append((o, decision(model, xno), decision(model, xon)))
    parent: dict = {}

    def find(k):
        while parent.get(k, k) != k:
            k = parent[k]
        return k

    for i in sorted(seq, key=lambda k: seq[k]):
        pos = [t for t in by_new.get(i, []) if t[1] > 0]
        if not pos:
            continue
        best = max(pos, key=lambda t: t[1])
        rb = find(best[0])
        parent[i] = rb
        for t in pos:
            if t is best or t[1] <= tau or (mode == "both" and t[2] <= tau):
                continue
            r = find(t[0])
            if r == rb:
                continue
            if seq[r] < seq[rb]:
                parent[rb], rb = r, r
            else:
                parent[r] = rb
    return {i: find(i) for i in seq if find(i) != i}


def main() -> None:
    data = load_cache(emulation_args().parse_args().cache)
    show("current rule", score(data, {f: emulate(data[f], current) for f in FAMILIES}))
    for mode in ("one", "both"):
        for tau in (0, 0.5, 1, 2, 3):
            show(f"join groups, {mode}, tau {tau}", score(data, {f: emulate_merge(data[f], tau, mode) for f in FAMILIES}))


if __name__ == "__main__":
    main()
