#!/usr/bin/env python3
"""Draws the committed SVG plots of docs/benchmarks.md and docs/quality.md.

Standard library only: the SVG text is written by hand. The numbers are copied from
the tables named next to each data set; change them here when a table changes, then
run `python3 docs/img/make_plots.py` from anywhere.
"""

import math
import os
from xml.sax.saxutils import escape

OUT = os.path.dirname(os.path.abspath(__file__))

FONT = "font-family='DejaVu Sans, Arial, sans-serif'"
TRIGGER = "#1f77b4"  # pg_dedup
PLAIN = "#b0b0b0"  # baseline
OTHER = "#ff7f0e"
THIRD = "#2ca02c"

# docs/benchmarks.md, "Ingest with PostgreSQL's default settings": run A
# (100,000 rows, machine otherwise idle) and run C (1,000,000 rows).
# (workload, trigger docs/s, plain docs/s)
INGEST = {
    "run A: 100,000 rows (commit 9db020b)": [
        ("INSERT … SELECT", 6579, 250968),
        ("COPY", 6583, 200286),
        ("1 single-row writer", 861, 2634),
        ("2 single-row writers", 1443, 3797),
        ("4 single-row writers", 1322, 5064),
    ],
    "run C: 1,000,000 rows (commit a946292)": [
        ("INSERT … SELECT", 4695, 161471),
        ("COPY", 5402, 264828),
        ("1 single-row writer", 507, 2385),
        ("2 single-row writers", 1102, 3918),
        ("4 single-row writers", 995, 4493),
    ],
}

# docs/quality.md, "The trigger on the public news stream".
# (configuration, any-direction F1, directional F1)
STREAM_F1 = [
    ("before 0.2.0 defaults (imatch, threshold rule)", 0.53, 0.53),
    ("imatch, linear model of the 11 paper features", 0.63, 0.65),
    ("defaults, 18 features, held-out family models", 0.81, 0.81),
    ("defaults, 24 features, held-out family models", 0.863, 0.853),
    ("defaults, built-in model revision 2 (not held out)", 0.878, 0.865),
]

# docs/quality.md, "Short texts against pg_trgm" (22 features: the built-in
# model's 20, `trigrams`, `word_order`).
# (corpus, pg_dedup CV, pg_trgm, built-in news model)
SHORT_AUC = [
    ("ParaPhraser (ru, 7,227 pairs)", 0.886, 0.862, 0.675),
    ("MSRP (en, 4,076 pairs)", 0.806, 0.768, 0.592),
]


def fmt_int(v):
    return f"{v:,}"


def text(x, y, s, size=12, anchor="start", weight="normal", fill="#222"):
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' {FONT} font-size='{size}' "
        f"text-anchor='{anchor}' font-weight='{weight}' fill='{fill}'>{escape(s)}</text>"
    )


def rect(x, y, w, h, fill):
    return f"<rect x='{x:.1f}' y='{y:.1f}' width='{max(w, 0):.1f}' height='{h:.1f}' fill='{fill}'/>"


def line(x1, y1, x2, y2, stroke="#ccc", width=1):
    return (
        f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' "
        f"stroke='{stroke}' stroke-width='{width}'/>"
    )


def svg(width, height, body):
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'>\n"
        f"<rect width='{width}' height='{height}' fill='white'/>\n"
        + "\n".join(body)
        + "\n</svg>\n"
    )


def legend(x, y, items):
    out = []
    for label, colour in items:
        out.append(rect(x, y - 10, 12, 12, colour))
        out.append(text(x + 18, y, label, 12))
        x += 24 + 7.2 * len(label)
    return out


