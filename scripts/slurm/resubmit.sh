#!/usr/bin/env bash
# Resubmits the failed shard tasks of a sweep alone (a new job array of just
# their indices; each resumes its shard file) and a new merge job that waits
# for them and for the sweep's tasks still queued or running; the old merge
# job, which can no longer start (a task it depends on failed), is
# cancelled. A task failed when it is neither queued nor running and left no
# STATE/task-I.ok. Run it from the login node, or let sweep.sh's watcher
# job run it (--retries).
#
#   resubmit.sh [--retries R] STATE
#
#   STATE         a kind's state directory (sweep.sh's --dir/<kind>)
#   --retries R   as the watcher runs it: resubmit only if R > 0, and then
#                 watch the new tasks with R - 1
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
retries=
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --retries) retries=${2:?--retries needs a count}; shift 2 ;;
  -*) echo "resubmit.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  *) break ;;
  esac
done
[ $# -eq 1 ] || { usage >&2; exit 2; }
state=$(realpath "$1")
[ -f "$state/sweep.conf" ] || { echo "resubmit.sh: $state has no sweep.conf (not a sweep.sh state directory)" >&2; exit 1; }
source "$state/sweep.conf"
source "$here/lib.sh"

# Tasks of the sweep's arrays still queued or running, one "JOB_TASK" each.
active=()
if arrays=$(job_ids "$state" array.jobids); then
  mapfile -t active < <(squeue -h -r -j "$arrays" -t PD,R,S,CF,RQ -o '%i' 2>/dev/null)
fi
failed=() waiting=()
for ((i = 0; i < shards; i++)); do
  [ -e "$state/task-$i.ok" ] && continue
  queued=
  for task in "${active[@]}"; do
    [ "${task##*_}" = "$i" ] && queued=$task
  done
  if [ -n "$queued" ]; then
    waiting+=("$queued")
  else
    failed+=("$i")
  fi
done
if [ ${#failed[@]} -eq 0 ]; then
  echo "resubmit: no failed task in $state (${#waiting[@]} still queued or running)"
  exit 0
fi
if [ -n "$retries" ] && [ "$retries" -le 0 ]; then
  echo "resubmit: tasks ${failed[*]} of $name failed and no retry is left; see $state/logs" >&2
  exit 1
fi
old=$(cat "$state/merge.jobid" 2>/dev/null)
if [ -n "$old" ] && [ "$(squeue -h -j "$old" -o %T 2>/dev/null)" = PENDING ]; then
  scancel "$old"
fi
list=$(IFS=,; echo "${failed[*]}")
array=$(submit_array "$state" "$list") || exit 1
dependency=afterok:$array
for task in "${waiting[@]}"; do dependency+=":$task"; done
merge=$(submit_merge "$state" "$dependency") || exit 1
echo "resubmit: tasks $list of $name as job $array, merge job $merge (after $dependency)"
if [ -n "$retries" ] && [ "$retries" -gt 1 ]; then
  watch=$(submit_watch "$state" "$array" $((retries - 1))) || exit 1
  echo "resubmit: watcher job $watch ($((retries - 1)) retries left)"
fi
