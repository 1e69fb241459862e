#!/usr/bin/env python3
"""The LUT regime map: per target, format and regime, the time of each LUT
strategy over up-convert's, from `lowbit bench --interleave --json` records.

Every pair is timed in the same rounds (--interleave), so a pair's ratio is
the median over rounds of (LUT time / up-convert time) in that round; a
table cell is the median of those over the shapes, with their range. tl2
(lut-elementwise) is compared with i2s up-convert, the same ternary weights.

  python3 scripts/regime_map.py DIR    # DIR: the JSON files of regime-map.sh
"""
import glob
import json
import os
import statistics
import sys

FORMATS = ["i2s", "tl2", "w1g128", "w2g64", "w4g32"]


def pair_ratios(records):
    """{(format, shape): [per-shape ratio]} for LUT over its up-convert."""
    by_key = {(r["format"], r["strategy"], r["shape"]): r for r in records}
    out = {}
    for (fmt, strategy, shape), r in by_key.items():
        if strategy == "upconvert":
            continue
        base = by_key.get(("i2s" if fmt == "tl2" else fmt, "upconvert", shape))
        if not base:
            continue
        rounds = [a / b for a, b in zip(r["rep_us"], base["rep_us"])]
        out.setdefault(fmt, []).append(statistics.median(rounds))
    return out


def main(directory):
    cells = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        target, regime = os.path.basename(path).split(".")[:2]
        with open(path) as f:
            records = json.load(f)["records"]
        for fmt, ratios in pair_ratios(records).items():
            cells.setdefault((target, regime), {}).setdefault(fmt, []).extend(ratios)
    columns = sorted(cells)
    print("| format (strategy) | " +
          " | ".join(f"{t} {g}" for t, g in columns) + " |")
    print("| --- " * (len(columns) + 1) + "|")
    for fmt in FORMATS:
        row = []
        for column in columns:
            ratios = cells[column].get(fmt)
            if not ratios:
                row.append("-")
                continue
            row.append(f"{statistics.median(ratios):.2f} "
                       f"[{min(ratios):.2f}, {max(ratios):.2f}]")
        name = f"{fmt} (lut-elementwise / i2s)" if fmt == "tl2" else \
            f"{fmt} (lut-bitserial)"
        print(f"| {name} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
