#!/usr/bin/env bash
# One shard of a sweep, run by Slurm as a task of the job array that
# sweep.sh submits: `lowbit tune --shard I/N` into STATE/shard-I.json (I =
# $SLURM_ARRAY_TASK_ID; N from the sweep, not $SLURM_ARRAY_TASK_COUNT,
# which is 1 when a failed task is resubmitted alone); STATE/task-I.ok
# marks a shard that finished. A re-run resumes the shard: the problems
# its file already decided are not tuned again.
#
#   sbatch --array=0-(N-1) ... task.sh STATE     (sweep.sh does this)
set -uo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi
[ $# -eq 1 ] || { echo "task.sh: usage: task.sh STATE" >&2; exit 2; }
state=$1
source "$state/sweep.conf" || exit 1
i=${SLURM_ARRAY_TASK_ID:?task.sh runs as a Slurm array task}
echo "task $i/$shards of $name: job ${SLURM_JOB_ID:-?} on $(hostname), $(nproc) CPUs, start $(date -u +%FT%TZ)"
rm -f "$state/task-$i.ok"
"$lowbit" tune "${tune[@]}" --shard "$i/$shards" --out "$state/shard-$i.json"
status=$?
echo "task $i/$shards: lowbit tune exited $status, end $(date -u +%FT%TZ)"
[ $status -eq 0 ] && touch "$state/task-$i.ok"
exit $status
