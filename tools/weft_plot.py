#!/usr/bin/env python3
"""weft-plot: charts of perf results, as one SVG file with two panels.

  weft-plot [-o OUT.svg] [--title TEXT] [--placement out-of-place|in-place]
            FILE.json [FILE.json ...]

Each FILE is the JSON of a perf tool (`all_reduce_perf ... -J FILE`) or of a
side-by-side script (`perf/compare_peers.py ... --json FILE`). Left panel: time
per call against size; right panel: bus bandwidth against size; both axes
logarithmic, one line per run. A run is a record's "label" (the side-by-side
scripts set weft, mpi, gloo:ring, ...) or else its file's name. The subtitle
names the collective, the rank count and, where the records carry them, the
machine and the settings. Needs only Python's standard library.
"""
import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf"]
WIDTH, HEIGHT = 1000, 470
PANEL_W, PANEL_H = 400, 300
PANELS = [(80, 80), (580, 80)]  # top-left corners


def load(paths, placement):
    """Returns ({label: {size: (time_us, busbw)}}, the records' common facts)."""
    runs, facts = {}, {}
    for path in paths:
        with open(path) as f:
            records = json.load(f)
        stem = os.path.splitext(os.path.basename(path))[0]
        for rec in records:
            if rec.get("placement", "out-of-place") != placement:
                continue
            label = rec.get("label", stem)
            runs.setdefault(label, {})[rec["size"]] = (rec["time_us"], rec["busbw"])
            for key in ("tool", "nranks", "machine", "settings"):
                if key in rec:
                    facts.setdefault(key, set()).add(str(rec[key]))
    return runs, facts


def size_text(b):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale and b % scale == 0:
            return "%d%s" % (b // scale, unit)
    return "%d" % b


def decade_ticks(lo, hi):
    ticks, e = [], math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.0001:
        if 10 ** e >= lo / 1.0001:
            ticks.append(10 ** e)
        e += 1
    return ticks or [lo]


def value_text(v):
    return ("%g" % v) if v >= 0.001 else "%.0e" % v


class Axes:
    """Log-log mapping of one panel."""

    def __init__(self, corner, xs, ys):
        self.x0, self.y0 = corner
        self.lx = (math.log(min(xs)), math.log(max(xs) * 1.0001 if max(xs) == min(xs) else max(xs)))
        lo, hi = min(ys), max(ys)
        self.ly = (math.log(lo / 1.5), math.log(hi * 1.5))

    def px(self, x):
        a, b = self.lx
        return self.x0 + (math.log(x) - a) / ((b - a) or 1) * PANEL_W

    def py(self, y):
        a, b = self.ly
        return self.y0 + PANEL_H - (math.log(y) - a) / ((b - a) or 1) * PANEL_H


def panel(out, corner, runs, index, ylabel):
    xs = sorted({s for r in runs.values() for s in r})
    ys = [v[index] for r in runs.values() for v in r.values() if v[index] > 0]
    if not xs or not ys:
        return
    ax = Axes(corner, xs, ys)
    x0, y0 = corner
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'
               % (x0, y0, PANEL_W, PANEL_H))
    step = max(1, len(xs) // 8)
    for s in xs[::step]:
        x = ax.px(s)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (x, y0, x, y0 + PANEL_H))
        out.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>'
                   % (x, y0 + PANEL_H + 16, size_text(s)))
    lo, hi = math.exp(ax.ly[0]), math.exp(ax.ly[1])
    for t in decade_ticks(lo, hi):
        y = ax.py(t)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                   % (x0, y, x0 + PANEL_W, y))
        out.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>'
                   % (x0 - 6, y + 4, value_text(t)))
    out.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">size (bytes)</text>'
               % (x0 + PANEL_W // 2, y0 + PANEL_H + 36))
    out.append('<text x="%d" y="%d" font-size="12" text-anchor="middle" '
               'transform="rotate(-90 %d %d)">%s</text>'
               % (x0 - 52, y0 + PANEL_H // 2, x0 - 52, y0 + PANEL_H // 2, escape(ylabel)))
    for i, (label, run) in enumerate(runs.items()):
        pts = [(ax.px(s), ax.py(v[index])) for s, v in sorted(run.items()) if v[index] > 0]
        color = COLORS[i % len(COLORS)]
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s'
                   '</title></polyline>' % (color, " ".join("%.1f,%.1f" % p for p in pts),
                                            escape(label)))


def render(runs, facts, title):
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif">' % (WIDTH, HEIGHT),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="28" font-size="16" text-anchor="middle">%s</text>'
           % (WIDTH // 2, escape(title))]
    sub = []
    for key, fmt in (("tool", "%s"), ("nranks", "%s ranks"), ("machine", "%s"),
                     ("settings", "%s")):
        if key in facts:
            sub.append(", ".join(fmt % v for v in sorted(facts[key])))
    out.append('<text x="%d" y="50" font-size="12" text-anchor="middle" fill="#444">%s</text>'
               % (WIDTH // 2, escape("; ".join(sub))))
    panel(out, PANELS[0], runs, 0, "time per call (us), lower is better")
    panel(out, PANELS[1], runs, 1, "bus bandwidth (GB/s), higher is better")
    x = 80
    for i, label in enumerate(runs):
        color = COLORS[i % len(COLORS)]
        out.append('<rect x="%d" y="%d" width="14" height="4" fill="%s"/>'
                   % (x, HEIGHT - 28, color))
        out.append('<text x="%d" y="%d" font-size="12">%s</text>'
                   % (x + 18, HEIGHT - 22, escape(label)))
        x += 28 + 7 * len(label)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(prog="weft-plot", description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("-o", "--output", default="weft-plot.svg")
    ap.add_argument("--title", default=None)
    ap.add_argument("--placement", default="out-of-place", choices=["out-of-place", "in-place"])
    args = ap.parse_args()
    try:
        runs, facts = load(args.files, args.placement)
    except (OSError, ValueError, KeyError) as e:
        print("weft-plot: cannot read the results: %s" % e, file=sys.stderr)
        return 2
    if not runs:
        print("weft-plot: no %s records in %s" % (args.placement, " ".join(args.files)),
              file=sys.stderr)
        return 2
    title = args.title or "weft perf results"
    with open(args.output, "w") as f:
        f.write(render(runs, facts, title))
    print("weft-plot: %d run(s), %d size(s) -> %s" % (
        len(runs), len({s for r in runs.values() for s in r}), args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
