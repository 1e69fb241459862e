#!/usr/bin/env python3
"""Splits `lowbit bench --json` reps by where the pool's threads ran.

Every probe pass of `lowbit bench` also times the thread pool's handoff (an
empty job on all threads, `rep_handoff_us`). On a VM whose vCPUs the
hypervisor places either on one core complex or on two, the handoff is
bimodal (here ~0.2 us or 0.6-1.0 us) and the read limit moves with it, so a
median over all reps mixes two machines. This prints, per case and
placement, the reps, the median read limit, the median ratio of effective
bandwidth to that limit, the median of its rep time over the first kernel
case of its shape in the same round (with --interleave, e.g. i2s over tl2)
and, for runs with --read-floor, over the pure read's in the same round:

    python3 scripts/bench_by_placement.py run1.json run2.json [--split 0.4]

Only cold GEMV records (those with a probe per rep) are listed.
"""

import argparse
import json
import signal
import statistics
import sys


def case_key(record):
    return (record["shape"], record["N"], record["format"],
            record["strategy"], record["target"],
            record.get("schedule_policy", ""))


def main():
    parser = argparse.ArgumentParser(
        description="Split lowbit bench --json reps by thread placement.")
    parser.add_argument("files", nargs="+", help="lowbit bench --json outputs")
    parser.add_argument(
        "--split", type=float, default=0.4,
        help="handoff (us) above which a rep counts as two core complexes "
             "(default 0.4)")
    args = parser.parse_args()

    # (case, placement) -> lists of limits, ratios and time / read.
    rows = {}
    order = []
    for path in args.files:
        try:
            with open(path) as f:
                records = json.load(f)["records"]
        except OSError as e:
            sys.exit(f"bench_by_placement: cannot read {path}: {e.strerror}")
        except (ValueError, KeyError, TypeError):
            sys.exit(f"bench_by_placement: {path} is not a lowbit bench "
                     f"--json file")
        reads = {(r["shape"], r["N"], r["format"]): r for r in records
                 if r["strategy"] == "read"}
        firsts = {}  # (shape, N) -> the first kernel record of that shape
        for r in records:
            if r["strategy"] != "read":
                firsts.setdefault((r["shape"], r["N"]), r)
        for r in records:
            if not r.get("cold") or r.get("N") != 1:
                continue
            probes = r.get("rep_probe_gbps", [])
            handoffs = r.get("rep_handoff_us", [])
            if not probes or len(handoffs) != len(r["rep_us"]):
                continue
            read = first = None
            if r["strategy"] != "read":
                read = reads.get((r["shape"], r["N"], r["format"]))
                first = firsts[(r["shape"], r["N"])]
            for k, us in enumerate(r["rep_us"]):
                placement = "two" if handoffs[k] > args.split else "one"
                key = (case_key(r), placement)
                if key not in rows:
                    rows[key] = {"limit": [], "ratio": [], "first": [],
                                 "read": []}
                    order.append(key)
                row = rows[key]
                row["limit"].append(probes[k])
                row["ratio"].append(r["packed_bytes"] / us / 1e3 / probes[k])
                if read is not None and k < len(read["rep_us"]):
                    row["read"].append(us / read["rep_us"][k])
                if first is not None and k < len(first["rep_us"]):
                    row["first"].append(us / first["rep_us"][k])

    if not rows:
        sys.exit("bench_by_placement: no cold GEMV records with per-rep "
                 "probes in the input")
    print(f"{'shape':<12} {'N':>4} {'format':<7} {'strategy':<15} "
          f"{'target':<15} {'complexes':<9} {'reps':>4} {'limit':>6} "
          f"{'ratio':>6} {'/first':>6} {'/read':>6}")
    order.sort(key=lambda key: (key[0], key[1]))
    for key in order:
        (shape, n, fmt, strategy, target, _), placement = key
        row = rows[key]
        def column(values):
            return (f"{statistics.median(values):6.3f}" if values
                    else f"{'':>6}")
        print(f"{shape:<12} {n:>4} {fmt:<7} {strategy:<15} {target:<15} "
              f"{placement:<9} {len(row['ratio']):>4} "
              f"{statistics.median(row['limit']):6.1f} "
              f"{statistics.median(row['ratio']):6.3f} "
              f"{column(row['first'])} {column(row['read'])}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    main()
