#!/usr/bin/env python3
"""Summarise docs/hybrid/run_experiment.sh results: a Markdown table and an SVG.

Reads RESULTS/{unloaded,loaded,slow}-N.json (lowbit bench --json with
--schedule-policy static,dynamic) and writes
  - to stdout: per condition and shape, the median over runs of each run's
    median us for static and dynamic, and the median (min..max over runs) of
    each run's paired static/dynamic ratio (per round: static rep / dynamic
    rep, the two reps ran back to back; per run: the median over rounds);
  - OUT.svg: left, those paired ratios per shape and condition with the
    min..max over runs; right, the ratio of pool thread 1 after each of the
    first dynamic calls of the run (first run, first shape).
  - OUT.json: the numbers behind both.
Standard library only. Usage: plot.py [RESULTS] [OUT]  (OUT without suffix)
"""
import glob
import json
import os
import re
import statistics
import sys

RESULTS = sys.argv[1] if len(sys.argv) > 1 else "docs/hybrid/results"
OUT = sys.argv[2] if len(sys.argv) > 2 else "docs/hybrid/dynamic-scheduling"
CONDITIONS = [
    ("unloaded", "no added load", "#0072B2"),
    ("loaded", "CPU-bound process on CPU 1", "#E69F00"),
    ("slow", "pool thread on CPU 1 made 2x slower", "#009E73"),
]


