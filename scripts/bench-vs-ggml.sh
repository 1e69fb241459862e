#!/usr/bin/env bash
# lowbit's kernels against llama.cpp's own (ggml's CPU MUL_MAT) per format,
# shape and N, in alternating rounds: `lowbit bench` (which measures the read
# limit in the same run, right before each rep) and ggml-matmul-bench
# (tools/llama-driver, built by scripts/llama-cpp.sh) on the same shapes;
# lowbit first in odd rounds, ggml first in even ones. Then one table: per
# format, shape and N, the medians over rounds of each one's time, the
# speed-up lowbit / ggml (median of the per-round ratios, and their range),
# and each one's GEMV bandwidth over the read limit lowbit measured for that
# case in the same round. The load average is recorded before each step.
#
#   bash scripts/bench-vs-ggml.sh [--shapes S] [--formats F] [--rounds 3] ...
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/bench-vs-ggml.sh [options]

  --shapes MxK,...   weight shapes (default: Llama-3-8B's
                     4096x4096,1024x4096,14336x4096,4096x14336)
  --formats F,...    lowbit formats, each with its ggml type after '=' when
                     the names differ (default
                     q4_k,q6_k,q8_0,q5_k,q2_k,q4_0,i2s=tq2_0: i2s against
                     ggml's tq2_0 is the ternary row)
  --n N,...          activation columns (default 1,128)
  --rounds R         alternating rounds (default 3)
  --threads T        threads for both (default 2)
  --reps R           reps per case and round, for both (default 5)
  --lowbit PATH      the lowbit binary (default build/bin/lowbit)
  --out DIR          raw outputs and table.md (default: a new /tmp directory)
EOF
}

err() {
  echo "bench-vs-ggml: error: $1" >&2
  exit 1
}

shapes=4096x4096,1024x4096,14336x4096,4096x14336
formats=q4_k,q6_k,q8_0,q5_k,q2_k,q4_0,i2s=tq2_0
ns=1,128
rounds=3
threads=2
reps=5
lowbit=build/bin/lowbit
out=
while [ $# -gt 0 ]; do
  case $1 in
  -h | --help) usage; exit 0 ;;
  --shapes | --formats | --n | --rounds | --threads | --reps | --lowbit | --out)
    [ $# -ge 2 ] || err "$1 needs a value"
    case $1 in
    --shapes) shapes=$2 ;;
    --formats) formats=$2 ;;
    --n) ns=$2 ;;
    --rounds) rounds=$2 ;;
    --threads) threads=$2 ;;
    --reps) reps=$2 ;;
    --lowbit) lowbit=$2 ;;
    --out) out=$2 ;;
    esac
    shift 2 ;;
  *) err "unknown option: $1 (see --help)" ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || err "--rounds: '$rounds' is not a positive integer"
ggml=build/llama.cpp/tools/ggml-matmul-bench
[ -x "$ggml" ] || err "$ggml is missing: build llama.cpp and our programs with 'bash scripts/llama-cpp.sh'"
[ -x "$lowbit" ] || err "$lowbit is missing: build lowbit (scripts/setup.sh) or name it with --lowbit"

