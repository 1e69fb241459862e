#!/bin/bash
# The loaded-core experiment of the dynamic scheduler
# (docs/perf/hybrid-scheduling.md): bitnet-b1.58-2b i2s, cold GEMV, static
# and dynamic in alternating reps of one process, in three conditions,
# interleaved run by run so that every condition sees the same background
# load of this shared machine:
#   unloaded  nothing added
#   loaded    --load-core 1: a CPU-bound process pinned to CPU 1
#   slow      --slow-core 1:2: the pool thread on CPU 1 takes 2x as long
# Usage: docs/hybrid/run_experiment.sh [RUNS] [OUTDIR]
set -euo pipefail
runs=${1:-5}
out=${2:-docs/hybrid/results}
mkdir -p "$out"
bench=(build/bin/lowbit bench --model bitnet-b1.58-2b --format i2s
       --schedule-policy static,dynamic --reps 9 --show-ratios)
for run in $(seq 1 "$runs"); do
  for cond in unloaded loaded slow; do
    extra=()
    [ "$cond" = loaded ] && extra=(--load-core 1)
    [ "$cond" = slow ] && extra=(--slow-core 1:2)
    {
      echo "# run $run $cond $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg)"
      "${bench[@]}" "${extra[@]}" --json "$out/$cond-$run.json" 2>/dev/null
    } > "$out/$cond-$run.txt"
    tail -n 12 "$out/$cond-$run.txt" | grep -E "^#|median over" || true
  done
done