def load():
    runs = {}
    for path in glob.glob(os.path.join(RESULTS, "*.json")):
        m = re.match(r"(\w+)-(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        with open(path) as f:
            runs.setdefault(m.group(1), []).append((int(m.group(2)), json.load(f)))
    for cond in runs:
        runs[cond].sort(key=lambda x: x[0])
    return runs


def summarise(runs):
    table = {}
    shapes = []
    for cond, _, _ in CONDITIONS:
        for _, doc in runs.get(cond, []):
            by_shape = {}
            for r in doc["records"]:
                by_shape.setdefault(r["shape"], {})[r["schedule_policy"]] = r
            for shape, pol in by_shape.items():
                if shape not in shapes:
                    shapes.append(shape)
                st, dy = pol["static"], pol["dynamic"]
                paired = statistics.median(
                    s / d for s, d in zip(st["rep_us"], dy["rep_us"]))
                e = table.setdefault((cond, shape), {
                    "static_us": [], "dynamic_us": [], "paired": [],
                    "static_gbps": [], "dynamic_gbps": [], "ratios": [],
                    "tiles": []})
                e["static_us"].append(st["us"])
                e["dynamic_us"].append(dy["us"])
                e["static_gbps"].append(st["gbps"])
                e["dynamic_gbps"].append(dy["gbps"])
                e["paired"].append(paired)
                e["ratios"].append(dy["ratios"])
                e["tiles"].append(dy["thread_tiles"])
    return shapes, table


def markdown(shapes, table, runs):
    lines = []
    lines.append("| condition | shape | static us | dynamic us | static GB/s "
                 "| dynamic GB/s | static/dynamic, median (min..max) of "
                 f"{len(next(iter(runs.values())))} runs | dynamic tiles/call "
                 "(thread 0 / 1) |")
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cond, label, _ in CONDITIONS:
        for shape in shapes:
            e = table.get((cond, shape))
            if not e:
                continue
            med = statistics.median
            tiles = [statistics.median(t[i] for t in e["tiles"]) for i in (0, 1)]
            lines.append(
                f"| {label} | {shape} | {med(e['static_us']):.1f} | "
                f"{med(e['dynamic_us']):.1f} | {med(e['static_gbps']):.1f} | "
                f"{med(e['dynamic_gbps']):.1f} | **{med(e['paired']):.2f}** "
                f"({min(e['paired']):.2f}..{max(e['paired']):.2f}) | "
                f"{tiles[0]:.0f} / {tiles[1]:.0f} |")
    return "\n".join(lines)


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg(shapes, table, runs):
    W, H = 980, 430
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           '<text x="20" y="24" font-size="15" font-weight="bold">Dynamic vs '
           'static M split, bitnet-b1.58-2b i2s cold GEMV, 2 threads '
           '(this 2-core VM)</text>']
    # Left panel: paired ratios.
    x0, y0, pw, ph = 70, 60, 520, 290
    lo, hi = 0.6, 2.8
    def y(v):
        return y0 + ph - (min(max(v, lo), hi) - lo) / (hi - lo) * ph
    out.append(f'<text x="{x0}" y="{y0 - 12}" font-weight="bold">static time / '
               'dynamic time (&gt; 1: dynamic faster)</text>')
    for t in [0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4, 2.6, 2.8]:
        out.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                   f'stroke="{"#444" if t == 1.0 else "#ddd"}" '
                   f'stroke-width="{1.5 if t == 1.0 else 1}"/>')
        out.append(f'<text x="{x0 - 6}" y="{y(t) + 4:.1f}" text-anchor="end">'
                   f'{t:.1f}</text>')
    group = pw / len(shapes)
    bw = group / (len(CONDITIONS) + 1)
    for i, shape in enumerate(shapes):
        gx = x0 + i * group
        out.append(f'<text x="{gx + group / 2:.1f}" y="{y0 + ph + 18}" '
                   f'text-anchor="middle">{shape}</text>')
        for j, (cond, _, color) in enumerate(CONDITIONS):
            e = table.get((cond, shape))
            if not e:
                continue
            med = statistics.median(e["paired"])
            bx = gx + bw / 2 + j * bw
            out.append(f'<rect x="{bx:.1f}" y="{min(y(med), y(1.0)):.1f}" '
                       f'width="{bw - 3:.1f}" height="{abs(y(1.0) - y(med)):.1f}" '
                       f'fill="{color}"/>')
            cx = bx + (bw - 3) / 2
            out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" '
                       f'y1="{y(min(e["paired"])):.1f}" y2="{y(max(e["paired"])):.1f}" '
                       'stroke="black"/>')
            out.append(f'<text x="{cx:.1f}" y="{min(y(med), y(1.0)) - 4:.1f}" '
                       f'text-anchor="middle" font-size="10">{med:.2f}</text>')
    out.append(f'<text x="{x0 + pw / 2}" y="{y0 + ph + 36}" text-anchor="middle">'
               'weight shape (M x K); bar: median of the runs, line: min..max'
               '</text>')
    # Legend.
    for j, (cond, label, color) in enumerate(CONDITIONS):
        ly = y0 + ph + 56 + 0 * j
        lx = x0 + j * 250 - 40
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly}">{esc(label)}</text>')
    # Right panel: ratio convergence.
    x1, pw2 = 660, 290
    calls = 48
    rlo, rhi = 0.0, 1.2
    def yr(v):
        return y0 + ph - (min(max(v, rlo), rhi) - rlo) / (rhi - rlo) * ph
    def xr(k):
        return x1 + (k - 1) / (calls - 1) * pw2
    out.append(f'<text x="{x1}" y="{y0 - 12}" font-weight="bold">ratio of thread 1 '
               'after each dynamic call</text>')
    for t in [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2]:
        out.append(f'<line x1="{x1}" x2="{x1 + pw2}" y1="{yr(t):.1f}" '
                   f'y2="{yr(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x1 - 6}" y="{yr(t) + 4:.1f}" text-anchor="end">'
                   f'{t:.1f}</text>')
    for k in [1, 16, 32, 48]:
        out.append(f'<text x="{xr(k):.1f}" y="{y0 + ph + 18}" '
                   f'text-anchor="middle">{k}</text>')
    out.append(f'<text x="{x1 + pw2 / 2}" y="{y0 + ph + 36}" text-anchor="middle">'
               'call (first shape of run 1, from the seed 1 / 1)</text>')
    ideal = yr(2 / 3)
    out.append(f'<line x1="{x1}" x2="{x1 + pw2}" y1="{ideal:.1f}" y2="{ideal:.1f}" '
               'stroke="#009E73" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{x1 + pw2 - 2}" y="{ideal + 13:.1f}" text-anchor="end" '
               'font-size="10" fill="#009E73">nominal 2x slower: 2/3 (share 1/3)</text>')
    traces = {}
    for cond, _, color in CONDITIONS:
        docs = runs.get(cond, [])
        if not docs:
            continue
        rec = next(r for r in docs[0][1]["records"]
                   if r["schedule_policy"] == "dynamic")
        trace = [v[1] for v in rec["ratio_trace"][:calls]]
        traces[cond] = trace
        pts = " ".join(f"{xr(k + 1):.1f},{yr(v):.1f}" for k, v in enumerate(trace))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" '
                   'stroke-width="2"/>')
    out.append("</svg>")
    return "\n".join(out), traces


def main():
    runs = load()
    if not runs:
        sys.exit(f"no results under {RESULTS}")
    shapes, table = summarise(runs)
    print(markdown(shapes, table, runs))
    text, traces = svg(shapes, table, runs)
    with open(OUT + ".svg", "w") as f:
        f.write(text + "\n")
    summary = {
        "conditions": {c: l for c, l, _ in CONDITIONS},
        "cases": [dict(condition=c, shape=s, **v) for (c, s), v in table.items()],
        "ratio_traces_thread1": traces,
    }
    with open(OUT + ".json", "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