lowbit_formats=
ggml_types=
IFS=, read -ra pairs <<<"$formats"
for pair in "${pairs[@]}"; do
  lowbit_formats+=${lowbit_formats:+,}${pair%%=*}
  ggml_types+=${ggml_types:+,}${pair#*=}
done
out=${out:-$(mktemp -d /tmp/bench-vs-ggml.XXXXXX)}
mkdir -p "$out" || err "cannot create $out"

step() { # $1: what runs; also records the load average before it
  read -r l1 l5 l15 _ </proc/loadavg
  echo "$round $1 $l1 $l5 $l15" >>"$out/load.txt"
  echo "bench-vs-ggml: round $round/$rounds: $1 (load average $l1 $l5 $l15)" >&2
}
run_lowbit() {
  step lowbit
  "$lowbit" bench --shapes "$shapes" --format "$lowbit_formats" --n "$ns" --threads "$threads" \
    --reps "$reps" --json "$out/lowbit-$round.json" >"$out/lowbit-$round.txt" 2>"$out/lowbit-$round.err" ||
    err "lowbit bench failed in round $round (see $out/lowbit-$round.err)"
}
run_ggml() {
  step ggml
  "$ggml" --type "$ggml_types" --shapes "$shapes" --n "$ns" -t "$threads" --reps "$reps" \
    >"$out/ggml-$round.txt" 2>"$out/ggml-$round.err" ||
    err "ggml-matmul-bench failed in round $round (see $out/ggml-$round.err)"
}

: >"$out/load.txt"
echo "bench-vs-ggml: $rounds rounds of lowbit ($lowbit_formats) and ggml ($ggml_types) on $shapes, N = $ns, $threads threads; raw outputs in $out" >&2
for ((round = 1; round <= rounds; ++round)); do
  if ((round % 2)); then run_lowbit; run_ggml; else run_ggml; run_lowbit; fi
done
read -r l1 l5 l15 _ </proc/loadavg
echo "end - $l1 $l5 $l15" >>"$out/load.txt"

python3 - "$out" "$rounds" "$formats" "$ns" <<'EOF' | tee "$out/table.md"
import json, statistics, sys

out, rounds, formats, ns = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
pairs = [(p.split("=")[0], p.split("=")[-1]) for p in formats.split(",")]

def ggml_rows(path):
    rows, seen_header = {}, False
    for line in open(path):
        cols = line.split()
        if cols[:1] == ["type"]:
            seen_header = True
        elif seen_header and len(cols) >= 11:
            rows[(cols[0].lower(), cols[2], int(cols[3]))] = {
                "buffer": cols[1], "us": float(cols[6]), "gbps": float(cols[8]),
                "gops": float(cols[9])}
    return rows

lowbit, ggml = [], []
for r in range(1, rounds + 1):
    doc = json.load(open(f"{out}/lowbit-{r}.json"))
    recs = {}
    for rec in doc["records"]:
        recs.setdefault((rec["format"], rec["shape"], rec["N"]), rec)
    lowbit.append(recs)
    ggml.append(ggml_rows(f"{out}/ggml-{r}.txt"))

def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"

def med(v):
    return statistics.median(v) if v else None

print("| format (ggml type, buffer) | shape | N | lowbit us | ggml us | speed-up lowbit/ggml (range) | lowbit GEMV / limit | ggml GEMV / limit |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
shapes = []
for recs in lowbit:
    for (_, shape, _) in recs:
        if shape not in shapes:
            shapes.append(shape)
for lf, gt in pairs:
    for shape in shapes:
        for n in [int(x) for x in ns.split(",")]:
            lus, gus, speed, lr, gr, buffers = [], [], [], [], [], set()
            for r in range(rounds):
                l = lowbit[r].get((lf, shape, n))
                g = ggml[r].get((gt.lower(), shape, n))
                if l: lus.append(l["us"])
                if g:
                    gus.append(g["us"])
                    buffers.add(g["buffer"])
                if l and g:
                    speed.append(g["us"] / l["us"])
                    if n == 1:
                        lr.append(l["ratio"])
                        gr.append(g["gbps"] / l["roofline_gbps"])
            if not lus and not gus:
                continue
            rng = f" ({min(speed):.2f}-{max(speed):.2f})" if speed else ""
            print(f"| {lf} ({gt}, {','.join(sorted(buffers)) or '-'}) | {shape} | {n} | "
                  f"{fmt(med(lus), 1)} | {fmt(med(gus), 1)} | {fmt(med(speed))}{rng} | "
                  f"{fmt(med(lr)) if n == 1 else ''} | {fmt(med(gr)) if n == 1 else ''} |")

print()
print("Per round: load average (1, 5, 15 min) before each step; lowbit's read")
print("limit (median over its N = 1 cases of each case's probe median, GB/s):")
print()
loads = [line.split() for line in open(f"{out}/load.txt")]
for r in range(1, rounds + 1):
    steps = "; ".join(f"{s[1]} {s[2]} {s[3]} {s[4]}" for s in loads if s[0] == str(r))
    limits = [rec["roofline_gbps"] for rec in lowbit[r - 1].values() if rec["N"] == 1]
    print(f"- round {r}: {steps}; read limit {fmt(med(limits), 1)} GB/s "
          f"({fmt(min(limits), 1) if limits else '-'}-{fmt(max(limits), 1) if limits else '-'})")
end = [s for s in loads if s[0] == "end"]
if end:
    print(f"- after the last round: {end[0][2]} {end[0][3]} {end[0][4]}")
EOF
