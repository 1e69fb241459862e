#!/usr/bin/env bash
# test/slurm/sweep.test's driver: a private Slurm (local-cluster.sh, always
# stopped and removed on exit), a 3-shard sweep of tiny shapes submitted
# with scripts/slurm/sweep.sh, shard 1 cancelled (scancel) once it decided
# its first problem and before it finished, the watcher's resubmission, the
# merge; then one unsharded `lowbit tune` of the same problems. Prints what
# sweep.test checks. Every wait is bounded.
#
#   sweep.sh WORK LOWBIT SRC
set -uo pipefail
work=$1 lowbit=$2 src=$3
slurm=$src/scripts/slurm
cluster=$work/cluster
cleanup() { "$slurm/local-cluster.sh" stop "$cluster"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local end=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then
      echo "timed out waiting for $what; queue:"
      squeue 2>&1
      tail -n 5 "$work"/sweeps/local/logs/* 2>/dev/null
      exit 1
    fi
    sleep 0.05
  done
}
entries() {
  python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$1" 2>/dev/null || echo 0
}

"$slurm/local-cluster.sh" start "$cluster" >/dev/null || exit 1
source "$cluster/env"
# 5 shapes x 2 formats, the heuristic alone per problem (its entry is
# always written), so that the decisions do not depend on timing noise.
tune=(--shapes 64x256,96x256,128x256,160x256,192x256 --format i2s,tl2
  --threads 2 --max-candidates 0 --warm)

"$slurm/sweep.sh" --kind local:constraint=local --shards 3 --lowbit "$lowbit" \
  --dir "$work/sweeps" --schedules "$work/schedules" --retries 1 \
  -- "${tune[@]}" >"$work/submit.out" || exit 1
sed 's/job [0-9]*/job N/g' "$work/submit.out"
state=$work/sweeps/local
array=$(head -n 1 "$state/array.jobids")

# Shard 1 has 3 problems: cancel it once the first is decided.
decided_one() { [ "$(entries "$state/shard-1.json")" -ge 1 ]; }
wait_for 120 "shard 1's first decision" decided_one
scancel "${array}_1"
echo "cancelled shard 1 with $(entries "$state/shard-1.json") decided"
wait_for 180 "the merge" test -e "$state/merged"
# The first attempt of shard 1 did not finish; its rerun resumed it.
grep -L "lowbit tune exited 0" "$state/logs/task-1-$array.out" | sed 's/.*/first attempt of shard 1: unfinished/'
for log in "$state"/logs/task-1-*.out; do
  [ "$log" = "$state/logs/task-1-$array.out" ] || grep -h "already decided" "$log"
done
grep -h "^resubmit:" "$state"/logs/watch-*.out | sed 's/job [0-9]*/job N/g; s/after [^)]*/after .../'
grep -h "^merge:" "$state"/logs/merge-*.out
ls "$state"/task-*.ok | wc -l | sed 's/^/tasks finished: /'

"$lowbit" tune "${tune[@]}" --out "$work/whole.json" >"$work/whole.out" 2>&1 ||
  { cat "$work/whole.out"; exit 1; }
"$lowbit" schedule diff "$work/whole.json" "$work/schedules/local.json"