def ingest_rate():
    """Horizontal bars on a log scale: trigger against plain INSERT, per workload."""
    width, label_w, right = 860, 170, 40
    plot_w = width - label_w - right
    lo, hi = 2, 6  # 10^2 .. 10^6 docs/s
    bar_h, gap, panel_gap = 13, 10, 46
    body = [
        text(width / 2, 24, "Inserts per second through the dedup trigger and plain INSERT", 15, "middle", "bold"),
        text(width / 2, 42, "release build, PostgreSQL's default settings, 2-core machine; log scale", 12, "middle", fill="#555"),
    ]
    body += legend(label_w, 66, [("through the dedup trigger", TRIGGER), ("plain INSERT", PLAIN)])
    y = 90

    def xpos(v):
        return label_w + (math.log10(v) - lo) / (hi - lo) * plot_w

    for title, rows in INGEST.items():
        body.append(text(label_w, y + 4, title, 13, weight="bold"))
        y += 14
        top = y
        panel_h = len(rows) * (2 * bar_h + gap)
        for e in range(lo, hi + 1):
            x = xpos(10**e)
            body.append(line(x, top, x, top + panel_h, "#ddd"))
            body.append(text(x, top + panel_h + 14, fmt_int(10**e), 11, "middle", fill="#555"))
        for name, trig, plain in rows:
            body.append(text(label_w - 8, y + bar_h + 4, name, 12, "end"))
            body.append(rect(label_w, y, xpos(trig) - label_w, bar_h, TRIGGER))
            body.append(text(xpos(trig) + 4, y + bar_h - 2, f"{fmt_int(trig)} ({trig / plain:.1%} of plain)", 11))
            body.append(rect(label_w, y + bar_h, xpos(plain) - label_w, bar_h, PLAIN))
            body.append(text(xpos(plain) + 4, y + 2 * bar_h - 2, fmt_int(plain), 11, fill="#555"))
            y += 2 * bar_h + gap
        y += panel_gap
    body.append(text(label_w + plot_w / 2, y - 16, "documents or inserts per second", 12, "middle", fill="#555"))
    body.append(text(width / 2, y + 4, "Source: docs/benchmarks.md, bash bench/ingest.sh, runs A and C", 11, "middle", fill="#777"))
    return svg(width, int(y + 16), body)


def vertical_bars(title, subtitle, groups, series, lo, hi, ticks, source, label_w_each, digits):
    """Grouped vertical bars. groups: [(label, [values...])]; series: [(name, colour)]."""
    n = len(series)
    bar_w, inner_gap = 34, 4
    group_w = n * bar_w + (n - 1) * inner_gap
    left, top, plot_h = 60, 90, 260
    slot = max(group_w + 40, label_w_each)
    width = left + slot * len(groups) + 30
    width = max(width, 640)
    body = [
        text(width / 2, 24, title, 15, "middle", "bold"),
        text(width / 2, 42, subtitle, 12, "middle", fill="#555"),
    ]
    body += legend(left, 66, series)

    def ypos(v):
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    for t in ticks:
        body.append(line(left, ypos(t), width - 20, ypos(t), "#e2e2e2"))
        body.append(text(left - 6, ypos(t) + 4, f"{t:.2f}".rstrip("0").rstrip("."), 11, "end", fill="#555"))
    body.append(line(left, top + plot_h, width - 20, top + plot_h, "#888"))
    for i, (label, values) in enumerate(groups):
        gx = left + slot * i + (slot - group_w) / 2
        for j, v in enumerate(values):
            x = gx + j * (bar_w + inner_gap)
            body.append(rect(x, ypos(v), bar_w, top + plot_h - ypos(v), series[j][1]))
            body.append(text(x + bar_w / 2, ypos(v) - 4, f"{v:.{digits}f}", 11, "middle"))
        # wrap long labels on two lines
        words, lines_, cur = label.split(), [], ""
        for w in words:
            if len(cur) + len(w) + 1 > slot / 7 and cur:
                lines_.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}".strip()
        lines_.append(cur)
        for k, ln in enumerate(lines_):
            body.append(text(left + slot * i + slot / 2, top + plot_h + 18 + 14 * k, ln, 12, "middle"))
    height = top + plot_h + 18 + 14 * 3 + 24
    body.append(text(width / 2, height - 10, source, 11, "middle", fill="#777"))
    return svg(int(width), int(height), body)


def stream_f1():
    return vertical_bars(
        "The trigger's marks on the Telegram stream: F1 by configuration",
        "14,650 posts replayed through one INSERT … SELECT, scored against 783 labelled pairs",
        [(label, [anyd, dird]) for label, anyd, dird in STREAM_F1],
        [("any direction F1", PLAIN), ("directional F1", TRIGGER)],
        0.0,
        1.0,
        [0, 0.2, 0.4, 0.6, 0.8, 1.0],
        "Source: docs/quality.md, bash bench/stream_replay.sh",
        190,
        2,
    )


def short_texts_auc():
    return vertical_bars(
        "Short texts: ROC-AUC of pg_dedup and pg_trgm similarity()",
        "5-fold cross-validated linear models on paraphrase corpora; axis starts at 0.5 (chance)",
        [(label, [d, t, b]) for label, d, t, b in SHORT_AUC],
        [("pg_dedup (cross-validated)", TRIGGER), ("pg_trgm similarity()", OTHER), ("built-in news model", THIRD)],
        0.5,
        1.0,
        [0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
        "Source: docs/quality.md, bash bench/short_texts.sh",
        300,
        3,
    )


def main():
    for name, draw in [
        ("ingest_rate.svg", ingest_rate),
        ("stream_f1.svg", stream_f1),
        ("short_texts_auc.svg", short_texts_auc),
    ]:
        path = os.path.join(OUT, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(draw())
        print(f"wrote {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
